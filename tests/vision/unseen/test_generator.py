"""Tests of the independent generator: determinism, interface, truth against pixels, tags and shares."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.vision.unseen import generator as gen

SET_SEED = 2024
SET_SIZE = 100
OCCLUDED_SHARE_RANGE = (0.03, 0.20)  # ~10 % expected; binomial spread over 100 frames
SCENE_SCAN = 1000  # scenes sampled (not drawn) for the shares that need many frames
ORDER_PASS_SHARE = 0.95  # frames whose black-square centres read darker than their white-square centres
BLACK_CENTRE_MAX = 85  # clean render: a black piece's centre (grey <= 55, plus a highlight's tail)
WHITE_CENTRE_MIN = 195  # clean render: a white piece's centre (grey >= 205)
EMPTY_TOLERANCE = 6  # clean render: an empty square's centre against the plate colour, per channel
ONE_OF_EACH = ("plate:", "wb:", "jpeg:", "table:")
EXPECTED_SOMEWHERE = (
    "plate:white",
    "lines:light",
    "lines:dark",
    "large-pieces",
    "small-pieces",
    "glossy",
    "matte",
    "white-near-plate",
    "pitch:small",
    "pitch:large",
    "gradient",
    "vignette",
    "jpeg:low",
    "motion-blur",
    "defocus",
    "wb:warm",
    "wb:cool",
    "supply",
    "tilt",
)


@pytest.fixture(scope="module")
def frames() -> list[gen.Sample]:
    return gen.make_set(SET_SIZE, SET_SEED)


def _grey(img: np.ndarray) -> np.ndarray:
    return img.astype(np.float32) @ np.array([0.114, 0.587, 0.299], np.float32)


def _patch_median(img: np.ndarray, x: float, y: float, half: int = 1) -> float:
    xi, yi = round(x), round(y)
    return float(np.median(_grey(img[yi - half : yi + half + 1, xi - half : xi + half + 1])))


def _cell_centres(s: gen.Sample) -> np.ndarray:
    """The nine square centres from the truth alone (centre, angle, pitch; perspective ignored)."""
    a = math.radians(s.angle_deg)
    u = np.array([math.cos(a), -math.sin(a)])
    v = np.array([math.sin(a), math.cos(a)])
    c = np.array(s.centre_px)
    return np.array([c + s.pitch_px * ((i % 3 - 1) * u + (i // 3 - 1) * v) for i in range(9)])


# --- determinism


def test_same_seed_same_pixels() -> None:
    a = gen.make_set(3, 11)
    b = gen.make_set(3, 11)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x.image, y.image)
        assert (x.board, x.centre_px, x.angle_deg, x.pitch_px, x.occluded, x.tags) == (
            y.board,
            y.centre_px,
            y.angle_deg,
            y.pitch_px,
            y.occluded,
            y.tags,
        )


def test_prefix_property(frames: list[gen.Sample]) -> None:
    short = gen.make_set(3, SET_SEED)
    for x, y in zip(short, frames[:3], strict=True):
        assert np.array_equal(x.image, y.image)
        assert x.board == y.board and x.tags == y.tags
    assert np.array_equal(gen.render_sample(SET_SEED, 57).image, frames[57].image)


def test_other_seed_other_pixels() -> None:
    assert not np.array_equal(gen.make_set(1, 1)[0].image, gen.make_set(1, 2)[0].image)


# --- interface


def test_interface(frames: list[gen.Sample]) -> None:
    for s in frames:
        assert s.image.shape == (gen.FRAME_H, gen.FRAME_W, 3) and s.image.dtype == np.uint8
        assert len(s.board) == 9 and set(s.board) <= set(gen.BOARD_CHARS)
        assert -45.0 < s.angle_deg <= 45.0
        assert gen.PITCH_MIN <= s.pitch_px <= gen.PITCH_MAX
        assert isinstance(s.occluded, bool)
        assert isinstance(s.tags, frozenset) and all(isinstance(t, str) for t in s.tags)
        assert all(isinstance(v, float) for v in (*s.centre_px, s.angle_deg, s.pitch_px))
    with pytest.raises(dataclasses.FrozenInstanceError):
        frames[0].board = "........."  # type: ignore[misc]


def test_board_wholly_inside_frame(frames: list[gen.Sample]) -> None:
    """The outer frame's corners, placed from the truth alone (perspective ignored), lie in the frame."""
    for s in frames:
        a = math.radians(s.angle_deg)
        u = np.array([math.cos(a), -math.sin(a)])
        v = np.array([math.sin(a), math.cos(a)])
        slack = 0.15 * s.pitch_px  # the perspective this affine placement leaves out
        for cu, cv in ((-1.5, -1.5), (1.5, -1.5), (1.5, 1.5), (-1.5, 1.5)):
            x, y = np.array(s.centre_px) + s.pitch_px * (cu * u + cv * v)
            assert -slack <= x <= gen.FRAME_W + slack and -slack <= y <= gen.FRAME_H + slack


