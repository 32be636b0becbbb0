"""The soft shadow of something long above the board (the gantry's arm under a lamp): a band across the
board, darker by a factor over its width, its edges blurred by the lamp's size. It darkens the plate,
the lines and the pieces alike; the plate's surface, fitted as one smooth surface over the board
(:func:`.squares._plate_surface`), cannot follow it, so a bare square it crosses reads as a body and
a piece half in it as two.

It is found where nothing but the plate can be: just beside the grid's lines, inside the grid
(:func:`.occlusion._line_samples_of`'s reference samples), each kept only when its line stands the
lines' usual contrast from it (a band darkens the line too; a piece over the sample does not). A plane
is fitted to their log grey (a light gradient), again on those not well below it, and what it leaves
is read along every direction across the board: a band is one stretch, at least ``BAND_MIN_WIDTH``
wide, where the median of the samples across the whole board lies ``BAND_DEPTH_MIN`` or more below the
plane and most of them do (a dark piece beside a line darkens a few samples of a stretch, a band all
of them); of the directions, the one its profile fits best. The profile is divided out of the
canonical view, so that what follows reads a board evenly lit. A board without one is left as it is."""

from __future__ import annotations

import math
from typing import Final

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
#: a band's soft edge: this many steps beside it, at most.
BAND_EDGE_STEPS: Final = 10
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
    profile = _deepest_band(u, w, e, BAND_ANGLES)
    if profile is None:
        return None
    # ...and again on finer directions around the one found (a band a few degrees off the direction
    # read along spreads over the steps of its edges).
    profile = _deepest_band(u, w, e, profile[0] + BAND_FINE_ANGLES) or profile
    angle, steps, known = profile
    # The profile at every pixel: across the band's direction, between the middles of the steps that
    # hold samples (no line is sampled beside a crossing: the profile bridges those stretches).
    grid = np.arange(size, dtype=np.float64)
    across = ((grid[None, :] - centre) * math.sin(angle) + (grid[:, None] - centre) * math.cos(angle)) / s
    mids = -BAND_REACH + BAND_BIN * (np.arange(steps.size) + 0.5)
    return np.exp(np.interp(across, mids[known], steps[known])).astype(np.float32)


def _deepest_band(
    u: np.ndarray, w: np.ndarray, e: np.ndarray, angles: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray] | None:
    """Of the directions ``angles`` (radians), the one across the clearest band in the residuals ``e``
    at board points ``u``, ``w``, its profile (log light, one value per step of ``BAND_BIN`` from
    ``-BAND_REACH``: 0 outside the band) and which of its steps hold samples, or None."""
    n_bins = round(2 * BAND_REACH / BAND_BIN)
    n_angles = angles.size
    across = np.sin(angles)[:, None] * u[None, :] + np.cos(angles)[:, None] * w[None, :]
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
    row = in_band[a]
    width = int(row.sum()) * BAND_BIN
    covered = int(enough[a].sum()) * BAND_BIN
    if width < BAND_MIN_WIDTH or width > BAND_MAX_SHARE * covered:
        return None
    # The band's steps and its soft edges (the steps beside it that are darker than the surface, up to
    # BAND_EDGE_STEPS of them), at their medians; the rest is lit.
    # (The lit board's own level: the plane leans towards the band a little.)
    lit = enough[a] & ~row & (np.abs(medians[a]) < -depth)
    base = median(medians[a][lit]) if lit.any() else 0.0
    steps = np.where(row, medians[a] - base, 0.0)
    for direction in (1, -1):
        for start in np.flatnonzero(row).tolist():
            for k in range(1, BAND_EDGE_STEPS + 1):
                j = start + direction * k
                if not 0 <= j < n_bins or row[j]:
                    break
                if not enough[a, j]:
                    continue  # (no samples here: beside a crossing, or off the grid)
                if medians[a, j] >= base:
                    break
                steps[j] = min(steps[j], medians[a, j] - base)
    return float(angles[a]), steps, enough[a] | row
