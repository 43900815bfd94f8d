#!/usr/bin/env python3
"""shoal-bench report: pictures and a markdown page from shoal-bench --json runs.

    report.py results/openmpi.json results/mpich.json -o results/

writes one PNG per benchmark (one column per run, that is per host MPI: the
latency or bandwidth against size on log-log axes for the host MPI, shoal
and the physical bound, and under it the speedup of shoal over the host MPI,
coloured green where shoal wins, grey where it ties, red where it loses) and
report.md, which embeds the pictures with the tables. docs/BENCH.md says
how the figures are measured.
"""

import argparse
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on build machines
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

SCHEMA = "shoal-bench/1"

# One meaning per colour, the same in every picture.
COLOUR_HOST = "#5b6770"   # the host MPI: neutral slate
COLOUR_SHOAL = "#1565c0"  # shoal: strong blue
COLOUR_BOUND = "#000000"  # the physical bound: black, dashed
COLOUR_WIN = "#2e7d32"
COLOUR_TIE = "#9e9e9e"
COLOUR_LOSE = "#c62828"
COLOUR_WRONG = "#6a1b9a"  # a result that failed validation has no speedup

BENCH_ORDER = ["allreduce", "alltoall", "allgather", "reduce_scatter_block", "reduce_scatter",
               "reduce", "bcast", "gather", "scatter", "scan", "exscan", "barrier", "latency", "bw"]


def human_size(size):
    """4 -> '4', 4096 -> '4K', 1048576 -> '1M' (binary, as -m takes them)."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def run_label(run):
    """The host MPI, and the method where the run says (fresh inputs or OSU's);
    where two runs would read alike (one MPI under two settings), the name
    of the run's file too."""
    mpi = run["mpi"]
    method = run["run"].get("method")
    label = f"{mpi['name']} {mpi['version']}" + (f", {method}" if method else "")
    return label + (f" ({run['_tag']})" if run.get("_tag") else "")


def sign_test_says(pairs):
    """+1 when significantly more pairs of calls had shoal faster, -1 when
    significantly more had it slower, 0 otherwise (two-sided, 5 %, normal
    approximation of the binomial with continuity correction)."""
    faster, slower = pairs["shoal_faster"], pairs["shoal_slower"]
    decided = faster + slower
    if decided == 0:
        return 0
    z = (abs(faster - slower) - 1) / decided ** 0.5
    if z <= 1.96:
        return 0
    return 1 if faster > slower else -1


def typical_speedup(row):
    """The median over pairs of adjacent calls of host time / shoal time:
    what shoal does to a typical call. Runs without pairs fall back to the
    ratio of the OSU averages."""
    pairs = row.get("pairs") or {}
    median = pairs.get("median_speedup")
    return median if median is not None else row.get("speedup")


def verdict(row, tie):
    """win, tie, lose, or wrong (failed validation: no speedup to speak of).

    A win needs two things to agree: the typical call is at least 1 + tie
    times as fast under shoal (median over pairs of adjacent calls), and a
    sign test over the pairs says shoal was faster in more of them than chance
    allows. A loss is the same the other way; anything else is a tie. The
    OSU averages are not used here: a few descheduled calls (milliseconds
    each) would make wins and losses between two identical paths."""
    if not row["valid"]:
        return "wrong"
    speedup = typical_speedup(row)
    if speedup is None or "pairs" not in row:
        return "tie"
    majority = sign_test_says(row["pairs"])
    if speedup >= 1 + tie and majority > 0:
        return "win"
    if speedup <= 1 / (1 + tie) and majority < 0:
        return "lose"
    return "tie"


VERDICT_COLOUR = {"win": COLOUR_WIN, "tie": COLOUR_TIE, "lose": COLOUR_LOSE, "wrong": COLOUR_WRONG}
VERDICT_TEXT = {"win": "shoal wins", "tie": "tie", "lose": "shoal loses",
                "wrong": "WRONG RESULT"}


def load_runs(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        if run.get("schema") != SCHEMA:
            sys.exit(f"report.py: {path} is not a {SCHEMA} file (schema: {run.get('schema')!r})")
        run["_path"] = path
        runs.append(run)
    labels = [run_label(run) for run in runs]
    for run, label in zip(runs, labels):
        if labels.count(label) > 1:
            run["_tag"] = os.path.splitext(os.path.basename(run["_path"]))[0]
    return runs


def benchmark_names(runs):
    present = {b["name"] for run in runs for b in run["benchmarks"]}
    ordered = [name for name in BENCH_ORDER if name in present]
    return ordered + sorted(present - set(ordered))


def find_benchmark(run, name):
    for bench in run["benchmarks"]:
        if bench["name"] == name:
            return bench
    return None


def size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ticks = sizes if len(sizes) <= 12 else sizes[::2]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: human_size(int(round(v)))))
    ax.set_xlim(sizes[0] / 1.5, sizes[-1] * 1.5)


