"""The general search (any m x n, k in a row): against the 3 x 3 table, against an independent minimax on
other small shapes, symmetry, depth limits and the heuristic."""

from __future__ import annotations

import functools
import random

import pytest

from engine import (
    Board,
    EngineError,
    GameOverError,
    InvalidBoardError,
    Level,
    Searcher,
    choose_move,
    evaluate,
    geometry,
    reachable_positions,
    score_distance,
    score_value,
    solve,
)
from engine import table as engine_table
from engine.search import HEURISTIC_LIMIT, WIN_SCORE, canonical_key, transforms

NON_TERMINAL = [b for b in reachable_positions() if not b.is_terminal()]


def small_oracle(rows: int, cols: int, k: int):  # type: ignore[no-untyped-def]
    """An independent minimax on strings for a small shape: (value, plies to the end) for the mover."""
    lines = []
    for r in range(rows):
        for c in range(cols):
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                cells = [(r + dr * i, c + dc * i) for i in range(k)]
                if all(0 <= rr < rows and 0 <= cc < cols for rr, cc in cells):
                    lines.append([rr * cols + cc for rr, cc in cells])

    def won(s: str, side: str) -> bool:
        return any(all(s[i] == side for i in line) for line in lines)

    @functools.cache
    def solve_s(s: str) -> tuple[int, int]:
        mover = "X" if s.count("X") == s.count("O") else "O"
        if won(s, "O" if mover == "X" else "X"):
            return (-1, 0)
        if "." not in s:
            return (0, 0)
        results = []
        for i, ch in enumerate(s):
            if ch == ".":
                value, distance = solve_s(s[:i] + mover + s[i + 1 :])
                results.append((-value, distance + 1))
        return max(results, key=lambda r: (r[0], -r[1] if r[0] > 0 else r[1]))

    return solve_s


def test_general_search_agrees_with_the_table_on_every_position() -> None:
    searcher = Searcher(geometry(3, 3, 3))
    for board in NON_TERMINAL:
        scores = searcher.root_scores(board)
        assert tuple(sorted(scores.items())) == engine_table.entry(board).move_scores, str(board)


def test_symmetry_reduction_changes_nodes_not_scores() -> None:
    with_symmetry, without = Searcher(geometry()), Searcher(geometry(), symmetry=False)
    assert with_symmetry.search(Board()) == without.search(Board()) == 0
    assert with_symmetry.nodes < without.nodes
    for board in NON_TERMINAL[::37]:
        assert Searcher(geometry()).root_scores(board) == Searcher(geometry(), symmetry=False).root_scores(
            board
        )


def test_canonical_key_is_shared_by_all_eight_symmetric_images() -> None:
    geo = geometry()
    assert len(transforms(geo)) == 8 and len(transforms(geometry(3, 4, 3))) == 4
    board = Board("XO..X....")
    keys = set()
    for perm in transforms(geo):
        x = sum(1 << perm[sq] for sq in range(9) if board.x_mask >> sq & 1)
        o = sum(1 << perm[sq] for sq in range(9) if board.o_mask >> sq & 1)
        keys.add(canonical_key(x, o, geo))
    assert len(keys) == 1
    # Large boards go through the chunked tables: still one key per class.
    big = geometry(5, 5, 4)
    x, o = 1 << 0 | 1 << 7, 1 << 24
    images = {
        canonical_key(
            sum(1 << p[s] for s in range(25) if x >> s & 1),
            sum(1 << p[s] for s in range(25) if o >> s & 1),
            big,
        )
        for p in transforms(big)
    }
    assert len(images) == 1


@pytest.mark.parametrize(
    ("rows", "cols", "k"), [(2, 2, 2), (2, 3, 2), (3, 3, 2), (2, 4, 3), (1, 5, 2), (3, 4, 3)]
)
def test_other_shapes_match_an_independent_minimax(rows: int, cols: int, k: int) -> None:
    oracle = small_oracle(rows, cols, k)
    board = Board.empty(rows, cols, k)
    evaluation = solve(board)
    assert (evaluation.value, evaluation.distance) == oracle(str(board))
    # And one ply in, every reply.
    for square in board.legal_moves():
        child = board.play(square)
        if not child.is_terminal():
            assert (solve(child).value, solve(child).distance) == oracle(str(child)), (rows, cols, k, square)


def test_known_results_of_larger_shapes() -> None:
    # 4 x 4 with three in a row: the first player wins in three moves of its own.
    evaluation = solve(Board.empty(4, 4, 3))
    assert (evaluation.value, evaluation.distance) == (1, 5)
    choice = choose_move(Board.empty(4, 4, 3), "perfect", random.Random(1))
    assert choice.value == 1 and choice.exact and choice.pv[0] == choice.square
    # A generic board plays the opening square it is given.
    assert choose_move(Board.empty(3, 4, 3), first_square=11).square == 11


