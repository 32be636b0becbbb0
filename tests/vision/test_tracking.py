"""Tracking: a steady or slowly moving board is confirmed on its lines at the last pose (no search),
followed to within the sweep's tolerances, and never renumbered while it stands near 45 degrees."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from services.vision.detector import Detection, detect, track
from services.vision.tracker import PoseTracker

from .synth import Scene, draw, square_centre
from .test_sweep import image_truth, render_board, rotate_board

simcam = pytest.importorskip("services.simcam.renderer")
from services.simcam.style import RenderStyle  # noqa: E402


def test_steady_board_is_confirmed_without_a_search_and_stays_accurate() -> None:
    tracker = PoseTracker()
    style = RenderStyle.preset("default")
    centre_mm = (205.0, 148.0)
    for i in range(8):
        # The board drifts by half a millimetre and a tenth of a degree per frame.
        angle = 12.0 + 0.1 * i
        centre = (centre_mm[0] + 0.5 * i, centre_mm[1])
        image = render_board("X...O...O", angle, centre, style, seed=i)
        det = tracker.process(image)
        truth_c, truth_a = image_truth(centre, angle)
        assert det.found and det.pose is not None
        if i:
            assert det.extra.get("tracked") == 1.0, f"frame {i} needed a search"
        assert det.board == "X...O...O"
        assert abs(det.pose.angle_deg - truth_a) < 1.0, (i, det.pose.angle_deg, truth_a)
        assert math.hypot(det.pose.center_px.x - truth_c[0], det.pose.center_px.y - truth_c[1]) < 3.0


def test_board_at_45_degrees_is_not_renumbered_from_frame_to_frame() -> None:
    """The board wobbles across 45 degrees in the image (the simulated camera turns it by about 1.8
    degrees): the tracked numbering stays the first frame's."""
    tracker = PoseTracker()
    style = RenderStyle.preset("clean")
    boards, tracked = [], 0
    for i, angle in enumerate([46.2, 46.6, 47.0, 47.4, 47.0, 46.6, 46.2, 47.2]):
        det = tracker.process(render_board("XO.......", angle, (200.0, 150.0), style, seed=i))
        assert det.found and det.pose is not None
        boards.append(det.board)
        tracked += det.extra.get("tracked") == 1.0
        # Whatever numbering is used, it agrees with the reported angle.
        _c, truth_a = image_truth((200.0, 150.0), angle)
        turns = round((det.pose.angle_deg - truth_a) / 90.0)
        assert det.board == rotate_board("XO.......", turns)
        assert abs(det.pose.angle_deg - truth_a - 90.0 * turns) < 1.0
    assert len(set(boards)) == 1, boards
    assert tracked >= 6


def test_track_falls_back_to_the_search_when_the_board_moved() -> None:
    first = detect(draw(Scene(center=(300.0, 240.0), angle_deg=8.0, board="X...O...."), seed=1))
    moved = draw(Scene(center=(360.0, 220.0), angle_deg=20.0, board="X...O...."), seed=2)
    det = track(moved, first.pose, polarity=first.polarity)
    assert det.extra.get("tracked") == 0.0 and det.pose_source == "detected"
    assert det.pose.center_px.x == pytest.approx(360.0, abs=2.0)
    assert det.board == "X...O...."


def test_tracked_reading_equals_the_searched_one_on_a_sweep() -> None:
    """Tracking at a slightly wrong prior gives the same board, angle and centre as a fresh search."""
    rng = np.random.default_rng(11)
    for i in range(12):
        angle = float(rng.uniform(-40, 40))
        centre = (200.0 + rng.uniform(-40, 40), 150.0 + rng.uniform(-30, 30))
        style = RenderStyle.preset(("default", "dark", "harsh", "dim")[i % 4])
        board = "".join(rng.choice(list("..XO"), 9))
        image = render_board(board, angle, centre, style, seed=i)
        searched = detect(image)
        assert searched.found
        # The prior is off by a pixel and a fraction of a degree: what a frame ago looks like.
        prior_image = render_board(
            board, angle - 0.3, (centre[0] - 0.7, centre[1] + 0.5), style, seed=100 + i
        )
        prior = detect(prior_image)
        det = track(image, prior.pose, polarity=prior.polarity, half_width=prior.extra["half_width"])
        assert det.extra["tracked"] == 1.0, i
        assert det.board == searched.board, i
        assert abs(det.pose.angle_deg - searched.pose.angle_deg) < 0.5, i
        dc = math.hypot(
            det.pose.center_px.x - searched.pose.center_px.x, det.pose.center_px.y - searched.pose.center_px.y
        )
        assert dc < 1.5, (i, dc)


def test_a_searched_pose_near_45_degrees_keeps_the_last_numbering() -> None:
    """The board is nudged (too far for the line check, so the full search runs) while it crosses 45
    degrees in the image: the search numbers it the other way, the tracker keeps the last numbering."""
    tracker = PoseTracker(jump_px=40.0)
    style = RenderStyle.preset("clean")
    first = tracker.process(render_board("XO.......", 46.4, (200.0, 150.0), style, seed=1))
    assert first.board == "XO......." and first.pose.angle_deg < 45.0
    image = render_board("XO.......", 47.4, (208.0, 146.0), style, seed=2)
    assert detect(image).board != "XO......."  # alone, the search numbers it from the other corner
    det = tracker.process(image)
    assert det.extra.get("tracked") == 0.0 and det.extra.get("renumbered") == 1.0
    assert det.board == "XO......." and det.pose.angle_deg > 45.0
    _c, truth_a = image_truth((208.0, 146.0), 47.4)
    assert abs(det.pose.angle_deg - truth_a) < 1.0


