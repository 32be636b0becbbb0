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
beyond the plate does not look so); or, a tube light's, a long one explains nearly all of it. The
samples lie on the lines only: the blob carries the glare into the squares' middles, and what the
samples show beyond it is spread around them (a normalised convolution). The board is then read again
with the glare taken out (:func:`.search.read_at_pose`); a long glare's read only doubts the first.

Where the glare clips a light plate at white, the plate rises less than the lines beside it: those
samples are not taken as the plate, and a glare that clips over most of its patch is not found."""

from __future__ import annotations

import math
from typing import Final, NamedTuple

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
#: the blob's centres (pitches from the board's centre, along each axis) and widths (its Gaussian's
#: sigma, pitches) looked at when round; then around the best, these steps (pitches) and scales of its
#: widths.
BLOB_CENTRES: Final = np.arange(-1.75, 1.76, 0.25)
BLOB_SIGMAS: Final = np.array([0.3, 0.4, 0.5, 0.65, 0.8, 1.0, 1.3])
BLOB_FINE_STEPS: Final = np.arange(-0.2, 0.21, 0.05)
BLOB_FINE_SCALES: Final = np.array([0.85, 0.92, 1.0, 1.08, 1.17])
#: a tube light's glare is a long blob: centred at these steps (pitches) around the lift's centroid,
#: these lengths and widths (sigmas, pitches; the width at most half the length), at these turns
#: (degrees) from the lift's own direction (its second moments); then turned by these steps.
LONG_CENTRES: Final = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
LONG_SIGMAS: Final = np.array([0.8, 1.3, 2.0, 3.0])
WIDE_SIGMAS: Final = np.array([0.2, 0.3, 0.45, 0.65])
LONG_TURNS: Final = np.array([-25.0, 0.0, 25.0])
LONG_FINE_TURNS: Final = np.array([-8.0, 0.0, 8.0])
#: ...and a long blob is taken only when it leaves at most this share of the lift unexplained.
LONG_UNEXPLAINED_MAX: Final = 0.1
#: a glare's blob is this high (grey levels) at least, centred this close (pitches) to the board's centre
#: (the outer lines are 1.5 from it), and leaves at most this share of the lift's sum of squares
#: unexplained. (Over the tuning sets the lifts the blob does not explain are a light's fall-off and
#: shadows: of 660 lifted enough to look, 39 pass; of 155 glares drawn on our renderer, 152.)
BLOB_MIN_HEIGHT: Final = 30.0
BLOB_MAX_OFF_CENTRE: Final = 1.6
BLOB_UNEXPLAINED_MAX: Final = 0.3


class Glare(NamedTuple):
    """A lamp's glare found on the board."""

    #: the grey levels it adds at every pixel of the canonical view.
    added: np.ndarray
    #: it is long (a tube light's, see ``LONG_SIGMAS``): a stripe a fraction of a pitch wide, which a fit
    #: a little off in its angle or width takes out as a dark stripe beside a light one.
    long: bool


def glare_light(canon: _Canon, half_width: float) -> Glare | None:
    """The glare a lamp's reflection adds to the canonical view, or None when the board shows none (see
    the module's docstring). ``half_width``: the lines' half width, pitches."""
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
    # The glare as one blob (its extent into the squares' middles, which no sample sees), and what the
    # samples show beyond it spread around them (its own shape).
    shape, height, at_samples = _blob(u, w, e)
    if shape is None:
        return None  # (a lift no patch explains: the light's own shape, or the table's)
    grid = (np.arange(size, dtype=np.float64) - centre) / s
    grid_u, grid_w = np.meshgrid(grid, grid)  # (columns along u, rows along w)
    added = height * _gaussians(grid_u.ravel(), grid_w.ravel(), shape[None, :])[0].reshape(size, size)
    added += _spread(at, (e - at_samples).astype(np.float32), size, GLARE_SMOOTH * s)
    return Glare(added, bool(shape[2] != shape[3]))


def _round_candidates() -> np.ndarray:
    """The round blobs first looked at, (N, 5): centre u, centre w, sigma along, sigma across (pitches),
    and the angle of its length (radians), over ``BLOB_CENTRES`` and ``BLOB_SIGMAS``."""
    cu, cw, sig = np.meshgrid(BLOB_CENTRES, BLOB_CENTRES, BLOB_SIGMAS, indexing="ij")
    return np.column_stack([cu.ravel(), cw.ravel(), sig.ravel(), sig.ravel(), np.zeros(sig.size)])


def _long_candidates(u: np.ndarray, w: np.ndarray, e: np.ndarray) -> np.ndarray:
    """The long blobs first looked at for the samples' lift ``e`` at board points ``u``, ``w``, as
    :func:`_round_candidates`: around the lift's centroid by ``LONG_CENTRES`` along each axis, of
    ``LONG_SIGMAS`` by ``WIDE_SIGMAS`` (at most half the length), along the lift's own direction turned
    by ``LONG_TURNS``."""
    weight = np.maximum(e, 0.0)
    total = max(float(weight.sum()), 1e-9)
    mu, mw = float(weight @ u) / total, float(weight @ w) / total
    suu = float(weight @ (u - mu) ** 2) / total
    sww = float(weight @ (w - mw) ** 2) / total
    suw = float(weight @ ((u - mu) * (w - mw))) / total
    direction = 0.5 * math.atan2(2.0 * suw, suu - sww)
    cu, cw, along, across, angle = np.meshgrid(
        mu + LONG_CENTRES,
        mw + LONG_CENTRES,
        LONG_SIGMAS,
        WIDE_SIGMAS,
        direction + np.radians(LONG_TURNS),
        indexing="ij",
    )
    blobs = np.column_stack([a.ravel() for a in (cu, cw, along, across, angle)])
    return blobs[blobs[:, 3] <= 0.5 * blobs[:, 2]]


