"""Benchmark of the gomoku engine against a tutorial-style alpha-beta, measured in the same run.

Run from the repository root as ``python bench/gomoku.py`` (or ``python -m bench.gomoku``). It prints:

* **match**: the engine (level hard) against a reference written here the way tutorials write it — a list of
  lists, an evaluation that scans every row, column and diagonal for string patterns, plain alpha-beta at
  depth 2 over the empty squares next to a stone. ``--games`` games (default 100), colours alternating, each
  random opening (three stones near the centre) played once with each colour, the same ``--time`` per move
  for both (the reference stops at the deadline with the best move found so far). Win rate and the average
  time per move of each side;
* **VCF set**: ``--vcf-positions`` positions (default 40) built here from seeded random play, each holding a
  win by continuous fours of at least three fours that a generous search finds and that this file proves
  by its own exhaustive check (every defender reply, at every turn, on its own list-of-lists rules); then
  the share the engine solves within ``--vcf-limit`` seconds (default 1) from a cold start, and the median;
* **speed**: the PVS's nodes per second on middle-game positions, and the reference's, with the ratio;
* **time to a move** at each level on the same positions (median and maximum);
* **protocol**: two ``sanzi pbrain`` processes play a game through pipes under ``--timeout-turn``; the
  slowest answer is what a Gomocup manager would hold against ``timeout_turn``.

The machine may be shared: ``--games 10 --time 0.2`` gives a quick look; the defaults are the issue's.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.gomoku.board import GomokuBoard
from engine.gomoku.clock import Deadline
from engine.gomoku.player import LEVELS, GomokuPlayer
from engine.gomoku.rules import BLACK, WHITE, other
from engine.gomoku.search import Searcher
from engine.gomoku.threats import ThreatSearch, ThreatTimeout

SIZE = 15
# ----------------------------------------------------------------------------------------------------------
# The reference: how tutorials write a gomoku AI, from scratch here. Board: list of lists of 0, 1, 2.

PATTERNS = (  # (pattern over "1" = own stone, "0" = empty, score)
    ("11111", 100_000),
    ("011110", 10_000),
    ("011100", 1_000),
    ("001110", 1_000),
    ("011010", 1_000),
    ("010110", 1_000),
    ("11110", 1_000),
    ("01111", 1_000),
    ("11011", 1_000),
    ("10111", 1_000),
    ("11101", 1_000),
    ("001100", 100),
    ("001010", 100),
    ("010100", 100),
    ("000100", 10),
    ("001000", 10),
)


#: Rewrites a line's text so that ``who``'s stones read "1" and the opponent's "2".
_AS_OWN = {1: str.maketrans("12", "12"), 2: str.maketrans("12", "21")}


class Reference:
    """Depth-2 alpha-beta with a pattern evaluation and moves next to stones, tutorial style."""

    def __init__(self, depth: int = 2) -> None:
        self.depth = depth
        self.nodes = 0

    @staticmethod
    def lines(grid: list[list[int]]) -> list[list[int]]:
        n = len(grid)
        out = [row[:] for row in grid]
        out += [[grid[y][x] for y in range(n)] for x in range(n)]
        for d in range(-n + 5, n - 4):
            out.append([grid[y][y - d] for y in range(n) if 0 <= y - d < n])
            out.append([grid[y][n - 1 - (y - d)] for y in range(n) if 0 <= y - d < n])
        return out

    def evaluate(self, grid: list[list[int]], me: int) -> int:
        self.nodes += 1
        score = 0
        for line in self.lines(grid):
            text = "".join(str(c) for c in line)
            for who, sign in ((me, 1), (3 - me, -1)):
                own = text.translate(_AS_OWN[who])
                for pattern, value in PATTERNS:
                    if pattern in own:
                        score += sign * value * own.count(pattern)
        return score

    @staticmethod
    def moves(grid: list[list[int]]) -> list[tuple[int, int]]:
        n = len(grid)
        out = []
        for y in range(n):
            for x in range(n):
                if grid[y][x] == 0 and any(
                    0 <= y + dy < n and 0 <= x + dx < n and grid[y + dy][x + dx] != 0
                    for dy in (-1, 0, 1)
                    for dx in (-1, 0, 1)
                ):
                    out.append((x, y))
        return out or [(n // 2, n // 2)]

    @staticmethod
    def five(grid: list[list[int]], x: int, y: int) -> bool:
        n, who = len(grid), grid[y][x]
        for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                cx, cy = x + sign * dx, y + sign * dy
                while 0 <= cx < n and 0 <= cy < n and grid[cy][cx] == who:
                    run += 1
                    cx, cy = cx + sign * dx, cy + sign * dy
            if run >= 5:
                return True
        return False

    def alphabeta(self, grid, depth, alpha, beta, me, to_move, deadline):
        if depth == 0 or time.perf_counter() > deadline:
            return self.evaluate(grid, me)
        maximising = to_move == me
        best = -(10**9) if maximising else 10**9
        for x, y in self.moves(grid):
            grid[y][x] = to_move
            if self.five(grid, x, y):
                value = 10**8 if maximising else -(10**8)
            else:
                value = self.alphabeta(grid, depth - 1, alpha, beta, me, 3 - to_move, deadline)
            grid[y][x] = 0
            if maximising:
                best = max(best, value)
                alpha = max(alpha, value)
            else:
                best = min(best, value)
                beta = min(beta, value)
            if alpha >= beta:
                break
        return best

    def choose(self, grid: list[list[int]], me: int, seconds: float) -> tuple[int, int]:
        deadline = time.perf_counter() + seconds
        best_move, best = None, -(10**9) - 1
        for x, y in self.moves(grid):
            grid[y][x] = me
            value = 10**8 if self.five(grid, x, y) else None
            if value is None:
                value = self.alphabeta(grid, self.depth - 1, best, 10**9, me, 3 - me, deadline)
            grid[y][x] = 0
            if value > best:
                best, best_move = value, (x, y)
            if time.perf_counter() > deadline:
                break
        assert best_move is not None
        return best_move


# ----------------------------------------------------------------------------------------------------------
# The match.


def openings(count: int, rng: random.Random) -> list[list[tuple[int, int]]]:
    """Random three-stone openings near the centre (black, white, black), each distinct."""
    seen, out = set(), []
    centre = SIZE // 2
    while len(out) < count:
        stones = []
        while len(stones) < 3:
            square = (centre + rng.randint(-2, 2), centre + rng.randint(-2, 2))
            if square not in stones:
                stones.append(square)
        key = tuple(stones)
        if key not in seen:
            seen.add(key)
            out.append(stones)
    return out


def play_game(
    opening: list[tuple[int, int]], engine_color: int, seconds: float
) -> tuple[int | None, list[float], list[float]]:
    board = GomokuBoard(SIZE)
    grid = [[0] * SIZE for _ in range(SIZE)]
    for x, y in opening:
        grid[y][x] = board.to_move
        board.play(board.index(x, y))
    engine = GomokuPlayer(board, "hard")
    reference = Reference()
    engine_times: list[float] = []
    reference_times: list[float] = []
    while board.winner() is None and board.candidates():
        start = time.perf_counter()
        if board.to_move == engine_color:
            move = engine.choose(seconds).move
            engine_times.append(time.perf_counter() - start)
            x, y = board.xy(move)
        else:
            x, y = reference.choose(grid, board.to_move, seconds)
            reference_times.append(time.perf_counter() - start)
        grid[y][x] = board.to_move
        board.play(board.index(x, y))
    return board.winner(), engine_times, reference_times


def match(games: int, seconds: float, seed: int) -> None:
    rng = random.Random(seed)
    starts = openings((games + 1) // 2, rng)
    wins = losses = draws = 0
    engine_times: list[float] = []
    reference_times: list[float] = []
    started = time.perf_counter()
    for game in range(games):
        opening = starts[game // 2]
        # Colours alternate; each opening is played once with each colour. Black made the opening's odd
        # stone, so after three stones white is to move: the side "engine_color" gets white in even games.
        engine_color = WHITE if game % 2 == 0 else BLACK
        winner, ours, theirs = play_game(opening, engine_color, seconds)
        engine_times += ours
        reference_times += theirs
        if winner == engine_color:
            wins += 1
        elif winner is None:
            draws += 1
        else:
            losses += 1
        print(
            f"  game {game + 1:3d}: engine {'white' if engine_color == WHITE else 'black'}, "
            f"{'won' if winner == engine_color else 'draw' if winner is None else 'LOST'} "
            f"after {len(ours) + len(theirs) + 3} stones",
            flush=True,
        )
    print(
        f"match: {games} games at {seconds:.2f} s per move: engine won {wins}, lost {losses}, drew {draws}: "
        f"win rate {wins / games:.1%} (target >= 95%); "
        f"{time.perf_counter() - started:.0f} s in all"
    )
    print(
        f"  mean time per move: engine {statistics.mean(engine_times):.3f} s, "
        f"reference {statistics.mean(reference_times):.3f} s"
    )


# ----------------------------------------------------------------------------------------------------------
# The VCF set: built and proven here on the bench's own rules.


def proven_by_play_out(grid: list[list[int]], attacker: int, line: list[tuple[int, int]]) -> bool:
    """Whether following ``line`` wins against every defence: after each attacker move, every empty square
    is tried as the defender's reply; each reply other than the line's must lose to an immediate five, and
    no reply may make the defender's five."""
    n = len(grid)
    defender = 3 - attacker
    placed: list[tuple[int, int]] = []

    def completes(who: int) -> list[tuple[int, int]]:
        out = []
        for y in range(n):
            for x in range(n):
                if grid[y][x] == 0:
                    grid[y][x] = who
                    if Reference.five(grid, x, y):
                        out.append((x, y))
                    grid[y][x] = 0
        return out

    try:
        for i in range(0, len(line), 2):
            x, y = line[i]
            if grid[y][x] != 0:
                return False
            grid[y][x] = attacker
            placed.append((x, y))
            if Reference.five(grid, x, y):
                return True
            wins = completes(attacker)
            if not wins:
                return False
            if completes(defender):
                return False  # the defender would answer with its own five
            reply = line[i + 1] if i + 1 < len(line) else None
            for ry in range(n):
                for rx in range(n):
                    if grid[ry][rx] != 0 or (rx, ry) == reply:
                        continue
                    if not any(w != (rx, ry) for w in wins):
                        return False  # another reply also stops every five
            if reply is None:
                return len(wins) >= 2
            rx, ry = reply
            grid[ry][rx] = defender
            placed.append((rx, ry))
            if Reference.five(grid, rx, ry):
                return False
        return False
    finally:
        for x, y in placed:
            grid[y][x] = 0


