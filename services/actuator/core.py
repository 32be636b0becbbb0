"""The actuator's core: carries out :class:`messages.ActuatorCommand` objects on a
:class:`~services.actuator.controller.MotionController`, at most once per command id.

For each command: answer from the record if the id is known (``repeat=True``, nothing moves); else plan
it (:mod:`.planner`), record it as started, report ``accepted``, make sure the controller is fit to move
(alarm policy below), run the steps, record the outcome, report ``done`` with the measured duration and
whether it kept to the placement budget, or ``failed`` with the reason.

Alarm policy ("never move blindly"): an alarm, or a controller whose position is lost, is reported and
the command fails. Before the next command the core recovers only in a way that restores the position:
a reset and a homing cycle (``actuator.home_after_alarm``). A start-up lock with no alarm behind it is
cleared with an unlock only on machines configured without homing (``actuator.unlock_start_lock``).
Otherwise commands fail until a person homes or unlocks the machine.

No bus here: the service passes an ``emit`` coroutine and feeds vision's observations in.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from messages import ActuatorCommand, ActuatorEvent, BoardObservation, BoardPose

from . import planner as pl
from .controller import ControllerAlarm, ControllerError, MotionController, Status
from .geometry import GeometryError, as_matrix
from .record import ActuatorRecord, Outcome, RecordError

if TYPE_CHECKING:
    from services.common.config import Config

Emit = Callable[[ActuatorEvent], Awaitable[None]]


class ActuatorCore:
    """Executes commands one at a time. ``config`` is the whole configuration (sections actuator, table,
    calibration are read). ``clock`` is monotonic seconds (durations); ``wall_clock`` is seconds since
    the epoch (when each outcome was recorded). The core reads no clock of its own."""

    def __init__(
        self,
        controller: MotionController,
        config: Config,
        record: ActuatorRecord,
        *,
        log: Any,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.controller = controller
        self.cfg = config.actuator
        self.table = config.table
        self.record = record
        self.log = log
        self.clock = clock
        self.wall_clock = wall_clock
        self.motion = pl.Motion.from_config(self.cfg)
        self.calibration: np.ndarray | None = None
        self.calibration_problem = ""
        try:
            if config.calibration.homography:
                self.calibration = as_matrix(config.calibration.homography, "calibration.homography")
        except GeometryError as exc:
            self.calibration_problem = str(exc)
            log.error("bad calibration", error=str(exc))
        self.pose: BoardPose | None = None
        self.pose_frame = -1
        #: the command being carried out now (its id), "" when idle.
        self.current = ""
        #: durations of completed placements (place/move/return), seconds, for the record and the bench.
        self.durations: list[float] = []

    # -- inputs --------------------------------------------------------------------------------------

    def observe(self, obs: BoardObservation) -> None:
        """Remember the newest usable board pose vision reported (found, not occluded, no problem)."""
        if obs.found and obs.pose is not None and not obs.occluded and not obs.problem:
            self.pose, self.pose_frame = obs.pose, obs.frame_id

    # -- commands ------------------------------------------------------------------------------------

    def _event(self, cmd: ActuatorCommand, status: str, **fields: Any) -> ActuatorEvent:
        return ActuatorEvent(
            command_id=cmd.command_id,
            status=status,  # type: ignore[arg-type]
            kind=cmd.kind,
            supply_black=self.record.remaining("black"),
            supply_white=self.record.remaining("white"),
            **fields,
        )

    def _from_record(self, cmd: ActuatorCommand, outcome: Outcome) -> ActuatorEvent:
        if outcome.status == "done":
            return self._event(
                cmd,
                "done",
                duration_s=outcome.duration_s,
                repeat=True,
                within_budget=outcome.duration_s <= self.cfg.placement_budget_s,
            )
        if outcome.status == "started" and cmd.command_id == self.current:
            return self._event(cmd, "accepted", repeat=True, reason="being carried out now")
        return self._event(cmd, "failed", reason=outcome.reason or "interrupted", repeat=True)

    def answer_query(self, cmd: ActuatorCommand) -> ActuatorEvent:
        """What became of ``cmd.command_id`` (a ``query`` command); never moves."""
        outcome = self.record.outcome(cmd.command_id)
        if outcome is None:
            return self._event(cmd, "unknown", reason="no such command id in the record")
        return self._from_record(cmd, outcome)

    async def execute(self, cmd: ActuatorCommand, emit: Emit) -> ActuatorEvent:
        """Carry out ``cmd`` (or answer it from the record); ``emit`` every event; return the last one."""
        if cmd.kind == "query":
            event = self.answer_query(cmd)
            await emit(event)
            return event
        known = self.record.outcome(cmd.command_id)
        if known is not None:
            if known.status == "started" and cmd.command_id != self.current:
                # Begun before a restart and never finished: the piece may be anywhere (in the gripper,
                # on the square). Doing it again could place a second piece; report it instead.
                known = Outcome(
                    status="failed",
                    kind=cmd.kind,
                    reason="interrupted by a restart of the actuator; not repeated (check the board)",
                    time=self.wall_clock(),
                )
                self.record.set_outcome(cmd.command_id, known)
                self._save()
            self.log.info("command already handled", command=cmd.command_id, outcome=known.status)
            event = self._from_record(cmd, known)
            await emit(event)
            return event
        if cmd.reset_supply:
            self.record.refill_all()
        self.current = cmd.command_id
        try:
            return await self._run(cmd, emit)
        finally:
            self.current = ""

    async def _fail(self, cmd: ActuatorCommand, emit: Emit, reason: str, t0: float | None) -> ActuatorEvent:
        duration = 0.0 if t0 is None else self.clock() - t0
        self.log.warning("command failed", command=cmd.command_id, kind=cmd.kind, reason=reason)
        self.record.set_outcome(
            cmd.command_id,
            Outcome(
                status="failed", kind=cmd.kind, reason=reason, duration_s=duration, time=self.wall_clock()
            ),
        )
        try:
            self._save()
        except RecordError as exc:
            self.log.error("cannot record the failure", error=str(exc))
        event = self._event(cmd, "failed", reason=reason, duration_s=round(duration, 3))
        await emit(event)
        return event

    def _save(self) -> None:
        self.record.save()

    async def _run(self, cmd: ActuatorCommand, emit: Emit) -> ActuatorEvent:
        pose = cmd.pose or self.pose
        try:
            start = await self._start_position()
        except ControllerError as exc:
            return await self._fail(cmd, emit, str(exc), None)
        try:
            plan = pl.plan_command(
                cmd,
                start=start,
                pose=pose,
                calibration=self.calibration,
                table=self.table,
                record=self.record,
                motion=self.motion,
            )
        except pl.PlanError as exc:
            reason = str(exc)
            if self.calibration_problem and "calibration" in reason:
                reason = f"{reason} ({self.calibration_problem})"
            return await self._fail(cmd, emit, reason, None)
        self.record.set_outcome(
            cmd.command_id, Outcome(status="started", kind=cmd.kind, time=self.wall_clock())
        )
        try:
            self._save()
        except RecordError as exc:
            # Without a durable record a repeat could not be recognised: do not move.
            return await self._fail(cmd, emit, str(exc), None)
        t0 = self.clock()
        await emit(self._event(cmd, "accepted"))
        self.log.info(
            "command accepted",
            command=cmd.command_id,
            plan=plan.description,
            estimate_s=round(pl.estimate_s(plan.steps, start), 2),
        )
        try:
            if cmd.kind != "home" and await self._ensure_ready():
                # Recovery moved the machine (homing): plan again from where it is now.
                plan = pl.plan_command(
                    cmd,
                    start=await self._start_position(),
                    pose=pose,
                    calibration=self.calibration,
                    table=self.table,
                    record=self.record,
                    motion=self.motion,
                )
            await self.run_steps(plan.steps)
        except (ControllerError, RecordError, pl.PlanError) as exc:
            return await self._fail(cmd, emit, str(exc), t0)
        duration = self.clock() - t0
        within = duration <= self.cfg.placement_budget_s
        self.record.set_outcome(
            cmd.command_id,
            Outcome(status="done", kind=cmd.kind, duration_s=duration, time=self.wall_clock()),
        )
        try:
            self._save()
        except RecordError as exc:
            self.log.error("cannot record the outcome", error=str(exc))
        if cmd.kind != "home":
            self.durations.append(duration)
        log = self.log.info if within else self.log.warning
        log(
            "command done",
            command=cmd.command_id,
            kind=cmd.kind,
            duration_s=round(duration, 3),
            budget_s=self.cfg.placement_budget_s,
            within_budget=within,
        )
        event = self._event(cmd, "done", duration_s=round(duration, 3), within_budget=within)
        await emit(event)
        return event

    async def _start_position(self) -> tuple[float, float, float]:
        status = await self.controller.status()
        return status.x_mm, status.y_mm, status.z_mm

    # -- readiness and execution ---------------------------------------------------------------------

    async def startup(self) -> Status:
        """After connecting: home when configured, else apply the alarm policy. Returns the status."""
        if self.cfg.home_on_start:
            self.log.info("homing at start")
            await self.controller.home()
            return await self.controller.wait_idle(self.cfg.homing_timeout_s)
        await self._ensure_ready()
        return await self.controller.status()

    async def _ensure_ready(self) -> bool:
        """Make sure the controller may move: recover from an alarm only by homing, or refuse. Returns
        whether the machine moved to recover.

        :raises ControllerAlarm: with what a person should do, when it may not move.
        """
        ctl = self.controller
        status = await ctl.status()
        if not (status.in_alarm or ctl.alarm or ctl.position_lost):
            return False
        what = ctl.alarm_text or f"controller state {status.state}"
        start_lock_only = status.in_alarm and not ctl.alarm
        if start_lock_only and self.cfg.unlock_start_lock and not self.cfg.home_after_alarm:
            self.log.warning("clearing the start-up lock without homing (unlock_start_lock)", what=what)
            await ctl.unlock()
            ctl.position_lost = False
            return False
        if not self.cfg.home_after_alarm:
            raise ControllerAlarm(
                f"{what}: not moving; home the machine (`sanzi motion home`) or, if its position is known "
                "to be right, unlock it (`sanzi motion unlock`)",
                ctl.alarm,
            )
        self.log.warning("recovering from alarm: reset and home", what=what)
        await ctl.reset()
        await ctl.home()
        status = await ctl.wait_idle(self.cfg.homing_timeout_s)
        if status.in_alarm:
            raise ControllerAlarm(f"still in alarm after homing: {status}", ctl.alarm)
        return True

    async def run_steps(self, steps: tuple[pl.Step, ...] | list[pl.Step]) -> Status | None:
        """Send ``steps`` to the controller in order. After each wait, check the machine stopped where
        the last move said. :raises ControllerError: on any failure (nothing more is sent)."""
        ctl = self.controller
        target: tuple[float, float, float] | None = None
        status: Status | None = None
        for step in steps:
            match step:
                case pl.MoveStep(x=x, y=y, z=z, feed=feed):
                    await ctl.move_to(x, y, z, feed)
                    target = (x, y, z)
                case pl.WaitStep():
                    status = await ctl.wait_idle(self.cfg.motion_timeout_s)
                    if target is not None and status.distance_to(*target) > self.cfg.position_tolerance_mm:
                        raise ControllerError(
                            f"the machine stopped at {_xyz(status.x_mm, status.y_mm, status.z_mm)}"
                            f" instead of {_xyz(*target)}"
                        )
                case pl.MagnetStep(on=on):
                    await ctl.magnet(on)
                case pl.DwellStep(seconds=seconds):
                    await ctl.dwell(seconds)
                case pl.HomeStep():
                    # GRBL refuses $H unless idle (error:8): let any motion still queued finish first.
                    await ctl.wait_idle(self.cfg.motion_timeout_s)
                    await ctl.home()
                    target = None
                case pl.SupplyStep(colour=colour, slot=slot, taken=taken):
                    if taken:
                        self.record.take(colour, slot)
                    else:
                        self.record.fill(colour, slot)
                    self._save()
        return status


def _xyz(x: float, y: float, z: float) -> str:
    return f"({x:.2f}, {y:.2f}, {z:.2f})"
