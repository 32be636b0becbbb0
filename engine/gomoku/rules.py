"""The words of gomoku: colours, rules, board sizes. One definition each, imported everywhere else.

Black moves first. Under the *freestyle* rule five or more stones in a row win; under the *standard* rule
exactly five win (an overline of six or more does not). The Gomocup protocol names them by its ``INFO rule``
bitmask, where bit 1 means exactly five (:func:`rule_from_bits`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from ..errors import EngineError

Color = int
"""A square's content or a side: :data:`EMPTY`, :data:`BLACK`, :data:`WHITE` or :data:`WALL`."""

EMPTY: Final = 0
BLACK: Final = 1
WHITE: Final = 2
#: A square that belongs to nobody and blocks both sides (the Gomocup protocol's field 3, continuous game).
WALL: Final = 3

#: The usual board: 15 x 15.
DEFAULT_SIZE: Final = 15
#: Smallest and largest side accepted (a five needs five squares; Gomocup plays 20 x 20; line keys hold 32).
MIN_SIZE: Final = 5
MAX_SIZE: Final = 32

#: Bit of the protocol's ``INFO rule`` value that means "exactly five in a row".
RULE_BIT_EXACT: Final = 1
#: Bit of ``INFO rule`` that means renju (not supported: its forbidden moves are not modelled).
RULE_BIT_RENJU: Final = 4


class Rule(StrEnum):
    """Which rows win."""

    #: five or more in a row
    FREESTYLE = "freestyle"
    #: exactly five in a row
    STANDARD = "standard"

    @property
    def exact(self) -> bool:
        """Whether only exactly five wins."""
        return self is Rule.STANDARD


class GomokuError(EngineError):
    """Bad input to the gomoku engine: an occupied or off-board square, a bad size, an unknown rule."""


def other(color: Color) -> Color:
    """The opponent of ``color`` (BLACK <-> WHITE)."""
    return 3 - color


def rule_from_bits(bits: int) -> Rule:
    """The rule of a Gomocup ``INFO rule`` bitmask: bit 1 set is the standard rule, else freestyle.

    :raises GomokuError: for renju (bit 4), whose forbidden moves this engine does not know.
    """
    if bits & RULE_BIT_RENJU:
        raise GomokuError("renju (rule bit 4) is not supported: use freestyle (0) or exactly five (1)")
    return Rule.STANDARD if bits & RULE_BIT_EXACT else Rule.FREESTYLE


def check_size(size: int) -> int:
    """``size`` if it is a supported side length.

    :raises GomokuError: otherwise.
    """
    if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE:
        raise GomokuError(f"board side must be an integer {MIN_SIZE}..{MAX_SIZE}, got {size!r}")
    return size
