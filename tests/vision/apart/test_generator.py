"""The apart generator keeps its contract: deterministic frames, well-formed truth in range, about a tenth
occluded, and pieces drawn where (and as dark or light as) the truth says."""

from __future__ import annotations

import dataclasses
import math

import cv2
import numpy as np
import pytest

from tests.vision.apart.generator import (
    IMAGE_H,
    IMAGE_W,
    PITCH_RANGE_PX,
    TAGS,
    Sample,
    Scene,
    make_frame,
    render,
    sample_scene,
)

SEED = 20240611
#: frames rendered once for the module (about 3 s)
FRAMES = 100
#: the truth's pitch may stray this far outside PITCH_RANGE_PX
PITCH_TOLERANCE_PX = 0.5
#: occluded frames expected among FRAMES at a 10% rate: a wide band (the rate's 99.9% binomial interval)
OCCLUDED_BAND = (2, 21)
#: grey levels at a square centre: black pieces are drawn 15-55 and white ones 205-245
DARK_AT_MOST = 90.0
LIGHT_AT_LEAST = 150.0
#: scenes rendered under controlled conditions (seeds [SEED, 0..15] cover all four quarter turns)
CONTROLLED_SCENES = 16


@pytest.fixture(scope="module")
def frames() -> list[Sample]:
    return [make_frame(i, SEED) for i in range(FRAMES)]


def square_centres_from_truth(sample: Sample) -> np.ndarray:
    """Image positions (9, 2) of the squares, row by row in the truth's frame, from centre, angle and pitch
    alone (an affine view; perspective moves the outer squares by a few pixels)."""
    a = math.radians(sample.angle_deg)
    # counter-clockwise as seen with image y down: the board's x axis points along (cos a, -sin a)
    ex = np.array([math.cos(a), -math.sin(a)])
    ey = np.array([math.sin(a), math.cos(a)])
    rows, cols = np.divmod(np.arange(9), 3)
    offsets = (cols - 1.0)[:, None] * ex + (rows - 1.0)[:, None] * ey
    return np.asarray(sample.centre_px) + offsets * sample.pitch_px


def grey_at(image: np.ndarray, xy: np.ndarray, half: int = 1) -> float:
    """Median grey of a small patch around a point."""
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    x, y = (int(v) for v in np.rint(xy))
    return float(np.median(grey[y - half : y + half + 1, x - half : x + half + 1]))


def plain(scene: Scene, cells: str) -> Scene:
    """The scene with the given pieces, centred, mid-sized and matte; no occluder; neutral light and
    optics (the table, plate, lines, camera and shadows stay as sampled)."""
    board = scene.board
    pieces = dataclasses.replace(
        board.pieces,
        cells=cells,
        offsets_frac=np.zeros((9, 2)),
        radius_frac=0.3,
        glossy=False,
        highlights=(False,) * 9,
    )
    post = dataclasses.replace(
        scene.post,
        exposure=1.0,
        wb_gains=(1.0, 1.0, 1.0),
        gradient_ratio=1.0,
        vignette=0.0,
        defocus_sigma_px=0.5,
        motion_px=0.0,
        jpeg_quality=90,
    )
    return dataclasses.replace(
        scene, board=dataclasses.replace(board, pieces=pieces), post=post, occluder=None
    )


def test_same_seed_and_index_give_identical_frames() -> None:
    first, second = make_frame(7, SEED), make_frame(7, SEED)
    assert np.array_equal(first.image, second.image)
    assert (first.board, first.centre_px, first.angle_deg, first.pitch_px) == (
        second.board,
        second.centre_px,
        second.angle_deg,
        second.pitch_px,
    )
    assert (first.occluded, first.tags) == (second.occluded, second.tags)
    assert not np.array_equal(first.image, make_frame(8, SEED).image)
    assert not np.array_equal(first.image, make_frame(7, SEED + 1).image)


def test_images_are_640_by_480_bgr_bytes(frames: list[Sample]) -> None:
    for sample in frames:
        assert sample.image.shape == (IMAGE_H, IMAGE_W, 3)
        assert sample.image.dtype == np.uint8


def test_boards_are_nine_legal_looking_squares(frames: list[Sample]) -> None:
    for sample in frames:
        assert len(sample.board) == 9
        assert set(sample.board) <= set("XO.")
        assert abs(sample.board.count("X") - sample.board.count("O")) <= 1
    counts = {sample.board.count(".") for sample in frames}
    assert 0 in counts and 9 in counts, "the stream should hold both full and empty boards"


def test_angles_are_folded_into_a_quarter_turn(frames: list[Sample]) -> None:
    for sample in frames:
        assert -45.0 < sample.angle_deg <= 45.0


def test_pitch_stays_in_range(frames: list[Sample]) -> None:
    lo, hi = PITCH_RANGE_PX
    for sample in frames:
        assert lo - PITCH_TOLERANCE_PX <= sample.pitch_px <= hi + PITCH_TOLERANCE_PX


def test_every_square_centre_is_inside_the_image(frames: list[Sample]) -> None:
    for sample in frames:
        centres = square_centres_from_truth(sample)
        assert (centres[:, 0] >= 0).all() and (centres[:, 0] < IMAGE_W).all()
        assert (centres[:, 1] >= 0).all() and (centres[:, 1] < IMAGE_H).all()


def test_about_a_tenth_of_frames_are_occluded(frames: list[Sample]) -> None:
    occluded = sum(sample.occluded for sample in frames)
    assert OCCLUDED_BAND[0] <= occluded <= OCCLUDED_BAND[1]


def test_tags_are_known_and_consistent(frames: list[Sample]) -> None:
    for sample in frames:
        assert sample.tags <= TAGS
        assert sample.occluded == any(tag.startswith("occ:") for tag in sample.tags)
        assert ("glossy" in sample.tags) != ("matte" in sample.tags)
        assert sum(tag.startswith("plate:") and tag != "plate:contest" for tag in sample.tags) == 1


def test_black_pieces_are_dark_and_white_ones_light_where_the_truth_puts_them() -> None:
    # several cameras and plates; among them boards drawn at each of the four quarter turns, so every
    # re-labelling of the truth is exercised
    drawn = "XO.OX.XOO"
    for k in range(CONTROLLED_SCENES):
        scene = plain(sample_scene(np.random.default_rng([SEED, k])), drawn)
        sample = render(scene)
        assert sorted(sample.board) == sorted(drawn)
        centres = square_centres_from_truth(sample)
        for char, xy in zip(sample.board, centres, strict=True):
            grey = grey_at(sample.image, xy)
            if char == "X":
                assert grey <= DARK_AT_MOST, (k, sample.board, grey)
            elif char == "O":
                assert grey >= LIGHT_AT_LEAST, (k, sample.board, grey)


def test_black_pieces_are_darker_than_white_ones_in_the_stream(frames: list[Sample]) -> None:
    # any light, exposure or blur keeps black pieces darker than white ones in the same frame
    checked = 0
    for sample in frames:
        if sample.occluded or "glossy" in sample.tags or not {"X", "O"} <= set(sample.board):
            continue
        centres = square_centres_from_truth(sample)
        greys = [grey_at(sample.image, xy) for xy in centres]
        blacks = [g for g, char in zip(greys, sample.board, strict=True) if char == "X"]
        whites = [g for g, char in zip(greys, sample.board, strict=True) if char == "O"]
        assert max(blacks) < min(whites), (sample.board, blacks, whites, sorted(sample.tags))
        checked += 1
    assert checked >= 10
