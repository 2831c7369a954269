"""GNU Backgammon's market windows at a set of match scores, as worked
examples for the cube model's tests (crates/bot/src/cube.rs).

For each score, Debian's `gnubg -t` starts a match, sets the score (and
post-Crawford play where asked) and prints `show marketwindow`: each
player's gammon and backgammon rates (of its wins) and the upper edge of
its market window, with a dead cube and a live one: the chance of
winning above which its double is passed. Prints one Rust tuple a
player who can double:

    (away, other's away, post-Crawford, (gammon, bg), (other's gammon, bg),
     dead cash point, live cash point)

    python3 scripts/bot-grade/marketwindow.py
"""

import re
import subprocess

GNUBG = "/usr/games/gnubg"
# (match length, gnubg's score, the other player's score, post-Crawford)
SCORES = [
    (5, 3, 1, False), (7, 2, 2, False), (9, 0, 4, False), (11, 6, 3, False),
    (15, 10, 2, False), (3, 0, 1, False), (25, 10, 12, False), (7, 0, 0, False),
    (3, 1, 1, False), (5, 2, 0, False), (9, 5, 7, False), (13, 0, 10, False),
    (5, 4, 2, True), (7, 6, 3, True), (5, 4, 1, True), (9, 8, 2, True),
]
WINDOW = re.compile(r"(Dead cube|Live cube)( \(opponent (?:doesn't redouble|redoubles)\))?:"
                    r"\s+([\d.]+)% -\s+([\d.]+)%")


def windows(length, mine, theirs, post):
    commands = f"new match {length}\nset score {mine} {theirs}\n"
    if post:
        commands += "set postcrawford on\n"
    out = subprocess.run([GNUBG, "-t", "-q"], input=commands + "show marketwindow\n",
                         capture_output=True, text=True, timeout=120, check=True).stdout
    out = out[out.index("The score (after"):]
    rates = re.findall(r"gammon rate\s+([\d.]+)%, bg rate\s+([\d.]+)%", out)
    players = []
    for block in out.split("market window:")[1:]:
        dead = live = None
        for kind, qualifier, _low, high in WINDOW.findall(block):
            high = float(high) / 100
            if kind == "Live cube" or qualifier == " (opponent redoubles)":
                live = high
            elif dead is None:
                dead = high
        players.append((dead, live if live is not None else dead))
    return [(float(g) / 100, float(b) / 100) for g, b in rates], players


def main():
    for length, a, b, post in SCORES:
        rates, players = windows(length, a, b, post)
        scores = [a, b]
        for me in (0, 1):
            away, other = length - scores[me], length - scores[1 - me]
            dead, live = players[me]
            if away == 1 or dead is None:
                continue  # the leader at 1-away cannot double
            (g, bg), (og, obg) = rates[me], rates[1 - me]
            print(f"({away}, {other}, {str(post).lower()}, ({g:.4f}, {bg:.4f}), "
                  f"({og:.4f}, {obg:.4f}), {dead:.4f}, {live:.4f}),")


if __name__ == "__main__":
    main()