def test_depth_limited_search_on_a_large_board_finds_the_win_in_one() -> None:
    board = Board.empty(15, 15, 5)
    for i in range(4):
        board = board.play(7 * 15 + 5 + i).play(0 + 2 * i)
    one_ply = Level("one ply", depth_limit=1, mistake_rate=0.0)
    choice = choose_move(board, one_ply, random.Random(3))  # depth 1 sees a completed line
    assert choice.square in (7 * 15 + 4, 7 * 15 + 9) and choice.value == 1 and choice.exact
    with pytest.raises(GameOverError):
        choose_move(board.play(choice.square))


def test_depth_limited_evaluation_is_marked_inexact() -> None:
    evaluation = solve(Board(), depth=2)
    assert not evaluation.exact and evaluation.distance is None and evaluation.value == 0
    assert len(evaluation.pv) == 2 and abs(evaluation.score) < HEURISTIC_LIMIT
    assert evaluation.best_moves == (4,)  # the heuristic prefers the centre
    assert solve(Board("XX..O.O.."), depth=1).value == 1  # a proven win inside the horizon is exact
    assert solve(Board("XX..O.O.."), depth=1).exact
    assert solve(Board("X...O...."), depth=9) == solve(Board("X...O...."))


def test_heuristic_is_antisymmetric_and_prefers_centre_then_corner() -> None:
    geo = geometry()
    for board in NON_TERMINAL[::11]:
        assert evaluate(board.x_mask, board.o_mask, geo) == -evaluate(board.o_mask, board.x_mask, geo)
    centre, corner, edge = (evaluate(1 << sq, 0, geo) for sq in (4, 0, 1))
    assert centre > corner > edge > 0
    two_in_a_row = evaluate(0b11, 0, geo)
    assert two_in_a_row > evaluate(1 << 4 | 1 << 8 ^ 1 << 8, 0, geo)


def test_score_helpers() -> None:
    assert score_value(WIN_SCORE - 5) == 1 and score_value(-(WIN_SCORE - 5)) == -1 and score_value(10) == 0
    assert score_distance(WIN_SCORE - 5, 4) == 1
    assert score_distance(0, 4, 9) == 5 and score_distance(0, 4) is None


def test_solve_on_a_finished_board_and_on_a_bad_one() -> None:
    final = solve(Board("XXX.OO..."))
    assert (final.value, final.distance, final.best_moves, final.pv) == (-1, 0, (), ())
    assert solve(Board("XOXXOOOXX")).value == 0
    assert solve(Board.empty(3, 4, 3).play(0).play(1).play(4).play(2).play(8)).value == -1
    with pytest.raises(InvalidBoardError):
        solve(Board.from_string("XX.......", validate=False))
    with pytest.raises(InvalidBoardError):
        solve(Board.from_string("XX..........", rows=3, cols=4, validate=False))


def test_gomoku_searches_near_the_pieces_blocks_a_four_and_stays_cheap() -> None:
    # X has closed one end of O's row at square 49; O completes four (50-53) while X wanders on row 10.
    board = Board.empty(15, 15, 5).play(49)
    for i in range(4):
        board = board.play(3 * 15 + 5 + i)
        if i < 3:
            board = board.play(10 * 15 + 2 * i)
    assert board.to_move() == "X"
    two_ply = Level("two ply", depth_limit=2, mistake_rate=0.0)
    choice = choose_move(board, two_ply, random.Random(2))
    assert choice.square == 3 * 15 + 9  # the only block
    assert not choice.exact and choice.nodes < 5_000  # near-the-pieces search: not a proof, but small
    assert solve(board, depth=2).best_moves == (3 * 15 + 9,)
    # An empty gomoku board opens in the centre.
    assert choose_move(Board.empty(15, 15, 5), two_ply).square == 7 * 15 + 7


def test_radius_must_be_positive() -> None:
    with pytest.raises(ValueError, match="radius"):
        Searcher(geometry(15, 15, 5), radius=0)


def test_best_only_resolves_the_best_group_exactly() -> None:
    for board in NON_TERMINAL[::13]:
        full = Searcher(geometry()).root_scores(board)
        quick = Searcher(geometry()).root_scores(board, best_only=True)
        top = max(full.values())
        assert {sq for sq, s in quick.items() if s == top} == {sq for sq, s in full.items() if s == top}
        assert all(quick[sq] < top for sq, s in full.items() if s < top)


@pytest.mark.parametrize("depth", [0, -2, 1.5, True])
def test_solve_refuses_a_meaningless_depth(depth: object) -> None:
    with pytest.raises(EngineError, match="depth"):
        solve(Board(), depth=depth)  # type: ignore[arg-type]
