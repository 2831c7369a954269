"""Times GNU Backgammon's GenerateMoves over the legal-plays corpus.

    python time_gnubg.py HARNESS_SO CORPUS REPEAT

HARNESS_SO is movegen.c built as a shared library. The gnubg module
(PyPI's `gnubg`, the build the corpus was made with) is imported so that
its extension is loaded with the Python symbols it needs; its exported C
functions are then called from C, not from Python, so the time is the
generator's alone. Prints one line in `bgctl bench movegen`'s form:
`ns_per_position=<median pass> positions=<n>`.
"""

import ctypes
import sys

import gnubg


def main() -> int:
    harness_path, corpus, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
    engine = ctypes.CDLL(gnubg._gnubg.__file__)
    harness = ctypes.CDLL(harness_path)
    harness.time_passes.restype = ctypes.c_long
    harness.time_passes.argtypes = [
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_double),
        ctypes.POINTER(ctypes.c_double),
        ctypes.POINTER(ctypes.c_double),
    ]
    median, fastest, slowest = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    positions = harness.time_passes(
        corpus.encode(),
        repeat,
        ctypes.cast(engine.GenerateMoves, ctypes.c_void_p),
        ctypes.cast(engine.PositionFromID, ctypes.c_void_p),
        ctypes.byref(median),
        ctypes.byref(fastest),
        ctypes.byref(slowest),
    )
    if positions < 0:
        return 1
    print(
        f"engine=gnubg-{gnubg.version} passes={repeat} "
        f"fastest_ns={fastest.value:.1f} slowest_ns={slowest.value:.1f}"
    )
    print(f"ns_per_position={median.value:.1f} positions={positions}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
