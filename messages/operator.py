"""Operator commands (from `sanzi task`, `sanzi stop`, `sanzi level` or the panel) and their replies."""

from __future__ import annotations

from typing import ClassVar, Literal

from .base import Message


class OperatorCommand(Message, frozen=True):
    """Choose a task, stop, or set the level. The referee answers with an :class:`OperatorReply`
    carrying the same ``command_id``; a command id seen before is answered again, not carried out twice.
    """

    VERSION: ClassVar[int] = 2

    command_id: str
    action: Literal["task", "stop", "level"]
    task: int | None = None
    #: target squares 1..9 for tasks 2 and 3, in placement order.
    squares: list[int] = []
    #: the device's first square for task 4.
    first: int | None = None
    level: str | None = None
    games: int = 1
    #: colour order of the placements of tasks 2 and 3, one letter per square ("b" black, "w" white),
    #: e.g. "bbww" or "bwbw"; "" = the referee's default (``referee.colours``, "bbww": the contest's
    #: "2 black and 2 white pieces, one after another" read as both blacks first).
    colours: str = ""


class OperatorReply(Message, frozen=True):
    command_id: str
    ok: bool
    error: str = ""
    game_id: str = ""
