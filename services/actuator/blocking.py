"""A blocking wrapper around an asyncio :class:`MotionController`, for `sanzi motion` and scripts.

Like python-chess's ``SimpleEngine``: the asyncio core does the work; this class owns a private event
loop and runs each call to completion on it, in the calling thread. Between calls the loop is idle and
bytes from the controller wait in the operating system's buffer, which is fine for a tool that only
talks when spoken to. Use it as a context manager so the port is closed::

    with BlockingController.open(config.actuator, port="/dev/ttyUSB0", protocol="grbl") as m:
        m.home()
        m.move_to(100, 50, 20, feed=3000)
        print(m.wait_idle())
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from . import planner as pl
from .controller import MotionController, Status
from .drivers import make_controller

T = TypeVar("T")


class BlockingController:
    """Blocking calls on a :class:`MotionController`. Not thread-safe: one thread uses it."""

    def __init__(self, controller: MotionController, motion: pl.Motion | None = None) -> None:
        self.controller = controller
        self.motion = motion or pl.Motion()
        self._loop = asyncio.new_event_loop()

    @classmethod
    def open(
        cls, actuator: Any, *, port: str | None = None, protocol: str | None = None, reset: bool = False
    ) -> BlockingController:
        """Make the configured driver (``port``/``protocol`` override) and connect it, without resetting
        the controller unless ``reset``. :raises ControllerError: when it cannot connect."""
        controller = make_controller(actuator, port=port, protocol=protocol, reset_on_connect=reset)
        self = cls(controller, pl.Motion.from_config(actuator))
        try:
            self.connect()
        except BaseException:
            self.close()
            raise
        return self

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._loop.run_until_complete(coro)

    def connect(self) -> str:
        return self._run(self.controller.connect())

    def close(self) -> None:
        if not self._loop.is_closed():
            self._run(self.controller.close())
            self._loop.close()

    def __enter__(self) -> BlockingController:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the interface, blocking -----------------------------------------------------------------------

    def home(self) -> Status:
        self._run(self.controller.home())
        return self.wait_idle()

    def move_to(self, x: float, y: float, z: float, feed: float | None = None) -> None:
        self._run(self.controller.move_to(x, y, z, feed))

    def magnet(self, on: bool) -> None:
        self._run(self.controller.magnet(on))

    def dwell(self, seconds: float) -> None:
        self._run(self.controller.dwell(seconds))

    def status(self) -> Status:
        return self._run(self.controller.status())

    def wait_idle(self, timeout: float | None = None) -> Status:
        return self._run(self.controller.wait_idle(timeout))

    def unlock(self) -> None:
        self._run(self.controller.unlock())

    def reset(self) -> None:
        self._run(self.controller.reset())

    def raw(self, line: str) -> list[str]:
        return self._run(self.controller.raw(line))

    # -- composite moves ---------------------------------------------------------------------------

    def goto(self, x: float, y: float, z: float | None = None) -> Status:
        """Rise to the travel height, travel, then descend to ``z`` (default: stay at travel height)."""
        steps: list[pl.Step] = [*pl.rise_steps(self._where(), self.motion)]
        m = self.motion
        steps.append(pl.MoveStep(x, y, m.travel_z, m.feed_xy, "travel"))
        if z is not None and abs(z - m.travel_z) > pl.Z_EPSILON_MM:
            steps.append(pl.MoveStep(x, y, z, m.feed_z, "descend"))
        steps.append(pl.WaitStep())
        return self.run_steps(steps)

    def pick(self, x: float, y: float) -> Status:
        """Pick up the piece at (x, y): the first half of a placement."""
        return self.run_steps(
            [*pl.rise_steps(self._where(), self.motion), *pl.pick_steps((x, y), self.motion), pl.WaitStep()]
        )

    def place(self, x: float, y: float) -> Status:
        """Put the held piece down at (x, y): the second half of a placement."""
        return self.run_steps(
            [*pl.rise_steps(self._where(), self.motion), *pl.drop_steps((x, y), self.motion)]
        )

    def _where(self) -> tuple[float, float, float]:
        s = self.status()
        return s.x_mm, s.y_mm, s.z_mm

    def run_steps(self, steps: list[pl.Step]) -> Status:
        return self._run(run_steps(self.controller, steps))


async def run_steps(controller: MotionController, steps: list[pl.Step]) -> Status:
    """Send motion steps in order (no bookkeeping steps allowed); returns the last status."""
    status = await controller.status()
    for step in steps:
        match step:
            case pl.MoveStep(x=x, y=y, z=z, feed=feed):
                await controller.move_to(x, y, z, feed)
            case pl.WaitStep():
                status = await controller.wait_idle()
            case pl.MagnetStep(on=on):
                await controller.magnet(on)
            case pl.DwellStep(seconds=seconds):
                await controller.dwell(seconds)
            case pl.HomeStep():
                await controller.home()
            case _:
                raise TypeError(f"not a motion step: {step!r}")
    return status
