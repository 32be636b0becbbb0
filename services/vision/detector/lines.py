"""Step 3 of the package's overview on the grid's own lines: the pose refined on them (each line
placed from cross-line profiles, straight lines fitted, their crossings correcting the homography:
what tracking relies on), and a found grid checked on them (:func:`_verify_grid`: which way its
contrast goes, whether its window is a square off, how wide its lines are)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import cv2
import numpy as np

from .geometry import CANON_MARGIN, GRID_SQUARES, LARGER_GRID_SIDES, _apply_h, _read_only, goes_on_beyond
from .image import _Image
from .model import MAX_HALF_WIDTH, MIN_HALF_WIDTH, DetectorParams, Polarity
from .stats import FLOAT_EPS, least_squares, median, median_along, percentile_along

#: segments per square side whose cross-line profile places a line (two: the crossings are skipped).
SEGMENTS_PER_SIDE: Final = 2
#: a segment is seen when its profile's contrast is this fraction of the grid's median segment contrast.
SEGMENT_SEEN_FRAC: Final = 0.5
#: a segment this many canonical pixels from its line's fit is an outlier (a piece beside the line).
SEGMENT_OUTLIER_PX: Final = 1.0
#: fewest lines of each direction that must be placed for a correction.
MIN_FITTED_LINES: Final = 3
#: how far beyond its line's half-width a profile reaches, in pitches (a pose this far off is found again).
LINE_REACH: Final = 0.06
#: a line's near sides lie this many pixels beyond its half width (see _verify_grid).
NEAR_GAP_PX: Final = 2
#: a line's ridge in the gaps between pieces along it: averaged over blocks this many pitches long, the
#: blocks' GAP_QUANTILE percentile (see _gap_strength).
GAP_BLOCK: Final = 0.2
GAP_QUANTILE: Final = 75.0
#: the polarity's samples: this far along a line from a crossing, and this far into a square's corner
#: on both axes (pitches); no piece reaches either.
POLARITY_ALONG: Final = 0.2
POLARITY_CORNER: Final = 0.12
#: the grid check's canonical view: pixels per square, clamped to this range around the pitch.
VERIFY_MIN_PX: Final = 24
VERIFY_MAX_PX: Final = 48
#: the window moves by a square when its line at one end is below the first share of its typical
#: line and the line beyond its other end above the second.
SHIFT_MISSING: Final = 0.25
SHIFT_PRESENT: Final = 0.5
#: ...or when the window moved looks clearer by this much (see _window_clarity).
SHIFT_CLEARER: Final = 0.3
#: ...and the plate in the squares it takes in is within this share of the lines' strength of the
#: middle row's (corners sampled CORNER_INSET in from the lines, CORNER_SIZE square, in pitches).
SHIFT_PLATE_STEP: Final = 0.5
CORNER_INSET: Final = 0.12
CORNER_SIZE: Final = 0.1
#: how far the grid check's line profiles reach on each side of a line, in pitches.
VERIFY_REACH: Final = 0.15
#: where a grid's lines are looked for beyond it (:func:`_grid_runs_on`): this far beyond its outer
#: lines to this far, in pitches; a line goes on where it stands out there by this share of the grid's
#: typical line, and a cell's middle beside it is clear where nothing in it does.
BEYOND_FROM: Final = 0.2
BEYOND_TO: Final = 0.8
BEYOND_LINE_SHARE: Final = 0.5
#: ...within this many pitches of its place (a pose placed on the grid's lines is less sure beyond).
BEYOND_SLACK: Final = 0.06


# ----------------------------------------------------------------------------------------------------
# stage 3b: the pose refined on the grid lines themselves (and verified: what tracking relies on)


@dataclass(frozen=True)
class _LineFit:
    """The grid's eight lines located in a canonical view warped with a homography ``h``."""

    #: the corrected image -> canonical homography (``h`` when too few lines were seen to correct it).
    h: np.ndarray
    #: largest and root-mean-square offset, in canonical pixels, of the seen line segments from where
    #: ``h`` put them; how far ``h`` was off.
    max_offset: float
    rms_offset: float
    #: fraction of the line segments seen with clear contrast.
    seen: float
    #: canonical pixels per square of the view the lines were measured in.
    px: int


