"""The emulated controller's planner: a queue of motion blocks executed over (wall-clock) time.

Both protocol engines feed it. A move takes ``distance / rate`` simulated minutes at constant speed (no
acceleration), divided by ``simworld.speed`` in real time; the gripper's position is interpolated, so a
status query while moving shows intermediate coordinates. Magnet blocks execute in order with the moves;
after every completed block the magnet, if on, grips whatever is under it (see :mod:`.world`).

Pure logic on an injected ``now`` (seconds, monotonic): no threads, no I/O.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Literal

from services.common.config import TableConfig

from .config import SimWorldConfig
from .faults import Faults
from .world import World

#: tolerance on travel limits (mm), so that a target exactly on the edge is inside.
LIMIT_EPSILON_MM: Final = 1e-6
#: a move shorter than this in x-y is a lift or a descent (the drop fault waits for a carrying move).
MIN_TRAVEL_MM: Final = 1.0

Position = tuple[float, float, float]
BlockKind = Literal["move", "home", "dwell", "magnet"]


class SoftLimitError(ValueError):
    """A target outside the machine's travel."""


@dataclass
class Block:
    """One planner entry. ``duration_s`` is real (wall) seconds, already divided by the speed factor."""

    kind: BlockKind
    target: Position | None = None
    rate_mm_min: float = 0.0
    duration_s: float = 0.0
    magnet: bool = False
    #: called once when the block completes (a deferred reply).
    on_done: Callable[[], None] | None = None
    # runtime, set when the block starts
    t0: float | None = None
    start: Position | None = None
    drop_pending: bool = False
    alarm_pending: bool = False
    queued_at: float = 0.0
    done: bool = field(default=False)


