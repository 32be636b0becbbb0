"""Pure planning: an :class:`messages.ActuatorCommand` -> a sequence of motion steps. No I/O.

A pick-and-place never drags a piece across the grid: the gripper rises straight up to the travel
height where it is, travels there, descends vertically onto the piece, switches the magnet on (only once
the descent has finished), dwells, rises vertically, travels at the travel height, descends vertically,
releases (again only once arrived), dwells, rises. Every horizontal move happens at the travel height;
:func:`check_no_drag` states this as a property that tests check.

Targets: squares from the board pose through the calibration (:mod:`.geometry`), supply slots from
``table`` and the record of emptied slots (:mod:`.record`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from messages import ActuatorCommand, BoardPose
from services.common.config import TableConfig

from . import geometry
from .record import ActuatorRecord

#: heights closer than this are the same height.
Z_EPSILON_MM: Final = 1e-6


class PlanError(ValueError):
    """The command cannot be planned; the message is the reason reported to the referee."""


@dataclass(frozen=True, slots=True)
class MoveStep:
    """A straight move to (x, y, z) mm; ``feed`` mm/min, None for rapid."""

    x: float
    y: float
    z: float
    feed: float | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class MagnetStep:
    on: bool


@dataclass(frozen=True, slots=True)
class DwellStep:
    seconds: float


@dataclass(frozen=True, slots=True)
class WaitStep:
    """Wait until the controller has finished everything queued (and check where it stopped)."""

    note: str = ""


@dataclass(frozen=True, slots=True)
class HomeStep:
    pass


@dataclass(frozen=True, slots=True)
class SupplyStep:
    """Bookkeeping: ``colour`` slot ``slot`` is now empty (``taken``) or full again. Recorded when the
    executor reaches it, so it follows the motion that made it true."""

    colour: str
    slot: int
    taken: bool


Step = MoveStep | MagnetStep | DwellStep | WaitStep | HomeStep | SupplyStep


@dataclass(frozen=True, slots=True)
class Motion:
    """Heights, feeds and dwell, from ``[actuator]``."""

    travel_z: float = 20.0
    pick_z: float = 0.0
    feed_xy: float = 6000.0
    feed_z: float = 1500.0
    dwell_s: float = 0.2
    #: where the carriage waits after a job, at travel height, so that it does not hide the board from
    #: the camera while vision confirms the placement (None: stay above the last drop).
    park: tuple[float, float] | None = None

    @classmethod
    def from_config(cls, cfg: object) -> Motion:
        park = tuple(cfg.park_mm) if cfg.park_mm else None  # type: ignore[attr-defined]
        return cls(
            park=park,  # type: ignore[arg-type]
            travel_z=cfg.travel_z_mm,  # type: ignore[attr-defined]
            pick_z=cfg.pick_z_mm,  # type: ignore[attr-defined]
            feed_xy=cfg.feed_xy_mm_min,  # type: ignore[attr-defined]
            feed_z=cfg.feed_z_mm_min,  # type: ignore[attr-defined]
            dwell_s=cfg.dwell_s,  # type: ignore[attr-defined]
        )


@dataclass(frozen=True)
class Plan:
    """What to do for one command: the steps, and where the piece comes from and goes to (mm)."""

    kind: str
    steps: tuple[Step, ...]
    pick_mm: tuple[float, float] | None = None
    drop_mm: tuple[float, float] | None = None
    description: str = ""
    #: the supply slot a piece is taken from or returned to, as (colour, slot).
    slot: tuple[str, int] | None = None
    targets: dict[str, tuple[float, float]] = field(default_factory=dict)


def rise_steps(start: tuple[float, float, float], motion: Motion) -> list[Step]:
    """Rise straight up to the travel height where the gripper is, if it is lower."""
    sx, sy, sz = start
    if sz < motion.travel_z - Z_EPSILON_MM:
        return [MoveStep(sx, sy, motion.travel_z, motion.feed_z, "rise where we are")]
    return []


def pick_steps(at: tuple[float, float], motion: Motion, *, after: tuple[Step, ...] = ()) -> list[Step]:
    """From the travel height: travel over ``at``, descend, magnet on once arrived, dwell, lift."""
    m = motion
    return [
        MoveStep(at[0], at[1], m.travel_z, m.feed_xy, "travel to the piece"),
        MoveStep(at[0], at[1], m.pick_z, m.feed_z, "descend onto the piece"),
        WaitStep("at the piece"),
        MagnetStep(True),
        DwellStep(m.dwell_s),
        *after,
        MoveStep(at[0], at[1], m.travel_z, m.feed_z, "lift the piece"),
    ]


def drop_steps(at: tuple[float, float], motion: Motion, *, after: tuple[Step, ...] = ()) -> list[Step]:
    """From the travel height: carry over ``at``, lower, release once arrived, dwell, rise clear, wait."""
    m = motion
    return [
        MoveStep(at[0], at[1], m.travel_z, m.feed_xy, "carry the piece"),
        MoveStep(at[0], at[1], m.pick_z, m.feed_z, "lower the piece"),
        WaitStep("at the target"),
        MagnetStep(False),
        DwellStep(m.dwell_s),
        *after,
        MoveStep(at[0], at[1], m.travel_z, m.feed_z, "rise clear"),
        WaitStep("done"),
    ]


def pick_and_place(
    start: tuple[float, float, float],
    pick: tuple[float, float],
    drop: tuple[float, float],
    motion: Motion,
    *,
    after_pick: tuple[Step, ...] = (),
    after_drop: tuple[Step, ...] = (),
) -> list[Step]:
    """The steps that carry the piece at ``pick`` to ``drop``, starting from ``start`` (x, y, z), then
    park the carriage clear of the board when ``motion.park`` is set."""
    steps = [
        *rise_steps(start, motion),
        *pick_steps(pick, motion, after=after_pick),
        *drop_steps(drop, motion, after=after_drop),
    ]
    if motion.park is not None:
        x, y = motion.park
        steps += [
            MoveStep(x, y, motion.travel_z, motion.feed_xy, "park clear of the board"),
            WaitStep("parked"),
        ]
    return steps


def check_no_drag(
    steps: list[Step] | tuple[Step, ...], start: tuple[float, float, float], travel_z: float
) -> None:
    """Assert the no-drag rule: every move that changes x or y starts and ends at the travel height,
    and the magnet only switches when the gripper has stopped (a WaitStep right before it).

    :raises PlanError: naming the offending step.
    """
    x, y, z = start
    previous: Step | None = None
    for i, step in enumerate(steps):
        if isinstance(step, MoveStep):
            horizontal = math.hypot(step.x - x, step.y - y) > Z_EPSILON_MM
            if horizontal and (z < travel_z - Z_EPSILON_MM or step.z < travel_z - Z_EPSILON_MM):
                raise PlanError(f"step {i} moves sideways below the travel height: {step}")
            x, y, z = step.x, step.y, step.z
        elif isinstance(step, MagnetStep) and not isinstance(previous, WaitStep):
            raise PlanError(f"step {i} switches the magnet while the gripper may be moving")
        elif isinstance(step, HomeStep):
            x, y, z = math.nan, math.nan, math.inf  # unknown until homed; homing rises first
        previous = step


def estimate_s(steps: tuple[Step, ...] | list[Step], start: tuple[float, float, float]) -> float:
    """The motion time the steps imply at their feeds (no acceleration; rapid counted as 10 m/min)."""
    x, y, z = start
    total = 0.0
    for step in steps:
        if isinstance(step, MoveStep):
            distance = math.dist((x, y, z), (step.x, step.y, step.z))
            total += distance / (step.feed or 10_000.0) * 60.0
            x, y, z = step.x, step.y, step.z
        elif isinstance(step, DwellStep):
            total += step.seconds
    return total


def _inside(table: TableConfig, point: tuple[float, float], what: str) -> tuple[float, float]:
    x, y = point
    if not (0.0 <= x <= table.width_mm and 0.0 <= y <= table.height_mm):
        raise PlanError(
            f"{what} at ({x:.1f}, {y:.1f}) mm is outside the table's working area "
            f"0..{table.width_mm:g} x 0..{table.height_mm:g} mm: check the calibration and the board pose"
        )
    return point


def _column(table: TableConfig, colour: str | None) -> object:
    if colour == "black":
        return table.black_supply
    if colour == "white":
        return table.white_supply
    raise PlanError(f"this command needs a colour (black or white), got {colour!r}")


def plan_command(
    cmd: ActuatorCommand,
    *,
    start: tuple[float, float, float],
    pose: BoardPose | None,
    calibration: np.ndarray | None,
    table: TableConfig,
    record: ActuatorRecord,
    motion: Motion,
) -> Plan:
    """The plan for ``cmd`` (kinds place, move, return, home; query needs no plan). Squares use the
    command's own pose, else ``pose`` (the newest one vision published).

    :raises PlanError: with the reason: no pose or calibration for a square, a bad square, an empty
        supply, no free slot to return to, a target off the table.
    """
    if cmd.kind == "home":
        return Plan("home", (HomeStep(), WaitStep("homed")), description="home the axes")
    if cmd.kind not in ("place", "move", "return"):
        raise PlanError(f"nothing to plan for a {cmd.kind!r} command")
    pose = cmd.pose or pose

    def square(n: int | None, role: str) -> tuple[float, float]:
        if n is None:
            raise PlanError(f"a {cmd.kind} command needs {role}")
        if pose is None:
            raise PlanError("no board pose: the command carries none and vision has not seen the board")
        if calibration is None:
            raise PlanError("no camera-to-table calibration: run `sanzi calibrate` first")
        try:
            return _inside(table, geometry.square_center_mm(pose, n, calibration), f"square {n}")
        except geometry.GeometryError as exc:
            raise PlanError(str(exc)) from None

    def slot_point(colour: str, slot: int) -> tuple[float, float]:
        try:
            return _inside(table, geometry.slot_mm(_column(table, colour), slot), f"{colour} slot {slot}")  # type: ignore[arg-type]
        except geometry.GeometryError as exc:
            raise PlanError(str(exc)) from None

    if cmd.kind == "place":
        colour = cmd.colour
        _column(table, colour)
        assert colour is not None
        slot = cmd.supply_slot if cmd.supply_slot is not None else record.next_full(colour)
        if slot is None:
            raise PlanError(f"the {colour} supply is empty (all {record.slots[colour]} slots used)")
        pick = slot_point(colour, slot)
        drop = square(cmd.to_square, "to_square")
        steps = pick_and_place(start, pick, drop, motion, after_pick=(SupplyStep(colour, slot, True),))
        return Plan(
            "place",
            tuple(steps),
            pick,
            drop,
            f"{colour} from slot {slot} to square {cmd.to_square}",
            (colour, slot),
        )
    if cmd.kind == "move":
        if cmd.from_square == cmd.to_square:
            raise PlanError(f"move from square {cmd.from_square} to itself")
        pick = square(cmd.from_square, "from_square")
        drop = square(cmd.to_square, "to_square")
        steps = pick_and_place(start, pick, drop, motion)
        return Plan("move", tuple(steps), pick, drop, f"square {cmd.from_square} to square {cmd.to_square}")
    # return
    colour = cmd.colour
    _column(table, colour)
    assert colour is not None
    slot = cmd.supply_slot if cmd.supply_slot is not None else record.last_emptied(colour)
    if slot is None:
        raise PlanError(f"no emptied slot in the {colour} supply to return the piece to")
    pick = square(cmd.from_square, "from_square")
    drop = slot_point(colour, slot)
    steps = pick_and_place(start, pick, drop, motion, after_drop=(SupplyStep(colour, slot, False),))
    return Plan(
        "return",
        tuple(steps),
        pick,
        drop,
        f"square {cmd.from_square} to {colour} slot {slot}",
        (colour, slot),
    )