def build_vcf_set(count: int, seed: int) -> list[tuple[GomokuBoard, int]]:
    """Positions from seeded games of a greedy random player (one of the four squares that raise its shape
    most), each the first of its game where the side to move has a win of three fours or more."""
    rng = random.Random(seed)
    out: list[tuple[GomokuBoard, int]] = []
    games = 0
    started = time.perf_counter()
    while len(out) < count:
        games += 1
        board = GomokuBoard(SIZE)
        for x, y in openings(1, rng)[0]:
            board.play(board.index(x, y))
        for _ in range(60):
            moves = board.candidates()
            moves.sort(key=lambda sq: -board.move_gain(sq, board.to_move))
            board.play(rng.choice(moves[:4]))
            attacker = board.to_move
            if board.winner() is not None:
                break
            if board.win_squares(attacker) or board.win_squares(other(attacker)):
                continue
            try:
                line = ThreatSearch(board, max_nodes=20_000).vcf(attacker, max_fours=12)
            except ThreatTimeout:
                continue
            if line is None or len(line) < 5:
                continue
            grid = [[board.cells[y * SIZE + x] for x in range(SIZE)] for y in range(SIZE)]
            if not proven_by_play_out(grid, attacker, [board.xy(sq) for sq in line]):
                raise AssertionError(f"the engine's VCF failed the bench's exhaustive check:\n{board}")
            out.append((board.copy(), attacker))
            break
    print(f"  built from {games} greedy random games in {time.perf_counter() - started:.0f} s")
    return out


