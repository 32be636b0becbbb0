"""Tests of the contest-table generator: determinism, interface, truth against pixels, tag shares."""

from __future__ import annotations

import math

import numpy as np
import pytest

from .generator import (
    ANGLE_MAX,
    ANGLE_MIN_EXCL,
    FRAME_H,
    FRAME_W,
    PITCH_MAX,
    PITCH_MIN,
    RenderInfo,
    Sample,
    make_set,
    render,
)

SEED = 20241201
N_FRAMES = 100
PATCH = 2  # half-size of the pixel patches read at square centres
MAX_BLACK_WHITE_RATIO = 0.7  # a black piece's centre is at most this share of a white one's (2:1 light)
MIN_BLACK_WHITE_GAP = 30.0  # grey levels between a white and a black piece's centre in one frame
MAX_EMPTY_SQUARE_SPREAD = 45.0  # grey levels between an empty square's centre and its inner corner
EMPTY_CORNER = 0.33  # pitch units from the square centre, diagonally: plate between piece and lines

REQUIRED_TAGS = (
    "contest",
    "general",
    "plate:white",
    "plate:blue",
    "plate:green",
    "lines:light",
    "lines:dark",
    "lines:thin",
    "large-pieces",
    "small-pieces",
    "glossy",
    "white-near-plate",
    "pitch:small",
    "pitch:large",
    "gradient",
    "vignette",
    "jpeg:low",
    "motion-blur",
    "wb:warm",
    "wb:cool",
    "full-board",
    "empty-board",
    "supply",
    "tape",
)


@pytest.fixture(scope="module")
def frames() -> list[tuple[Sample, RenderInfo]]:
    return [render(SEED, i) for i in range(N_FRAMES)]


def _grey(img: np.ndarray) -> np.ndarray:
    return img.astype(np.float32) @ np.array([0.114, 0.587, 0.299], np.float32)


def _square_point(s: Sample, k: int, du: float = 0.0, dv: float = 0.0) -> tuple[int, int]:
    """Image point of square k's centre (plus an offset in pitch units), from the Sample's truth only."""
    r, c = divmod(k, 3)
    u, v = c - 1 + du, r - 1 + dv
    a = math.radians(s.angle_deg)
    x = s.centre_px[0] + s.pitch_px * (math.cos(a) * u + math.sin(a) * v)
    y = s.centre_px[1] + s.pitch_px * (-math.sin(a) * u + math.cos(a) * v)
    return round(x), round(y)


def _patch_mean(grey: np.ndarray, p: tuple[int, int]) -> float:
    x, y = p
    return float(grey[y - PATCH : y + PATCH + 1, x - PATCH : x + PATCH + 1].mean())


def test_same_seed_same_pixels(frames: list[tuple[Sample, RenderInfo]]) -> None:
    again = make_set(3, SEED)
    for a, (b, _) in zip(again, frames[:3], strict=True):
        assert np.array_equal(a.image, b.image)
        assert (a.board, a.centre_px, a.angle_deg, a.pitch_px, a.occluded, a.tags) == (
            b.board,
            b.centre_px,
            b.angle_deg,
            b.pitch_px,
            b.occluded,
            b.tags,
        )


def test_prefix_does_not_depend_on_n(frames: list[tuple[Sample, RenderInfo]]) -> None:
    short = make_set(5, SEED)
    for a, (b, _) in zip(short, frames[:5], strict=True):
        assert np.array_equal(a.image, b.image)
    assert make_set(0, SEED) == []


def test_other_seed_other_pixels(frames: list[tuple[Sample, RenderInfo]]) -> None:
    other = make_set(1, SEED + 1)[0]
    assert not np.array_equal(other.image, frames[0][0].image)


def test_interface(frames: list[tuple[Sample, RenderInfo]]) -> None:
    for s, info in frames:
        assert isinstance(s.image, np.ndarray)
        assert s.image.dtype == np.uint8
        assert s.image.shape == (FRAME_H, FRAME_W, 3)
        assert len(s.board) == 9
        assert set(s.board) <= {"X", "O", "."}
        assert ANGLE_MIN_EXCL < s.angle_deg <= ANGLE_MAX
        assert PITCH_MIN <= s.pitch_px <= PITCH_MAX
        # the pitch is the mean distance from the centre square's centre to its four neighbours' centres
        nb = info.homography @ np.array([[1.0, -1, 0, 0], [0, 0, 1, -1], [1, 1, 1, 1]])
        d = np.hypot(nb[0] / nb[2] - s.centre_px[0], nb[1] / nb[2] - s.centre_px[1])
        assert math.isclose(float(d.mean()), s.pitch_px, rel_tol=1e-6)
        assert isinstance(s.occluded, bool)
        assert isinstance(s.tags, frozenset)
        # the centre is the image of the board origin
        c = info.homography @ np.array([0.0, 0.0, 1.0])
        assert math.isclose(c[0] / c[2], s.centre_px[0], abs_tol=1e-6)
        assert math.isclose(c[1] / c[2], s.centre_px[1], abs_tol=1e-6)


