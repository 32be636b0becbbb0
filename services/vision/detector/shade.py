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
fall-off, and leave the board beyond it lit (``BAND_LIT_SHARE``).

A person beside the board shades it as no arm does: beyond one soft edge, the shadow reaching off the
board and over most of it, maybe. The plane fitted first shares such a shadow with the lit board (it
leans into it), and what it leaves looks like a band along the edge, which no band fits. Where no band
holds, the stretch found is fitted again as a shadow's edge with the lit board's own plane of light
(:func:`persons_shadow_gain`, :func:`_fit_half_plane`), held as a band is and, since an edge across a
board fits many things (bright rims clustered on one side of a board leave the rest "in shade"), only
where the board is darker beyond it in the image itself, shaded nearly everywhere there, and its light
explained; and it is only looked for, and read with, where the board read as it is has a square in
doubt, in the shadow, and no line covered (``search.read_at_pose``).

The band or the edge is divided out of the canonical view, so that what follows reads a board evenly
lit. A board without one is left as it is."""

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
#: a person's body beside the board under a ceiling lamp shades it beyond one soft edge, the shadow
#: reaching off the board (:func:`_fit_half_plane`): its far edge is started this far (pitches) beyond
#: the stretch found, its edge may be as soft as this (pitches: the logistic's scale; a lamp 1.5 m up
#: and 10-30 cm wide, a body 30 cm above the board: a penumbra 0.3-1.2 pitch wide) and it may cover
#: this share of the board (the rest lit, to tell its light by).
HALF_PLANE_FAR: Final = 6.0
HALF_PLANE_SOFTEST: Final = 0.3
HALF_PLANE_MAX_SHARE: Final = 0.85
#: the sharp step it may start from is looked for along these directions (radians from the view's x
#: axis), then around the one found, where it leaves this share of the samples on either side at least.
HALF_PLANE_ANGLES: Final = np.deg2rad(np.arange(0.0, 180.0, 15.0))
HALF_PLANE_FINE_ANGLES: Final = np.deg2rad(np.arange(-6.0, 7.0, 2.0))
HALF_PLANE_MIN_SHARE: Final = 0.1
#: its edge steps the light by ``EDGE_STEP_SHARE`` of its depth within this many of its softness either
#: side of it (``EDGE_REACH`` at least)...
HALF_PLANE_EDGE_SOFTS: Final = 4.0
#: ...at least this share of the samples well inside it lie ``LIT_DEPTH_SHARE`` of its depth below the
#: lit board's light, and what it leaves unexplained spreads at most this share of its depth (a robust
#: spread). (Our renderer's contest looks under a person's shadow, 120 frames: every half plane kept
#: in shade at 1.0 of its samples, leaving 0.01-0.20 of its depth; the false ones the tuning sets
#: offered before these two rules, a full board's contact shadows, a vignette's corners and an arm's
#: band fitted the wrong way: 0.80-0.99 in shade, 0.15-0.52 left.)
HALF_PLANE_DARK_SHARE: Final = 0.9
HALF_PLANE_MISFIT: Final = 0.2
#: ...and the board within it is darker than beyond it by this share of its depth in the image itself,
#: not only against the lit board's plane fitted with it (a plane steep enough makes a shadow of the lit
#: side: drawn soft edges were fitted so, the board read 75 % off where it was lit).
HALF_PLANE_DARKER: Final = 0.25
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
    light = _board_light(canon, half_width)
    found = _band_found(light)
    band = None if found is None else _fit_band(light.u, light.w, light.e, found)
    return None if band is None else _gain(canon, band)


def persons_shadow_gain(canon: _Canon, half_width: float) -> np.ndarray | None:
    """The light a person's shadow leaves at every pixel of the canonical view: one soft edge across
    the board, found where the board shows a stretch of shadow that no band fits
    (:func:`_fit_half_plane`); or None. ``half_width``: the lines' half width, pitches."""
    light = _board_light(canon, half_width)
    found = _band_found(light)
    if found is None or _fit_band(light.u, light.w, light.e, found) is not None:
        return None
    band = _fit_half_plane(light.u, light.w, light.e, light.logv, found)
    return None if band is None else _gain(canon, band)


class _BoardLight(NamedTuple):
    """The plate's light beside the lines, inside the grid: where each sample lies (pitches from the
    board's centre, along the view's x and y), its log grey, and what a smooth plane fitted to the
    samples not well below it leaves (log grey, clipped)."""

    u: np.ndarray
    w: np.ndarray
    logv: np.ndarray
    e: np.ndarray


