# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# py_leak.py - a Python program that leaks and one that churns, for tests/e2e/python.sh:
# grow_cache keeps a 1000-byte bytes object every 20 ms in a global list (objects above
# pymalloc's 512 bytes come from malloc), churn makes four and drops them.  With a path
# argument it writes its pid there once it runs its loop.
import os
import sys
import time

cache = []


def grow_cache():
    cache.append(bytes(1000))  # LEAK:grow


def churn():
    junk = [bytes(1000) for _ in range(4)]  # LEAK:churn
    return len(junk)


def main():
    if len(sys.argv) > 1:
        with open(sys.argv[1] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        grow_cache()
        churn()
        time.sleep(0.02)


main()
