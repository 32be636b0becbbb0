"""The full-size search after a few cells at half resolution looks only around them
(search._around_cells): it must find there the very cells the whole image gives, and fall back to the
whole image when the box around them is most of it."""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector.cells import _locate
from services.vision.detector.image import _prepare_image
from services.vision.detector.model import DEFAULT_PARAMS
from services.vision.detector.search import AROUND_CELLS_MOST, _around_cells
from tests.vision.heldout import generator as heldout

#: heldout frames (seed 1) whose half-resolution search finds a few cells (4 to 6) of a board small
#: enough for a box around them.
FRAMES = range(0, 150, 3)


def _few_cells_frames() -> list[int]:
    out = []
    for i in FRAMES:
        try:
            frame = heldout.make_frame(i, 1)
        except ValueError:
            continue
        im = _prepare_image(frame.image)
        half = _locate(im.small, im.scale, im.sigma, im.spread, DEFAULT_PARAMS, None)
        if (
            half is not None
            and len(half[0].centers) < 7
            and _around_cells(half[0], im.gray.shape, DEFAULT_PARAMS)
        ):
            out.append(i)
    return out


@pytest.fixture(scope="module")
def few_cells() -> list[int]:
    return _few_cells_frames()


def test_some_frames_search_around_their_cells(few_cells: list[int]) -> None:
    assert len(few_cells) >= 5


def test_the_box_around_the_cells_finds_the_whole_image_s_lattice(few_cells: list[int]) -> None:
    for i in few_cells:
        im = _prepare_image(heldout.make_frame(i, 1).image)
        half = _locate(im.small, im.scale, im.sigma, im.spread, DEFAULT_PARAMS, None)
        assert half is not None
        within = _around_cells(half[0], im.gray.shape, DEFAULT_PARAMS)
        whole = _locate(im.gray, 1.0, im.sigma, im.spread, DEFAULT_PARAMS, None)
        around = _locate(im.gray, 1.0, im.sigma, im.spread, DEFAULT_PARAMS, None, within)
        assert (whole is None) == (around is None), i
        if whole is None or around is None:
            continue
        assert whole[1] == around[1], i
        assert len(whole[0].centers) == len(around[0].centers), i
        np.testing.assert_array_equal(whole[0].colrow, around[0].colrow)
        # (The same contours, shifted: their moments differ in the last bits only.)
        np.testing.assert_allclose(whole[0].centers, around[0].centers, atol=1e-9)
        assert whole[0].pitch == pytest.approx(around[0].pitch, abs=1e-9)


def test_a_box_that_is_most_of_the_image_is_the_whole_image() -> None:
    frame = heldout.make_frame(0, 1)
    im = _prepare_image(frame.image)
    half = _locate(im.small, im.scale, im.sigma, im.spread, DEFAULT_PARAMS, None)
    assert half is not None
    lat = half[0]
    # The same lattice blown up to nearly the image's size: no box.
    big = type(lat)(
        centers=(lat.centers - lat.centers.mean(axis=0)) * 4.0 + np.array(im.gray.shape[::-1]) / 2.0,
        colrow=lat.colrow,
        pitch=lat.pitch * 4.0,
        angle=lat.angle,
        score=lat.score,
        side=lat.side * 4.0,
    )
    assert _around_cells(big, im.gray.shape, DEFAULT_PARAMS) is None
    box = _around_cells(lat, im.gray.shape, DEFAULT_PARAMS)
    if box is not None:
        x0, y0, x1, y1 = box
        assert (x1 - x0) * (y1 - y0) <= AROUND_CELLS_MOST * im.gray.size
