"""Thin lines broken into fragments (a coarse JPEG, a blurred board) leave gaps of more than a pixel
between the cells, and the search found no board. When nothing else finds one, the cells are sought
again in line masks closed wider (search.WIDE_DILATION_PX). These frames are from the tuning sets."""

from __future__ import annotations

from services.vision import detector as D
from tests.vision.contest_table.generator import render
from tests.vision.heldout.generator import make_frame

from .test_sweep import truth_as_read


def test_a_board_of_broken_thin_lines_is_found() -> None:
    sample, _info = render(2, 27)
    det = D.detect(sample.image)
    assert det.found and not det.occluded
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def test_a_dark_board_of_thin_light_lines_is_found() -> None:
    sample = make_frame(33, 1)
    det = D.detect(sample.image)
    assert det.found
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    # Found and read, but for one square the lines' fragments leave unknown: never a wrong one.
    assert all(read in ("?", right) for read, right in zip(det.board, truth, strict=True))
    assert sum(read == right for read, right in zip(det.board, truth, strict=True)) >= 8
