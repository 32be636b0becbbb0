"""Tests of the gridded-table frame generator (scene sampling is tested without rendering where possible)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.vision.gridded.generator import (
    IMAGE_H,
    IMAGE_W,
    LINE_WIDTH_FRAC,
    OCCLUDER_PROBABILITY,
    PIECE_RADIUS_FRAC,
    PITCH_RANGE_PX,
    TAGS,
    Sample,
    Scene,
    make_frame,
    sample_scene,
    square_centres_px,
)

SEED = 20240611
N_SCENES = 300


@pytest.fixture(scope="module")
def scenes() -> list[Scene]:
    return [sample_scene(i, SEED) for i in range(N_SCENES)]


def _formula(scene: Scene) -> np.ndarray:
    """Where the truth says square (r, c) of the folded board lies: (3, 3, 2)."""
    t = scene.truth
    a = math.radians(t.angle_deg)
    x_axis = t.pitch_px * np.array([math.cos(a), -math.sin(a)])
    y_axis = t.pitch_px * np.array([math.sin(a), math.cos(a)])
    r, c = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
    return np.asarray(t.centre_px) + (c - 1)[..., None] * x_axis + (r - 1)[..., None] * y_axis


def _own_drawn_centres(scene: Scene) -> np.ndarray:
    """Centres of the squares as drawn, projected here from the scene's geometry: (3, 3, 2)."""
    s = scene.plate.square_mm
    ca, sa = math.cos(scene.board_angle), math.sin(scene.board_angle)
    out = np.zeros((3, 3, 2))
    for r in range(3):
        for c in range(3):
            u, w = (c - 1) * s, (1 - r) * s
            x = scene.board_centre[0] + ca * u - sa * w
            y = scene.board_centre[1] + sa * u + ca * w
            cam = scene.camera.R @ (np.array([x, y, scene.top_z]) - scene.camera.C)
            out[r, c] = scene.camera.K[:2, :2] @ (cam[:2] / cam[2]) + scene.camera.K[:2, 2]
    return out


def test_same_seed_and_index_give_the_same_frame() -> None:
    a, b = make_frame(3, SEED), make_frame(3, SEED)
    assert np.array_equal(a.image, b.image)
    assert (a.board, a.centre_px, a.angle_deg, a.pitch_px, a.occluded, a.tags) == (
        b.board,
        b.centre_px,
        b.angle_deg,
        b.pitch_px,
        b.occluded,
        b.tags,
    )
    assert not np.array_equal(a.image, make_frame(4, SEED).image)
    assert not np.array_equal(a.image, make_frame(3, SEED + 1).image)


def test_sample_scene_gives_make_frames_truth() -> None:
    for i in range(5):
        s, scene = make_frame(i, SEED), sample_scene(i, SEED)
        assert (s.board, s.centre_px, s.angle_deg, s.pitch_px, s.tags) == (
            scene.truth.board,
            scene.truth.centre_px,
            scene.truth.angle_deg,
            scene.truth.pitch_px,
            scene.truth.tags,
        )


def test_shapes_and_types() -> None:
    for i in range(6):
        s = make_frame(i, SEED)
        assert isinstance(s, Sample)
        assert s.image.shape == (IMAGE_H, IMAGE_W, 3) and s.image.dtype == np.uint8
        assert 10 < float(s.image.mean()) < 245 and float(s.image.std()) > 8
        assert isinstance(s.board, str) and isinstance(s.occluded, bool)
        assert isinstance(s.centre_px, tuple) and all(isinstance(v, float) for v in s.centre_px)
        assert isinstance(s.angle_deg, float) and isinstance(s.pitch_px, float)
        assert isinstance(s.tags, frozenset) and s.tags <= TAGS
        with pytest.raises(AttributeError):
            s.board = "........."  # type: ignore[misc]


def test_boards_are_valid(scenes: list[Scene]) -> None:
    for sc in scenes:
        b = sc.truth.board
        assert len(b) == 9 and set(b) <= set("XO.")
        assert abs(b.count("X") - b.count("O")) <= 1
        assert sorted(b) == sorted("".join(sc.drawn))
    counts = [sc.truth.board.count(".") for sc in scenes]
    assert 9 in counts and 0 in counts  # empty and full boards occur