@lru_cache(maxsize=64)
def _segment_bounds(s: int, m: int) -> np.ndarray:
    """Start and end (canonical px, along the line) of every segment: two per square side, clear of the
    crossings. Shape (3 * SEGMENTS_PER_SIDE, 2). The same for every frame at these sizes, so built once."""
    out = []
    for j in range(GRID_SQUARES):
        for a, b in ((0.12, 0.5), (0.5, 0.88)):
            out.append((m + int((j + a) * s), m + int((j + b) * s)))
    return _read_only(np.array(out))[0]


@lru_cache(maxsize=64)
def _segment_geometry(s: int, m: int) -> tuple[np.ndarray, ...]:
    """What :func:`_fit_lines` derives from :func:`_segment_bounds` alone (for a view of ``s`` px a square
    and ``m`` margin): the bounds flat (``np.add.reduceat``'s indices), each segment's length (float32),
    its middle relative to the view's centre (float64: the points the lines are fitted at), the lines'
    positions, and the view's ``to_canvas`` map with its inverse. Built once for these sizes."""
    bounds = _segment_bounds(s, m)
    size = GRID_SQUARES * s + 2 * m
    lengths = (bounds[:, 1] - bounds[:, 0]).astype(np.float32)
    along = ((bounds[:, 0] + bounds[:, 1]) / 2.0).astype(np.float64) - size / 2.0
    lines = m + s * np.arange(GRID_SQUARES + 1)
    to_canvas = np.array([[s, 0.0, m], [0.0, s, m], [0.0, 0.0, 1.0]])
    return _read_only(bounds.ravel(), lengths, along, lines, to_canvas, np.linalg.inv(to_canvas))


