"""The simcam process: subscribes to sim.world (keeps the newest), renders it at ``simcam.fps`` in real
time and publishes ``camera.frame``. No frames are published before the first world arrives (there is
nothing to show). A frame that takes longer than a period makes the clock skip ticks instead of queueing
them; the heartbeat reports the achieved rate and the skipped ticks."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Final

from messages import WorldState
from services.common.shell import Service, run_service

from .core import FrameClock, FrameMaker

#: how often the heartbeat detail (rate, skipped ticks) is refreshed.
_REPORT_PERIOD_S: Final = 1.0
#: a skipped fraction above this marks the process degraded.
_DEGRADED_SKIP_FRACTION: Final = 0.2


class SimCam(Service):
    """The simulated camera: renders sim.world to camera.frame."""

    name = "simcam"

    def __init__(self, config: Any, log: Any | None = None) -> None:
        super().__init__(config, log)
        self.maker = FrameMaker.from_config(config)
        self.world: WorldState | None = None
        self.have_world = asyncio.Event()
        self.published = 0

    async def _listen(self) -> None:
        sub = self.subscribe(["sim.world"])
        while True:
            env = await sub.recv()
            if env is not None and isinstance(env.message, WorldState):
                self.world = env.message
                self.have_world.set()

    async def run(self) -> None:
        listener = asyncio.create_task(self._listen(), name="simcam.listen")
        try:
            self.log.info(
                "waiting for sim.world",
                fps=self.config.simcam.fps,
                camera=repr(self.maker.camera),
                style=self.config.simcam.style,
            )
            await self.have_world.wait()
            clock = FrameClock(1.0 / self.config.simcam.fps, time.monotonic())
            reported = time.monotonic()
            last_published, last_skipped = 0, 0
            while True:
                world = self.world
                assert world is not None
                capture_ns = time.monotonic_ns()
                # rendering releases the GIL in OpenCV; a thread keeps the loop (heartbeats) responsive
                frame = await asyncio.to_thread(self.maker.frame, world, capture_ns)
                await self.pub.publish("camera.frame", frame)
                self.published += 1
                now = time.monotonic()
                await asyncio.sleep(clock.next_delay(now))
                if now >= reported + _REPORT_PERIOD_S:
                    made = self.published - last_published
                    skipped = clock.skipped - last_skipped
                    fraction = skipped / max(1, made + skipped)
                    self.health = "degraded" if fraction > _DEGRADED_SKIP_FRACTION else "ok"
                    self.detail = f"{made / (now - reported):.1f} fps, {clock.skipped} ticks skipped"
                    last_published, last_skipped = self.published, clock.skipped
                    reported = now
        finally:
            listener.cancel()
            await asyncio.gather(listener, return_exceptions=True)


def main(argv: list[str] | None = None) -> int:
    return run_service(SimCam, argv)


if __name__ == "__main__":
    sys.exit(main())
