"""GNU Backgammon's own 0-ply cube analysis of a set of positions, as
worked examples for the cube model's tests (crates/bot/src/cube.rs).

For each position (drawn from tests/data/standard-legal-plays.txt: some
in contact, some races and some with both sides bearing off, neither
side far ahead in the race) and a score
and cube (money, with and without the Jacoby rule, and matches of 3 to
15 points, the cube centred or the roller's, post-Crawford included),
Debian's `gnubg -t` prints its 0-ply cube analysis: the cubeless
chances, then the cubeful equities of no double, double/take and
double/pass (EMG, normalised as gnubg does). Writes
tests/data/gnubg-cube-hints.txt (its README says the format): the cube
model's test feeds gnubg's chances to the model and expects gnubg's
equities back; the service's test asks `Hint` about the same positions.

    python3 scripts/bot-grade/cubehint.py
"""

import base64
import re
import subprocess
import sys
from pathlib import Path

GNUBG = "/usr/games/gnubg"
DATA = Path(__file__).resolve().parents[2] / "tests/data"
CORPUS = DATA / "standard-legal-plays.txt"
OUT = DATA / "gnubg-cube-hints.txt"
# (match length, roller's score, other's score, post-Crawford, cube, roller owns it, Jacoby)
CASES = [
    (0, 0, 0, False, 1, False, False), (7, 0, 0, False, 1, False, False),
    (7, 4, 2, False, 1, False, False), (5, 1, 3, False, 2, True, False),
    (0, 0, 0, False, 2, True, False), (9, 6, 4, False, 1, False, False),
    (5, 2, 4, True, 1, False, False), (11, 8, 5, False, 2, True, False),
    (0, 0, 0, False, 1, False, True), (3, 1, 0, False, 1, False, False),
    (7, 5, 5, False, 1, False, False), (15, 10, 3, False, 4, True, False),
    (13, 0, 10, False, 1, False, False), (7, 3, 6, True, 1, False, False),
]
PER_KIND = {"contact": 16, "race": 10, "bearoff": 6}


def sides(pid):
    """The checkers of the side not on roll, then of the side on roll
    (points 1 to 24, the bar 25), from a Position ID."""
    bits = [(byte >> i) & 1 for byte in base64.b64decode(pid + "==") for i in range(8)]
    out, side, slot = [[0] * 26, [0] * 26], 0, 1
    for bit in bits:
        if side == 2:
            break
        if bit:
            out[side][slot] += 1
        else:
            slot += 1
            if slot > 25:
                side, slot = side + 1, 1
    return out


def kind(pid):
    rear = [max([p for p in range(1, 26) if s[p]] or [0]) for s in sides(pid)]
    if sum(rear) > 25:
        return "contact"
    return "bearoff" if max(rear) <= 6 else "race"


def close(pid):
    """Whether neither side is far ahead in the race (within 10% of the
    pips): the cube matters there."""
    pips = [sum(p * n for p, n in enumerate(s)) for s in sides(pid)]
    return abs(pips[0] - pips[1]) <= 0.1 * max(pips)


def positions():
    by_kind = {k: [] for k in PER_KIND}
    for line in CORPUS.read_text().splitlines():
        pid = line.split()[0]
        k = kind(pid)
        # Both sides down to 6 checkers or fewer: gnubg's two-sided
        # bearoff database, whose exact cubeful equities gnubg uses in
        # place of the model (a model test has nothing to say there).
        if k == "bearoff" and max(sum(s) for s in sides(pid)) <= 6:
            continue
        if k == "contact" or close(pid):
            by_kind[k].append(pid)
    chosen = []
    for k, n in PER_KIND.items():
        found = by_kind[k]
        chosen += [found[i * len(found) // n] for i in range(n)]
    return chosen


def analysis(pid, case):
    length, mine, theirs, post, cube, owned, jacoby = case
    # gnubg is player 0, the roller ("root") player 1.
    lines = ["set jacoby " + ("on" if jacoby else "off"),
             f"new match {length}" if length else "new session",
             "set evaluation cubedecision evaluation plies 0"]
    if length:
        lines.append(f"set score {theirs} {mine}")
        if post:
            lines.append("set postcrawford on")
    lines += ["set turn 1", f"set board {pid}", f"set cube value {cube}",
              "set cube owner 1" if owned else "set cube centre", "show board", "hint"]
    out = subprocess.run([GNUBG, "-t", "-q"], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, timeout=120, check=True).stdout
    shown = re.findall(r"Position ID: (\S+)", out)[-1]
    assert shown == pid, (pid, shown, out)
    out = out[out.index("Cube analysis"):]
    chances = re.search(r"\n\s+([\d.]+) ([\d.]+) ([\d.]+) - -?([\d.]+) ([\d.]+) ([\d.]+)\n", out)
    w, wg, wbg, _l, lg, lbg = (float(x) for x in chances.groups())
    eq = {}
    for name, value in re.findall(r"\d\. (No (?:re)?double|(?:Re)?[Dd]ouble, (?:take|pass))\s+([-+][\d.]+)", out):
        key = "nd" if name.startswith("No") else ("dt" if name.endswith("take") else "dp")
        eq[key] = float(value)
    return [w, wg, wbg, lg, lbg], [eq["nd"], eq["dt"], eq["dp"]]


def main():
    lines = []
    for i, pid in enumerate(positions()):
        case = CASES[i % len(CASES)]
        chances, equities = analysis(pid, case)
        length, mine, theirs, post, cube, owned, jacoby = case
        fields = [pid, length, mine, theirs, int(post), cube, int(owned), int(jacoby)]
        fields += [f"{x:.3f}" for x in chances + equities]
        lines.append(" ".join(str(f) for f in fields))
        print(lines[-1], file=sys.stderr)
    OUT.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
