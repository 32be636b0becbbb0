"""``sanzi detect IMAGE [--json] [--annotate OUT.png]``: find the board in one image and read it.

Prints the pose (centre, signed angle, the four grid corners in pixels), the nine squares (number, pixel
centre, state, confidence), the supply pieces and the occlusion flag; ``--json`` prints one JSON object
instead. ``--annotate`` writes the image with the grid, numbers, states and confidences drawn on it.

Exit codes: 0 a board was found, 1 no board in the image, 2 the file is not a readable image.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np

EXIT_OK = 0
EXIT_NO_BOARD = 1
EXIT_BAD_IMAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("image", help="an image file (PNG, JPEG, ...)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--annotate", metavar="OUT.png", help="write the image with the detection drawn on it"
    )


def _load(path: str) -> np.ndarray | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    return image


def as_dict(det: Any, image_path: str) -> dict[str, Any]:
    """The detection as plain JSON-able data."""
    pose = det.pose
    return {
        "image": image_path,
        "found": det.found,
        "board": det.board,
        "pose": None
        if pose is None
        else {
            "center_px": [round(pose.center_px.x, 2), round(pose.center_px.y, 2)],
            "angle_deg": round(pose.angle_deg, 3),
            "corners_px": [[round(p.x, 2), round(p.y, 2)] for p in pose.corners_px],
            "homography": [round(v, 9) for v in pose.homography],
        },
        "pitch_px": round(det.pitch_px, 2),
        "polarity": det.polarity,
        "squares": [
            {
                "number": s.number,
                "center_px": [round(s.center_px[0], 2), round(s.center_px[1], 2)],
                "state": s.state,
                "confidence": round(s.confidence, 3),
                "occluded": s.occluded,
            }
            for s in det.squares
        ],
        "supply": [
            {
                "colour": p.colour,
                "center_px": [round(p.center_px[0], 2), round(p.center_px[1], 2)],
                "radius_px": round(p.radius_px, 2),
            }
            for p in det.supply
        ],
        "occluded": det.occluded,
        "occlusion": round(det.occlusion, 3),
        "problem": det.problem,
        "processing_ms": round(det.processing_ms, 3),
    }


def _print_text(d: dict[str, Any], out: Any) -> None:
    if not d["found"]:
        print(f"{d['image']}: no board found", file=out)
        return
    pose = d["pose"]
    cx, cy = pose["center_px"]
    print(f"{d['image']}: board {d['board']}", file=out)
    print(
        f"  centre ({cx:.1f}, {cy:.1f}) px, angle {pose['angle_deg']:+.2f} deg, pitch {d['pitch_px']:.1f} px",
        file=out,
    )
    corners = ", ".join(f"({x:.1f}, {y:.1f})" for x, y in pose["corners_px"])
    print(f"  corners (square 1 first): {corners}", file=out)
    occl = (
        f"OCCLUDED ({d['occlusion']:.0%} of the lines hidden)"
        if d["occluded"]
        else f"clear ({d['occlusion']:.0%} hidden)"
    )
    print(f"  view: {occl}; lines: {d['polarity']}", file=out)
    for s in d["squares"]:
        x, y = s["center_px"]
        flag = "  occluded" if s["occluded"] else ""
        print(
            f"  square {s['number']}: {s['state']:<7} {s['confidence']:.2f}  at ({x:.1f}, {y:.1f}){flag}",
            file=out,
        )
    if d["supply"]:
        for p in d["supply"]:
            x, y = p["center_px"]
            print(f"  supply {p['colour']:<5} at ({x:.1f}, {y:.1f}), radius {p['radius_px']:.1f}", file=out)
    else:
        print("  supply: none seen", file=out)


def run(args: argparse.Namespace) -> int:
    from services.vision.annotate import annotate
    from services.vision.detector import DetectorError, detect

    image = _load(args.image)
    if image is None:
        print(f"sanzi detect: {args.image}: not a readable image file", file=sys.stderr)
        return EXIT_BAD_IMAGE
    try:
        det = detect(image)
    except DetectorError as exc:
        print(f"sanzi detect: {args.image}: {exc}", file=sys.stderr)
        return EXIT_BAD_IMAGE
    data = as_dict(det, args.image)
    if args.annotate and not cv2.imwrite(args.annotate, annotate(image, det)):
        print(f"sanzi detect: cannot write {args.annotate}", file=sys.stderr)
        return EXIT_BAD_IMAGE
    if args.json:
        print(json.dumps(data))
    else:
        _print_text(data, sys.stdout)
    return EXIT_OK if det.found else EXIT_NO_BOARD
