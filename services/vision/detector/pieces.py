"""What a piece in a square looks like, which steps 4 and 5 of the package's overview judge a square's
contents by: one square's geometry in the canonical view (:func:`_square_masks`: its inside, corners,
rings), the evidence of a round body or outline around the centroid of what differs from the plate
(:func:`_piece_evidence`), the second look at a faint piece (:func:`_faint_pieces`), and the shape and
colour that tell a piece from what is not one (:func:`_shape_problem`, :func:`_reaches_corners`,
:func:`_coloured`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NamedTuple

import cv2
import numpy as np

from .geometry import GRID_SQUARES, SQUARE_CENTRES, _read_only
from .model import FOREIGN_ELONGATION
from .stats import least_squares, median, median_along

#: a square's four corners keep at least this many pixels in all.
MIN_CORNER_PIXELS: Final = 16
#: pieces are black or white: a body more saturated than this is something else (see _coloured).
PIECE_MAX_SATURATION: Final = 0.4
SATURATION_FLOOR: Final = 125.0
OFF_PLATE_COLOUR: Final = 0.5
#: a body's middle in a clearly coloured plate's own colour and tone (the plate at least this
#: saturated, the middle at least PLATE_SHOWS_SHARE as saturated, its opponent colour within
#: PLATE_SHOWS_OFF of the plate's, relative, and its grey within PLATE_SHOWS_TONE grid contrasts of
#: the plate's): the plate showing through (wood grain, a stain), not a piece (see _plate_shows).
PLATE_SHOWS_SATURATION: Final = 0.4
PLATE_SHOWS_SHARE: Final = 0.85
PLATE_SHOWS_OFF: Final = 0.25
PLATE_SHOWS_TONE: Final = 0.3
#: ...the plate's and the middle's saturation taken over their brightest channel or this, whichever is
#: more: a dim green contest board (its green near 90) is clearly coloured, where a piece's colour
#: needs the brighter floor (SATURATION_FLOOR; at 75 for both, black foam under a coloured lamp read
#: coloured: 23 squares of the contest looks). (On the tuning sets: +1 right, a phantom white piece on
#: a dim green board gone; simcam's random looks 97.3 -> 98.0 % of frames.)
PLATE_SHOWS_FLOOR: Final = 75.0
#: a faint body's face varies by at most this share of its level up to its edge (see _faint_piece).
FAINT_PLATEAU: Final = 0.4
#: a faint piece of the plate's own tone: its outline is this many thresholds off its face, which
#: stays within OUTLINE_FACE_K thresholds of level (see _outline).
OUTLINE_K: Final = 2.0
OUTLINE_FACE_K: Final = 1.0
#: ...and the plate is back within this many rings beyond the outline's inner edge plus two.
OUTLINE_MAX_RINGS: Final = 4
#: the first finer look only at squares whose very middle is off the plate by this share of what a
#: faint body needs.
FAINT_PREFILTER: Final = 0.5
#: ...and at squares where at least this share of the piece zone differs at the finer threshold.
FAINT_MIN_SHARE: Final = 0.05
#: a piece seen only at the plate's texture (see _faint_piece): its middle differs by this many of the
#: finer thresholds, and its reading is never certain (squares.FAINT_MAX_CONFIDENCE).
FAINT_BODY_K: Final = 1.5
#: ...and its edge: the mean level falls by this share of the body's over two rings (0.08 pitch), and by
#: this many of the finer thresholds. (Without the second, a square a few grey levels lighter in its
#: middle than in its corners read as a white piece: 5 phantoms on the eight tuning runs; 1.5 removes
#: them and loses one real piece; 2 loses three.)
FAINT_EDGE_SHARE: Final = 0.7
FAINT_EDGE_K: Final = 1.5
#: ...or over three rings (0.12 pitch) for a body this many of the finer thresholds off the plate: no
#: faint piece, but one the first look missed where the corners' levels swell its threshold (a large
#: piece's shadow in them), on a small board whose blur spreads a piece's edge over more of a pitch
#: (a white piece 64 grey levels off a wood plate, pitch 35 px, its edge 0.1 pitch wide). A lamp's
#: sheen is not that far off the plate. (3, 4 and 5 give the same results on the tuning sets.)
STRONG_BODY_K: Final = 4.0
#: a faint body whose differing pixels reach its square's lines ends where its level falls under this
#: share of its middle's (see _body_edge).
BODY_EDGE_SHARE: Final = 0.5
#: a faint dark body is a black piece, not the plate between the glows of light lines, when its edge is
#: round: half-way from its face to the plate within this many pitches of one radius in every one of
#: EDGE_SECTORS sectors around it, on rings EDGE_STEP wide (see _round_edge).
ROUND_EDGE_SPREAD: Final = 0.1
#: a piece of the plate's own tone, seen by its outline alone: the outline is this many thresholds off
#: the face in every sector, and a circle misses none of the sectors' outline radii by more than this
#: (pitches; see _circular_outline).
OUTLINE_CIRCLE_K: Final = 0.5
OUTLINE_CIRCLE_RESIDUAL: Final = 0.02
#: ...and a rough circle, whose centre the rim look seeks its circle around again (see _rim_piece).
ROUGH_CIRCLE_RESIDUAL: Final = 2 * OUTLINE_CIRCLE_RESIDUAL
EDGE_SECTORS: Final = 8
EDGE_STEP: Final = 0.02
#: the corners start this far (pitches) beyond the largest piece that fits between the lines.
CORNER_PIECE_MARGIN: Final = 0.03
#: the squares' corners (plate) start this far from their centres, in pitches.
PLATE_CORNER_RADIUS: Final = 0.5
#: a square's inside never shrinks below this half-width (pitches), whatever the lines.
MIN_INSIDE_HALF: Final = 0.3
#: a piece's body lies within this radius of the square's centre (pitches): radius 0.45, off-centre.
PIECE_MAX_RADIUS: Final = 0.5
#: the centroid of a piece is at most this far off the square's centre (pitches).
MAX_PIECE_OFFSET: Final = 0.1
#: rings of the piece evidence: the first is a disc of this radius, the next this wide, this many.
RING_FIRST: Final = 0.1
RING_STEP: Final = 0.04
RING_COUNT: Final = 11
RING_SECTORS: Final = 8
#: fewest pixels a ring needs to count, and fewest differing pixels that can be a piece at all.
MIN_RING_PIXELS: Final = 6
MIN_EVIDENCE_PIXELS: Final = 6
#: the middle of a piece, whose tone says its colour: this share of its edge radius, within bounds.
MIDDLE_OF_EDGE: Final = 0.6
MIDDLE_RADIUS: Final = 0.15
MIDDLE_MIN_RADIUS: Final = 0.07
#: a piece's edge is less than this far from its centre (pitches): what reaches the square's corners all
#: around is something flat and larger (its outermost ring, 0.46-0.50, exists only towards the corners).
PIECE_MAX_EDGE: Final = RING_FIRST + RING_STEP * (RING_COUNT - 1) - 1e-6
#: a piece seen by the shadow on one side of it (see _rim_pieces): an arc on this many sectors of
#: EDGE_SECTORS, on average this many of the rim look's thresholds darker than the middle, and each
#: sector at least CRESCENT_MIN_K. (A minimum of 3.0 on every sector read four more squares of the
#: tuning sets right, but the blur of dark lines on a brushed plate in simcam's dim sweep makes an arc
#: 2.9 off all along; on three sectors the circle fits too loosely: fewer right. A shadow fades at one
#: end of its arc: with every sector at 4.0, a white plate's arc of 77, 54, 60 and 30 levels at a
#: threshold of 9 was no piece.)
CRESCENT_SECTORS: Final = 4
CRESCENT_K: Final = 4.0
CRESCENT_MIN_K: Final = 2.0
#: the evidence of a piece seen by its rim alone (see _rim_piece): a circle all round is a whole piece.
RIM_EVIDENCE: Final = 1.0
#: a rim may be missing from this many of the ``EDGE_SECTORS`` (the lit side of a black piece on a plate
#: nearly as dark), when the rest of it lies clear of the lines.
RIM_SECTORS_DROPPED: Final = 2
#: ...or from up to this many sectors next to each other, where it merges with a dark line's blur (a large
#: piece off its square's centre), when each of the others stands ``RIM_BESIDE_LINES_SHARE`` of the
#: grid's contrast off the face. (On the tuning sets and apart: 12 squares more right, white pieces
#: read bare or unknown before, nothing lost; such rims stood 0.15-0.27 of the contrast off, the
#: circles bare squares show on those sectors 0.07 at most. Four sectors found one piece more, and took
#: a bare square for one.)
RIM_BESIDE_LINES_MOST: Final = 3
RIM_BESIDE_LINES_SHARE: Final = 0.1
#: a piece's edge is at least this far from its centre (pitches): a coin or a button is smaller.
PIECE_MIN_RADIUS: Final = 0.15
#: the far corners of a square, which no piece reaches: a corner is covered beyond this share, and a
#: square with this many covered corners holds something that is not a piece (its own piece's shadow
#: may reach one).
FOREIGN_CORNER_RADIUS: Final = 0.56
FOREIGN_CORNER_COVER: Final = 0.5
FOREIGN_CORNERS: Final = 3
#: a body reaching the square's lines is a piece when it is round: its reach in the most distant of
#: ``ROUND_SECTORS`` directions at most this many times that in the nearest (a disc clipped by the
#: square's inside: 1.1; a square sheet: 1.4).
ROUND_SECTORS: Final = 16
ROUND_MAX_RATIO: Final = 1.15
#: no piece reaches farther from its centre than this (the largest, 0.45 pitch, and the blur of its edge).
ROUND_MAX_REACH: Final = 0.49
#: a direction in which the body ends this close to the square's inside edge is cut off there...
ROUND_CLIP_MARGIN: Final = 0.03
#: ...and with fewer directions than this left free, only the reach is judged.
ROUND_MIN_FREE: Final = 4
#: a body's outline is where it is off the plate by half as much as its middle (see _body).
BODY_OF_MIDDLE: Final = 0.5
#: ``sqrt(x * x + y * y)`` is within a few units in the last place of ``np.hypot(x, y)``: it decides
#: which side of a bound a pixel lies on unless it lands within this share of the bound (or this much
#: of 0; for a ring's index, this much of a whole number), where hypot itself does.
HYPOT_BAND: Final = 1e-9
HYPOT_FLOOR: Final = 1e-100


@lru_cache(maxsize=64)
def _square_masks(s: int, m: int, half_width: float, margin: float) -> _SquareMasks:
    """The geometry of one square of ``s`` canonical pixels (in a view with ``m`` pixels of margin)
    whose lines are ``half_width`` wide and whose inside keeps ``margin`` from them (both in pitches;
    see :class:`_SquareMasks`). It depends on these sizes alone, so every frame at them shares it."""
    # Pixel (0, 0) of a square lies on its top-left line crossing: canonical pixel centres are integers.
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32)
    dx = xx / s - 0.5
    dy = yy / s - 0.5
    cheb = np.maximum(np.abs(dx), np.abs(dy))
    rad = np.hypot(dx, dy)
    inside_half = max(0.5 - half_width - margin, MIN_INSIDE_HALF)
    inside = cheb <= inside_half
    rad_i = rad[inside]
    # The corners of the square: outside any piece (a piece of radius 0.45 pitch, a little off-centre,
    # ends before them; with thick lines no piece that fits between them reaches so far, and the corners
    # begin just beyond the largest that does). Keep the outermost few pixels at least.
    largest_piece = 0.5 - half_width + CORNER_PIECE_MARGIN
    corner_from = min(PLATE_CORNER_RADIUS, largest_piece, float(np.sort(rad_i)[-max(4, rad_i.size // 40)]))
    corner = rad_i >= corner_from
    # Of those, the half farthest from the lines: the lines' blur reaches the corners from two sides.
    cheb_i = cheb[inside]
    if corner.sum() >= 2 * MIN_CORNER_PIXELS:
        corner &= cheb_i <= median(cheb_i[corner])
    quadrant = (dx[inside] > 0).astype(np.int64) + 2 * (dy[inside] > 0).astype(np.int64)
    dx_i, dy_i = dx[inside], dy[inside]
    # Each quadrant's corner pixels, padded to one length (``corner_valid`` says which are real).
    quads = [np.flatnonzero(corner & (quadrant == q)) for q in range(4)]
    quads = [q for q in quads if q.size]
    longest = max(q.size for q in quads)
    corner_index = np.empty((len(quads), longest), np.int64)
    for padded, q in zip(corner_index, quads, strict=True):
        padded[: q.size], padded[q.size :] = q, q[-1]
    corner_valid = np.arange(longest)[None, :] < np.array([q.size for q in quads])[:, None]
    # Where each square's corner levels are measured, as squares._plate_surface takes them: square by square
    # within each quadrant.
    offsets = np.array([[dx_i[q].mean(), dy_i[q].mean()] for q in quads], dtype=np.float32)
    corner_pos = np.concatenate([SQUARE_CENTRES + off for off in offsets])
    pixel_pos = (SQUARE_CENTRES[:, None, :] + np.stack([dx_i, dy_i], axis=1)[None, :, :]).reshape(-1, 2)
    far = corner & (rad_i >= FOREIGN_CORNER_RADIUS)
    far_zones = [zone for zone in (far & (quadrant == q) for q in range(4)) if zone.any()]
    # Where a piece's middle can lie at all (centroid clipped to MAX_PIECE_OFFSET each way), with room.
    core = np.flatnonzero(rad_i <= math.hypot(MAX_PIECE_OFFSET, MAX_PIECE_OFFSET) + MIDDLE_RADIUS + 0.01)
    row, col = np.divmod(np.arange(9), 3)
    ys, xs = np.nonzero(inside)
    size = GRID_SQUARES * s + 2 * m
    pixels = (m + row[:, None] * s + ys[None, :]) * size + (m + col[:, None] * s + xs[None, :])
    return _SquareMasks(
        *_read_only(inside, dx_i, dy_i, corner, quadrant),
        inside_half,
        *_read_only(
            pixels,
            rad_i,
            rad_i <= PIECE_MAX_RADIUS,
            rad_i <= MIDDLE_MIN_RADIUS,
            np.flatnonzero(corner),
            corner_index,
            corner_valid,
            _plate_design(corner_pos),
            _plate_design(pixel_pos),
            np.stack(far_zones, axis=1).astype(np.float64) if far_zones else np.zeros((rad_i.size, 0)),
            np.array([z.sum() for z in far_zones], dtype=np.int64),
            core,
            *_middle_pair(corner_valid.sum(axis=1)),
            *_centred_sectors(dx_i, dy_i),
        ),
    )


def _middle_pair(count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the middle two of ``count`` sorted values lie (the same index twice for an odd count, 0
    for none): their median is the mean of the two, as ``np.median`` takes it."""
    return np.maximum(count - 1, 0) // 2, count // 2


