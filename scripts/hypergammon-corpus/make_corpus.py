"""Writes the hypergammon legal-plays corpus from GNU Backgammon's own
move generator, for differential tests of the hypergammon plugin.

    python make_corpus.py POSITIONS SEED > tests/data/hypergammon-legal-plays.txt
    python make_corpus.py --check tests/data/standard-legal-plays.txt

Needs PyPI's `gnubg` module (1.1.0a16, the build the standard corpus was
made with). Its exported C function `GenerateMoves` lists every legal
play of a position, whatever its number of checkers; each play's result
is read from gnubg's own position key for it (`PositionFromKey`), so no
move is applied here. gnubg's types as its eval.h declares them: a board
is `unsigned int[2][25]`, a move list starts with its count and holds a
pointer to the moves at byte 24; a move's key is at byte 32 of it. The
size of a move (1,064 bytes in this build) is not in any header this
script has: `--check` verifies the whole method on the standard corpus
(every line must come out as it is there) before it is trusted.

Positions come from random self-play of 3-chequer hypergammon (each
side's three checkers on its 24, 23 and 22 points to start, gnubg's
`set variation 3-chequer-hypergammon`), each play chosen among gnubg's
legal plays; dice and choices from Python's `random.Random(SEED)`. Lines
have the standard corpus's format: `POSITION_ID DIE1 DIE2 COUNT
RESULT_ID...`, the player on roll second in each ID, results sorted, the
empty play's result the position itself.
"""

import ctypes
import random
import sys

import gnubg

ENGINE = ctypes.CDLL(gnubg._gnubg.__file__)
TanBoard = (ctypes.c_uint * 25) * 2
MOVE_SIZE = 1064
KEY_OFFSET = 32


class MoveList(ctypes.Structure):
    _fields_ = [
        ("count", ctypes.c_int),
        ("max_moves", ctypes.c_int),
        ("max_pips", ctypes.c_int),
        ("best", ctypes.c_int),
        ("best_score", ctypes.c_float),
        ("moves", ctypes.c_void_p),
    ]


ENGINE.GenerateMoves.argtypes = [
    ctypes.POINTER(MoveList), TanBoard, ctypes.c_int, ctypes.c_int, ctypes.c_int
]
ENGINE.PositionFromKey.argtypes = [TanBoard, ctypes.c_void_p]

START = (0,) * 21 + (1, 1, 1, 0)  # the 22, 23 and 24 points (0-based 21..23)


def tan(board):
    out = TanBoard()
    for side in range(2):
        for i in range(25):
            out[side][i] = board[side][i]
    return out


def results(board, dice):
    """The boards after each legal play, from gnubg's keys (sides not swapped)."""
    moves = MoveList()
    ENGINE.GenerateMoves(ctypes.byref(moves), tan(board), dice[0], dice[1], 0)
    after = []
    for i in range(moves.count):
        out = TanBoard()
        ENGINE.PositionFromKey(out, moves.moves + i * MOVE_SIZE + KEY_OFFSET)
        after.append(tuple(tuple(out[side][j] for j in range(25)) for side in range(2)))
    return after


def line(board, dice):
    ids = sorted({gnubg.position_id(b) for b in results(board, dice)}) or [gnubg.position_id(board)]
    return f"{gnubg.position_id(board)} {dice[0]} {dice[1]} {len(ids)} {' '.join(ids)}"


def check(corpus):
    bad = 0
    for n, text in enumerate(open(corpus), 1):
        fields = text.split()
        board = gnubg.position_from_id(fields[0])
        if line(board, (int(fields[1]), int(fields[2]))) != text.strip():
            bad += 1
            print(f"{corpus}:{n}: differs", file=sys.stderr)
    print(f"{n} lines, {bad} different", file=sys.stderr)
    return 1 if bad else 0


def main() -> int:
    if sys.argv[1] == "--check":
        return check(sys.argv[2])
    count, rng = int(sys.argv[1]), random.Random(int(sys.argv[2]))
    board = (START, START)
    for _ in range(count):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        print(line(board, dice))
        after = results(board, dice)
        after = rng.choice(after) if after else board
        if sum(after[1]) == 0:  # the player on roll bore off the last checker
            board = (START, START)
        else:
            board = (after[1], after[0])  # the other side is on roll
    return 0


if __name__ == "__main__":
    sys.exit(main())
