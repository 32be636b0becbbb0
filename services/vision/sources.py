"""Camera sources behind one interface: a camera through OpenCV (device index, path or URL), a video
file, or the simulated camera's frames on the bus.

Every source is an object with ``async read() -> Frame | None`` (None: the stream ended) and
``close()``. Blocking OpenCV calls run in a worker thread so the service's loop stays responsive.
:func:`open_source` picks the source from ``config.camera.source``.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

import cv2
import numpy as np

from messages import CameraControl, CameraFrame

from .config import CameraConfig

#: V4L2's exposure modes as OpenCV passes them on: manual, and automatic ("aperture priority").
V4L2_MANUAL_EXPOSURE: Final = 1
V4L2_AUTO_EXPOSURE: Final = 3
#: file name endings read as video files rather than as a camera device path.
VIDEO_SUFFIXES: Final = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg")


class SourceError(RuntimeError):
    """A source that cannot be opened or read (no such device, unreadable file, bad frame data)."""


@dataclass(frozen=True)
class Frame:
    """One image and where and when it came from."""

    image: np.ndarray
    frame_id: int
    #: CLOCK_MONOTONIC nanoseconds at capture (or at arrival when the source does not say).
    capture_ns: int
    source: str


def decode_camera_frame(msg: CameraFrame) -> np.ndarray:
    """The BGR image of a :class:`messages.CameraFrame`. :raises SourceError: on malformed data."""
    if msg.encoding == "bgr8":
        expected = msg.width * msg.height * 3
        if msg.width <= 0 or msg.height <= 0 or len(msg.data) != expected:
            raise SourceError(
                f"bgr8 frame {msg.frame_id}: {len(msg.data)} bytes for {msg.width}x{msg.height} "
                f"(expected {expected})"
            )
        return np.frombuffer(msg.data, np.uint8).reshape(msg.height, msg.width, 3)
    if msg.encoding == "jpeg":
        image = cv2.imdecode(np.frombuffer(msg.data, np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise SourceError(f"jpeg frame {msg.frame_id} cannot be decoded")
        return image
    raise SourceError(f"frame {msg.frame_id}: unknown encoding {msg.encoding!r} (bgr8 or jpeg)")


class FrameSource(ABC):
    """Where frames come from."""

    name: str = ""

    @abstractmethod
    async def read(self) -> Frame | None:
        """The next (for live sources: the newest) frame, or None when the stream has ended."""

    def close(self) -> None:  # noqa: B027 (optional for sources that hold nothing)
        """Release the device, file or socket."""

    async def set_exposure(self, factor: float) -> bool:
        """Expose at ``factor`` times the configured exposure (1.0: as configured, or the camera's own
        automatic one) from the next frames on; false when this source cannot (a video file)."""
        return False


class OpenCVSource(FrameSource):
    """A camera through ``cv2.VideoCapture``: a device index ("0"), a device path or a stream URL.

    Resolution, frame rate and exposure are requested from the driver (it may not honour them; the
    frames say what it delivered). The driver's queue is kept to one frame so a slow reader gets the
    newest image, not a backlog.
    """

    def __init__(
        self,
        spec: str,
        *,
        width: int = 640,
        height: int = 480,
        fps: float = 30.0,
        exposure: float = -1.0,
        capture: Any | None = None,
    ) -> None:
        self.name = spec
        target: int | str = int(spec) if spec.isdigit() else spec
        self._cap = capture if capture is not None else cv2.VideoCapture(target)
        if not self._cap.isOpened():
            raise SourceError(f"cannot open camera {spec!r} (no such device, or busy, or unreadable)")
        self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        self._cap.set(cv2.CAP_PROP_FPS, fps)
        self._cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        if exposure >= 0:
            self._cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_MANUAL_EXPOSURE)
            self._cap.set(cv2.CAP_PROP_EXPOSURE, exposure)
        self._configured_exposure = exposure
        #: the exposure a factor of 1.0 stands for, in the driver's units (known at the first request).
        self._base_exposure: float | None = None
        self._count = 0

    def _read_blocking(self) -> Frame | None:
        ok, image = self._cap.read()
        if not ok or image is None:
            return None
        self._count += 1
        return Frame(image, self._count, time.monotonic_ns(), self.name)

    async def read(self) -> Frame | None:
        return await asyncio.to_thread(self._read_blocking)

    def _set_exposure_blocking(self, factor: float) -> bool:
        if self._base_exposure is None:
            # With the camera's own automatic exposure, the one it has settled on is the base, and the
            # camera is switched to manual to hold what vision asks.
            configured = self._configured_exposure
            base = configured if configured >= 0 else float(self._cap.get(cv2.CAP_PROP_EXPOSURE))
            if base == 0.0 or not math.isfinite(base):
                return False  # (the driver does not report an exposure: nothing to scale)
            if configured < 0:
                self._cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_MANUAL_EXPOSURE)
            self._base_exposure = base
        base = self._base_exposure
        # V4L2 counts exposure time in units of 100 us; DirectShow in log2 seconds (negative numbers).
        value = base * factor if base > 0 else base + math.log2(factor)
        return bool(self._cap.set(cv2.CAP_PROP_EXPOSURE, value))

    async def set_exposure(self, factor: float) -> bool:
        return await asyncio.to_thread(self._set_exposure_blocking, factor)

    def close(self) -> None:
        if self._base_exposure is not None and self._configured_exposure < 0:
            # The camera was on its own automatic exposure until vision metered it: leave it so.
            self._cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_AUTO_EXPOSURE)
        self._cap.release()


class VideoFileSource(OpenCVSource):
    """A video file, played at its own frame rate (``realtime``) or as fast as it is read; ``loop``
    starts it again at the end."""

    def __init__(self, path: str, *, realtime: bool = True, loop: bool = False) -> None:
        if not os.path.exists(path):
            raise SourceError(f"no such video file: {path}")
        super().__init__(path, capture=cv2.VideoCapture(path))
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        self.period_s = 1.0 / fps if realtime and fps and fps > 0 else 0.0
        self.loop = loop
        self._next = time.monotonic()

    async def read(self) -> Frame | None:
        if self.period_s:
            delay = self._next - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self._next = max(self._next + self.period_s, time.monotonic())
        frame = await asyncio.to_thread(self._read_blocking)
        if frame is None and self.loop and self._count > 0:
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            frame = await asyncio.to_thread(self._read_blocking)
        return frame

    async def set_exposure(self, factor: float) -> bool:
        return False  # (what was recorded stays as it was recorded)


class BusSource(FrameSource):
    """Frames of the simulated camera (or any publisher of ``camera.frame``) on the bus. The subscriber
    drains its queue, so each read returns the newest frame waiting."""

    def __init__(
        self,
        subscriber: Any,
        *,
        timeout_s: float | None = None,
        control: Callable[[CameraControl], Awaitable[None]] | None = None,
    ) -> None:
        self.name = "bus:camera.frame"
        self._sub = subscriber
        #: publishes a request to the camera (``camera.control``), when the source may make one.
        self._control = control
        self._timeout = timeout_s
        #: frames dropped because their data was malformed.
        self.bad_frames = 0
        self.last_error = ""

    async def read(self) -> Frame | None:
        """The newest frame; None when ``timeout_s`` passes without one (the stream is idle)."""
        while True:
            env = await self._sub.recv(timeout=self._timeout)
            if env is None:
                return None
            msg = env.message
            if not isinstance(msg, CameraFrame):
                continue
            try:
                image = decode_camera_frame(msg)
            except SourceError as exc:
                self.bad_frames += 1
                self.last_error = str(exc)
                continue
            return Frame(image, msg.frame_id, msg.capture_ns or time.monotonic_ns(), msg.source or "sim")

    async def set_exposure(self, factor: float) -> bool:
        """Ask the publisher of the frames on ``camera.control`` (the simulated camera applies it; a
        publisher that does not listen leaves the frames as they are, and the exposure control ends at
        its lowest factor)."""
        if self._control is None:
            return False
        await self._control(CameraControl(exposure=factor))
        return True

    def close(self) -> None:
        self._sub.close()


def is_video_file(spec: str) -> bool:
    return spec.lower().endswith(VIDEO_SUFFIXES) and "://" not in spec


def open_source(
    camera: CameraConfig,
    subscribe: Any | None = None,
    control: Callable[[CameraControl], Awaitable[None]] | None = None,
) -> FrameSource:
    """The source named by ``camera.source`` (a :class:`CameraConfig`): "sim" (frames on the bus, needs
    ``subscribe``, a function of topic prefixes returning a Subscriber, and takes ``control``, which
    publishes the camera's requests), a video file, or anything OpenCV opens (device index, device path,
    URL).

    :raises SourceError: when it cannot be opened.
    """
    spec = str(camera.source).strip()
    if spec == "sim":
        if subscribe is None:
            raise SourceError("camera.source 'sim' needs the bus")
        return BusSource(subscribe(["camera.frame"]), timeout_s=1.0, control=control)
    if is_video_file(spec):
        return VideoFileSource(spec)
    return OpenCVSource(
        spec, width=camera.width, height=camera.height, fps=camera.fps, exposure=camera.exposure
    )
