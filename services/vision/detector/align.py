"""The grid moved onto its lines as a whole: a drawn grid aligned with the board's thin structures.

A full board of large pieces leaves few cells to place the grid by, and the lines between the pieces
show only in the gaps: the pose the search settles on can be off by a few hundredths of a pitch at its
centre and a tenth or more at a far corner (a scale a few percent short, a perspective a degree or two
off). The lines of the far squares then lie beside where the grid puts them, their samples are not
seen, and those squares are taken as crossed by something; on a board without a margin, an outer
square's corners fall on the table beyond it, and the square is taken as lying off the board. (Of the
tuning sets' 127 clear frames of ``sealed`` flagged as occluded, 30 were placed 4 % off in scale, 1.5
degrees in angle or 0.06 of a pitch at the centre, or more; of the 633 read whole, 31.)

Here the whole grid is moved at once, as OpenCV's ECC alignment (``cv2.findTransformECC``, Evangelidis
and Psarakis, 2008) moves an image onto a template: the template is the grid itself, eight lines of the
width found, drawn in a top view; the image is that top view's thin structures of the lines' tone (a
top-hat: what a disc wider than a line and narrower than a piece takes off, so that pieces, the plate's
shading and the table count for little). ECC maximises their correlation over a homography from a
start at the pose found, so it settles on the lines nearest that pose, and the whole grid is fitted,
crossings and gaps alike. Whether the move is taken is the search's to judge on the board read there
(:func:`.search._onto_the_lines`)."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import cv2
import numpy as np

from .geometry import GRID_SQUARES
from .model import Polarity

#: pixels a square in the top view the grid is aligned in, and the view's margin beyond the outer lines
#: (the lines may lie that far off, and the table beyond the board counts little in the top-hat).
ALIGN_PX: Final = 32
ALIGN_MARGIN: Final = 16
#: the top-hat's disc (view pixels): wider than the widest line the board may have (12 % of a pitch:
#: 4 px), narrower than the smallest piece (0.2 of a pitch in radius: 13 px across).
ALIGN_KERNEL_PX: Final = 9
#: the drawn grid's blur (view pixels, sigma): a line's edges are never sharp in a camera's image.
ALIGN_BLUR: Final = 1.0
#: ECC's iterations at most, the change in its correlation at which it stops, and the Gaussian it
#: smooths both images with (view pixels, odd).
ALIGN_ITERATIONS: Final = 60
ALIGN_EPS: Final = 1e-5
ALIGN_SMOOTHING: Final = 3


def aligned_on_lines(
    gray: np.ndarray, h: np.ndarray, polarity: Polarity, half_width: float
) -> np.ndarray | None:
    """``h`` (image pixels to the canonical view, squares as units) corrected so that a grid of lines
    ``half_width`` (pitches) wide lies where the image shows thin structures of ``polarity``'s tone
    (see the module's docstring), or None when ECC does not converge or the view cannot be built."""
    size = GRID_SQUARES * ALIGN_PX + 2 * ALIGN_MARGIN
    to_view = np.array([[ALIGN_PX, 0.0, ALIGN_MARGIN], [0.0, ALIGN_PX, ALIGN_MARGIN], [0.0, 0.0, 1.0]])
    try:
        view = cv2.warpPerspective(
            gray, to_view @ h, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
    except cv2.error:
        return None
    if polarity == "dark-lines":
        view = cv2.bitwise_not(view)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (ALIGN_KERNEL_PX, ALIGN_KERNEL_PX))
    lines = cv2.morphologyEx(view, cv2.MORPH_TOPHAT, disc).astype(np.float32)
    warp = np.eye(3, dtype=np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, ALIGN_ITERATIONS, ALIGN_EPS)
    try:
        _, warp = cv2.findTransformECC(
            _drawn_grid(_line_px(half_width)),
            lines,
            warp,
            cv2.MOTION_HOMOGRAPHY,
            criteria,
            None,
            ALIGN_SMOOTHING,
        )
    except cv2.error:  # (it did not converge, or the view holds no structure at all)
        return None
    # ECC's warp takes the drawn grid's points to the view's: the view's points are the drawn grid's
    # through its inverse, and the image's through h's view.
    to_grid = np.linalg.inv(to_view) @ np.linalg.inv(warp.astype(np.float64)) @ to_view @ h
    return to_grid / to_grid[2, 2]


def _line_px(half_width: float) -> int:
    """A line ``half_width`` (pitches) wide in the top view, whole pixels, at least one."""
    return max(1, round(2.0 * half_width * ALIGN_PX))


@lru_cache(maxsize=16)
def _drawn_grid(width_px: int) -> np.ndarray:
    """The template: the grid's eight lines, ``width_px`` wide, 1 on 0, blurred (float32)."""
    size = GRID_SQUARES * ALIGN_PX + 2 * ALIGN_MARGIN
    grid = np.zeros((size, size), np.float32)
    first, last = ALIGN_MARGIN, ALIGN_MARGIN + GRID_SQUARES * ALIGN_PX
    for k in range(GRID_SQUARES + 1):
        at = ALIGN_MARGIN + k * ALIGN_PX
        cv2.line(grid, (at, first), (at, last), 1.0, width_px)
        cv2.line(grid, (first, at), (last, at), 1.0, width_px)
    grid = cv2.GaussianBlur(grid, (0, 0), ALIGN_BLUR)
    grid.flags.writeable = False
    return grid