def vcf_set(count: int, limit: float, seed: int) -> None:
    positions = build_vcf_set(count, seed)
    times, solved = [], 0
    for board, attacker in positions:
        search = ThreatSearch(board, deadline=time.perf_counter() + limit, clock=time.perf_counter)
        start = time.perf_counter()
        try:
            line = search.vcf(attacker)
        except ThreatTimeout:
            line = None
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        solved += line is not None and elapsed <= limit
    print(
        f"VCF set: {count} positions (3+ fours each, proven by exhaustive play-out): "
        f"solved within {limit:g} s: {solved}/{count} = {solved / count:.0%}; "
        f"median {statistics.median(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms"
    )


# ----------------------------------------------------------------------------------------------------------
# Speed and time to move.


def middle_games(count: int, seed: int) -> list[GomokuBoard]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = GomokuBoard(SIZE)
        for x, y in openings(1, rng)[0]:
            board.play(board.index(x, y))
        players = GomokuPlayer(board, "easy")
        for _ in range(rng.randint(8, 16)):
            board.play(players.choose(5.0).move)
            if board.winner():
                break
        if board.winner() is not None or any(board.win_squares(c) for c in (BLACK, WHITE)):
            continue
        # Quiet positions only: no side has a win by fours, so every level has to search.
        try:
            if any(ThreatSearch(board, max_nodes=20_000).vcf(c) for c in (BLACK, WHITE)):
                continue
        except ThreatTimeout:
            continue
        out.append(board)
    return out


