"""On hardware nobody publishes camera.frame: vision passes the frames of its own camera on as
``vision.frame``, and the console shows them with vision's reading of each."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import numpy as np

from messages import CameraFrame
from services.vision.service import VisionService
from services.vision.sources import Frame, FrameSource
from tests.inprocess import bus_sockets, running

from .conftest import console_rig, eventually


class PacedCamera(FrameSource):
    """A camera of grey frames at about 50 fps."""

    name = "paced"

    def __init__(self) -> None:
        self.count = 0

    async def read(self) -> Frame | None:
        await asyncio.sleep(0.02)  # a camera's frame period, not a synchronisation
        self.count += 1
        image = np.full((120, 160, 3), 100, np.uint8)
        return Frame(image=image, frame_id=self.count, capture_ns=time.monotonic_ns(), source=self.name)


async def test_vision_passes_its_cameras_frames_on_and_the_console_shows_them(bus: Any) -> None:
    vision = VisionService(bus, source=PacedCamera())
    async with running(vision) as (task,), bus_sockets(bus.bus) as sockets:
        sub = sockets.subscriber(["vision.frame"])
        env = None
        deadline = time.monotonic() + 10
        while env is None or not isinstance(env.message, CameraFrame):
            assert time.monotonic() < deadline, "no frame on vision.frame"
            env = await sub.recv(timeout=0.5)
        frame = env.message
        assert (frame.width, frame.height, frame.encoding) == (160, 120, "bgr8")
        assert len(frame.data) == 160 * 120 * 3
        assert frame.capture_ns > 0 and frame.source == "paced"
        async with console_rig(bus, sim=False) as rig:
            rig.console.watch()
            await eventually(
                lambda: rig.console.pairer.newest is not None and rig.console.pairer.newest.obs is not None,
                "a frame of vision's camera paired with vision's reading of it",
                timeout=10,
            )
            async with rig.client.get("/camera.jpg") as res:
                assert res.status == 200 and (await res.read())[:2] == b"\xff\xd8"
        assert not task.done()
