"""Pattern counts: the incremental counts of the board against a brute-force recount from scratch, after
every move and every take-back of seeded random games, under both rules; and the shapes of known lines."""

from __future__ import annotations

import functools
import random

import pytest

from engine.gomoku.board import GomokuBoard
from engine.gomoku.patterns import (
    FIVE,
    FOUR,
    NONE,
    ONE,
    OPEN_FOUR,
    OPEN_THREE,
    OPEN_TWO,
    SHAPES,
    THREE,
    TWO,
    shape_of,
)
from engine.gomoku.rules import BLACK, EMPTY, WALL, WHITE, Rule

# ------------------------------------------------------------------------------------------------------
# An independent recount: lines walked on the grid, segments cut by string splitting, shapes defined on
# strings by the same rule words ("some move makes ...") but without the engine's code.


def _wins_after(segment: str, exact: bool) -> bool:
    runs = [len(run) for run in segment.split(".")]
    return any(r == 5 or (r > 5 and not exact) for r in runs)


@functools.cache
def brute_shape(segment: str, exact: bool) -> int:
    """Shape of a segment written with 'x' (the side's stones) and '.' (empty)."""
    if len(segment) < 5 or "x" not in segment:
        return NONE
    if _wins_after(segment, exact):
        return FIVE
    empties = [i for i, ch in enumerate(segment) if ch == "."]
    fives = sum(_wins_after(segment[:i] + "x" + segment[i + 1 :], exact) for i in empties)
    if fives >= 2:
        return OPEN_FOUR
    if fives == 1:
        return FOUR
    if segment.count("x") < 2:
        return ONE
    best = max((brute_shape(segment[:i] + "x" + segment[i + 1 :], exact) for i in empties), default=NONE)
    return {OPEN_FOUR: OPEN_THREE, FOUR: THREE, OPEN_THREE: OPEN_TWO, THREE: TWO}.get(best, ONE)


def pieces(segment: str) -> list[str]:
    """The segment cut where five or more empty squares separate stones, each piece with at most five
    empty squares kept beyond its outer stones (the engine's definition, written again on strings)."""
    stones = [i for i, ch in enumerate(segment) if ch == "x"]
    if not stones:
        return [segment]
    groups = [[stones[0]]]
    for i in stones[1:]:
        if i - groups[-1][-1] >= 6:
            groups.append([i])
        else:
            groups[-1].append(i)
    return [segment[max(0, g[0] - 5) : g[-1] + 6] for g in groups]


def brute_counts(board: GomokuBoard) -> list[int]:
    counts = [0] * (2 * SHAPES)
    w, h = board.width, board.height
    lines = []
    for dx, dy in ((1, 0), (0, 1), (1, 1), (-1, 1)):
        for y0 in range(h):
            for x0 in range(w):
                if 0 <= x0 - dx < w and 0 <= y0 - dy < h:
                    continue
                x, y, cells = x0, y0, []
                while 0 <= x < w and 0 <= y < h:
                    cells.append(board.cells[y * w + x])
                    x, y = x + dx, y + dy
                lines.append(cells)
    for cells in lines:
        if len(cells) < 5:
            continue
        for color in (BLACK, WHITE):
            text = "".join("x" if c == color else "." if c == EMPTY else "|" for c in cells)
            for segment in text.split("|"):
                if len(segment) >= 5:
                    for piece in pieces(segment):
                        counts[(color - 1) * SHAPES + brute_shape(piece, board.rule.exact)] += 1
    return counts


def brute_win_squares(board: GomokuBoard, color: int) -> set[int]:
    out = set()
    for sq in range(board.cells_count):
        if board.cells[sq] == EMPTY:
            board.place(sq, color)
            if brute_counts(board)[(color - 1) * SHAPES + FIVE] > 0:
                out.add(sq)
            board.remove()
    return out


# ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", [Rule.FREESTYLE, Rule.STANDARD])
def test_incremental_counts_match_a_recount_after_every_move_and_takeback(rule: Rule) -> None:
    rng = random.Random(16 + (rule is Rule.STANDARD))
    checked = 0
    for game in range(4):
        board = GomokuBoard(11 if game % 2 else 15, rule=rule)
        if game == 3:
            board.place(board.index(5, 5), WALL)  # a continuous game's blocked square
        hashes = [board.hash]
        while board.winner() is None and board.stones() < 70:
            # Play near the stones most of the time so that real shapes (threes, fours, fives) appear.
            moves = board.candidates()
            board.play(rng.choice(moves))
            hashes.append(board.hash)
            assert board.counts == brute_counts(board)
            checked += 1
            if rng.random() < 0.2:
                back = rng.randint(1, min(3, board.stones() - 1))
                for _ in range(back):
                    board.undo()
                    hashes.pop()
                    assert board.hash == hashes[-1]
                    assert board.counts == brute_counts(board)
                    checked += 1
    assert checked > 150


def test_win_squares_match_a_brute_force_search() -> None:
    rng = random.Random(5)
    for _ in range(3):
        board = GomokuBoard(9)
        while board.winner() is None and board.stones() < 40:
            board.play(rng.choice(board.candidates()))
            if board.winner() is not None:
                break
            for color in (BLACK, WHITE):
                assert board.win_squares(color) == brute_win_squares(board, color)


@pytest.mark.parametrize(
    ("line", "exact", "shape"),
    [
        ("..XXXXX..", False, FIVE),
        (".XXXXXX.", False, FIVE),
        (".XXXXXX.", True, ONE),  # an overline does not win under the standard rule
        ("..XXXX..", False, OPEN_FOUR),
        ("OXXXX...", False, FOUR),
        ("XX.XX", False, FOUR),
        ("X.XXX.X", False, OPEN_FOUR),  # two separate fours on one line
        ("X.....X", False, ONE),  # too far apart to share a five: two pieces, each one stone
        ("..XXX...", False, OPEN_THREE),
        ("..X.XX..", False, OPEN_THREE),
        ("OXXX....", False, THREE),
        (".XXX.O", False, THREE),
        ("...XX...", False, OPEN_TWO),
        ("OXX.....", False, TWO),
        ("...X....", False, ONE),
        ("OXXXXO", False, NONE),  # no room for a five: a dead segment
    ],
)
def test_shapes_of_known_lines(line: str, exact: bool, shape: int) -> None:
    assert shape_of(line, exact) == shape
    assert shape_of(line.replace("X", "x").replace("O", "X").replace("x", "O"), exact, WHITE) == shape


def test_overline_completions_depend_on_the_rule() -> None:
    text = "XXXX.X" + "\n......" * 5
    free = GomokuBoard.from_text(text, Rule.FREESTYLE)
    std = GomokuBoard.from_text(text, Rule.STANDARD)
    assert free.win_squares(BLACK) == {4}
    assert std.win_squares(BLACK) == set()  # the gap would make six


def test_counts_stay_right_when_the_line_table_starts_over(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.gomoku import patterns

    monkeypatch.setattr(patterns, "LINE_TABLE_LIMIT", 40)
    monkeypatch.setitem(patterns._TABLES, True, patterns.LineTable(True))  # a fresh table for this test
    rng = random.Random(40)
    board = GomokuBoard(9, rule=Rule.STANDARD)
    while board.winner() is None and board.stones() < 30:
        board.play(rng.choice(board.candidates()))
        assert board.counts == brute_counts(board)
        assert len(board.table) <= 40


def test_move_gain_is_the_score_change_of_playing_there() -> None:
    rng = random.Random(8)
    board = GomokuBoard(15)
    while board.winner() is None and board.stones() < 40:
        for square in board.candidates():
            for color in (BLACK, WHITE):
                before = board.score(color) - board.score(3 - color)
                board.place(square, color)
                after = board.score(color) - board.score(3 - color)
                board.remove()
                assert board.move_gain(square, color) == after - before
        board.play(rng.choice(board.candidates()))
