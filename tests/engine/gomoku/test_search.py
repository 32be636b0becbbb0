"""PVS and the move chooser: wins and blocks, threat proofs before the search, the deadline honoured on an
injected clock, and the board restored after every search."""

from __future__ import annotations

import pytest

from engine.gomoku.board import GomokuBoard
from engine.gomoku.clock import Deadline, turn_budget
from engine.gomoku.player import GomokuPlayer, get_level
from engine.gomoku.rules import BLACK, WHITE, GomokuError
from engine.gomoku.search import MATE_THRESHOLD, Searcher
from engine.gomoku.threats import ThreatSearch

from .test_threats import VCF_BLACK, VCT_FORK


class SteppingClock:
    """Advances ``step`` seconds per reading: the search sees time pass however fast the machine is."""

    def __init__(self, step: float) -> None:
        self.now, self.step, self.reads = 0.0, step, 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


def quiet_position() -> GomokuBoard:
    return GomokuBoard.from_moves([(7, 7), (8, 8), (8, 6), (6, 8), (9, 7), (7, 9)])


def test_the_search_proves_an_open_three_wins_and_restores_the_board() -> None:
    board = GomokuBoard.from_text(
        """
        .........
        .........
        .........
        ...XXX...
        .........
        ..O...O..
        ....O....
        .........
        .........
        """,
        to_move=BLACK,
    )
    before = (str(board), board.hash, list(board.counts), list(board.near), board.to_move)
    result = Searcher(board).search(4)
    assert result.score >= MATE_THRESHOLD
    assert board.xy(result.move) in ((2, 3), (6, 3))  # the open four
    assert (str(board), board.hash, board.counts, board.near, board.to_move) == before


def test_the_chooser_wins_blocks_and_plays_proofs_first() -> None:
    win = GomokuBoard.from_text(".XXXX....\n" + ".........\n" * 7 + "OOO.O....", to_move=BLACK)
    assert GomokuPlayer(win, "easy").choose(30).reason == "win"
    block = GomokuBoard.from_text(".XXX.....\n" + ".........\n" * 7 + "OOOO.....", to_move=BLACK)
    decision = GomokuPlayer(block, "easy").choose(30)
    assert (decision.reason, block.xy(decision.move)) == ("block", (4, 8))
    vcf = GomokuBoard.from_text(VCF_BLACK, to_move=BLACK)
    assert GomokuPlayer(vcf, "medium").choose(30).reason == "vcf"
    fork = GomokuBoard.from_text(VCT_FORK, to_move=BLACK)
    assert GomokuPlayer(fork, "hard").choose(30).reason == "vct"  # test_threats plays such wins out


def test_the_chooser_defends_against_the_opponents_fork() -> None:
    # White to move; black threatens the fork at (4,4). Any move that does not break it loses.
    board = GomokuBoard.from_text(VCT_FORK, to_move=WHITE)
    decision = GomokuPlayer(board, "medium", clock=SteppingClock(0.01)).choose(1.0)
    board.play(decision.move)
    assert ThreatSearch(board).vct(BLACK) is None


def test_a_move_comes_back_by_the_deadline_on_the_injected_clock() -> None:
    for step in (0.01, 0.05):
        clock = SteppingClock(step)
        board = quiet_position()
        decision = GomokuPlayer(board, "hard", clock=clock).choose(0.5)
        assert board.cells[decision.move] == 0
        # Every stage polls the clock at least every 128 nodes, so it stops within a few readings (each
        # reading of this clock moves it on, and each stage reads it once as it starts).
        assert decision.elapsed <= 0.5 + 6 * step


def test_an_unfinished_iteration_still_yields_a_searched_move() -> None:
    board = quiet_position()
    clock = SteppingClock(0.002)
    result = Searcher(board).search(30, Deadline.after(0.05, clock))
    assert result.move is not None and board.cells[result.move] == 0
    assert 1 <= result.depth < 30


def test_turn_budget_keeps_a_margin_and_respects_the_match_clock() -> None:
    assert turn_budget(1000) == pytest.approx(0.85)
    assert turn_budget(100) == pytest.approx(0.075)
    assert turn_budget(0) < 0.06
    assert turn_budget(30_000, time_left_ms=10_000) == pytest.approx(0.4)
    assert turn_budget(None) > 1


def test_unknown_level_and_full_board_are_clear_errors() -> None:
    with pytest.raises(GomokuError, match="unknown level 'grandmaster'"):
        get_level("grandmaster")
    board = GomokuBoard(5)
    for y in range(5):
        for x in range(5):
            board.place(board.index(x, y), 3)  # walls everywhere
    with pytest.raises(GomokuError, match="full"):
        GomokuPlayer(board).choose(1)