def plot_figures_panel(ax, bench, rows, title, tie):
    """Latency (lower is better) or bandwidth (higher is better) against size."""
    unit = bench["unit"]
    sizes = [r["size"] for r in rows]
    host = [r["host"]["avg"] for r in rows]
    shoal = [r["shoal"]["avg"] for r in rows]
    bound = [r["bound"] for r in rows]
    ax.plot(sizes, host, "o-", color=COLOUR_HOST, lw=2, ms=4, label="host MPI")
    ax.plot(sizes, shoal, "s-", color=COLOUR_SHOAL, lw=2, ms=4, label="shoal")
    ax.plot(sizes, bound, "--", color=COLOUR_BOUND, lw=1.2, label="physical bound")
    # Mark the gap between the two paths only where the verdict is a win or a
    # loss: shading every gap would paint noise as a result.
    bandwidth = bench["kind"] == "bandwidth"
    for r in rows:
        v = verdict(r, tie)
        if v in ("win", "lose"):
            ax.vlines(r["size"], r["host"]["avg"], r["shoal"]["avg"], color=VERDICT_COLOUR[v],
                      lw=6, alpha=0.35, zorder=1)
    for r in rows:
        if not r["valid"]:
            ax.plot([r["size"]], [r["shoal"]["avg"]], "X", color=COLOUR_WRONG, ms=11, zorder=5)
    ax.set_yscale("log")
    size_axis(ax, sizes)
    better = "higher is better" if bandwidth else "lower is better"
    ax.set_ylabel(f"{'bandwidth' if bandwidth else 'latency'} ({unit}), {better}")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left" if not bandwidth else "lower right", fontsize=8)


def speedup_limits(speedups):
    low = min([0.5] + [s / 1.3 for s in speedups])
    high = max([2.0] + [s * 1.3 for s in speedups])
    return low, high


def plot_speedup_panel(ax, rows, tie, xpositions=None, xlabels=None):
    """Bars from 1 to the speedup on a log axis, so 2x faster and 2x slower
    are the same length; bands say where each verdict lies."""
    speedups = [typical_speedup(r) or 1.0 for r in rows]
    low, high = speedup_limits(speedups)
    ax.set_yscale("log", base=2)
    ax.set_ylim(low, high)
    ax.axhspan(1 + tie, high, color=COLOUR_WIN, alpha=0.08, lw=0)
    ax.axhspan(1 / (1 + tie), 1 + tie, color=COLOUR_TIE, alpha=0.15, lw=0)
    ax.axhspan(low, 1 / (1 + tie), color=COLOUR_LOSE, alpha=0.08, lw=0)
    ax.axhline(1.0, color="black", lw=0.8)
    if xpositions is None:
        xpositions = [r["size"] for r in rows]
        widths = [x * 0.5 for x in xpositions]
    else:
        widths = [0.6] * len(xpositions)
    colours = [VERDICT_COLOUR[verdict(r, tie)] for r in rows]
    heights = [s - 1.0 for s in speedups]
    ax.bar(xpositions, heights, bottom=1.0, width=widths, color=colours, edgecolor="none")
    for x, r in zip(xpositions, rows):
        if not r["valid"]:
            ax.text(x, 1.0, "wrong", color=COLOUR_WRONG, ha="center", va="bottom", fontsize=7,
                    rotation=90)
    ticks = [t for t in (0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64) if low <= t <= high]
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.set_ylabel("speedup of shoal, typical call\n(median host / shoal time)")
    if xlabels is not None:
        ax.set_xticks(xpositions)
        ax.set_xticklabels(xlabels)
    else:
        size_axis(ax, [r["size"] for r in rows])
        ax.set_xlabel("message size (bytes)")
    ax.grid(True, axis="y", alpha=0.3)


