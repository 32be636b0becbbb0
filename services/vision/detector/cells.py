"""Steps 1 and 2 of the package's overview: the cells (regions enclosed by the line masks of either
polarity that look like square cells), the best 3x3 window of them on a common lattice, and the
homography fitted to their centres (step 3's first pose)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from messages import BoardPose

from .geometry import (
    GRID_SQUARES,
    LARGER_GRID_SIDES,
    _angle_diff90,
    _apply_h,
    _odd,
    _wrap90,
    goes_on_beyond,
    homography_of,
    in_view,
)
from .model import DetectorParams, Polarity
from .stats import median

#: a lattice of all nine cells whose mean residual is below 0.1 pitch is taken at once.
FULL_GRID_SCORE: Final = 8.9
#: a lattice of at least this many cells, each within ``SURE_RESIDUAL`` pitch of its place on average,
#: ends the search of the masks: the other polarity's mask is not looked at (the lines' check tells the
#: polarity anyway). On the 3,600 tuning frames the other mask's lattice had won in 26, placing the grid
#: within 0.015 pitch of this one's and reading the same; at 3 or 4 cells, one frame more is flagged.
SURE_CELLS: Final = 5
SURE_RESIDUAL: Final = 0.1
#: cells needed for a projective fit; fewer get an affine one (7 or 8 points make an unstable
#: homography), which the line refinement then corrects for perspective.
FULL_HOMOGRAPHY_CELLS: Final = 9
#: the line masks are dilated by this many working pixels to close hairline gaps in thin lines.
DILATION_PX: Final = 1
#: ``_locate(thin=True)``: lines are also what a morphological closing (opening, for light lines) with a
#: square this many working pixels wide fills, black-hat / top-hat, beside what stands off the local
#: mean: the mean beside a plate's edge takes in the table, and a thin line there falls under it.
THIN_LINE_PX: Final = 5
#: a window with cells of its lattice on this many places beyond it is a patch of a larger grid (a
#: cutting mat, a tiled table), not the board; at most this many such lattices are set aside before the
#: search gives up. (On 1,800 frames of the tuning sets a board's lattice had at most 3 such places, in
#: all but 14 none; a cutting mat's lattices, on our renderer, 8 to 17.)
PATCH_CELLS_BEYOND: Final = 4
PATCHES_SET_ASIDE: Final = 2
#: where a window's lines are looked for beyond it (:func:`_lines_run_on`): from this far beyond its
#: outer lines to this far, in pitches (clear of a line's width, within a board's margin), at this many
#: points along, each looked for this far either side of the line's place (perspective, a bent mat).
RUN_ON_FROM: Final = 0.2
RUN_ON_TO: Final = 0.8
RUN_ON_POINTS: Final = 7
RUN_ON_SLACK: Final = 0.06
#: a line goes on where the mask holds at this share of its points; the cells' middles beside it are
#: clear where it holds at no more than this share of theirs (a fine grid fills both).
RUN_ON_LINE_SHARE: Final = 0.8
RUN_ON_CLEAR_SHARE: Final = 0.4


# ----------------------------------------------------------------------------------------------------
# stage 1: cell candidates


@dataclass
class _Cells:
    """Candidate cells of one mask, as parallel arrays."""

    center: np.ndarray  # (N, 2)
    side: np.ndarray  # (N,)
    angle: np.ndarray  # (N,) degrees in (-45, 45]
    solid: np.ndarray  # (N,) region area / hull area


def _cell_candidates(mask_lines: np.ndarray, params: DetectorParams, short: int | None = None) -> _Cells:
    """Regions enclosed by ``mask_lines`` that look like square cells (sized against ``short``, the
    short side of the image the mask is cut from, by default the mask's own)."""
    h, w = mask_lines.shape
    short = min(h, w) if short is None else short
    min_area = (params.min_cell_frac * short) ** 2
    max_area = (params.max_cell_frac * short) ** 2
    free = cv2.bitwise_not(mask_lines)
    contours, hierarchy = cv2.findContours(free, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    centers: list[tuple[float, float]] = []
    sides: list[float] = []
    angles: list[float] = []
    solids: list[float] = []
    if hierarchy is None:
        return _Cells(np.zeros((0, 2)), np.zeros(0), np.zeros(0), np.zeros(0))
    for i in _boxed_outer(contours, hierarchy[0], min_area, 2.2 * max_area, w, h):
        cnt = contours[i]
        hull = cv2.convexHull(cnt)
        hull_area = cv2.contourArea(hull)
        if hull_area < min_area or hull_area > max_area:
            continue
        rect = cv2.minAreaRect(hull)
        (cx, cy), (rw, rh), _ = rect
        if rw <= 0 or rh <= 0:
            continue
        if max(rw, rh) / min(rw, rh) > params.max_aspect:
            continue
        if hull_area / (rw * rh) < params.min_rect_fill:
            continue
        area = cv2.contourArea(cnt)
        solid = area / hull_area
        if solid < params.min_hull_fill:
            continue
        box = cv2.boxPoints(rect).astype(np.float64)
        ex, ey = box[1] - box[0]
        angle = _wrap90(math.degrees(math.atan2(-ey, ex)))
        m = cv2.moments(hull)
        if m["m00"] > 0:
            cx, cy = m["m10"] / m["m00"], m["m01"] / m["m00"]
        centers.append((cx, cy))
        sides.append(math.sqrt(hull_area))
        angles.append(angle)
        solids.append(solid)
    if not centers:
        return _Cells(np.zeros((0, 2)), np.zeros(0), np.zeros(0), np.zeros(0))
    return _Cells(np.array(centers), np.array(sides), np.array(angles), np.array(solids))


def _boxed_outer(
    contours: tuple[np.ndarray, ...], hier: np.ndarray, min_box: float, max_box: float, w: int, h: int
) -> list[int]:
    """Indices of the contours that may be cells, in order: outer contours (not holes: pieces inside
    cells; picked all at once) of at least four points (not specks) whose bounding box covers
    ``min_box`` to ``max_box`` pixels and does not touch the frame (not a closed cell)."""
    out = []
    for i in np.flatnonzero(hier[:, 3] == -1).tolist():
        cnt = contours[i]
        if len(cnt) < 4:
            continue
        x, y, bw, bh = cv2.boundingRect(cnt)
        if bw * bh < min_box or bw * bh > max_box:
            continue
        if x <= 0 or y <= 0 or x + bw >= w or y + bh >= h:
            continue
        out.append(i)
    return out


# ----------------------------------------------------------------------------------------------------
# stage 2: lattice


@dataclass
class _Lattice:
    """The best 3x3 arrangement of cells: image centres and their (column, row) in the board frame."""

    centers: np.ndarray  # (K, 2)
    colrow: np.ndarray  # (K, 2) ints 0..2
    pitch: float
    angle: float
    score: float
    side: float
    #: the image reduction the lattice was found at (working pixels per image pixel).
    scale: float = 1.0
    #: the places beyond its window that hold cells of its lattice (a board's window has none, as a
    #: rule; fewer than ``PATCH_CELLS_BEYOND``, or it is set aside as a patch).
    beyond: int = 0


#: a lattice position near an anchor cell (column and row steps from it) -> (residual, cell index, cells
#: there) of the cell nearest to it (the first of equals), in the order the positions first appear.
_Nearest = dict[tuple[int, int], tuple[float, int, int]]


#: the 3x3 windows of lattice positions that hold the anchor (0, 0), by their first column and row, in the
#: order they are tried (the first of equally good ones wins).
_WINDOWS: Final = [(c0, r0) for c0 in range(-2, 1) for r0 in range(-2, 1)]
#: for each position within two steps of the anchor, the windows holding it and its square in each
#: (column plus three times row, within the window).
_WINDOWS_HOLDING: Final = {
    (col, row): [
        (w, col - c0 + 3 * (row - r0))
        for w, (c0, r0) in enumerate(_WINDOWS)
        if c0 <= col <= c0 + 2 and r0 <= row <= r0 + 2
    ]
    for col in range(-2, 3)
    for row in range(-2, 3)
}


def _nearest_at(cols: list[int], rows: list[int], res: list[float], members: list[int]) -> _Nearest:
    """For every lattice position within two steps of the anchor (every 3x3 window holding the anchor
    lies there), the cell nearest to it, as :func:`_find_lattice` chooses one per square of a window: a
    window's choice at a position depends on that position's cells only."""
    out: _Nearest = {}
    for key in zip(cols, rows, res, members, strict=True):
        col, row, r, m = key
        if not (-2 <= col <= 2 and -2 <= row <= 2):
            continue
        had = out.get((col, row))
        if had is None:
            out[(col, row)] = (r, m, 1)
        else:
            out[(col, row)] = (r, m, had[2] + 1) if r < had[0] else (had[0], had[1], had[2] + 1)
    return out


def _squares_of(window: int, nearest: _Nearest) -> list[tuple[int, int]]:
    """The squares of window ``window`` (an index into ``_WINDOWS``) that hold a cell: each square's key
    (column plus three times row, within the window) and the cell chosen there."""
    c0, r0 = _WINDOWS[window]
    return [
        (col - c0 + 3 * (row - r0), at[1])
        for (col, row), at in nearest.items()
        if c0 <= col <= c0 + 2 and r0 <= row <= r0 + 2
    ]


def _find_lattice(
    cells: _Cells,
    params: DetectorParams,
    lines: np.ndarray | None = None,
    view: tuple[float, float, float, float] | None = None,
) -> _Lattice | None:
    """The best 3x3 window of cells on a common lattice (see the module's step 2) that is not a patch of a
    larger grid, or None.

    A cutting mat under the board, a tiled or checked table, is a grid of square cells in every
    direction: any 3x3 window of it looks like a board, often a better one than the board itself (whose
    pieces dent its cells). A board's lattice ends at its outer lines, so a window with cells of its
    lattice on ``PATCH_CELLS_BEYOND`` or more places beyond it is a patch of something larger: that
    lattice's cells are set aside and the best window of the others is looked for. So is a window whose
    lines go on beyond two of its sides, in ``lines`` (the mask the cells came from) when given:
    a patch whose neighbours are not cells (at the image's edge, under supply pieces, broken by the
    mat's finer lines) is still one. So is a window that reaches out of ``view`` (the image's extent in
    the cells' pixels, when given; see :func:`.geometry.in_view`): the camera sees the whole board. Last,
    the cells set aside that lie off every patch's lattice are searched (with ``lines`` only: a window of
    them must show it is no patch)."""
    left = np.ones(len(cells.side), bool)
    set_aside = np.zeros(len(cells.side), bool)
    on_patches = np.zeros(len(cells.side), bool)
    for _ in range(PATCHES_SET_ASIDE + 1):
        lat = _best_window(_subset(cells, left), params)
        if lat is None:
            break
        alike, on, beyond = _on_lattice(cells, lat, params)
        if (
            beyond < PATCH_CELLS_BEYOND
            and (lines is None or not _lines_run_on(lines, lat))
            and (view is None or _window_in_view(lat, view))
        ):
            lat.beyond = beyond
            return lat
        # (All of the larger grid's cells, also those that perspective or a bent mat puts off the
        # lattice's places: its other windows would be its patches too.)
        left &= ~alike
        set_aside |= alike
        on_patches |= on
    off_patches = set_aside & ~on_patches
    if lines is None or not off_patches.any():
        return None
    # A board laid square on a mat of its own cell size: its cells are like the mat's, set aside with
    # them, though not on the mat's lattice. Last, the best window of the cells set aside that lie off
    # every patch's lattice, if it is no patch itself.
    lat = _best_window(_subset(cells, off_patches), params)
    if lat is None:
        return None
    _alike, _on, beyond = _on_lattice(cells, lat, params)
    if beyond >= PATCH_CELLS_BEYOND or _lines_run_on(lines, lat):
        return None
    lat.beyond = beyond
    return lat if view is None or _window_in_view(lat, view) else None


def _subset(cells: _Cells, keep: np.ndarray) -> _Cells:
    """The cells where ``keep`` holds (all of them, the same object, when it holds everywhere)."""
    if keep.all():
        return cells
    return _Cells(cells.center[keep], cells.side[keep], cells.angle[keep], cells.solid[keep])


def _lattice_frame(lat: _Lattice) -> tuple[np.ndarray, np.ndarray]:
    """The axes of ``lat``'s lattice (rows: a column's and a row's step, in pixels) and its window's
    place (0, 0): its cells' centres less their places along the axes. A place (column, row) lies at
    ``origin + place @ axes``."""
    rad = math.radians(lat.angle)
    axes = np.array([[math.cos(rad), -math.sin(rad)], [math.sin(rad), math.cos(rad)]]) * lat.pitch
    return axes, np.mean(lat.centers - lat.colrow @ axes, axis=0)


#: the outer corners of a window, as places of its lattice (its cells at 0..2, its outer lines half a
#: place beyond them).
_WINDOW_CORNERS: Final = np.array([[-0.5, -0.5], [2.5, -0.5], [2.5, 2.5], [-0.5, 2.5]])


def _window_in_view(lat: _Lattice, view: tuple[float, float, float, float]) -> bool:
    """Whether ``lat``'s window lies within ``view`` (see :func:`.geometry.in_view`)."""
    axes, origin = _lattice_frame(lat)
    return in_view(origin + _WINDOW_CORNERS @ axes, lat.pitch, view)


def _on_lattice(cells: _Cells, lat: _Lattice, params: DetectorParams) -> tuple[np.ndarray, np.ndarray, int]:
    """Which ``cells`` are of the lattice of ``lat``'s window (its cells' size and angle), which of them
    lie on its places (within the lattice tolerance), and on how many of its places beyond the window."""
    axes, origin = _lattice_frame(lat)
    uv = (cells.center - origin) @ np.linalg.inv(axes)
    places = np.round(uv)
    alike = (np.abs(cells.side / lat.side - 1.0) < params.size_tolerance) & (
        _angle_diff90(cells.angle, lat.angle) < params.angle_tolerance_deg
    )
    on = alike & (np.abs(uv - places) < params.lattice_tolerance).all(axis=1)
    beyond = on & ~((places >= 0) & (places < GRID_SQUARES)).all(axis=1)
    return alike, on, len({(int(c), int(r)) for c, r in places[beyond].tolist()})


def _run_on_places() -> np.ndarray:
    """The lattice places :func:`_lines_run_on` looks at (4 sides, 7 places along a side, ``RUN_ON_POINTS``
    outward, 3 across: (column, row)): along each side, the lines at the halves and the cells' middles
    between them, from ``RUN_ON_FROM`` to ``RUN_ON_TO`` pitch beyond the window's outer line, each
    ``RUN_ON_SLACK`` either side too."""
    outward = np.linspace(RUN_ON_FROM, RUN_ON_TO, RUN_ON_POINTS)
    slack = np.array([-RUN_ON_SLACK, 0.0, RUN_ON_SLACK])
    along = np.arange(-0.5, 2.75, 0.5)
    places = np.zeros((4, along.size, RUN_ON_POINTS, slack.size, 2))
    # Each side: the lattice coordinate across its edge (0: columns, 1: rows), the outer line's place
    # along it and the way out.
    for side, (axis, edge, out) in enumerate(
        ((1, -0.5, -1.0), (1, 2.5, 1.0), (0, -0.5, -1.0), (0, 2.5, 1.0))
    ):
        places[side, ..., axis] = (edge + out * outward)[None, :, None]
        places[side, ..., 1 - axis] = along[:, None, None] + slack[None, None, :]
    return places


_RUN_ON_PLACES: Final = _run_on_places()


def _lines_run_on(lines: np.ndarray, lat: _Lattice) -> bool:
    """Whether the lines of ``lat``'s window go on beyond ``LARGER_GRID_SIDES`` of its sides in the line
    mask ``lines`` (see :func:`.geometry.goes_on_beyond`): a line goes on where the mask holds along
    ``RUN_ON_LINE_SHARE`` of its way from ``RUN_ON_FROM`` to ``RUN_ON_TO`` pitch beyond the window, a
    cell's middle is clear where it holds along no more than ``RUN_ON_CLEAR_SHARE``; only ways that lie
    in the image count."""
    axes, origin = _lattice_frame(lat)
    h, w = lines.shape
    shape = _RUN_ON_PLACES.shape[:-1]
    xy = np.rint(origin + _RUN_ON_PLACES.reshape(-1, 2) @ axes).astype(np.intp)
    inside = ((xy >= 0) & (xy < (w, h))).all(axis=1)
    hit = np.zeros(len(xy), bool)
    hit[inside] = lines[xy[inside, 1], xy[inside, 0]] > 0
    # Per side and place along it: whether the way lies in the image, and its share of points hit (a
    # point is hit where the mask holds at it or beside it).
    whole = inside.reshape(shape).all(axis=(2, 3))
    share = hit.reshape(shape).any(axis=3).mean(axis=2)
    lines_seen = whole[:, 0::2].sum(axis=1).tolist()
    on = (whole[:, 0::2] & (share[:, 0::2] >= RUN_ON_LINE_SHARE)).sum(axis=1).tolist()
    middles_seen = whole[:, 1::2].sum(axis=1).tolist()
    clear = (whole[:, 1::2] & (share[:, 1::2] <= RUN_ON_CLEAR_SHARE)).sum(axis=1).tolist()
    return sum(map(goes_on_beyond, lines_seen, on, middles_seen, clear)) >= LARGER_GRID_SIDES


def _best_window(cells: _Cells, params: DetectorParams) -> _Lattice | None:
    """The best 3x3 window of ``cells`` on a common lattice, or None (see :func:`_find_lattice`)."""
    n = len(cells.side)
    if n < 2:
        return None
    #: the best window so far: (score, its squares' keys sorted, their cells, pitch, anchor's angle).
    best: tuple[float, list[int], list[int], float, float] | None = None
    tol = params.lattice_tolerance
    # alike[i, j]: cell j has anchor i's size and angle (for all anchors at once: the same elementwise
    # steps as one anchor's row, with fewer calls).
    alike = (np.abs(cells.side[None, :] / cells.side[:, None] - 1.0) < params.size_tolerance) & (
        _angle_diff90(cells.angle[None, :], cells.angle[:, None]) < params.angle_tolerance_deg
    )
    for i in range(n):
        if best is not None and len(best[1]) == GRID_SQUARES**2 and best[0] > FULL_GRID_SCORE:
            break  # a full, tight grid: no other anchor can beat it by more than noise
        si = cells.side[i]
        ai = cells.angle[i]
        idx = alike[i].nonzero()[0]  # (np.flatnonzero of the row, without its wrappers)
        if len(idx) < max(2, params.min_cells - 1):
            continue
        rad = math.radians(ai)
        ex = np.array([math.cos(rad), -math.sin(rad)])
        ey = np.array([math.sin(rad), math.cos(rad)])
        d = cells.center[idx] - cells.center[i]
        bx = d @ ex
        by = d @ ey
        # The pitch: the nearest neighbour along an axis, one cell side plus one line width away.
        dist = np.hypot(bx, by)
        along = np.minimum(np.abs(bx), np.abs(by)) < 0.25 * dist
        near = along & (dist > 0.95 * si) & (dist < 1.9 * si)
        if not near.any():
            continue
        pitch = float(dist[near].min())
        u = bx / pitch
        v = by / pitch
        mu = np.round(u)
        mv = np.round(v)
        on = (np.abs(u - mu) < tol) & (np.abs(v - mv) < tol)
        if on.sum() < 2:
            continue
        nearest = _nearest_at(
            mu[on].astype(int).tolist(),
            mv[on].astype(int).tolist(),
            np.hypot(u - mu, v - mv)[on].tolist(),
            idx[on].tolist(),
        )
        # The best 3x3 window containing the anchor (0, 0): each window's squares taken, cells counted
        # and residuals summed in the order the squares' cells first appear (the same float sum every
        # time); only a window that beats the best so far has its squares listed.
        squares, cells_in, residuals = [0] * len(_WINDOWS), [0] * len(_WINDOWS), [0.0] * len(_WINDOWS)
        for position, (res, _cell, there) in nearest.items():
            for window, _key in _WINDOWS_HOLDING[position]:
                squares[window] += 1
                cells_in[window] += there
                residuals[window] += res
        for window, count in enumerate(squares):
            if cells_in[window] < 2:
                continue  # fewer than two cells in the window
            score = count - residuals[window] / count
            if best is None or score > best[0]:
                inside = sorted(_squares_of(window, nearest))
                best = (score, [k for k, _ in inside], [m for _, m in inside], pitch, float(ai))
    if best is None:
        return None
    score, keys, members, pitch, angle = best
    ks, mem = np.array(keys), np.array(members)
    return _Lattice(
        centers=cells.center[mem],
        colrow=np.stack([ks % 3, ks // 3], axis=1),
        pitch=pitch,
        angle=angle,
        score=score,
        side=median(cells.side[mem]),
    )


def _fit_homography(lat: _Lattice) -> np.ndarray | None:
    """Image -> canonical homography from the lattice's cell centres."""
    src = lat.centers.astype(np.float64)
    dst = lat.colrow.astype(np.float64) + 0.5
    cols = set(lat.colrow[:, 0].tolist())
    rows = set(lat.colrow[:, 1].tolist())
    if len(src) >= FULL_HOMOGRAPHY_CELLS and len(cols) == 3 and len(rows) == 3:
        h, _ = cv2.findHomography(src, dst, 0)
        if h is not None and abs(np.linalg.det(h)) > 1e-12:
            return h
    if len(cols) < 2 or len(rows) < 2:
        # Collinear cells: extend with the lattice's own axes (known angle and pitch).
        rad = math.radians(lat.angle)
        ex = np.array([math.cos(rad), -math.sin(rad)]) * lat.pitch
        ey = np.array([math.sin(rad), math.cos(rad)]) * lat.pitch
        origin = src[0] - (dst[0][0] - 0.0) * ex - (dst[0][1] - 0.0) * ey
        inv = np.array([[ex[0], ey[0], origin[0]], [ex[1], ey[1], origin[1]], [0.0, 0.0, 1.0]])
        return np.linalg.inv(inv)
    # Least-squares affine map (few cells: a homography would be underdetermined or fragile).
    design = np.hstack([src, np.ones((len(src), 1))])
    sol, *_ = np.linalg.lstsq(design, dst, rcond=None)
    return np.vstack([sol.T, [0.0, 0.0, 1.0]])


# ----------------------------------------------------------------------------------------------------
# stages 1 and 2 on one image, both polarities


def _locate(
    img: np.ndarray,
    scale: float,
    sigma: float,
    spread: float,
    params: DetectorParams,
    prior: BoardPose | None,
    within: tuple[int, int, int, int] | None = None,
    dilation: int = DILATION_PX,
    thin: bool = False,
) -> tuple[_Lattice, Polarity] | None:
    """The best lattice of cells in ``img`` (an image reduced by ``scale``), in full-image pixels; only
    ``within`` it when given (x0, y0, x1, y1 in ``img``'s pixels, a window's half beyond the cells
    sought: the same cells there as in the whole image, at a fraction of the cost). The line masks are
    dilated by ``dilation`` pixels. ``thin``: a line is also a thin structure of its tone, however dark
    or light its surroundings (``THIN_LINE_PX``): thin lines running up to a plate's edge, where the
    local mean takes in the table beyond it and a line near the edge falls under it, leaving the outer
    cells open."""
    short = min(img.shape)
    win = _odd(params.window_frac * short)
    origin = np.zeros(2)
    rows, cols = img.shape
    view = (0.0, 0.0, cols - 1.0, rows - 1.0)  # the whole image, in the pixels the cells are found in
    if within is not None:
        x0, y0, x1, y1 = within
        img, origin = img[y0:y1, x0:x1], np.array([x0, y0], dtype=np.float64)
        view = (-x0, -y0, cols - 1.0 - x0, rows - 1.0 - y0)
    mean = cv2.blur(img, (win, win))
    c = max(params.line_noise_k * sigma, params.line_min_frac * spread)
    kernel = np.ones((2 * dilation + 1, 2 * dilation + 1), np.uint8)
    best: tuple[_Lattice, Polarity] | None = None
    best_score = -math.inf
    dark, light = cv2.subtract(mean, img), cv2.subtract(img, mean)
    if thin:
        size = THIN_LINE_PX if scale != 1.0 else 2 * THIN_LINE_PX - 1
        square = cv2.getStructuringElement(cv2.MORPH_RECT, (size, size))
        dark = cv2.max(dark, cv2.morphologyEx(img, cv2.MORPH_BLACKHAT, square))
        light = cv2.max(light, cv2.morphologyEx(img, cv2.MORPH_TOPHAT, square))
    for polarity, diff in (("dark-lines", dark), ("light-lines", light)):
        _, lines = cv2.threshold(diff, c, 255, cv2.THRESH_BINARY)
        lines = cv2.dilate(lines, kernel)
        lat = _find_lattice(_cell_candidates(lines, params, short), params, lines, view)
        if lat is None or len(lat.centers) < params.min_cells:
            continue
        lat.centers = (lat.centers + origin) / scale
        lat.pitch /= scale
        lat.side /= scale
        lat.scale = scale
        score = lat.score
        if prior is not None:
            # Near the last good pose is likelier than a look-alike elsewhere.
            centre = lat.centers.mean(axis=0)
            p_centre = _apply_h(np.linalg.inv(homography_of(prior)), np.array([[1.5, 1.5]]))[0]
            if np.hypot(*(centre - p_centre)) > 1.5 * lat.pitch:
                score -= 0.5
        if score > best_score:
            best, best_score = (lat, polarity), score  # type: ignore[assignment]
        if len(lat.centers) >= SURE_CELLS and score > len(lat.centers) - SURE_RESIDUAL:
            break  # the grid's cells, placed well enough for the lines to refine: no need of the other mask
    return best
