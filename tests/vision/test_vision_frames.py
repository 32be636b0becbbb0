"""bench/vision_frames.py: the tuning sets' figures counted frame by frame, and the frames a change moved."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.vision_frames import (
    A_FRAME_AGO,
    JITTER_DEGREES,
    JITTER_PRIORS,
    JITTER_SHIFT_PX,
    OFF_THE_BOARD,
    STILL_FRAMES,
    Record,
    _records,
    a_frame_ago,
    compare,
    jittered_priors,
    occluder_of,
    summary,
    tally,
)
from services.vision.detector import detect
from tests.vision.synth import Scene, draw


def _record(read: str, truth: str, *, occluded: bool = False, flagged: bool = False) -> Record:
    return {
        "generator": "flat",
        "seed": 1,
        "index": 0,
        "occluded": occluded,
        "found": True,
        "flagged": flagged,
        "read": read,
        "truth": truth,
        "confidence": [1.0] + [0.75] * 8,
    }


def test_the_counts_of_clear_and_occluded_frames() -> None:
    records = [
        _record("X........", "X........"),
        _record("O.......?", "X........"),  # square 0 wrong at 1.0, square 8 unknown
        _record("X........", ".........", occluded=True),  # read clear: counts against the target
        _record(".........", ".........", occluded=True),  # read clear, and right all the same
        _record("?........", ".........", occluded=True, flagged=True),
        _record(".O.......", ".........", flagged=True),  # wrong at 0.75, flagged: not passed
    ]
    c, kinds = tally(records)
    assert (c["clear"], c["squares"], c["right"], c["unknown"], c["wrong"]) == (3, 27, 24, 1, 2)
    assert c["wrong sure"] == 1 and kinds == {"X->O": 1, ".->O": 1}
    assert (c["passed wrong"], c["flagged"], c["occluded"], c["occluded read clear"]) == (0, 1, 3, 2)
    assert c["occluded read clear, right"] == 1
    assert "squares right 24/27" in summary(records)
    assert "occluded read clear 2 of 3 (1 of them right)" in summary(records)


def test_a_board_found_off_the_true_one_is_counted_in_clear_frames() -> None:
    """A board found with its centre more than ``OFF_THE_BOARD`` pitches from the true one (another grid,
    a window a square off) is counted, however its squares read; records kept before the distance was
    recorded count as on the board."""
    on = {**_record("X........", "X........"), "off_pitches": 0.02}
    off = {**_record(".........", "X........"), "off_pitches": OFF_THE_BOARD + 0.5}
    covered_off = {**_record("?........", ".........", occluded=True, flagged=True), "off_pitches": 3.0}
    old = _record("X........", "X........")  # (no "off_pitches")
    c, _kinds = tally([on, off, covered_off, old])
    assert (c["clear"], c["found off the board"]) == (3, 1)
    assert "not found 0 of 3, found off the board 1," in summary([on, off, covered_off, old])


def test_a_still_board_refused_as_a_jump_is_counted() -> None:
    """A clear frame whose last reading the pose tracker gave as a jump (read at its last pose, waited
    out by the stability filter): a board the device would wait on for ever."""
    jumped = {**_record("X........", "X........"), "problem": "jump"}
    c, _kinds = tally([jumped, _record("X........", "X........")])
    assert (c["clear"], c["refused as a jump"], c["right"]) == (2, 1, 18)
    assert "refused as a jump 1;" in summary([jumped])


def test_frames_are_read_as_the_pose_tracker_reads_a_still_board() -> None:
    """``--still``: each frame shown ``STILL_FRAMES`` times to a fresh pose tracker; flat's first frames
    are clear boards it follows without a jump, read as the cold search reads them."""
    assert STILL_FRAMES >= 3  # (a cold search, a tracked frame, a reading reused)
    still = _records(("flat", 1, 0, 2, "still"))
    cold = _records(("flat", 1, 0, 2))
    assert [r["problem"] for r in still] == ["", ""]
    assert [(r["read"], r["truth"]) for r in still] == [(r["read"], r["truth"]) for r in cold]
    with pytest.raises(ValueError, match="reading must be one of"):
        _records(("flat", 1, 0, 1, "sideways"))


def test_compare_lists_only_the_frames_whose_reading_changed() -> None:
    before = [_record("X........", "X........"), {**_record("O........", "X........"), "index": 1}]
    after = [_record("X........", "X........"), {**_record("X........", "X........"), "index": 1}]
    assert compare(before, after) == (
        "flat 1/1 (clear, truth X........): O........ 8 right -> X........ 9 right"
    )
    assert compare(after, after) == "no frame's reading changed"
    covered = [{**_record("?........", ".........", occluded=True, flagged=True), "index": 2}]
    read_clear = [{**_record("O........", ".........", occluded=True), "index": 2}]
    assert compare(covered, read_clear) == (
        "flat 1/2 (occluded, truth .........): ?........ flagged -> O........ READ CLEAR, WRONG"
    )


def test_a_stretch_of_a_generator_is_read_into_records() -> None:
    records = _records(("flat", 1, 0, 2))
    assert [r["index"] for r in records] == [0, 1]
    assert all(len(r["read"]) == len(r["truth"]) == 9 for r in records)
    # (flat's first frames are clear boards, found where they lie.)
    assert all(r["found"] and r["off_pitches"] < OFF_THE_BOARD for r in records)


def test_a_found_board_is_read_again_as_the_tracker_reads_it() -> None:
    """``--tracked``: the frames the cold search finds are read by track() at the pose found as it was a
    frame ago; on a steady board that confirms on its lines, the reading and the figures agree."""
    cold = _records(("flat", 1, 0, 3))
    tracked = _records(("flat", 1, 0, 3, "tracked"))
    assert [r["index"] for r in tracked] == [r["index"] for r in cold]
    assert [r["found"] for r in tracked] == [r["found"] for r in cold]
    assert sum(r["read"] == r["truth"] for r in tracked) >= sum(r["read"] == r["truth"] for r in cold) - 1


def test_a_frame_ago_moves_the_pose_by_the_drift_of_a_frame() -> None:
    pose = detect(draw(Scene(center=(320.0, 240.0), angle_deg=10.0), seed=1)).pose
    assert pose is not None
    before = a_frame_ago(pose)
    dx, dy, degrees = A_FRAME_AGO
    assert before.center_px.x - pose.center_px.x == pytest.approx(dx, abs=1e-6)
    assert before.center_px.y - pose.center_px.y == pytest.approx(dy, abs=1e-6)
    # (turned clockwise as seen, the image's y axis pointing down: the angle, counter-clockwise, drops)
    assert before.angle_deg - pose.angle_deg == pytest.approx(-degrees, abs=1e-6)


def test_jittered_priors_lie_around_the_pose_and_are_the_frames_own() -> None:
    pose = detect(draw(Scene(center=(320.0, 240.0), angle_deg=10.0), seed=1)).pose
    assert pose is not None
    priors = jittered_priors(pose, "flat", 1, 7)
    assert len(priors) == JITTER_PRIORS
    assert [p.center_px for p in jittered_priors(pose, "flat", 1, 7)] == [p.center_px for p in priors]
    assert [p.center_px for p in jittered_priors(pose, "flat", 1, 8)] != [p.center_px for p in priors]
    for p in priors:
        assert abs(p.center_px.x - pose.center_px.x) <= JITTER_SHIFT_PX + 1e-6
        assert abs(p.center_px.y - pose.center_px.y) <= JITTER_SHIFT_PX + 1e-6
        assert abs(p.angle_deg - pose.angle_deg) <= JITTER_DEGREES + 1e-6
    # (spread over the box, not bunched: a prior of the eight at least half the box off in x)
    assert max(abs(p.center_px.x - pose.center_px.x) for p in priors) >= JITTER_SHIFT_PX / 2


def test_a_found_board_is_read_from_each_jittered_prior() -> None:
    records = _records(("flat", 1, 0, 2, "jittered"))
    assert [r["index"] for r in records] == [0] * JITTER_PRIORS + [1] * JITTER_PRIORS
    assert [r["prior"] for r in records] == list(range(JITTER_PRIORS)) * 2
    # (flat's first frames: clear boards, read right from priors a pixel or so off.)
    assert all(r["found"] and r["read"] == r["truth"] for r in records)


def test_the_summary_counts_frames_read_clear_from_any_prior() -> None:
    def prior(record: Record, index: int, k: int) -> Record:
        return {**record, "index": index, "prior": k}

    records = [
        # an occluded frame read clear and wrong from one prior of two, flagged from the other
        prior(_record("X........", "O........", occluded=True), 0, 0),
        prior(_record("?........", "O........", occluded=True), 0, 1),
        # an occluded frame flagged from both
        prior(_record("?........", ".........", occluded=True, flagged=True), 1, 0),
        prior(_record(".........", ".........", occluded=True, flagged=True), 1, 1),
        # a clear frame passed wrong from one prior, right from the other
        prior(_record("X........", "O........"), 2, 0),
        prior(_record("O........", "O........"), 2, 1),
    ]
    line = summary(records).splitlines()[-1]
    assert line == (
        "from any prior: clear frames passed wrong 1 of 1; occluded read clear 1 of 2 (1 of them wrong)"
    )
    assert "prior" not in summary([_record("O........", "O........")])


def test_what_covers_a_frame_is_named_from_its_generators_tags() -> None:
    """The occluder's kind from the tags each generator uses ("occ:coin", "occluded:pen"; flat names
    its tags ``conditions``); none for a clear frame, "untagged" for an occluded one without such a tag."""
    assert occluder_of(SimpleNamespace(occluded=True, tags=frozenset({"occ:coin", "glossy"}))) == "coin"
    assert occluder_of(SimpleNamespace(occluded=True, conditions=frozenset({"occluded:pen"}))) == "pen"
    assert occluder_of(SimpleNamespace(occluded=True, tags=frozenset({"occluded", "wb:warm"}))) == "untagged"
    assert occluder_of(SimpleNamespace(occluded=False, tags=frozenset({"occ:hand"}))) == ""
    # (flat 3/290: a coin lies in a corner square; flat 1/0 is a clear board)
    assert [r["occluder"] for r in _records(("flat", 3, 290, 291))] == ["coin"]
    assert [r["occluder"] for r in _records(("flat", 1, 0, 1))] == [""]


def test_the_summary_counts_occluded_frames_read_clear_by_occluder() -> None:
    """Per kind, the occluded frames read clear and those of them read wrong; a frame read from several
    priors counts once; frames flagged, or read with a square unknown, are not counted."""

    def covered(read: str, truth: str, kind: str, index: int, **more: object) -> Record:
        return {**_record(read, truth, occluded=True), "occluder": kind, "index": index, **more}

    records = [
        covered("O........", ".........", "coin", 0),  # a coin read as a white piece
        covered("X........", "X........", "coin", 1),  # read clear, but right
        covered("?........", ".........", "coin", 2),  # a square unknown: not taken
        covered(".........", ".........", "hand", 3, flagged=True),  # flagged: not taken
        covered("O........", ".........", "pen", 4, prior=0),  # read clear from two priors:
        covered(".O.......", ".........", "pen", 4, prior=1),  # one frame
    ]
    line = next(s for s in summary(records).splitlines() if s.startswith("occluded frames read clear"))
    assert line == "occluded frames read clear, by occluder: coin 2 (1 wrong), pen 1 (1 wrong)"
    assert "by occluder: none" in summary([_record("X........", "X........")])