def _noisy(image: np.ndarray, rng: np.random.Generator, sigma: float = 2.5) -> np.ndarray:
    return np.clip(image + rng.normal(0.0, sigma, image.shape), 0, 255).astype(np.uint8)


def test_an_unchanged_picture_keeps_its_reading_and_any_change_is_read_afresh() -> None:
    """A board standing still (fresh sensor noise every frame) is not read again: the last reading
    stands, for at most REREAD_EVERY_FRAMES frames in a row. A piece put down, a fingertip over a square
    or a moved board are read at once."""
    from services.vision.tracker import REREAD_EVERY_FRAMES

    rng = np.random.default_rng(5)
    scene = Scene(angle_deg=8.0, board="X...O....", noise=0.0)
    still = draw(scene, seed=1)
    tracker = PoseTracker()
    first = tracker.process(_noisy(still, rng))
    assert first.board == "X...O...." and "unchanged" not in first.extra
    reused = 0
    fresh = first
    for _ in range(REREAD_EVERY_FRAMES + 2):
        det = tracker.process(_noisy(still, rng))
        assert det.board == first.board
        if det.extra.get("unchanged") == 1.0:
            assert det.pose == fresh.pose
            reused += 1
        else:
            fresh = det
    # every frame but the second (the fresh reading that confirms the first) and the forced fresh read
    # after REREAD_EVERY_FRAMES reused ones
    assert reused == REREAD_EVERY_FRAMES
    # a piece put down on square 9
    placed = tracker.process(_noisy(draw(replace(scene, board="X...O...X"), seed=1), rng))
    assert "unchanged" not in placed.extra and placed.board == "X...O...X"
    # a fingertip-sized dark blot over square 2
    x, y = square_centre(scene, 2)
    blot = draw(replace(scene, board="X...O...X"), seed=1)
    cv2.circle(blot, (round(x), round(y)), 6, (60, 60, 60), -1)
    covered = tracker.process(_noisy(blot, rng))
    assert "unchanged" not in covered.extra
    # the board moved by a few pixels
    moved = tracker.process(
        _noisy(draw(replace(scene, board="X...O...X", center=(326.0, 243.0)), seed=1), rng)
    )
    assert "unchanged" not in moved.extra and moved.board == "X...O...X"


def test_a_single_misread_frame_is_not_reused() -> None:
    """A reading is reused only once the next fresh reading of the same picture agrees with it: one
    misread frame (here forced) must not stand for the frames after it and fill a stability window."""
    rng = np.random.default_rng(6)
    still = draw(Scene(angle_deg=8.0, board="X...O....", noise=0.0), seed=1)
    tracker = PoseTracker()
    assert tracker.process(_noisy(still, rng)).board == "X...O...."
    honest_read = tracker._read

    def misread(image: np.ndarray) -> Detection:
        det = honest_read(image)
        squares = [replace(sq, state="white") if k == 6 else sq for k, sq in enumerate(det.squares)]
        return replace(det, squares=tuple(squares))

    tracker._read = misread  # type: ignore[method-assign]
    assert tracker.process(_noisy(still, rng)).board == "X...O.O.."
    tracker._read = honest_read  # type: ignore[method-assign]
    again = tracker.process(_noisy(still, rng))
    assert "unchanged" not in again.extra and again.board == "X...O...."
    confirmed = tracker.process(_noisy(still, rng))
    assert "unchanged" not in confirmed.extra  # confirms the reading before it
    assert tracker.process(_noisy(still, rng)).extra.get("unchanged") == 1.0


def test_the_lines_width_is_kept_from_clear_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lines' width measured on an occluded frame (a hand over the board makes it anything from 3%
    to 7% of the pitch) is not what later frames are tracked with: a clear frame's measure stands until
    the next clear frame's."""
    import services.vision.tracker as tracker_module

    rng = np.random.default_rng(7)
    still = draw(Scene(angle_deg=8.0, board="X...O....", noise=0.0), seed=1)
    tracker = PoseTracker(reuse_unchanged=False)
    tracker.process(_noisy(still, rng))
    clear_width = tracker._half_width
    assert clear_width > 0

    def occluded_track(*args: object, **kwargs: object) -> Detection:
        det = track(*args, **kwargs)  # type: ignore[arg-type]
        return replace(det, occluded=True, extra={**det.extra, "half_width": 2 * clear_width})

    monkeypatch.setattr(tracker_module, "track", occluded_track)
    assert tracker.process(_noisy(still, rng)).occluded
    assert tracker._half_width == clear_width
    monkeypatch.setattr(tracker_module, "track", track)
    tracker.process(_noisy(still, rng))
    assert tracker._half_width == clear_width  # and a clear frame measures it again


def test_the_tracker_times_a_reused_reading_with_the_timer_it_is_given() -> None:
    """The core reads no clock of its own: a reused reading's processing time comes from the timer
    passed in (here one that advances 2 ms a call)."""
    ticks = iter(i * 0.002 for i in range(1000))
    tracker = PoseTracker(timer=lambda: next(ticks))
    image = render_board("X...O...O", 12.0, (205.0, 148.0), RenderStyle.preset("clean"), seed=1)
    tracker.process(image)
    tracker.process(image)  # confirms the first reading
    again = tracker.process(image)
    assert again.extra.get("unchanged") == 1.0
    assert again.processing_ms == pytest.approx(2.0)
