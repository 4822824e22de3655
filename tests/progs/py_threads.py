# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# py_threads.py - Python frames of the right thread and process, for tests/e2e/python.sh:
# the main thread leaks in main_grow and a second thread in thread_grow, both every 20 ms;
# a forked child execs this script again with "child" and leaks in child_grow.
import os
import sys
import threading
import time

kept = []


def thread_grow():
    while True:
        kept.append(bytes(1000))  # LEAK:thread
        time.sleep(0.02)


def child_grow():
    parent = os.getppid()
    while os.getppid() == parent:	# ends with its parent
        kept.append(bytes(1000))  # LEAK:child
        time.sleep(0.02)
    sys.exit(0)


def main_grow():
    kept.append(bytes(1000))  # LEAK:main


def main():
    if sys.argv[1:] == ["child"]:
        child_grow()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, __file__, "child"])
    threading.Thread(target=thread_grow, daemon=True).start()
    while True:
        main_grow()
        time.sleep(0.02)


main()
