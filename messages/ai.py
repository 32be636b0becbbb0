"""Move requests to the AI process and its replies."""

from __future__ import annotations

from typing import Literal

from .base import Message


class MoveRequest(Message, frozen=True):
    """Ask the engine for a move. ``board`` is 9 characters ("X", "O", ".")."""

    request_id: str
    board: str
    to_move: Literal["X", "O"]
    level: str = "perfect"
    #: the device's first square (1..9) when it opens the game (contest task 4).
    first_square: int | None = None
    seed: int | None = None


class MoveReply(Message, frozen=True):
    """The engine's answer. ``square`` is 1..9; ``value`` is +1 win, 0 draw, -1 loss for the mover."""

    request_id: str
    square: int
    value: int = 0
    #: principal variation, squares 1..9, starting with ``square``.
    pv: list[int] = []
    nodes: int = 0
    elapsed_us: float = 0.0
    mistake: bool = False
    level: str = "perfect"
    error: str = ""