def test_plate_wholly_inside_frame() -> None:
    for i in range(SET_SIZE):
        scene = gen.sample_scene(gen._rng_for(SET_SEED, i))
        half = scene.plate_half
        corners = gen.project(scene.homography, gen._rect(-half, -half, half, half))
        assert corners.min() >= 0
        assert (corners[:, 0] <= gen.FRAME_W - 1).all() and (corners[:, 1] <= gen.FRAME_H - 1).all()


# --- geometry helpers


def test_fold_angle_range_and_turns() -> None:
    for a in np.linspace(-270, 270, 109):
        folded, k = gen.fold_angle(float(a))
        assert -45.0 < folded <= 45.0
        assert math.isclose(folded + 90 * k, a, abs_tol=1e-9)


def test_board_refolding() -> None:
    b = "123456789"
    assert gen.board_in_folded_frame(b, 0) == b
    assert gen.board_in_folded_frame(b, 4) == b
    assert gen.board_in_folded_frame(gen.board_in_folded_frame(b, 1), -1) == b
    # a board turned a quarter counter-clockwise (as seen) is read with its right column on top
    assert gen.board_in_folded_frame(b, 1) == "369258147"


def test_reported_angle_and_pitch_match_projection() -> None:
    h = gen.camera_homography(30.0, 0.0, 0.0, 600.0, 10.0)
    pitch, angle = gen.measured_pitch_and_angle(h)
    assert math.isclose(pitch, 60.0, rel_tol=1e-9) and math.isclose(angle, 30.0, abs_tol=1e-9)
    tilted = gen.camera_homography(30.0, 12.0, 40.0, 600.0, 10.0)
    pitch_t, angle_t = gen.measured_pitch_and_angle(tilted)
    assert abs(pitch_t - 60.0) < 3.0 and abs(angle_t - 30.0) < 3.0


# --- truth vs pixels


def test_black_squares_darker_than_white_squares(frames: list[gen.Sample]) -> None:
    """On the finished frames (light, blur, noise, JPEG), from the public truth alone."""
    checked = passed = 0
    for s in frames:
        if s.occluded or "X" not in s.board or "O" not in s.board:
            continue
        centres = _cell_centres(s)
        g = [_patch_median(s.image, *centres[i]) for i in range(9)]
        xs = [g[i] for i, c in enumerate(s.board) if c == "X"]
        os_ = [g[i] for i, c in enumerate(s.board) if c == "O"]
        checked += 1
        passed += float(np.median(xs)) + 30 < float(np.median(os_))
    assert checked >= 30
    assert passed >= ORDER_PASS_SHARE * checked


