# SPDX-License-Identifier: GPL-2.0-or-later
"""The checks of tests/deploy/kube_sidecar.py and tests/image/image.py: counted, a
failure printed at once (thread-safe: the sidecar test checks in its server's
threads too); wait() polls a condition until a deadline scaled by
SOCKDIAG_TEST_SLOWDOWN."""
import os
import sys
import threading
import time

SLOW = int(os.environ.get("SOCKDIAG_TEST_SLOWDOWN", "1"))
failures, passed = [], [0]
_lock = threading.Lock()


def check(cond, what):
    with _lock:
        if cond:
            passed[0] += 1
        else:
            failures.append(what)
            print("FAIL:", what, file=sys.stderr, flush=True)
    return cond


def wait(pred, seconds=10, step=0.02):
    end = time.monotonic() + seconds * SLOW
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(step)
    return pred()


def finish():
    """The summary lines tests/summary.py and CI read; exit 1 on any failure."""
    print("# checks: %d passed, %d failed, 0 skipped" % (passed[0], len(failures)))
    print("%d passed, %d failed" % (passed[0], len(failures)))
    sys.exit(1 if failures else 0)
