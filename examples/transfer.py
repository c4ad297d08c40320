#!/usr/bin/env python3
"""transfer.py - examples/transfer.c through ctypes: move money between two
accounts with the reiser4() call of libr4call (docs/library.md), a read of
both balances in one unit, then a compare-and-swap of both.

    R4_IMAGE=bank.img python3 transfer.py /bank/alice /bank/bob 40
    cd /mnt/r4 && python3 transfer.py /bank/alice /bank/bob 40   (a mount)

With EXPECT_FROM and EXPECT_TO the swap expects those balances (a stale view:
it fails and changes nothing).  Prints the new balances, or the failure's
errno, position and message; exits 0, or 1 when nothing moved.
"""
import ctypes
import os
import sys


class Value(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_void_p), ("len", ctypes.c_size_t),
                ("path", ctypes.c_char_p), ("err", ctypes.c_int),
                ("line", ctypes.c_uint), ("col", ctypes.c_uint),
                ("off", ctypes.c_size_t), ("span", ctypes.c_size_t)]


class Diag(ctypes.Structure):
    _fields_ = [("err", ctypes.c_int), ("msg", ctypes.c_char_p),
                ("line", ctypes.c_uint), ("col", ctypes.c_uint),
                ("off", ctypes.c_size_t), ("span", ctypes.c_size_t)]


class Result(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("err", ctypes.c_int),
                ("nvalues", ctypes.c_size_t), ("values", ctypes.POINTER(Value)),
                ("ndiags", ctypes.c_size_t), ("diags", ctypes.POINTER(Diag)),
                ("report", ctypes.c_char_p)]


lib = ctypes.CDLL("libr4call.so.1", use_errno=True)
lib.reiser4.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                        ctypes.POINTER(ctypes.POINTER(Result))]
lib.reiser4.restype = ctypes.c_int
lib.reiser4_result_free.argtypes = [ctypes.POINTER(Result)]


class R4Error(Exception):
    def __init__(self, status, diags):
        super().__init__(diags)
        self.status, self.diags = status, diags


def reiser4(cmd):
    """Run cmd; its values as bytes, or R4Error with (errno, line, col, msg)s."""
    out = ctypes.POINTER(Result)()
    b = cmd.encode()
    rc = lib.reiser4(b, len(b), ctypes.byref(out))
    if not out:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    try:
        r = out.contents
        if rc:
            raise R4Error(r.status, [(d.err, d.line, d.col, d.msg.decode())
                                     for d in r.diags[:r.ndiags]])
        return [ctypes.string_at(v.bytes, v.len) for v in r.values[:r.nvalues]]
    finally:
        lib.reiser4_result_free(out)


def main(argv):
    if len(argv) not in (4, 6):
        print("usage: transfer.py FROM TO AMOUNT [EXPECT_FROM EXPECT_TO]", file=sys.stderr)
        return 2
    src, dst, amount = argv[1], argv[2], int(argv[3])
    try:
        if len(argv) == 6:
            have, want = int(argv[4]), int(argv[5])
        else:
            have, want = (int(v) for v in reiser4(f"{src}; {dst}"))
        if not 0 < amount <= have:
            print(f"transfer: cannot move {amount} out of {have}", file=sys.stderr)
            return 1
        vals = reiser4(f'tw/[ if {src} eq "{have}" and {dst} eq "{want}"\n'
                       f'     then ({src} <- "{have - amount}", {dst} <- "{want + amount}")\n'
                       f'     else *"/stale balance" ]')
    except R4Error as e:
        for err, line, col, msg in e.diags:
            print(f"transfer: status {e.status} errno {err} ({os.strerror(err)}) "
                  f"at {line}:{col}: {msg}", file=sys.stderr)
        return 1
    print(" ".join(v.decode() for v in vals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
