"""VCF and VCT: every win found is played out against every defence (each empty square, at each defender
turn) and must end in the attacker's five; positions without a forced win are not claimed."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine.gomoku.board import GomokuBoard, Square
from engine.gomoku.rules import BLACK, EMPTY, WHITE, other
from engine.gomoku.threats import ThreatSearch, ThreatTimeout, verify_vcf

Solver = Callable[[GomokuBoard, int], list[Square] | None]

# Found by a seeded random search and kept as text; black to move wins with four fours.
VCF_BLACK = """
...........
....X...O.O
.......O...
...X.OX....
........OX.
.....X..XX.
...X......O
....O..O...
...........
...........
...........
"""
# White to move wins by fours.
VCF_WHITE = """
.....X.....
...X.X.....
....O..X...
O...O...O..
.......O..O
X....X.....
..O.OX...X.
.....OX....
OO..XX.....
.O...X.....
.X.........
"""
# Black has two open twos crossing at an empty square: no four is possible, but the double three wins.
VCT_FORK = """
.........
.........
.....X...
.....X...
..XX.....
.........
.......O.
.O.....O.
.O.......
"""
# The same fork with a white three on the edge: white can answer black's threes with fours of its own.
VCT_FORK_COUNTER = """
.........
.........
.....X...
.....X...
..XX.....
.........
O........
O......O.
O........
"""


def vcf(board: GomokuBoard, color: int) -> list[Square] | None:
    return ThreatSearch(board).vcf(color)


def vct(board: GomokuBoard, color: int) -> list[Square] | None:
    return ThreatSearch(board).vct(color)


def wins_against_every_defence(
    board: GomokuBoard, attacker: int, solve: Solver, turns: int, memo: dict[int, bool] | None = None
) -> bool:
    """Attacker to move: whether following ``solve`` wins within ``turns`` attacker moves whatever the
    defender plays (every empty square is tried at every defender turn)."""
    memo = {} if memo is None else memo
    if board.win_squares(attacker):
        return True
    if turns <= 0:
        return False
    if board.hash in memo:
        return memo[board.hash]
    line = solve(board, attacker)
    result = False
    if line:
        board.place(line[0], attacker)
        result = True
        defender = other(attacker)
        if not board.has_five(attacker):
            for reply in range(board.cells_count):
                if board.cells[reply] != EMPTY:
                    continue
                board.place(reply, defender)
                ok = not board.has_five(defender) and wins_against_every_defence(
                    board, attacker, solve, turns - 1, memo
                )
                board.remove()
                if not ok:
                    result = False
                    break
        board.remove()
    memo[board.hash] = result
    return result


@pytest.mark.parametrize(("text", "attacker"), [(VCF_BLACK, BLACK), (VCF_WHITE, WHITE)])
def test_vcf_wins_are_played_out_against_every_defence(text: str, attacker: int) -> None:
    board = GomokuBoard.from_text(text, to_move=attacker)
    before = str(board), board.hash, list(board.counts)
    line = vcf(board, attacker)
    assert line is not None and len(line) >= 3
    assert verify_vcf(board, attacker, line)
    assert (str(board), board.hash, board.counts) == before  # the search restores the board
    assert wins_against_every_defence(board, attacker, vcf, turns=len(line) // 2 + 2)


def test_a_vcf_line_with_a_wrong_defence_or_a_non_four_is_rejected() -> None:
    board = GomokuBoard.from_text(VCF_BLACK, to_move=BLACK)
    line = vcf(board, BLACK)
    assert line is not None
    wrong_reply = [line[0], next(sq for sq in board.candidates() if sq not in line), *line[2:]]
    assert not verify_vcf(board, BLACK, wrong_reply)
    quiet = next(sq for sq in board.candidates() if sq not in board.four_squares(BLACK))
    assert not verify_vcf(board, BLACK, [quiet, *line[1:]])


@pytest.mark.parametrize("text", [VCT_FORK, VCT_FORK_COUNTER])
def test_vct_wins_are_played_out_against_every_defence(text: str) -> None:
    board = GomokuBoard.from_text(text, to_move=BLACK)
    assert vcf(board, BLACK) is None
    line = vct(board, BLACK)
    assert line is not None
    assert wins_against_every_defence(board, BLACK, vct, turns=5)


def test_replies_left_out_of_a_vct_search_all_lose_to_the_same_vcf() -> None:
    board = GomokuBoard.from_text(VCT_FORK_COUNTER, to_move=BLACK)
    search = ThreatSearch(board)
    fork = vct(board, BLACK)
    assert fork is not None
    board.place(fork[0], BLACK)
    proof = search.vcf(BLACK)
    assert proof is not None
    relevant = set(search.relevant_replies(BLACK, proof))
    for reply in range(board.cells_count):
        if board.cells[reply] == EMPTY and reply not in relevant:
            board.place(reply, WHITE)
            assert verify_vcf(board, BLACK, proof), board.xy(reply)
            board.remove()
    assert relevant  # the blocks of the fork's threes, and white's fours, must be searched


def test_no_win_is_claimed_where_the_defender_is_not_forced() -> None:
    board = GomokuBoard.from_text(VCT_FORK, to_move=WHITE)  # white has nothing
    assert vcf(board, WHITE) is None
    assert vct(board, WHITE) is None


def test_every_vcf_found_in_random_positions_survives_every_defence() -> None:
    rng = random.Random(16)
    proven = 0
    for _ in range(400):
        board = GomokuBoard(9)
        for _ in range(rng.randint(10, 24)):
            board.play(rng.choice(board.candidates()))
            if board.winner() is not None:
                break
        attacker = board.to_move
        if board.winner() is not None or board.win_squares(attacker) or board.win_squares(other(attacker)):
            continue
        try:
            line = ThreatSearch(board, max_nodes=5_000).vcf(attacker)
        except ThreatTimeout:
            continue
        if line is None:
            continue
        assert verify_vcf(board, attacker, line)
        assert wins_against_every_defence(board, attacker, vcf, turns=len(line) // 2 + 2)
        proven += 1
    assert proven >= 10


def test_every_vct_found_in_random_positions_survives_every_defence() -> None:
    rng = random.Random(61)
    proven = 0
    for _ in range(300):
        board = GomokuBoard(9)
        for _ in range(rng.randint(6, 16)):
            board.play(rng.choice(board.candidates()))
            if board.winner() is not None:
                break
        attacker = board.to_move
        if board.winner() is not None or board.win_squares(attacker) or board.win_squares(other(attacker)):
            continue
        try:
            if ThreatSearch(board, max_nodes=2_000).vcf(attacker) is not None:
                continue
            line = ThreatSearch(board, max_nodes=2_000).vct(attacker)
        except ThreatTimeout:
            continue
        if line is None:
            continue
        assert wins_against_every_defence(board, attacker, vct, turns=12)
        proven += 1
        if proven == 3:
            break
    assert proven == 3


def test_a_search_stopped_by_its_budget_leaves_the_board_as_it_was() -> None:
    stopped = 0
    for max_nodes in (1, 2, 3, 5, 8, 13, 40):
        for text, attacker in ((VCF_BLACK, BLACK), (VCT_FORK_COUNTER, BLACK), (VCF_WHITE, WHITE)):
            board = GomokuBoard.from_text(text, to_move=attacker)
            before = (str(board), board.hash, list(board.counts), list(board.near), len(board.history))
            try:
                ThreatSearch(board, max_nodes=max_nodes).vct(attacker, max_fours=30)
            except ThreatTimeout:
                stopped += 1
            assert (str(board), board.hash, board.counts, board.near, len(board.history)) == before
    assert stopped >= 8