def plot_barrier_column(ax_top, ax_bottom, bench, rows, title, tie):
    """A barrier has no size: bars for the three figures, and one speedup bar."""
    row = rows[0]
    names = ["host MPI", "shoal", "bound"]
    values = [row["host"]["avg"], row["shoal"]["avg"], row["bound"]]
    ax_top.bar(names, values, color=[COLOUR_HOST, COLOUR_SHOAL, "white"],
               edgecolor=[COLOUR_HOST, COLOUR_SHOAL, COLOUR_BOUND], linestyle="-", lw=1.5)
    for x, v in enumerate(values):
        ax_top.text(x, v, f"{v:.2f} us", ha="center", va="bottom", fontsize=9)
    ax_top.set_ylabel("latency (us), lower is better")
    ax_top.set_title(title, fontsize=10)
    ax_top.grid(True, axis="y", alpha=0.3)
    plot_speedup_panel(ax_bottom, rows, tie, xpositions=[0], xlabels=["barrier"])
    ax_bottom.set_xlim(-1, 1)


def column_title(run, tie):
    facts = run["run"]
    title = f"{run_label(run)}, {facts['processes']} processes"
    if not run["shoal"]["enabled"]:
        title += "\nshoal NOT active: both paths are the host MPI"
    return title


def draw_benchmark(name, runs, out_dir, tie):
    columns = [(run, find_benchmark(run, name)) for run in runs]
    columns = [(run, bench) for run, bench in columns if bench and bench["results"]]
    if not columns:
        return None
    fig, axes = plt.subplots(2, len(columns), figsize=(6.4 * len(columns), 7.6), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    for col, (run, bench) in enumerate(columns):
        rows = bench["results"]
        title = column_title(run, tie)
        if name == "barrier":
            plot_barrier_column(axes[0][col], axes[1][col], bench, rows, title, tie)
            continue
        # Size 0 (pt2pt) has no place on a log axis; it stays in the tables.
        plotted = [r for r in rows if r["size"] > 0]
        if not plotted:
            continue
        plot_figures_panel(axes[0][col], bench, plotted, title, tie)
        plot_speedup_panel(axes[1][col], plotted, tie)
    operation = columns[0][1]["operation"]
    fig.suptitle(f"{name}: shoal against the host MPI\n{operation}", fontsize=12)
    legend = [Patch(color=COLOUR_WIN, label=f"shoal wins (> {1 + tie:g}x, most pairs agree)"),
              Patch(color=COLOUR_TIE, label=f"tie (within {tie:.0%}, or noise)"),
              Patch(color=COLOUR_LOSE, label="shoal loses"),
              Patch(color=COLOUR_WRONG, label="wrong result (failed validation)")]
    fig.legend(handles=legend, loc="lower center", ncol=4, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path = os.path.join(out_dir, f"{name}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return os.path.basename(path)


def fmt(value, digits=2):
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def summary_line(rows, tie):
    """Counts of each verdict, the largest win and the largest loss. A tie is
    never quoted as a speedup: a large ratio inside its noise means nothing."""
    counts = {"win": 0, "tie": 0, "lose": 0, "wrong": 0}
    for r in rows:
        counts[verdict(r, tie)] += 1
    wins = [r for r in rows if verdict(r, tie) == "win"]
    losses = [r for r in rows if verdict(r, tie) == "lose"]
    best = max(wins, key=typical_speedup, default=None)
    worst = min(losses, key=typical_speedup, default=None)
    return counts, best, worst


def speedup_text(row):
    return f"{typical_speedup(row):.2f}x at {human_size(row['size'])}" if row else "-"


def write_markdown(runs, pictures, out_dir, tie):
    lines = ["# shoal-bench report", ""]
    inactive = [run_label(run) for run in runs if not run["shoal"]["enabled"]]
    if inactive:
        lines += [f"> **shoal was not active** in the run(s) of {', '.join(inactive)}: "
                  "both columns measured the host MPI, so every speedup there is noise. "
                  "It shows how much two identical paths differ on this machine.", ""]
    failed = [run_label(run) for run in runs if run["validation_errors"]]
    if failed:
        lines += [f"> **Wrong results** in {', '.join(failed)}: the rows marked WRONG RESULT "
                  "failed validation; their times are not figures.", ""]

    lines += ["## Where shoal wins, ties and loses", "",
              "The two paths alternate call by call, so each pair of adjacent calls says "
              "how the two compared at that moment. A size is a win when the typical pair "
              f"(the median of host time / shoal time) has shoal at least {1 + tie:g}x as "
              "fast and significantly more pairs have shoal faster than slower (a sign test "
              f"at 5 %); a loss when shoal is {1 + tie:g}x slower the same way; a tie "
              "otherwise. The tables also give OSU's averages, whose ratio can be swayed by "
              "a few descheduled calls; the verdicts are not.", "",
              "| benchmark | host MPI | wins | ties | losses | wrong | largest win | "
              "largest loss |", "|---|---|---|---|---|---|---|---|"]
    for name in pictures:
        for run in runs:
            bench = find_benchmark(run, name)
            if not bench:
                continue
            counts, best, worst = summary_line(bench["results"], tie)
            best_text, worst_text = speedup_text(best), speedup_text(worst)
            lines.append(f"| [{name}](#{name}) | {run_label(run)} | {counts['win']} | "
                         f"{counts['tie']} | {counts['lose']} | {counts['wrong']} | "
                         f"{best_text} | {worst_text} |")
    lines.append("")

    lines += ["## Machine and runs", "", "| | " + " | ".join(run_label(r) for r in runs) + " |",
              "|---|" + "---|" * len(runs)]

    def facts_row(label, get):
        lines.append(f"| {label} | " + " | ".join(str(get(r)) for r in runs) + " |")

    facts_row("host", lambda r: r["machine"]["hostname"])
    facts_row("CPU", lambda r: r["machine"]["cpu_model"])
    facts_row("cores online / usable", lambda r: f"{r['machine']['cores_online']} / "
              f"{r['machine']['cores_usable']}")
    facts_row("processes (nodes)", lambda r: f"{r['run']['processes']} ({r['machine']['nodes']})")
    facts_row("MPI library", lambda r: r["mpi"]["library_version"].splitlines()[0])
    facts_row("shoal", lambda r: f"{r['shoal']['version']} ({r['shoal']['commit']}), "
              f"{'active' if r['shoal']['enabled'] else 'NOT active'}")
    facts_row("core-to-core latency", lambda r: fmt(r["calibration"]["core_to_core_latency_us"],
                                                     3) + " us")
    facts_row("date (UTC)", lambda r: r["run"]["date_utc"])
    facts_row("command", lambda r: f"`{r['run']['command_line']}`")
    lines.append("")

    lines += ["## How to read the pictures", "",
              "Top: time per operation against message size, both axes logarithmic "
              "(for `bw`, bandwidth: higher is better). Grey circles: the host MPI; blue "
              "squares: shoal; black dashes: the physical bound, the time one core needs "
              "to memcpy the bytes that one rank must at least move (never less than one "
              "cache-line transfer between two cores). At sizes where shoal wins or loses, "
              "the gap between the two paths is marked green or red.", "",
              "Bottom: speedup of shoal over the host MPI for a typical call (the median "
              "over pairs of adjacent calls), on a log scale so that 2x faster and 2x slower "
              "bars are the same length. Green bars: shoal wins; grey: tie; red: shoal "
              "loses. The `shoal/bound` column says how far from the physics shoal still is "
              "(1.0 would be a perfect implementation).", ""]

    for name in pictures:
        lines += [f"## {name}", "", f"![{name}]({pictures[name]})", ""]
        for run in runs:
            bench = find_benchmark(run, name)
            if not bench:
                continue
            bandwidth = bench["kind"] == "bandwidth"
            unit = bench["unit"]
            lines += [f"**{run_label(run)}**: {bench['operation']}; bound bytes per rank: "
                      f"`{bench['bound_bytes_formula']}`", ""]
            if bench.get("validation_note"):
                lines += [f"_{bench['validation_note']}_", ""]
            ratio = "bound/shoal" if bandwidth else "shoal/bound"
            lines += [f"| size (B) | host MPI ({unit}) | shoal ({unit}) | speedup | "
                      f"bound ({unit}) | {ratio} | typical speedup | pairs shoal faster | "
                      "verdict | shoal ran |", "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
            for r in bench["results"]:
                v = verdict(r, tie)
                pairs = r.get("pairs") or {}
                share = (f"{pairs['shoal_faster']} / {pairs['count']}" if pairs.get("count")
                         else "n/a")
                lines.append(f"| {r['size']} | {fmt(r['host']['avg'])} | {fmt(r['shoal']['avg'])} "
                             f"| {fmt(r.get('speedup'))} | {fmt(r['bound'])} | "
                             f"{fmt(r.get('shoal_over_bound'))} | {fmt(typical_speedup(r))} | "
                             f"{share} | {VERDICT_TEXT[v]} | {r.get('shoal_path', '')} |")
            lines.append("")
    path = os.path.join(out_dir, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="shoal-bench --json files, one per host MPI")
    parser.add_argument("-o", "--output", required=True, help="folder for the PNGs and report.md")
    parser.add_argument("--tie", type=float, default=0.10,
                        help="relative difference below which a size is a tie (default 0.10)")
    parser.add_argument("--summary", action="store_true",
                        help="also print the wins, ties and losses as text")
    args = parser.parse_args(argv)
    runs = load_runs(args.runs)
    os.makedirs(args.output, exist_ok=True)
    pictures = {}
    for name in benchmark_names(runs):
        picture = draw_benchmark(name, runs, args.output, args.tie)
        if picture:
            pictures[name] = picture
    report = write_markdown(runs, pictures, args.output, args.tie)
    print(f"report.py: {len(pictures)} pictures and {report}")
    if args.summary:
        print_summary(runs, pictures, args.tie)
    return 0


def print_summary(runs, pictures, tie):
    """The verdicts as text, for a terminal."""
    print(f"\n{'benchmark':<22}{'host MPI, method':<36}{'wins':>5}{'ties':>6}{'losses':>8}{'wrong':>7}"
          f"   {'largest win':<16}largest loss")
    for name in pictures:
        for run in runs:
            bench = find_benchmark(run, name)
            if not bench:
                continue
            counts, best, worst = summary_line(bench["results"], tie)
            best_text, worst_text = speedup_text(best), speedup_text(worst)
            print(f"{name:<22}{run_label(run):<36}{counts['win']:>5}{counts['tie']:>6}"
                  f"{counts['lose']:>8}{counts['wrong']:>7}   {best_text:<16}{worst_text}")
    for run in runs:
        if not run["shoal"]["enabled"]:
            print(f"note: shoal was not active under {run_label(run)}: both paths were the "
                  "host MPI, the speedups are noise")


if __name__ == "__main__":
    sys.exit(main())