def speed(positions: list[GomokuBoard], seconds: float) -> None:
    ours_nodes, ours_time = 0, 0.0
    for board in positions:
        searcher = Searcher(board.copy())
        start = time.perf_counter()
        result = searcher.search(30, Deadline.after(seconds))
        ours_time += time.perf_counter() - start
        ours_nodes += result.nodes
    ref_nodes, ref_time = 0, 0.0
    for board in positions:
        grid = [[board.cells[y * SIZE + x] for x in range(SIZE)] for y in range(SIZE)]
        reference = Reference()
        start = time.perf_counter()
        reference.choose(grid, board.to_move, 60.0)
        ref_time += time.perf_counter() - start
        ref_nodes += reference.nodes
    ours_rate, ref_rate = ours_nodes / ours_time, ref_nodes / ref_time
    print(
        f"speed: PVS {ours_rate:,.0f} nodes/s; reference {ref_rate:,.0f} evaluated leaves/s "
        f"(ratio {ours_rate / ref_rate:.1f}x); reference full depth-2 search "
        f"{ref_time / len(positions):.2f} s per move"
    )


def time_to_move(positions: list[GomokuBoard]) -> None:
    print("time to a move (middle games, each level's own time budget):")
    for name, level in LEVELS.items():
        times, depths = [], []
        for board in positions:
            player = GomokuPlayer(board.copy(), name)
            decision = player.choose()
            times.append(decision.elapsed)
            depths.append(decision.depth)
        print(
            f"  {name:<7} budget {level.seconds:.1f} s: median {statistics.median(times):.3f} s, "
            f"max {max(times):.3f} s, median depth {statistics.median(depths):g}"
        )


def protocol_game(timeout_turn_ms: int) -> None:
    """Two ``sanzi pbrain`` processes play each other through pipes, managed here as Piskvork would: the
    slowest answer against ``timeout_turn``."""
    repo = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(repo))
    brains = [
        subprocess.Popen(
            [sys.executable, "-m", "launch.cli", "pbrain"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=repo,
            env=env,
            text=True,
            bufsize=1,
        )
        for _ in range(2)
    ]

    def ask(brain: subprocess.Popen[str], line: str) -> tuple[str, float]:
        assert brain.stdin is not None and brain.stdout is not None
        start = time.perf_counter()
        brain.stdin.write(line + "\r\n")
        brain.stdin.flush()
        answer = brain.stdout.readline().strip()
        return answer, time.perf_counter() - start

    try:
        for brain in brains:
            assert ask(brain, f"START {SIZE}")[0] == "OK"
            for info in (f"INFO timeout_turn {timeout_turn_ms}", "INFO timeout_match 0", "INFO rule 0"):
                assert brain.stdin is not None
                brain.stdin.write(info + "\r\n")
        board = GomokuBoard(SIZE)
        answer, elapsed = ask(brains[0], "BEGIN")
        times = [elapsed]
        turn = 1
        while True:
            x, y = (int(v) for v in answer.split(","))
            board.play(board.index(x, y))
            if board.winner() is not None or not board.candidates():
                break
            answer, elapsed = ask(brains[turn], f"TURN {x},{y}")
            times.append(elapsed)
            turn = 1 - turn
        for brain in brains:
            assert brain.stdin is not None
            brain.stdin.write("END\r\n")
            brain.stdin.flush()
            brain.wait(timeout=10)
        print(
            f"protocol: two pbrain processes, timeout_turn {timeout_turn_ms} ms: {len(times)} moves, "
            f"slowest answer {max(times) * 1000:.0f} ms, median {statistics.median(times) * 1000:.0f} ms, "
            f"{'black' if board.winner() == BLACK else 'white' if board.winner() == WHITE else 'nobody'} won"
        )
    finally:
        for brain in brains:
            if brain.poll() is None:
                brain.kill()
                brain.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=100, help="match games (default 100)")
    parser.add_argument("--time", type=float, default=0.3, help="seconds per move in the match (default 0.3)")
    parser.add_argument("--vcf-positions", type=int, default=40, help="positions in the VCF set (default 40)")
    parser.add_argument("--vcf-limit", type=float, default=1.0, help="seconds allowed per VCF position")
    parser.add_argument("--positions", type=int, default=6, help="middle games for speed and time to move")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--timeout-turn", type=int, default=1000, help="ms per move in the protocol game")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["match", "vcf", "speed", "levels", "protocol"]
    )
    args = parser.parse_args(argv)
    print(f"gomoku bench: {SIZE} x {SIZE}, freestyle, seed {args.seed}")
    if "vcf" not in args.skip:
        vcf_set(args.vcf_positions, args.vcf_limit, args.seed)
    if "speed" not in args.skip or "levels" not in args.skip:
        positions = middle_games(args.positions, args.seed)
        if "speed" not in args.skip:
            speed(positions, 1.0)
        if "levels" not in args.skip:
            time_to_move(positions)
    if "protocol" not in args.skip:
        protocol_game(args.timeout_turn)
    if "match" not in args.skip:
        match(args.games, args.time, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
