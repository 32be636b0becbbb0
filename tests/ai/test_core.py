"""The AI's pure core: replies, determinism, the opening square, and bad requests."""

from __future__ import annotations

import itertools

import pytest

import engine
from messages import MoveRequest
from services.ai import core


def test_reply_carries_move_value_pv_and_timing() -> None:
    reply = core.answer(MoveRequest(request_id="r1", board="XX..O.O..", to_move="X", seed=1))
    assert reply.request_id == "r1" and reply.error == ""
    assert reply.square == 3 and reply.value == 1 and reply.pv[0] == 3
    assert reply.elapsed_us >= 0 and reply.level == "perfect"


def test_same_seed_same_move_for_every_reachable_position() -> None:
    for board in itertools.islice(engine.reachable_positions(), 0, None, 7):
        if board.is_terminal():
            continue
        text, side = str(board), board.to_move()
        a = core.answer(MoveRequest(request_id="a", board=text, to_move=side, seed=42))
        b = core.answer(MoveRequest(request_id="b", board=text, to_move=side, seed=42))
        assert (a.square, a.pv) == (b.square, b.pv)
        assert a.square - 1 in board.legal_moves()


def test_seeds_of_different_games_and_moves_differ() -> None:
    seeds = {core.request_seed(s, g, m) for s in range(3) for g in range(50) for m in range(9)}
    assert len(seeds) == 3 * 50 * 9


def test_first_square_opens_the_game() -> None:
    for square in range(1, 10):
        reply = core.answer(MoveRequest(request_id="f", board=".........", to_move="X", first_square=square))
        assert reply.square == square


def test_levels_are_honoured_and_seeded() -> None:
    moves = {
        core.answer(MoveRequest(request_id="e", board="X........", to_move="O", level="easy", seed=s)).square
        for s in range(40)
    }
    assert len(moves) > 1  # the easy level varies (and sometimes slips)


@pytest.mark.parametrize(
    ("board", "to_move", "level", "first", "error"),
    [
        ("XX.......", "O", "perfect", None, "bad board"),
        ("X........", "X", "perfect", None, "not X"),
        ("XXXOO....", "O", "perfect", None, "over"),
        ("ABC", "X", "perfect", None, "bad board"),
        (".........", "X", "godlike", None, "unknown level"),
        (".........", "X", "perfect", 10, "first_square"),
    ],
)
def test_bad_requests_get_an_error_not_an_exception(
    board: str, to_move: str, level: str, first: int | None, error: str
) -> None:
    reply = core.answer(
        MoveRequest(request_id="x", board=board, to_move=to_move, level=level, first_square=first)  # type: ignore[arg-type]
    )
    assert reply.square == 0 and error in reply.error, reply.error
