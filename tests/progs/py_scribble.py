# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# py_scribble.py MODE READY - a hostile Python program for tests/e2e/hostile_python.sh: it
# rewrites its own interpreter frames (CPython 3.11, through ctypes: what a C extension
# could do) and then allocates forever in the frame it broke, which never returns:
#   cycle  its frame's `previous` points back at itself
#   loop2  its caller's `previous` points at it: a chain that goes round for ever
#   wild   its frame's `previous` points at unmapped memory
#   fake   its caller's f_code points at a made-up code object whose name claims 2^40
#          characters, whose file name is an unmapped address and whose line table says it
#          holds 16 MiB
# It writes its pid to READY once its frames are broken.
import ctypes
import gc
import os
import sys
import time

FRAME_PREVIOUS = 48	# _PyInterpreterFrame.previous (3.11)
FRAME_CODE = 32		# _PyInterpreterFrame.f_code
FRAMEOBJ_FRAME = 24	# PyFrameObject.f_frame

keep = []


def interp_frame(depth):
    """The _PyInterpreterFrame of the caller `depth` frames up."""
    f = sys._getframe(depth + 1)
    return ctypes.c_void_p.from_address(id(f) + FRAMEOBJ_FRAME).value


def put(addr, value):
    ctypes.c_uint64.from_address(addr).value = value


def fake_code():
    code = ctypes.create_string_buffer(512)
    name = ctypes.create_string_buffer(64)
    table = ctypes.create_string_buffer(64)
    keep.extend([code, name, table])
    base = ctypes.addressof(code)
    ctypes.memset(base, 0x41, 512)
    put(ctypes.addressof(name) + 16, 1 << 40)		# length
    put(ctypes.addressof(name) + 32, 0xe4)		# state: compact ASCII, ready
    put(ctypes.addressof(table) + 16, 1 << 24)		# ob_size
    put(base + 128, ctypes.addressof(name))		# co_qualname
    put(base + 112, 0x10)				# co_filename: unmapped
    put(base + 136, ctypes.addressof(table))		# co_linetable
    return base


def victim(mode, ready):
    me = interp_frame(0)
    caller = interp_frame(1)
    if mode == "cycle":
        put(me + FRAME_PREVIOUS, me)
    elif mode == "loop2":
        put(caller + FRAME_PREVIOUS, me)
    elif mode == "wild":
        put(me + FRAME_PREVIOUS, 0x4141414141414140)
    elif mode == "fake":
        put(caller + FRAME_CODE, fake_code())
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    junk = []
    while True:
        junk.append(bytes(1000))
        if len(junk) > 1000:
            junk = []
        time.sleep(0.005)


def main():
    gc.disable()	# the collector would follow the broken frames itself
    victim(sys.argv[1], sys.argv[2])


main()