@dataclass(frozen=True)
class _SquareMasks:
    """One square's inside (everything within a margin of its lines), and over the inside's pixels:
    their offsets from the centre in pitches, which are the square's plate corners, and the quadrant
    (0..3) each pixel lies in. The rest is derived from those once, so that each frame reads all nine
    squares with a few array operations."""

    inside: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    corner: np.ndarray
    quadrant: np.ndarray
    inside_half: float
    #: (9, P) each square's inside pixels as flat indices into the canonical view (row by row).
    pixels: np.ndarray
    #: (P,) distance from the centre (pitches); where a piece's body may lie; the very middle.
    rad: np.ndarray
    body_zone: np.ndarray
    very_middle: np.ndarray
    #: indices of the corner pixels.
    corner_at: np.ndarray
    #: (Q, K) the corner pixels of each quadrant that has some, padded with repeats; which are real.
    corner_index: np.ndarray
    corner_valid: np.ndarray
    #: the plate surface's design matrices (see _plate_design) at the corners' mean positions (Q * 9,
    #: quadrant by quadrant) and at every inside pixel (9 * P, square by square).
    corner_design: np.ndarray
    pixel_design: np.ndarray
    #: (P, F) the far corners (see FOREIGN_CORNER_RADIUS), one 0/1 column each, and their sizes (F,).
    far_zones: np.ndarray
    far_sizes: np.ndarray
    #: indices of the pixels a piece's middle can reach (MIDDLE_RADIUS around a centroid off by at
    #: most MAX_PIECE_OFFSET each way).
    core: np.ndarray
    #: (Q,) where the middle two of each quadrant's real corner pixels lie once sorted (see _middle_pair).
    corner_lo: np.ndarray
    corner_hi: np.ndarray
    #: around the square's centre, as :func:`_sector_rings` cuts it at ``EDGE_STEP``: each pixel's
    #: sector-and-ring cell (P,), and the pixels in each (EDGE_SECTORS, rings).
    centred_cell: np.ndarray
    centred_totals: np.ndarray


def _centred_sectors(dx: np.ndarray, dy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The square's pixels (offsets ``dx``, ``dy``) cut into sectors and rings around its centre, as
    :func:`_outline_peaks` cuts them around a centre at (0, 0): each pixel's cell, and the count of
    pixels in each (sectors, rings) (the rim look of every square starts there)."""
    ex, ey = dx - np.float64(0.0), dy - np.float64(0.0)  # (as around a centre given in float64)
    cell, rings = _sector_cells(ex, ey, np.hypot(ex, ey), EDGE_STEP)
    totals = np.bincount(cell, minlength=EDGE_SECTORS * rings).reshape(EDGE_SECTORS, rings)
    return cell, totals


def _plate_design(p: np.ndarray) -> np.ndarray:
    """The plate surface's terms (a quadratic in the canonical coordinates about the board's centre) at
    the points ``p`` (N, 2): (N, 6)."""
    x, y = p[:, 0] - 1.5, p[:, 1] - 1.5
    return np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=1)


def _middle_radius(edge: float) -> float:
    """The radius of a piece's middle, whose tone says its colour, from its edge radius (pitches)."""
    return max(MIDDLE_MIN_RADIUS, min(MIDDLE_RADIUS, MIDDLE_OF_EDGE * edge))