def test_clean_render_pixels_match_truth() -> None:
    """Without the camera and light, each piece's centre has its grey and each empty square the plate's."""
    for i in range(12):
        scene = gen.sample_scene(gen._rng_for(SET_SEED, i))
        img, _ = gen.draw_scene(scene, effects=False, occluders=False)
        h = scene.homography
        for p in scene.pieces:
            x, y = gen.project(h, np.array([[p.x, p.y]]))[0]
            v = _patch_median(img, x, y, half=0)
            assert v <= BLACK_CENTRE_MAX if p.black else v >= WHITE_CENTRE_MIN, (i, p, v)
        if scene.plate_kind == "wood":
            continue
        for k, ch in enumerate(scene.board_plane):
            if ch != ".":
                continue
            x, y = gen.project(h, np.array([[k % 3 - 1.0, k // 3 - 1.0]]))[0]
            px = img[round(y), round(x)].astype(float)
            assert np.abs(px - np.array(scene.plate_bgr)).max() <= EMPTY_TOLERANCE, (i, k, px)


def test_clean_render_lines_where_truth_says() -> None:
    """Where the inner lines meet the outer frame (no piece reaches there) the pixel is line-coloured."""
    for i in range(12):
        scene = gen.sample_scene(gen._rng_for(SET_SEED, i))
        img, _ = gen.draw_scene(scene, effects=False, occluders=False)
        line = np.array(scene.line_bgr)
        plate = np.array(scene.plate_bgr)
        for t in (-0.5, 0.5):
            for edge in (-1.5, 1.5):
                for pt in ((t, edge), (edge, t)):
                    x, y = gen.project(scene.homography, np.array([pt]))[0]
                    px = img[round(y), round(x)].astype(float)
                    assert np.linalg.norm(px - line) < np.linalg.norm(px - plate), (i, pt, px)


def test_public_board_is_plane_board_refolded() -> None:
    for i in range(20):
        rng = gen._rng_for(SET_SEED, i)
        scene = gen.sample_scene(rng)
        _, angle = gen.measured_pitch_and_angle(scene.homography)
        _, k = gen.fold_angle(angle)
        assert gen.board_in_folded_frame(scene.board_plane, k) == gen.render_sample(SET_SEED, i).board


# --- tags and shares


def test_tags_consistent_with_truth(frames: list[gen.Sample]) -> None:
    for s in frames:
        for prefix in ONE_OF_EACH:
            assert sum(t.startswith(prefix) for t in s.tags) == 1, (prefix, s.tags)
        assert len(s.tags & {"lines:dark", "lines:light"}) == 1
        assert len(s.tags & {"lines:thin", "lines:thick"}) <= 1
        assert ("full-board" in s.tags) == ("." not in s.board)
        assert ("empty-board" in s.tags) == (s.board == "." * 9)
        assert ("pitch:small" in s.tags) == (s.pitch_px < gen.PITCH_SMALL_BELOW)
        assert ("pitch:large" in s.tags) == (s.pitch_px > gen.PITCH_LARGE_ABOVE)
        kinds = [t for t in s.tags if t.startswith("occluded:")]
        assert len(kinds) == (1 if s.occluded else 0)
        if "occluded:coin" in s.tags:
            assert "." in s.board


def test_conditions_all_occur(frames: list[gen.Sample]) -> None:
    seen = set().union(*(s.tags for s in frames))
    missing = [t for t in EXPECTED_SOMEWHERE if t not in seen]
    assert not missing
    plates = {t for t in seen if t.startswith("plate:")}
    assert len(plates) >= 6


def test_occluded_share(frames: list[gen.Sample]) -> None:
    share = sum(s.occluded for s in frames) / len(frames)
    assert OCCLUDED_SHARE_RANGE[0] <= share <= OCCLUDED_SHARE_RANGE[1]


def test_scene_shares_over_many() -> None:
    """Sampled without drawing: ~10 % occluded, all three occluders, coins only on empty squares."""
    scenes = [gen.sample_scene(gen._rng_for(SET_SEED, i)) for i in range(SCENE_SCAN)]
    occ = [s for s in scenes if s.occluder is not None]
    assert 0.07 <= len(occ) / SCENE_SCAN <= 0.13
    assert {s.occluder for s in occ} == set(gen.OCCLUDERS)
    for s in occ:
        if s.occluder == "coin":
            assert s.coin_cell is not None and s.board_plane[s.coin_cell] == "."
    near = sum("white-near-plate" in s.tags for s in scenes)
    assert near >= 0.08 * SCENE_SCAN
    for s in scenes:
        for p in s.pieces:
            assert gen.PIECE_RADIUS_RANGE[0] <= p.radius <= gen.PIECE_RADIUS_RANGE[1]
            cell = (round(p.x) + 1) + 3 * (round(p.y) + 1)
            assert s.board_plane[cell] == ("X" if p.black else "O")
            assert math.hypot(p.x - round(p.x), p.y - round(p.y)) <= gen.PIECE_OFFSET_MAX + 1e-9
            lo, hi = gen.BLACK_GREY_RANGE if p.black else gen.WHITE_GREY_RANGE
            assert lo <= p.grey <= hi
        assert gen.LINE_WIDTH_RANGE[0] <= s.line_width <= gen.LINE_WIDTH_RANGE[1]
