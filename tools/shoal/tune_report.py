#!/usr/bin/env python3
"""Report on shoal's cost model: model against measurement, choice quality.

Inputs are what `shoal tune --samples` and `shoal evaluate --json` write:

  tune_report.py --samples tune-np2.json --evaluate eval-np2.json eval-np4.json \
                 --out DIR

writes DIR/lanes.png (each lane's measured and modelled transfer time over
sizes) and DIR/report.md:
  - choice quality: per process count, the share of (collective, size)
    points where the planner's choice is the measured-fastest candidate or
    within 10 % of it, and every point where it is not;
  - calibrated against default: the measured time of the choice made with
    the model in use (a tuning file, or MPI_Init's probe where there is
    none) and of the choice made with the built-in figures.
"""
import argparse
import json
import math
import os
import sys

TOLERANCE = 1.10


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"tune_report: cannot read {path}: {e}")


def human(n):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def candidate_time(point, choice):
    for c in point["candidates"]:
        if c["algo"] == choice["algo"] and (point["coll"] == "barrier" or c["lane"] == choice["lane"]):
            return c["measured_ns"]
    return None


def choice_quality(ev, which="chosen"):
    """(within, total, misses) of the choices made with the model in use
    ("chosen") or with the built-in figures ("default_choice"): misses lists
    the points off by more than 10 %."""
    within, total, misses = 0, 0, []
    for p in ev["points"]:
        if not p["candidates"]:
            continue
        best = min(p["candidates"], key=lambda c: c["measured_ns"])
        t = candidate_time(p, p[which])
        if t is None:
            continue
        total += 1
        if t <= best["measured_ns"] * TOLERANCE:
            within += 1
        else:
            misses.append((p, t, best))
    return within, total, misses


def grid_name(ev):
    """Powers of two are where `shoal tune` calibrates; other sizes are
    interpolated, out of sample."""
    sizes = {p["bytes"] for p in ev["points"] if p["bytes"]}
    if all(s & (s - 1) == 0 for s in sizes):
        return "powers of 4 (calibrated)"
    return "between powers of 2"


def gain_over_default(ev):
    """Geometric mean over points of default-choice time / calibrated-choice time."""
    logs = []
    for p in ev["points"]:
        t_cal, t_def = candidate_time(p, p["chosen"]), candidate_time(p, p["default_choice"])
        if t_cal and t_def:
            logs.append(math.log(t_def / t_cal))
    return math.exp(sum(logs) / len(logs)) if logs else 1.0