def _board_light(canon: _Canon, half_width: float) -> _BoardLight:
    """The plate's light beside the lines of the canonical view ``canon`` (see :class:`_BoardLight`)."""
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
    rows, cols = np.divmod(flat_at, canon.img.shape[1])
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
    return _BoardLight(u, w, logv, np.clip(e, -RESIDUAL_CLIP, RESIDUAL_CLIP))


def _band_found(light: _BoardLight) -> tuple[float, float, float, float] | None:
    """The stretch of shadow ``light`` shows, as :func:`_deepest_band` finds it, or None."""
    u, w, e = light.u, light.w, light.e
    if np.count_nonzero(e <= math.log(1.0 - BAND_DEPTH_MIN)) < BAND_MIN_SAMPLES:
        return None  # (most boards: no band to look for)
    found = _deepest_band(u, w, e, BAND_ANGLES)
    if found is None:
        return None
    # ...and again on finer directions around the one found (a band a few degrees off the direction
    # read along spreads over the steps of its edges).
    return _deepest_band(u, w, e, found[0] + BAND_FINE_ANGLES) or found


def _gain(canon: _Canon, band: Band) -> np.ndarray:
    """The light ``band`` leaves at every pixel of the canonical view ``canon``."""
    size = canon.img.shape[1]
    centre = canon.margin + GRID_SQUARES * canon.px / 2
    grid = np.arange(size, dtype=np.float64)
    across = _across(band.angle, (grid[None, :] - centre) / canon.px, (grid[:, None] - centre) / canon.px)
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
    level, fitted together (:func:`_fitted`). None when the band fitted is too faint or too deep, too
    narrow or as wide as the board, as soft as the fit lets it be, has an edge on the board that is no
    step in the light, or leaves the board beyond it in shade (see the module's constants)."""
    angle, near, far, level = start
    start_soft = math.log(BAND_START_SOFT)
    p = _fitted(u, w, e, np.array([angle, near, far, start_soft, level]), BAND_SOFT_RANGE[1])[0]
    return _kept(u, w, e, p, half_plane=False)


def _fit_half_plane(
    u: np.ndarray, w: np.ndarray, e: np.ndarray, logv: np.ndarray, start: tuple[float, float, float, float]
) -> Band | None:
    """The shadow of something as wide as a person beside the board (their body under a ceiling lamp):
    one soft edge across the board, the shadow reaching off it, fitted to the residuals ``e`` at board
    points ``u``, ``w`` (their log grey ``logv``) together with the lit board's own plane of light, which
    the plane fitted first shared with the shadow. Started from the stretch ``start`` that no band fits
    (as :func:`_deepest_band` gives it), its far edge ``HALF_PLANE_FAR`` off the board on either side of
    it, and from the sharp step that explains the light best (:func:`_steepest_edge`); of the fits held,
    the one that fits best. A fit is held as :func:`_fit_band` holds a band (its edge a step in the
    light, the board beyond it lit) and, since an edge across a board fits many things, when the board
    is darker in it than beyond it in the image itself (``HALF_PLANE_DARKER``: a plane steep enough
    makes a shadow of either side), shaded nearly everywhere in it (``HALF_PLANE_DARK_SHARE``) and the
    light there explained (``HALF_PLANE_MISFIT``). Returned as a band whose other edge is off the
    board."""
    angle, near, far, level = start
    starts = [(angle, near, near + HALF_PLANE_FAR, level), (angle, far - HALF_PLANE_FAR, far, level)]
    steepest = _steepest_edge(u, w, logv, HALF_PLANE_ANGLES)
    if steepest is not None:
        steepest = _steepest_edge(u, w, logv, steepest[0] + HALF_PLANE_FINE_ANGLES) or steepest
        edge_angle, edge, step, _explained = steepest
        shaded = (edge, edge + HALF_PLANE_FAR) if step < 0 else (edge - HALF_PLANE_FAR, edge)
        starts.append((edge_angle, *shaded, -abs(step)))
    held: list[tuple[float, Band]] = []
    scale = None
    for a, lo, hi, depth in starts:
        p, fit_scale, r = _fitted(
            u,
            w,
            e,
            np.array([a, lo, hi, math.log(BAND_START_SOFT), depth, 0.0, 0.0, 0.0]),
            HALF_PLANE_SOFTEST,
        )
        # (Compared at one scale: each fit's own would favour the looser one.)
        scale = fit_scale if scale is None else scale
        band = _kept(u, w, e - (p[5] + p[6] * u + p[7] * w), p, half_plane=True, logv=logv)
        if band is not None:
            held.append((_huber_cost(r, scale), band))
    return min(held, key=lambda cost_band: cost_band[0])[1] if held else None


def _steepest_edge(
    u: np.ndarray, w: np.ndarray, v: np.ndarray, angles: np.ndarray
) -> tuple[float, float, float, float] | None:
    """Of the directions ``angles`` (radians) and the places across them, the sharp step in ``v`` at board
    points ``u``, ``w`` that a plane and the step fitted together explain best (least squares): its
    direction, where it lies across it (pitches), how far ``v`` steps there (negative: lower beyond),
    and the share of what the plane alone leaves that the step explains.
    Every place with ``HALF_PLANE_MIN_SHARE`` of the samples on either side is tried at once: a step's
    fit is the plane's and what the step adds to it, whose sums over the samples beyond each place
    are running sums. None when no place has as many samples on either side."""
    n = v.size
    least = math.ceil(HALF_PLANE_MIN_SHARE * n)
    if n < 2 * least or least < 1:
        return None
    design = _surface_design(u, w)
    gram_inv = np.linalg.inv(design.T @ design)
    plane_left = v - design @ (gram_inv @ (design.T @ v))
    order = np.argsort(_across(angles[:, None], u[None, :], w[None, :]), axis=1)
    # Sums over the samples beyond each place (the k-th in order and after): of what the plane leaves,
    # and of the plane's design.
    left_beyond = np.cumsum(plane_left[order][:, ::-1], axis=1)[:, ::-1]
    design_beyond = np.cumsum(design[order][:, ::-1], axis=1)[:, ::-1]
    # The step's own share of the samples beyond, the plane's share of it taken out.
    own = np.arange(n, 0, -1)[None, :] - np.einsum("akj,ji,aki->ak", design_beyond, gram_inv, design_beyond)
    places = np.arange(least, n - least + 1)
    explained = left_beyond[:, places] ** 2 / np.maximum(own[:, places], 1e-9)
    a, k = np.unravel_index(int(np.argmax(explained)), explained.shape)
    k = int(places[k])
    x = _across(angles[a], u, w)[order[a]]
    share = float(explained.max() / max(float(plane_left @ plane_left), 1e-12))
    return float(angles[a]), float((x[k - 1] + x[k]) / 2), float(left_beyond[a, k] / own[a, k]), share


def _fitted(
    u: np.ndarray, w: np.ndarray, e: np.ndarray, start: np.ndarray, softest: float
) -> tuple[np.ndarray, float, np.ndarray]:
    """A shadow band fitted to the residuals ``e`` at board points ``u``, ``w`` from ``start``: (direction,
    near edge, far edge, log softness, log depth), then the lit board's level and, when ``start`` has
    them, its slopes along ``u`` and ``w`` (a plane), fitted together over every sample (Levenberg-
    Marquardt, the residuals weighed by Huber's rule so that a piece's rim beside a line does not pull
    the band), the softness kept within ``BAND_SOFT_RANGE[0]`` and ``softest``. Returns the parameters,
    the residuals' robust spread at the last round, and the residuals."""
    p = np.append(start, 0.0) if start.size == 5 else start.copy()
    damping = FIT_DAMPING

    def residual(q: np.ndarray) -> np.ndarray:
        band = Band(q[0], q[1], q[2], math.exp(q[3]), q[4])
        lit = q[5] + (q[6] * u + q[7] * w if q.size == 8 else 0.0)
        return e - (lit + q[4] * _inside(_across(q[0], u, w), band))

    r = residual(p)
    scale = FIT_NOISE_FLOOR
    for _ in range(FIT_ROUNDS):
        scale = max(1.4826 * median(np.abs(r)), FIT_NOISE_FLOOR)
        weights = np.minimum(1.0, HUBER_K * scale / np.maximum(np.abs(r), 1e-12))
        soft = math.exp(p[3])
        x = _across(p[0], u, w)
        g1 = _logistic((x - p[1]) / soft)
        g2 = _logistic((x - p[2]) / soft)
        d1, d2 = g1 * (1 - g1), g2 * (1 - g2)
        columns = [
            p[4] * (d1 - d2) / soft * (np.cos(p[0]) * u - np.sin(p[0]) * w),
            -p[4] * d1 / soft,
            p[4] * d2 / soft,
            -p[4] * (d1 * (x - p[1]) - d2 * (x - p[2])) / soft,
            g1 - g2,
            np.ones_like(x),
        ]
        jac = np.column_stack(columns + ([u, w] if p.size == 8 else []))
        jw = jac * weights[:, None]
        normal = jac.T @ jw
        step = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-9), jw.T @ r)
        trial = p + step
        trial[3] = min(max(trial[3], math.log(BAND_SOFT_RANGE[0])), math.log(softest))
        r_trial = residual(trial)
        if (weights * r_trial**2).sum() < (weights * r**2).sum():
            p, r, damping = trial, r_trial, damping / 3
        else:
            damping *= 4
    return p, scale, r


