"""The vision process: frames in (camera, video file or the simulated camera on the bus), board
observations out.

- ``vision.board``: every processed frame's :class:`messages.BoardObservation`, with its stability flag
  and, while it agrees with a clear window, when that window began (``window_start_ns``; it ends with the
  frame's ``capture_ns``): every new agreeing frame refreshes the stable reading, so the referee judges
  on the first frame after a button press without a new window or ``vision.stable``'s repeat.
- ``vision.stable``: the stable reading when it changes, and again every ``vision.stable_repeat_s`` so a
  restarted referee learns it.
- ``vision.frame``: on hardware (a camera, a video file or a URL, not the bus), every frame read, as it
  was read, for viewers such as the console (dropped at the publisher while nobody subscribes).
- ``camera.control``: on the simulator, the exposure vision asks of the camera: it meters on the board and
  lowers the exposure while the plate is clipped (:mod:`.exposure`; a camera of its own is set through
  its driver).
- The board is remembered across a restart (:mod:`.memory`): written when a stable board is announced,
  read back when the process starts, and confirmed on its lines on the first frame (a board full of
  large pieces that a cold search might not find again is followed on; its squares keep their numbers).
- On an anomaly (a stable reading that disagrees with the referee's board while it waits, or a lost
  board) the annotated frame is saved under ``vision.anomaly_dir`` (at most ``anomaly_max_files``).

The detector runs in a worker thread (OpenCV releases the GIL), so heartbeats and the referee's state
keep flowing while a frame is processed. The logic lives in :mod:`.tracker` and :mod:`.anomaly`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Final

import numpy as np

from messages import BoardObservation, CameraControl, CameraFrame, GameState
from services.common.config import Config
from services.common.log import RateLimiter
from services.common.shell import Service

from .anomaly import AnomalyStore, AnomalyWatch
from .memory import BoardMemory, load_memory, memory_path, save_memory
from .sources import BusSource, FrameSource, SourceError, VideoFileSource, open_source
from .tracker import CoreResult, VisionCore

#: a live camera that fails to deliver this many reads in a row is given up (supervisord restarts us).
MAX_READ_FAILURES: Final = 50
_REPORT_PERIOD_S: Final = 1.0
#: at the end, a memory write in flight is waited for this long at most.
WRITE_GRACE_S: Final = 1.0


class VisionService(Service):
    """Reads the board from the camera."""

    name = "vision"

    def __init__(self, config: Config, log: Any | None = None, source: FrameSource | None = None) -> None:
        super().__init__(config, log)
        self.core = VisionCore.from_config(config.vision)
        self.watch = AnomalyWatch(
            lost_frames=config.vision.lost_frames, min_interval_s=config.vision.anomaly_min_interval_s
        )
        self.store = AnomalyStore(config.vision.anomaly_dir, config.vision.anomaly_max_files)
        self.source = source
        self.processed = 0
        self.anomalies_saved = 0
        self._limiter = RateLimiter(5.0)
        self.memory_file = memory_path(config.vision.memory_file)
        #: the board as last written to (or read from) the memory file.
        self.remembered: BoardMemory | None = None
        #: the remembered board this process started from (None: it started from a cold search).
        self.resumed: BoardMemory | None = None
        self.memories_written = 0
        self.memory_errors = 0
        #: the newest board to remember, not yet handed to the writer, and the writer (one at a time).
        self._unwritten: BoardMemory | None = None
        self._queued: BoardMemory | None = None
        self._writer: asyncio.Task[None] | None = None

    async def _follow_referee(self) -> None:
        sub = self.subscribe(["referee.state"])
        while True:
            env = await sub.recv()
            if env is not None and isinstance(env.message, GameState):
                current = self.watch.referee
                if current is None or env.message.revision >= current.revision or env.message.revision == 0:
                    self.watch.referee = env.message

    async def _repeat_stable(self) -> None:
        period = self.config.vision.stable_repeat_s
        while True:
            await asyncio.sleep(period)
            obs = self.core.stable_observation
            if obs is not None:
                await self.pub.publish("vision.stable", obs)

    async def _handle(self, result: CoreResult, image: Any, frame_id: int) -> None:
        await self.pub.publish("vision.board", result.observation)
        if result.changed or result.moved:
            stable: BoardObservation = result.observation
            pose = stable.pose
            self.log.info(
                "stable board" if result.changed else "stable board moved",
                board=stable.board,
                frame=frame_id,
                agreeing=stable.agreeing_frames,
                angle=round(pose.angle_deg, 2) if pose else None,
            )
            await self.pub.publish("vision.stable", stable)
        obs = result.observation
        anomaly = self.watch.check(obs.found, obs.stable, obs.board, time.monotonic())
        if anomaly is None:
            return
        try:
            path = await asyncio.to_thread(self.store.save, image, result.detection, anomaly, frame_id)
        except OSError as exc:
            self.last_error = str(exc)
            self.log.warning("cannot save anomaly frame", error=str(exc))
            return
        self.anomalies_saved += 1
        self.log.warning("anomaly", kind=anomaly.kind, detail=anomaly.detail, saved=str(path))

    def _resume(self, image: Any) -> None:
        """Before the first frame: start from the board remembered before the restart, if any was, seen
        by a camera of this frame's size."""
        memory = self.remembered
        if memory is None:
            return
        size = (image.shape[1], image.shape[0])
        if tuple(memory.frame_size) != size:
            self.log.info(
                "the remembered board was seen in frames of another size; searching afresh",
                remembered=list(memory.frame_size),
                now=list(size),
            )
            return
        self.core.tracker.resume(memory)
        self.resumed = memory
        self.log.info(
            "board remembered from before the restart; confirming it on its lines",
            center=[round(memory.pose.center_px.x, 1), round(memory.pose.center_px.y, 1)],
            angle=round(memory.pose.angle_deg, 2),
            age_s=round(time.time() - memory.saved_at, 1),
        )

    def _remember(self, image: Any) -> None:
        """Have the board written to the memory file when it is not what the file holds or is about to
        (after a stable board was announced). The write runs beside the frames (an fsync on an SD card
        can take a tenth of a second, and the frames after a new stable board are the ones a button
        press is judged on); a newer board waiting replaces an older one not yet written."""
        if self.memory_file is None:
            return
        memory = self.core.tracker.memory((image.shape[1], image.shape[0]), saved_at=time.time())
        if memory is None or memory.same_board(self._queued or self.remembered):
            return
        self._unwritten = self._queued = memory
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_memories(), name="vision.memory")

    async def _write_memories(self) -> None:
        """Write the boards handed over until none waits. A failed write is reported and costs nothing
        else: the game goes on."""
        assert self.memory_file is not None
        while (memory := self._unwritten) is not None:
            self._unwritten = None
            try:
                await asyncio.to_thread(save_memory, self.memory_file, memory)
            except OSError as exc:
                self.memory_errors += 1
                allowed, held = self._limiter.allow("memory")
                if allowed:
                    self.log.warning(
                        "cannot remember the board",
                        path=str(self.memory_file),
                        error=str(exc),
                        held_back=held,
                    )
                continue
            self.remembered = memory
            self.memories_written += 1

    async def _ask_camera(self, request: CameraControl) -> None:
        await self.pub.publish("camera.control", request)

    async def _meter(self, source: FrameSource, factor: float, plate_top: float) -> None:
        """Apply the exposure the core asks for (:mod:`.exposure`); a source that cannot is not asked
        again, and frames of a clipped plate are then read as they come."""
        before = self.core.exposure.factor
        if await source.set_exposure(factor):
            self.log.info("exposure", factor=round(factor, 3), plate_was=round(plate_top, 1))
            return
        self.core.exposure.controllable = False
        self.log.warning(
            "the camera's exposure cannot be changed: a white piece on a clipped plate may be missed",
            source=source.name,
            factor_was=round(before, 3),
        )

    async def _pass_on(self, frame: Any) -> None:
        """Publish a frame read from our own camera on ``vision.frame`` for viewers (the console); the
        bus drops it at the publisher while nobody subscribes."""
        image = frame.image
        height, width = image.shape[:2]
        data = image.tobytes() if image.ndim == 3 else np.repeat(image[:, :, None], 3, axis=2).tobytes()
        message = CameraFrame(
            frame_id=frame.frame_id,
            width=width,
            height=height,
            data=data,
            capture_ns=frame.capture_ns,
            source=frame.source,
        )
        await self.pub.publish("vision.frame", message)

    async def run(self) -> None:
        if self.source is None:
            try:
                self.source = open_source(self.config.camera, self.subscribe, self._ask_camera)
            except SourceError as exc:
                self.health, self.last_error = "fault", str(exc)
                raise
        if self.memory_file is not None:
            self.remembered = await asyncio.to_thread(load_memory, self.memory_file, self.log)
        source = self.closing(self.source)
        live = not isinstance(source, BusSource)
        tasks = [
            asyncio.create_task(self._follow_referee(), name="vision.referee"),
            asyncio.create_task(self._repeat_stable(), name="vision.repeat"),
        ]
        self.log.info("reading frames", source=source.name, stable_frames=self.config.vision.stable_frames)
        failures = 0
        reported, last_count = time.monotonic(), 0
        try:
            while True:
                frame = await source.read()
                if frame is None:
                    if isinstance(source, VideoFileSource):
                        self.log.info("video file ended", frames=self.processed)
                        self.health, self.detail = "degraded", "video file ended"
                        await asyncio.Event().wait()  # keep re-publishing the stable reading
                    if not live:
                        continue  # the simulated camera is idle; keep waiting
                    failures += 1
                    if failures >= MAX_READ_FAILURES:
                        raise SourceError(f"camera {source.name!r} stopped delivering frames")
                    await asyncio.sleep(0.02)
                    continue
                failures = 0
                if self.processed == 0:
                    self._resume(frame.image)
                if live:
                    await self._pass_on(frame)
                result = await asyncio.to_thread(
                    self.core.process, frame.image, frame.frame_id, frame.capture_ns
                )
                self.processed += 1
                if self.processed == 1 and not live and self.core.exposure.controllable:
                    # The simulated camera outlives us: the exposure an earlier vision asked of it is
                    # undone, so that it and our controller start from the same (configured) one.
                    await source.set_exposure(self.core.exposure.factor)
                if result.exposure is not None:
                    await self._meter(source, result.exposure, result.detection.extra.get("plate_top", 0.0))
                await self._handle(result, frame.image, frame.frame_id)
                if result.changed or result.moved:
                    self._remember(frame.image)
                now = time.monotonic()
                if now - reported >= _REPORT_PERIOD_S:
                    rate = (self.processed - last_count) / (now - reported)
                    obs = result.observation
                    self.detail = f"{rate:.1f} fps, board {obs.board}, {obs.processing_ms:.1f} ms/frame"
                    if self.core.exposure.factor != 1.0:
                        self.detail += f", exposure x{self.core.exposure.factor:.2f} (metered on the board)"
                    if self.core.tracker.on_probation:
                        self.detail += ", the board remembered from before the restart not yet seen"
                    self.health = "ok" if obs.found else "degraded"
                    reported, last_count = now, self.processed
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if (writer := self._writer) is not None:
                # A write in flight is let finish (a few ms): it is atomic either way, but a board the
                # process saw last is worth keeping for the next one.
                await asyncio.wait({writer}, timeout=WRITE_GRACE_S)
                writer.cancel()
                await asyncio.gather(writer, return_exceptions=True)
