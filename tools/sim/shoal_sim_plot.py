#!/usr/bin/env python3
"""Figures for shoal-sim: reads the JSON that `shoal-sim ... --json FILE` (or
--png PREFIX) writes and draws PNG files next to PREFIX:

  PREFIX-phases.png       per-phase throughput at flit level against the
                          link-load bound 1/W_i and the paper's estimate
                          (map: before and after the mapping)
  PREFIX-weights.png      max link weight W_i of every phase (map: before/after)
  PREFIX-links.png        per-link heat maps, one panel per direction
                          (utilisation at flit level, else message counts)
  PREFIX-phase-links.png  link weights of one phase (--links-phase S)
  PREFIX-latency.png      latency and accepted load against offered load

Python is used for plotting only; every number comes from the C simulator.
"""
import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def phase_figure(data, out):
    phases = data.get("phases") or []
    if not phases:
        return None
    before = data.get("phases_before")
    fig, ax = plt.subplots(figsize=(max(6.0, len(phases) * 0.12 + 3), 4.6))
    x = [p["phase"] for p in phases]
    ax.step(x, [p["bound"] for p in phases], where="mid", color="tab:gray", label="link-load bound 1/W_i")
    est = data.get("summary", {}).get("paper_estimate")
    if est is None:
        est = min(4.0 / max(data["topology"]["dims"]), 1.0) if data["topology"]["kind"] != "fattree" else 1.0
    ax.axhline(est, color="tab:red", linestyle="--", linewidth=1, label="paper estimate min(4/K,1)")
    if before:
        bx = [p["phase"] for p in before if "throughput" in p]
        if bx:
            ax.plot(bx, [p["throughput"] for p in before if "throughput" in p], "o", color="tab:orange",
                    markersize=3, label="flit level, before mapping")
        ax.step([p["phase"] for p in before], [p["bound"] for p in before], where="mid", color="tab:orange",
                alpha=0.4, label="1/W_i before mapping")
    sx = [p["phase"] for p in phases if "throughput" in p]
    if sx:
        ax.plot(sx, [p["throughput"] for p in phases if "throughput" in p], "o", color="tab:blue", markersize=3,
                label="flit level" + (", after mapping" if before else ""))
    ax.set_xlabel("phase (stride)")
    ax.set_ylabel("throughput (ideal cycles / simulated cycles)")
    ax.set_ylim(0, 1.05)
    mapping = data.get("mapping", "identity")
    if data.get("map"):
        mapping = "mapping %s -> %s" % (mapping, data["map"].get("mapping_after", "?"))
    ax.set_title("%s all-to-all, %s, msg %s B" % (data["topology"]["name"], mapping, data["params"]["msg"]))
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)
    ax.grid(alpha=0.3)
    path = out + "-phases.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def weight_figure(data, out):
    phases = data.get("phases") or []
    if not phases:
        return None
    before = data.get("phases_before")
    fig, ax = plt.subplots(figsize=(max(6.0, len(phases) * 0.12 + 3), 3.5))
    x = [p["phase"] for p in phases]
    if before:
        ax.bar([p["phase"] - 0.2 for p in before], [p["W"] for p in before], width=0.4, color="tab:orange",
               label="before, W = %.3f" % (sum(p["W"] for p in before) / len(before)))
        ax.bar([v + 0.2 for v in x], [p["W"] for p in phases], width=0.4, color="tab:blue",
               label="after, W = %.3f" % (sum(p["W"] for p in phases) / len(phases)))
    else:
        ax.bar(x, [p["W"] for p in phases], color="tab:blue",
               label="W = %.3f" % (sum(p["W"] for p in phases) / len(phases)))
    ax.set_xlabel("phase (stride)")
    ax.set_ylabel("max link weight W_i (messages)")
    ax.set_title("%s: largest number of messages on one link, per phase" % data["topology"]["name"])
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    path = out + "-weights.png"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def heat_figure(links, title, path, prefer_util=True):
    groups = links["groups"]
    cells = links["cells"]
    if not groups or not cells:
        return None
    use_util = prefer_util and any(c[5] > 0 for c in cells)
    col = 5 if use_util else 3
    label = "utilisation (flits / cycle)" if use_util else "messages"
    panels = []
    vmax = max(c[col] for c in cells) or 1
    for g, name in enumerate(groups):
        mine = [c for c in cells if c[0] == g]
        rows = max(c[1] for c in mine) + 1
        cols = max(c[2] for c in mine) + 1
        grid = [[math.nan] * cols for _ in range(rows)]
        for c in mine:
            grid[c[1]][c[2]] = c[col]
        panels.append((name, grid))
    ncol = 2 if len(panels) > 1 else 1
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.4 * ncol, 3.6 * nrow), squeeze=False, layout="constrained")
    image = None
    for i, (name, grid) in enumerate(panels):
        ax = axes[i // ncol][i % ncol]
        image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=vmax, origin="lower", aspect="auto")
        vals = [v for row in grid for v in row if not math.isnan(v)]
        ax.set_title("%s  (min %.3g, max %.3g)" % (name, min(vals), max(vals)), fontsize=9)
        ax.set_xlabel("x (link source)" if not name.startswith("L") else "port", fontsize=8)
        ax.set_ylabel("other coordinates" if not name.startswith("L") else "switch", fontsize=8)
        ax.tick_params(labelsize=7)
    for j in range(len(panels), nrow * ncol):
        axes[j // ncol][j % ncol].axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8, label=label)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def latency_figure(data, out):
    pts = data.get("random")
    if not pts:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    off = [p["offered"] for p in pts]
    a1.plot(off, [p["avg_latency"] for p in pts], "o-", label="average packet latency")
    sat = [p for p in pts if p["saturated"]]
    if sat:
        a1.plot([p["offered"] for p in sat], [p["avg_latency"] for p in sat], "x", color="tab:red", markersize=9,
                label="saturated (measured packets left)")
    zl = data.get("zero_load_neighbour")
    if zl:
        a1.axhline(zl, color="tab:gray", linestyle="--", linewidth=1, label="zero load, neighbour")
    a1.set_xlabel("offered load (flits/cycle/node)")
    a1.set_ylabel("latency (cycles)")
    a1.set_yscale("log")
    a1.grid(alpha=0.3)
    a1.legend(fontsize=8)
    a2.plot(off, [p["accepted"] for p in pts], "o-", label="accepted")
    a2.plot(off, off, "--", color="tab:gray", label="offered")
    a2.set_xlabel("offered load (flits/cycle/node)")
    a2.set_ylabel("accepted load (flits/cycle/node)")
    a2.grid(alpha=0.3)
    a2.legend(fontsize=8)
    fig.suptitle("%s, uniform random traffic, %s-flit packets" % (data["topology"]["name"],
                                                                  data["params"]["packet_flits"]))
    fig.tight_layout()
    path = out + "-latency.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv):
    ap = argparse.ArgumentParser(description="Draw shoal-sim figures from its JSON output.")
    ap.add_argument("json", help="file written by shoal-sim --json or --png")
    ap.add_argument("--out", help="prefix of the PNG files (default: the JSON name without .json)")
    args = ap.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    out = args.out or (args.json[:-5] if args.json.endswith(".json") else args.json)
    made = [phase_figure(data, out), weight_figure(data, out)]
    name = data["topology"]["name"]
    if data.get("links"):
        made.append(heat_figure(data["links"], "%s %s: per-link load, all phases" % (name, data["command"]),
                                out + "-links.png"))
    if data.get("phase_links"):
        made.append(heat_figure(data["phase_links"], "%s: messages per link in phase %s" % (
            name, data.get("links_phase", "?")), out + "-phase-links.png", prefer_util=False))
    made.append(latency_figure(data, out))
    for path in made:
        if path:
            print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
