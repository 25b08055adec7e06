#!/usr/bin/env python3
"""Safepoint pauses per phase, from a JVM's -Xlog:safepoint log and a timestamped benchmark output.

Usage: safepoints.py SAFEPOINT_LOG OUTPUT_LOG MARK [MARK ...]

SAFEPOINT_LOG is written with -Xlog:safepoint:file=<f>:time (each line starts with [ISO time]).
OUTPUT_LOG has lines "HH:MM:SS.mmm <text>" (the benchmark's output, each line stamped as it was
printed). Each MARK is a regular expression matched at the start of the text (the first line it
matches); the phases are: start -> first MARK, MARK i -> MARK i+1,
last MARK -> end. For each phase: safepoints, p50, p99, longest, how many >= 10 ms, and the sum.
"""
import re
import sys
from datetime import datetime


def seconds_of_day(hms):
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def main():
    sp_log, out_log, marks = sys.argv[1], sys.argv[2], sys.argv[3:]
    pauses = []  # (seconds of day, total ms, name)
    pat = re.compile(r'^\[(\S+?)\].*Safepoint "([^"]+)".*Total: (\d+) ns')
    for line in open(sp_log, encoding="utf-8", errors="replace"):
        m = pat.search(line)
        if m:
            t = datetime.fromisoformat(m.group(1)[:23])
            pauses.append((t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6, int(m.group(3)) / 1e6, m.group(2)))
    bounds = []
    for mark in marks:
        for line in open(out_log, encoding="utf-8", errors="replace"):
            stamp, _, text = line.rstrip("\n").partition(" ")
            if re.match(mark, text):
                bounds.append((seconds_of_day(stamp), mark))
                break
        else:
            sys.exit(f"mark not found in {out_log}: {mark}")
    edges = [(-1, "start")] + bounds + [(1e9, "end")]
    print(f"{'phase':<45} {'safepoints':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>9} {'>=10ms':>7} {'sum ms':>9}  longest")
    for (a, la), (b, lb) in zip(edges, edges[1:]):
        ps = sorted((p for p in pauses if a <= p[0] < b), key=lambda p: p[1])
        if not ps:
            print(f"{la[:20] + ' -> ' + lb[:20]:<45} {0:>10}")
            continue
        ms = [p[1] for p in ps]
        p50 = ms[len(ms) // 2]
        p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
        print(f"{la[:20] + ' -> ' + lb[:20]:<45} {len(ms):>10} {p50:>8.2f} {p99:>8.2f} {ms[-1]:>9.2f} "
              f"{sum(1 for x in ms if x >= 10):>7} {sum(ms):>9.1f}  {ps[-1][2]}")


if __name__ == "__main__":
    main()
