"""Step 4 of the package's overview against the plate (:func:`_read_squares`): the bare board
measured in the squares' corners as one robust surface, what differs from it judged as a piece (see
:mod:`.pieces`), its colour read on the grid's own tone scale, or the pieces' own where that scale is
too short for them (:func:`_scale_of_the_pieces`), or the other kind's where one kind lies on the
wrong side of the plate (:func:`_two_kinds_by_the_board`, :func:`_black_above_the_plate`); mid-tone
pieces told by the board's other pieces (:func:`_mid_tones_by_the_board`), and the plate's reading
combined with the ring's (:func:`_combine`; the ring's: :mod:`.ring`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Final, NamedTuple

import cv2
import numpy as np

from .geometry import GRID_SQUARES, _Canon, _read_only
from .model import (
    CHROMA_TAIL_TO_SIGMA,
    FOREIGN_BACKGROUND_FRAC,
    FOREIGN_ELONGATION,
    MAD_TO_SIGMA,
    DetectorParams,
    SquareRead,
)
from .pieces import (
    FAINT_BODY_K,
    HYPOT_BAND,
    HYPOT_FLOOR,
    PIECE_MAX_EDGE,
    PIECE_MAX_SATURATION,
    PIECE_MIN_RADIUS,
    _bgr_of,
    _body,
    _coloured,
    _elongation,
    _faint_pieces,
    _green_of,
    _hypot_within,
    _middle_grey,
    _middles,
    _piece_evidence,
    _plate_shows,
    _reaches_corners,
    _rim_piece,
    _rim_pieces,
    _round,
    _saturation,
    _shape_problem,
    _square_masks,
    _SquareMasks,
    _tint,
)
from .stats import brightest_channel, least_squares, median, median_along, percentile, row_norms
from .tails import blur_tails, middle_tones

#: a piece whose middle's tone is within this of the plate's end of the grid's scale (0 the lines', 1
#: the plate's tone) is read at most this confident.
PLATE_TONE_NEAR: Final = 0.15
PLATE_TONE_CONFIDENCE: Final = 0.85
#: ...and a blob too small for a piece of that tone is the light on the plate: the square is read bare,
#: this confident.
SMALL_LIGHT_CONFIDENCE: Final = 0.75
#: the rim look's threshold, as a share of the texture look's: a rim is judged on the means of
#: sectors of a ring, many pixels each, whose noise is a fraction of one pixel's (see _rim_piece).
RIM_THRESHOLD_SHARE: Final = 0.5
#: a piece whose evidence is under this many times the fill a piece needs is barely one: its rim or
#: its shadow's arc is looked for, which makes it whole (see _read_squares).
BARE_PIECE_EVIDENCE: Final = 2.0
#: ...and the shape problems a rim or a shadow's arc on a circle overrules: a white piece's shadow on
#: a white plate is a crescent as long as the piece is wide (elongated) and may reach into a corner
#: (too large). (Adding "too-large": on the tuning sets +8 squares right, 7 fewer clear frames
#: flagged, nothing read wrong or an occluded frame read clear.)
RIM_RESCUES: Final = ("elongated", "too-large")
#: a pixel differs in colour only beyond this share of the plate's own colour (opponent channels).
CHROMA_OF_PLATE: Final = 0.35
#: the faint look's coarser scale: a Gaussian this many pitches wide (sigma), and the least plate
#: texture (grey levels) it assumes there (a rendered plate can be flat to the level).
FAINT_SMOOTH: Final = 0.03
FAINT_SMOOTH_FLOOR: Final = 0.5
#: a piece's middle of which this share is far above the plate and as much far below is two things (a
#: pen across a piece), not a piece (see _two_tone); far: this many thresholds of grey, and this share of
#: the grid's contrast (a white piece's dark rim on a light plate is near).
TWO_TONE_SHARE: Final = 0.2
TWO_TONE_K: Final = 3.0
TWO_TONE_CONTRAST: Final = 0.25
#: a body whose middle sits within this of the middle of the grid's tone scale (0 dark, 1 light) is as
#: far from a black piece as from a white one: not a piece.
MID_TONE: Final = 0.15
#: a plate darker than this (with light lines) or lighter than that (with dark lines) may hide a piece
#: of its own tone (black pieces are grey 15-55 as exposed, white ones 205-245): a bare square read there
#: is this confident at most.
BLACK_PIECE_GREY: Final = 70.0
WHITE_PIECE_GREY: Final = 195.0
HIDING_PLATE_CONFIDENCE: Final = 0.85
#: ...and so may any plate with a clean piece of its own end of the scale within this of its tone (a
#: white plate in shade, under WHITE_PIECE_GREY, with white pieces on it): see _pieces_like_the_plate.
PLATE_LIKE_PIECE_TONE: Final = 0.3
#: a square read bare whose middle is further than this from the plate's end of the scale, towards the
#: lines' end, is not bare.
NOT_PLATE_TONE: Final = 0.6
#: ...nor one further than this beyond the plate's tone, away from the lines' (the glow of light lines
#: darkens a dark square's middle, and a lamp lights a light one's, by less).
BEYOND_PLATE_TONE: Final = 1.0
#: ...nor is it when the grid's light lines stand less than FAINT_LIGHT_LINES grey levels off the plate
#: (an engraved groove, its lit wall taken for the lines) and the middle within NEAR_PLATE_GREY of the
#: plate: that scale is a few levels long, and a middle 4 levels off reads 0.8 of the way to the lines.
#: (Our renderer's thin engraved grooves, 40 frames: 86.4% -> 88.3%, one clear frame read with six
#: phantom white pieces at 0.75 read whole. Tuning sets: three occluded frames read otherwise, still
#: flagged.)
FAINT_LIGHT_LINES: Final = 15.0
NEAR_PLATE_GREY: Final = 8.0
#: a square read bare on a coloured plate (its opponent colour this many grey levels from grey at
#: least) whose middle has under this share of the plate's colour, and is darker in the plate's
#: brightest channel than half-way from the dark lines (or black) to the plate, holds a black piece (see
#: _black_by_colour), this confident at most. (On the tuning sets: +6 squares right, 6 fewer black
#: pieces read bare, none read wrong more; 10-20 levels and a share of 0.3-0.4 give the same. With
#: light lines too, since session 39: +2 on the tuning sets and apart, black pieces on green plates
#: with white lines, nothing lost.)
COLOURED_PLATE_CHROMA: Final = 20.0
GREY_MIDDLE_SHARE: Final = 0.3
BLACK_BY_COLOUR_CONFIDENCE: Final = 0.75
#: mid-tone pieces in one group of tones this tight, this far from all the other pieces' tones (on the
#: same scale), take the colour of their side (see _mid_tones_by_the_board), this confident at most.
TONE_GROUP_SPREAD: Final = 0.2
TONE_GROUP_GAP: Final = 0.8
BOARD_TONE_CONFIDENCE: Final = 0.8
#: two or more clean pieces (or one, beside a group of two or more) this far beyond an end of the grid's
#: scale (in the grid's contrasts: the lines are faint beside them, or the plate's grey is dark) show
#: that the scale is too short for them; the other pieces, one group this tight within the scale's two
#: ends and this far from them, are then of the other colour, this confident at most (see
#: _scale_of_the_pieces).
BEYOND_SCALE: Final = 1.5
BEYOND_GAP: Final = 1.0
RESCALED_CONFIDENCE: Final = 0.8
#: a square's corners whose colour is off the board's surface by less than this share of the plate's
#: colour are not taken for a sheet by their colour alone (see _chroma_weighed).
BACKGROUND_PLATE_CHROMA: Final = 0.3
#: with dark lines, clean pieces this far below the plate (in the grid's contrasts), the others at most
#: this share of that below it: a piece of the others whose middle keeps this share of its plate's grey
#: is white (see _two_kinds_by_the_board).
FAR_FROM_END: Final = 1.5
NEAR_SHARE: Final = 0.5
WHITE_PLATE_SHARE: Final = 0.75
#: with dark lines on a plate darker than black pieces (black engraved lines on a black board), white
#: pieces this far above the plate (in the grid's contrasts) at least, and other pieces above it at most
#: this share of the way, whose middles keep at most this share of the darkest white's grey: those are
#: black (see _black_above_the_plate). White pieces (205-245 grey) on a plate of 25 with lines of 12
#: stand 14 contrasts above it, black ones (15-55) 0-2.3: a twentieth to a sixth of the way, at a
#: quarter of the white's grey or less (0.4 leaves light falling off across the board). White pieces
#: among themselves differ by a fifth; a white piece on a patch of plate in shade stands far above the
#: others, but they keep most of its grey.
BLACK_ABOVE_FAR: Final = 4.0
BLACK_ABOVE_SHARE: Final = 0.25
BLACK_GREY_SHARE: Final = 0.4
#: a piece nearer the plate's tone than this share of the way the other pieces of its colour stand from
#: it (when they stand ODD_TONE_GROUP or more from it) is something else (see _odd_tones_by_the_board).
ODD_TONE_SHARE: Final = 0.3
#: ...with light lines on a dark plate, this share: the scale is wide there (white pieces two or more of
#: the grid's contrasts off the plate), and a glossy black piece lit grey by a point light lies as light
#: as the lines, about 0.4 of the way to the white pieces. (On the tuning sets at 0.45: three black
#: pieces read white fewer, nothing read right lost; at 0.55, two squares right lost on coloured plates.
#: With dark lines the white pieces lie a fraction of the contrast off a light plate, and 0.45 lost 15
#: squares right, white pieces shaded beside others.)
ODD_TONE_SHARE_LIGHT_LINES: Final = 0.45
ODD_TONE_GROUP: Final = 0.5
#: ...unless its square's corners are lit (a white piece) or shaded (a black one) this share of the
#: grid's contrast beyond the level the other squares predict, by the piece's own blur, and it is not
#: so on the board's plate (see _odd_tones_by_the_board).
ODD_LIT_CORNERS: Final = 0.05
#: ...and a piece on the other side of the plate's tone from every other of its colour, both at least
#: this far from it, is odd whatever their number. (0.15 let a coin at 0.851 beside whites at 1.26 pass;
#: at 0.1, occluded frames read clear 20 -> 19 of 240 on the eight tuning runs, squares right unchanged.)
ODD_SIDE_MIN: Final = 0.1
#: A piece not odd that stands less than this share of the way the other pieces of its colour
#: stand from the plate's tone (a glossy black piece's highlight read white among white pieces) is
#: read at most RESCALED_CONFIDENCE sure: pieces of one kind are alike. (On the tuning sets: the
#: three squares read the wrong kind at 0.9 or more that this catches; 162 of 15,543 right pieces
#: drop below 0.9 at 0.75, 323 at 0.85.)
SHORT_OF_KIND_SHARE: Final = 0.75
#: a square read bare whose middle stands beyond the plate's tone, away from the lines', between these
#: shares of the way the clean pieces of the kind that lies there stand (two at least, their median this
#: far beyond the plate at least; or one, this much further) holds one of them, read at most
#: RESCALED_CONFIDENCE sure (see _like_the_far_kind). (On the tuning sets and apart: 10 pieces read bare
#: found by two or more, 3 more by one, no bare square lost; a share of 0.8 finds one more, but an
#: occluded frame's bare square sits at 0.82 and a clear one at 0.79; a mis-placed grid's bare squares
#: stand 1.9 times as far as its black pieces; black pieces on a dark plate at 0.22, hardly seen,
#: stand as far as its bare squares, so one piece must stand 0.3 off.)
FAR_KIND_SHARE: Final = (0.85, 1.5)
FAR_KIND_MIN: Final = 0.15
FAR_KIND_ALONE_MIN: Final = 0.3
#: a bare square's middle this far off the plate's tone (grid scale) is read at most this sure (see
#: _bare_off_the_plate).
BARE_OFF_TONE: Final = 0.15
BARE_OFF_CONFIDENCE: Final = 0.75
#: ...and unknown when its middle is nearer the median tone of one colour's pieces than this share of
#: its distance from the plate's (clearly like them: a bare square of a blue plate in a black foam
#: piece's shadow stands about as far from both, contest_table 3/185).
BARE_LIKE_PIECES: Final = 0.5
#: a piece seen only at the plate's texture (see pieces._faint_piece): its reading is never certain,
#: this confident at most.
FAINT_MAX_CONFIDENCE: Final = 0.85
#: a square read bare where the lines' blur taken out of its corners (see .tails) is this share of the
#: least a piece differs by (``DetectorParams.piece_min_frac`` of the grid's contrast) or more is read
#: this confident at most: the blur's tail decided it. (On the tuning sets, a defocused small board's
#: white piece read bare at 0.92 without this.)
TAIL_BARE_SHARE: Final = 0.5
TAIL_BARE_CONFIDENCE: Final = 0.85
#: robust passes of the plate surface fit, the residual (in robust sigmas) beyond which a corner is
#: dropped, and the fewest corners the fit keeps.
PLATE_FIT_PASSES: Final = 3
PLATE_OUTLIER_K: Final = 3.5
PLATE_MIN_CORNERS: Final = 12
#: a corner whose level is off its square's by more than this many times the median corner's (plus
#: the noise) is not plain board (a shadow reaches it): the board's variation is measured without it.
PLAIN_CORNER_K: Final = 2.0
#: the inside of a square keeps at least this many image pixels from its lines (their blur).
MARGIN_MIN_PX: Final = 2.5
#: a square the two readings disagree on is read with at most this confidence.
DISAGREEMENT_MAX_CONFIDENCE: Final = 0.75
#: A glossy black piece on a plate as dark as itself (light lines) differs by its highlight alone: a
#: small bright blob near the square's middle. Within ``HIGHLIGHT_REACH`` pitches of the middle, the
#: brightest pixels (the ``HIGHLIGHT_PEAK_RANK``-th) stand ``HIGHLIGHT_MIN_PEAK`` of the grid's contrast or
#: more off the plate; those over half that peak cover ``HIGHLIGHT_MAX_AREA`` square pitches at most,
#: and no more of them lie beyond the reach (in the piece's body zone) than within it: a lamp's
#: reflection on a glossy plate, a white piece or the lines' glow are larger or spread; a pen's shine
#: is long. Such a square is read black, this confident at most. (Chosen on the tuning sets, light
#: lines: of 79 black pieces read bare, 12 pass at plates up to grey 60 and a peak of 0.25, no bare
#: square; at a peak of 0.2, 2 bare squares too. As built, plates up to ``BLACK_PIECE_GREY``: 12 squares
#: more right, one clear frame more passed wrong and one more flagged, no bare square read black
#: that was read otherwise.)
HIGHLIGHT_REACH: Final = 0.3
HIGHLIGHT_PEAK_RANK: Final = 3
HIGHLIGHT_MIN_PEAK: Final = 0.25
HIGHLIGHT_MAX_AREA: Final = 0.05
HIGHLIGHT_CONFIDENCE: Final = 0.75
#: a piece read between the plate and the middle of the grid's scale is read this confident at most.
BETWEEN_CONFIDENCE: Final = 0.85
#: a square both readings see bare is read at least as sure as the ring's reading, up to this.
AGREED_BARE_CONFIDENCE: Final = 0.75
#: a full board of large pieces: when this many squares' corners are off the board's surface, the
#: squares are read again against the surface alone, with the plate's variation taken in the quietest
#: FULL_BOARD_QUIET_SHARE of the corners; a square flagged for its corners alone takes that reading when
#: it is a clean piece, at most FULL_BOARD_CONFIDENCE sure (see _read_squares).
FULL_BOARD_SQUARES: Final = 3
FULL_BOARD_QUIET_SHARE: Final = 25.0
FULL_BOARD_CONFIDENCE: Final = 0.85
#: a ring whose level is off the plate by more than this share of the grid's contrast lies on a body.
RING_OFF_PLATE: Final = 0.08
#: what the ring reading flags that is kept whatever the corners' reading says.
RING_FLAGS_KEPT: Final = ("elongated",)
#: an elongated body this far from its plate's tone on the grid's scale (0.5: the scale's middle) is
#: a piece when the pixels off the plate as its middle is are round (see _read_squares). (On the tuning
#: sets: 7 more squares right, 7 fewer unknown, none wrong more; without the tone's condition, a stain
#: on a white plate and a shadow on a dark one read as two phantom pieces.)
ROUND_BODY_FAR_TONE: Final = 0.7
#: a plate whose channels spread over more than this share of its brightest one is saturated (green,
#: blue: its grey is far below its lightness); a piece's tone is then taken in the brightest channel.
PLATE_SATURATED: Final = 0.6
#: the plate beyond the grid: a band this far out from the outer lines' edges (pitches), where no piece
#: stands and a sheet over one square does not reach. A square flagged "background" with nothing in it
#: differing from its corners is bare when its middle's colour is within ``BEYOND_PLATE_MATCH`` of the
#: grid's contrast of that band's in every channel (on the tuning runs: bare squares 0.05-1.3, pieces
#: 1.4 and more), and never certain. (The band ends 0.12 out: a contest plate may end 0.15 beyond its
#: lines' edges, and at 0.16 a grid placed a pixel or two out took the table's white into the band's
#: median. On the tuning sets, against 0.16: 2 squares more right, none less.)
BEYOND_BAND: Final = (0.04, 0.12)
BEYOND_PLATE_MATCH: Final = 0.25
BEYOND_PLATE_CONFIDENCE: Final = 0.75
#: ...or, on a saturated plate, when it is the plate's colour in another light: each channel's share of
#: the brightest within this of the plate's, at a brightness within this ratio of it (the issue's 2:1
#: gradient). (On the tuning sets a spotlit bare square of a blue or green board is within 0.015.)
SAME_HUE_MATCH: Final = 0.05
OTHER_LIGHT_RATIO: Final = 2.0


def _median_of_nine(values: np.ndarray) -> float:
    """``float(np.median(values))`` of the nine squares' ``values`` (9,): the fifth smallest, which an
    odd count needs no mean for, without np.median's overhead."""
    return sorted(values.tolist())[GRID_SQUARES**2 // 2]


def _hypot_above(b: np.ndarray, r: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """``np.hypot(b, r) > limit[:, None]`` for rows of values ``b``, ``r`` (N, P) and a limit per row
    (N,), the same booleans: the plain root of the sum of squares (several times cheaper than hypot)
    everywhere but within ``HYPOT_BAND`` of the limit, where its rounding could differ from hypot's."""
    approx = np.sqrt(b * b + r * r)
    lim = limit[:, None]
    above = approx > lim
    unsure = np.abs(approx - lim) <= HYPOT_BAND * lim + HYPOT_FLOOR
    if unsure.any():
        rows, cols = np.nonzero(unsure)
        above[rows, cols] = np.hypot(b[rows, cols], r[rows, cols]) > limit[rows]
    return above


def _masked_medians(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``np.median(values[k][mask[k]], axis=0)`` for every row ``k`` of ``values`` ((N, P) or (N, P, C);
    ``mask`` (N, P)) at once, NaN for a row with nothing in it: the same numbers (the middle value, or
    the mean of the middle two), without a call per row. The masked-out values sort last as NaN."""
    # Channels first, so that each row's values lie side by side for the sort (the same values).
    v = (
        np.where(mask, values, np.nan)
        if values.ndim == 2
        else np.where(mask[:, None], values.swapaxes(1, 2), np.nan)
    )
    v.sort(axis=-1)
    count = mask.sum(axis=1)
    # The middle two of each sorted row by flat index (np.take_along_axis's wrapper costs more than
    # the work on these few rows): row r of the (rows, K) view starts at r * K.
    per_row = v.size // (len(count) * v.shape[-1])  # the channels: each shares its row's count
    starts = np.arange(v.size // v.shape[-1]).reshape(len(count), per_row) * v.shape[-1]
    flat = v.ravel()
    lo = flat.take(starts + ((np.maximum(count - 1, 0) // 2)[:, None]))
    hi = flat.take(starts + ((count // 2)[:, None]))
    return ((lo + hi) / 2).reshape(v.shape[:-1])


def _corner_medians(values: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """The median of ``values`` ((9, P, C), over each square's inside) in each corner of each square:
    (Q, 9, C), quadrant by quadrant, as ``np.median`` gives them."""
    # Each corner's values in a row (channels first), the padding NaN so that it sorts last; then
    # each quadrant's middle two, which its count of real pixels fixes (the same as _masked_medians).
    z = np.take(values, geo.corner_index, axis=1).swapaxes(2, 3)  # (9, Q, C, K)
    v = np.where(geo.corner_valid[:, None, :], z, np.nan)
    v.sort(axis=-1)
    quadrants = np.arange(len(geo.corner_index))
    # (Advanced indices on axes 1 and 3 put the quadrants first: (Q, 9, C).)
    return (v[:, quadrants, :, geo.corner_lo] + v[:, quadrants, :, geo.corner_hi]) / 2


def _plate_surface(values: np.ndarray, a: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The board's plate as a smooth surface: a quadratic in the canonical coordinates fitted robustly to
    ``values`` (N, C) measured at the points whose :func:`.pieces._plate_design` is ``a`` (the squares'
    corners, which no piece covers), then evaluated at the points whose design is ``at`` (M, 6). Corners that
    something else covers (a shadow, a hand, a sheet) stray from the others and are dropped. Returns
    the surface at ``at`` (M, C) and at the corners (N, C)."""
    keep = np.ones(len(values), bool)
    coef = np.zeros((a.shape[1], values.shape[1]))
    for _ in range(PLATE_FIT_PASSES):
        coef = least_squares(a[keep], values[keep])
        resid = row_norms(values - a @ coef)
        scale = MAD_TO_SIGMA * median(resid[keep]) + 1.0
        new_keep = resid <= PLATE_OUTLIER_K * scale
        if new_keep.sum() < PLATE_MIN_CORNERS or (new_keep == keep).all():
            break
        keep = new_keep
    return at @ coef, a @ coef


#: a piece's whole disc, out to this share of its edge radius: where its tone is read when its middle
#: is of another kind (see _washed_middles), at most this confident.
DISC_OF_EDGE: Final = 0.8
WASHER_CONFIDENCE: Final = 0.75
#: ...when the middle is this far from the rest of the disc on the grid's tone scale, and the part of
#: the disc like the middle is round: no longer than this over its width.
WASHER_APART: Final = 0.3
WASHER_ELONGATION: Final = 2.0
#: three or more bodies of one tint and tone in the dark half of the scale are black pieces: their
#: colours (opponent colour over the brightest channel) within ALIKE_HUE, their greys within ALIKE_GREY
#: grid contrasts, of the group's median (see _black_pieces_alike).
ALIKE_MIN: Final = 3
ALIKE_HUE: Final = 0.12
ALIKE_GREY: Final = 0.2


def _read_squares(
    canon: _Canon,
    half_width: float,
    line_level: np.ndarray,
    pitch_px: float,
    noise: float,
    params: DetectorParams,
    dark_lines: bool,
    full_board: bool = False,
) -> tuple[list[SquareRead], np.ndarray]:
    """(state, confidence, piece evidence, lightness, foreign, plate grey) of every square
    (``dark_lines``: the grid's polarity); ``foreign`` is "" or why something that is not a piece is in
    the square. And each square's piece as a disc (9, 4): its centre (pitches from the square's), its
    edge radius (0 where nothing differs) and its middle's grey.

    The *plate* (the bare board) is measured where no piece can be: in the corners of the nine squares,
    fitted as one smooth surface over the board (so gradients and vignetting pass, and a corner that a
    shadow or a hand darkens is outvoted). With dark lines, their blur's tail in the corners is taken out
    first (:func:`.tails.blur_tails`), and a bare reading that the tail decided is never certain. A
    pixel *differs* when its grey or its colour is clearly off that surface (beyond the plate's own noise
    and texture, and a fraction of the grid's contrast).

    *Whether* a piece is there: a piece is a round body with an edge. Around the centroid of what
    differs, the share of differing pixels is taken ring by ring: a piece of any tone fills its disc
    (a dark or light face), or at least its outline (a rim, a shadow: a white piece on a white plate);
    bare board leaves every ring near zero. The evidence is the best ring's share. Where that shows no
    piece, faint looks follow (:func:`.pieces._faint_pieces`): at the plate's texture, then, for a light
    body, at a coarser scale.
    *Which* piece: the median grey of the piece's middle, on the scale the grid itself gives around the
    square, from its dark tone (0) to its light tone (1) (plate and lines, whichever is which): below the
    middle is black. On a saturated plate with dark lines, the plate's and the middle's brightest
    channel instead of grey. A highlight or a rim is a minority of the middle and changes nothing.
    A square read bare whose middle is far from the plate's tone is not bare (its corners took a large
    piece's level), and a bare reading on a plate that could hide a piece is never certain.

    *A full board of large pieces*: the pieces' blur and shadows reach the corners, which then take the
    pieces' levels (lighter round white pieces, darker round black ones) and vary within themselves;
    every threshold swells and the squares' corners lie off the board's surface ("background"). When
    ``FULL_BOARD_SQUARES`` or more squares are so, they are read again (``full_board``) against the
    board's smooth surface alone, not each square's own corners, with the plate's variation taken in
    its quietest corners; a square flagged for its corners alone takes that reading when it is a clean
    piece, never certain.
    """
    s, m = canon.px, canon.margin
    # Clear of the lines' blur: a margin of a few image pixels at least.
    margin = max(params.ring_margin, MARGIN_MIN_PX / max(pitch_px, 1.0))
    geo = _square_masks(s, m, round(half_width, 3), round(margin, 3))
    grey = canon.img.ravel()[geo.pixels]  # (9, P): the inside of each square
    colour_px = None
    # (9, P, C): grey, and with colour the opponent channels, written in place (no stack of copies).
    data = np.empty((*grey.shape, 1 if canon.colour is None else 3), grey.dtype)
    data[..., 0] = grey
    if canon.colour is not None:
        colour = colour_px = np.take(canon.colour.reshape(-1, 3), geo.pixels, axis=0)
        # Opponent colour (blue-green, red-green): what the grey level cannot see.
        np.subtract(colour[..., 0], colour[..., 1], out=data[..., 1])
        np.subtract(colour[..., 2], colour[..., 1], out=data[..., 2])
    n_ch = data.shape[-1]
    # Each square's four corner medians, then one surface through all of them.
    vals = _corner_medians(data, geo)  # (Q, 9, C)
    # With dark lines, the corners as the plate would be without the lines' blur in them (see .tails).
    tail_at_corners = 0.0
    if dark_lines and not full_board:
        tones = middle_tones(grey, geo, vals[..., 0], line_level)
        tail = blur_tails(canon.img, geo, s, m, tones, noise)
        if tail.any():
            data[..., 0] += tail
            vals[..., 0] = _corner_medians(data[..., :1], geo)[..., 0]
            tail_at_corners = median(tail[geo.corner_at])
    vals = vals.reshape(-1, n_ch)
    plate_px, plate_corners = _plate_surface(vals, geo.corner_design, geo.pixel_design)
    # The surface gives the plate's shape; each square's own corners its level (median of four: one
    # corner in a shadow does not move it), so a square lit or clipped unlike the surface stays bare.
    n_q = len(geo.corner_index)
    own = median_along((vals - plate_corners).reshape(n_q, 9, n_ch), 0)  # (9, C)
    if full_board:
        own = np.zeros_like(own)  # the corners hold the pieces' levels: the board's surface alone
    plate = plate_px.reshape(9, -1, n_ch)
    plate += own[:, None, :]  # (in place: the surface at the pixels is not used again)
    dev = data - plate  # (9, P, C)
    if canon.slack is not None:
        # Off the plate by less than what an estimate taken out of the view may have got wrong: the plate.
        slack = canon.slack.ravel()[geo.pixels]
        dev[..., 0] = np.sign(dev[..., 0]) * np.maximum(np.abs(dev[..., 0]) - slack, 0.0)
    # How much bare board varies (noise, texture, JPEG) in the corners, pooled over the board: over the
    # corners whose level the plate explains (a large piece's shadow sets a corner apart from its
    # square's level; that is the piece, not the plate, and it would hide faint pieces everywhere).
    level_off = np.abs((vals - plate_corners).reshape(n_q, 9, n_ch)[..., 0] - own[None, :, 0])  # (Q, 9)
    plain = level_off <= PLAIN_CORNER_K * median(level_off) + noise
    in_plain = geo.corner_valid[None, :, :] & plain.T[:, :, None]  # (9, Q, K)
    # (Never below the image's own noise: the corners are small where the lines are thick.) Light lines
    # on a dark plate glow into every corner (the plate darker in the middle than near the lines, as
    # much as a faint piece): there, all the corners' variation.
    if median(line_level) > median(plate[:, 0, 0]):
        in_plain = np.broadcast_to(geo.corner_valid[None, :, :], in_plain.shape)
    vary = max(MAD_TO_SIGMA * median(np.abs(dev[:, geo.corner_index, 0][in_plain])), noise)
    # ...and how much it varies within one corner, around that corner's own level: the plate's texture
    # alone. Soft shadows of large pieces reach some corners and set them apart from the surface, which
    # swells ``vary``; a white piece a few grey levels off a white plate then stays under it.
    texture = max(MAD_TO_SIGMA * median(_corner_spreads(dev[..., 0], geo)), noise)
    if full_board:
        # The pieces' edges cross most corners: the plate's own variation is in the quietest.
        texture = vary = max(MAD_TO_SIGMA * _quiet_corner_spread(dev[..., 0], geo), noise)
    plate_grey = plate[..., 0].mean(axis=1)  # (9,)
    contrast = np.abs(line_level - plate_grey)  # (9,) the grid's own contrast around each square
    scale = _median_of_nine(contrast)
    t_grey = np.maximum(params.piece_noise_k * vary, params.piece_min_frac * contrast)
    differs = np.abs(dev[..., 0]) > t_grey[:, None]
    if n_ch == 3:
        # Each pixel's chroma off the plate (hypot of the two opponent deviations): exactly in the
        # corners, whose values set the scale; elsewhere only compared with a threshold (below).
        c_corner = np.hypot(dev[:, geo.corner_index, 1], dev[:, geo.corner_index, 2])[in_plain]
        # Chroma is coarsely quantised (8-bit channels, JPEG's subsampled colour): the median deviation
        # is often 0 while a tenth of the pixels stray by several levels, so the tail sets the scale too.
        vary_c = max(
            MAD_TO_SIGMA * median(c_corner),
            CHROMA_TAIL_TO_SIGMA * percentile(c_corner, 90),
        )
        # Pieces are black or white: on a coloured plate they differ by about the plate's own colour,
        # so a blotch of JPEG colour a fraction of that is not one.
        # (The mean over each square's pixels, summed pixel by pixel as numpy sums this strided view,
        # from a copy laid out pixel-major, which sums the same way several times faster.)
        chroma_sum = np.ascontiguousarray(plate[..., 1:].swapaxes(0, 1)).sum(axis=0)
        plate_chroma_mean = chroma_sum / plate.shape[1]  # (9, 2)
        plate_chroma = row_norms(plate_chroma_mean)  # (9,)
        t_chroma = np.maximum.reduce(
            [
                np.full(9, params.piece_noise_k * vary_c),
                params.piece_min_chroma * contrast,
                CHROMA_OF_PLATE * plate_chroma,
            ]
        )
        differs |= _hypot_above(dev[..., 1], dev[..., 2], t_chroma)
    # The same at the plate's texture: more sensitive, and more easily fooled by shadows and stains,
    # so only a second look where the first sees nothing (below). Twice: first with the grid's contrast
    # as a floor (the whole of a faint white piece stands out), then at the texture alone (a black
    # piece a few levels off a plate as dark as itself).
    t_looks = [
        np.maximum(params.piece_noise_k * texture, params.piece_min_frac * contrast),
        np.full(9, params.piece_noise_k * texture),
    ]
    # A square's corners off the board's surface: something flat covers it (a sheet, a hand), unless a
    # clean piece shows (below).
    background = row_norms(_chroma_weighed(own, vals, scale)) > FOREIGN_BACKGROUND_FRAC * scale
    # (...though a full board is still told by them: see below.)
    pale = (row_norms(own) > FOREIGN_BACKGROUND_FRAC * scale) & ~background
    f0 = params.piece_min_fill
    evidences, centres_off, edges = _piece_evidence(differs, geo, geo.body_zone)
    # The second look, only where the first saw nothing, or nothing of a piece's size (the highlight
    # alone of a glossy black piece on a plate nearly as dark).
    white_from = np.minimum(line_level, plate_grey) + 0.5 * contrast
    left = ((evidences < f0) | (edges < PIECE_MIN_RADIUS)) & ~background
    faint = _faint_pieces(t_looks, differs, dev[..., 0], grey, left, plate_grey, white_from, geo, f0)
    # The third look, at a coarser scale: a white piece a few grey levels off a white plate under a
    # camera's noise is a body that stands out of the plate when each pixel is averaged with its
    # neighbours; noise and grain finer than that average away.
    # (Dark lines only: on a dark plate a light body reads black, and is as likely the lines' glow.)
    still = left & (line_level < plate_grey)
    still[list(faint)] = False
    if still.any():
        smooth = cv2.GaussianBlur(canon.img, (0, 0), FAINT_SMOOTH * s).ravel()[geo.pixels] - plate[..., 0]
        texture_s = max(MAD_TO_SIGMA * median(_corner_spreads(smooth, geo)), FAINT_SMOOTH_FLOOR)
        t_smooth = np.full(9, params.piece_noise_k * texture_s)
        found = _faint_pieces([t_smooth], differs, smooth, grey, still, plate_grey, white_from, geo, f0)
        for k, piece in found.items():
            # A light body only, clearly off the plate: a dark one, or an outline alone, is as likely
            # the glow of light lines at this scale.
            if _middle_grey(smooth[k], piece, geo) > FAINT_BODY_K * float(t_smooth[k]):
                faint[k] = piece
    # The last look: a rim alone, a circle darker than the middle all round at the plate's texture.
    rim_rows = np.array([k for k in np.flatnonzero(left).tolist() if k not in faint], dtype=np.int64)
    if rim_rows.size:
        rim_thresholds = RIM_THRESHOLD_SHARE * t_looks[1][rim_rows]
        rim_dark = line_level[rim_rows] < plate_grey[rim_rows]
        rims = _rim_pieces(dev[rim_rows, :, 0], geo, rim_thresholds, rim_dark, contrast[rim_rows])
        faint.update({int(k): piece for k, piece in zip(rim_rows, rims, strict=True) if piece is not None})
    most = np.ones(9)  # the highest confidence each square's reading may have
    if faint:
        differs = differs.copy()
        for k, (d, evidence, centre, edge) in faint.items():
            differs[k], evidences[k], centres_off[k], edges[k] = d, evidence, centre, edge
            most[k] = FAINT_MAX_CONFIDENCE
    # Each square's middle (only pixels of the core can be in it) and its median grey, all at once.
    middles = _middles(geo, centres_off, edges)
    middle_grey = _masked_medians(grey[:, geo.core], middles)
    pieces = np.flatnonzero(evidences >= f0)
    washed = _washed_middles(grey, geo, centres_off, edges, middle_grey, line_level, plate_grey, pieces)
    for k, body in washed.items():
        middles[k], middle_grey[k] = body, median(grey[k, geo.core][body])
        most[k] = min(float(most[k]), WASHER_CONFIDENCE)
    reaches = _reaches_corners(differs, geo)
    why = ["reaches-corners" if reaches[k] else "" for k in range(9)]
    corners_off = background.copy()  # the squares' corners off the board's surface, whatever is in them
    round_bodies = np.zeros(9, bool)  # elongated, yet a round body: a large piece's blur reaching its lines
    for k in np.flatnonzero(evidences >= f0).tolist():
        if not why[k]:
            middle = np.zeros(geo.rad.size, bool)
            middle[geo.core] = middles[k]
            piece = (float(evidences[k]), centres_off[k], float(edges[k]))
            why[k] = _shape_problem(differs[k], dev[k, :, 0], piece, middle, geo, f0)
            if why[k] in RIM_RESCUES or (not why[k] and evidences[k] < BARE_PIECE_EVIDENCE * f0):
                # A white piece on a white plate differs by its rim and its shadow, a crescent on one
                # side that is as long as the piece is wide (elongated), or reaching into a corner
                # (too large), or barely a piece. A rim round it all the same (a circle darker than
                # the middle), or the shadow's arc on a circle (see pieces._rim_pieces), is a whole
                # piece; a pen is straight, and a sheet's or a palm's edge is no circle.
                threshold = RIM_THRESHOLD_SHARE * float(t_looks[1][k])
                dark = bool(line_level[k] < plate_grey[k])
                rim = _rim_piece(dev[k, :, 0], geo, threshold, dark, float(contrast[k]))
                if rim is not None:
                    why[k] = ""
                    evidences[k] = max(float(evidences[k]), rim[1])
                    most[k] = min(float(most[k]), FAINT_MAX_CONFIDENCE)
            if (
                why[k] == "elongated"
                and _far_from_the_plate(float(middle_grey[k]), float(line_level[k]), float(plate_grey[k]))
                and _round(_body(differs[k], dev[k, :, 0], middle), geo, centres_off[k])
            ):
                # A large piece far from the plate's tone (a black piece on a blue plate with black
                # lines) merges with its lines' blur, which lengthens what differs; its body, the
                # pixels off the plate as its middle is, is still round. A pen's body is not.
                why[k] = ""
                round_bodies[k] = True
                most[k] = min(float(most[k]), FAINT_MAX_CONFIDENCE)
            far = max(TWO_TONE_K * float(t_grey[k]), TWO_TONE_CONTRAST * float(contrast[k]))
            if not why[k] and k not in washed and _two_tone(dev[k, middle, 0], far):
                why[k] = "two-tone"  # a white pen across a black piece, a black one across a white piece
            # A clean round piece in a square whose corners are off the board's surface: its shadow and
            # rim reach them (a full board of large pieces). A sheet over the square leaves no piece.
            background[k] &= bool(why[k])
    why = ["background" if background[k] else w for k, w in enumerate(why)]
    looks_coloured = np.zeros(9, bool)
    shows_plate = np.zeros(9, bool)
    middle_colour: dict[int, np.ndarray] = {}  # each square's middle's median B, G, R, where taken
    clean = ~np.array([bool(w) for w in why])
    rows = np.flatnonzero((evidences >= f0) & clean)
    # The squares that may read bare on a coloured plate (see _black_by_colour).
    bare_on_colour = np.zeros(9, bool)
    if colour_px is not None:
        # The middles' colours, all at once: of the pieces, and of those squares.
        bare_on_colour = (evidences < f0) & clean
        bare_on_colour &= plate_chroma >= COLOURED_PLATE_CHROMA
        taken = np.flatnonzero(((evidences >= f0) & clean) | bare_on_colour)
        if taken.size:
            medians = _masked_medians(colour_px[taken[:, None], geo.core], middles[taken])
            middle_colour.update(zip(taken.tolist(), medians, strict=True))
        for k in rows.tolist():
            looks_coloured[k] = _coloured(
                middle_colour[k], int(middles[k].sum()), plate[k, 0, 1:], float(plate_grey[k])
            )
            off = abs(float(middle_grey[k]) - float(plate_grey[k])) / max(float(contrast[k]), 1e-3)
            shows_plate[k] = _plate_shows(middle_colour[k], off, float(plate_grey[k]), plate_chroma_mean[k])
        # Three or more bodies of one tint in the dark half of the scale: black pieces, tinted.
        dark_half = middle_grey <= np.minimum(line_level, plate_grey) + 0.5 * contrast
        looks_coloured &= ~_black_pieces_alike(
            looks_coloured & dark_half, middle_colour, middle_grey, contrast
        )
    # The light end of the scale, when it is a saturated plate: it is lighter than its grey says (a green
    # plate's grey is a black foam piece's in a bright room), so the plate's brightest channel, and the
    # middle's, like with like. Dark lines are about as dark in every channel. (Light lines on a dark
    # plate: in grey, as the lines are. Wood and pale plates: in grey, where a steel coin is mid-tone.)
    plate_light, middle_light = plate_grey, middle_grey
    by_light = np.zeros(9, bool)
    if colour_px is not None:
        by_light, plate_light = _saturated_plate(line_level, plate_grey, plate_chroma_mean, dark_lines)
        if by_light.any():
            middle_light = _masked_medians(brightest_channel(colour_px[:, geo.core]), middles)
    out: list[SquareRead] = []
    for k in range(9):
        evidence, problem = float(evidences[k]), why[k]
        dark_ref = min(float(line_level[k]), float(plate_grey[k]))
        if by_light[k]:
            tone = (float(middle_light[k]) - dark_ref) / max(float(plate_light[k]) - dark_ref, 1e-3)
        else:
            tone = (float(middle_grey[k]) - dark_ref) / max(float(contrast[k]), 1e-3)
        presence = min(1.0, (evidence - f0) / f0)
        plate_end = 1.0 if line_level[k] < plate_grey[k] else 0.0
        between_kinds = _between_kinds(float(plate_grey[k]), plate_end == 1.0)
        # A blob too small for a piece, or a lighter one too long for one, of the plate's own tone:
        # the light (a lamp's reflection on a glossy plate, brighter in the square's middle than its
        # corners), not a thing. (Darker and long: a white piece's shadow on a white plate.)
        lit = problem == "elongated" and (
            float(dev[k, differs[k], 0].mean()) > 0.0
            # (On a plate no piece's tone is near, a long patch of its tone is not a piece's shadow:
            # the glow of large pieces around a bare square, its corners lit and its middle not.)
            or not _could_hide_a_piece(float(plate_grey[k]), bool(line_level[k] < plate_grey[k]))
        )
        if (problem == "small" or lit) and abs(tone - plate_end) < PLATE_TONE_NEAR:
            out.append(("empty", SMALL_LIGHT_CONFIDENCE, evidence, tone, "", float(plate_grey[k])))
            continue
        if evidence < f0 and not problem:
            # How far the middle is from the plate's end of the scale, towards the other end (a middle
            # darker than a dark plate is the glow of light lines around it, not a piece).
            towards_lines = 1.0 - tone if line_level[k] < plate_grey[k] else tone
            # (Light lines a few levels off the plate, an engraved groove's lit wall, make a scale a
            # few levels long: a middle as near the plate in grey as its noise is far from it on that.)
            near_in_grey = (
                not dark_lines
                and float(contrast[k]) < FAINT_LIGHT_LINES
                and abs(float(middle_grey[k]) - float(plate_grey[k])) < NEAR_PLATE_GREY
            )
            if -BEYOND_PLATE_TONE <= towards_lines <= NOT_PLATE_TONE or near_in_grey:
                dark_end = float(line_level[k]) if line_level[k] < plate_grey[k] else 0.0
                if bare_on_colour[k] and _black_by_colour(
                    middle_colour[k], float(plate_grey[k]), plate_chroma_mean[k], dark_end
                ):
                    # Black foam on a deep blue board under dim light: as dark as the plate in grey
                    # (blue weighs a tenth in it), grey on a blue plate. Its disc is a piece's, for the
                    # lines it hides (occlusion._under_pieces).
                    centres_off[k], edges[k] = 0.0, PIECE_MAX_EDGE
                    out.append(
                        ("black", BLACK_BY_COLOUR_CONFIDENCE, evidence, tone, "", float(plate_grey[k]))
                    )
                    continue
                conf = 1.0 - 0.5 * evidence / f0
                if _could_hide_a_piece(float(plate_grey[k]), bool(line_level[k] < plate_grey[k])):
                    conf = min(conf, HIDING_PLATE_CONFIDENCE)
                elif abs(tone - plate_end) < PLATE_TONE_NEAR:
                    # Nearly enough differs for a piece, yet the middle has the plate's own tone, on a
                    # plate no piece's tone is near: the light on it (a lamp's reflection), not a thing.
                    conf = max(conf, SMALL_LIGHT_CONFIDENCE)
                out.append(("empty", conf, evidence, tone, "", float(plate_grey[k])))
                continue
            # Nothing differs from the square's plate, yet its middle is nowhere near the plate's tone:
            # its corners took a piece's level (a large piece's body and shadow reach them on a full
            # board). The middle's tone says which piece; never a certain reading. Its disc is as large
            # as a piece's can be, for the lines it hides (occlusion._under_pieces).
            presence, most[k] = 1.0, min(float(most[k]), DISAGREEMENT_MAX_CONFIDENCE)
            centres_off[k], edges[k] = 0.0, PIECE_MAX_EDGE
        if not problem and looks_coloured[k]:
            problem = "coloured"  # brass, copper, skin, a pen's cap: pieces are black or white
        elif not problem and shows_plate[k]:
            problem = "plate-colour"  # the grain of a wood plate: no body of a piece's colour
            if abs(tone - plate_end) < PLATE_TONE_NEAR:
                # ...of the plate's tone too: the plate itself, lit brighter in the square's middle
                # than at its corners (a lamp's reflection), or its grain. The square is bare.
                out.append(("empty", SMALL_LIGHT_CONFIDENCE, evidence, tone, "", float(plate_grey[k])))
                continue
        elif (
            not problem
            and tone >= between_kinds
            and colour_px is not None
            and _vivid(k, middle_colour, colour_px, geo, middles)
        ):
            # A light middle no white piece has, that the two looks above did not judge (a square read
            # against the surface alone, its corners having taken a full board's pieces' levels): the
            # plate lit brighter is bare; anything else is coloured. (Not a dark one: a black cross's
            # middle is half a dark coloured plate, whose few levels of colour count for much there.)
            if _the_plate_lit(middle_colour[k], canon, half_width, plate_grey, plate_chroma_mean):
                out.append(("empty", SMALL_LIGHT_CONFIDENCE, evidence, tone, "", float(plate_grey[k])))
                continue
            problem = "coloured"
        elif not problem and abs(tone - between_kinds) < MID_TONE:
            problem = "mid-tone"  # a steel coin, a grey eraser: as far from black as from white
        # How far the tone is from the middle of the scale, 0.3 away is certain.
        certainty = min(1.0, abs(tone - between_kinds) / 0.3)
        conf = min(float(most[k]), 0.5 + 0.5 * min(presence, certainty))
        # A body of the plate's own tone is seen by its edge alone (a white piece on a white plate),
        # as a gradient or a stain is: never a certain reading.
        if abs(tone - plate_end) < PLATE_TONE_NEAR:
            conf = min(conf, PLATE_TONE_CONFIDENCE)
        if min(plate_end, 0.5) < tone < max(plate_end, 0.5):
            # Between the plate and the middle of the scale (lighter than a dark plate, darker than a
            # light one): a piece of that kind a little off the plate, or the light on the plate (a
            # lamp's soft reflection on a dark glossy board reads a "black piece" 0.2 of the scale
            # over it): never a certain reading.
            conf = min(conf, BETWEEN_CONFIDENCE)
        state = "black" if tone < between_kinds else "white"
        out.append((state, conf, evidence, tone, problem, float(plate_grey[k])))
    if not dark_lines:
        for k, r in enumerate(out):
            # (Bare, or a blob too small for a piece: the highlight itself.)
            bare = (r[0] == "empty" and not r[4]) or r[4] == "small"
            if (
                bare
                and _could_hide_a_piece(float(plate_grey[k]), dark_lines)
                and _highlight_alone(dev[k, :, 0], geo, float(contrast[k]), s)
            ):
                # A glossy black piece on a plate as dark (see HIGHLIGHT_REACH). Its disc is as large
                # as a piece's can be, for the lines it hides (occlusion._under_pieces).
                centres_off[k], edges[k] = 0.0, PIECE_MAX_EDGE
                out[k] = ("black", HIGHLIGHT_CONFIDENCE, *r[2:4], "", r[5])
    if tail_at_corners > 0.0:
        # A square that reads bare because the lines' blur was taken out of its corners is not certain.
        unsure = tail_at_corners >= TAIL_BARE_SHARE * params.piece_min_frac * contrast
        out = [
            (r[0], min(r[1], TAIL_BARE_CONFIDENCE), *r[2:]) if r[0] == "empty" and unsure[k] else r
            for k, r in enumerate(out)
        ]
    if _pieces_like_the_plate(out, line_level < plate_grey):
        out = [(r[0], min(r[1], HIDING_PLATE_CONFIDENCE), *r[2:]) if r[0] == "empty" else r for r in out]
    discs = np.column_stack([centres_off, edges, middle_grey])
    # A full board: the squares flagged for their corners, and those whose corners only the plate's
    # colour excused (nothing in them differing, or not a clean piece), the pieces' blur paling them.
    off_surface = sum(
        r[4] == "background"
        or bool(pale[k] and (r[4] or evidences[k] < f0))
        or bool(round_bodies[k] and corners_off[k])
        for k, r in enumerate(out)
    )
    if not full_board and off_surface >= FULL_BOARD_SQUARES:
        again, again_discs = _read_squares(
            canon, half_width, line_level, pitch_px, noise, params, dark_lines, full_board=True
        )
        for k, (first, second) in enumerate(zip(out, again, strict=True)):
            if first[4] == "background" and second[0] in ("black", "white") and not second[4]:
                out[k] = (second[0], min(second[1], FULL_BOARD_CONFIDENCE), *second[2:])
                discs[k] = again_discs[k]
    # Squares still flagged for their corners alone, with nothing in them differing from those corners.
    flagged = [k for k, r in enumerate(out) if r[4] == "background" and evidences[k] < f0]
    if flagged:
        middle_px = grey[:, geo.core] if colour_px is None else colour_px[:, geo.core]
        squares = _Middles(flagged, middle_px, middles, contrast, dark_lines)
        bare = _like_the_plate_beyond(canon, half_width, squares) + _like_the_bare_squares(out, squares)
        for k in set(bare):
            out[k] = ("empty", BEYOND_PLATE_CONFIDENCE, *out[k][2:4], "", out[k][5])
    return out, discs


def _washed_middles(
    grey: np.ndarray,
    geo: _SquareMasks,
    centres: np.ndarray,
    edges: np.ndarray,
    middle_grey: np.ndarray,
    line_level: np.ndarray,
    plate_grey: np.ndarray,
    pieces: np.ndarray,
) -> dict[int, np.ndarray]:
    """The pieces (squares ``pieces``) whose middle is not of their kind: a steel washer or magnet on
    top (what the electromagnet lifts a piece by), grey, fills the middle, where a piece's tone is read,
    yet it covers a third of the piece's width or so, a tenth of its area. The piece's whole disc (out to
    ``DISC_OF_EDGE`` of its edge radius, over the core's pixels) is then of the other kind, or of a kind
    where the middle is mid-tone. Split at the grey midway between the two, the disc's part like the
    middle (the washer) must be round (a pen across a piece, a fingertip over it, are long) and the rest
    (the piece's body) ``WASHER_APART`` or more from the middle on the grid's scale (a coin is of one
    tone all over): the body's tone is the piece's. Returns each such square's body, a mask over the
    core like :func:`.pieces._middles`'."""
    out: dict[int, np.ndarray] = {}
    if not pieces.size:
        return out
    dx, dy = geo.dx[geo.core], geo.dy[geo.core]
    c = centres[pieces]
    discs = _hypot_within(dx[None, :] - c[:, :1], dy[None, :] - c[:, 1:], DISC_OF_EDGE * edges[pieces])
    disc_grey = _masked_medians(grey[pieces][:, geo.core], discs)
    for i, k in enumerate(pieces.tolist()):
        dark_lines = bool(line_level[k] < plate_grey[k])
        dark_ref = min(float(line_level[k]), float(plate_grey[k]))
        scale = max(abs(float(line_level[k]) - float(plate_grey[k])), 1e-3)
        between = _between_kinds(float(plate_grey[k]), dark_lines)
        middle = (float(middle_grey[k]) - dark_ref) / scale - between
        disc = (float(disc_grey[i]) - dark_ref) / scale - between
        if abs(disc) < MID_TONE or (middle * disc > 0.0 and abs(middle) >= MID_TONE):
            continue  # the disc is of no kind, or the middle is of the disc's kind: the piece's own
        # The odd body, the disc's pixels nearer the middle's grey than the disc's, and the piece's body,
        # the rest: a washer is round and of another tone than the body round it; a coin is of one tone
        # all over, and a pen across a piece, a fingertip over it, are long.
        midway = 0.5 * (float(middle_grey[k]) + float(disc_grey[i]))
        core = grey[k, geo.core]
        odd_core = discs[i] & ((core > midway) if middle_grey[k] > disc_grey[i] else (core < midway))
        body = discs[i] & ~odd_core
        if not body.any():
            continue
        body_tone = (median(core[body]) - dark_ref) / scale - between
        if body_tone * disc <= 0.0 or abs(body_tone - middle) < WASHER_APART:
            continue
        odd = np.zeros(geo.rad.size, bool)
        odd[geo.core] = odd_core
        if _elongation(odd, geo) <= WASHER_ELONGATION:
            out[k] = body
    return out


def _highlight_alone(grey_dev: np.ndarray, geo: _SquareMasks, contrast: float, px: int) -> bool:
    """Whether a square's deviations from its plate (``grey_dev`` (P,), ``contrast`` the grid's there,
    ``px`` canonical pixels per pitch) hold a piece's highlight alone: a small bright blob near its
    middle (see ``HIGHLIGHT_REACH``)."""
    within = geo.rad < HIGHLIGHT_REACH
    near = grey_dev[within]
    peak = float(np.partition(near, near.size - HIGHLIGHT_PEAK_RANK)[near.size - HIGHLIGHT_PEAK_RANK])
    if peak < HIGHLIGHT_MIN_PEAK * contrast:
        return False
    bright = grey_dev > 0.5 * peak
    inner = int(np.count_nonzero(bright & within))
    outer = int(np.count_nonzero(bright & ~within & geo.body_zone))
    if not (inner <= HIGHLIGHT_MAX_AREA * px * px and outer <= inner):
        return False
    # Round: a pen's shine is a stripe.
    return _elongation(bright & within, geo) <= FOREIGN_ELONGATION


class _Middles(NamedTuple):
    """The squares ``flagged`` (read "background": their corners off the board's surface, and nothing in
    them differing from those corners), and what tells whether they are bare: each square's middle
    (``middles`` (9, N) of ``core``, its core pixels, grey (9, N) or BGR (9, N, 3)), the grid's contrast
    (``contrast`` (9,)) and its polarity (``dark_lines``)."""

    flagged: list[int]
    core: np.ndarray
    middles: np.ndarray
    contrast: np.ndarray
    dark_lines: bool

    def middle(self, k: int) -> np.ndarray:
        """Square ``k``'s middle: the median grey, or B, G, R, of its middle's pixels."""
        return np.median(self.core[k][self.middles[k]], axis=0)

    def bare(self, plate_of: Callable[[int], np.ndarray]) -> list[int]:
        """The flagged squares whose middle is the plate (``plate_of`` each square) in the light there
        (:func:`_the_plate_in_other_light`)."""
        return [
            k
            for k in self.flagged
            if _the_plate_in_other_light(self.middle(k), plate_of(k), float(self.contrast[k]))
        ]


def _like_the_plate_beyond(canon: _Canon, half_width: float, squares: _Middles) -> list[int]:
    """Which of the ``squares`` flagged are bare board: their middle's colour is the plate's in a band
    just outside the grid's outer lines (``BEYOND_BAND``; ``half_width`` the lines', in pitches),
    within ``BEYOND_PLATE_MATCH`` of the grid's contrast in every channel (or, on a saturated plate, its
    colour in another light).

    On a full board of large pieces the lone bare square's corners take the pieces' levels (their blur
    and shadows), and the board's surface is fitted through corners that are mostly the pieces'; the
    plate beyond the outer lines is neither. A sheet laid over one square is not the plate's colour.
    A plate that could hide a piece of its own tone (:func:`_could_hide_a_piece`, by the grid's
    polarity) is never taken for bare so.
    """
    band = _band_beyond(canon.img.shape[0], canon.px, canon.margin, round(half_width, 3))
    if _could_hide_a_piece(float(np.median(canon.img[band])), squares.dark_lines):
        return []
    view = canon.img if squares.core.ndim == 2 else canon.colour
    assert view is not None
    plate = np.median(view[band], axis=0)
    return squares.bare(lambda _k: plate)


@lru_cache(maxsize=16)
def _band_beyond(size: int, s: int, m: int, half_width: float) -> np.ndarray:
    """The band of plate just beyond the grid's outer lines (``BEYOND_BAND`` from their edges;
    ``half_width`` the lines', in pitches) in a canonical view ``size`` pixels wide, ``s`` a square,
    the grid's corner at ``m``: a mask of the view."""
    along = (np.arange(size) - m) / s
    beyond_1d = np.maximum(-along, along - GRID_SQUARES)
    beyond = np.maximum(beyond_1d[None, :], beyond_1d[:, None])  # how far outside the grid, in pitches
    return _read_only((beyond > half_width + BEYOND_BAND[0]) & (beyond < half_width + BEYOND_BAND[1]))[0]


def _vivid(
    k: int,
    middle_colour: dict[int, np.ndarray],
    colour_px: np.ndarray,
    geo: _SquareMasks,
    middles: np.ndarray,
) -> bool:
    """Whether square ``k``'s middle (``middles`` (9, N) of each square's core pixels ``colour_px`` (9, P,
    3), B, G, R) is more saturated than a black or a white piece can be (``PIECE_MAX_SATURATION``). Its
    median colour is taken into ``middle_colour`` unless it is there already."""
    return _saturation(_middle_colour(k, middle_colour, colour_px, geo, middles)) > PIECE_MAX_SATURATION


def _middle_colour(
    k: int,
    middle_colour: dict[int, np.ndarray],
    colour_px: np.ndarray,
    geo: _SquareMasks,
    middles: np.ndarray,
) -> np.ndarray:
    """Square ``k``'s middle's median B, G, R (``middles`` (9, N) of each square's core pixels
    ``colour_px`` (9, P, 3)), taken into ``middle_colour`` unless it is there already."""
    if k not in middle_colour:
        middle_colour[k] = _masked_medians(colour_px[k : k + 1, geo.core], middles[k : k + 1])[0]
    return middle_colour[k]


def _black_by_colour(
    middle: np.ndarray, plate_grey: float, plate_opponent: np.ndarray, dark_end: float
) -> bool:
    """Whether a square read bare in grey holds a black piece by its colour: its middle (B, G, R (3,))
    has under ``GREY_MIDDLE_SHARE`` of the colour of a coloured plate (grey ``plate_grey``, opponent
    colour B-G, R-G ``plate_opponent``, at least ``COLOURED_PLATE_CHROMA`` levels of it), and is darker
    in the plate's brightest channel than half-way from the dark end of the board's scale
    (``dark_end``: the grey of dark lines; with light lines, black) to the plate. A black piece can be
    as dark as a deep blue or green plate in grey, or its blur can give its square's corners its own
    level (a large piece on a green plate with white lines); it is grey where the plate is coloured,
    and dark in the channel that makes the plate light. A shadow or a dimmer light darkens the plate
    and keeps its colour; a sheet of paper is light."""
    plate_chroma = float(np.hypot(*plate_opponent))
    own_chroma = float(np.hypot(middle[0] - middle[1], middle[2] - middle[1]))
    if plate_chroma < COLOURED_PLATE_CHROMA or own_chroma > GREY_MIDDLE_SHARE * plate_chroma:
        return False
    brightest = float(_bgr_of(plate_grey, plate_opponent).max())
    return float(middle.max()) - dark_end < 0.5 * (brightest - dark_end)


def _the_plate_lit(
    middle: np.ndarray, canon: _Canon, half_width: float, plate_grey: np.ndarray, plate_opponent: np.ndarray
) -> bool:
    """Whether a vivid middle (B, G, R (3,): see :func:`_vivid`) is the plate in another light
    (:func:`_plate_hue`): the board's plate (the median of the squares', grey ``plate_grey`` (9,) and
    opponent colour ``plate_opponent`` (9, 2)) or the plate just beyond the grid (:func:`_band_beyond`; on
    a full board of large pieces the squares' plates take their levels).

    A spotlight's disc on a green contest board lights a bare square brighter than its corners: in grey
    it is a faint white piece, in colour it is the plate's green. A coin, a pen's cap or skin is
    coloured and is no piece either."""
    pairs = zip(plate_grey, plate_opponent, strict=True)
    board = np.median(np.stack([_bgr_of(float(grey), opponent) for grey, opponent in pairs]), axis=0)
    if _plate_hue(middle, board):
        return True
    if canon.colour is None:
        return False
    band = _band_beyond(canon.img.shape[0], canon.px, canon.margin, round(half_width, 3))
    return _plate_hue(middle, np.median(canon.colour[band], axis=0))


def _like_the_bare_squares(readings: list[SquareRead], squares: _Middles) -> list[int]:
    """Which of the ``squares`` flagged are bare board by the bare squares nearest each: its middle's
    colour within ``BEYOND_PLATE_MATCH`` of the grid's contrast of those squares' median middle in every
    channel (or, on a saturated plate, that colour in another light). The bare squares are those
    ``readings`` reads empty with nothing wrong.

    The plate beyond the grid can be another colour (a narrow margin, the table), and a spotlight or a
    gradient lights one side of the board unlike the band's median; the bare squares beside a flagged
    one are the plate, lit as it is. A sheet or a hand over a square is not their colour. A plate that
    could hide a piece of its own tone (:func:`_could_hide_a_piece`, judged on the bare squares' grey)
    is never taken for bare so."""
    references = [
        j for j, r in enumerate(readings) if r[0] == "empty" and not r[4] and j not in squares.flagged
    ]
    if not references:
        return []
    if _could_hide_a_piece(median(np.array([readings[j][5] for j in references])), squares.dark_lines):
        return []
    at = np.array([(j % GRID_SQUARES, j // GRID_SQUARES) for j in range(GRID_SQUARES**2)], dtype=float)

    def nearest_plate(k: int) -> np.ndarray:
        distance = np.hypot(*(at[references] - at[k]).T)
        nearest = [references[i] for i in np.flatnonzero(distance <= distance.min() + 1e-9).tolist()]
        return np.median(np.stack([squares.middle(j) for j in nearest]), axis=0)

    return squares.bare(nearest_plate)


def _the_plate_in_other_light(middle: np.ndarray, plate: np.ndarray, contrast: float) -> bool:
    """Whether a square's middle (grey (), or BGR (3,)) is the plate (``plate``, alike): within
    ``BEYOND_PLATE_MATCH`` of the grid's ``contrast`` of it in every channel; or, on a saturated plate
    (channels spread over ``PLATE_SATURATED`` of its brightest or more), its colour in another light:
    the same share of its brightest channel in every channel (within ``SAME_HUE_MATCH``) at a brightness
    within ``OTHER_LIGHT_RATIO`` of it either way. A spotlight's disc or a gradient lights one square
    of a green contest board unlike the rest; a sheet, a hand or a piece is not green."""
    if np.all(np.abs(middle - plate) <= BEYOND_PLATE_MATCH * contrast):
        return True
    return middle.size == 3 and _plate_hue(middle, plate)


def _plate_hue(middle: np.ndarray, plate: np.ndarray) -> bool:
    """Whether a colour (B, G, R: ``middle`` (3,)) is a saturated plate's (``plate`` (3,)) in another
    light, as :func:`_the_plate_in_other_light` judges it."""
    top, plate_top = float(middle.max()), float(plate.max())
    if plate_top <= 0.0 or (plate_top - float(plate.min())) < PLATE_SATURATED * plate_top:
        return False
    if not 1.0 / OTHER_LIGHT_RATIO <= top / plate_top <= OTHER_LIGHT_RATIO:
        return False
    return bool(np.all(np.abs(middle / top - plate / plate_top) <= SAME_HUE_MATCH))


def _pieces_like_the_plate(readings: list[SquareRead], dark_lines: np.ndarray) -> bool:
    """Whether a clean piece of the plate's own end of the scale (white where the lines are darker than
    the plate, ``dark_lines`` (9,); black where they are lighter) has its middle within
    ``PLATE_LIKE_PIECE_TONE`` of the plate's tone (1 with dark lines, 0 with light ones) in
    ``readings`` (as :func:`_read_squares` builds them): the plate is then as light (or dark) as that
    kind of piece, whatever its grey, and could hide one more."""
    for (state, _conf, _evidence, tone, problem, _plate), dark in zip(
        readings, dark_lines.tolist(), strict=True
    ):
        if problem:
            continue
        if (dark and state == "white" and tone <= 1.0 + PLATE_LIKE_PIECE_TONE) or (
            not dark and state == "black" and tone >= -PLATE_LIKE_PIECE_TONE
        ):
            return True
    return False


def _two_tone(middle_dev: np.ndarray, far: float) -> bool:
    """Whether a piece's middle (``middle_dev``: its pixels' grey minus the plate's) holds two bodies on
    both sides of the plate: at least ``TWO_TONE_SHARE`` of it above the plate by ``far``, and as much
    below. A piece is of one tone (a highlight on a glossy black piece is a sliver of its middle);
    a pen lying across one is not. (A cross on a plate is the cross and the plate: one side only.)"""
    above = float(np.count_nonzero(middle_dev > far))
    below = float(np.count_nonzero(middle_dev < -far))
    return min(above, below) >= TWO_TONE_SHARE * max(middle_dev.size, 1)


def _between_kinds(plate_grey: float, dark_lines: bool) -> float:
    """Where black pieces end and white ones begin on the grid's tone scale (0 the lines', 1 the
    plate's tone): its middle, as a rule; but on a plate as dark as black pieces (``BLACK_PIECE_GREY``),
    with darker lines still, no white piece is darker than the plate, and the two kinds lie on either
    side of the plate's own tone (a black piece there is lighter than the lines, a few levels darker
    than the plate)."""
    return 1.0 if dark_lines and plate_grey <= BLACK_PIECE_GREY else 0.5


def _could_hide_a_piece(plate_grey: float, dark_lines: bool) -> bool:
    """Whether a plate of this grey could hide a piece of its own tone: a plate as dark as black pieces
    (light lines on it), or as light as white ones (dark lines on it), in the grey levels a camera
    exposed for the board gives them. A square read bare there is never certain."""
    return plate_grey >= WHITE_PIECE_GREY if dark_lines else plate_grey <= BLACK_PIECE_GREY


def _far_from_the_plate(middle_grey: float, line: float, plate: float) -> bool:
    """Whether a middle's grey lies more than ``ROUND_BODY_FAR_TONE`` from its square's plate
    (``plate``) on the grid's scale there (from the plate to its lines, ``line``), either way: a black
    piece towards dark lines, a white one beyond a grey plate; not a stain or a shadow on the plate."""
    tone = (middle_grey - min(line, plate)) / max(abs(line - plate), 1e-3)
    return abs(tone - (1.0 if line < plate else 0.0)) > ROUND_BODY_FAR_TONE


def _saturated_plate(
    line_level: np.ndarray, plate_grey: np.ndarray, opponent: np.ndarray, dark_lines: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Which squares' plates (grey (N,) and opponent colour (N, 2: B-G, R-G), as OpenCV weighs grey:
    0.114 B + 0.587 G + 0.299 R) are saturated, the median square's channels spread over more than
    ``PLATE_SATURATED`` of its brightest, with lines darker than them (``line_level`` (N,), or
    ``dark_lines``: the grid's polarity says so, as it does where a deep blue plate is as dark in grey as
    its black lines): there a piece's tone is taken in the brightest channel. Returns that mask and each
    plate's brightest channel.

    (Each square's own spread decided it before: on a blue contest board, white pieces whose blur paled
    their squares' corners were read on the grey scale, the others on the brightest channel's, 3.7
    against 1.5, and those were flagged odd: 10 more squares right on the tuning sets, 10 fewer
    unknown.)"""
    g = _green_of(plate_grey, opponent)
    light = np.maximum(g, g + np.max(opponent, axis=1))
    dark = np.minimum(g, g + np.min(opponent, axis=1))
    # One board, one plate: saturated or not by its median square (the blur of large white pieces pales
    # some squares' corners, and a board read on two scales makes alike pieces look odd).
    saturated = median((light - dark) / np.maximum(light, 1e-3)) > PLATE_SATURATED
    return ((line_level < plate_grey) | dark_lines) & saturated, light


def _rescaled_confidence(evidence: float, f0: float) -> float:
    """How sure a piece whose colour the board's other pieces gave is: ``RESCALED_CONFIDENCE`` at most,
    and less as its presence (``evidence`` of a piece, ``f0`` the evidence a piece needs) is weaker."""
    return min(RESCALED_CONFIDENCE, 0.5 + 0.5 * min(1.0, (evidence - f0) / f0))


def _scale_of_the_pieces(readings: list[SquareRead], f0: float) -> list[SquareRead]:
    """``readings`` (as :func:`_read_squares` gives them) with the pieces re-read where the grid's scale is
    too short for them: two or more clean pieces ``BEYOND_SCALE`` or more beyond one end of it (or one,
    when two or more make the group below), and all the others (clean or mid-tone, at least one) one group
    within ``TONE_GROUP_SPREAD``, between the scale's two ends (the lines' and the plate's tone), and
    ``BEYOND_GAP`` or more from them. That group is of the other colour (those of it that read otherwise,
    or mid-tone, change). Black pieces three scales below faint engraved lines show that a white piece a
    little darker than a white plate, which sits below the scale's middle, is white; white pieces four
    scales above a blue plate whose grey is dark show that a black piece a little darker than the plate is
    black. The group's confidence is at most ``RESCALED_CONFIDENCE`` (and its presence's, ``f0`` being the
    evidence a piece needs). Pieces of one colour whose tones merely spread (a spotlight on some white
    pieces) leave a group beyond the plate's end, or one that is not tight, and nothing changes; nor where
    pieces lie beyond both ends."""
    tones = {
        k: r[3] for k, r in enumerate(readings) if r[0] in ("black", "white") and r[4] in ("", "mid-tone")
    }
    below = [t for k, t in tones.items() if t <= -BEYOND_SCALE and not readings[k][4]]
    above = [t for k, t in tones.items() if t >= 1.0 + BEYOND_SCALE and not readings[k][4]]
    group = {k: t for k, t in tones.items() if -BEYOND_SCALE < t < 1.0 + BEYOND_SCALE}
    # (One piece beyond the scale is as telling as two when several others group inside it: a deep blue
    # plate's grey, darker than its black foam pieces' lightness, puts them all at one tone.)
    if bool(below) == bool(above) or len(below) + len(above) + (len(group) >= 2) < 2 or not group:
        return readings
    inner = list(group.values())
    if min(inner) <= 0.0 or max(inner) >= 1.0 or max(inner) - min(inner) > TONE_GROUP_SPREAD:
        return readings
    if (min(inner) - max(below) if below else min(above) - max(inner)) < BEYOND_GAP:
        return readings
    colour = "white" if below else "black"
    out = list(readings)
    for k in group:
        state, _conf, evidence, tone, problem, plate = readings[k]
        if state == colour and not problem:
            continue  # (already read so: its own confidence stands)
        out[k] = (colour, _rescaled_confidence(evidence, f0), evidence, tone, "", plate)
    return out


def _chroma_weighed(own: np.ndarray, vals: np.ndarray, scale: float) -> np.ndarray:
    """Each square's own level off the board's surface (``own``, (9, C): grey, with colour the two
    opponent channels) with its colour weighed against the plate's own colour: on a saturated plate
    (the contest's blue and green) the blur of large black and white pieces pales the corners beside
    them, and a bare square's corners then differ in colour from a surface fitted mostly to those by a
    fifth of the plate's colour. Colour off by less than ``BACKGROUND_PLATE_CHROMA`` of the plate's
    colour (the median of the corners', ``vals`` (N, C)) counts as the grid's contrast at most (grey:
    ``scale``); a sheet or a hand on a coloured plate is off by all of it."""
    if own.shape[1] == 1:
        return own
    plate_chroma = math.hypot(median(vals[:, 1]), median(vals[:, 2]))
    weight = min(1.0, FOREIGN_BACKGROUND_FRAC * scale / max(BACKGROUND_PLATE_CHROMA * plate_chroma, 1e-3))
    return np.column_stack([own[:, :1], own[:, 1:] * weight])


def _two_kinds_by_the_board(
    readings: list[SquareRead],
    f0: float,
    line_level: np.ndarray,
    dark_lines: bool,
) -> list[SquareRead]:
    """``readings`` (as :func:`_read_squares` gives them) with white pieces in shade under faint dark
    lines told by the black pieces far below them: with dark lines, where clean pieces stand
    ``FAR_FROM_END`` or more of the grid's contrasts below the plate (the black kind) and the others at
    most ``NEAR_SHARE`` of the way they do (the widest such gap, as a ratio, splits the two), a piece of
    the near kind read black whose middle keeps ``WHITE_PLATE_SHARE`` or more of its plate's grey (each
    square's lines, ``line_level``, and plate give its grey back from its tone) is white: its tone is
    below the lines only because they are faint. Black pieces 15-55 on a plate of 150 or more keep at
    most 0.37 of it, white ones within 40 grey of it 0.8 or more. The pieces that change are this
    confident at most ``RESCALED_CONFIDENCE`` (and their presence's, ``f0`` being the evidence a piece
    needs). A piece of the near kind that reads as the far kind and does not change (with dark lines,
    one keeping less of its plate, a glossy black piece's highlight; with light lines, the same split
    above the plate, black pieces on a plate darker than black) is this confident at most too: its
    tone alone does not say which it is."""
    depth = {  # from the plate towards the lines and beyond, in each square's own contrasts
        k: 1.0 - r[3] if dark_lines else r[3]
        for k, r in enumerate(readings)
        if r[0] in ("black", "white") and r[4] in ("", "mid-tone")
    }
    order = sorted(depth, key=depth.__getitem__, reverse=True)
    splits = [
        (depth[order[i]] / max(depth[order[i + 1]], 1e-6), i + 1)
        for i in range(len(order) - 1)
        if depth[order[i]] >= FAR_FROM_END and depth[order[i + 1]] <= NEAR_SHARE * depth[order[i]]
    ]
    if not splits:
        return readings
    cut = max(splits)[1]
    if any(readings[k][4] for k in order[:cut]):
        return readings
    far_colour = "black" if dark_lines else "white"
    out = list(readings)
    for k in order[cut:]:
        state, conf, evidence, tone, problem, plate = readings[k]
        if state != far_colour and not problem:
            continue  # (read the other colour already)
        if dark_lines and _grey_of(tone, float(line_level[k]), plate) >= WHITE_PLATE_SHARE * plate:
            out[k] = ("white", _rescaled_confidence(evidence, f0), evidence, tone, "", plate)
        elif not problem:
            # Read as the far kind, at half its distance from the plate or less: which kind it is,
            # its tone alone does not say for sure (a glossy black piece's highlight, a white piece
            # keeping 0.7 of a white plate; black pieces on a plate darker than black).
            out[k] = (state, min(conf, RESCALED_CONFIDENCE), evidence, tone, problem, plate)
    return out


def _black_above_the_plate(
    readings: list[SquareRead],
    f0: float,
    line_level: np.ndarray,
    dark_lines: bool,
) -> list[SquareRead]:
    """``readings`` (as :func:`_read_squares` gives them) with the black pieces on a plate darker than
    they are told by the white pieces: with dark lines, where clean pieces stand ``BLACK_ABOVE_FAR`` or
    more of the grid's contrasts above the plate (the white kind), the other pieces above it (clean or
    mid-tone) at most ``BLACK_ABOVE_SHARE`` of the way the nearest of those do, whose middles keep at
    most ``BLACK_GREY_SHARE`` of the darkest white one's grey (each square's lines, ``line_level``, and
    plate give its grey back from its tone), are black, this confident at most ``RESCALED_CONFIDENCE``
    (and their presence's, ``f0`` being the evidence a piece needs). On such a plate the scale runs from
    the lines up to the plate only, and everything above it reads white: a black foam disc a little
    lighter than a black board too. (With light lines the plate is the scale's dark end, and a piece a
    little above it already reads black.)"""
    if not dark_lines:
        return readings
    above = {  # each piece's height above the plate, in the grid's contrasts, and its grey
        k: (r[3] - 1.0, _grey_of(r[3], float(line_level[k]), r[5]))
        for k, r in enumerate(readings)
        if r[0] in ("black", "white") and r[4] in ("", "mid-tone") and r[3] > 1.0
    }
    far = [v for k, v in above.items() if v[0] >= BLACK_ABOVE_FAR and not readings[k][4]]
    if not far:
        return readings
    nearest, darkest = min(h for h, _ in far), min(grey for _, grey in far)
    out = list(readings)
    for k, (height, grey) in above.items():
        if readings[k][0] == "black" and not readings[k][4]:
            continue  # (read black already: its own confidence stands)
        if height <= BLACK_ABOVE_SHARE * nearest and grey <= BLACK_GREY_SHARE * darkest:
            evidence, tone, plate = readings[k][2], readings[k][3], readings[k][5]
            out[k] = ("black", _rescaled_confidence(evidence, f0), evidence, tone, "", plate)
    return out


def _mid_tones_by_the_board(
    readings: list[SquareRead],
) -> list[SquareRead]:
    """``readings`` (as :func:`_read_squares` gives them) with mid-tone pieces told by the board's other
    pieces: where the pieces on one side of the scale's middle are one tight group of tones (within
    ``TONE_GROUP_SPREAD``) and every other piece is ``TONE_GROUP_GAP`` or more beyond it, the mid-tone
    ones of the group are of its colour (black foam on a green plate under a lamp sits near the middle
    of the scale the grid gives, with the white pieces far above). Their confidence is at most
    ``BOARD_TONE_CONFIDENCE``. A mid-tone body alone, or beside clean pieces of its own side, stays
    unknown (a steel coin beside black pieces)."""
    pieces = [
        (k, r[3]) for k, r in enumerate(readings) if r[0] in ("black", "white") and r[4] in ("", "mid-tone")
    ]
    if not any(readings[k][4] == "mid-tone" for k, _ in pieces):
        return readings
    out = list(readings)
    for dark_side in (True, False):
        # The tight group: the pieces on one side of the scale's middle (below it, then above it), so
        # a mid-tone piece keeps the colour its own tone gives (a white piece in a shadow is not made
        # black by whiter pieces), and only loses the doubt.
        group = [(k, t) for k, t in pieces if (t < 0.5) == dark_side]
        others = [t for k, t in pieces if (t < 0.5) != dark_side]
        if not group or not others or not any(readings[k][4] == "mid-tone" for k, _ in group):
            continue
        tones = [t for _, t in group]
        gap = min(others) - max(tones) if dark_side else min(tones) - max(others)
        if max(tones) - min(tones) > TONE_GROUP_SPREAD or gap < TONE_GROUP_GAP:
            continue
        for k, _ in group:
            _state, conf, evidence, tone, problem, plate = out[k]
            if problem == "mid-tone":
                colour = "black" if dark_side else "white"
                out[k] = (colour, min(conf, BOARD_TONE_CONFIDENCE), evidence, tone, "", plate)
    return out


def _odd_tones_by_the_board(
    readings: list[SquareRead],
    dark_lines: bool,
    line_level: np.ndarray | None = None,
) -> list[SquareRead]:
    """``readings`` (one per square, as :func:`_combine` gives them) with each piece of an odd tone
    flagged "odd-tone": a piece whose middle lies nearer the plate's tone (1 on the grid's scale with
    dark lines, 0 with light ones) than ``ODD_TONE_SHARE`` (``ODD_TONE_SHARE_LIGHT_LINES`` with light
    lines) of the way the other pieces of its colour stand from it (at least two, clean, their median
    ``ODD_TONE_GROUP`` or more from the plate). Pieces
    of one kind are alike, and the scale is the grid's own around each square (gradients and shadows
    shift both ends alike): a body read white far dimmer than the white pieces beside it is a steel
    coin, not one of them, and one read black far paler than the black pieces is brass or a shadow.
    A board with fewer than three pieces of a colour says nothing of that colour by that share; but a
    piece on the other side of the plate's tone from every other piece of its colour (both at least
    ``ODD_SIDE_MIN`` from it: a "white piece" darker than the plate beside a white piece lighter than
    it) is odd beside even one.
    With the squares' lines (``line_level``), a piece is odd by the share only when it is also so on the
    board's scale (:func:`_on_the_board_scale`): a large white piece's blur lights its own square's
    corners (by ``ODD_LIT_CORNERS`` of the grid's contrast or more beyond what the other squares'
    levels predict), whose level then puts it near the plate on its square's scale; a coin lights
    none.
    A piece not odd, but short of ``SHORT_OF_KIND_SHARE`` of its kind's way from the plate, is read at
    most ``RESCALED_CONFIDENCE`` sure (a glossy black piece's highlight read white among white pieces)."""
    plate = 1.0 if dark_lines else 0.0
    odd_share = ODD_TONE_SHARE if dark_lines else ODD_TONE_SHARE_LIGHT_LINES
    board_tones: list[tuple[float, float]] | None = None  # (computed only for a piece odd by the share)
    out = list(readings)
    for k, (state, conf, evidence, tone, problem, plate_grey) in enumerate(readings):
        if state not in ("black", "white") or problem:
            continue
        others = [r[3] for j, r in enumerate(readings) if j != k and r[0] == state and not r[4]]
        if not others:
            continue
        group = median(np.array(others))
        # On the far side of the plate from every other piece of its colour, clearly (a "white piece"
        # darker than the plate beside white pieces lighter than it): one of them is not what it reads.
        far_side = all(
            (t - plate) * (tone - plate) < 0 and min(abs(t - plate), abs(tone - plate)) >= ODD_SIDE_MIN
            for t in others
        )
        by_share = (
            len(others) >= 2
            and abs(group - plate) >= ODD_TONE_GROUP
            and (tone - plate) / (group - plate) < odd_share
        )
        if by_share and line_level is not None and board_tones is None:
            board_tones = _on_the_board_scale(readings, line_level)
        lit = board_tones is not None and board_tones[k][1] * (1.0 if state == "white" else -1.0) >= (
            ODD_LIT_CORNERS
        )
        if by_share and lit and board_tones is not None:
            # Its corners lit (a white piece) or shaded (a black one) beyond what the board's plate
            # predicts there: by its own blur. Odd only if it is so on the board's plate too.
            others_b = [
                board_tones[j][0] for j, r in enumerate(readings) if j != k and r[0] == state and not r[4]
            ]
            group_b = median(np.array(others_b))
            by_share = (
                abs(group_b - plate) >= ODD_TONE_GROUP
                and (board_tones[k][0] - plate) / (group_b - plate) < odd_share
            )
        if far_side or by_share:
            out[k] = (state, conf, evidence, tone, "odd-tone", plate_grey)
        elif (
            len(others) >= 2
            and abs(group - plate) >= ODD_TONE_GROUP
            and (tone - plate) / (group - plate) < SHORT_OF_KIND_SHARE
        ):
            out[k] = (state, min(conf, RESCALED_CONFIDENCE), evidence, tone, problem, plate_grey)
    return out


def _bare_off_the_plate(readings: list[SquareRead], dark_lines: bool) -> list[SquareRead]:
    """``readings`` (one per square, as :func:`_like_the_far_kind` gives them) with the bare squares whose
    middle lies more than ``BARE_OFF_TONE`` off the plate's tone (1 on the grid's scale with dark lines,
    0 with light ones) read at most ``BARE_OFF_CONFIDENCE`` sure, and those clearly nearer the tone of
    one colour's pieces (two or more, clean: their median; ``BARE_LIKE_PIECES``) than the plate's read
    unknown. A bare square is the plate; one whose middle is not, nothing found differing in it, is a
    piece too faint for its body's look (a white piece on a white plate, a black one in a full board's
    corners), or the light on the plate: either way not certain, and not bare when the board's own
    pieces look like it."""
    plate = 1.0 if dark_lines else 0.0
    groups = [
        median(np.array(tones))
        for colour in ("black", "white")
        if len(tones := [r[3] for r in readings if r[0] == colour and not r[4]]) >= 2
    ]
    out = list(readings)
    for k, (state, conf, evidence, tone, problem, plate_grey) in enumerate(readings):
        if state != "empty" or problem or abs(tone - plate) <= BARE_OFF_TONE:
            continue
        like_pieces = any(abs(tone - g) < BARE_LIKE_PIECES * abs(tone - plate) for g in groups)
        most = 0.0 if like_pieces else BARE_OFF_CONFIDENCE
        out[k] = (state, min(conf, most), evidence, tone, problem, plate_grey)
    return out


def _like_the_far_kind(
    readings: list[SquareRead],
    discs: np.ndarray,
    dark_lines: bool,
) -> tuple[list[SquareRead], np.ndarray]:
    """``readings`` (one per square, as :func:`_odd_tones_by_the_board` gives them) and ``discs`` (as
    :func:`_read_squares` gives them) with the pieces of the far kind read bare found by the board's
    other pieces of that kind. The far kind lies beyond the plate's tone, away from the lines' (black
    pieces below a dark plate with light lines, white ones above a light plate with dark lines), where
    nothing else of a game does; a clean bare reading whose middle stands between the two shares
    ``FAR_KIND_SHARE`` of the way the kind's clean pieces stand from the plate (their median
    ``FAR_KIND_MIN`` or more from it; a piece alone, ``FAR_KIND_ALONE_MIN``) is one of them: their
    body differed from its plate too little for a piece (black foam on a red plate in camera noise), or
    a large piece's blur took its corners' level. It is read at most ``RESCALED_CONFIDENCE`` sure, its
    disc as large as the kind's (the lines it hides: :func:`.occlusion._under_pieces`). A middle further
    beyond is not one of them: a grid placed off the board has its "squares" on the plate's edge."""
    plate = 1.0 if dark_lines else 0.0
    far = "white" if dark_lines else "black"
    kind = [k for k, r in enumerate(readings) if r[0] == far and not r[4]]
    if not kind:
        return readings, discs
    beyond = median(np.array([readings[k][3] for k in kind])) - plate
    if beyond * (1.0 if dark_lines else -1.0) < (FAR_KIND_MIN if len(kind) >= 2 else FAR_KIND_ALONE_MIN):
        return readings, discs
    out, discs_out = list(readings), discs.copy()
    radius = median(discs[kind, 2])
    for k, (state, conf, evidence, tone, problem, plate_grey) in enumerate(readings):
        if (
            state == "empty"
            and not problem
            and FAR_KIND_SHARE[0] <= (tone - plate) / beyond <= FAR_KIND_SHARE[1]
        ):
            out[k] = (far, min(conf, RESCALED_CONFIDENCE), evidence, tone, "", plate_grey)
            discs_out[k, 2] = max(float(discs_out[k, 2]), radius)
    return out, discs_out


def _on_the_board_scale(readings: list[SquareRead], line_level: np.ndarray) -> list[tuple[float, float]]:
    """Each square's tone (``readings`` as :func:`_combine` gives them) on a scale from its lines' grey
    (``line_level``) to the plate level the other eight squares' levels predict for it (a plane through
    them: the light's gradient across the board, without what lights or shades this square's own
    corners), and how far its own level stands above that prediction, in its grid contrasts."""
    levels = np.array([r[5] for r in readings])
    design = np.column_stack([np.arange(9) % 3, np.arange(9) // 3, np.ones(9)]).astype(float)
    out = []
    for k, (r, line) in enumerate(zip(readings, line_level.tolist(), strict=True)):
        rest = np.arange(9) != k
        coef = np.linalg.lstsq(design[rest], levels[rest], rcond=None)[0]
        board_plate = float(design[k] @ coef)
        tone, plate = r[3], r[5]
        grey = _grey_of(tone, line, plate)
        board_tone = (grey - min(line, board_plate)) / max(abs(line - board_plate), 1e-3)
        out.append((board_tone, (plate - board_plate) / max(abs(line - plate), 1e-3)))
    return out


def _grey_of(tone: float, line: float, plate: float) -> float:
    """The grey a square's middle has at ``tone`` on its scale (0 at the darker of its lines' grey
    ``line`` and its plate's ``plate``, 1 at the lighter)."""
    return min(line, plate) + tone * abs(line - plate)


def _combine(
    ring: list[SquareRead],
    corners: list[SquareRead],
    line_level: np.ndarray,
) -> list[SquareRead]:
    """One reading per square from the two: against the plate in the corners (``corners``, the one
    that holds for pieces of any size) and against the ring just inside the lines (``ring``, the larger
    sample of bare board where pieces are small). The corners' reading stands, except where it sees
    no clear piece (empty, or something it cannot call a piece) while the ring sees a clean reading of
    the other kind: a bare square darker or lighter in its middle than in its corners (the lines' blur
    meets there, or the plate is stained) is bare to the ring; a small piece of an odd shape (a cross)
    is a piece to the ring, but not a white one on a light plate, nor a square whose corners are off the
    board's surface (a sheet lies under the ring too). Nor does the ring clear a body that
    fills the square ("too-large") where the ring's own level is off the plate's by more than
    ``RING_OFF_PLATE`` of the grid's contrast (each square's lines, ``line_level``): the ring lies on
    that body (a large white piece on a white plate), and its "empty" says only that the middle is like
    it."""
    out = []
    for a, b, lines in zip(ring, corners, line_level.tolist(), strict=True):
        ring_clean = not a[4] and a[0] != "unknown"
        # (Not a body half way between black and white: a black piece a little lighter than a black
        # plate is as likely as a stain there, and the ring, which such a body covers, cannot tell.)
        bare_to_ring = a[0] == "empty" and (bool(b[4]) or b[0] == "unknown") and b[4] != "mid-tone"
        # Nor a square whose corners are off the board's surface ("background"): something flat covers
        # it (a sheet), and the ring lies on that too. (The bare square of a full board, whose corners
        # took the pieces' levels, is told by the plate beyond the grid: _like_the_plate_beyond.)
        bare_to_ring &= b[4] != "background"
        if bare_to_ring and b[4] == "too-large":
            bare_to_ring = abs(a[5] - b[5]) <= RING_OFF_PLATE * abs(lines - b[5])
        piece_to_ring = a[0] in ("black", "white") and b[0] == "empty" and not b[4]
        # Not a white piece on a light plate: a white body the corners do not see there is a bare
        # square lit brighter in its middle than at its lines (a light gradient, a glossy plate's
        # sheen) as often as a piece.
        piece_to_ring &= a[0] == "black" or lines > b[5]
        # Only a highlight differs on a black piece on a dark plate: a small blob to the corners' reading,
        # a black piece (by its disc's median) to the ring's. (A light blob that the ring calls white is
        # the plate's mottling as often as a piece: it stays unknown.)
        small = b[4] == "small" and a[0] == "black"
        # A sheet over the square, a pen in it: flagged by the ring's own rules, unless the corners'
        # reading sees a clean piece there (a large piece with its shadow is elongated to the ring,
        # whose centre is the square's, not the piece's; a pen never fills rings all round).
        corners_piece = b[0] in ("black", "white") and not b[4]
        flagged = a[4] in RING_FLAGS_KEPT and not corners_piece
        chosen = a if (ring_clean and (bare_to_ring or piece_to_ring or small)) or flagged else b
        if a[0] != b[0]:
            # The two readings disagree: whichever is taken, it is not a certain one.
            chosen = (chosen[0], min(chosen[1], DISAGREEMENT_MAX_CONFIDENCE), *chosen[2:])
        elif chosen is b and b[0] == "empty" and not a[4] and not b[4]:
            # Both see a bare square: no less sure than the ring, up to AGREED_BARE_CONFIDENCE (the
            # corners' look is unsure where the light leaves a faint patch in the middle; the ring
            # round it is plain).
            chosen = (b[0], max(b[1], min(a[1], AGREED_BARE_CONFIDENCE)), *b[2:])
        out.append(chosen)
    return out


def _quiet_corner_spread(values: np.ndarray, geo: _SquareMasks) -> float:
    """The ``FULL_BOARD_QUIET_SHARE`` percentile, over the nine squares' corners, of each corner's median
    absolute deviation of ``values`` ((9, P), one per pixel of each square's inside) from its own
    median: the variation of the corners no piece's edge crosses."""
    # Each corner's deviations laid back on its pixels, so that _corner_medians takes their medians.
    laid = np.zeros_like(values)
    laid[:, geo.corner_index] = _corner_deviations(values, geo)
    return percentile(_corner_medians(laid[..., None], geo).ravel(), FULL_BOARD_QUIET_SHARE)


def _corner_spreads(values: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """Absolute deviations of ``values`` ((9, P), one per pixel of each square's inside) in the corners
    of each square, each from its own corner's median: (corner pixels of the nine squares,) in no
    particular order."""
    return _corner_deviations(values, geo)[:, geo.corner_valid]


def _corner_deviations(values: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """Absolute deviations of ``values`` ((9, P)) in each corner of each square from that corner's
    median: (9, Q, K), padded as ``geo.corner_index`` is (``geo.corner_valid`` says which are real)."""
    z = values[:, geo.corner_index]  # (9, Q, K)
    medians = _corner_medians(values[..., None], geo)[..., 0].T  # (9, Q)
    return np.abs(z - medians[..., None])


def _black_pieces_alike(
    coloured: np.ndarray, colours: dict[int, np.ndarray], grey: np.ndarray, contrast: np.ndarray
) -> np.ndarray:
    """Of the squares ``coloured`` (9,) whose middles (median B, G, R: ``colours``; grey ``grey``) look
    coloured, those that are ``ALIKE_MIN`` or more of one colour and tone: the black pieces, tinted
    (a camera's exposure raised until the plate clips lifts a tinted black piece's colour over the
    floor that keeps it grey, :data:`.pieces.SATURATION_FLOOR`). Coins and caps come one at a time."""
    rows = np.flatnonzero(coloured)
    alike = np.zeros(len(coloured), bool)
    if rows.size < ALIKE_MIN:
        return alike
    bgr = np.array([colours[k] for k in rows.tolist()], float)
    hue = _tint(bgr, 1.0)
    hue_off = row_norms(hue - np.median(hue, axis=0))
    grey_off = np.abs(grey[rows] - median(grey[rows])) / np.maximum(contrast[rows], 1e-3)
    close = (hue_off <= ALIKE_HUE) & (grey_off <= ALIKE_GREY)
    if close.sum() >= ALIKE_MIN:
        alike[rows[close]] = True
    return alike
