"""Positions of GNU Backgammon's own play: GAMES money games of gnubg
against itself, cubeless, both sides playing gnubg's 0-ply choice (PyPI's
`gnubg` 1.1.0a16: of the legal plays, the one whose result its net values
most, as play.py chooses white's plays), the dice from Python's
random.Random(SEED). The legal plays come from `bgctl plays` (the
standard plugin; their equality with gnubg's own move generator is the
standard corpus's test). Prints one line a turn with more than one legal
play, the position before the play with the mover on roll and its roll:
`POSITION_ID DIE1 DIE2`, as `bgctl hint --corpus` reads them.

    python gnubg-selfplay.py SEED GAMES > positions.txt   # BGCTL= PLUGINS=
"""

import os
import random
import subprocess
import sys

import gnubg

from grade import ZERO_PLY, mover_equity

BGCTL = os.environ.get("BGCTL", "target/release/bgctl")
PLUGINS = os.environ.get("PLUGINS", "target/plugins")
START = "4HPwATDgc/ABMA"


def legal_results(position_id, d1, d2):
    """The Position IDs after each legal play (the mover still on roll)."""
    asked = f"{position_id} {d1} {d2}"
    done = subprocess.run([BGCTL, "--plugin-dir", PLUGINS, "plays", "--corpus", "-"],
                          input=asked + "\n", capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"bgctl plays on {asked}: {done.stderr.strip()}")
    return done.stdout.split()[4:]


def main() -> int:
    seed, games = int(sys.argv[1]), int(sys.argv[2])
    dice = random.Random(seed)
    for _ in range(games):
        position = START
        while True:
            d1, d2 = dice.randint(1, 6), dice.randint(1, 6)
            results = legal_results(position, d1, d2)
            if len(results) > 1:
                print(position, d1, d2, flush=True)
            chosen = max(results, key=lambda result: mover_equity(result, ZERO_PLY))
            opp, me = gnubg.position_from_id(chosen)
            if sum(me) == 0:
                break
            position = gnubg.position_id((me, opp))  # the other side on roll
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # PyPI gnubg 1.1.0a16 may crash as the interpreter exits.
    os._exit(code)