class Planner:
    """The motion queue and the gripper's position over time.

    :param on_alarm: called with an alarm code when an injected hard-limit alarm stops a move.
    """

    def __init__(
        self,
        world: World,
        sim: SimWorldConfig,
        table: TableConfig,
        faults: Faults,
        on_alarm: Callable[[int], None] | None = None,
    ) -> None:
        self.world = world
        self.sim = sim
        self.table = table
        self.faults = faults
        self.on_alarm = on_alarm
        self.blocks: deque[Block] = deque()
        self.capacity = max(1, sim.planner_blocks)
        self.hold = False
        self._hold_since = 0.0
        self._last_end = 0.0
        self.speed = sim.speed if sim.speed > 0 else 1.0

    # ------------------------------------------------------------ queries

    @property
    def busy(self) -> bool:
        return bool(self.blocks)

    def free(self) -> int:
        return self.capacity - len(self.blocks)

    @property
    def homing(self) -> bool:
        return bool(self.blocks) and self.blocks[0].kind == "home"

    def moving(self) -> bool:
        """A move or homing block is in progress (a reset now loses position)."""
        return bool(self.blocks) and self.blocks[0].kind in ("move", "home") and self.blocks[0].t0 is not None

    def position(self) -> Position:
        g = self.world.gripper
        return g.x_mm, g.y_mm, g.z_mm

    def end_position(self) -> Position:
        """Where the gripper will be when the queue has run (the base of relative moves)."""
        for block in reversed(self.blocks):
            if block.target is not None:
                return block.target
        return self.position()

    def current_rate(self) -> float:
        """Feed rate now (mm/min): that of the move in progress, else 0."""
        if self.blocks and self.blocks[0].kind in ("move", "home") and not self.hold:
            return self.blocks[0].rate_mm_min
        return 0.0

    def check_limits(self, target: Position) -> None:
        """:raises SoftLimitError: when ``target`` is outside the travel (table area, z range)."""
        x, y, z = target
        e = LIMIT_EPSILON_MM
        if not (
            -e <= x <= self.table.width_mm + e
            and -e <= y <= self.table.height_mm + e
            and self.sim.z_min_mm - e <= z <= self.sim.z_max_mm + e
        ):
            raise SoftLimitError(
                f"target ({x:.3f}, {y:.3f}, {z:.3f}) outside travel x 0..{self.table.width_mm}, "
                f"y 0..{self.table.height_mm}, z {self.sim.z_min_mm}..{self.sim.z_max_mm}"
            )

    def move_rate(self, start: Position, target: Position, feed_mm_min: float | None) -> float:
        """The rate of a straight move: ``feed_mm_min`` (None = rapid) capped so that no axis exceeds its
        machine rate."""
        delta = [t - s for s, t in zip(start, target, strict=True)]
        dist = math.sqrt(sum(d * d for d in delta))
        if dist == 0.0:
            return feed_mm_min or self.sim.rapid_xy_mm_min
        limits = (self.sim.rapid_xy_mm_min, self.sim.rapid_xy_mm_min, self.sim.rapid_z_mm_min)
        cap = min(lim / (abs(d) / dist) for lim, d in zip(limits, delta, strict=True) if d != 0.0)
        return cap if feed_mm_min is None else min(feed_mm_min, cap)

    # ------------------------------------------------------------ queueing

    def push_move(self, target: Position, feed_mm_min: float | None, now: float) -> Block:
        """Queue a straight move (feed None = rapid). The caller checked limits and queue space."""
        start = self.end_position()
        rate = self.move_rate(start, target, feed_mm_min)
        dist = math.dist(start, target)
        duration = (dist / rate * 60.0) / self.speed if rate > 0 else 0.0
        return self._push(Block("move", target=target, rate_mm_min=rate, duration_s=duration), now)

    def push_home(self, now: float, on_done: Callable[[], None] | None = None) -> Block:
        hx, hy, hz = [*self.sim.home_mm, 0.0, 0.0, 0.0][:3]
        start = self.end_position()
        dist = math.dist(start, (hx, hy, hz))
        duration = self.sim.homing_s / self.speed
        rate = dist / (self.sim.homing_s / 60.0) if self.sim.homing_s > 0 else 0.0
        block = Block("home", target=(hx, hy, hz), rate_mm_min=rate, duration_s=duration, on_done=on_done)
        return self._push(block, now)

    def push_dwell(self, seconds: float, now: float, on_done: Callable[[], None] | None = None) -> Block:
        return self._push(Block("dwell", duration_s=max(0.0, seconds) / self.speed, on_done=on_done), now)

    def push_magnet(self, on: bool, now: float) -> Block:
        return self._push(Block("magnet", magnet=on), now)

    def _push(self, block: Block, now: float) -> Block:
        block.queued_at = now
        self.blocks.append(block)
        return block

    # ------------------------------------------------------------ execution

    def tick(self, now: float) -> None:
        """Advance the queue to ``now``: complete finished blocks (in order), interpolate the current one."""
        while self.blocks:
            block = self.blocks[0]
            if self.hold and block.kind in ("move", "home"):
                return
            if block.t0 is None:
                self._start(block, now)
            assert block.t0 is not None
            if block.alarm_pending and block.duration_s > 0:
                # The injected hard limit trips while the move is under way.
                self._interpolate(block, min(now, block.t0 + block.duration_s / 2.0))
                block.alarm_pending = False
                if self.on_alarm is not None:
                    self.on_alarm(1)
                return
            end = block.t0 + block.duration_s
            if now < end:
                self._interpolate(block, now)
                return
            self._complete(block)
            self.blocks.popleft()
            self._last_end = end

    def _start(self, block: Block, now: float) -> None:
        # Back to back with the previous block when it was already queued; else from when it arrived.
        block.t0 = min(now, max(self._last_end, block.queued_at))
        block.start = self.position()
        if block.kind == "move":
            assert block.target is not None
            travels = math.dist(block.start[:2], block.target[:2]) >= MIN_TRAVEL_MM
            # A piece slips off while it is carried across the table, not while it is lifted.
            if travels and self.world.gripper.holding is not None and self.faults.take("drop"):
                block.drop_pending = True
            if self.faults.take("alarm"):
                block.alarm_pending = True

    def _fraction(self, block: Block, now: float) -> float:
        assert block.t0 is not None
        if block.duration_s <= 0:
            return 1.0
        return min(1.0, max(0.0, (now - block.t0) / block.duration_s))

    def _interpolate(self, block: Block, now: float) -> None:
        if block.target is None or block.start is None:
            return
        f = self._fraction(block, now)
        if block.drop_pending and f >= 0.5:
            self._set(_lerp(block.start, block.target, 0.5))
            self.world.release()
            block.drop_pending = False
        self._set(_lerp(block.start, block.target, f))

    def _complete(self, block: Block) -> None:
        if block.target is not None:
            if block.drop_pending and block.start is not None:
                self._set(_lerp(block.start, block.target, 0.5))
                self.world.release()
                block.drop_pending = False
            self._set(block.target)
        if block.kind == "magnet":
            self.world.set_magnet(block.magnet)
        elif self.world.gripper.magnet:
            self.world.try_pick()
        block.done = True
        if block.on_done is not None:
            block.on_done()

    def _set(self, p: Position) -> None:
        self.world.move_gripper(*p)

    def stop(self, now: float) -> bool:
        """Abort everything queued (reset, alarm): the gripper stays where it is now. Returns whether a
        move or homing was in progress. Deferred replies of dropped blocks are not called."""
        if not self.hold:
            self.tick(now)
        was_moving = self.moving()
        self.blocks.clear()
        self.hold = False
        self._last_end = now
        return was_moving

    def feed_hold(self, now: float) -> None:
        if not self.hold:
            self.tick(now)
            self.hold = True
            self._hold_since = now

    def resume(self, now: float) -> None:
        """Cycle start after a feed hold: the block in progress continues from where it stopped."""
        if self.hold:
            self.hold = False
            paused = now - self._hold_since
            if self.blocks and self.blocks[0].t0 is not None:
                self.blocks[0].t0 += paused
            self._last_end += paused


def _lerp(a: Position, b: Position, f: float) -> Position:
    return (a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f)
