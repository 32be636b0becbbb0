"""The simulator's topics: the world's truth, the simulated person's actions, faults, the raw button."""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from .base import Colour, Message


class PieceState(msgspec.Struct, frozen=True, kw_only=True):
    """One of the ten pieces, in table millimetres."""

    piece_id: int
    colour: Colour
    x_mm: float
    y_mm: float
    #: "supply", "board" (on the board's plate, maybe on a line), "gripper" or "table" (off the board).
    where: str
    #: the square (1..9) whose area holds the piece's centre, if any.
    square: int | None = None
    #: the supply slot index when ``where == "supply"``.
    slot: int | None = None
    #: stacking order: a piece with a higher layer lies on top of overlapping ones (draw it last).
    layer: int = 0


class GripperState(msgspec.Struct, frozen=True, kw_only=True):
    x_mm: float
    y_mm: float
    z_mm: float
    magnet: bool = False
    holding: int | None = None


class HandState(msgspec.Struct, frozen=True, kw_only=True):
    """The person's hand and forearm over the table (absent when ``present`` is false)."""

    present: bool = False
    x_mm: float = 0.0
    y_mm: float = 0.0
    #: the direction the forearm comes from, degrees, 0 = from the bottom edge of the image.
    angle_deg: float = 0.0


class WorldState(Message, frozen=True):
    """The physical truth of the simulated table.

    ``pieces`` always holds the ten pieces (ids 0..4 black, 5..9 white, in supply slots 0..4 at the
    start), in id order. ``board`` is what lies squarely on each square ("?" for a piece touching a
    square's lines or pieces of both colours in one square).
    """

    VERSION: ClassVar[int] = 2

    board_center_mm: tuple[float, float]
    board_angle_deg: float
    pitch_mm: float
    pieces: list[PieceState]
    gripper: GripperState
    hand: HandState = HandState()
    #: board as the world has it, 9 characters, from the pieces lying squarely on squares.
    board: str = "........."
    sim_time_s: float = 0.0
    #: how the board looks (for the simulated camera): line width, margin of the plate beyond the outer
    #: border, colours as BGR.
    line_width_mm: float = 2.5
    plate_margin_mm: float = 12.0
    board_colour: tuple[int, int, int] = (205, 210, 200)
    line_colour: tuple[int, int, int] = (35, 35, 35)
    piece_diameter_mm: float = 22.0
    #: grows by one on every discrete change of the world (pieces, magnet, hand, board), not on motion.
    revision: int = 0
    #: ids of the last world actions taken (applied or refused), oldest first: a sender publishes an
    #: action again until its id shows here (a bus restart loses what is sent meanwhile).
    actions_seen: list[str] = []
    #: the simulator's speed factor now (``simworld.speed``, changed at run time by a ``speed`` action);
    #: the simulated person divides its pauses by it. 0: not said (a simulator older than the field).
    speed: float = 0.0


class WorldAction(Message, frozen=True):
    """The simulated person acts on the world.

    - ``place``: put a ``colour`` piece from the person's supply on ``to_square``.
    - ``move``: move the piece on ``from_square`` to ``to_square``.
    - ``remove``: take the piece on ``from_square`` off the board, back into a free slot of its colour's
      supply column (the highest free one).
    - ``hand``: show (``present``) or withdraw the hand over ``to_square`` (or the board's centre).
    - ``board``: set the board's pose (``x_mm``, ``y_mm``, ``angle_deg``): the operator turned it (task 3).
    - ``reset``: put every piece back in its supply column (between tasks).
    - ``speed``: run the simulator at ``speed`` (the factor every motion and the simulated person's
      pauses are divided by) from now on.
    """

    action_id: str
    kind: Literal["place", "move", "remove", "hand", "board", "reset", "speed"]
    colour: Colour | None = None
    from_square: int | None = None
    to_square: int | None = None
    present: bool = True
    x_mm: float | None = None
    y_mm: float | None = None
    angle_deg: float | None = None
    speed: float | None = None


class FaultInjection(Message, frozen=True):
    """Ask the emulated controller to misbehave ``count`` times: "drop" (drop the held piece mid-move),
    "lose-reply", "garbage", "stall", "alarm"."""

    kind: Literal["drop", "lose-reply", "garbage", "stall", "alarm"]
    count: int = 1


class ButtonLevel(Message, frozen=True):
    """The simulated button's electrical level, edges only (bounces included when asked for)."""

    pressed: bool


class HumanSetup(Message, frozen=True):
    """Change the simulated person's behaviour at run time (``sanzi sim`` does this between tasks):
    the policy ("perfect", "random", "greedy", "mistake:N") and the misbehaviours to commit."""

    policy: str = "perfect"
    misbehave: list[str] = []
    seed: int | None = None
