#!/usr/bin/env python3
"""Prints the tests that took longest, from the event streams run-in-parallel.sh keeps.

    slowest-tests.py DIR [COUNT]

Each DIR/LANE.STEP.events is a Swift Testing event stream (version 0, one JSON record a line).
A test's time is the sum of its cases' times, each from the case's start to its end: the time
a case waited for a thread of Swift's pool before it ran is not in it.
"""
import json
import pathlib
import sys


def durations(path):
    started = {}
    total = {}
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("kind") != "event":
            continue
        payload = record["payload"]
        test = payload.get("testID")
        if not test:
            continue
        case = (test, (payload.get("_testCase") or {}).get("id"))
        instant = payload["instant"]["absolute"]
        if payload.get("kind") == "testCaseStarted":
            started[case] = instant
        elif payload.get("kind") == "testCaseEnded" and case in started:
            total[test] = total.get(test, 0) + instant - started.pop(case)
    return total.items()


def main():
    folder = pathlib.Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    rows = []
    for path in sorted(folder.glob("*.events")):
        for test, seconds in durations(path):
            if "/" not in test:  # a suite
                continue
            name = test.split("/")[0].split(".")[-1] + "." + test.split("/")[1]
            rows.append((seconds, name, path.stem))
    for seconds, name, lane in sorted(rows, reverse=True)[:count]:
        print(f"{seconds:8.1f}  {lane:5}  {name}")
    # The suites by the time of their tests' cases, summed: what to move to balance the lanes.
    suites = {}
    for seconds, name, lane in rows:
        key = (name.split(".")[0], lane)
        suites[key] = suites.get(key, 0) + seconds
    print("=== the suites by their tests' time (seconds, lane.step)")
    for (suite, lane), seconds in sorted(suites.items(), key=lambda item: -item[1])[:count * 2]:
        print(f"{seconds:8.1f}  {lane:5}  {suite}")


main()
