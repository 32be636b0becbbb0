"""The detector on rendered frames: the simulated camera (services/simcam) across rotations, offsets,
lighting, noise, blur, glare and piece layouts, and a second, independent drawing (tests/vision/synth).

Truth comes from the renderer's camera model: the board's centre and a point along its x axis are
projected into the image; the image angle is the angle between them (the camera itself is slightly
turned and tilted, so it differs from the world's table-frame angle). Exactly at +-45 degrees the
numbering is ambiguous (the reported angle is folded into (-45, 45]), so the truth is relabelled by the
quarter turn between the reported and the true angle.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from messages import HandState
from services.common.config import load
from services.vision.detector import Detection, detect
from services.vision.tracker import VisionCore

simcam = pytest.importorskip("services.simcam.renderer")
from services.simcam.camera import CameraModel  # noqa: E402
from services.simcam.style import RenderStyle  # noqa: E402
from services.simcam.world import world_from_board  # noqa: E402

from .synth import Scene, draw  # noqa: E402

CONFIG = load(None)
TABLE = CONFIG.table
CAMERA = CameraModel.from_config(CONFIG.simcam, TABLE)
PRESETS = ("default", "clean", "dark", "harsh", "dim")
FRAMES_PER_PRESET = 44
ANGLE_TOL_DEG = 1.0
CENTRE_TOL_PX = 3.0


def rotate_board(board: str, quarter_turns: int) -> str:
    """The board string as labelled after turning the numbering by quarter turns (clockwise in the
    image for positive turns)."""
    rows = [list(board[i * 3 : i * 3 + 3]) for i in range(3)]
    for _ in range(quarter_turns % 4):
        rows = [list(r) for r in zip(*rows[::-1], strict=True)]
    return "".join("".join(r) for r in rows)


def truth_as_read(det: Detection, board: str, angle_deg: float) -> str:
    """A frame's true ``board`` (in its own frame, at ``angle_deg``) labelled as ``det`` numbers the
    squares (its pose may be a quarter turn off the truth's: the board is square). ``det`` must have
    found the board."""
    assert det.found and det.pose is not None
    return rotate_board(board, round((det.pose.angle_deg - angle_deg) / 90))


def random_board(rng: np.random.Generator) -> str:
    cells = ["."] * 9
    order = rng.permutation(9)
    nx, no = int(rng.integers(0, 6)), int(rng.integers(0, 5))
    for i in order[:nx]:
        cells[i] = "X"
    for i in order[nx : nx + no]:
        cells[i] = "O"
    return "".join(cells)


def image_truth(center_mm: tuple[float, float], angle_deg: float) -> tuple[np.ndarray, float]:
    """Pixel centre and image angle of a board at ``center_mm`` turned by ``angle_deg`` on the table."""
    a = math.radians(angle_deg)
    pts = CAMERA.project(
        np.array([center_mm, (center_mm[0] + 20 * math.cos(a), center_mm[1] - 20 * math.sin(a))])
    )
    v = pts[1] - pts[0]
    return pts[0], math.degrees(math.atan2(-v[1], v[0]))


def check(det: Detection, board: str, centre: np.ndarray, angle: float) -> list[str]:
    """What is wrong with ``det`` (empty when all is right)."""
    if not det.found or det.pose is None:
        return ["no board"]
    da = det.pose.angle_deg - angle
    turns = round(da / 90.0)
    truth = rotate_board(board, turns)
    da -= 90.0 * turns
    errors = []
    if abs(da) > ANGLE_TOL_DEG:
        errors.append(f"angle off by {da:.2f}")
    dc = math.hypot(det.pose.center_px.x - centre[0], det.pose.center_px.y - centre[1])
    if dc > CENTRE_TOL_PX:
        errors.append(f"centre off by {dc:.2f} px")
    wrong = [i + 1 for i, (a, b) in enumerate(zip(det.board, truth, strict=True)) if a != b and a != "?"]
    if wrong:
        errors.append(f"squares {wrong} wrong: read {det.board}, truth {truth}")
    if det.occluded:
        errors.append("occluded")
    return errors


def sweep_style(preset: str, rng: np.random.Generator) -> RenderStyle:
    """A preset with its lighting, noise, blur and glare varied."""
    base = RenderStyle.preset(preset)
    return base.replace(
        light_azimuth_deg=float(rng.uniform(0, 360)),
        light_elevation_deg=float(rng.uniform(45, 85)),
        light_gradient=float(rng.uniform(0.0, 0.4)),
        noise_sigma=float(rng.uniform(0.0, 6.0)) if preset != "clean" else 0.0,
        blur_sigma=float(rng.uniform(0.0, 1.2)) if preset != "clean" else 0.0,
        # A matte black piece on the dark board is nearly the board's own grey and colour; the highlight
        # of a glossy one is what shows it (a known limit, see the vision notes): no fully matte pieces
        # on the dark board.
        glare=float(rng.uniform(0.5 if preset == "dark" else 0.0, 1.0)),
        texture_seed=int(rng.integers(0, 2**31)),
    )


def render_board(
    board: str, angle: float, center: tuple[float, float], style: RenderStyle, seed: int, **kw: object
):
    colours = {}
    if style.board_colour is not None:
        colours = {"board_colour": style.board_colour, "line_colour": style.line_colour}
    world = world_from_board(board, angle, center, table=TABLE, **colours, **kw)  # type: ignore[arg-type]
    return simcam.render(world, CAMERA, seed=seed, style=style, table=TABLE)


@pytest.mark.parametrize("preset", PRESETS)
def test_simcam_sweep(preset: str) -> None:
    """Rotations -45..45, offsets, lighting, noise, blur, glare, layouts: every square right (never a
    wrong state; an unknown square is allowed only rarely), angle within 1 degree, centre within 3 px."""
    rng = np.random.default_rng(PRESETS.index(preset) + 100)
    angles = np.linspace(-45.0, 45.0, FRAMES_PER_PRESET)
    failures, unknown_frames = [], 0
    for i, angle in enumerate(angles):
        board = random_board(rng)
        center = (200.0 + rng.uniform(-55, 55), 150.0 + rng.uniform(-40, 40))
        jitter_rng = np.random.default_rng(i)
        image = render_board(
            board, float(angle), center, sweep_style(preset, rng), seed=i, jitter_mm=2.0, rng=jitter_rng
        )
        det = detect(image)
        centre, image_angle = image_truth(center, float(angle))
        errors = check(det, board, centre, image_angle)
        if errors:
            failures.append(f"{preset} frame {i} (angle {angle:.1f}): {'; '.join(errors)}")
        unknown_frames += "?" in det.board
    assert not failures, "\n".join(failures)
    assert unknown_frames <= 1, f"{unknown_frames} frames with an unknown square"


def test_independent_drawing_sweep() -> None:
    """A second renderer (affine, other sizes, line widths, colours, cross-shaped black pieces)."""
    rng = np.random.default_rng(7)
    failures = []
    for i in range(60):
        light = bool(rng.random() < 0.6)
        scene = Scene(
            center=(320 + rng.uniform(-80, 80), 240 + rng.uniform(-50, 50)),
            angle_deg=float(rng.uniform(-44.5, 44.5)),
            pitch_px=float(rng.uniform(42, 75)),
            line_px=float(rng.uniform(2.5, 7)),
            board=random_board(rng),
            board_grey=205 if light else 70,
            line_grey=40 if light else 225,
            table_grey=int(rng.uniform(90, 160)),
            gradient=float(rng.uniform(0, 0.35)),
            noise=float(rng.uniform(0, 5)),
            blur=float(rng.uniform(0, 1.2)),
            glare=bool(rng.random() < 0.5),
            crosses=bool(rng.random() < 0.3),
            piece_frac=float(rng.uniform(0.45, 0.6)),
        )
        det = detect(draw(scene, seed=i))
        errors = check(det, scene.board, np.array(scene.center), scene.angle_deg)
        if errors:
            failures.append(f"drawing {i}: {'; '.join(errors)}")
    assert not failures, "\n".join(failures)


def _hand_world_image(board: str, hand_square_xy: tuple[float, float], seed: int, present: bool = True):
    hand = HandState(present=present, x_mm=hand_square_xy[0], y_mm=hand_square_xy[1], angle_deg=10.0)
    return render_board(board, 12.0, (200.0, 150.0), RenderStyle.preset("default"), seed=seed, hand=hand)


def test_hand_over_the_grid_is_occluded_and_never_stable() -> None:
    core = VisionCore(stable_frames=3)
    for i in range(20):
        x = 200.0 + 25.0 * math.sin(i / 3.0)
        image = _hand_world_image("X...O....", (x, 150.0 + 10.0 * math.cos(i / 4.0)), seed=i)
        result = core.process(image, frame_id=i)
        assert result.observation.occluded, f"frame {i} not occluded"
        assert not result.observation.stable
        assert not result.changed
    assert core.stable_observation is None


def test_place_with_hand_then_withdraw_becomes_stable_once_after_the_hand_left() -> None:
    """The person reaches in (hand over the board), puts an O on square 5, withdraws: the new reading
    is stable only after the hand has gone, and it is announced exactly once."""
    n = 4
    core = VisionCore(stable_frames=n)
    frames: list[tuple[str, bool]] = []
    frames += [("X........", False)] * 6  # the board before the move
    frames += [("X........", True)] * 3  # the hand comes in
    frames += [("X...O....", True)] * 5  # the piece is down, the hand still there
    frames += [("X...O....", False)] * 8  # the hand has gone
    changes = []
    first_clear = 14
    for i, (board, hand) in enumerate(frames):
        image = _hand_world_image(board, (205.0, 155.0), seed=i, present=hand)
        result = core.process(image, frame_id=i)
        if hand:
            assert not result.observation.stable, f"frame {i}: stable with the hand in view"
        if result.changed:
            changes.append((i, result.observation.board))
    assert changes == [(n - 1, "X........"), (first_clear + n - 1, "X...O....")]