_ROUND: Final = _round_candidates()


def _gaussians(u: np.ndarray, w: np.ndarray, blobs: np.ndarray) -> np.ndarray:
    """Each blob's (``blobs`` (N, 5), as :func:`_round_candidates`) unit Gaussian at board points ``u``,
    ``w`` (M,): (N, M), in float32 (thousands of blobs at hundreds of points, for every glare)."""
    b = blobs.astype(np.float32)
    du = u.astype(np.float32)[None, :] - b[:, :1]
    dw = w.astype(np.float32)[None, :] - b[:, 1:2]
    if np.array_equal(b[:, 2], b[:, 3]):  # all round: the plain distance
        q = du * du
        q += dw * dw
        q *= -0.5 / (b[:, 2:3] * b[:, 2:3])
    else:
        cos, sin = np.cos(b[:, 4:5]), np.sin(b[:, 4:5])
        along = du * (cos / b[:, 2:3]) + dw * (sin / b[:, 2:3])
        across = dw * (cos / b[:, 3:4]) - du * (sin / b[:, 3:4])
        q = along * along
        q += across * across
        q *= -0.5
    return np.exp(q, out=q)


def _fine(best: np.ndarray) -> np.ndarray:
    """The blobs around ``best`` (5,) looked at second: its centre moved by ``BLOB_FINE_STEPS``, its
    widths scaled by ``BLOB_FINE_SCALES`` (a round one's together; a long one's each, and it turned by
    ``LONG_FINE_TURNS``)."""
    u0, w0, along, across, angle = best
    steps = BLOB_FINE_STEPS
    if along == across:
        cu, cw, k = np.meshgrid(u0 + steps, w0 + steps, BLOB_FINE_SCALES, indexing="ij")
        return np.column_stack([cu.ravel(), cw.ravel(), along * k.ravel(), across * k.ravel(), 0 * k.ravel()])
    steps, scales = steps[::4], BLOB_FINE_SCALES[::2]  # (five things to turn: more coarsely each)
    cu, cw, ka, kc, turn = np.meshgrid(u0 + steps, w0 + steps, scales, scales, LONG_FINE_TURNS, indexing="ij")
    return np.column_stack(
        [cu.ravel(), cw.ravel(), along * ka.ravel(), across * kc.ravel(), angle + np.radians(turn.ravel())]
    )


def _best_blob(
    u: np.ndarray, w: np.ndarray, e: np.ndarray, candidates: np.ndarray
) -> tuple[np.ndarray, float, np.ndarray, float]:
    """Of ``candidates`` (as :func:`_round_candidates`), then of those around the best
    (:func:`_fine`), the blob that explains most of the samples' lift ``e`` at board points ``u``,
    ``w``: (its shape (5,), its height, its value at the samples, the share of the lift's sum of squares
    it leaves unexplained)."""
    for _ in range(2):
        g = _gaussians(u, w, candidates)
        along = g @ e
        explained = np.where(along > 0, along**2 / np.maximum((g * g).sum(axis=1), 1e-9), 0.0)
        best = int(np.argmax(explained))
        height = float(along[best]) / max(float((g[best] ** 2).sum()), 1e-9)
        shape, at_samples = candidates[best], height * g[best]
        candidates = _fine(shape)
    unexplained = float(((e - at_samples) ** 2).sum()) / max(float((e**2).sum()), 1e-9)
    return shape, height, at_samples, unexplained


def _blob(u: np.ndarray, w: np.ndarray, e: np.ndarray) -> tuple[np.ndarray | None, float, np.ndarray]:
    """The Gaussian blob (any height) that explains most of the samples' lift ``e`` at board points
    ``u``, ``w`` (pitches from the centre): a round one (a lamp's glare), or, where that leaves more than
    ``LONG_UNEXPLAINED_MAX`` of the lift unexplained, a long one (a tube light's) that leaves at most
    that (a long blob fits more than glares: the plate beyond an arm's shadow, a light's fall-off).
    Returns its shape (as :func:`_round_candidates`; None when it is not a glare's: lower than
    ``BLOB_MIN_HEIGHT``, centred off the grid, or leaving more than ``BLOB_UNEXPLAINED_MAX`` of the lift
    unexplained), its height, and its value at the samples."""
    shape, height, at_samples, unexplained = _best_blob(u, w, e, _ROUND)
    if unexplained > LONG_UNEXPLAINED_MAX:
        long_ = _best_blob(u, w, e, _long_candidates(u, w, e))
        if long_[3] <= LONG_UNEXPLAINED_MAX:
            shape, height, at_samples, unexplained = long_
    if (
        height < BLOB_MIN_HEIGHT
        or math.hypot(shape[0], shape[1]) > BLOB_MAX_OFF_CENTRE
        or unexplained > BLOB_UNEXPLAINED_MAX
    ):
        return None, height, at_samples
    return shape, height, at_samples


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
