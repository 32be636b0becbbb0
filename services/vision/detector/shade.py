"""The soft shadow of something long above the board (the gantry's arm under a lamp): a band across the
board, darker by a factor over its width, its edges blurred by the lamp's size. It darkens the plate,
the lines and the pieces alike; the plate's surface, fitted as one smooth surface over the board
(:func:`.squares._plate_surface`), cannot follow it, so a bare square it crosses reads as a body and
a piece half in it as two.

It is found where nothing but the plate can be: just beside the grid's lines, inside the grid
(:func:`.occlusion._line_samples_of`'s reference samples), each kept only when its line stands the
lines' usual contrast from it (a band darkens the line too; a piece over the sample does not). A plane
is fitted to their log grey (a light gradient), again on those not well below it, and what it leaves
is read along every direction across the board: a band is one stretch, at least ``BAND_MIN_DETECTED``
wide, where the median of the samples across the whole board lies ``BAND_DEPTH_MIN`` or more below the
plane and most of them do (a dark piece beside a line darkens a few samples of a stretch, a band all
of them); of the directions, the one its profile fits best. From there the band is fitted as what it is,
one stretch of shadow with two soft edges (:func:`_fit_band`: its direction, edges, softness and depth
together, over every sample): read in steps, a band is as exact as the samples in each step, a few on a
full board, and what dividing such a profile out left along the band's edges read as pens and bodies.
The band fitted must take ``BAND_DEPTH_MIN`` to ``BAND_DEPTH_MAX`` of the light over at least
``BAND_MIN_WIDTH`` and at most ``BAND_MAX_SHARE`` of the board, with edges sharper than the light's own
fall-off, and leave the board beyond it lit (``BAND_LIT_SHARE``). It is divided out of the canonical
view, so that what follows reads a board evenly lit. A board without one is left as it is."""

from __future__ import annotations

import math
from typing import Final, NamedTuple

import numpy as np

from .geometry import GRID_SQUARES, _Canon
from .occlusion import _line_samples_of
from .stats import least_squares, median

#: the directions across the board looked along (radians from the view's x axis).
BAND_ANGLES: Final = np.deg2rad(np.arange(0.0, 180.0, 5.0))
#: ...and around the direction found, these (radians from it).
BAND_FINE_ANGLES: Final = np.deg2rad(np.arange(-4.0, 4.5, 1.0))
#: fewest samples darker than BAND_DEPTH_MIN below the surface for a band to be looked for (a band
#: 0.2 of a pitch wide across the board darkens about 18).
BAND_MIN_SAMPLES: Final = 16
#: the profile's step across the board and how far from its centre it reaches (pitches).
BAND_BIN: Final = 0.05
BAND_REACH: Final = 2.2
#: fewest samples in a step of the profile for its median to count.
MIN_BIN_SAMPLES: Final = 3
#: a band takes away at least this share of the light...
BAND_DEPTH_MIN: Final = 0.18
#: ...from at least this share of the samples in each of its steps...
BAND_DARK_SHARE: Final = 0.8
#: ...over at least this width (pitches), and at most this share of the board's width (wider, it is the
#: light falling off across the board: the smooth surface's).
BAND_MIN_WIDTH: Final = 0.25
BAND_MAX_SHARE: Final = 0.6
#: a band fitted takes at most this share of the light (deeper, it is something dark the lines beside it
#: happen to match: a lamp over the board leaves the room's light in its shadow).
BAND_DEPTH_MAX: Final = 0.6
#: a band found in steps is at least this wide (pitches) before it is fitted: its edges share their
#: steps with the lit board.
BAND_MIN_DETECTED: Final = 0.15
#: the fit starts from edges this soft (pitches: the logistic's scale), and keeps them within these.
BAND_START_SOFT: Final = 0.03
BAND_SOFT_RANGE: Final = (0.005, 0.12)
#: beyond the band (where it takes at most one less this share of its depth), at least this share of
#: the samples are lit: less than this share of its depth below the surface. (On the tuning sets, of
#: 128 boards drawn with an arm's shadow and a band found, 123 have 0.7 of them lit, 117 0.8; of 81
#: boards drawn without one, 44 and 33. At 0.8, read cold, as many squares right and frames passed
#: wrong; read as the tracker reads them, one frame more passed wrong: a full board under a band whose
#: first read is wrong, the band rejected at the pose a frame ago, so nothing doubts it.)
BAND_CORE: Final = 0.8
LIT_DEPTH_SHARE: Final = 0.5
BAND_LIT_SHARE: Final = 0.7
#: each edge of a band fitted on the board steps the light by this share of its depth at least, between
#: the samples this far (pitches) either side of it (when there are this many each side).
EDGE_STEP_SHARE: Final = 0.5
EDGE_REACH: Final = 0.3
MIN_EDGE_SAMPLES: Final = 4
#: a band whose edges the fit makes as soft as it may (this share of the softest) is the light falling
#: off across the board, not a band.
SOFTEST_BAND: Final = 0.95
#: the fit's rounds, its first damping, and Huber's rule: a residual beyond this many robust spreads
#: (at least FIT_NOISE_FLOOR, log grey) weighs less.
FIT_ROUNDS: Final = 20
FIT_DAMPING: Final = 1e-2
HUBER_K: Final = 1.5
FIT_NOISE_FLOOR: Final = 0.01
#: the smooth surface is fitted again this many times to the samples at most this far (log grey) below
#: it (the band, and dark pieces beside the lines, are left out).
SURFACE_ROUNDS: Final = 3
SURFACE_BELOW: Final = 0.06
#: a sample beside a line counts as the plate when the line stands this share of the lines' usual
#: contrast (in log grey) from it, give or take, or this much: a piece over the sample takes it.
LINE_RATIO_SHARE: Final = 0.15
LINE_RATIO_MIN: Final = 0.1
#: a sample's residual is clipped to this (log grey) before the profile: a white piece beside a line
#: neither hides a band nor makes one.
RESIDUAL_CLIP: Final = 2.0


