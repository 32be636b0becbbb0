"""The base of every message: a frozen, tagged msgspec Struct with a schema version.

Rules of evolution (msgspec's schema-evolution guide): a new field always gets a default and goes last;
a field never changes its type; a removed field is left in place and ignored. Bump ``VERSION`` when a
field is added so that recordings say which version they hold.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

#: A piece's colour. Black always moves first and is written "X" on boards; white is "O".
Colour = Literal["black", "white"]

#: What vision or the referee says is on one square.
SquareState = Literal["empty", "black", "white", "unknown"]

#: Squares are numbered 1..9 on the bus, row by row, 1 at the top left as the device sees the board.
SquareNumber = int


class Message(msgspec.Struct, frozen=True, kw_only=True, tag_field="type", tag=True):
    """Base class of all bus messages. Subclasses are tagged with their class name."""

    VERSION: ClassVar[int] = 1


class Point(msgspec.Struct, frozen=True, array_like=True):
    """A 2-D point (pixels or millimetres, as the field that holds it says)."""

    x: float
    y: float