def _huber_cost(r: np.ndarray, scale: float) -> float:
    """Huber's loss of the residuals ``r`` at ``scale``: quadratic within ``HUBER_K`` of it, linear beyond."""
    a = np.abs(r)
    k = HUBER_K * scale
    return float(np.where(a <= k, 0.5 * a * a, k * (a - 0.5 * k)).sum())


def _kept(
    u: np.ndarray,
    w: np.ndarray,
    e: np.ndarray,
    p: np.ndarray,
    *,
    half_plane: bool,
    logv: np.ndarray | None = None,
) -> Band | None:
    """The band of the fitted parameters ``p`` (see :func:`_fitted`) when the residuals ``e`` at board
    points ``u``, ``w`` (the lit board's light taken out, for a ``half_plane``) hold it as one (see
    :func:`_fit_band` and :func:`_fit_half_plane`), else None."""
    angle, near, far, soft, log_depth = p[0], min(p[1], p[2]), max(p[1], p[2]), math.exp(p[3]), p[4]
    band = Band(float(angle), float(near), float(far), soft, float(log_depth))
    # The band as the board shows it: its edges clipped to the samples' reach across it.
    x = _across(angle, u, w)
    lo, hi = float(x.min()), float(x.max())
    width = min(far, hi) - max(near, lo)
    if not math.log(1.0 - BAND_DEPTH_MAX) <= log_depth <= math.log(1.0 - BAND_DEPTH_MIN):
        return None
    softest = HALF_PLANE_SOFTEST if half_plane else BAND_SOFT_RANGE[1]
    if width < BAND_MIN_WIDTH or soft >= SOFTEST_BAND * softest:
        return None
    if half_plane and lo < near and far < hi:
        return None  # (both edges on the board: a band, which did not hold)
    if width > (HALF_PLANE_MAX_SHARE if half_plane else BAND_MAX_SHARE) * (hi - lo):
        return None
    # Each edge of it that lies on the board is a step in the light there: a band fitted across a board
    # mostly in shadow may put an edge inside the shadow, where it evens out nothing but makes a step.
    # (Judged over the edge's own soft width, at least EDGE_REACH each way.)
    reach = max(EDGE_REACH, HALF_PLANE_EDGE_SOFTS * soft) if half_plane else EDGE_REACH
    for edge, outward in ((near, -1.0), (far, 1.0)):
        if not lo < edge < hi:
            continue
        beyond = (outward * (x - edge) > 0) & (outward * (x - edge) <= reach)
        within = (outward * (edge - x) > 0) & (outward * (edge - x) <= reach)
        if np.count_nonzero(beyond) < MIN_EDGE_SAMPLES or np.count_nonzero(within) < MIN_EDGE_SAMPLES:
            continue  # (too few samples there to tell)
        if median(e[beyond]) - median(e[within]) < EDGE_STEP_SHARE * -log_depth:
            return None
    # A band is a stretch of shadow on a lit board: the board beyond it lit nearly everywhere. (On a full
    # board of large pieces the few samples a piece's shadow leaves out may stand above the others, and
    # the rest of the board "a band" below them.)
    inside = _inside(x, band)
    beyond = inside <= 1.0 - BAND_CORE
    if beyond.any() and np.mean(e[beyond] > LIT_DEPTH_SHARE * log_depth) < BAND_LIT_SHARE:
        return None
    if half_plane:
        # ...and a person's shadow lies on the board as one: in shade nearly everywhere within it, and
        # the light there what it explains, give or take (a full board's contact shadows, a vignette's
        # dark corners and a dark plate's pieces fit an edge too, and leave much unexplained).
        core = inside >= BAND_CORE
        if not core.any() or not beyond.any():
            return None
        if logv is not None and median(logv[core]) - median(logv[beyond]) > HALF_PLANE_DARKER * log_depth:
            return None
        if np.mean(e[core] < LIT_DEPTH_SHARE * log_depth) < HALF_PLANE_DARK_SHARE:
            return None
        left = e - log_depth * inside
        if 1.4826 * median(np.abs(left - median(left))) > HALF_PLANE_MISFIT * -log_depth:
            return None
    return band
