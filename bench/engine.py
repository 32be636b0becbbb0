"""Benchmark of the engine against textbook search, measured in the same run.

Run from the repository root as ``python bench/engine.py`` or ``python -m bench.engine``.

What it measures:

* building the complete 3 x 3 table (repeated), and the cold cost of import + first move in a fresh process;
* per-move latency (median, p99) of the perfect policy over every non-terminal reachable position, of
  ``solve``, and of the depth-limited levels (first call per position, which searches unless the depth
  reaches the end of the game, where the table answers; then memoised);
* the general alpha-beta search (no table) with and without symmetry reduction;
* a textbook recursive minimax and a textbook alpha-beta on a CS50-style list-of-lists board, from the empty
  board and from a few mid-game positions, and the ratios of their time to the engine's median move.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import random

from engine import LEVELS, Board, Searcher, choose_move, geometry, reachable_positions, solve
from engine import policy as engine_policy
from engine import table as engine_table

# ----------------------------------------------------------------------------------------------------------
# Textbook baselines: the CS50 way, on a list of lists of "X", "O" and None, written from scratch here.

_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class Counter:
    nodes = 0


def tb_player(board: list[list[str | None]]) -> str:
    xs = sum(row.count("X") for row in board)
    os_ = sum(row.count("O") for row in board)
    return "X" if xs == os_ else "O"


def tb_actions(board: list[list[str | None]]) -> list[tuple[int, int]]:
    return [(r, c) for r in range(3) for c in range(3) if board[r][c] is None]


def tb_result(board: list[list[str | None]], action: tuple[int, int]) -> list[list[str | None]]:
    new = [row[:] for row in board]
    new[action[0]][action[1]] = tb_player(board)
    return new


def tb_winner(board: list[list[str | None]]) -> str | None:
    flat = [cell for row in board for cell in row]
    for a, b, c in _LINES:
        if flat[a] is not None and flat[a] == flat[b] == flat[c]:
            return flat[a]
    return None


def tb_terminal(board: list[list[str | None]]) -> bool:
    return tb_winner(board) is not None or all(cell is not None for row in board for cell in row)


def tb_utility(board: list[list[str | None]]) -> int:
    return {"X": 1, "O": -1, None: 0}[tb_winner(board)]


def tb_minimax(board: list[list[str | None]], counter: Counter) -> tuple[int, int] | None:
    """Plain recursive minimax, no pruning, no memo: the best action for the player to move."""

    def value(b: list[list[str | None]]) -> int:
        counter.nodes += 1
        if tb_terminal(b):
            return tb_utility(b)
        scores = [value(tb_result(b, a)) for a in tb_actions(b)]
        return max(scores) if tb_player(b) == "X" else min(scores)

    if tb_terminal(board):
        return None
    counter.nodes += 1
    pick = max if tb_player(board) == "X" else min
    return pick(tb_actions(board), key=lambda a: value(tb_result(board, a)))


def tb_alphabeta(board: list[list[str | None]], counter: Counter) -> tuple[int, int] | None:
    """Textbook alpha-beta minimax, no memo, no move ordering: the best action for the player to move."""

    def value(b: list[list[str | None]], alpha: float, beta: float) -> float:
        counter.nodes += 1
        if tb_terminal(b):
            return tb_utility(b)
        if tb_player(b) == "X":
            best = -2.0
            for a in tb_actions(b):
                best = max(best, value(tb_result(b, a), alpha, beta))
                alpha = max(alpha, best)
                if alpha >= beta:
                    break
            return best
        best = 2.0
        for a in tb_actions(b):
            best = min(best, value(tb_result(b, a), alpha, beta))
            beta = min(beta, best)
            if alpha >= beta:
                break
        return best

    if tb_terminal(board):
        return None
    counter.nodes += 1
    maximise = tb_player(board) == "X"
    best_action, best_value = None, -2.0 if maximise else 2.0
    alpha, beta = -2.0, 2.0
    for a in tb_actions(board):
        v = value(tb_result(board, a), alpha, beta)
        if (maximise and v > best_value) or (not maximise and v < best_value):
            best_action, best_value = a, v
        if maximise:
            alpha = max(alpha, v)
        else:
            beta = min(beta, v)
    return best_action


def to_lists(board: Board) -> list[list[str | None]]:
    text = str(board)
    return [[None if ch == "." else ch for ch in text[r * 3 : r * 3 + 3]] for r in range(3)]


# ----------------------------------------------------------------------------------------------------------
# Measurement helpers


def percentile(sorted_values: list[float], fraction: float) -> float:
    index = min(len(sorted_values) - 1, max(0, round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def time_calls(fn: Callable[[Board], object], boards: list[Board], repeats: int) -> list[float]:
    """Microseconds per call, one sample per call, every board ``repeats`` times (interleaved)."""
    samples: list[float] = []
    clock = time.perf_counter_ns
    gc_was_enabled = gc.isenabled()
    gc.disable()  # collector pauses would be a property of the caller's heap, not of the engine
    try:
        for _ in range(repeats):
            for board in boards:
                start = clock()
                fn(board)
                samples.append((clock() - start) / 1000.0)
    finally:
        if gc_was_enabled:
            gc.enable()
    samples.sort()
    return samples


def best_of(fn: Callable[[], object], runs: int) -> float:
    """Best wall time of ``runs`` calls, in seconds."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def cold_first_move_ms() -> float:
    """Import + first perfect move (which builds the table) in a fresh interpreter, in milliseconds."""
    code = (
        "import time; t = time.perf_counter(); import engine; engine.choose_move(engine.Board()); "
        "print((time.perf_counter() - t) * 1000)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def row(*cells: object, widths: tuple[int, ...]) -> str:
    return "  ".join(
        f"{cell!s:<{w}}" if i == 0 else f"{cell!s:>{w}}"
        for i, (cell, w) in enumerate(zip(cells, widths, strict=True))
    )


# ----------------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per position (default 5)")
    parser.add_argument(
        "--skip-minimax-empty",
        action="store_true",
        help="skip the textbook minimax from the empty board (the slowest item, several seconds)",
    )
    args = parser.parse_args(argv)

    print("sanzi engine benchmark")
    print(f"python {sys.version.split()[0]}, {args.repeats} timed calls per position\n")

    # Table build.
    build_runs = [best_of(engine_table.build, 1) for _ in range(5)]
    cold = cold_first_move_ms()
    print("3 x 3 table (5,478 positions)")
    print(
        f"  build: median {statistics.median(build_runs) * 1000:.1f} ms, best {min(build_runs) * 1000:.1f} ms"
    )
    print(f"  fresh process, import + first move: {cold:.1f} ms\n")

    positions = [b for b in reachable_positions() if not b.is_terminal()]
    engine_table.table()
    rng = random.Random(1)

    rows: list[tuple[str, float, float]] = []

    def measure(name: str, fn: Callable[[Board], object], repeats: int = args.repeats) -> float:
        samples = time_calls(fn, positions, repeats)
        rows.append((name, statistics.median(samples), percentile(samples, 0.99)))
        return statistics.median(samples)

    perfect_median = measure("choose_move perfect", lambda b: choose_move(b, "perfect", rng))
    measure("solve", solve)
    for name in ("easy", "medium", "hard"):
        engine_policy._limited_scores_3x3.cache_clear()
        measure(f"choose_move {name} (first call)", lambda b, n=name: choose_move(b, n, rng), repeats=1)
        measure(f"choose_move {name} (memoised)", lambda b, n=name: choose_move(b, n, rng))
    widths = (30, 12, 12)
    print(f"per-move latency over all {len(positions)} non-terminal positions")
    print("  " + row("call", "median us", "p99 us", widths=widths))
    for name, median, p99 in rows:
        print("  " + row(name, f"{median:.2f}", f"{p99:.2f}", widths=widths))
    print()

    # General search without the table.
    print("general alpha-beta (no table), solving the empty 3 x 3 board")
    for symmetry in (True, False):
        searcher = Searcher(geometry(), symmetry=symmetry)
        seconds = best_of(lambda s=searcher: s.root_scores(Board()), 1)
        label = "with symmetry" if symmetry else "without symmetry"
        print(f"  {label:<18} {seconds * 1000:8.1f} ms  {searcher.nodes:7d} nodes")
    print()

    # Textbook baselines.
    samples = [
        ("empty board", Board()),
        ("after 1 ply", Board("....X....")),
        ("after 2 plies", Board("X...O....")),
        ("after 3 plies", Board("X...O...X")),
        ("after 4 plies", Board("X.O.X...O")),
        ("after 5 plies", Board("X.O.X..XO")),
    ]
    widths = (14, 13, 11, 13, 11, 14, 14)
    print("textbook search on a list-of-lists board, against the engine's median perfect move")
    print(f"  engine median perfect move: {perfect_median:.2f} us")
    print(
        "  "
        + row(
            "position",
            "minimax ms",
            "nodes",
            "alphabeta ms",
            "nodes",
            "minimax/eng",
            "alphabeta/eng",
            widths=widths,
        )
    )
    for label, board in samples:
        lists = to_lists(board)
        ab = Counter()
        ab_seconds = best_of(lambda lst=lists, c=ab: tb_alphabeta(lst, c), 1)
        if label == "empty board" and args.skip_minimax_empty:
            mm_text, mm_nodes, mm_ratio = "skipped", "-", "-"
        else:
            mm = Counter()
            mm_seconds = best_of(lambda lst=lists, c=mm: tb_minimax(lst, c), 1)
            mm_text, mm_nodes = f"{mm_seconds * 1000:.1f}", str(mm.nodes)
            mm_ratio = f"{mm_seconds * 1e6 / perfect_median:,.0f}x"
        ab_ratio = f"{ab_seconds * 1e6 / perfect_median:,.0f}x"
        print(
            "  "
            + row(
                label,
                mm_text,
                mm_nodes,
                f"{ab_seconds * 1000:.2f}",
                ab.nodes,
                mm_ratio,
                ab_ratio,
                widths=widths,
            )
        )
        # The baselines must agree with the engine, or the comparison would be meaningless.
        action = tb_alphabeta(lists, Counter())
        assert action is not None
        square = action[0] * 3 + action[1]
        assert solve(board.play(square)).value == -solve(board).value, label
    print()
    print(
        "levels:",
        ", ".join(
            f"{lvl.name} (depth {lvl.depth_limit}, mistakes {lvl.mistake_rate:.0%})"
            for lvl in LEVELS.values()
        ),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
