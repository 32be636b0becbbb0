"""One frame of a tuning generator (tests/vision/heldout, flat, contest_table, apart, unseen, sealed,
gridded) by name, seed and index, read by the detector, with its truth labelled as the detection numbers
the squares: what the tests that pin a rule on the frames it was chosen for need."""

from __future__ import annotations

from typing import Any

from services.vision.detector import Detection, SquareReading, detect
from tests.vision.apart.generator import make_frame as apart_frame
from tests.vision.contest_table.generator import render
from tests.vision.flat.generator import make_frame as flat_frame
from tests.vision.gridded.generator import make_frame as gridded_frame
from tests.vision.heldout.generator import make_frame as heldout_frame
from tests.vision.sealed.generator import render_sample as sealed_frame
from tests.vision.unseen.generator import render_sample as unseen_frame

from .test_sweep import truth_as_read


def tuning_sample(generator: str, seed: int, index: int) -> Any:
    """The ``index``-th frame of ``generator`` ("heldout", "flat", "contest_table", "apart", "unseen",
    "sealed" or "gridded") at ``seed``: an object with ``image``, ``board`` and ``angle_deg`` (each
    generator's own sample type)."""
    if generator == "contest_table":
        return render(seed, index)[0]
    if generator in ("unseen", "sealed"):  # (these take the seed first)
        return {"unseen": unseen_frame, "sealed": sealed_frame}[generator](seed, index)
    frames = {"heldout": heldout_frame, "flat": flat_frame, "apart": apart_frame, "gridded": gridded_frame}
    return frames[generator](index, seed)


def read_tuning_frame(generator: str, seed: int, index: int) -> tuple[Detection, str]:
    """The detection of a tuning frame and its true board as that detection numbers the squares (the
    board must be found)."""
    sample = tuning_sample(generator, seed, index)
    det = detect(sample.image)
    return det, truth_as_read(det, sample.board, sample.angle_deg)


def read_tuning_square(generator: str, seed: int, index: int, square: int) -> tuple[SquareReading, str, str]:
    """One square of a tuning frame (numbered as its detection numbers them): the detection's reading of
    it, the truth there, and the board read (for messages)."""
    det, truth = read_tuning_frame(generator, seed, index)
    return det.squares[square], truth[square], det.board


def assert_occluded_not_read_clear(generator: str, seed: int, index: int) -> None:
    """An occluded tuning frame (a hand, a pen, a coin over the board) is found and not read as a clear
    board: flagged occluded, or a square unknown. (What the tests pinning a rule's occluded frames ask.)"""
    sample = tuning_sample(generator, seed, index)
    assert sample.occluded
    det = detect(sample.image)
    assert det.found and (det.occluded or "?" in det.board), det.board
