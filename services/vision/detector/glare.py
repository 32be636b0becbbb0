"""A lamp's glare on a glossy board: its reflection adds light to whatever lies under it, the plate, the
lines and the pieces alike. A glare over a bare square is a light round body without an edge: to the
reader, a white piece. On a dark plate, the surface fitted through the squares' corners leans towards
it and a bare square beside it reads black. A person sees it is a glare because the lines through it
are lit as much as the plate beside them.

So it is measured where the plate lies beside the grid's lines (:func:`.occlusion._line_samples_of`'s
reference samples), each kept only when the line there stands its usual difference from the plate
(glare adds to both; a piece over the sample or the line takes that difference). A plane is fitted to
their grey (the light's gradient), again on those not well above it, since glare only adds. A glare
lifts ``GLARE_MIN_SAMPLES`` or more samples ``GLARE_MIN_GREY`` or more above the plane, and a round
Gaussian blob, high and centred on the grid, explains most of the lift (a light's fall-off or a table
beyond the plate does not look so). The samples lie on the lines only: the blob carries the glare
into the squares' middles, and what the samples show beyond it is spread around them (a normalised
convolution). The board is then read again with the glare taken out (:func:`.search.read_at_pose`).

Where the glare clips a light plate at white, the plate rises less than the lines beside it: those
samples are not taken as the plate, and a glare that clips over most of its patch is not found."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Final

import cv2
import numpy as np

from .geometry import GRID_SQUARES, _Canon
from .occlusion import _line_samples_of
from .stats import least_squares, median

#: a sample beside a line is the plate when the line stands its usual difference from it, give or take
#: this share of that difference or this many grey levels (a 2:1 gradient scales the difference by up to
#: a third either side of the board's middle).
LINE_DIFFERENCE_SHARE: Final = 0.3
LINE_DIFFERENCE_MIN: Final = 8.0
#: fewest samples beside the lines taken as the plate for a glare to be looked for.
MIN_PLATE_SAMPLES: Final = 60
#: the plane is fitted again this many times to the samples at most this far (grey levels) above it.
SURFACE_ROUNDS: Final = 3
SURFACE_ABOVE: Final = 10.0
#: a glare lifts at least this many samples at least this many grey levels above the plane (a glare a
#: third of a pitch wide beside a single square lifts about 40; a white piece's rim beside a line a few).
GLARE_MIN_GREY: Final = 20.0
GLARE_MIN_SAMPLES: Final = 12
#: the interpolation's Gaussian (pitches): about the distance from a square's middle to its lines.
GLARE_SMOOTH: Final = 0.3
#: the round blob's centres (pitches from the board's centre, along each axis) and widths (its Gaussian's
#: sigma, pitches) looked at; then around the best, these steps (pitches) and scales of its width.
BLOB_CENTRES: Final = np.arange(-1.75, 1.76, 0.25)
BLOB_SIGMAS: Final = np.array([0.3, 0.4, 0.5, 0.65, 0.8, 1.0, 1.3])
BLOB_FINE_STEPS: Final = np.arange(-0.2, 0.21, 0.05)
BLOB_FINE_SCALES: Final = np.array([0.85, 0.92, 1.0, 1.08, 1.17])
#: a glare's blob is this high (grey levels) at least, centred this close (pitches) to the board's centre
#: (the outer lines are 1.5 from it), and leaves at most this share of the lift's sum of squares
#: unexplained. (Over the tuning sets the lifts the blob does not explain are a light's fall-off and
#: shadows: of 660 lifted enough to look, 39 pass; of 155 glares drawn on our renderer, 152.)
BLOB_MIN_HEIGHT: Final = 30.0
BLOB_MAX_OFF_CENTRE: Final = 1.6
BLOB_UNEXPLAINED_MAX: Final = 0.3


def glare_light(canon: _Canon, half_width: float) -> np.ndarray | None:
    """The grey levels a lamp's glare adds at every pixel of the canonical view, or None when the board
    shows no glare (see the module's docstring). ``half_width``: the lines' half width, pitches."""
    s, m = canon.px, canon.margin
    band, line_at, ref_at, own = _line_samples_of(canon, half_width)
    img = canon.img.ravel()
    inside = own >= 0
    line = img[line_at[:, band]].astype(np.float64)
    beside = img[ref_at].astype(np.float64)  # (L, 2)
    to_plate = beside - line[:, None]
    typical = median(to_plate[inside])
    plate = inside & (
        np.abs(to_plate - typical) <= max(LINE_DIFFERENCE_SHARE * abs(typical), LINE_DIFFERENCE_MIN)
    )
    at, grey = ref_at[plate], beside[plate]
    if grey.size < MIN_PLATE_SAMPLES:
        return None
    size = canon.img.shape[1]
    rows, cols = np.divmod(at, size)
    centre = m + GRID_SQUARES * s / 2
    u, w = (cols - centre) / s, (rows - centre) / s
    design = np.column_stack([np.ones(grey.size), u, w])
    e = grey - design @ least_squares(design, grey)
    if np.count_nonzero(e >= GLARE_MIN_GREY / 2) < GLARE_MIN_SAMPLES:
        return None  # (most boards: a glare lifts its samples this far above a plane it leans, too)
    # Glare only adds light: the plane is fitted again to the samples not well above it, until the
    # glare no longer lifts it.
    keep = np.ones(grey.size, bool)
    for _ in range(SURFACE_ROUNDS):
        new_keep = e <= SURFACE_ABOVE
        if new_keep.sum() < design.shape[1] * 4 or (new_keep == keep).all():
            break
        keep = new_keep
        e = grey - design @ least_squares(design[keep], grey[keep])
    if np.count_nonzero(e >= GLARE_MIN_GREY) < GLARE_MIN_SAMPLES:
        return None  # (most boards: no glare)
    # The glare as one round blob (its extent into the squares' middles, which no sample sees), and
    # what the samples show beyond it spread around them (its own shape).
    blob, at_samples = _round_blob(u, w, e)
    if blob is None:
        return None  # (a lift no round patch explains: the light's own shape, or the table's)
    grid = (np.arange(size, dtype=np.float64) - centre) / s
    added = blob(grid[None, :], grid[:, None]).astype(np.float32)
    added += _spread(at, (e - at_samples).astype(np.float32), size, GLARE_SMOOTH * s)
    return added


def _round_blob(
    u: np.ndarray, w: np.ndarray, e: np.ndarray
) -> tuple[Callable[..., np.ndarray] | None, np.ndarray]:
    """The round Gaussian blob (any height) that explains most of the samples' lift ``e`` at board
    points ``u``, ``w`` (pitches from the centre): searched over ``BLOB_CENTRES`` and ``BLOB_SIGMAS``,
    then finer around the best. Returns it as a function of board points (None when it is not a
    glare's: lower than ``BLOB_MIN_HEIGHT``, centred off the grid, or leaving more than
    ``BLOB_UNEXPLAINED_MAX`` of the lift unexplained), and its value at the samples."""
    centre_u, centre_w = np.meshgrid(BLOB_CENTRES, BLOB_CENTRES)
    candidates = np.stack(
        np.broadcast_arrays(centre_u.ravel()[:, None], centre_w.ravel()[:, None], BLOB_SIGMAS[None, :]), -1
    ).reshape(-1, 3)
    for _ in range(2):
        d2 = (u[None, :] - candidates[:, :1]) ** 2 + (w[None, :] - candidates[:, 1:2]) ** 2
        g = np.exp(-d2 / (2 * candidates[:, 2:] ** 2))
        along = g @ e
        explained = np.where(along > 0, along**2 / np.maximum((g * g).sum(axis=1), 1e-9), 0.0)
        best = int(np.argmax(explained))
        height = along[best] / max(float((g[best] ** 2).sum()), 1e-9)
        u0, w0, sigma = candidates[best]
        at_samples = height * g[best]
        fine = np.stack(np.meshgrid(u0 + BLOB_FINE_STEPS, w0 + BLOB_FINE_STEPS, sigma * BLOB_FINE_SCALES), -1)
        candidates = fine.reshape(-1, 3)

    unexplained = float(((e - at_samples) ** 2).sum()) / max(float((e**2).sum()), 1e-9)
    if (
        height < BLOB_MIN_HEIGHT
        or math.hypot(u0, w0) > BLOB_MAX_OFF_CENTRE
        or unexplained > BLOB_UNEXPLAINED_MAX
    ):
        return None, at_samples

    def blob(bu: np.ndarray, bw: np.ndarray) -> np.ndarray:
        return height * np.exp(-((bu - u0) ** 2 + (bw - w0) ** 2) / (2 * sigma**2))

    return blob, at_samples


def _spread(at: np.ndarray, values: np.ndarray, size: int, sigma: float) -> np.ndarray:
    """``values`` at flat pixel indices ``at`` of a ``size``-square view, spread over it: each pixel the
    Gaussian-weighted mean (``sigma`` px) of the values around it (a normalised convolution); 0 far
    from every sample."""
    total = np.zeros(size * size, np.float32)
    weight = np.zeros(size * size, np.float32)
    np.add.at(total, at, values)
    np.add.at(weight, at, 1.0)
    total_2d = cv2.GaussianBlur(total.reshape(size, size), (0, 0), sigma)
    weight_2d = cv2.GaussianBlur(weight.reshape(size, size), (0, 0), sigma)
    return total_2d / np.maximum(weight_2d, 1e-6)
