"""Camera frames (raw pixels, newest-wins on the bus) and what vision asks of the camera."""

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


class CameraControl(Message, frozen=True):
    """Vision's request to the camera that publishes ``camera.frame`` (the simulated one): expose at
    ``exposure`` times its configured exposure (1.0: as configured). Vision meters on the board and lowers
    the exposure while the board's plate is clipped (see :mod:`services.vision.exposure`)."""

    exposure: float = 1.0
