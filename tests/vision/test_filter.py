"""The stateful parts, frame by frame: stability filter, pose tracker (jumps), anomaly watch and store."""

from __future__ import annotations

import numpy as np
import pytest

from messages import GameState
from services.vision.anomaly import Anomaly, AnomalyStore, AnomalyWatch, unexplained_difference
from services.vision.detector import detect
from services.vision.tracker import PoseTracker, StabilityFilter

from .synth import Scene, draw


def feed(f: StabilityFilter, boards: list[str], occluded: set[int] = frozenset()) -> list[tuple[bool, bool]]:
    return [
        (step.stable, step.changed)
        for step in (f.update(True, b, i in occluded) for i, b in enumerate(boards))
    ]


def test_stable_only_after_n_agreeing_frames_and_announced_once() -> None:
    f = StabilityFilter(3)
    out = feed(f, ["X........"] * 5)
    assert out == [(False, False), (False, False), (True, True), (True, False), (True, False)]
    assert f.stable_board == "X........"


def test_removed_piece_is_noticed_like_an_added_one() -> None:
    f = StabilityFilter(2)
    feed(f, ["X...O...."] * 3)
    out = feed(f, ["X........"] * 3)
    assert [c for _, c in out] == [False, True, False]
    assert f.stable_board == "X........"


def test_occluded_unknown_missing_or_jumping_frames_break_the_run() -> None:
    f = StabilityFilter(3)
    assert not f.update(True, "X........", False).stable
    assert not f.update(True, "X........", True).stable  # occluded
    assert not f.update(True, "X........", False).stable
    assert not f.update(True, "X???.....", False).stable  # unknown square
    assert not f.update(False, "?????????", False).stable  # no board
    assert not f.update(True, "X........", False, "jump").stable
    steps = [f.update(True, "X........", False) for _ in range(3)]
    assert [s.agreeing for s in steps] == [1, 2, 3]
    assert steps[-1].stable and steps[-1].changed


def test_flicker_between_two_readings_never_becomes_stable() -> None:
    f = StabilityFilter(2)
    out = feed(f, ["X........", "X...O...."] * 6)
    assert not any(stable for stable, _ in out)
    with pytest.raises(ValueError):
        StabilityFilter(0)


def _scene(dx: float = 0.0, angle: float = 10.0) -> np.ndarray:
    return draw(Scene(center=(320.0 + dx, 240.0), angle_deg=angle, board="X...O....", noise=2.0), seed=1)


def test_tracker_rejects_a_sudden_jump_until_it_persists() -> None:
    tracker = PoseTracker(jump_px=25.0, jump_frames=3)
    first = tracker.process(_scene())
    assert first.pose_source == "detected"
    home = tracker.pose
    moved = _scene(dx=60.0)
    a = tracker.process(moved)
    b = tracker.process(moved)
    assert a.problem == b.problem == "jump"
    assert tracker.pose == home  # held at the last good pose
    c = tracker.process(moved)
    assert c.problem == "" and tracker.pose is not None
    assert tracker.pose.center_px.x == pytest.approx(380.0, abs=3.0)


def test_a_jump_seen_only_through_a_hand_is_not_taken() -> None:
    """A grid found at a new pose in occluded frames (a hand over the board) is no evidence that the
    board moved, however many frames show it: they neither count towards the move nor break a run of
    clear frames that confirm it."""
    tracker = PoseTracker(jump_px=25.0, jump_frames=3)
    tracker.process(_scene())
    home = tracker.pose
    covered = draw(
        Scene(center=(380.0, 240.0), angle_deg=10.0, board="X...O....", noise=2.0, hand=(400.0, 250.0, 30.0)),
        seed=1,
    )
    for _ in range(6):
        det = tracker.process(covered)
        assert det.problem == "jump" and det.occluded
    assert tracker.pose == home
    moved = _scene(dx=60.0)
    assert tracker.process(moved).problem == "jump"
    assert tracker.process(covered).problem == "jump"  # (between the clear frames: no reset)
    assert tracker.process(moved).problem == "jump"
    assert tracker.process(moved).problem == ""
    assert tracker.pose is not None and tracker.pose.center_px.x == pytest.approx(380.0, abs=3.0)


def test_tracker_follows_small_motion_and_reads_at_the_prior_when_the_grid_is_hidden() -> None:
    tracker = PoseTracker(jump_px=25.0)
    for dx in (0.0, 5.0, 10.0):
        assert tracker.process(_scene(dx=dx)).problem == ""
    assert tracker.pose.center_px.x == pytest.approx(330.0, abs=2.0)
    # A frame with no grid at all: the detector falls back to the prior and sees no lines.
    blank = np.full((480, 640, 3), 120, np.uint8)
    det = tracker.process(blank)
    assert det.pose_source == "prior" and det.occluded
    assert det.found


def test_detect_uses_the_prior_only_when_nothing_is_found() -> None:
    image = _scene()
    alone = detect(image)
    with_prior = detect(image, prior=alone.pose)
    assert with_prior.pose_source == "detected"
    assert with_prior.board == alone.board == "X...O...."


def test_unexplained_difference() -> None:
    assert unexplained_difference("X...O....", "X........", "waiting-for-person") == []
    assert unexplained_difference("X...O...O", "X........", "waiting-for-person") == [5, 9]
    assert unexplained_difference("....O....", "X........", "waiting-for-person") == [1, 5]
    assert unexplained_difference("X...O....", "X........", "placement-confirmed") == [5]


