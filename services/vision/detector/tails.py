"""The dark lines' blur inside the squares (:func:`blur_tails`), so that the plate measured in the
squares' corners is the plate's own level, not the level of the lines' blur there.

A defocused camera, or a board whose lines are engraved or printed soft, spreads each line's dark over
the plate beside it. A square's corners lie near two lines, its middle near none: the corners take two
lines' tails, the middle none, and a bare square's middle stands above its corners as a white piece of
the plate's tone does (a phantom white piece). The tail is measured in the board itself: along a
strip just inside a square's side, the perpendicular lines darken its two ends and nothing darkens its
middle, so the strip's level at each distance from those lines, against its level farther in, is the
tail at that distance. Pieces rarely reach the strips' ends (a piece of radius 0.42 stops short of
them); the strips of squares whose middle is nowhere near the plate's tone (a clear piece) are not used.

Only for dark lines on a lighter plate: the glow of light lines on a dark plate is judged where it
matters (:func:`.squares._read_squares` takes all the corners' variation there)."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import numpy as np

from .pieces import _SquareMasks
from .stats import median_along

#: the strips along each side of a square's inside: this wide (pitches; two canonical pixels at least).
TAIL_STRIP_WIDTH: Final = 0.05
#: the tail is measured out to this far (pitches) beyond the corners' plate pixels, where the strip's
#: level is the plate's, and never farther than TAIL_REACH_MAX from the lines. (A pixel beyond leaves a
#: tail of sigma 0.06 pitch a tenth short at the corners; this many, the same on the tuning sets and one
#: square more right.)
TAIL_BEYOND_CORNERS: Final = 0.075
TAIL_REACH_MAX: Final = 0.3
#: the squares whose strips measure the tail: their middle within this of the plate's tone, on the grid's
#: scale (0 the lines, 1 the plate): bare squares, and the pieces of the plate's own tone they are
#: mistaken for. At least this many such squares.
TAIL_PLATE_TONE: Final = 0.2
TAIL_MIN_SQUARES: Final = 2
#: a tail is there when it darkens the inside's edge by this many times the image's noise (grey levels);
#: a lesser one is the plate's texture, and none is taken.
TAIL_NOISE_K: Final = 3.0


def blur_tails(
    img: np.ndarray,
    geo: _SquareMasks,
    s: int,
    m: int,
    middle_tone: np.ndarray,
    noise: float,
) -> np.ndarray:
    """How much the dark lines' blur darkens each pixel of a square's inside (``geo``; ``s`` canonical
    pixels a square, ``m`` of margin in the view ``img``), in grey levels, (P,): the same for all nine
    squares, the tail of the nearer vertical line plus that of the nearer horizontal one. Zeros where
    no tail shows, or fewer than ``TAIL_MIN_SQUARES`` squares' middles lie within ``TAIL_PLATE_TONE`` of
    the plate's tone (``middle_tone``, (9,), on the grid's scale).

    Each strip's tail is taken at both of its ends, and the two averaged (a light gradient along the
    strip raises one end as much as it lowers the other); the board's tail is the median over the
    strips at each distance, never negative, and zero when under ``TAIL_NOISE_K`` times ``noise`` at
    the inside's edge."""
    ys, xs = np.nonzero(geo.inside)
    like_plate = np.abs(middle_tone - 1.0) < TAIL_PLATE_TONE
    if like_plate.sum() < TAIL_MIN_SQUARES:
        return np.zeros(len(ys), np.float32)
    first, last = int(ys.min()), int(ys.max())
    # Out beyond the farthest plate corner pixel's distance from its nearer line.
    from_lines = np.maximum(np.minimum(xs, s - xs), np.minimum(ys, s - ys))
    beyond = max(1, round(TAIL_BEYOND_CORNERS * s))
    reach = min(int(from_lines[geo.corner_at].max()) + beyond, round(TAIL_REACH_MAX * s))
    width = max(2, round(TAIL_STRIP_WIDTH * s))
    idx = _tail_strips(s, m, first, last, width, reach)  # (9, 4, 2, width, n)
    ends = img.ravel()[idx[like_plate]].mean(axis=3)  # (k, 4, 2, n): each end, from the inside's edge in
    tails = (ends[..., -1:] - ends).mean(axis=2).reshape(-1, ends.shape[-1])  # (k * 4, n)
    tail = np.zeros(s // 2 + 1)
    tail[first : reach + 1] = np.maximum(median_along(tails, 0), 0.0)
    if tail[first] < TAIL_NOISE_K * noise:
        return np.zeros(len(ys), np.float32)
    return (tail[np.minimum(xs, s - xs)] + tail[np.minimum(ys, s - ys)]).astype(np.float32)


def middle_tones(
    grey: np.ndarray, geo: _SquareMasks, corner_levels: np.ndarray, line_level: np.ndarray
) -> np.ndarray:
    """Each square's very middle (its median grey, ``grey`` (9, P)) on the grid's scale around it, from
    its lines (``line_level``, 0) to its plate as its corners give it (``corner_levels``, (Q, 9), 1)."""
    plate = median_along(corner_levels, 0)
    middle = median_along(grey[:, geo.very_middle], 1)
    return (middle - line_level) / np.maximum(plate - line_level, 1e-3)


@lru_cache(maxsize=16)
def _tail_strips(s: int, m: int, first: int, last: int, width: int, reach: int) -> np.ndarray:
    """(9, 4, 2, width, n) flat indices into the canonical view (``s`` pixels a square, ``m`` of
    margin): for each square, each side of its inside (rows and columns ``first`` to ``last`` of the
    square), a strip ``width`` pixels wide along the side, at each of its two ends the pixels from the
    inside's edge to ``reach`` pixels from the perpendicular line (n of them), nearest the line first."""
    size = 3 * s + 2 * m
    across = np.arange(width)
    along = np.arange(first, reach + 1)  # from the inside's edge inwards, at the strip's start...
    back = last - (along - first)  # ...and at its end
    out = np.empty((9, 4, 2, width, along.size), np.int64)
    for k in range(9):
        y0, x0 = m + (k // 3) * s, m + (k % 3) * s
        for side, rows in enumerate((first + across, last - across)):
            for end, cols in enumerate((along, back)):
                # A strip along the top or bottom side: its rows, and the columns towards each end.
                out[k, side, end] = (y0 + rows[:, None]) * size + (x0 + cols[None, :])
                # The same along the left or right side: the columns, and the rows towards each end.
                out[k, side + 2, end] = (y0 + cols[None, :]) * size + (x0 + rows[:, None])
    return out
