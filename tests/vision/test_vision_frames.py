"""bench/vision_frames.py: the tuning sets' figures counted frame by frame, and the frames a change moved."""

from __future__ import annotations

from bench.vision_frames import Record, _records, compare, summary, tally


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