def plot_lanes(samples, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lanes = sorted({s["lane"] for s in samples["lanes"]}, key=["cells", "cma", "host"].index)
    fig, axes = plt.subplots(1, len(lanes), figsize=(5 * len(lanes), 4), squeeze=False)
    for ax, lane in zip(axes[0], lanes):
        pts = [s for s in samples["lanes"] if s["lane"] == lane]
        for movers in sorted({s["movers"] for s in pts}):
            sel = sorted((s for s in pts if s["movers"] == movers), key=lambda s: s["bytes"])
            x = [s["bytes"] for s in sel]
            line = ax.plot(x, [s["measured_ns"] / 1e3 for s in sel], "o", label=f"measured, {movers} moving")[0]
            ax.plot(x, [s["modelled_ns"] / 1e3 for s in sel], "-", color=line.get_color(),
                    label=f"model, {movers} moving")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("bytes per transfer")
        ax.set_ylabel("time (us)")
        ax.set_title(f"lane {lane}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"shoal cost model against measurement, np={samples['np']}: {samples['machine']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def report(samples, evals, out):
    lines = ["# shoal cost model report", ""]
    if samples:
        lines += [f"Machine: {samples['machine']}; lanes measured at np={samples['np']}.", "",
                  "| lane | samples | rms relative error of the model |", "|---|---|---|"]
        for lane in ("cells", "cma", "host"):
            pts = [s for s in samples["lanes"] if s["lane"] == lane]
            if pts:
                err = (sum(((s["modelled_ns"] - s["measured_ns"]) / s["measured_ns"]) ** 2 for s in pts)
                       / len(pts)) ** 0.5
                lines.append(f"| {lane} | {len(pts)} | {100 * err:.0f} % |")
        lines += ["", "![lanes](lanes.png)", ""]
    lines += ["## Choice quality", "",
              "A point is a (collective, size). The choice is good when its measured time is within "
              f"{int(round((TOLERANCE - 1) * 100))} % of the fastest candidate's.", "",
              "The model is a tuning file, or the figures MPI_Init probes when there is none; each run "
              "also records what the built-in figures would have chosen.", "",
              "| np | sizes | model | points | good | share | built-in figures: share | model vs built-in "
              "(geomean) |",
              "|---|---|---|---|---|---|---|---|"]
    all_misses = []
    for ev in evals:
        within, total, misses = choice_quality(ev)
        all_misses += [(ev["np"], m) for m in misses]
        share = 100.0 * within / total if total else 0
        d_within, d_total, _ = choice_quality(ev, "default_choice")
        d_share = 100.0 * d_within / d_total if d_total else 0
        lines.append(f"| {ev['np']} | {grid_name(ev)} | {os.path.basename(ev['model'])} | {total} | {within} | "
                     f"{share:.1f} % | {d_share:.1f} % | {gain_over_default(ev):.2f} |")
    lines += ["", "Points where the choice is more than 10 % slower than the fastest:", "",
              "| np | collective | size | chosen | its time (us) | fastest | its time (us) | ratio |",
              "|---|---|---|---|---|---|---|---|"]
    for np_, (p, t, best) in all_misses:
        lines.append(f"| {np_} | {p['coll']} | {human(p['bytes'])} | {p['chosen']['algo']}/{p['chosen']['lane']} | "
                     f"{t / 1e3:.2f} | {best['algo']}/{best['lane']} | {best['measured_ns'] / 1e3:.2f} | "
                     f"{t / best['measured_ns']:.2f} |")
    lines += ["", "## Calibrated against default choice", "",
              "Measured time (us) of what the planner chooses with the tuning file and with the built-in "
              "defaults; ratio > 1: the calibrated choice is faster.", ""]
    for ev in evals:
        lines += [f"### np={ev['np']}", "", "| collective | size | calibrated | us | default | us | ratio |",
                  "|---|---|---|---|---|---|---|"]
        for p in ev["points"]:
            t_cal, t_def = candidate_time(p, p["chosen"]), candidate_time(p, p["default_choice"])
            if t_cal is None or t_def is None:
                continue
            lines.append(f"| {p['coll']} | {human(p['bytes'])} | {p['chosen']['algo']}/{p['chosen']['lane']} | "
                         f"{t_cal / 1e3:.2f} | {p['default_choice']['algo']}/{p['default_choice']['lane']} | "
                         f"{t_def / 1e3:.2f} | {t_def / t_cal:.2f} |")
        lines.append("")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", help="JSON from shoal tune --samples")
    ap.add_argument("--evaluate", nargs="*", default=[], help="JSON files from shoal evaluate")
    ap.add_argument("--out", required=True, help="directory for report.md and lanes.png")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    samples = load(args.samples) if args.samples else None
    evals = [load(p) for p in args.evaluate]
    for ev in evals:
        if "points" not in ev:
            sys.exit("tune_report: not the output of shoal evaluate")
    if samples:
        if "lanes" not in samples:
            sys.exit("tune_report: not the output of shoal tune --samples")
        plot_lanes(samples, os.path.join(args.out, "lanes.png"))
    report(samples, sorted(evals, key=lambda e: (e["np"], grid_name(e))), args.out)
    print(f"wrote {os.path.join(args.out, 'report.md')}")


if __name__ == "__main__":
    main()
