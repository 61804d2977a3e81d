#!/usr/bin/env python3
"""Markdown rows from a JMH JSON result file (java -jar benchmarks.jar ... -rf json -rff FILE).

Usage: bench/jmh-table.py FILE [LABEL]. Per benchmark: the mean with JMH's 99.9 % error, the best
and the median iteration (on a shared machine the best iteration is the closest to an idle one),
and the allocation per operation when the run had -prof gc.
"""
import json
import statistics
import sys


def fmt(x):
    return f"{x:,.0f}" if x >= 100 else f"{x:,.2f}" if x < 10 else f"{x:,.1f}"


def main():
    runs = json.load(open(sys.argv[1]))
    label = sys.argv[2] if len(sys.argv) > 2 else ""
    for r in runs:
        name = r["benchmark"].replace("org.jflannel.", "")
        m = r["primaryMetric"]
        raw = [x for fork in m["rawData"] for x in fork]
        alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        print(f"| `{name}`{label} | {fmt(m['score'])} ± {fmt(m['scoreError'])} | {fmt(min(raw))} | "
              f"{fmt(statistics.median(raw))} | {m['scoreUnit']} | "
              f"{'' if alloc is None else f'{alloc:,.0f}'} |")


if __name__ == "__main__":
    main()
