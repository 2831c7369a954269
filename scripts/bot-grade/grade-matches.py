"""GNU Backgammon's analysis of matches, summed: each .mat file imported
into Debian's `gnubg -t`, analysed (checker play and cube decisions at
2-ply, gnubg's default match equity table, Kazaross XG2), and each
player's statistics added up over all the files.

    python grade-matches.py DIR

Prints, for each player: the unforced checker decisions, the equity lost
(EMG: normalised to the money game's cube), the error rate x500 ("PR":
mean EMG lost per unforced decision x 500) and gnubg's own mEMG rate
(x1000); the close or actual cube decisions and their equity lost, per
decision x500; then where the cube's equity went, by gnubg's kinds of
cube error (missed doubles below and above the cash point, wrong
doubles below the double point and above too-good, wrong takes, wrong
passes): how many and the EMG each kind lost.
"""

import glob
import os
import re
import subprocess
import sys

GNUBG = "/usr/games/gnubg"
COMMANDS = """set threads 2
set analysis chequerplay evaluation plies 2
set analysis cubedecision evaluation plies 2
import mat {path}
analyse match
show statistics match
"""


# gnubg's kinds of cube error, as its statistics name them.
CUBE_ERRORS = {
    "Missed doubles below CP": "missed_double_below_cp",
    "Missed doubles above CP": "missed_double_above_cp",
    "Wrong doubles below DP": "wrong_double_below_dp",
    "Wrong doubles above TG": "wrong_double_above_tg",
    "Wrong takes": "wrong_take",
    "Wrong passes": "wrong_pass",
}
# A player's count, and its EMG and MWC lost when there is any.
# (MWC in a match, points in money play.)
CUBE_ERROR = re.compile(r"(\d+)(?:\s*\(\s*([-+]?\d+\.\d+)\s*\(\s*[-+]?\d+\.\d+%?\)\))?")
CUBE_ERROR_LABEL = re.compile(r"\(EMG \((?:MWC|Points)\)\)")


def cube_errors(line):
    """The two players' (count, EMG lost) on a cube error line."""
    rest = CUBE_ERROR_LABEL.split(line, 1)[1]
    found = CUBE_ERROR.findall(rest)
    return tuple((int(n), abs(float(emg or 0))) for n, emg in found[:2])


def two_numbers(line):
    """The two players' first numbers on a statistics line."""
    numbers = re.findall(r"[-+]?\d+(?:\.\d+)?", line.split("  ", 1)[1] if "  " in line else line)
    return float(numbers[0]), float(numbers[2] if "(" in line else numbers[1])


def analyse(path):
    """Per player (0 white, 1 black): unforced moves, checker EMG lost,
    close cube decisions, cube EMG lost."""
    out = subprocess.run(
        [GNUBG, "-t", "-q"],
        input=COMMANDS.format(path=path),
        capture_output=True,
        text=True,
        timeout=3600,
    ).stdout
    section, stats, errors = None, {}, {}
    for line in out.splitlines():
        if line.startswith("Chequerplay statistics"):
            section = "checker"
        elif line.startswith("Cube statistics"):
            section = "cube"
        elif line.startswith(("Luck statistics", "Overall statistics")):
            section = None
        elif section == "checker" and line.startswith("Unforced moves"):
            stats["unforced"] = two_numbers(line)
        elif section == "cube" and line.startswith("Close or actual cube decisions"):
            stats["cube_decisions"] = two_numbers(line)
        elif section == "cube" and line.startswith(tuple(CUBE_ERRORS)):
            kind = next(v for k, v in CUBE_ERRORS.items() if line.startswith(k))
            errors.setdefault(kind, cube_errors(line))
        elif section and line.startswith("Error total EMG"):
            stats[section + "_lost"] = tuple(-abs(x) for x in two_numbers(line))
    if len(stats) != 4 or len(errors) != len(CUBE_ERRORS):
        raise RuntimeError(f"{path}: gnubg's statistics not found:\n{out[-2000:]}")
    return stats, errors


def main() -> int:
    files = sorted(glob.glob(os.path.join(sys.argv[1], "*.mat")))
    totals = [dict(unforced=0, checker_lost=0.0, cube_decisions=0, cube_lost=0.0) for _ in range(2)]
    kinds = [{kind: [0, 0.0] for kind in CUBE_ERRORS.values()} for _ in range(2)]
    for path in files:
        stats, errors = analyse(path)
        for player in (0, 1):
            for key in totals[player]:
                totals[player][key] += abs(stats[key][player])
            for kind, counts in errors.items():
                kinds[player][kind][0] += counts[player][0]
                kinds[player][kind][1] += counts[player][1]
        print(f"{path}: black's unforced moves {stats['unforced'][1]:.0f}, EMG lost {abs(stats['checker_lost'][1]):.3f}", file=sys.stderr, flush=True)
    for player, name in ((0, "white"), (1, "black")):
        t = totals[player]
        rate = t["checker_lost"] / max(t["unforced"], 1)
        cube_rate = t["cube_lost"] / max(t["cube_decisions"], 1)
        print(
            f"{name}: matches={len(files)} unforced_checker_decisions={t['unforced']:.0f} "
            f"checker_emg_lost={t['checker_lost']:.3f} checker_error_rate_x500={rate * 500:.1f} "
            f"checker_mEMG={rate * 1000:.1f} cube_decisions={t['cube_decisions']:.0f} "
            f"cube_emg_lost={t['cube_lost']:.3f} cube_error_rate_x500={cube_rate * 500:.1f}"
        )
        print(f"{name} cube errors: " + " ".join(
            f"{kind}={n}/{emg:.3f}" for kind, (n, emg) in kinds[player].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
