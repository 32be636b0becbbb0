"""Camera frames: raw pixels, newest-wins on the bus."""

from __future__ import annotations

from .base import Message


class CameraFrame(Message, frozen=True):
    """One image from a camera (real or simulated). ``data`` is row-major, ``encoding`` says the layout."""

    frame_id: int
    width: int
    height: int
    data: bytes
    #: "bgr8" (3 bytes per pixel, OpenCV's order) or "jpeg" (a compressed image).
    encoding: str = "bgr8"
    #: CLOCK_MONOTONIC nanoseconds when the image was captured.
    capture_ns: int = 0
    #: where it came from: "sim", "/dev/video0", a file path or URL.
    source: str = ""