def test_truth_ranges(scenes: list[Scene]) -> None:
    for sc in scenes:
        t = sc.truth
        assert PITCH_RANGE_PX[0] <= t.pitch_px <= PITCH_RANGE_PX[1]
        assert -45.0 < t.angle_deg <= 45.0
        assert 0 <= t.centre_px[0] < IMAGE_W and 0 <= t.centre_px[1] < IMAGE_H
        assert t.occluded == any(tag.startswith("occ:") for tag in t.tags)
        s = sc.plate.square_mm
        assert LINE_WIDTH_FRAC[0] <= sc.plate.line_width_mm / s <= LINE_WIDTH_FRAC[1]
        assert PIECE_RADIUS_FRAC[0] <= sc.piece_set.radius_mm / s <= PIECE_RADIUS_FRAC[1]
        centres = square_centres_px(sc)
        assert centres[..., 0].min() > 0 and centres[..., 0].max() < IMAGE_W
        assert centres[..., 1].min() > 0 and centres[..., 1].max() < IMAGE_H


def test_folding_convention(scenes: list[Scene]) -> None:
    """Square (r, c) of the folded board lies where the formula says, and holds the piece drawn there."""
    for sc in scenes:
        t = sc.truth
        drawn_px = _own_drawn_centres(sc)
        assert np.allclose(np.asarray(t.centre_px), drawn_px[1, 1], atol=1e-6)
        expected = _formula(sc)
        got = square_centres_px(sc)
        err = np.linalg.norm(got - expected, axis=-1)
        # the formula is a rotated square; the camera's tilt (up to 20 degrees) and a board far off the
        # optical axis shear and taper the board's image by a few pixels (README: distribution)
        assert err[1, 1] < 1e-6
        assert err[[0, 1, 1, 2], [1, 0, 2, 1]].max() < max(4.0, 0.12 * t.pitch_px), err
        assert err.max() < max(6.0, 0.2 * t.pitch_px), err
        for r in range(3):
            for c in range(3):
                d = np.linalg.norm(drawn_px - expected[r, c], axis=-1)
                rr, cc = np.unravel_index(int(np.argmin(d)), d.shape)
                assert d[rr, cc] < 0.3 * t.pitch_px
                assert t.board[3 * r + c] == sc.drawn[rr][cc]


def test_square_centres_match_own_projection(scenes: list[Scene]) -> None:
    for sc in scenes[:50]:
        drawn = _own_drawn_centres(sc)
        assert np.allclose(square_centres_px(sc), np.rot90(drawn, k=sc.truth.quarter_turns), atol=1e-6)


def test_occluded_about_ten_percent() -> None:
    occluded = [sample_scene(i, SEED + 1).truth.occluded for i in range(200)]
    frac = sum(occluded) / len(occluded)
    assert abs(frac - OCCLUDER_PROBABILITY) < 0.06, frac


def test_aligned_about_a_third_of_patterned_frames(scenes: list[Scene]) -> None:
    patterned = [sc for sc in scenes if "table:plain" not in sc.truth.tags]
    frac = sum("mat:aligned" in sc.truth.tags for sc in patterned) / len(patterned)
    assert 0.2 < frac < 0.55, frac
    plain = sum("table:plain" in sc.truth.tags for sc in scenes) / len(scenes)
    assert 0.12 < plain < 0.28, plain


def test_every_tag_is_reachable() -> None:
    seen: set[str] = set()
    for i in range(3000):
        seen |= sample_scene(i, SEED + 2).truth.tags
        if seen == TAGS:
            break
    assert seen == TAGS, sorted(TAGS - seen)


def test_rendered_pieces_look_black_and_white() -> None:
    """On unoccluded frames the black pieces' tops are darker than the white pieces'."""
    checked = 0
    for i in range(40):
        sc = sample_scene(i, SEED + 3)
        b = sc.truth.board
        if sc.truth.occluded or "X" not in b or "O" not in b:
            continue
        assert len(sc.pieces) == 9 - b.count(".")
        img = make_frame(i, SEED + 3).image.astype(np.float32).mean(axis=2)
        levels: dict[str, list[float]] = {"X": [], "O": []}
        for p in sc.pieces:
            top = np.array([[p.x, p.y, p.z + sc.piece_set.height_mm]])
            x, y = np.round(sc.camera.project(top)[0]).astype(int)
            levels[p.colour].append(float(np.median(img[y - 1 : y + 2, x - 1 : x + 2])))
        assert np.median(levels["X"]) < np.median(levels["O"]), levels
        checked += 1
        if checked == 8:
            break
    assert checked >= 5