def _straight_fit(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Slope and intercept of the least-squares line through (``t``, ``y``): ``np.polyfit(t, y, 1)``
    without its checks and options, in the same steps (columns scaled to unit norm, the same LAPACK
    solve), so that the fit is the same to the bit."""
    design, scale = _scaled_design(np.asarray(t, np.float64).tobytes())
    # (``np.polyfit``'s default ``rcond``: the points' count times the machine epsilon.)
    return least_squares(design, y.astype(np.float64), t.size * FLOAT_EPS) / scale


@lru_cache(maxsize=64)
def _scaled_design(t_bytes: bytes) -> tuple[np.ndarray, ...]:
    """:func:`_straight_fit`'s design matrix at the points ``t`` (float64, as bytes), its columns
    scaled to unit norm, and the scales. It depends on the points alone, which are the same from line
    to line and frame to frame (the segments' middles), so it is built once for them."""
    t = np.frombuffer(t_bytes, np.float64)
    design = np.empty((t.size, 2))
    design[:, 0] = t
    design[:, 1] = 1.0
    scale = np.sqrt((design * design).sum(axis=0))
    design /= scale
    return _read_only(design, scale)


def _fit_lines(
    gray: np.ndarray, h: np.ndarray, pitch_px: float, sign: int, half_width: float, params: DetectorParams
) -> _LineFit | None:
    """Place each grid line in a canonical view warped with ``h`` from cross-line profiles, fit a
    straight line to each, and correct ``h`` so that their 16 crossings land where they belong.

    A profile's half-maximum centroid is the line's centre (independent of the line's width); segments
    without contrast (covered) or far from their line's fit (a piece beside the line) do not count, nor,
    while enough lines are placed without them, those whose profile keeps the line's tone to an end of
    its window (a piece of that tone beside the line; a table of that tone beyond a plate that ends at
    its outer line).
    None when the view cannot be built (a degenerate homography).
    """
    s = int(min(params.canonical_max_px, max(params.canonical_min_px, round(pitch_px))))
    m = max(2, round(CANON_MARGIN * s))
    size = GRID_SQUARES * s + 2 * m
    idx, lengths, along, lines, to_canvas, from_canvas = _segment_geometry(s, m)
    try:
        view = cv2.warpPerspective(
            gray, to_canvas @ h, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
    except cv2.error:
        return None
    img = view.astype(np.float32) * sign
    band = max(1, round(half_width * s))
    reach = min(m - 1, band + max(2, round(LINE_REACH * s)))
    offsets = np.arange(-reach, reach + 1, dtype=np.float32)
    # profiles[d, k, j, o]: direction d (0 vertical lines, 1 horizontal), line k, segment j, offset o.
    cols = lines[:, None] + offsets.astype(int)[None, :]  # (4, O)
    vert = img[:, cols]  # (size, 4, O): rows along the vertical lines
    horiz = img[cols, :].transpose(2, 0, 1)  # (size, 4, O): columns along the horizontal lines
    prof = np.stack(
        [np.add.reduceat(a, idx, axis=0)[::2] / lengths[:, None, None] for a in (vert, horiz)]
    )  # (2, J, 4, O)
    lo = prof.min(axis=3, keepdims=True)
    hi = prof.max(axis=3, keepdims=True)
    contrast = (hi - lo)[..., 0]  # (2, J, 4)
    weight = np.maximum(prof - (lo + 0.5 * (hi - lo)), 0.0)
    offset = (weight * offsets).sum(axis=3) / np.maximum(weight.sum(axis=3), 1e-6)  # (2, J, 4)
    typical = median(contrast)
    seen = contrast >= SEGMENT_SEEN_FRAC * max(typical, 1e-3)
    # The line's ends are inside the profile window: a centroid near the window's edge is not a line.
    seen &= np.abs(offset) < reach - 0.5
    seen_frac = float(seen.mean())

    def placed_by(
        segments: np.ndarray,
    ) -> tuple[list[tuple[int, tuple[float, float]]], list[tuple[int, tuple[float, float]]], float, float]:
        """The vertical and the horizontal lines fitted to ``segments`` (2, J, 4), and the largest and
        the RMS offset of those segments."""
        fits = _line_fits(segments, offset, along, lines)
        offs = np.abs(offset[segments]) if segments.any() else np.array([np.inf])
        vert = [(k, f) for k, f in enumerate(fits[: GRID_SQUARES + 1]) if f is not None]
        horiz = [(k, f) for k, f in enumerate(fits[GRID_SQUARES + 1 :]) if f is not None]
        return vert, horiz, float(offs.max()), float(np.sqrt(np.mean(offs**2)))

    # A profile over its half maximum at an end of the window is no line alone: something of the line's
    # tone is beside it (a piece, a table beyond a plate that ends at its outer line), and its centroid
    # lies off the line. It counts as seen, and is not fitted while enough lines are placed without
    # it: three of each direction, or two where such profiles took the others, each placed along half
    # its length at least.
    edge = (weight[..., 0] > 0.0) | (weight[..., -1] > 0.0)
    placed = seen & ~edge
    vert_fits, horiz_fits, max_off, rms = placed_by(placed)
    per_line = placed.sum(axis=1)  # (2, 4)
    enough = [
        len(fitted) >= MIN_FITTED_LINES
        or (
            len(fitted) == MIN_FITTED_LINES - 1
            and bool((seen[d] & edge[d]).any())
            and all(per_line[d, k] * 2 >= placed.shape[1] for k, _ in fitted)
        )
        for d, fitted in enumerate((vert_fits, horiz_fits))
    ]
    if not all(enough):
        if (seen & edge).any():  # (else ``placed`` is ``seen``: fitted already)
            vert_fits, horiz_fits, max_off, rms = placed_by(seen)
        if len(vert_fits) < MIN_FITTED_LINES or len(horiz_fits) < MIN_FITTED_LINES:
            return _LineFit(h, max_off, rms, seen_frac, s)
    src, dst = [], []
    c = size / 2.0
    for kx, (x0, ax) in vert_fits:
        for ky, (y0, ay) in horiz_fits:
            # x = x0 + ax (y - c), y = y0 + ay (x - c): the crossing of the two fitted lines.
            det = 1.0 - ax * ay
            x = (x0 + ax * (y0 - c) - ax * ay * c) / det
            y = y0 + ay * (x - c)
            src.append((x, y))
            dst.append((lines[kx], lines[ky]))
    corr, _ = cv2.findHomography(np.array(src, np.float64), np.array(dst, np.float64), 0)
    if corr is None:
        return _LineFit(h, max_off, rms, seen_frac, s)
    h_new = from_canvas @ corr @ to_canvas @ h
    return _LineFit(h_new / h_new[2, 2], max_off, rms, seen_frac, s)


def _line_fits(
    seen: np.ndarray, offset: np.ndarray, along: np.ndarray, lines: np.ndarray
) -> list[tuple[float, float] | None]:
    """Each grid line's straight fit in :func:`_fit_lines`' view: (position at the view's centre,
    slope) of the vertical lines then the horizontal ones, or None for a line seen in fewer than two
    segments. ``seen`` and ``offset`` are (2, J, 4): direction, segment, line; ``along`` the segments'
    middles from the view's centre, ``lines`` the lines' positions.

    A line is fitted to its seen segments' offsets, and once more without those farther than
    ``SEGMENT_OUTLIER_PX`` from that fit. The lines seen in every segment (most, most frames) are
    fitted together first: the same least-squares kernel on the same points, one call for all of
    them (each line's coefficients are those of its own call); those with an outlier, and the lines
    seen in fewer segments, are then fitted one by one (:func:`_line_fit`)."""
    n_seg = along.size
    offsets = offset.transpose(0, 2, 1).reshape(-1, n_seg)  # (8, J): line by line
    whole = np.flatnonzero(seen.all(axis=1).ravel())
    fits: list[tuple[float, float] | None] = [None] * offsets.shape[0]
    settled = np.zeros(offsets.shape[0], bool)
    if whole.size and n_seg >= 3:
        design, scale = _scaled_design(along.tobytes())
        ys = offsets[whole][..., None].astype(np.float64)
        coef = least_squares(design, ys, n_seg * FLOAT_EPS)[..., 0] / scale
        slope, at = coef[:, 0], coef[:, 1]
        resid = np.abs(slope[:, None] * along + at[:, None] - offsets[whole])
        clean = (resid <= SEGMENT_OUTLIER_PX).all(axis=1)
        for i, line in enumerate(whole.tolist()):
            if clean[i]:
                fits[line] = (float(lines[line % (GRID_SQUARES + 1)] + at[i]), float(slope[i]))
                settled[line] = True
    for line in np.flatnonzero(~settled).tolist():
        d, k = divmod(line, GRID_SQUARES + 1)
        fits[line] = _line_fit(seen[d, :, k], offsets[line], along, lines[k])
    return fits


def _line_fit(
    ok: np.ndarray, offset: np.ndarray, along: np.ndarray, line: np.integer
) -> tuple[float, float] | None:
    """One grid line's fit (see :func:`_line_fits`): the segments ``ok`` (seen) of its ``offset`` (J,)
    at ``along``, from its position ``line``."""
    fit = None
    for _ in range(2):
        n_ok = np.count_nonzero(ok)  # (cheaper than a boolean sum)
        if n_ok < 2:
            return None
        t = along[ok]  # the segments' middles, from the view's centre
        a, b = _straight_fit(t, offset[ok]) if n_ok >= 3 else (0.0, float(offset[ok].mean()))
        resid = np.abs(a * along + b - offset)
        fit = (float(line + b), float(a))
        keep = ok & (resid <= SEGMENT_OUTLIER_PX)
        if np.count_nonzero(keep) == n_ok:
            break
        ok = keep
    return fit


# ----------------------------------------------------------------------------------------------------
# stage 3: the grid checked on its lines


def _polarity_at(im: _Image, h: np.ndarray, pitch: float, p: DetectorParams) -> Polarity:
    """Which way the grid's contrast goes at a known pose: lines lighter or darker than the plate.

    Compared where no piece can be: the lines just beside their crossings, and the squares' corners
    next to them (the middles of the squares may all hold pieces of one colour).
    """
    del pitch, p  # the samples are placed in the board's own units
    inv = np.linalg.inv(h)
    gray = im.gray
    on = _apply_h(inv, POLARITY_ON_LINE)
    off = _apply_h(inv, POLARITY_CORNERS)
    hgt, wid = gray.shape

    def median(pts: np.ndarray) -> float:
        x = np.clip(np.round(pts[:, 0]).astype(np.int64), 0, wid - 1)
        y = np.clip(np.round(pts[:, 1]).astype(np.int64), 0, hgt - 1)
        # Grey levels are integers: the middle two of the sorted samples give the median exactly.
        v = np.sort(gray[y, x]).tolist()
        return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2.0

    return "light-lines" if median(on) > median(off) else "dark-lines"


def _polarity_samples() -> tuple[np.ndarray, np.ndarray]:
    """Canonical points on the lines beside every crossing, and in the squares' corners beside it."""
    on, off = [], []
    a, c = POLARITY_ALONG, POLARITY_CORNER
    for i in range(GRID_SQUARES + 1):
        for j in range(GRID_SQUARES + 1):
            for dx, dy in ((a, 0.0), (-a, 0.0), (0.0, a), (0.0, -a)):
                on.append((i + dx, j + dy))
            for dx, dy in ((c, c), (-c, c), (c, -c), (-c, -c)):
                off.append((i + dx, j + dy))
    inside = [pt for pt in on if 0.0 <= pt[0] <= 3.0 and 0.0 <= pt[1] <= 3.0]
    corners = [pt for pt in off if 0.0 <= pt[0] <= 3.0 and 0.0 <= pt[1] <= 3.0]
    return np.array(inside), np.array(corners)


POLARITY_ON_LINE, POLARITY_CORNERS = _polarity_samples()


def _grid_view(im: _Image, h: np.ndarray, pitch: float, sign: float) -> tuple[np.ndarray, int, int]:
    """The grid check's canonical view (float32, times ``sign``: the lines stand out upwards): the grid
    and one square beyond it on every side, ``s`` pixels a square (the pitch clamped to
    ``VERIFY_MIN_PX``..``VERIFY_MAX_PX``), and a line profile's reach more; canonical x at column
    ``reach + s * (x + 1)``. Returns (view, s, reach)."""
    s = int(min(VERIFY_MAX_PX, max(VERIFY_MIN_PX, round(pitch))))
    reach = max(3, round(VERIFY_REACH * s))
    off = s + reach  # canonical -1 minus a profile's reach
    to_canvas = np.array([[s, 0.0, off], [0.0, s, off], [0.0, 0.0, 1.0]])
    size = (GRID_SQUARES + 2) * s + 2 * reach + 1
    view = cv2.warpPerspective(
        im.gray, to_canvas @ h, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return view.astype(np.float32) * sign, s, reach


def _verify_grid(
    im: _Image, h: np.ndarray, pitch: float, params: DetectorParams, *, may_shift: bool
) -> tuple[np.ndarray, Polarity, float, float]:
    """Check a found grid on its own lines, in a canonical view reaching one square beyond it: which way
    its contrast goes (a lattice can be found in the mask of the other polarity, the squares' insides
    standing in for cells), whether the 3x3 window sits on the four strongest lines of each direction
    (with pieces covering cells, the lattice may be one square off, a column of table taken for cells),
    and how wide the lines are (measured on the lines; the cells' size misleads when pieces dent them).
    The window moves only when ``may_shift`` (nine cells place it for certain).
    Returns the corrected homography, the polarity, the half line width in pitches, and how clearly the
    window is a grid (1: four equal lines each way with nothing beyond; 0 or less: not a grid)."""
    polarity = _polarity_at(im, h, pitch, params)
    sign = 1.0 if polarity == "light-lines" else -1.0
    view, s, reach = _grid_view(im, h, pitch, sign)
    span = GRID_SQUARES + 2  # one square beyond the grid on every side
    offsets = np.arange(-reach, reach + 1)
    along = slice(reach + round(1.1 * s), reach + round(3.9 * s))  # the grid's extent, crossings included
    strength = np.zeros((2, span + 1))
    profiles = np.zeros((2, span + 1, offsets.size))
    # Every line's cross-line offsets, one direction's lines side by side: one median per direction
    # (column by column, as each line's own would be).
    pos = (reach + s * np.arange(span + 1)[:, None] + offsets[None, :]).ravel()
    # (np.take gathers the lines' offsets across the grid's extent: the same values as indexing with
    # np.ix_, at a fraction of its cost.)
    across = (np.take(view[along], pos, axis=1), np.take(view[:, along], pos, axis=0).T)
    for d, prof in enumerate(across):
        med = median_along(prof, 0).reshape(span + 1, offsets.size)  # robust to pieces beside the line
        profiles[d] = med
        peak = med[:, reach - 1 : reach + 2].max(axis=1)
        strength[d] = peak - np.maximum(med[:, 0], med[:, -1])
    # A row of pieces of the line's own tone along one side takes the far side's contrast, not the
    # ridge the line makes between them and the plate: the line's strength against its near sides
    # too (just beyond its own half width, as all the window's lines show it).
    typical_prof = median_along(profiles[:, 1 : GRID_SQUARES + 2].reshape(-1, offsets.size), 0)
    near = min(reach, math.ceil(_half_width_px(typical_prof, reach)) + NEAR_GAP_PX)
    peaks = profiles[..., reach - 1 : reach + 2].max(axis=2)
    near_strength = peaks - np.maximum(profiles[..., reach - near], profiles[..., reach + near])
    strength = np.maximum(strength, near_strength)
    # A line with large pieces of its own tone along it (a full board's outer line, black pieces on one
    # side) shows its ridge only in the gaps between them, which the median along it outvotes.
    strength = np.maximum(strength, _gap_strength(across, span, offsets.size, reach, near, s))
    shifts = [0, 0]
    for d in range(2 if may_shift else 0):
        # The window one square back or on: when a line at one end of it is missing (no line there at
        # all) while one stands just beyond the other end, and the window moved there looks more like a
        # grid (a line beside a row of pieces of its own tone may show only half its strength).
        window = strength[d, 1 : GRID_SQUARES + 2]
        typical = max(median(window), 1e-3)
        first, last = float(window[0]), float(window[-1])
        before, after = float(strength[d, 0]), float(strength[d, GRID_SQUARES + 2])
        if last < SHIFT_MISSING * typical and before > SHIFT_PRESENT * typical:
            shifts[d] = -1
        elif first < SHIFT_MISSING * typical and after > SHIFT_PRESENT * typical:
            shifts[d] = 1
        elif min(first, last) < SHIFT_MISSING * typical:
            here = _window_clarity(strength[d], 0)
            better = max((-1, 1), key=lambda shift: _window_clarity(strength[d], shift))
            # ...and the squares it takes in are plate like the middle row's (not the table, not the
            # plate's rim): a strip of table beside a line of the plate's bevel is clear too.
            entering = GRID_SQUARES if better > 0 else -1
            plate_step = abs(_strip_plate(view, s, reach, d, entering) - _strip_plate(view, s, reach, d, 1))
            if _window_clarity(strength[d], better) > here + SHIFT_CLEARER and plate_step < (
                SHIFT_PLATE_STEP * typical
            ):
                shifts[d] = better
    if shifts != [0, 0]:
        shift = np.array([[1.0, 0.0, -shifts[0]], [0.0, 1.0, -shifts[1]], [0.0, 0.0, 1.0]])
        h = shift @ h
    chosen = [profiles[d, 1 + shifts[d] : 1 + shifts[d] + GRID_SQUARES + 1] for d in range(2)]
    half_width = _half_width_px(median_along(np.concatenate(chosen), 0), reach) / s
    half_width = float(min(MAX_HALF_WIDTH, max(MIN_HALF_WIDTH, half_width)))
    # How much the window looks like a grid, each way.
    clear = min(_window_clarity(strength[d], shifts[d]) for d in range(2))
    return h, polarity, half_width, clear


def _grid_runs_on(im: _Image, h: np.ndarray, pitch: float, polarity: Polarity) -> bool:
    """Whether the grid's lines go on beyond ``LARGER_GRID_SIDES`` of its sides in the image (see
    :func:`.geometry.goes_on_beyond`), as a cutting mat's do: any 3x3 window of it is a grid the comb
    finds as well as the board. A line goes on where it stands out by ``BEYOND_LINE_SHARE`` of the
    grid's typical line from ``BEYOND_FROM`` to ``BEYOND_TO`` pitch beyond the grid (the median of its
    cross profiles there), a cell's middle is clear where nothing in its profile does; only ways that
    lie in the image count."""
    sign = 1.0 if polarity == "light-lines" else -1.0
    view, s, reach = _grid_view(im, h, pitch, sign)
    to_image = np.linalg.inv(h)
    height, width = im.gray.shape
    slack = max(1, round(BEYOND_SLACK * s))

    def canvas(x: float) -> int:
        return reach + round(s * (x + 1.0))

    def stand_out(v: np.ndarray, rows: slice, x: float) -> tuple[float, float]:
        """Across canonical ``x``, over ``rows`` of the view ``v`` (the cross profiles' median): how far
        the ridge at ``x`` stands out of the profile's ends, and how far anything in it does."""
        c = canvas(x)
        prof = median_along(v[rows, c - reach : c + reach + 1], 0)
        ends = max(float(prof[0]), float(prof[-1]))
        return float(prof[reach - slack : reach + slack + 1].max()) - ends, float(prof.max()) - ends

    # The grid's own lines between their crossings (the columns' lines; pieces beside them can only
    # lower the median).
    typical = median(
        np.array(
            [
                stand_out(view, slice(canvas(y + 0.2), canvas(y + 0.8)), x)[0]
                for x in range(4)
                for y in range(3)
            ]
        )
    )
    if typical <= 0.0:
        return False
    least = BEYOND_LINE_SHARE * typical
    sides_on = 0
    for band in ((-BEYOND_TO, -BEYOND_FROM), (GRID_SQUARES + BEYOND_FROM, GRID_SQUARES + BEYOND_TO)):
        rows = slice(canvas(band[0]), canvas(band[1]))
        for v, flip in ((view, False), (view.T, True)):  # beyond the top or bottom row; beyond a side
            lines = middles = on = clear = 0
            for k in range(2 * GRID_SQUARES + 1):  # the lines at whole places, the cells' middles between
                x = k / 2.0
                ends = np.array([[x, band[0]], [x, band[1]]])
                ends = _apply_h(to_image, ends[:, ::-1] if flip else ends)
                if (ends < 0).any() or (ends[:, 0] >= width).any() or (ends[:, 1] >= height).any():
                    continue
                ridge, anything = stand_out(v, rows, x)
                if k % 2 == 0:
                    lines, on = lines + 1, on + (ridge >= least)
                else:
                    middles, clear = middles + 1, clear + (anything < least)
            sides_on += goes_on_beyond(lines, on, middles, clear)
    return sides_on >= LARGER_GRID_SIDES


def _gap_strength(
    across: tuple[np.ndarray, np.ndarray], span: int, n_off: int, reach: int, near: int, s: int
) -> np.ndarray:
    """Each line's ridge where it shows (2, ``span`` + 1): per position along it (``across``: each
    direction's cross-line profiles, positions by lines side by side, ``n_off`` offsets each, the line at
    ``reach``), its peak against its sides ``near`` pixels away, averaged over blocks of ``GAP_BLOCK``
    pitch (``s`` pixels a pitch), the ``GAP_QUANTILE`` percentile of the blocks: the gaps between pieces
    of the line's own tone. A line that is not there shows no ridge in any block."""
    block = max(2, round(GAP_BLOCK * s))
    out = np.zeros((2, span + 1))
    for d, prof in enumerate(across):
        lines = prof.reshape(prof.shape[0], span + 1, n_off)
        peak = lines[:, :, reach - 1 : reach + 2].max(axis=2)
        ridge = peak - np.maximum(lines[:, :, reach - near], lines[:, :, reach + near])
        n = ridge.shape[0] // block
        blocks = ridge[: n * block].reshape(n, block, span + 1).mean(axis=1)
        out[d] = percentile_along(blocks, GAP_QUANTILE)
    return out


def _half_width_px(prof: np.ndarray, reach: int) -> float:
    """Half the width, in pixels, of the line whose cross profile ``prof`` (the line standing out
    upwards) is centred at index ``reach``: from the steepest rise into it to the steepest fall out."""
    grad = np.diff(prof)  # grad[i] between offsets i and i + 1
    left = int(np.argmax(grad[:reach]))
    right = reach + int(np.argmin(grad[reach:]))
    return (right - left) / 2.0


def _strip_plate(view: np.ndarray, s: int, reach: int, d: int, index: int) -> float:
    """The plate's level in the strip of three squares at ``index`` (-1..3) across direction ``d`` (0:
    a column, 1: a row) of the grid check's view (``s`` px a square, the grid's canonical -1 at
    ``reach``): the median of the squares' corners, where no piece lies."""
    lo = reach + (index + 1) * s
    inset, size = round(CORNER_INSET * s), max(1, round(CORNER_SIZE * s))
    patches = []
    for j in range(GRID_SQUARES):
        across = reach + (j + 1) * s
        for a in (inset, s - inset - size):
            for b in (inset, s - inset - size):
                rows, cols = slice(across + b, across + b + size), slice(lo + a, lo + a + size)
                patches.append(view[rows, cols] if d == 0 else view[cols, rows])
    return median(np.concatenate([p.ravel() for p in patches]))


def _window_clarity(strength: np.ndarray, shift: int) -> float:
    """How much the grid's window moved by ``shift`` squares looks like a grid in one direction, from
    the strengths of the lines from one square before the grid to one beyond it (``strength``, 6): its
    weakest line against its typical one, and the lines just beyond it, which must be weaker (1: four
    equal lines with nothing beyond; 0 or less: not a grid)."""
    window = strength[1 + shift : 2 + shift + GRID_SQUARES]
    outside = [k for k in (shift, shift + GRID_SQUARES + 2) if 0 <= k < strength.size]
    beyond = max(float(strength[k]) for k in outside)
    typical = max(median(window), 1e-3)
    return min(1.0, float(window.min()) / typical, 1.0 - max(beyond, 0.0) / typical)
