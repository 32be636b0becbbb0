"""Commands to the mechanism and what it reports back."""

from __future__ import annotations

from typing import ClassVar, Literal

from .base import Colour, Message
from .vision import BoardPose


class ActuatorCommand(Message, frozen=True):
    """One job for the mechanism. Every command has an id; the actuator carries out an id at most once
    and answers a repeated id with the outcome it already had.

    - ``place``: take a ``colour`` piece from its supply (slot ``supply_slot`` or the next full one) to
      ``to_square``.
    - ``move``: take the piece on ``from_square`` to ``to_square`` (restoring a cheated piece).
    - ``return``: take the piece on ``from_square`` back to a free slot of its ``colour``'s supply.
    - ``home``: home the axes.
    - ``query``: report what became of ``command_id`` without doing anything.

    Square targets come from ``pose`` (the board as vision saw it when the command was issued) through
    the camera-to-table calibration; without a pose the actuator uses the last pose vision published.
    """

    VERSION: ClassVar[int] = 2

    command_id: str
    kind: Literal["place", "move", "return", "home", "query"]
    colour: Colour | None = None
    supply_slot: int | None = None
    from_square: int | None = None
    to_square: int | None = None
    pose: BoardPose | None = None
    issued_ns: int = 0
    #: the supplies were set up anew (every slot full) before this command: the actuator forgets which
    #: slots it had emptied.
    reset_supply: bool = False


class ActuatorEvent(Message, frozen=True):
    """The actuator's report on a command: ``accepted`` when it starts, then ``done`` or ``failed``.
    ``unknown`` answers a query for an id it never saw. ``repeat`` is true when the answer comes from
    the record of a command already carried out (nothing moved)."""

    VERSION: ClassVar[int] = 2

    command_id: str
    status: Literal["accepted", "done", "failed", "unknown"]
    duration_s: float = 0.0
    reason: str = ""
    repeat: bool = False
    #: pieces left in each supply column after this command.
    supply_black: int = -1
    supply_white: int = -1
    #: for ``done``: whether the duration was within the placement budget (actuator.placement_budget_s).
    within_budget: bool = True
    #: the command's kind ("place", "move", ...), so a listener need not remember it.
    kind: str = ""


class ActuatorPosition(Message, frozen=True):
    """The mechanism's position in table millimetres and the controller's state."""

    x_mm: float
    y_mm: float
    z_mm: float
    magnet: bool = False
    #: the controller's state: "Idle", "Run", "Home", "Alarm", "Hold", "Offline".
    state: str = "Idle"