def test_grid_wholly_inside_frame(frames: list[tuple[Sample, RenderInfo]]) -> None:
    corners = np.array([[-1.5, -1.5, 1], [1.5, -1.5, 1], [1.5, 1.5, 1], [-1.5, 1.5, 1]]).T
    for _, info in frames:
        p = info.homography @ corners
        x, y = p[0] / p[2], p[1] / p[2]
        assert (x > 0).all() and (x < FRAME_W - 1).all()
        assert (y > 0).all() and (y < FRAME_H - 1).all()


def test_board_truth_matches_pixels(frames: list[tuple[Sample, RenderInfo]]) -> None:
    """Black pieces are darker than white ones at their centres; empty squares show plate at the centre."""
    checked_pieces = checked_empty = 0
    for s, _ in frames:
        if s.occluded:
            continue
        grey = _grey(s.image)
        xs = [_patch_mean(grey, _square_point(s, k)) for k, ch in enumerate(s.board) if ch == "X"]
        os_ = [_patch_mean(grey, _square_point(s, k)) for k, ch in enumerate(s.board) if ch == "O"]
        if xs and os_:
            assert max(xs) + MIN_BLACK_WHITE_GAP < min(os_), (s.board, xs, os_)
            assert max(xs) < MAX_BLACK_WHITE_RATIO * min(os_), (s.board, xs, os_)
            checked_pieces += 1
        for k, ch in enumerate(s.board):
            if ch != ".":
                continue
            centre = _patch_mean(grey, _square_point(s, k))
            corners = [
                _patch_mean(grey, _square_point(s, k, du * EMPTY_CORNER, dv * EMPTY_CORNER))
                for du in (-1, 1)
                for dv in (-1, 1)
            ]
            # at least one inner corner is plate in the same light as the centre
            assert min(abs(centre - c) for c in corners) < MAX_EMPTY_SQUARE_SPREAD, (s.board, k)
            checked_empty += 1
    assert checked_pieces >= 20
    assert checked_empty >= 50


def test_black_piece_is_dark_in_contest_frames(frames: list[tuple[Sample, RenderInfo]]) -> None:
    """On the blue and green contest plates a black foam disc is clearly dark at its centre."""
    for s, _ in frames:
        if "contest" not in s.tags or s.occluded:
            continue
        grey = _grey(s.image)
        for k, ch in enumerate(s.board):
            if ch == "X":
                assert _patch_mean(grey, _square_point(s, k)) < 110, (s.board, k)


def test_coin_lies_in_an_empty_square(frames: list[tuple[Sample, RenderInfo]]) -> None:
    for s, info in frames:
        if info.coin_square is not None:
            assert s.board[info.coin_square] == "."
            assert "occluded:coin" in s.tags and s.occluded


def test_tags_and_shares(frames: list[tuple[Sample, RenderInfo]]) -> None:
    samples = [s for s, _ in frames]
    contest = [s for s in samples if "contest" in s.tags]
    assert len(contest) == N_FRAMES // 2
    assert all(("general" in s.tags) != ("contest" in s.tags) for s in samples)
    occluded = sum(s.occluded for s in samples)
    assert occluded == N_FRAMES // 10  # exactly 10 %: two fixed slots in every 20 frames
    assert {t for s in samples for t in s.tags if t.startswith("occluded:")} == {
        "occluded:hand",
        "occluded:pen",
        "occluded:coin",
    }
    for s in samples:
        assert s.occluded == any(t.startswith("occluded:") for t in s.tags)
        if "full-board" in s.tags:
            assert "." not in s.board
        if "empty-board" in s.tags:
            assert s.board == "." * 9
    for s, info in frames:
        if "contest" in s.tags:
            assert ("plate:blue" in s.tags) or ("plate:green" in s.tags)
            assert "lines:dark" in s.tags
            assert info.piece_radius >= 0.38
    seen = set().union(*(s.tags for s in samples))
    missing = [t for t in REQUIRED_TAGS if t not in seen]
    assert not missing, missing
