#!/usr/bin/env python3
"""Checks a shoal-bench --json file against tools/bench/shoal-bench.schema.json,
then checks what a schema cannot say (the figures agree with each other).

    check_json.py RUN.json [--benchmarks a,b] [--status ok] [--processes N]
    check_json.py --self-test RUN.json   # the checker must reject broken copies

The schema subset used by shoal-bench's schema (type, const, enum, required,
properties, additionalProperties, items, minimum, minLength, $ref) is checked
here directly, so the test needs no package beyond Python itself.
"""

import argparse
import copy
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "..", "..", "tools", "bench", "shoal-bench.schema.json")

JSON_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def resolve(schema, root):
    while "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), f"only local references are supported: {ref}"
        node = root
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


def schema_errors(value, schema, root, where="$"):
    schema = resolve(schema, root)
    errors = []
    if "const" in schema and value != schema["const"]:
        errors.append(f"{where}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{where}: {value!r} is not one of {schema['enum']}")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(JSON_TYPES[t](value) for t in types):
            return errors + [f"{where}: {value!r} is not of type {types}"]
    if JSON_TYPES["number"](value) and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{where}: {value} is below {schema['minimum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        errors.append(f"{where}: {value!r} is shorter than {schema['minLength']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{where}: missing {key!r}")
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key in properties:
                errors += schema_errors(item, properties[key], root, f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{where}: unexpected {key!r}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            errors += schema_errors(item, schema["items"], root, f"{where}[{index}]")
    return errors


def close(a, b, rel=2e-3):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-9)


def consistency_errors(doc):
    """What the schema cannot express: the figures must agree."""
    errors = []
    total = 0
    for bench in doc["benchmarks"]:
        name = bench["name"]
        sizes = [r["size"] for r in bench["results"]]
        if sizes != sorted(set(sizes)):
            errors.append(f"{name}: sizes are not strictly increasing: {sizes}")
        bandwidth = bench["kind"] == "bandwidth"
        if bandwidth != (bench["unit"] == "MB/s"):
            errors.append(f"{name}: kind {bench['kind']} with unit {bench['unit']}")
        for r in bench["results"]:
            where = f"{name} size {r['size']}"
            wrong = r["errors"]["host"] + r["errors"]["shoal"]
            total += wrong
            if r["valid"] != (wrong == 0):
                errors.append(f"{where}: valid={r['valid']} with {wrong} errors")
            for path in ("host", "shoal"):
                f = r[path]
                if None not in (f["min"], f["avg"], f["max"]) and not (
                        f["min"] <= f["avg"] * (1 + 1e-6) and f["avg"] <= f["max"] * (1 + 1e-6)):
                    errors.append(f"{where}: {path} min/avg/max out of order: {f}")
            host, shoal, speedup = r["host"]["avg"], r["shoal"]["avg"], r["speedup"]
            if speedup is not None and host and shoal:
                expected = shoal / host if bandwidth else host / shoal
                if not close(speedup, expected):
                    errors.append(f"{where}: speedup {speedup} but the figures give {expected}")
            bound, ratio = r["bound"], r["shoal_over_bound"]
            if ratio is not None and bound and shoal:
                expected = bound / shoal if bandwidth else shoal / bound
                if not close(ratio, expected):
                    errors.append(f"{where}: shoal_over_bound {ratio} but figures give {expected}")
            pairs = r["pairs"]
            if pairs["shoal_faster"] + pairs["shoal_slower"] > pairs["count"]:
                errors.append(f"{where}: more pairs faster and slower than pairs: {pairs}")
            if pairs["count"] > r["iterations"]:
                errors.append(f"{where}: {pairs['count']} pairs from {r['iterations']} iterations")
            if bench["kind"] == "collective" and r["difference_us"] is not None and host:
                if not math.isclose(r["difference_us"], host - shoal, rel_tol=1e-3, abs_tol=2e-3):
                    errors.append(f"{where}: difference_us {r['difference_us']} is not "
                                  f"host - shoal = {host - shoal}")
    if doc["validation_errors"] != total:
        errors.append(f"validation_errors {doc['validation_errors']} but rows add to {total}")
    if (doc["status"] == "ok") != (total == 0):
        errors.append(f"status {doc['status']} with {total} errors")
    return errors


def check(doc, schema):
    errors = schema_errors(doc, schema, schema)
    if not errors:
        errors = consistency_errors(doc)
    return errors


def self_test(doc, schema):
    """Each broken copy must be rejected, or the checker checks nothing."""
    breakages = {
        "a required field removed": lambda d: d["mpi"].pop("version"),
        "a string where a number goes": lambda d: d["benchmarks"][0]["results"][0].update(
            size="64"),
        "an unknown field": lambda d: d["run"].update(colour="blue"),
        "an unknown benchmark": lambda d: d["benchmarks"][0].update(name="allreduce2"),
        "a negative time": lambda d: d["benchmarks"][0]["results"][0]["host"].update(avg=-1.0),
        "valid with errors": lambda d: d["benchmarks"][0]["results"][0]["errors"].update(shoal=1),
        "a speedup that disagrees": lambda d: d["benchmarks"][0]["results"][0].update(
            speedup=1000.0),
        "a wrong schema name": lambda d: d.update(schema="shoal-bench/0"),
        "more pairs than calls": lambda d: d["benchmarks"][0]["results"][0]["pairs"].update(
            shoal_faster=10**6),
    }
    failures = 0
    for what, breakage in breakages.items():
        broken = copy.deepcopy(doc)
        breakage(broken)
        if check(broken, schema):
            print(f"ok: rejected {what}")
        else:
            print(f"FAIL: accepted {what}")
            failures += 1
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("json_file")
    parser.add_argument("--benchmarks", help="comma-separated names that must be present")
    parser.add_argument("--status", help="expected status (ok, validation_failed)")
    parser.add_argument("--processes", type=int)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    with open(SCHEMA_PATH) as f:
        schema = json.load(f)
    with open(args.json_file) as f:
        doc = json.load(f)

    errors = check(doc, schema)
    if args.benchmarks:
        present = [b["name"] for b in doc.get("benchmarks", [])]
        for name in args.benchmarks.split(","):
            if name not in present:
                errors.append(f"benchmark {name} missing (present: {present})")
            elif not next(b for b in doc["benchmarks"] if b["name"] == name)["results"]:
                errors.append(f"benchmark {name} has no results")
    if args.status and doc.get("status") != args.status:
        errors.append(f"status {doc.get('status')!r}, expected {args.status!r}")
    if args.processes and doc.get("run", {}).get("processes") != args.processes:
        errors.append(f"processes {doc.get('run', {}).get('processes')}, "
                      f"expected {args.processes}")
    for e in errors[:20]:
        print(f"check_json: {args.json_file}: {e}")
    if len(errors) > 20:
        print(f"check_json: ... and {len(errors) - 20} more")
    failures = 1 if errors else 0
    if not errors:
        print(f"check_json: {args.json_file} follows the schema")
    if args.self_test and not errors:
        failures += self_test(doc, schema)
    print(f"{1 - min(failures, 1)} passed, {min(failures, 1)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
