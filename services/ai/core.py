"""The AI's pure core: a :class:`messages.MoveRequest` in, a :class:`messages.MoveReply` out.

The referee uses the same function in-process when the AI process does not answer in time, so that both
paths choose the same move: the random choice among equally good moves (and a level's deliberate
mistakes) is drawn from ``random.Random(seed)``, a fresh generator per request. The referee seeds each
request from its configured seed, the game counter and the move number (:func:`request_seed`), so a
replayed game makes the same decisions.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import engine
from messages import MoveReply, MoveRequest

#: the multipliers that spread (base seed, game, move) over distinct seeds; a game has at most 9 moves.
_GAME_STRIDE = 16
_BASE_STRIDE = 1_000_003


class BadRequestError(ValueError):
    """A move request that cannot be answered (bad board, wrong side, unknown level, game over)."""


def request_seed(base_seed: int, game: int, move_number: int) -> int:
    """The seed of the request for move ``move_number`` (0-based ply) of game number ``game``."""
    return base_seed * _BASE_STRIDE + game * _GAME_STRIDE + move_number


def choose(
    board: str, to_move: str, level: str, seed: int | None, first_square: int | None = None
) -> engine.MoveChoice:
    """The engine's move for ``board`` (9 chars) with ``to_move`` ("X"/"O") to play.

    ``first_square`` (1..9) is played on an empty board. :raises BadRequestError: with the reason.
    """
    try:
        position = engine.Board(board)
    except engine.InvalidBoardError as exc:
        raise BadRequestError(f"bad board {board!r}: {exc}") from None
    if position.to_move() != to_move:
        raise BadRequestError(f"board {board!r} has {position.to_move()} to move, not {to_move}")
    if first_square is not None and not (isinstance(first_square, int) and 1 <= first_square <= 9):
        raise BadRequestError(f"first_square must be 1..9, got {first_square!r}")
    rng = random.Random(seed)
    try:
        return engine.choose_move(
            position, level, rng, None if first_square is None else engine.square_from_number(first_square)
        )
    except engine.EngineError as exc:
        raise BadRequestError(str(exc)) from None


def answer(
    request: MoveRequest,
    default_seed: int = 0,
    clock: Callable[[], float] = time.perf_counter,
) -> MoveReply:
    """The reply to ``request``; a request that cannot be answered gets ``square=0`` and ``error``.

    A request without a seed uses ``default_seed``. ``elapsed_us`` is measured with ``clock``.
    """
    start = clock()
    seed = default_seed if request.seed is None else request.seed
    try:
        choice = choose(request.board, request.to_move, request.level, seed, request.first_square)
    except BadRequestError as exc:
        return MoveReply(request_id=request.request_id, square=0, level=request.level, error=str(exc))
    return MoveReply(
        request_id=request.request_id,
        square=choice.number,
        value=choice.value,
        pv=[sq + 1 for sq in choice.pv],
        nodes=choice.nodes,
        elapsed_us=round((clock() - start) * 1e6, 3),
        mistake=choice.mistake,
        level=choice.level,
    )
