"""Grades a player's checker play with GNU Backgammon.

    bg-bot decisions --variant standard --games 100 --seed 1 > decisions.txt
    python grade.py decisions.txt [LIMIT]

Needs PyPI's `gnubg` module (1.1.0a16). Each input line is one decision:
`POSITION_ID DIE1 DIE2 CHOSEN_ID RESULT_ID...`, the mover on roll in
every ID. For each decision with more than one legal play, every result
is valued by gnubg at 0-ply; the eight best and the chosen one are valued
again at 2-ply (gnubg's move filter does the same), each from the
mover's side (the result evaluated with the other side on roll, negated;
cubeless money equity). The equity lost is the best 2-ply value less the
chosen one's. Prints the decisions graded, the mean equity lost, and
that mean times 500: gnubg's error rate per move ("PR"-like, cubeless).
"""

import sys
import time

import gnubg

CUBE = gnubg.cubeinfo()
ZERO_PLY = gnubg.evalcontext(0, 0, 1, 1, 0.0)
TWO_PLY = gnubg.evalcontext(0, 2, 1, 1, 0.0)
KEEP = 8


def mover_equity(result_id, context):
    opp, me = gnubg.position_from_id(result_id)
    if sum(me) == 0:  # the mover bore off its last checker
        if sum(opp) < 15:
            return 1.0
        return 3.0 if sum(opp[18:25]) > 0 else 2.0
    return -gnubg.evaluate((me, opp), CUBE, context)[5]


def main() -> int:
    path = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    graded, lost, blunders = 0, 0.0, 0
    started = time.time()
    for text in open(path):
        fields = text.split()
        chosen, results = fields[3], fields[4:]
        if len(results) < 2:
            continue
        ranked = sorted(results, key=lambda r: mover_equity(r, ZERO_PLY), reverse=True)
        finalists = set(ranked[:KEEP]) | {chosen}
        values = {r: mover_equity(r, TWO_PLY) for r in finalists}
        loss = max(values.values()) - values[chosen]
        graded += 1
        lost += loss
        blunders += loss > 0.08
        if graded % 100 == 0:
            print(f"{graded} graded, mean loss {lost / graded:.4f}, {time.time() - started:.0f} s", file=sys.stderr)
        if limit and graded >= limit:
            break
    mean = lost / max(graded, 1)
    print(f"decisions={graded} mean_equity_lost={mean:.4f} error_rate_x500={mean * 500:.1f} blunders_over_0.08={blunders}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
