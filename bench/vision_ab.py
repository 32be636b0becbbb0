"""The board detector of another checkout (A) against this one's (B), timed frame by frame in one process.

Two processes run minutes apart on a shared machine can differ by half their time whatever they run, so
an A/B between processes says little about a change of a few percent. Here both detector packages are
imported side by side (copied under other names into a temporary folder), and each frame of the seeded
sweep (bench/vision.py's) is detected by A and B in turn, the order alternating, over several rounds.
A frame's time is its fastest round's; the figures are the medians over the frames and the ratio B/A.
A checkout against itself gives 1.00 within a percent.

    .venv/bin/python bench/vision_ab.py PATH_OF_A [--rounds 4] [--frames 150]

A is any checkout of this repository (``git worktree add /tmp/a <commit>``); both use this checkout's
messages and renderer.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.vision import make_sweep  # noqa: E402

DETECTOR = Path("services") / "vision" / "detector"


def _import_detector(checkout: Path, name: str, into: Path) -> ModuleType:
    """``checkout``'s detector package, imported as the top-level package ``name`` from a copy."""
    shutil.copytree(checkout / DETECTOR, into / name)
    return importlib.import_module(name)


def fastest_times(
    detectors: tuple[ModuleType, ModuleType], images: list[np.ndarray], rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Each image's fastest detection (ms) over ``rounds`` by each of the two detector packages, the
    two taking turns frame by frame (which goes first alternates)."""
    best = np.full((2, len(images)), np.inf)
    for round_ in range(rounds):
        for k, image in enumerate(images):
            order = (0, 1) if (k + round_) % 2 == 0 else (1, 0)
            for which in order:
                t0 = time.perf_counter()
                detectors[which].detect(image)
                best[which, k] = min(best[which, k], (time.perf_counter() - t0) * 1000.0)
    return best[0], best[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the other checkout (A)")
    parser.add_argument("--rounds", type=int, default=4, help="passes over the frames (the fastest counts)")
    parser.add_argument("--frames", type=int, default=150, help="rendered frames per sweep (two sweeps)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not (args.a / DETECTOR / "__init__.py").is_file():
        parser.error(f"no detector package under {args.a}")
    cv2.setNumThreads(1)  # one core
    images = [
        f[0] for f in make_sweep(args.frames, args.seed, False) + make_sweep(args.frames, args.seed + 1, True)
    ]
    with tempfile.TemporaryDirectory(prefix="vision-ab-") as folder:
        sys.path.insert(0, folder)
        pair = (
            _import_detector(args.a.resolve(), "detector_a", Path(folder)),
            _import_detector(ROOT, "detector_b", Path(folder)),
        )
        for image in images[:10]:  # warm caches
            pair[0].detect(image)
            pair[1].detect(image)
        a_ms, b_ms = fastest_times(pair, images, args.rounds)
    print(f"detector A: {args.a.resolve()}\ndetector B: {ROOT}")
    print(f"{len(images)} frames, {args.rounds} rounds, fastest round per frame, one core")
    print(f"{'':12}{'median ms':>10}{'mean ms':>10}")
    print(f"{'A':12}{np.median(a_ms):10.3f}{np.mean(a_ms):10.3f}")
    print(f"{'B':12}{np.median(b_ms):10.3f}{np.mean(b_ms):10.3f}")
    print(f"{'B / A':12}{np.median(b_ms) / np.median(a_ms):10.3f}{np.mean(b_ms) / np.mean(a_ms):10.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