def _surface_design(u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The smooth surface's design matrix at board points (pitches from the centre): a plane (a
    quadratic would take up a band a third of the board wide)."""
    return np.column_stack([np.ones_like(u), u, w])


def shadow_gain(canon: _Canon, half_width: float) -> np.ndarray | None:
    """The light a shadow band leaves at every pixel of the canonical view (1 outside it, less inside),
    or None when the board shows no band (see the module's docstring). ``half_width``: the lines'
    half width, pitches."""
    s, m = canon.px, canon.margin
    band, line_at, ref_at, own = _line_samples_of(canon, half_width)
    img = canon.img.ravel()
    # Each sample beside a line, inside the grid, and the line's own grey there (its middle pixel):
    # a band darkens both alike, a piece over the sample only the sample.
    inside = own >= 0
    flat_at = ref_at[inside]
    line_log = np.log(np.maximum(img[line_at[:, band]], 1.0).astype(np.float64))
    logv = np.log(np.maximum(img[flat_at], 1.0).astype(np.float64))
    to_line = np.broadcast_to(line_log[:, None], inside.shape)[inside] - logv
    typical = median(to_line)
    plate = np.abs(to_line - typical) <= max(LINE_RATIO_SHARE * abs(typical), LINE_RATIO_MIN)
    flat_at, logv = flat_at[plate], logv[plate]
    size = canon.img.shape[1]
    rows, cols = np.divmod(flat_at, size)
    centre = m + GRID_SQUARES * s / 2
    u = (cols - centre) / s
    w = (rows - centre) / s
    design = _surface_design(u, w)
    e = logv - design @ least_squares(design, logv)
    # A shadow only darkens: the plane is fitted again to the samples not well below it, until the
    # band (a third of the board, it may be) no longer leans it.
    for _ in range(SURFACE_ROUNDS):
        keep = e >= -SURFACE_BELOW
        if keep.sum() < design.shape[1] * 4:
            break
        e = logv - design @ least_squares(design[keep], logv[keep])
    e = np.clip(e, -RESIDUAL_CLIP, RESIDUAL_CLIP)
    if np.count_nonzero(e <= math.log(1.0 - BAND_DEPTH_MIN)) < BAND_MIN_SAMPLES:
        return None  # (most boards: no band to look for)
    found = _deepest_band(u, w, e, BAND_ANGLES)
    if found is None:
        return None
    # ...and again on finer directions around the one found (a band a few degrees off the direction
    # read along spreads over the steps of its edges).
    found = _deepest_band(u, w, e, found[0] + BAND_FINE_ANGLES) or found
    band = _fit_band(u, w, e, found)
    if band is None:
        return None
    grid = np.arange(size, dtype=np.float64)
    across = _across(band.angle, (grid[None, :] - centre) / s, (grid[:, None] - centre) / s)
    return np.exp(band.log_depth * _inside(across, band)).astype(np.float32)


class Band(NamedTuple):
    """A shadow band across the board: the direction read across it (radians from the canonical view's
    x axis), its edges there (pitches from the board's centre, ``near`` < ``far``), how soft they are
    (pitches: the logistic's scale) and the light it takes (log)."""

    angle: float
    near: float
    far: float
    soft: float
    log_depth: float


def _across(angle: float | np.ndarray, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Where board points ``u``, ``w`` (pitches from the centre) lie across the direction ``angle``."""
    return np.sin(angle) * u + np.cos(angle) * w


def _logistic(z: np.ndarray) -> np.ndarray:
    """The logistic function, 1 / (1 + exp(-z)), without overflow for large ``-z``."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _inside(across: np.ndarray, band: Band) -> np.ndarray:
    """How far into ``band`` points ``across`` it lie: 1 in it, 0 out of it, soft edges between."""
    return _logistic((across - band.near) / band.soft) - _logistic((across - band.far) / band.soft)


def _deepest_band(
    u: np.ndarray, w: np.ndarray, e: np.ndarray, angles: np.ndarray
) -> tuple[float, float, float, float] | None:
    """Of the directions ``angles`` (radians), the one across the clearest band in the residuals ``e``
    at board points ``u``, ``w``: (direction, its near and far edges across it (pitches), the median
    residual in it), or None."""
    n_bins = round(2 * BAND_REACH / BAND_BIN)
    n_angles = angles.size
    across = _across(angles[:, None], u[None, :], w[None, :])
    bins = np.clip(((across + BAND_REACH) / BAND_BIN).astype(np.int64), 0, n_bins - 1)
    # The median of each step: the samples sorted by step, then by residual within it.
    key = bins + (e[None, :] + RESIDUAL_CLIP) / (2 * RESIDUAL_CLIP + 1e-9)
    ordered = np.sort(key, axis=1)
    counts = np.zeros((n_angles, n_bins), np.int64)
    np.add.at(counts, (np.arange(n_angles)[:, None], bins), 1)
    starts = np.cumsum(counts, axis=1) - counts
    mid = np.minimum(starts + counts // 2, e.size - 1)
    middle_key = np.take_along_axis(ordered, mid, axis=1)
    medians = (middle_key - np.arange(n_bins)[None, :]) * (2 * RESIDUAL_CLIP + 1e-9) - RESIDUAL_CLIP
    depth = math.log(1.0 - BAND_DEPTH_MIN)
    dark = np.zeros((n_angles, n_bins), np.int64)
    np.add.at(dark, (np.arange(n_angles)[:, None], bins), (e[None, :] <= depth).astype(np.int64))
    enough = counts >= MIN_BIN_SAMPLES
    in_band = enough & (medians <= depth) & (dark >= BAND_DARK_SHARE * np.maximum(counts, 1))
    if not in_band.any():
        return None
    # A band is one stretch: its steps in a row, save those too thin in samples to judge (a few dark
    # steps apart are the rims of pieces beside the lines). Of each direction, its longest stretch.
    stretch = np.cumsum(enough & ~in_band, axis=1)
    flat_id = (np.arange(n_angles)[:, None] * (n_bins + 1) + stretch).ravel()
    steps_in = np.bincount(flat_id, in_band.ravel(), minlength=n_angles * (n_bins + 1))
    longest = steps_in.reshape(n_angles, n_bins + 1).argmax(axis=1)
    in_band &= stretch == longest[:, None]
    # The direction along which the band fits the samples best: read a few degrees off it, the band's
    # edges mix dark samples and lit ones in the same steps.
    predicted = np.take_along_axis(np.where(in_band, medians, 0.0), bins, axis=1)
    misfit = ((e[None, :] - predicted) ** 2).sum(axis=1)
    a = int(np.argmin(np.where(in_band.any(axis=1), misfit, np.inf)))
    row = np.flatnonzero(in_band[a])
    width = row.size * BAND_BIN
    covered = int(enough[a].sum()) * BAND_BIN
    if width < BAND_MIN_DETECTED or width > BAND_MAX_SHARE * covered:
        return None
    near, far = -BAND_REACH + BAND_BIN * row[0], -BAND_REACH + BAND_BIN * (row[-1] + 1)
    return float(angles[a]), near, far, median(medians[a][row])


def _fit_band(
    u: np.ndarray, w: np.ndarray, e: np.ndarray, start: tuple[float, float, float, float]
) -> Band | None:
    """The band that fits the residuals ``e`` at board points ``u``, ``w`` best, from ``start`` (as
    :func:`_deepest_band` gives it): its direction, edges, softness and depth, and the lit board's own
    level, fitted together (Levenberg-Marquardt, the residuals weighed by Huber's rule so that a piece's
    rim beside a line does not pull the band). None when the band fitted is too faint or too deep, too
    narrow or as wide as the board, as soft as the fit lets it be, has an edge on the board that is no
    step in the light, or leaves the board beyond it in shade (see the module's constants)."""
    angle, near, far, level = start
    # (direction, near, far, log softness, log depth, lit level)
    p = np.array([angle, near, far, math.log(BAND_START_SOFT), level, 0.0])
    damping = FIT_DAMPING

    def residual(q: np.ndarray) -> np.ndarray:
        band = Band(q[0], q[1], q[2], math.exp(q[3]), q[4])
        return e - (q[5] + q[4] * _inside(_across(q[0], u, w), band))

    r = residual(p)
    for _ in range(FIT_ROUNDS):
        scale = max(1.4826 * median(np.abs(r)), FIT_NOISE_FLOOR)
        weights = np.minimum(1.0, HUBER_K * scale / np.maximum(np.abs(r), 1e-12))
        soft = math.exp(p[3])
        x = _across(p[0], u, w)
        g1 = _logistic((x - p[1]) / soft)
        g2 = _logistic((x - p[2]) / soft)
        d1, d2 = g1 * (1 - g1), g2 * (1 - g2)
        jac = np.column_stack(
            [
                p[4] * (d1 - d2) / soft * (np.cos(p[0]) * u - np.sin(p[0]) * w),
                -p[4] * d1 / soft,
                p[4] * d2 / soft,
                -p[4] * (d1 * (x - p[1]) - d2 * (x - p[2])) / soft,
                g1 - g2,
                np.ones_like(x),
            ]
        )
        jw = jac * weights[:, None]
        normal = jac.T @ jw
        step = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-9), jw.T @ r)
        trial = p + step
        trial[3] = min(max(trial[3], math.log(BAND_SOFT_RANGE[0])), math.log(BAND_SOFT_RANGE[1]))
        r_trial = residual(trial)
        if (weights * r_trial**2).sum() < (weights * r**2).sum():
            p, r, damping = trial, r_trial, damping / 3
        else:
            damping *= 4
    angle, near, far, soft, log_depth = p[0], min(p[1], p[2]), max(p[1], p[2]), math.exp(p[3]), p[4]
    # The band as the board shows it: its edges clipped to the samples' reach across it.
    x = _across(angle, u, w)
    lo, hi = float(x.min()), float(x.max())
    width = min(far, hi) - max(near, lo)
    if not math.log(1.0 - BAND_DEPTH_MAX) <= log_depth <= math.log(1.0 - BAND_DEPTH_MIN):
        return None
    if width < BAND_MIN_WIDTH or soft >= SOFTEST_BAND * BAND_SOFT_RANGE[1]:
        return None
    if width > BAND_MAX_SHARE * (hi - lo):
        return None
    # Each edge of it that lies on the board is a step in the light there: a band fitted across a board
    # mostly in shadow may put an edge inside the shadow, where it evens out nothing but makes a step.
    for edge, outward in ((near, -1.0), (far, 1.0)):
        if not lo < edge < hi:
            continue
        beyond = (outward * (x - edge) > 0) & (outward * (x - edge) <= EDGE_REACH)
        within = (outward * (edge - x) > 0) & (outward * (edge - x) <= EDGE_REACH)
        if np.count_nonzero(beyond) < MIN_EDGE_SAMPLES or np.count_nonzero(within) < MIN_EDGE_SAMPLES:
            continue  # (too few samples there to tell)
        if median(e[beyond]) - median(e[within]) < EDGE_STEP_SHARE * -log_depth:
            return None
    # A band is a stretch of shadow on a lit board: the board beyond it lit nearly everywhere. (On a full
    # board of large pieces the few samples a piece's shadow leaves out may stand above the others, and
    # the rest of the board "a band" below them.)
    beyond = _inside(x, Band(angle, near, far, soft, log_depth)) <= 1.0 - BAND_CORE
    if beyond.any() and np.mean(e[beyond] > LIT_DEPTH_SHARE * log_depth) < BAND_LIT_SHARE:
        return None
    return Band(float(angle), float(near), float(far), soft, float(log_depth))
