"""Occlusion: the simulated hand (services/simcam) at many places over and around the board, and
things that are not pieces drawn by the independent renderer (a finger across a line, a pen, a sheet
of paper): the frame is occluded, or the square unknown, and never stable; bare boards are never
flagged."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from messages import HandState
from services.vision.detector import detect
from services.vision.tracker import VisionCore

from .looks import contest_scene, random_scene
from .synth import Scene, draw, square_centre
from .test_sweep import render_board, rotate_board

simcam = pytest.importorskip("services.simcam.renderer")
from services.simcam.style import RenderStyle  # noqa: E402

BOARD = "X...O...O"
CENTRE_MM = (200.0, 150.0)
#: a frame's pixel differs from the bare board's beyond this: the hand is there.
HAND_PIXEL_DIFF = 25
#: this many differing pixels inside the grid: the hand covers some of it.
HAND_MIN_PIXELS = 30


@pytest.mark.parametrize("preset", ["default", "dark"])
def test_simcam_hand_anywhere_over_the_grid_is_occluded_and_never_stable(preset: str) -> None:
    style = RenderStyle.preset(preset)
    clean = render_board(BOARD, 10.0, CENTRE_MM, style, seed=0)
    pose = detect(clean).pose
    assert pose is not None
    import cv2

    grid = np.zeros(clean.shape[:2], np.uint8)
    cv2.fillConvexPoly(grid, np.array([[p.x, p.y] for p in pose.corners_px], np.int32), 255)
    core = VisionCore(stable_frames=2)
    covered = 0
    for i, (along_mm, across_mm, from_deg) in enumerate(
        (d, lat, a)
        for a in (0.0, 75.0, 160.0, 250.0)
        for d in (-30.0, 10.0, 50.0, 90.0)
        for lat in (-40.0, 30.0)
    ):
        a = math.radians(from_deg)
        along = np.array([math.sin(a), math.cos(a)])
        across = np.array([math.cos(a), -math.sin(a)])
        x, y = np.array(CENTRE_MM) - along * along_mm + across * across_mm
        hand = HandState(present=True, x_mm=float(x), y_mm=float(y), angle_deg=from_deg)
        image = render_board(BOARD, 10.0, CENTRE_MM, style, seed=0, hand=hand)
        on_grid = (np.abs(image.astype(int) - clean.astype(int)).max(axis=2) > HAND_PIXEL_DIFF) & (grid > 0)
        result = core.process(image, frame_id=i)
        if on_grid.sum() < HAND_MIN_PIXELS:
            continue
        covered += 1
        obs = result.observation
        assert obs.occluded or not obs.found, f"hand {along_mm, across_mm, from_deg} not flagged"
        assert not obs.stable and not result.changed
    assert covered >= 20


def _with_object(scene: Scene, kind: str, square: int, rng: np.random.Generator) -> Scene:
    cx, cy = square_centre(scene, square)
    p = scene.pitch_px
    angle = float(rng.uniform(0, 180))
    skin = tuple(float(v) for v in rng.uniform([100, 140, 190], [150, 180, 240]))
    if kind == "finger":  # a fingertip reaching across a line into the square
        a = math.radians(angle)
        obj = ("finger", cx + 0.35 * p * math.cos(a), cy - 0.35 * p * math.sin(a), 1.0 * p, angle, skin)
    elif kind == "pen":
        obj = ("pen", cx, cy, 1.4 * p, angle, tuple(float(v) for v in rng.uniform(0, 255, 3)))
    else:
        obj = ("sheet", cx, cy, 0.9 * p, angle, (235.0, 235.0, 235.0))
    return replace(scene, objects=(obj,))


def test_things_that_are_not_pieces_are_flagged_or_unknown() -> None:
    """Over random looks: a finger across a line, a pen, a sheet on one square. Measured share of frames
    flagged (occluded or the square unknown); the rest must at least not be many silent misreadings."""
    rng = np.random.default_rng(41)
    flagged = silent = frames = 0
    for i in range(45):
        kind = ("finger", "pen", "sheet")[i % 3]
        base = random_scene(rng)
        square = int(rng.integers(1, 10))
        scene = _with_object(base, kind, square, rng)
        det = detect(draw(scene, seed=i))
        assert det.found
        turns = round((det.pose.angle_deg - scene.angle_deg) / 90.0)
        truth = rotate_board(scene.board, turns)
        wrong = any(a not in ("?", b) for a, b in zip(det.board, truth, strict=True))
        frames += 1
        flagged += det.occluded or "?" in det.board
        silent += wrong and not det.occluded
    # Measured when written: 31/45 flagged, 5 silent misreadings (a known weakness: see the report).
    assert flagged >= 0.6 * frames, f"{flagged}/{frames} flagged"
    assert silent <= 0.25 * frames, f"{silent}/{frames} silent misreadings"


def test_bare_boards_are_never_flagged() -> None:
    rng = np.random.default_rng(42)
    for i in range(30):
        scene = random_scene(rng)
        det = detect(draw(scene, seed=i))
        assert not det.occluded, (i, det.extra)


def test_a_pen_left_on_the_board_is_never_stable() -> None:
    """A pen lying on an empty square (across its lines): flagged in every frame, so never stable."""
    bare = Scene(angle_deg=12.0, board="X...O....", noise=2.0)
    x, y = square_centre(bare, 2)
    scene = replace(bare, objects=(("pen", x, y, 80.0, 30.0, (40.0, 40.0, 200.0)),))
    core = VisionCore(stable_frames=3)
    for i in range(8):
        result = core.process(draw(scene, seed=i), frame_id=i)
        assert result.observation.occluded or "?" in result.observation.board
        assert not result.observation.stable
    assert core.stable_observation is None


#: (B, G, R) of coins: brass, copper, steel.
COIN_METALS: dict[str, tuple[float, float, float]] = {
    "brass": (70.0, 150.0, 190.0),
    "copper": (60.0, 100.0, 170.0),
    "steel": (170.0, 170.0, 165.0),
}


@pytest.mark.parametrize("metal", ["brass", "copper"])
def test_a_coloured_coin_in_an_empty_square_is_never_a_piece(metal: str) -> None:
    """Pieces are black or white: a brass or copper coin in an empty square is flagged, on any plate
    but one of its own colour (wood; a brass coin on a wood plate is not told apart by colour)."""
    rng = np.random.default_rng(5 if metal == "brass" else 6)
    frames = flagged = 0
    for i in range(24):
        base = contest_scene(rng, plate=str(rng.choice(["blue", "green", "white", "grey", "dark"])))
        empties = [k + 1 for k, c in enumerate(base.board) if c == "."]
        if not empties:
            continue
        square = empties[int(rng.integers(len(empties)))]
        cx, cy = square_centre(base, square)
        radius = float(rng.uniform(0.18, 0.3)) * base.pitch_px
        colour = tuple(c * float(rng.uniform(0.85, 1.1)) for c in COIN_METALS[metal])
        det = detect(draw(replace(base, objects=(("coin", cx, cy, radius, 0.0, colour),)), seed=i))
        frames += 1
        flagged += (not det.found) or det.occluded
    # Measured when written: brass 23/23, copper 23/23 flagged. A steel coin is grey like a dim white
    # piece: 3/23 flagged (only where its tone is half way between black and white), not asserted.
    assert flagged == frames, f"{flagged}/{frames} flagged"