def _middles(geo: _SquareMasks, centres: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each square's piece middle, whose tone says its colour: within ``MIDDLE_OF_EDGE`` of its edge
    radius (``edges`` (N,), bounded) of its centre (``centres`` (N, 2), pitches from the square's),
    over the pixels of the core (``geo.core``): (N, core pixels)."""
    radius = np.maximum(MIDDLE_MIN_RADIUS, np.minimum(MIDDLE_RADIUS, MIDDLE_OF_EDGE * edges))
    dx, dy = geo.dx[geo.core], geo.dy[geo.core]
    return _hypot_within(dx[None, :] - centres[:, :1], dy[None, :] - centres[:, 1:], radius)


def _reaches_corners(d: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """Whether what differs in each square (``d``, (N, P)) covers its far corners, which no piece
    reaches: more than ``FOREIGN_CORNER_COVER`` of ``FOREIGN_CORNERS`` of them (a sheet, a hand)."""
    share = (d.astype(np.float64) @ geo.far_zones) / geo.far_sizes
    return np.count_nonzero(share > FOREIGN_CORNER_COVER, axis=1) >= FOREIGN_CORNERS


def _faint_pieces(
    thresholds: list[np.ndarray],
    differs: np.ndarray,
    grey_dev: np.ndarray,
    grey: np.ndarray,
    left: np.ndarray,
    plate_grey: np.ndarray,
    white_from: np.ndarray,
    geo: _SquareMasks,
    f0: float,
) -> dict[int, tuple[np.ndarray, float, np.ndarray, float]]:
    """The faint pieces of the squares ``left`` (9,) by the first look: each finer threshold of
    ``thresholds`` in turn, on the squares the ones before it left (a faint piece's middle is off the
    plate at the coarser one; a piece of the plate's own tone has only its outline). Returns, per square
    with one, the piece as :func:`_faint_piece` gives it."""
    left = left.copy()
    found: dict[int, tuple[np.ndarray, float, np.ndarray, float]] = {}
    if not left.any():
        return found
    mid_dev = median_along(grey_dev[:, geo.very_middle], 1)
    for i, t in enumerate(thresholds):
        rows = left & (np.abs(mid_dev) > FAINT_PREFILTER * FAINT_BODY_K * t) if i == 0 else left
        if not rows.any():
            continue
        look = _FaintLook.at(t, differs, grey_dev, rows, geo, geo.body_zone)
        for k in look.rows.tolist():
            piece = look.piece(k, grey_dev[k], geo, f0, bool(white_from[k] < plate_grey[k]))
            if piece is None:
                continue
            # A faint dark middle may be the plate between the glows of thick light lines (a black piece
            # stands out from any plate lighter than itself): there, only a round edge makes it a black
            # piece on a plate nearly as dark (the glow's edge follows the square's lines, not a circle).
            # (A piece seen by its outline alone has no middle off the plate to judge.) Tried: a dark
            # middle with the plate level beyond its edge; it read phantoms on the real photos' dark board.
            tone_grey = _middle_grey(grey[k], piece, geo)
            body_off = abs(tone_grey - float(plate_grey[k])) > FAINT_BODY_K * float(t[k])
            dark = body_off and tone_grey < white_from[k] and tone_grey <= plate_grey[k]
            if dark and not (
                _round_edge(grey_dev[k], geo, piece) or _dark_rim(grey_dev[k], geo, piece, t[k])
            ):
                continue
            found[k] = piece
            left[k] = False
    return found


def _shape_problem(
    d: np.ndarray,
    grey_dev: np.ndarray,
    piece: tuple[float, np.ndarray, float],
    middle: np.ndarray,
    geo: _SquareMasks,
    f0: float,
) -> str:
    """Why what differs in one square (``d``; ``piece``: its evidence, centre and edge as
    :func:`_piece_evidence` gives them) is not a piece by its shape, or "": it is elongated (a pen, a
    finger), too small (a crumb, a highlight alone) or reaches the lines without being round (a sheet,
    a palm). (Whether it covers the square's far corners: :func:`_reaches_corners`.)"""
    evidence, centre, edge = piece
    if evidence < f0:
        return ""
    if _elongation(d & geo.body_zone, geo) > FOREIGN_ELONGATION:
        return "elongated"
    if edge < PIECE_MIN_RADIUS:
        return "small"
    if edge >= PIECE_MAX_EDGE and not _round(_body(d, grey_dev, middle), geo, centre):
        return "too-large"  # it fills the square into a corner: a sheet, a palm, not a piece
    return ""


def _piece_evidence(
    differs: np.ndarray, geo: _SquareMasks, body_zone: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How much each square's differing pixels (``differs``, (N, P)) look like a piece: a round body or
    outline around their centroid. Rings (``RING_STEP`` wide, the innermost a disc) around the centroid
    are cut into ``RING_SECTORS`` sectors; a ring's share is the median of its sectors' shares of
    differing pixels (the innermost disc's too: a blob off to one side, such as a blotch of JPEG colour,
    is no piece), so that what lies on one side only (the glow of a line, the edge of a shadow) does not
    count, while a disc or a rim, seen all around, does. Returns, per square, the best ring's share,
    the centroid (pitches from the square's centre, (N, 2)) and the piece's edge radius (the outermost
    ring at least half as full as the best one)."""
    n = differs.shape[0]
    w = (differs & body_zone).astype(np.float64)
    mass = w.sum(axis=1)
    safe = np.maximum(mass, 1.0)
    cx = np.clip((w @ geo.dx) / safe, -MAX_PIECE_OFFSET, MAX_PIECE_OFFSET)
    cy = np.clip((w @ geo.dy) / safe, -MAX_PIECE_OFFSET, MAX_PIECE_OFFSET)
    few = mass < MIN_EVIDENCE_PIXELS
    best, edge = np.zeros(n), np.zeros(n)
    # Only the squares with pixels enough for a piece are measured: the others' evidence is nothing.
    live = np.flatnonzero(~few)
    if live.size:
        best[live], edge[live] = _ring_evidence(differs[live], geo, cx[live], cy[live])
    cx[few], cy[few] = 0.0, 0.0
    return best, np.stack([cx, cy], axis=1), edge


def _ring_evidence(
    differs: np.ndarray, geo: _SquareMasks, cx: np.ndarray, cy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_piece_evidence`'s best ring share and edge radius of each square (``differs``, (N, P)),
    around its centroid (``cx``, ``cy``, (N,), pitches)."""
    n = differs.shape[0]
    ex, ey = geo.dx[None, :] - cx[:, None], geo.dy[None, :] - cy[:, None]
    # (In place where the steps allow: the same operations on the same values, fewer temporaries.)
    ring = _ring_index(ex, ey)
    ring += 1
    np.clip(ring, 0, RING_COUNT, out=ring)
    turn = np.arctan2(ey, ex)
    turn += math.pi
    turn *= RING_SECTORS / (2 * math.pi)
    sector = turn.astype(np.int64)
    np.minimum(sector, RING_SECTORS - 1, out=sector)
    size = (RING_COUNT + 1) * RING_SECTORS
    cell = ring
    cell *= RING_SECTORS
    cell += sector
    cell += np.arange(n)[:, None] * size
    cell = cell.ravel()
    shape = (n, RING_COUNT + 1, RING_SECTORS)
    total = np.bincount(cell, minlength=n * size).reshape(shape)[:, :RING_COUNT]
    hit = np.bincount(cell, weights=differs.ravel().astype(np.float64), minlength=n * size)
    hit = hit.reshape(shape)[:, :RING_COUNT]
    # The median over each ring's sectors that hold pixels (empty sectors sort last as inf).
    share = np.sort(np.where(total > 0, hit / np.maximum(total, 1), np.inf), axis=2)
    count = np.count_nonzero(total, axis=2)
    lo, hi = np.maximum(count - 1, 0) // 2, np.minimum(np.maximum(count, 1) // 2, RING_SECTORS - 1)
    rows, rings = np.arange(n)[:, None], np.arange(RING_COUNT)[None, :]
    median = (share[rows, rings, lo] + share[rows, rings, hi]) / 2.0
    enough = (total.sum(axis=2) >= MIN_RING_PIXELS) & (count > 0)
    ring_share = np.where(enough, median, 0.0)
    best = ring_share.max(axis=1)
    full = ring_share >= 0.5 * best[:, None]
    outermost = RING_COUNT - 1 - np.argmax(full[:, ::-1], axis=1)
    return best, np.where(best > 0, RING_FIRST + RING_STEP * outermost, 0.0)


def _hypot_within(ex: np.ndarray, ey: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """``np.hypot(ex, ey) <= radius[:, None]`` for offsets ``ex``, ``ey`` (N, P) and a radius per row
    (N,), the same booleans: the plain root of the sum of squares (several times cheaper than hypot,
    within a few units in the last place of it) everywhere but within ``HYPOT_BAND`` of the radius,
    where hypot itself decides."""
    approx = np.sqrt(ex * ex + ey * ey)
    lim = radius[:, None]
    within = approx <= lim
    unsure = np.abs(approx - lim) <= HYPOT_BAND * lim + HYPOT_FLOOR
    if unsure.any():
        rows, cols = np.nonzero(unsure)
        within[rows, cols] = np.hypot(ex[rows, cols], ey[rows, cols]) <= radius[rows]
    return within


def _ring_index(ex: np.ndarray, ey: np.ndarray) -> np.ndarray:
    """``np.floor((np.hypot(ex, ey) - RING_FIRST) / RING_STEP)`` as int64 for offsets ``ex``, ``ey``
    (float64, any shape): the ring of :func:`_ring_evidence` each pixel lies in, less one. The same
    integers from the plain root of the sum of squares, except where its quotient lies within
    ``HYPOT_BAND`` of a whole number (a unit in the last place could cross it): there from hypot."""
    scaled = ex * ex
    scaled += ey * ey
    np.sqrt(scaled, out=scaled)
    scaled -= RING_FIRST
    scaled /= RING_STEP
    ring = np.floor(scaled)
    frac = scaled - ring
    unsure = (frac <= HYPOT_BAND) | (frac >= 1.0 - HYPOT_BAND)
    if unsure.any():
        exact = np.hypot(ex[unsure], ey[unsure])
        exact -= RING_FIRST
        exact /= RING_STEP
        ring[unsure] = np.floor(exact)
    return ring.astype(np.int64)


@dataclass(frozen=True)
class _FaintLook:
    """A second look at some squares (``rows``) at a finer ``threshold`` (9,): their differing pixels
    (``differs``, one row per square of ``rows``) and what :func:`_piece_evidence` makes of them."""

    threshold: np.ndarray
    rows: np.ndarray
    differs: np.ndarray
    evidence: tuple[np.ndarray, np.ndarray, np.ndarray] | None

    @classmethod
    def at(
        cls,
        threshold: np.ndarray,
        differs: np.ndarray,
        grey_dev: np.ndarray,
        looked_at: np.ndarray,
        geo: _SquareMasks,
        body_zone: np.ndarray,
    ) -> _FaintLook:
        # Only the squares looked at are measured (``differs`` holds their rows alone, as ``rows``).
        looked = np.flatnonzero(looked_at)
        finer = differs[looked] | (np.abs(grey_dev[looked]) > threshold[looked, None])
        # (A bare square differs at the plate's texture in a few stray pixels only.)
        # (The share as a count over the pixels: the same numbers as the mean, without its wrapper.)
        share = np.count_nonzero(finer & body_zone, axis=1) / finer.shape[1]
        some = share >= FAINT_MIN_SHARE * body_zone.mean()
        rows, finer = looked[some], finer[some]
        evidence = _piece_evidence(finer, geo, body_zone) if rows.size else None
        return cls(threshold, rows, finer, evidence)

    def piece(
        self, k: int, grey_dev: np.ndarray, geo: _SquareMasks, f0: float, dark_lines: bool
    ) -> tuple[np.ndarray, float, np.ndarray, float] | None:
        """Square ``k``'s faint piece by :func:`_faint_piece`, or None (also when not looked at)."""
        if self.evidence is None or k not in self.rows:
            return None
        row = int(np.flatnonzero(self.rows == k)[0])
        found = (float(self.evidence[0][row]), self.evidence[1][row], float(self.evidence[2][row]))
        threshold = float(self.threshold[k])
        return _faint_piece(found, self.differs[row], grey_dev, threshold, geo, f0, dark_lines)


def _faint_piece(
    faint: tuple[float, np.ndarray, float],
    d: np.ndarray,
    grey_dev: np.ndarray,
    threshold: float,
    geo: _SquareMasks,
    f0: float,
    dark_lines: bool,
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """The second look at square ``k``, which shows no piece at the board's variation: a piece a few grey
    levels off the plate (a white piece on a white plate, in a large piece's shadow) seen at the plate's
    texture (``d``, the square's differing pixels at that finer ``threshold``; ``faint``, the
    evidence, centre and edge from them, as :func:`_piece_evidence` gives). It must be all a piece is,
    and more: a round body of a piece's size, not elongated, not reaching the corners, and either a
    middle that itself differs from the plate by ``FAINT_BODY_K`` thresholds with a level face and a
    short edge (:func:`_level_edge`; board texture and the glow of a shadow differ in patches and rims,
    not in a whole body), or, a piece of the plate's own tone, an outline all round a level face: a
    circle (:func:`_circular_outline`, which then places the piece), or a ring that stands out on the
    whole (:func:`_outline`). A body off the plate away from the lines' tone (lighter than the plate
    where the lines are darker, ``dark_lines``) whose differing pixels reach the lines ends where its own
    level does (:func:`_body_edge`): a large piece's rim and shadow reach them. Returns (differing
    pixels, evidence, centre, edge) or None."""
    evidence, centre, edge = faint
    if evidence < f0 or edge < PIECE_MIN_RADIUS:
        return None
    ex, ey = geo.dx - centre[0], geo.dy - centre[1]
    rr = np.hypot(ex, ey)
    middle = rr <= _middle_radius(edge)
    body = median(grey_dev[middle])
    sums, totals = _sector_rings(grey_dev, ex, ey, rr, RING_STEP)
    counts = totals.sum(axis=0)
    profile = sums.sum(axis=0) / np.maximum(counts, 1)
    lo, hi = int(PIECE_MIN_RADIUS / RING_STEP), min(int(PIECE_MAX_EDGE / RING_STEP) + 1, len(profile) - 2)
    if abs(body) <= FAINT_BODY_K * threshold:
        # No body to speak of: a piece of the plate's own tone still shows its outline (its shadow, its
        # rim) as a ring all round it (the evidence: every sector of a ring differs) around a level face:
        # a circle, which then gives the piece's centre and edge (a large piece's shadow reaches the
        # square's lines, so what differs reaches the outermost ring); or one that stands out on the whole.
        circle = _circular_outline(grey_dev, geo, centre, body, threshold)
        if circle is not None:
            centre, edge = circle
            faint = (evidence, centre, edge)
            middle = np.hypot(geo.dx - centre[0], geo.dy - centre[1]) <= _middle_radius(edge)
        elif edge >= PIECE_MAX_EDGE or not _outline(profile, counts, body, threshold, lo, hi):
            return None
    else:
        # A dark body's face: each ring's level the median of its sectors' means, so that the highlight
        # on one side of a glossy black piece does not break it. (A light body's highlight lies farther
        # from the plate than its face, which _level_edge allows; the median would also level a light
        # square's middle between thick dark lines.)
        face = _median_of_sectors(sums, totals) if body < 0 else profile
        if edge >= PIECE_MAX_EDGE and (body > 0) == dark_lines:
            # Its rim and shadow reach the lines; its body does not. (The shape check below still takes
            # what differs as reaching them: a body that fills the square must be round.) Only a body
            # off the plate away from the lines' tone: the glow of light lines, the blur of dark ones,
            # reaches them towards it.
            edge = _body_edge(face, counts, body, lo)
        if edge >= PIECE_MAX_EDGE or not _level_edge(face, counts, body, threshold, lo, hi):
            return None
    if _reaches_corners(d[None, :], geo)[0] or _shape_problem(d, grey_dev, faint, middle, geo, f0):
        return None
    return d, evidence, centre, edge


class _OutlinePeaks(NamedTuple):
    """Where a piece's outline stands out most in each of ``EDGE_SECTORS`` sectors around ``centre``
    (pitches from the square's centre): how far off the face (the way the outline goes), the radius
    of that ring, and whether it is the sector's outermost ring (at the square's lines)."""

    centre: np.ndarray
    strength: np.ndarray
    radius: np.ndarray
    at_lines: np.ndarray


def _outline_peaks(
    grey_dev: np.ndarray, geo: _SquareMasks, centre: np.ndarray, body: float, sense: float | None = None
) -> _OutlinePeaks | None:
    """In each of ``EDGE_SECTORS`` sectors around ``centre``, the ring of ``EDGE_STEP`` (from
    ``PIECE_MIN_RADIUS`` out to the square's lines) farthest off the face (``body``) the way the
    outline goes (``sense``: -1 darker, 1 lighter; unless told, whichever the square shows most), or
    None when a sector has no ring there."""
    ex, ey = geo.dx - centre[0], geo.dy - centre[1]
    rr = np.hypot(ex, ey)
    sums, totals = _sector_rings(grey_dev - body, ex, ey, rr, EDGE_STEP)
    rings = _outline_rings(sums, totals)
    if rings is None:
        return None
    off, inside = rings
    if sense is None:
        sense = 1.0 if off.max() >= -off.min() else -1.0
    strength, radius, at_lines = _outline_peaks_of(off, inside, sense)
    return _OutlinePeaks(centre, strength, radius, at_lines)


def _outline_rings(sums: np.ndarray, totals: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Each ring's mean off the face from ``PIECE_MIN_RADIUS`` out (``sums`` (..., sectors, rings) and
    ``totals`` (sectors, rings) as :func:`_sector_rings` gives them; 0 beyond a sector's last ring), and
    which rings lie inside the square; None when a sector has no ring there."""
    first = round(PIECE_MIN_RADIUS / EDGE_STEP)
    inside = np.cumprod(totals[:, first:] > 0, axis=1).astype(bool)
    if not inside.any(axis=1).all():
        return None
    return np.where(inside, sums[..., first:] / np.maximum(totals[:, first:], 1), 0.0), inside


def _outline_peaks_of(
    off: np.ndarray, inside: np.ndarray, sense: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From :func:`_outline_rings`'s ``off`` (..., sectors, rings) and ``inside``: in each sector the
    ring farthest off the face the way ``sense`` says, how far (..., sectors), its radius, and whether it
    is the sector's last ring (at the square's lines)."""
    first = round(PIECE_MIN_RADIUS / EDGE_STEP)
    peak = np.argmax(off * sense, axis=-1)
    strength = np.take_along_axis(off, peak[..., None], axis=-1)[..., 0] * sense
    radius = (peak + first + 0.5) * EDGE_STEP
    return strength, radius, peak >= inside.sum(axis=1) - 1


def _circle_through(
    peaks: _OutlinePeaks,
    threshold: float,
    clear_of_lines: bool = False,
    tolerance: float = OUTLINE_CIRCLE_RESIDUAL,
    weakest_dropped: int = 0,
) -> tuple[np.ndarray, float] | None:
    """The circle through an outline's ``peaks``, or None: each at least ``OUTLINE_CIRCLE_K`` thresholds
    off the face (but the ``weakest_dropped`` sectors whose outline stands out least, left out of the
    test and of the fit), none at the square's lines when ``clear_of_lines``; a circle fitted through
    them (Kasa's fit) misses none by more than ``tolerance``, lies within ``MAX_PIECE_OFFSET`` of the
    square's centre and is a piece's size. Returns the circle's centre (pitches from the square's) and
    radius."""
    kept = np.sort(np.argsort(-peaks.strength)[: EDGE_SECTORS - weakest_dropped])
    if float(peaks.strength[kept].min()) < OUTLINE_CIRCLE_K * threshold:
        return None
    if clear_of_lines and np.any(peaks.at_lines[kept]):
        return None
    radius = peaks.radius[kept]
    angle = ((np.arange(EDGE_SECTORS) + 0.5) * (2 * math.pi / EDGE_SECTORS) - math.pi)[kept]
    x, y = radius * np.cos(angle), radius * np.sin(angle)
    a = np.stack([2 * x, 2 * y, np.ones_like(x)], axis=1)
    cx, cy, c = least_squares(a, x * x + y * y)
    fitted = math.sqrt(max(c + cx * cx + cy * cy, 0.0))
    if float(np.abs(np.hypot(x - cx, y - cy) - fitted).max()) > tolerance:
        return None
    at = peaks.centre + np.array([cx, cy])
    if math.hypot(*at) > MAX_PIECE_OFFSET or not PIECE_MIN_RADIUS <= fitted < PIECE_MAX_EDGE:
        return None
    return at, fitted


def _circular_outline(
    grey_dev: np.ndarray,
    geo: _SquareMasks,
    centre: np.ndarray,
    body: float,
    threshold: float,
    sense: float | None = None,
    clear_of_lines: bool = False,
    tolerance: float = OUTLINE_CIRCLE_RESIDUAL,
    weakest_dropped: int = 0,
) -> tuple[np.ndarray, float] | None:
    """A piece's outline as a circle, or None: around ``centre`` (pitches from the square's), the ring
    farthest off the face (``body``) in each sector (:func:`_outline_peaks`; a rim or a shadow: darker
    or lighter, whichever the square shows most unless ``sense`` says), on a circle
    (:func:`_circle_through`, with the other arguments). Wood grain, stains and the glow of the lines
    peak at scattered radii, or along the square's sides rather than round."""
    peaks = _outline_peaks(grey_dev, geo, centre, body, sense)
    if peaks is None:
        return None
    return _circle_through(peaks, threshold, clear_of_lines, tolerance, weakest_dropped)


def _dark_rim(
    grey_dev: np.ndarray,
    geo: _SquareMasks,
    piece: tuple[np.ndarray, float, np.ndarray, float],
    threshold: float,
) -> bool:
    """Whether a dark faint piece (``piece`` as :func:`_faint_piece` gives it) is ringed by a rim darker
    than its face, on a circle (:func:`_circular_outline` with the darker sense): a black piece's rim,
    which the soft shadow on one side leaves round where the half-way edge of :func:`_round_edge` is
    not. The glow of light lines only lightens towards the lines."""
    body = _middle_grey(grey_dev, piece, geo)
    return _circular_outline(grey_dev, geo, piece[2], body, float(threshold), sense=-1.0) is not None


def _rim_piece(
    grey_dev: np.ndarray, geo: _SquareMasks, threshold: float, dark_lines: bool, contrast: float | None = None
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """A piece seen by its rim alone in one square, or None: :func:`_rim_pieces` of that square."""
    contrasts = None if contrast is None else np.array([contrast])
    return _rim_pieces(grey_dev[None, :], geo, np.array([threshold]), np.array([dark_lines]), contrasts)[0]


def _rim_pieces(
    grey_dev: np.ndarray,
    geo: _SquareMasks,
    threshold: np.ndarray,
    dark_lines: np.ndarray,
    contrast: np.ndarray | None = None,
) -> list[tuple[np.ndarray, float, np.ndarray, float] | None]:
    """For each square (a row of ``grey_dev`` (N, P), with its ``threshold`` (N,), the plate's texture,
    and its grid's polarity ``dark_lines`` (N,)), a piece seen by its rim alone, or None: a circle darker
    than the square's middle all round (:func:`_circular_outline` with the darker sense), as a piece of
    nearly the plate's tone shows it when nothing of its face differs (a black piece a few levels off a
    black plate, a white one on a white plate). The glow of light lines lightens, and the blur of dark
    lines darkens along the square's sides, not on a circle; a stain is no circle round the middle.
    With dark lines and the grid's ``contrast`` around each square (N,) given, a rim may merge with a
    line's blur on one side (up to ``RIM_BESIDE_LINES_MOST`` sectors next to each other): the circle
    through the others counts when each stands ``RIM_BESIDE_LINES_SHARE`` of the contrast off the face,
    as no bare square's faint circles do (:func:`_rim_beside_lines_shows`, :func:`_circle_beside_lines`).
    Failing a rim, a crescent (:func:`_crescent_from`): the shadow on one side of a white piece on a
    white plate under a light from one side, its lit side lost in the lines' blur.
    Each piece is (its disc's pixels, ``RIM_EVIDENCE``, centre, edge) as :func:`_faint_piece` gives one.

    The squares are looked at together as far as most of them go (most bare squares show no rim)."""
    n = grey_dev.shape[0]
    out: list[tuple[np.ndarray, float, np.ndarray, float] | None] = [None] * n
    body = median_along(grey_dev[:, geo.rad <= MIDDLE_RADIUS], 1)
    floor = OUTLINE_CIRCLE_K * threshold
    # Each of the circle's sectors has a ring whose mean is that far below the middle, so at least one
    # pixel each that far below it: most bare squares have fewer, and need no fit.
    live = np.flatnonzero(np.count_nonzero(grey_dev <= (body - floor)[:, None], axis=1) >= EDGE_SECTORS)
    if live.size == 0:
        return out
    # The rim's peaks around each square's centre (:func:`_outline_peaks`, darker), for all at once.
    totals = geo.centred_totals
    cells = (geo.centred_cell[None, :] + (np.arange(live.size) * totals.size)[:, None]).ravel()
    values = (grey_dev[live] - body[live, None]).ravel()
    sums = np.bincount(cells, weights=values, minlength=live.size * totals.size)
    rings = _outline_rings(sums.reshape(live.size, *totals.shape), totals)
    if rings is None:
        return out
    strength, radius, at_lines = _outline_peaks_of(*rings, -1.0)
    rows = np.arange(live.size)[:, None]
    # The circles of :func:`_rim_from` need every sector that far off the face (and, with dark lines,
    # none at the lines), or all but the RIM_SECTORS_DROPPED weakest, none of those at the lines.
    floor_live = floor[live]
    strongest = np.sort(np.argsort(-strength, axis=1)[:, : EDGE_SECTORS - RIM_SECTORS_DROPPED], axis=1)
    all_round = (strength.min(axis=1) >= floor_live) & ~(dark_lines[live] & at_lines.any(axis=1))
    partial = (strength[rows, strongest].min(axis=1) >= floor_live) & ~at_lines[rows, strongest].any(axis=1)
    rim = all_round | partial
    beside = np.zeros(live.size, bool)
    if contrast is not None:
        beside = dark_lines[live] & _rim_beside_lines_shows(strength, at_lines, floor_live, contrast[live])
    # The crescent's sectors: one arc (neighbours all but once round the circle), far enough off the
    # face on average and each some way off (a shadow fades at one end), none at the lines.
    arc = np.sort(np.argsort(-strength, axis=1)[:, :CRESCENT_SECTORS], axis=1)
    steps = np.diff(np.concatenate([arc, arc[:, :1] + EDGE_SECTORS], axis=1), axis=1)
    one_arc = np.count_nonzero(steps == 1, axis=1) == CRESCENT_SECTORS - 1
    crescent = (
        one_arc
        & (strength[rows, arc].mean(axis=1) >= CRESCENT_K * threshold[live])
        & (strength[rows, arc].min(axis=1) >= CRESCENT_MIN_K * threshold[live])
        & ~at_lines[rows, arc].any(axis=1)
    )
    for row in np.flatnonzero(rim | crescent | beside).tolist():
        k = int(live[row])
        around = _OutlinePeaks(np.zeros(2), strength[row], radius[row], at_lines[row])
        face, t = float(body[k]), float(threshold[k])
        beside_contrast = None if contrast is None else float(contrast[k])
        piece = (
            _rim_from(grey_dev[k], geo, around, face, t, bool(dark_lines[k]), beside_contrast)
            if rim[row]
            else None
        )
        if piece is None and beside[row]:
            piece = _rim_disc(geo, _circle_beside_lines(around, t))
        if piece is None and crescent[row]:
            piece = _crescent_from(grey_dev[k], geo, around, face, t)
        out[k] = piece
    return out


def _rim_beside_lines_shows(
    strength: np.ndarray, at_lines: np.ndarray, floor: np.ndarray | float, contrast: np.ndarray | float
) -> np.ndarray:
    """Whether a rim's peaks (``strength`` and ``at_lines``, (..., ``EDGE_SECTORS``)) show a piece whose
    rim merges with a dark line's blur on one side: at most ``RIM_BESIDE_LINES_MOST`` sectors, next to
    each other, at the lines, and each of the others at least ``floor`` and ``RIM_BESIDE_LINES_SHARE``
    of the grid's ``contrast`` off the face."""
    at_count = at_lines.sum(axis=-1)
    one_arc = np.count_nonzero(at_lines != np.roll(at_lines, 1, axis=-1), axis=-1) == 2
    clear_min = np.where(at_lines, np.inf, strength).min(axis=-1)
    least = np.maximum(floor, RIM_BESIDE_LINES_SHARE * np.asarray(contrast))
    return (at_count <= RIM_BESIDE_LINES_MOST) & one_arc & (clear_min >= least)


def _circle_beside_lines(peaks: _OutlinePeaks, threshold: float) -> tuple[np.ndarray, float] | None:
    """The circle through a rim's peaks (``peaks``) in the sectors clear of the lines, roughly (the rim
    taken sector by sector around a point that need not be the piece's centre), the others lost in a
    line's blur (see :func:`_rim_beside_lines_shows`); or None."""
    at = peaks.at_lines
    clear = _OutlinePeaks(peaks.centre, np.where(at, -np.inf, peaks.strength), peaks.radius, at)
    return _circle_through(clear, threshold, True, ROUGH_CIRCLE_RESIDUAL, int(at.sum()))


def _crescent_from(
    grey_dev: np.ndarray, geo: _SquareMasks, around: _OutlinePeaks, body: float, threshold: float
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """A piece of the plate's own tone seen by the shadow on one side of it, from its outline's peaks
    around the square's centre (``around``, darker than the middle, ``body``), or None: the
    ``CRESCENT_SECTORS`` sectors where it stands out most (one arc, as :func:`_rim_pieces` checks, on
    average ``CRESCENT_K`` thresholds off), each ``CRESCENT_MIN_K`` thresholds or more, all clear of
    the lines, on one circle of a piece's size
    (:func:`_circle_through`, then again around that circle's centre). A pen's edge is straight (no
    circle of a piece's size); a stain is no arc around the middle; the blur of dark lines lies at the
    lines."""
    # (_circle_through's floor is OUTLINE_CIRCLE_K thresholds: it is given the threshold that makes
    # its floor CRESCENT_MIN_K of the square's.)
    floor = CRESCENT_MIN_K / OUTLINE_CIRCLE_K * threshold
    drop = EDGE_SECTORS - CRESCENT_SECTORS
    return _rim_disc(geo, _circle_on_some_sectors(grey_dev, geo, around, body, floor, drop))


def _rim_from(
    grey_dev: np.ndarray,
    geo: _SquareMasks,
    around: _OutlinePeaks,
    body: float,
    threshold: float,
    dark_lines: bool,
    contrast: float | None = None,
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """:func:`_rim_pieces` of one square from its rim's peaks around its centre (``around``); the grid's
    ``contrast`` there given, a rim merged with a dark line's blur on one side counts too."""
    # Through the peaks first the rough circle: only its residual test differs from the strict one's,
    # so where there is no rough circle there is no strict one either (most bare squares end here, or
    # at the six-sector circle).
    rough = _circle_through(around, threshold, dark_lines, ROUGH_CIRCLE_RESIDUAL)
    if rough is not None:
        circle = _circle_through(around, threshold, dark_lines)
        if circle is None:
            # A piece off the square's centre: its rim, taken sector by sector around the square's
            # centre, lies on a circle only roughly; around that rough circle's centre it lies on one
            # closely.
            circle = _circular_outline(grey_dev, geo, rough[0], body, threshold, -1.0, dark_lines)
        if circle is None and dark_lines and contrast is not None:
            # ...unless, so far off it, the rim merges with a line's blur on that side.
            peaks = _outline_peaks(grey_dev, geo, rough[0], body, -1.0)
            floor = OUTLINE_CIRCLE_K * threshold
            if peaks is not None and _rim_beside_lines_shows(peaks.strength, peaks.at_lines, floor, contrast):
                circle = _circle_beside_lines(peaks, threshold)
    else:
        # A rim on six sectors of eight: the lit side of a black piece on a plate nearly as dark shows
        # none. The two weakest sectors are left out, and the rim must lie clear of the lines, or a
        # bare square's dark band along its lines would be a circle on six sectors.
        circle = _circle_on_some_sectors(grey_dev, geo, around, body, threshold, RIM_SECTORS_DROPPED)
    return _rim_disc(geo, circle)


def _circle_on_some_sectors(
    grey_dev: np.ndarray, geo: _SquareMasks, around: _OutlinePeaks, body: float, threshold: float, drop: int
) -> tuple[np.ndarray, float] | None:
    """A darker outline's circle from all but its ``drop`` weakest sectors (``around``, its peaks around
    the square's centre; each kept one ``OUTLINE_CIRCLE_K`` thresholds off the face, ``body``, and clear
    of the lines): roughly through the peaks, then closely around that rough circle's centre; or None."""
    rough = _circle_through(around, threshold, True, ROUGH_CIRCLE_RESIDUAL, drop)
    if rough is None:
        return None
    return _circular_outline(grey_dev, geo, rough[0], body, threshold, -1.0, True, weakest_dropped=drop)


def _rim_disc(
    geo: _SquareMasks, circle: tuple[np.ndarray, float] | None
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """A piece seen by its outline's ``circle`` (centre, edge), as :func:`_rim_pieces` gives one."""
    if circle is None:
        return None
    centre, edge = circle
    disc = np.hypot(geo.dx - centre[0], geo.dy - centre[1]) <= edge
    return disc, RIM_EVIDENCE, centre, edge


def _round_edge(
    grey_dev: np.ndarray, geo: _SquareMasks, piece: tuple[np.ndarray, float, np.ndarray, float]
) -> bool:
    """Whether a piece's edge is a circle around its centre (``piece`` as :func:`_faint_piece` gives it;
    ``grey_dev``, each pixel's grey minus the plate's): in each of ``EDGE_SECTORS`` sectors, beyond the
    last ring of ``EDGE_STEP`` (from ``RING_FIRST`` out to the square's lines) whose mean is on the
    middle's side of half-way between the middle's level and the plate's, the plate comes back, and
    these edges lie within ``ROUND_EDGE_SPREAD`` of one radius. (From the outside in: a highlight inside
    a glossy piece is not its edge.)"""
    _d, _evidence, centre, edge = piece
    ex, ey = geo.dx - centre[0], geo.dy - centre[1]
    rr = np.hypot(ex, ey)
    middle = rr <= _middle_radius(edge)
    body = median(grey_dev[middle])
    sums, total = _sector_rings(grey_dev, ex, ey, rr, EDGE_STEP)
    first = round(RING_FIRST / EDGE_STEP)
    # The body's side of half-way; a ring without pixels ends the sector (the square's inside).
    inside = np.cumprod(total[:, first:] > 0, axis=1).astype(bool)
    body_side = inside & ((sums - 0.5 * body * total) * math.copysign(1.0, body) >= 0)[:, first:]
    rings = body_side.shape[1]
    last = np.where(body_side.any(axis=1), rings - 1 - np.argmax(body_side[:, ::-1], axis=1), -1)
    if not np.all(last + 1 < inside.sum(axis=1)):
        return False  # the plate does not come back before the lines
    return float(last.max() - last.min()) * EDGE_STEP <= ROUND_EDGE_SPREAD


def _sector_rings(
    values: np.ndarray, ex: np.ndarray, ey: np.ndarray, rr: np.ndarray, step: float
) -> tuple[np.ndarray, np.ndarray]:
    """Sums of ``values`` and pixel counts per sector and ring around a centre (``ex``, ``ey``, ``rr``:
    each pixel's offset and distance from it): ``EDGE_SECTORS`` sectors by rings ``step`` wide, from the
    centre out to the farthest pixel; each (sectors, rings)."""
    cell, rings = _sector_cells(ex, ey, rr, step)
    size = EDGE_SECTORS * rings
    totals = np.bincount(cell, minlength=size).reshape(EDGE_SECTORS, rings)
    sums = np.bincount(cell, weights=values, minlength=size).reshape(EDGE_SECTORS, rings)
    return sums, totals


def _sector_cells(ex: np.ndarray, ey: np.ndarray, rr: np.ndarray, step: float) -> tuple[np.ndarray, int]:
    """Each pixel's cell of :func:`_sector_rings` (its sector times the rings, plus its ring), and the
    number of rings."""
    rings = int(rr.max() / step) + 1
    ring = np.minimum((rr / step).astype(np.int64), rings - 1)
    sector = ((np.arctan2(ey, ex) + math.pi) * (EDGE_SECTORS / (2 * math.pi))).astype(np.int64)
    return np.minimum(sector, EDGE_SECTORS - 1) * rings + ring, rings


def _median_of_sectors(sums: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Each ring's median over its sectors' means (``sums``, ``totals`` as :func:`_sector_rings` gives
    them); 0 for a ring without pixels."""
    held = totals.sum(axis=0) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums[:, held] / np.where(totals[:, held] > 0, totals[:, held], np.nan)
    profile = np.zeros(held.size)
    # np.nanmedian(means, axis=0), as it takes it (the middle two of each column's sorted values, NaN
    # last, the middle one twice for an odd count, summed and halved), without its masked arrays.
    means.sort(axis=0)
    count = np.count_nonzero(~np.isnan(means), axis=0)
    cols = np.arange(means.shape[1])
    high = count // 2
    low = np.where(count % 2 == 1, high, high - 1)
    profile[held] = (means[low, cols] + means[high, cols]) / 2.0
    return profile


def _body_edge(profile: np.ndarray, counts: np.ndarray, body: float, lo: int) -> float:
    """The edge radius (pitches) of a body at ``body`` (its middle's deviation from the plate) by its
    own level: the first ring of ``RING_STEP`` from ring ``lo`` (the smallest piece's radius) out, with
    pixels (``counts``), whose level in ``profile`` (as :func:`_level_edge` takes it) has fallen under
    ``BODY_EDGE_SHARE`` of the body's; ``PIECE_MAX_EDGE`` when none has. What differs from the plate
    around a large piece reaches its square's lines: its rim and soft shadow differ too, the other way
    (a white piece's darker rim on a white plate), while its body ends before them."""
    sign = math.copysign(1.0, body)
    for i in range(max(lo, 1), len(profile)):
        if counts[i] and profile[i] * sign < BODY_EDGE_SHARE * abs(body):
            return i * RING_STEP
    return PIECE_MAX_EDGE


def _level_edge(
    profile: np.ndarray, counts: np.ndarray, body: float, threshold: float, lo: int, hi: int
) -> bool:
    """Whether a square's radial ``profile`` (as :func:`_outline` takes it) falls from a level face at
    ``body`` to the plate within a short step, somewhere between rings ``lo`` and ``hi`` (the smallest
    piece's radius and the largest's): the level falls by ``FAINT_EDGE_SHARE`` of the body, and by
    ``FAINT_EDGE_K`` times the plate's ``threshold``, within two rings (three for a body
    ``STRONG_BODY_K`` thresholds off the plate), and the face before it varies by at most
    ``FAINT_PLATEAU`` of it. The glow of thick light lines fades over a whole square instead, and falls
    all the way; a square lit a few levels lighter in its middle than in its corners falls by a few
    levels, no more than the plate's own texture."""
    spans = (2, 3) if abs(body) >= STRONG_BODY_K * threshold else (2,)
    return any(_level_edge_over(profile, counts, body, threshold, lo, hi, span) for span in spans)


def _level_edge_over(
    profile: np.ndarray, counts: np.ndarray, body: float, threshold: float, lo: int, hi: int, span: int
) -> bool:
    """:func:`_level_edge` with the level's fall taken over ``span`` rings."""
    falls = [
        (profile[i - 1] - profile[i - 1 + span]) * math.copysign(1.0, body)
        for i in range(max(lo, 1), hi + 1)
        if i - 1 + span < len(profile) and counts[i - 1] and counts[i - 1 + span]
    ]
    if not falls or max(falls) < max(FAINT_EDGE_SHARE * abs(body), FAINT_EDGE_K * threshold):
        return False
    step = max(lo, 1) + int(np.argmax(falls))
    face = profile[: max(step - 1, 2)]
    # A rim or a highlight lies farther from the plate than the middle: the face's level all the same.
    face = np.where((face - body) * math.copysign(1.0, body) > 0, body, face)
    return float(face.max() - face.min()) <= FAINT_PLATEAU * abs(body)


def _outline(
    profile: np.ndarray, counts: np.ndarray, body: float, threshold: float, lo: int, hi: int
) -> bool:
    """Whether a square's radial ``profile`` (mean deviation from the plate per ring of ``RING_STEP``
    around the piece's centre, ``counts`` pixels each) is a level face at ``body`` ringed, between
    rings ``lo`` and ``hi``, by an outline at least ``OUTLINE_K`` thresholds off it (a shadow or a
    rim), beyond which the plate comes back."""
    for i in range(max(lo, 1), hi + 1):
        if not counts[i] or i + 2 >= len(profile):
            continue
        depth = profile[i] - body
        if abs(depth) < OUTLINE_K * threshold:
            continue
        face = profile[: max(i - 1, 2)]
        if float(np.abs(face - body).max()) > OUTLINE_FACE_K * threshold:
            continue
        # The plate comes back beyond the outline: a large piece's rim and shadow together make a band
        # a few rings wide.
        far = profile[i + 2 : min(i + 2 + OUTLINE_MAX_RINGS, len(profile))]
        if far.size and float(np.abs(far).min()) <= 0.5 * abs(float(profile[i])):
            return True
    return False


def _coloured(med: np.ndarray, pixels: int, plate_opponent: np.ndarray, plate_grey: float) -> bool:
    """Whether a body's middle (the median of its ``pixels`` pixels' B, G, R: ``med`` (3,)) is clearly
    coloured, and not in the plate's own colour (that is the plate showing through, not an object): its
    saturation, the spread of its median's channels over its brightest channel (at least
    ``SATURATION_FLOOR``, so that the few levels of colour in a black piece's noise and JPEG do not
    count), is above ``PIECE_MAX_SATURATION`` (a white balance a tenth warm or cool leaves a white piece
    near 0.2), and its opponent colour (B-G, R-G) is off the plate's (``plate_opponent``; the plate's
    grey, ``plate_grey``) by more than ``OFF_PLATE_COLOUR`` of its own, each over its own brightness
    (its brightest channel, at least ``SATURATION_FLOOR``): a dark copper coin on a warm white plate is
    far more coloured than the plate, though its opponent colour in grey levels is not far off."""
    if pixels < MIN_EVIDENCE_PIXELS:
        return False
    if _saturation(med) <= PIECE_MAX_SATURATION:
        return False
    own = _tint(med, SATURATION_FLOOR)
    plate = plate_opponent / max(float(_bgr_of(plate_grey, plate_opponent).max()), SATURATION_FLOOR)
    return float(np.hypot(*(own - plate))) > OFF_PLATE_COLOUR * float(np.hypot(*own))


def _tint(bgr: np.ndarray, floor: float) -> np.ndarray:
    """Colours' opponent colour (B-G, R-G) over their brightness (brightest channel, at least
    ``floor``): (..., 3) B, G, R to (..., 2). A colour and the same colour in more light are alike."""
    bgr = np.asarray(bgr, float)
    opponent = np.stack([bgr[..., 0] - bgr[..., 1], bgr[..., 2] - bgr[..., 1]], axis=-1)
    return opponent / np.maximum(bgr.max(axis=-1), floor)[..., None]


def _saturation(bgr: np.ndarray, floor: float = SATURATION_FLOOR) -> float:
    """The spread of a colour's channels (B, G, R: ``bgr`` (3,)) over its brightest one, at least
    ``floor``: the few levels of colour in a dark colour's noise and JPEG do not count."""
    top = float(bgr.max())
    return (top - float(bgr.min())) / max(top, floor)


def _bgr_of(grey: float, opponent: np.ndarray) -> np.ndarray:
    """A colour given as grey and opponent colour (B-G, R-G: ``opponent`` (2,)) in B, G, R (3,)."""
    g = float(_green_of(grey, opponent))
    return np.array([g + float(opponent[0]), g, g + float(opponent[1])])


def _green_of(grey: float | np.ndarray, opponent: np.ndarray) -> float | np.ndarray:
    """The green channel of colours given as grey and opponent colour (B-G, R-G: ``opponent`` (..., 2)),
    as OpenCV weighs grey (0.114 B + 0.587 G + 0.299 R); blue and red are green plus their opponents."""
    return grey - 0.114 * opponent[..., 0] - 0.299 * opponent[..., 1]


def _plate_shows(med: np.ndarray, grey_off: float, plate_grey: float, plate_opponent: np.ndarray) -> bool:
    """Whether a body's middle (the median B, G, R of its pixels: ``med`` (3,); its median grey
    ``grey_off`` grid contrasts from the plate's) is the plate showing through: on a clearly coloured
    plate (grey ``plate_grey``, opponent colour B-G, R-G ``plate_opponent``: saturation at least
    ``PLATE_SHOWS_SATURATION``, over its brightest channel or ``PLATE_SHOWS_FLOOR``, so that a dim
    green board counts), a middle nearly as saturated (``PLATE_SHOWS_SHARE``), of the plate's
    own colour (within ``PLATE_SHOWS_OFF`` of its opponent colour), both in the plate's light, and near
    its grey (``PLATE_SHOWS_TONE``). Black and white pieces are far less saturated than such a plate, whatever
    the light's colour (it tints both alike); the grain of a wood plate, which differs from the plate
    in grey just enough to look like a faint body, is the plate's colour and tone through and through.
    (A cross on a dark plate, whose middle is half plate, stands off the plate's grey.)"""
    if grey_off > PLATE_SHOWS_TONE:
        return False
    plate_bgr = _bgr_of(plate_grey, plate_opponent)
    plate_sat = _saturation(plate_bgr, PLATE_SHOWS_FLOOR)
    # Its saturation over the floor dimmed as the middle is, and its colour as it is or scaled back up to
    # the plate's light: the plate in the gantry arm's shadow keeps its colour, each channel taken down
    # alike (a navy plate a fifth dimmer fell under the fixed floor, its bare squares read black at 1.0).
    # (Its colour scaled alone would take the few levels of colour of a dark body up past the plate's:
    # a bare square of an empty tuning board, heldout 4/115, read a black piece so.)
    light = max(min(1.0, float(med.max()) / max(float(plate_bgr.max()), 1.0)), 1e-3)
    if (
        plate_sat < PLATE_SHOWS_SATURATION
        or _saturation(med, PLATE_SHOWS_FLOOR * light) < PLATE_SHOWS_SHARE * plate_sat
    ):
        return False
    own = np.array([med[0] - med[1], med[2] - med[1]])
    limit = PLATE_SHOWS_OFF * float(np.hypot(*plate_opponent))
    return (
        min(float(np.hypot(*(own - plate_opponent))), float(np.hypot(*(own / light - plate_opponent))))
        <= limit
    )


def _middle_grey(
    grey: np.ndarray, piece: tuple[np.ndarray, float, np.ndarray, float], geo: _SquareMasks
) -> float:
    """The median of ``grey`` (each pixel's grey, or its grey minus the plate's) over a piece's middle
    (``piece`` as :func:`_faint_piece` returns it)."""
    _d, _evidence, centre, edge = piece
    rr = np.hypot(geo.dx - centre[0], geo.dy - centre[1])
    return median(grey[rr <= _middle_radius(edge)])


def _body(d: np.ndarray, grey_dev: np.ndarray, middle: np.ndarray) -> np.ndarray:
    """Of the differing pixels ``d``, the body: those off the plate the way the middle is, by at least
    ``BODY_OF_MIDDLE`` of the middle's own deviation (``grey_dev``: each pixel's grey minus the plate's).
    A piece's soft shadow and a white piece's dark rim fall away; a sheet or a palm stays whole. When the
    middle barely differs in grey (a piece seen by its colour), all of ``d``."""
    level = median(grey_dev[middle]) if middle.any() else 0.0
    core = d & (grey_dev * math.copysign(1.0, level) >= BODY_OF_MIDDLE * abs(level))
    return core if core.sum() >= MIN_EVIDENCE_PIXELS and abs(level) > 0.0 else d


def _round(d: np.ndarray, geo: _SquareMasks, centre: np.ndarray) -> bool:
    """Whether the pixels ``d`` of one square are a piece's round body near ``centre`` (pitches from
    the square's centre), rather than a sheet or a palm. Where the square's inside does not cut the
    body off, its outline is fitted with a circle; a piece's circle is no larger than the largest piece
    (``ROUND_MAX_REACH``) and nothing of the body lies beyond it by more than ``ROUND_MAX_RATIO``. A
    body cut off nearly all round is a piece when it reaches no farther than the largest piece.
    Only the body's largest connected part counts: a neighbour's shadow or blur reaching a corner is
    not this body's outline."""
    d = _largest_part(d, geo)
    ex, ey = geo.dx - centre[0], geo.dy - centre[1]
    sector = ((np.arctan2(ey, ex) + math.pi) * (ROUND_SECTORS / (2 * math.pi))).astype(np.int64)
    sector %= ROUND_SECTORS
    rad = np.hypot(ex, ey)
    body_rad = np.where(d, rad, -1.0)
    reach = np.full(ROUND_SECTORS, -1.0)
    np.maximum.at(reach, sector, body_rad)
    bound = np.zeros(ROUND_SECTORS)
    np.maximum.at(bound, sector, rad)  # where the square's inside ends, each way
    free = (reach > 0) & (reach < bound - ROUND_CLIP_MARGIN)
    if free.sum() < ROUND_MIN_FREE:
        return bool(reach.max() <= ROUND_MAX_REACH)  # cut off nearly all round
    # The outline: the body's farthest pixel in each free direction; a circle through them (Kasa's fit).
    order = np.lexsort((body_rad, sector))
    last = np.flatnonzero(np.r_[sector[order][1:] != sector[order][:-1], True])
    ends = order[last]
    ends = ends[free[sector[ends]] & d[ends]]
    x, y = geo.dx[ends], geo.dy[ends]
    a = np.stack([2 * x, 2 * y, np.ones_like(x)], axis=1)
    cx, cy, c = least_squares(a, x * x + y * y)
    radius = math.sqrt(max(c + cx * cx + cy * cy, 0.0))
    farthest = float(np.hypot(geo.dx[d] - cx, geo.dy[d] - cy).max())
    return radius <= ROUND_MAX_REACH and farthest <= ROUND_MAX_RATIO * radius


def _largest_part(d: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """The pixels ``d`` of one square's inside, keeping only their largest 8-connected part."""
    patch = np.zeros(geo.inside.shape, np.uint8)
    patch[geo.inside] = d
    count, labels, stats, _ = cv2.connectedComponentsWithStats(patch, connectivity=8)
    if count <= 2:  # the background and at most one part
        return d
    largest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return labels[geo.inside] == largest


def _elongation(w: np.ndarray, geo: _SquareMasks) -> float:
    """Length to width (square root of the principal second moments) of the pixels ``w``."""
    mass = float(w.sum())
    if mass < MIN_EVIDENCE_PIXELS:
        return 1.0
    x, y = geo.dx[w], geo.dy[w]
    # x.var(), y.var() and the mean of (x - x.mean()) * (y - y.mean()), step for step as numpy takes
    # them (float32 sums, each divided by the count in float64), without the wrappers' overhead.
    n = np.intp(x.size)
    ex = x - np.float32(np.add.reduce(x) / n)
    ey = y - np.float32(np.add.reduce(y) / n)
    sxx = np.float32(np.add.reduce(ex * ex) / n)
    syy = np.float32(np.add.reduce(ey * ey) / n)
    sxy = float(np.float32(np.add.reduce(ex * ey) / n))
    half_tr = (sxx + syy) / 2.0
    root = math.sqrt(max(half_tr**2 - (sxx * syy - sxy**2), 0.0))
    return math.sqrt((half_tr + root) / max(half_tr - root, 1e-6))
