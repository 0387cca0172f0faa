#!/usr/bin/env python3
"""Checks that the lanes of run-in-parallel.sh run every test once.

    lane-check.py BUNDLE LANE... [-- LANE...]...

Takes the script's own arguments. Each lane step's --filter and --skip patterns are applied to
the bundle's list of tests as Swift Testing applies them (a regular expression found anywhere
in a test's identifier), and a test that no step selects, or that two steps select, is named.
"""
import re
import subprocess
import sys


def selected(tests, options):
    words = options.split()
    filters, skips = [], []
    for flag, value in zip(words, words[1:]):
        if flag == "--filter":
            filters.append(re.compile(value))
        elif flag == "--skip":
            skips.append(re.compile(value))
    return {test for test in tests
            if (not filters or any(f.search(test) for f in filters)) and not any(s.search(test) for s in skips)}


def main():
    bundle, arguments = sys.argv[1], sys.argv[2:]
    listing = subprocess.run([bundle, "--testing-library", "swift-testing", "--list-tests"],
                             capture_output=True, text=True, check=True).stdout
    tests = [line.strip() for line in listing.splitlines() if "/" in line]
    runs = {test: [] for test in tests}
    for lane in arguments:
        if lane == "--":
            continue
        for step in lane.split(" ; "):
            for test in selected(tests, step):
                runs[test].append(step[:60])
    problems = [f"never run: {test}" for test, steps in runs.items() if not steps]
    problems += [f"run {len(steps)} times: {test}" for test, steps in runs.items() if len(steps) > 1]
    for problem in problems:
        print(f"lane-check: {problem}")
    return 1 if problems else 0


sys.exit(main())
