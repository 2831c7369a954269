"""Plays matches against the service's computer player, GNU Backgammon
choosing the other side's moves, and saves each match's .mat record.

    python play.py ADDR MATCHES LENGTH OUT_DIR [LEVEL]

LENGTH 0: money games (one game each, the Jacoby rule on as gnubg's
default has it).

Black is the service's computer player (`NewGameRequest.bots`, LEVEL, by
default the strongest). White's checker play is PyPI gnubg's choice at 0-ply
(of the service's legal plays, the one whose result gnubg's net values
most). White's cube decisions are GNU Backgammon's own: Debian's
`gnubg -t`, kept running beside the script, is given each position by
its gnubg ID (the service's Position ID and Match ID) and asked `hint`;
white doubles when its "Proper cube action" is a double or redouble, and
answers black's double by passing when it ends in "pass", else taking. Each match is exported from the service as .mat
(`ExportMatch`) into OUT_DIR, for GNU Backgammon to analyse
(grade-matches). Needs the generated gRPC stubs on PYTHONPATH
(gnubg-match makes them).
"""

import os
import subprocess
import sys
import uuid

import grpc
import gnubg

from backgammon.v1 import backgammon_pb2 as pb
from backgammon.v1 import backgammon_pb2_grpc as rpc
from grade import ZERO_PLY, mover_equity

WHITE, BLACK = pb.SEAT_WHITE, pb.SEAT_BLACK
GNUBG_CLI = "/usr/games/gnubg"


class CubeJudge:
    """GNU Backgammon's cube decisions: one `gnubg -t` process, its output
    line-buffered (stdbuf), asked `hint` on a position set by gnubg ID."""

    def __init__(self):
        self.process = subprocess.Popen(
            ["stdbuf", "-oL", GNUBG_CLI, "-t", "-q"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.send("set player gnubg human")
        # Money games are played with the Jacoby rule (gnubg's default);
        # a gnubg ID does not say it.
        self.send("set jacoby on")
        self.send("new match 1")

    def send(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def proper_action(self, gnubg_id):
        """gnubg's "Proper cube action" for the position, lower case."""
        self.send(f"set gnubgid {gnubg_id}")
        self.send("hint")
        for line in self.process.stdout:
            if line.startswith("Proper cube action:"):
                return line.split(":", 1)[1].strip().lower()
        raise RuntimeError("gnubg ended without a cube action")


def may_double(game):
    """Whether white may double now: the cube in play and not black's, not
    dead (in a match, white's win at this cube would not already take
    it), and below the session's limit (money play: `cube_max`, 64
    unless set)."""
    cube = game.cube
    settings = game.settings
    length = settings.match_length
    limit = None if settings.cube_unlimited else (settings.cube_max or 64)
    return (cube.in_play and cube.owner != BLACK
            and (limit is None or cube.value * 2 <= limit)
            and (length == 0 or game.score.white + cube.value < length))


def act(stub, game, token, judge):
    """White's action: a double or a roll, a move, or an answer to a
    double."""
    auth = (("authorization", f"Bearer {token}"),)
    common = dict(game_id=game.game_id, expected_version=game.version, request_id=str(uuid.uuid4()))
    gnubg_id = f"{game.position_id}:{game.match_id}"
    if game.phase == pb.PHASE_ROLL:
        if may_double(game) and judge.proper_action(gnubg_id).startswith(("double", "redouble")):
            return stub.Double(pb.DoubleRequest(action=pb.DOUBLE_ACTION_OFFER, **common), metadata=auth)
        return stub.Roll(pb.RollRequest(**common), metadata=auth)
    if game.phase == pb.PHASE_MOVE:
        # gnubg's choice at 0-ply: the legal play whose result it values
        # most (its move search does the same), valued as grade.py does.
        best = max(game.legal_plays, key=lambda p: mover_equity(p.result_position_id, ZERO_PLY))
        play = best.notation
        return stub.Move(pb.MoveRequest(notation=play, **common), metadata=auth)
    if game.phase == pb.PHASE_CUBE_OFFERED:
        passes = judge.proper_action(gnubg_id).endswith("pass")
        action = pb.DOUBLE_ACTION_DROP if passes else pb.DOUBLE_ACTION_TAKE
        return stub.Double(pb.DoubleRequest(action=action, **common), metadata=auth)
    raise RuntimeError(f"white cannot act in phase {game.phase}")


def main() -> int:
    addr, matches, length, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    level = sys.argv[5] if len(sys.argv) > 5 else ""
    gnubg.command("set threads 1")
    os.makedirs(out, exist_ok=True)
    stub = rpc.GameServiceStub(grpc.insecure_channel(addr))
    judge = CubeJudge()
    for n in range(matches):
        created = stub.NewGame(pb.NewGameRequest(
            variant="standard",
            settings=pb.MatchSettings(match_length=length, auto_roll=False, jacoby=length == 0),
            bots=[pb.BotSeat(seat=BLACK, level=level)],
        ))
        game, token = created.game, created.white_token
        while game.phase != pb.PHASE_MATCH_OVER:
            if game.to_act != WHITE:
                raise RuntimeError(f"the game waits for seat {game.to_act}")
            game = act(stub, game, token, judge)
        record = stub.ExportMatch(pb.ExportMatchRequest(game_id=game.game_id, format=pb.RECORD_FORMAT_MAT))
        path = os.path.join(out, f"match-{n:03}.mat")
        with open(path, "w") as f:
            f.write(record.text)
        print(f"{path}: white {game.score.white} black {game.score.black}", flush=True)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # PyPI gnubg 1.1.0a16 may crash as the interpreter exits.
    os._exit(code)
