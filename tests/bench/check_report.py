#!/usr/bin/env python3
"""Runs tools/bench/report.py on the recorded runs under tests/bench/data and
checks what it makes: a non-empty PNG per benchmark, and a report.md that
embeds every picture and says what a reader must know (which MPI, whether
shoal was active, which sizes gave wrong results).

    check_report.py OUTPUT_DIR
"""

import copy
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "..", "tools", "bench", "report.py")
DATA = sorted(glob.glob(os.path.join(HERE, "data", "*.json")))
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

failures = []
passes = 0


def expect(condition, what):
    global passes
    if condition:
        passes += 1
    else:
        failures.append(what)
        print(f"FAIL: {what}")


def run_report(inputs, out_dir):
    result = subprocess.run([sys.executable, REPORT, *inputs, "-o", out_dir],
                            capture_output=True, text=True, timeout=300)
    expect(result.returncode == 0, f"report.py exits 0 on {inputs}: {result.stderr[-2000:]}")
    return result


def check_outputs(inputs, out_dir):
    runs = [json.load(open(path)) for path in inputs]
    names = sorted({b["name"] for run in runs for b in run["benchmarks"] if b["results"]})
    report_path = os.path.join(out_dir, "report.md")
    expect(os.path.isfile(report_path), "report.md exists")
    report = open(report_path).read() if os.path.isfile(report_path) else ""
    for name in names:
        png = os.path.join(out_dir, f"{name}.png")
        expect(os.path.isfile(png), f"{name}.png exists")
        if os.path.isfile(png):
            expect(os.path.getsize(png) > 10_000, f"{name}.png is a real picture, not empty")
            with open(png, "rb") as f:
                expect(f.read(8) == PNG_MAGIC, f"{name}.png is a PNG")
        expect(f"![{name}]({name}.png)" in report, f"report.md embeds {name}.png")
        expect(f"## {name}" in report, f"report.md has a section for {name}")
    for run in runs:
        label = f"{run['mpi']['name']} {run['mpi']['version']}"
        expect(label in report, f"report.md names {label}")
    expect("Where shoal wins, ties and loses" in report, "report.md starts with the verdicts")
    return report


def main():
    out_dir = sys.argv[1]
    expect(len(DATA) >= 2, f"recorded runs under {HERE}/data: {DATA}")

    # The recorded runs, as make demo would pass them.
    plain = os.path.join(out_dir, "recorded")
    run_report(DATA, plain)
    report = check_outputs(DATA, plain)
    inactive = any(not json.load(open(p))["shoal"]["enabled"] for p in DATA)
    if inactive:
        expect("shoal was not active" in report, "report.md says shoal was not active")

    # A run with one wrong result: the report must say so, not hide it.
    spoiled_input = os.path.join(out_dir, "spoiled.json")
    run = json.load(open(DATA[0]))
    spoiled = copy.deepcopy(run)
    bench = next(b for b in spoiled["benchmarks"] if len(b["results"]) > 2)
    bench["results"][1]["valid"] = False
    bench["results"][1]["errors"]["shoal"] = 1
    spoiled["validation_errors"] = 1
    spoiled["status"] = "validation_failed"
    with open(spoiled_input, "w") as f:
        json.dump(spoiled, f)
    spoiled_dir = os.path.join(out_dir, "spoiled")
    run_report([spoiled_input], spoiled_dir)
    report = check_outputs([spoiled_input], spoiled_dir)
    expect("WRONG RESULT" in report, "report.md marks the wrong result")
    expect("Wrong results" in report, "report.md warns about wrong results at the top")

    # Not a shoal-bench file: refused with a message, not a traceback.
    bogus = os.path.join(out_dir, "bogus.json")
    with open(bogus, "w") as f:
        json.dump({"schema": "something-else"}, f)
    result = subprocess.run([sys.executable, REPORT, bogus, "-o", os.path.join(out_dir, "bogus")],
                            capture_output=True, text=True, timeout=60)
    expect(result.returncode != 0 and "not a shoal-bench/1 file" in result.stderr,
           "report.py refuses a file of another schema")

    print(f"{passes} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
