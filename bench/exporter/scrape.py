#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""scrape.py URL RUNS [CONCURRENCY]: time HTTP GETs of URL.

CONCURRENCY 1: RUNS sequential scrapes, one wall time (s) a line.
CONCURRENCY K: RUNS rounds of K simultaneous scrapes; a line per round: the
round's wall time and the longest single scrape.
"""
import sys
import threading
import time
import urllib.request


def get(url):
    t0 = time.monotonic()
    with urllib.request.urlopen(url, timeout=120) as r:
        r.read()
    return time.monotonic() - t0


def main():
    url, runs = sys.argv[1], int(sys.argv[2])
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    for _ in range(runs):
        if k == 1:
            print("%.6f" % get(url), flush=True)
            continue
        times = [0.0] * k
        barrier = threading.Barrier(k)

        def one(i):
            barrier.wait()
            times[i] = get(url)
        th = [threading.Thread(target=one, args=(i,)) for i in range(k)]
        t0 = time.monotonic()
        for t in th:
            t.start()
        for t in th:
            t.join()
        print("%.6f %.6f" % (time.monotonic() - t0, max(times)), flush=True)


if __name__ == "__main__":
    main()
