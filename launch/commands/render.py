"""``sanzi render WORLD.json OUT.png``: render one simulated camera frame from a described world.

The world file's format is documented in docs/world-format.md (a JSON form of the simulator's
WorldState where every field has a default, plus a compact ``"board": "X.O......"``). The camera and
table come from the configuration (``[simcam]``, ``[table]``); the look from ``--style`` (a preset or
``random:N``), else ``simcam.style`` with ``simcam.noise_sigma``; ``--style-set KEY=VALUE`` changes one
field of the style. Exit codes: 0 written, 2 bad input (world, style, configuration, output path).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import cv2
import msgspec

from services.common import config as config_module
from services.simcam.camera import CameraError, CameraModel
from services.simcam.config import SimCamConfig
from services.simcam.core import style_from_config
from services.simcam.renderer import RenderError, renderer_for
from services.simcam.style import RenderStyle, StyleError
from services.simcam.world import WorldFormatError, load_world

#: image formats OpenCV can write that make sense for a frame.
_FORMATS = {".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff"}


class _UsageError(Exception):
    """Bad input from the command line; the message is printed and the exit code is 2."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("world", metavar="WORLD.json", help="the world to render (docs/world-format.md)")
    parser.add_argument("out", metavar="OUT.png", help="the image to write (.png, .jpg, .bmp, .ppm, .tif)")
    parser.add_argument("--seed", type=int, default=None, help="noise seed (default: simcam.seed)")
    parser.add_argument(
        "--style",
        default=None,
        help="look preset: default, clean, dark, harsh, dim, or random:N (default: simcam.style)",
    )
    parser.add_argument(
        "--style-set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="change one style field, e.g. --style-set noise_sigma=0 (JSON value; repeatable)",
    )
    parser.add_argument(
        "--top-view", action="store_true", help="write the table top view (the renderer's canvas) instead"
    )
    parser.add_argument(
        "--print-homography",
        action="store_true",
        help="print the exact image->table homography (row-major, as calibration.homography) as JSON",
    )


def _style(args: argparse.Namespace, simcam: SimCamConfig) -> RenderStyle:
    style = style_from_config(simcam) if args.style is None else RenderStyle.preset(args.style)
    changes: dict[str, Any] = {}
    for item in args.style_set:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise _UsageError(f"--style-set wants KEY=VALUE, got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise _UsageError(f"--style-set {key}: {raw!r} is not a JSON value") from None
        changes[key] = tuple(value) if isinstance(value, list) else value
    return style.replace(**changes) if changes else style


def _write_image(path: Path, image: Any) -> None:
    """Encode, then write atomically (a failed run never leaves half a file)."""
    suffix = path.suffix.lower()
    if suffix not in _FORMATS:
        known = ", ".join(sorted(_FORMATS))
        raise _UsageError(f"{path}: unknown image format {suffix!r}; use one of {known}")
    ok, data = cv2.imencode(suffix, image)
    if not ok:
        raise _UsageError(f"{path}: could not encode the image as {suffix}")
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise _UsageError(f"{path}: folder {directory} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.tobytes())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    try:
        config = config_module.load(args.config)
        world = load_world(args.world, config.table)
        style = _style(args, config.simcam)
        camera = CameraModel.from_config(config.simcam, config.table)
        renderer = renderer_for(camera, config.table, style)
        seed = config.simcam.seed if args.seed is None else args.seed
        image = renderer.render_canvas(world) if args.top_view else renderer.render(world, seed=seed)
        _write_image(Path(args.out), image)
    except (
        config_module.ConfigError,
        WorldFormatError,
        StyleError,
        CameraError,
        RenderError,
        _UsageError,
        msgspec.ValidationError,
    ) as exc:
        print(f"sanzi render: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"sanzi render: cannot write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.print_homography:
        h = camera.image_to_table_homography()
        print(json.dumps([float(v) for v in h.ravel()]))
    return 0