def test_anomaly_watch_disagreement_only_while_the_referee_waits() -> None:
    watch = AnomalyWatch(lost_frames=3, min_interval_s=5.0)
    assert watch.check(True, True, "O........", now=0.0) is None  # no referee yet
    watch.referee = GameState(revision=1, phase="device-to-move", board="X........")
    assert watch.check(True, True, "O........", now=1.0) is None  # not waiting
    watch.referee = GameState(revision=2, phase="placement-confirmed", board="X........")
    assert watch.check(True, False, "O........", now=2.0) is None  # not stable
    found = watch.check(True, True, "O........", now=3.0)
    assert found is not None and found.kind == "disagree"
    assert watch.check(True, True, "O........", now=4.0) is None  # rate limited
    # another disagreement within the interval has its own picture (and its own limit)
    other = watch.check(True, True, "O.......O", now=4.5)
    assert other is not None and "O.......O" in other.detail
    assert watch.check(True, True, "O.......O", now=5.0) is None
    assert watch.check(True, True, "O........", now=9.0) is not None


def test_anomaly_watch_lost_board_once_per_loss() -> None:
    watch = AnomalyWatch(lost_frames=3, min_interval_s=0.0)
    assert watch.check(False, False, "?????????", now=0.0) is None  # never seen: not lost
    watch.check(True, False, "X........", now=0.0)
    kinds = [watch.check(False, False, "?????????", now=float(t)) for t in range(6)]
    assert [k.kind if k else None for k in kinds] == [None, None, "lost", None, None, None]
    watch.check(True, False, "X........", now=7.0)
    again = [watch.check(False, False, "?????????", now=8.0 + t) for t in range(3)]
    assert again[-1] is not None


def test_anomaly_store_is_bounded(tmp_path) -> None:
    image = _scene()
    det = detect(image)
    store = AnomalyStore(tmp_path / "anomalies", max_files=3)
    for i in range(5):
        path = store.save(image, det, Anomaly("disagree", "test"), frame_id=i)
        assert path.exists()
    files = sorted((tmp_path / "anomalies").glob("*.png"))
    assert len(files) == 3
    assert all(f.stat().st_size > 1000 for f in files)


def test_a_stable_board_turned_by_the_operator_is_announced_again_with_its_new_pose() -> None:
    from services.vision.tracker import VisionCore

    core = VisionCore(stable_frames=3)
    results = [core.process(_scene(angle=10.0), frame_id=i) for i in range(5)]
    assert [r.changed for r in results].count(True) == 1
    assert not any(r.moved for r in results)
    results = [core.process(_scene(angle=25.0), frame_id=10 + i) for i in range(12)]
    assert not any(r.changed for r in results), "the same pieces: the stable board did not change"
    assert [r.moved for r in results].count(True) == 1, "the turned board is announced once"
    stable = core.stable_observation
    assert stable is not None and stable.pose is not None
    assert stable.pose.angle_deg == pytest.approx(25.0, abs=1.0)
    assert stable.frame_id == 21, "the repeat carries the newest stable frame"


def test_the_window_behind_a_stable_frame_starts_at_the_first_agreeing_frame() -> None:
    """A board left alone for a while: every frame stands for the whole run since the hand left, so a
    frame captured after a moment (a button press) is stable at once, its window begun before it."""
    f = StabilityFilter(3)
    ms = 1_000_000
    assert f.update(True, "X........", True, capture_ns=0 * ms).since_ns == 0  # the hand still covers it
    steps = [f.update(True, "X...O....", False, capture_ns=t * ms) for t in (33, 66, 100, 133, 166)]
    assert [s.since_ns for s in steps] == [33 * ms] * 5
    assert [s.stable for s in steps] == [False, False, True, True, True]
    # a new reading starts a new window; an unusable frame ends it
    moved = f.update(True, "X...O...X", False, capture_ns=200 * ms)
    assert moved.since_ns == 200 * ms and not moved.stable
    covered = f.update(True, "X...O...X", True, capture_ns=233 * ms)
    assert covered.since_ns == 0 and covered.agreeing == 0
    assert f.update(True, "X...O...X", False, capture_ns=266 * ms).since_ns == 266 * ms
    f.reset()
    assert f.update(True, "X...O...X", False, capture_ns=300 * ms).since_ns == 300 * ms


def test_core_observations_carry_their_window() -> None:
    from services.vision.tracker import VisionCore

    core = VisionCore(stable_frames=3)
    ms = 1_000_000
    hidden = draw(
        Scene(center=(320.0, 240.0), angle_deg=10.0, board="X...O....", noise=2.0, hand=(330.0, 250.0, 0.0)),
        seed=1,
    )
    first = core.process(hidden, frame_id=0, capture_ns=10 * ms)
    assert not first.observation.stable and first.observation.window_start_ns == 0
    out = [core.process(_scene(), frame_id=i, capture_ns=(10 + 33 * i) * ms).observation for i in range(1, 6)]
    assert [o.stable for o in out] == [False, False, True, True, True]
    assert {o.window_start_ns for o in out} == {43 * ms}
    assert [o.capture_ns for o in out] == [(10 + 33 * i) * ms for i in range(1, 6)]
    assert core.stable_observation is not None and core.stable_observation.window_start_ns == 43 * ms
