"""``sanzi calibrate``: the camera-to-table homography, from reference points or from the table's markers.

    sanzi calibrate --point PX PY XMM YMM --point ... [--write FILE]   # four or more points by hand
    sanzi calibrate --image FILE [--write FILE]                        # ArUco markers in a photo
    sanzi calibrate --auto [--write FILE]                              # markers in a frame from the camera

``--auto`` grabs one frame from the configured camera (``camera.source``): from the bus topic
``camera.frame`` when the source is "sim" (the stack must be running), else through OpenCV's
VideoCapture (a device index, a file or a URL). The homography and the reprojection error (RMS and
largest, millimetres) are printed; ``--write FILE`` stores them as ``calibration.homography`` and
``calibration.error_mm`` in the TOML file, keeping everything else in it (other sections, comments). The
written file is checked by loading it before it replaces the old one.

:func:`write_calibration` and :func:`services.actuator.calibration.calibrate_from_image` are what other
tools (``sanzi sim``) call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from services.actuator.calibration import (
    Calibration,
    CalibrationError,
    calibrate_from_image,
    calibrate_from_points,
    frame_to_image,
)
from services.common.config import Config, ConfigError, load

#: how long --auto waits for a frame from the bus or a camera.
FRAME_TIMEOUT_S = 5.0

_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-]+)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"^\s*(homography|error_mm)\s*=")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--point",
        nargs=4,
        type=float,
        action="append",
        metavar=("PX", "PY", "XMM", "YMM"),
        help="a reference point: image pixel (PX, PY) is table position (XMM, YMM); four or more",
    )
    source.add_argument("--image", metavar="FILE", help="find the table's ArUco markers in this image")
    source.add_argument("--auto", action="store_true", help="grab a frame from the configured camera")
    parser.add_argument("--write", metavar="FILE", help="store the result in this TOML configuration file")


def run(args: argparse.Namespace) -> int:
    try:
        config = load(args.config)
    except ConfigError as exc:
        print(f"sanzi calibrate: {exc}", file=sys.stderr)
        return 2
    try:
        if args.point:
            cal = calibrate_from_points(
                [(p[0], p[1]) for p in args.point], [(p[2], p[3]) for p in args.point]
            )
        else:
            image = _read_image(args.image) if args.image else grab_frame(config)
            cal = calibrate_from_image(image, config.table)
    except CalibrationError as exc:
        print(f"sanzi calibrate: {exc}", file=sys.stderr)
        return 1
    print(report(cal))
    if args.write:
        try:
            write_calibration(args.write, cal)
        except (OSError, ConfigError) as exc:
            print(f"sanzi calibrate: not written: {exc}", file=sys.stderr)
            return 1
        print(f"written to {args.write}")
    return 0


def report(cal: Calibration) -> str:
    """What the calibration is, for people."""
    h = cal.matrix()
    rows = "\n".join("  [" + ", ".join(f"{v: .9g}" for v in row) + "]" for row in h)
    lines = [
        "homography (image px -> table mm):",
        rows,
        f"reprojection error: {cal.error_mm:.3f} mm RMS, {cal.max_error_mm:.3f} mm largest,"
        f" over {cal.points} points",
    ]
    if cal.markers:
        lines.append(f"markers used: {', '.join(map(str, cal.markers))}")
    if cal.missing:
        lines.append(f"markers not found: {', '.join(map(str, cal.missing))}")
    return "\n".join(lines)


def _read_image(path: str) -> np.ndarray:
    import cv2

    image = cv2.imread(path, cv2.IMREAD_COLOR)
    if image is None:
        raise CalibrationError(f"cannot read an image from {path}")
    return image


def grab_frame(config: Config) -> np.ndarray:
    """One frame from the configured camera. :raises CalibrationError: when none comes in time."""
    source = config.camera.source
    if source == "sim":
        return asyncio.run(_frame_from_bus(config))
    import cv2

    cap = cv2.VideoCapture(int(source) if source.isdigit() else source)
    try:
        if not cap.isOpened():
            raise CalibrationError(f"cannot open camera {source!r}")
        cap.set(cv2.CAP_PROP_FRAME_WIDTH, config.camera.width)
        cap.set(cv2.CAP_PROP_FRAME_HEIGHT, config.camera.height)
        for _ in range(5):  # the first frames of many cameras are dark while exposure settles
            ok, image = cap.read()
        if not ok or image is None:
            raise CalibrationError(f"camera {source!r} gave no frame")
        return image
    finally:
        cap.release()


async def _frame_from_bus(config: Config) -> np.ndarray:
    import zmq.asyncio

    from services.bus.client import Subscriber

    ctx = zmq.asyncio.Context()
    sub = Subscriber(ctx, config.bus, ["camera.frame"], name="calibrate")
    try:
        env = await sub.recv(timeout=FRAME_TIMEOUT_S)
        if env is None:
            raise CalibrationError(
                f"no camera.frame on the bus within {FRAME_TIMEOUT_S:g} s: is the stack (simcam) running?"
            )
        return frame_to_image(env.message)
    finally:
        sub.close()
        ctx.term()


# -- writing the configuration ---------------------------------------------------------------------


def calibration_lines(cal: Calibration) -> list[str]:
    values = ", ".join(repr(float(v)) for v in cal.homography)
    return [f"homography = [{values}]", f"error_mm = {round(cal.error_mm, 6)!r}"]


def update_toml(text: str, cal: Calibration) -> str:
    """``text`` with ``[calibration]``'s homography and error_mm set to ``cal``; everything else kept.

    Existing ``homography``/``error_mm`` keys of the section are replaced (a multi-line array too);
    a missing section is appended.
    """
    lines = text.splitlines()
    out: list[str] = []
    section = ""
    inserted = False
    skipping_array = 0
    for line in lines:
        if skipping_array:
            skipping_array += line.count("[") - line.count("]")
            continue
        m = _HEADER.match(line)
        if m:
            section = m.group(1)
            out.append(line)
            if section == "calibration" and not inserted:
                out += calibration_lines(cal)
                inserted = True
            continue
        if section == "calibration" and _KEY.match(line):
            value = line.split("=", 1)[1].split("#", 1)[0]
            skipping_array = max(0, value.count("[") - value.count("]"))
            continue
        out.append(line)
    if not inserted:
        if out and out[-1].strip():
            out.append("")
        out += ["[calibration]", *calibration_lines(cal)]
    return "\n".join(out) + "\n"


def write_calibration(path: str | os.PathLike[str], cal: Calibration) -> None:
    """Store ``cal`` in the TOML file ``path`` (created if absent), atomically; the new text is loaded
    as a configuration first, so a file that would not load is never written.
    :raises ConfigError: if the result does not load; :raises OSError: on a write failure."""
    target = Path(path)
    text = target.read_text() if target.exists() else ""
    new = update_toml(text, cal)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(new)
            f.flush()
            os.fsync(f.fileno())
        loaded = load(tmp)
        if list(loaded.calibration.homography) != [float(v) for v in cal.homography]:
            raise ConfigError(f"{target}: the calibration did not read back as written")
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
