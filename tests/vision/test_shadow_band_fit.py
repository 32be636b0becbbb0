"""The shadow band fitted as one soft-edged band (services/vision/detector/shade.py's ``_fit_band``) and what
the read with it divided out makes of its edges: the band found from few samples (a full board, a narrow
band), its edges where they are, the lit board beside it not taken for a glare, its edges not taken for a
pen's (``across._along_band_edge``). On canonical views drawn in tests/vision/test_shade.py and on sealed
tuning frames drawn with an arm's shadow."""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import doubt
from services.vision.detector.across import BAND_EDGE_STEP, _along_band_edge
from services.vision.detector.geometry import CANON_MARGIN, GRID_SQUARES
from services.vision.detector.search import SHADED_CONFIDENCE
from services.vision.detector.shade import BAND_ANGLES, _deepest_band, _fit_band, shadow_gain

from .test_shade import HALF_WIDTH, PX, SQUARE_MIDDLE, _band, _board
from .tuning_frames import read_tuning_frame

#: a full board: large black and white pieces in every square.
FULL = [(k, 30.0 if k % 2 else 230.0) for k in range(GRID_SQUARES * GRID_SQUARES)]
#: bands (direction, degrees; middle, pitches from the centre; width, pitches) across the board.
BANDS = [(40.0, 0.2, 0.45), (135.0, -0.5, 0.4), (10.0, 0.9, 0.35), (60.0, 0.0, 0.6), (0.0, -1.1, 0.5)]


def _evened_error(light: np.ndarray, gain: np.ndarray) -> float:
    """The 95th percentile of how far from evenly lit the squares' middles are with ``gain`` divided out
    of ``light``."""
    m = round(CANON_MARGIN * PX)
    at = (np.arange(light.shape[0]) - m) / PX
    within = (at >= 0) & (at < GRID_SQUARES) & (np.abs(at % 1.0 - 0.5) <= SQUARE_MIDDLE)
    middles = within[:, None] & within[None, :]
    return float(np.percentile(np.abs(light[middles] / gain[middles] - 1.0), 95))


@pytest.mark.parametrize(("angle", "middle", "width"), BANDS)
def test_a_band_is_fitted_to_its_edges(angle: float, middle: float, width: float) -> None:
    # Divided out, the squares are within 3 % of evenly lit on a bare board (the profile read in steps of
    # a twentieth of a pitch left 3.4-6 %), and within 10 % on a full board, whose pieces leave a few
    # samples beside the lines' crossings (the steps left 10-19 %).
    size = _board().img.shape[0]
    light = _band(size, angle, middle, width, 0.4)
    bare = shadow_gain(_board(light), HALF_WIDTH)
    full = shadow_gain(_board(light, FULL), HALF_WIDTH)
    assert bare is not None and full is not None
    assert _evened_error(light, bare) < 0.03
    assert _evened_error(light, full) < 0.10


def test_a_band_edge_is_no_pen_and_a_pen_across_it_is() -> None:
    # The light a band leaves, along the view's x axis between rows 100 and 140: an edge along its top
    # edge runs along it; one crossing it does not.
    light = np.ones((240, 240), np.float32)
    light[100:140, :] = 0.6
    px = 60
    assert _along_band_edge(light, (10.0, 100.0, 230.0, 101.0), px)
    assert not _along_band_edge(light, (30.0, 20.0, 200.0, 220.0), px)
    # ...and a band too faint to tell is no band's edge.
    faint = np.where(light < 1.0, 1.0 - BAND_EDGE_STEP / 2, 1.0).astype(np.float32)
    assert not _along_band_edge(faint, (10.0, 100.0, 230.0, 101.0), px)


@pytest.mark.parametrize(
    ("seed", "index"),
    [
        (2, 187),  # a narrow band (0.43 pitch) with few samples in each step
        (3, 227),  # a band across a dark yellow plate with faint light lines
        (1, 133),  # the band's edges slanted across every square: no pen
        (2, 59),  # a full board of large pieces
        (3, 113),  # ...and another
        (3, 134),  # a band the lit board beside which was taken for a glare
        (3, 271),  # ...and another
    ],
)
def test_sealed_boards_under_an_arms_shadow_are_read_whole(
    seed: int, index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Flagged or with squares unknown before the band was fitted; read whole and right by the rules with
    # it divided out, never surer than SHADED_CONFIDENCE. (The second opinion, since it learned a fourth
    # state, doubts two bare squares of 2/187: no square read wrong, the device waits there.)
    det, truth = read_tuning_frame("sealed", seed, index)
    assert all(a in ("?", b) for a, b in zip(det.board, truth, strict=True)), (det.board, truth)
    monkeypatch.setattr(doubt, "_weights", lambda: None)
    det, truth = read_tuning_frame("sealed", seed, index)
    assert det.board == truth
    assert not det.occluded and not det.problem
    assert "shadow_band" in det.extra
    assert max(sq.confidence for sq in det.squares) <= SHADED_CONFIDENCE


def test_a_board_lit_only_here_and_there_beyond_the_band_shows_none() -> None:
    # Residuals drawn as the shadow module reads them (log grey below the smooth surface, 300 samples
    # beside the lines): a band 0.5 pitch wide, 0.45 deep, and beyond it a share of the samples as dark
    # (a full board's pieces' contact shadows). A band on a lit board is found; where 40 % of the board
    # beyond it is as dark, what looks like a band is the board itself.
    rng = np.random.default_rng(5)
    u, w = rng.uniform(-1.45, 1.45, 300), rng.uniform(-1.45, 1.45, 300)
    in_band = (w > 0.2) & (w < 0.7)
    found = []
    for dark_beyond in (0.0, 0.2, 0.4):
        e = np.where(in_band | (rng.random(300) < dark_beyond), -0.45, 0.0) + rng.normal(0.0, 0.02, 300)
        start = _deepest_band(u, w, e, BAND_ANGLES)
        assert start is not None
        found.append(_fit_band(u, w, e, start))
    assert found[0] is not None and found[1] is not None and found[2] is None
    assert found[0].near == pytest.approx(0.2, abs=0.03) and found[0].far == pytest.approx(0.7, abs=0.03)
    assert found[0].log_depth == pytest.approx(-0.45, abs=0.03)
