"""Find a 3x3 board in one image and read its squares: a pure function of the image.

The detector knows nothing about the camera that took the picture. Every size is relative to the image
or to the grid it found, every threshold is measured from the image itself (its noise, the contrast of
its own grid lines, the background next to each piece). It works for dark lines on a light board and
light lines on a dark board, anywhere in the frame, at any rotation.

How it works, in order:

1. **Cells.** A blurred grey image is compared with its local mean (a window a few percent of the image
   wide) twice: pixels clearly darker than their neighbourhood, and pixels clearly lighter. Either mask
   may hold the grid lines; the regions they enclose are the nine cells. Every enclosed region whose
   convex hull is a filled, roughly square quadrilateral is a candidate cell (a piece inside a cell is a
   hole in it, or a dent when it touches a line, neither of which changes the hull much).
2. **Lattice.** Candidates of similar size and orientation that sit on a common square lattice (integer
   steps of one pitch along the cell's own axes) are grouped; the best 3x3 window of the best group is
   the grid. Sorting by y then x is never used, so the order is right at any angle. When pieces break
   most cells up (large pieces touching thin lines, a full board), a **comb** search looks for the grid
   as four long, evenly spaced parallel lines each way (:func:`_comb_search`).
3. **Pose.** A homography from the image to the canonical top view (grid (0, 0)-(3, 3), square units)
   is fitted to the found cells' centres (projective with all nine, affine with fewer). The grid is
   then checked on its own lines (:func:`_verify_grid`): which way its contrast goes, whether the 3x3
   window is a square off (a column of table taken for cells), how wide the lines are. With fewer than
   nine cells it is refined on the lines: each line is located from cross-line profiles (half-maximum
   centroids), straight lines are fitted to them, and their 16 crossings correct the homography. The
   signed angle, centre and corners follow from it. Square 1 is the top-left cell in the board's own
   frame.
4. **Reading.** The grid is warped to the canonical view and each square read twice. Against the
   *plate* (:func:`_read_squares`): the bare board is measured in the squares' corners, which no piece
   reaches, as one robust surface over the board with each square's own level; a piece is a round body
   or outline (a rim, a shadow) of pixels that differ from it, found ring by ring around their centroid
   (what lies on one side only, the glow of a line, does not count), and its colour is the tone of its
   middle on the grid's own scale. Against the *ring* of board just inside the lines
   (:func:`_read_squares_ring`), right where pieces are small. The plate's reading stands, except where
   it sees no clear piece and the ring a clean reading (:func:`_combine`); a square they disagree on is
   never read with a confidence above ``DISAGREEMENT_MAX_CONFIDENCE``.
5. **Occlusion.** Grid lines are sampled along their whole length; where they are not seen with the
   contrast the rest of the grid shows (and no pair of pieces of the lines' own tone explains it),
   something covers them. A hand or an arm covers long stretches (the frame is occluded), a finger a
   stretch a finger wide (the squares on both sides are). Inside a square, what differs from the plate
   must look like a piece: round, as wide as long, not reaching three corners, not smaller than a
   piece nor filling the square into its corners, on a plate like the others'; otherwise it is a hand,
   a pen, a coin or a sheet, and the square is occluded. An occluded square is unknown, and the frame
   is occluded.
6. **Supply.** Piece-sized, round (not square like a marker's cells), grey (not coloured), clearly
   light or dark blobs off the grid are supply pieces.

**Tracking** (:func:`track`): with the last good pose, the lines are located at that pose as in
step 3; when they are where it puts them, the pose is corrected on them and the squares read, with
no search (a fraction of the cost). Otherwise the full search runs.

When no grid is found and a ``prior`` pose is given (the last good one), the squares are read with the
prior pose and the result says so (``pose_source == "prior"``). Rejecting sudden jumps across frames is
the job of the stateful :class:`services.vision.tracker.PoseTracker`, not of this function.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Final, Literal

import cv2
import numpy as np

from messages import BoardObservation, BoardPose, Point, SquareObservation, SupplyPiece

#: what one square holds.
State = Literal["empty", "black", "white", "unknown"]
#: where a pose came from: found in this image, taken from the prior, or none at all.
PoseSource = Literal["detected", "prior", "none"]
#: which way the grid's contrast goes.
Polarity = Literal["dark-lines", "light-lines"]

BOARD_CHARS: Final[dict[str, str]] = {"empty": ".", "black": "X", "white": "O", "unknown": "?"}
#: canonical coordinates of the outer grid corners, in the order of BoardPose.corners_px.
CANONICAL_CORNERS: Final = np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 3.0], [0.0, 3.0]], np.float32)
CANONICAL_CORNERS.flags.writeable = False
GRID_SQUARES: Final = 3


#: a lattice of all nine cells whose mean residual is below 0.1 pitch is taken at once.
FULL_GRID_SCORE: Final = 8.9
#: cells needed for a projective fit; fewer get an affine one (7 or 8 points make an unstable
#: homography), which the line refinement then corrects for perspective.
FULL_HOMOGRAPHY_CELLS: Final = 9
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
#: margin of the canonical view around the grid, in squares (so the outer lines are sampled whole).
CANON_MARGIN: Final = 0.35
#: line samples per square side, spread over the middle of the side (corners are crossings).
LINE_SAMPLES: Final = 10
#: a pixel differs in colour only beyond this share of the plate's own colour (opponent channels).
CHROMA_OF_PLATE: Final = 0.35
#: a square's four corners keep at least this many pixels in all.
MIN_CORNER_PIXELS: Final = 16
#: a piece seen only at the plate's texture (see _faint_piece): its middle differs by this many of the
#: finer thresholds, and its reading is never certain.
#: pieces are black or white: a body more saturated than this is something else (see _coloured).
PIECE_MAX_SATURATION: Final = 0.4
SATURATION_FLOOR: Final = 125.0
OFF_PLATE_COLOUR: Final = 0.5
#: a body whose middle sits within this of the middle of the grid's tone scale (0 dark, 1 light) is as
#: far from a black piece as from a white one: not a piece.
MID_TONE: Final = 0.15
#: a plate darker than this (with light lines) or lighter than that (with dark lines) may hide a piece
#: of its own tone (black pieces are grey 15-55 as exposed, white ones 205-245): a bare square read there
#: is this confident at most.
BLACK_PIECE_GREY: Final = 70.0
WHITE_PIECE_GREY: Final = 195.0
HIDING_PLATE_CONFIDENCE: Final = 0.85
#: a square read bare whose middle is further than this from the plate's end of the scale, towards the
#: lines' end, is not bare.
NOT_PLATE_TONE: Final = 0.6
#: mid-tone pieces in one group of tones this tight, this far from all the other pieces' tones (on the
#: same scale), take the colour of their side (see _mid_tones_by_the_board), this confident at most.
TONE_GROUP_SPREAD: Final = 0.2
TONE_GROUP_GAP: Final = 0.8
BOARD_TONE_CONFIDENCE: Final = 0.8
#: a faint body's face varies by at most this share of its level up to its edge (see _faint_piece).
FAINT_PLATEAU: Final = 0.4
#: a line's near sides lie this many pixels beyond its half width (see _verify_grid).
NEAR_GAP_PX: Final = 2
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
FAINT_BODY_K: Final = 1.5
#: ...and its edge: the mean level falls by this share of the body's over two rings (0.08 pitch).
FAINT_EDGE_SHARE: Final = 0.7
FAINT_MAX_CONFIDENCE: Final = 0.85
#: the corners start this far (pitches) beyond the largest piece that fits between the lines.
CORNER_PIECE_MARGIN: Final = 0.03
#: the squares' corners (plate) start this far from their centres, in pitches.
PLATE_CORNER_RADIUS: Final = 0.5
#: robust passes of the plate surface fit, the residual (in robust sigmas) beyond which a corner is
#: dropped, and the fewest corners the fit keeps.
PLATE_FIT_PASSES: Final = 3
PLATE_OUTLIER_K: Final = 3.5
PLATE_MIN_CORNERS: Final = 12
#: a corner whose level is off its square's by more than this many times the median corner's (plus
#: the noise) is not plain board (a shadow reaches it): the board's variation is measured without it.
PLAIN_CORNER_K: Final = 2.0
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
#: the inside of a square keeps at least this many image pixels from its lines (their blur).
MARGIN_MIN_PX: Final = 2.5
#: length to width beyond which a blob is not a piece (a disc or a cross is as wide as it is long).
FOREIGN_ELONGATION: Final = 2.2
#: a square's corners this far (in grid contrasts) off the board's plate surface: something covers it.
FOREIGN_BACKGROUND_FRAC: Final = 0.5
#: differing pixels below this share of a square's inside are noise, not an object.
RING_FOREIGN_MIN_AREA: Final = 0.08
#: share of the ring that a piece never covers (the ring lies outside any piece on its square).
RING_FOREIGN_RING_COVER: Final = 0.55
#: a square the two readings disagree on is read with at most this confidence.
DISAGREEMENT_MAX_CONFIDENCE: Final = 0.75
#: what the ring reading flags that is kept whatever the corners' reading says.
RING_FLAGS_KEPT: Final = ("elongated",)
#: the ring reading's thresholds (see _read_squares_ring): a pixel differs beyond this share of the
#: grid's contrast, and a piece fills this share of the central disc.
RING_PIECE_MIN_FRAC: Final = 0.06
RING_PIECE_MIN_FILL: Final = 0.12
#: median absolute deviation to standard deviation (Gaussian).
MAD_TO_SIGMA: Final = 1.4826
#: the 90th percentile of a chroma deviation to the scale it is compared at (about 1.5 x the Rayleigh
#: sigma, the same margin MAD_TO_SIGMA gives the median).
CHROMA_TAIL_TO_SIGMA: Final = 0.7
#: saturation (channel spread / brightness) above which a blob is a coloured object, not a piece; loose,
#: since a colour cast tints white pieces too.
SUPPLY_MAX_SATURATION: Final = 0.35
#: the brightness a dark blob's channel spread is measured against (its own is too small to divide by).
DARK_CHROMA_FLOOR: Final = 128.0
#: a disc's bounding box is at least this wide for its length.
DISC_MIN_ASPECT: Final = 0.6
#: a disc fills at most this much of its minimum-area rectangle (a square fills all of it).
DISC_MAX_RECT_FILL: Final = 0.9
#: erosion of the supply mask, in pitches (parts pieces joined by a shadow or blur).
SUPPLY_ERODE: Final = 0.04
#: a supply piece's core differs from its surroundings by this many thresholds on average.
SUPPLY_CORE_K: Final = 1.4
#: the grid is searched again at full resolution when fewer cells than this were found at half.
FULL_RES_BELOW_CELLS: Final = 7
#: the line masks are dilated by this many working pixels to close hairline gaps in thin lines.
DILATION_PX: Final = 1
#: images smaller than this (pixels on the shorter side) cannot hold a readable grid.
MIN_IMAGE_SIDE: Final = 48
#: the grid is searched for at half resolution first when the image's shorter side is at least this.
HALF_RES_MIN_SIDE: Final = 360
#: the comb search: edges above this percentile of gradient energy vote for the angle; this many
#: candidate angles at least this many degrees apart are tried.
COMB_EDGE_PERCENTILE: Final = 90.0
COMB_ANGLES: Final = 2
COMB_ANGLE_SEPARATION: Final = 4.0
#: pitches tried, as fractions of the image's shorter side, in steps of this many (reduced) pixels.
COMB_MIN_PITCH_FRAC: Final = 0.06
COMB_MAX_PITCH_FRAC: Final = 0.22
COMB_PITCH_STEP: Final = 0.5
#: the projections' high-pass: a running mean this many (reduced) pixels wide is taken off.
COMB_HIGHPASS: Final = 9
#: a line stands out of both its sides this many (reduced) pixels away, for one of these: half a line's
#: width and a little more, thin lines to thick.
COMB_RIDGE_REACH: Final = (1, 2, 3)
#: the comb's likeliest grids checked on the lines, at most this many of each kind of evidence; the
#: checking stops at a grid whose lines are seen this well. Not more: on a full board the plate's strips
#: between lines and pieces make a second, offset grid that passes the check (4 a kind: 84 of 725
#: passing grids on rendered full boards were a quarter pitch off; 1 a kind: 0 of 200).
COMB_CANDIDATES: Final = 1
COMB_SURE_SEEN: Final = 0.95
#: the comb search runs when the cells gave fewer than this many squares; its grid is taken when this
#: share of the line segments is seen where it puts them.
COMB_BELOW_CELLS: Final = 6
COMB_MIN_SEEN: Final = 0.8
COMB_SEEN_MARGIN: Final = 0.15
#: the comb's grid must be this clear (see _verify_grid): its weakest line at least this share of its
#: typical one, and nothing beyond it as strong as this share's complement.
COMB_MIN_CLEAR: Final = 0.2
#: a prior pose is confirmed when this fraction of its line segments is seen...
TRACK_MIN_SEEN: Final = 0.8
#: ...and they lie this close (root mean square, canonical pixels, about image pixels) to where it puts them.
TRACK_MAX_RMS_PX: Final = 1.5
#: a tracked pose keeps its numbering this many degrees beyond +-45 (hysteresis: a board standing at 45
#: degrees must not have its squares renumbered from one frame to the next).
TRACK_HYSTERESIS_DEG: Final = 2.0
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
#: refinements of a found pose on the grid lines (the cells' centres are found at half resolution).
REFINE_PASSES: Final = 2
#: half the line width in pitches, when it cannot be measured (reading at a prior pose), and its bounds.
DEFAULT_HALF_WIDTH: Final = 0.04
MIN_HALF_WIDTH: Final = 0.01
MAX_HALF_WIDTH: Final = 0.2
#: a hidden line sample counts as covered when its grey is this far (in line contrasts) from the lines'.
COVER_LEVEL_FRAC: Final = 0.35
#: consecutive hidden line samples (0.07 pitch apart) that make a covered stretch (about a finger's width).
HIDDEN_RUN_SAMPLES: Final = 4
#: how far beyond a piece's measured edge (pitches) it may hide a line: its rim and soft shadow, and
#: the edge's own step (``RING_STEP``).
PIECE_LINE_REACH: Final = 0.12
#: fewest seen line samples around a square to take their level rather than the grid's.
MIN_LINE_SAMPLES: Final = 6
#: Below this grid contrast in grey (levels), the grid is also looked at in each pixel's brightest
#: channel, and read there when its contrast is ``BRIGHTEST_GAIN`` times higher.
LOW_GRID_CONTRAST: Final = 24.0
BRIGHTEST_GAIN: Final = 2.0
#: a plate whose channels spread over more than this share of its brightest one is saturated (green,
#: blue: its grey is far below its lightness); a piece's tone is then taken in the brightest channel.
PLATE_SATURATED: Final = 0.6
#: the float64 machine epsilon (``np.polyfit``'s default ``rcond`` is the points' count times it).
FLOAT_EPS: Final = float(np.finfo(np.float64).eps)
#: canonical centres of squares 1..9.
SQUARE_CENTRES: Final = np.array([[(n % 3) + 0.5, (n // 3) + 0.5] for n in range(9)])
SQUARE_CENTRES.flags.writeable = False


class DetectorError(ValueError):
    """The image cannot be processed at all (wrong type, wrong shape, empty)."""


@dataclass(frozen=True)
class DetectorParams:
    """Tuning of the detector. Every size is a fraction of the image or of the grid's pitch."""

    #: local-mean window for the line masks, as a fraction of the image's shorter side.
    window_frac: float = 0.07
    #: a pixel belongs to a line mask when it differs from its local mean by this many noise sigmas...
    line_noise_k: float = 4.0
    #: ...and by at least this fraction of the image's grey-level spread (5th to 95th percentile).
    line_min_frac: float = 0.04
    #: a cell's side is between these fractions of the image's shorter side.
    min_cell_frac: float = 0.025
    max_cell_frac: float = 0.3
    #: a cell's convex hull fills at least this much of its minimum-area rectangle.
    min_rect_fill: float = 0.82
    #: and the region itself at least this much of its hull (a piece touching a line dents it).
    min_hull_fill: float = 0.45
    #: longest to shortest side of a cell's rectangle (perspective and blur allow some).
    max_aspect: float = 1.45
    #: cells of one lattice differ in side by at most this ratio and in angle by this many degrees.
    size_tolerance: float = 0.35
    angle_tolerance_deg: float = 12.0
    #: a cell sits on the lattice when its offset is within this many pitches of a lattice point.
    lattice_tolerance: float = 0.22
    #: fewest cells that make a grid without a prior.
    min_cells: int = 4
    #: canonical view resolution: pixels per square, clamped to this range around the image pitch.
    canonical_min_px: int = 20
    canonical_max_px: int = 40
    #: a square's piece disc and background ring, as fractions of the pitch from its centre.
    piece_radius: float = 0.30
    ring_margin: float = 0.05
    ring_width: float = 0.08
    #: a pixel differs from the square's background when it is this many noise sigmas away...
    piece_noise_k: float = 3.0
    #: ...and at least this fraction of the grid's grey-level spread.
    piece_min_frac: float = 0.1
    #: ...or differs in colour (opponent channels) by this fraction of the grid's contrast.
    piece_min_chroma: float = 0.06
    #: fraction of the piece disc that must differ for a piece to be there.
    piece_min_fill: float = 0.3
    #: a line sample is seen when its contrast is at least this fraction of the grid's typical contrast.
    line_seen_frac: float = 0.45
    #: a square is occluded when this fraction of its border lines is not seen...
    square_occluded_frac: float = 0.35
    #: ...and the frame when this fraction of all grid lines is not seen.
    frame_occluded_frac: float = 0.12
    #: a square's reading below this confidence is reported as unknown.
    min_confidence: float = 0.55
    #: supply pieces: diameter between these fractions of the pitch, this round (area / enclosing circle).
    supply_min_diameter: float = 0.3
    supply_max_diameter: float = 0.85
    supply_min_roundness: float = 0.6
    #: how far outside the grid (in pitches) a blob must be to count as a supply piece.
    supply_grid_margin: float = 0.15


DEFAULT_PARAMS: Final = DetectorParams()


@dataclass(frozen=True)
class SquareReading:
    """One square: number 1..9, state, confidence 0..1, pixel centre, and whether its border is hidden."""

    number: int
    state: State
    confidence: float
    center_px: tuple[float, float]
    occluded: bool = False
    #: fraction of the square's central disc whose colour differs clearly from its background.
    fill: float = 0.0
    #: the disc's median grey on the grid's own scale: 0 its dark tone, 1 its light tone.
    tone: float = 0.0

    @property
    def char(self) -> str:
        return BOARD_CHARS[self.state]


@dataclass(frozen=True)
class SupplyReading:
    """A piece seen off the grid."""

    colour: Literal["black", "white"]
    center_px: tuple[float, float]
    radius_px: float


@dataclass(frozen=True)
class Detection:
    """The reading of one image. ``found`` is false when no grid was found and no prior was given."""

    found: bool
    pose: BoardPose | None = None
    squares: tuple[SquareReading, ...] = ()
    supply: tuple[SupplyReading, ...] = ()
    occluded: bool = False
    #: fraction of the grid lines not seen (covered by something that is not the board).
    occlusion: float = 0.0
    pose_source: PoseSource = "none"
    polarity: Polarity | None = None
    #: how many cells the lattice was built from (0 when the pose came from the prior).
    cells: int = 0
    #: board pitch in image pixels (mean side of a square, lines included).
    pitch_px: float = 0.0
    #: "" or a short word: "no-board", "occluded", "low-confidence", "prior".
    problem: str = ""
    processing_ms: float = 0.0
    #: the grid's line contrast in grey levels (signed: positive for light lines).
    line_contrast: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def board(self) -> str:
        """Nine characters row by row: X black, O white, . empty, ? unknown."""
        if not self.squares:
            return "?" * 9
        return "".join(s.char for s in self.squares)

    @classmethod
    def from_observation(cls, obs: BoardObservation) -> Detection:
        """The detection a bus message carries (the inverse of :meth:`to_observation`, as far as the
        message goes: no cells, polarity or contrast), so that a reader of ``vision.board`` draws it with
        :func:`services.vision.annotate.annotate` like vision itself does."""
        return cls(
            found=obs.found,
            pose=obs.pose,
            squares=tuple(
                SquareReading(
                    number=s.number,
                    state=s.state,
                    confidence=s.confidence,
                    center_px=(s.center_px.x, s.center_px.y) if s.center_px is not None else (0.0, 0.0),
                )
                for s in obs.squares
                if s.center_px is not None
            ),
            supply=tuple(
                SupplyReading(
                    colour=p.colour, center_px=(p.center_px.x, p.center_px.y), radius_px=p.radius_px
                )
                for p in obs.supply
            ),
            occluded=obs.occluded,
            occlusion=obs.occlusion,
            pitch_px=pitch_of(obs.pose) if obs.pose is not None else 0.0,
            problem=obs.problem,
            processing_ms=obs.processing_ms,
        )

    def to_observation(self, frame_id: int, *, capture_ns: int = 0) -> BoardObservation:
        """This detection as the bus message (not yet stable: the filter decides that)."""
        return BoardObservation(
            frame_id=frame_id,
            found=self.found,
            board=self.board,
            pose=self.pose,
            squares=[
                SquareObservation(
                    number=s.number,
                    state=s.state,
                    confidence=round(s.confidence, 3),
                    center_px=Point(*s.center_px),
                )
                for s in self.squares
            ],
            supply=[
                SupplyPiece(colour=p.colour, center_px=Point(*p.center_px), radius_px=p.radius_px)
                for p in self.supply
            ],
            occluded=self.occluded,
            occlusion=round(self.occlusion, 3),
            capture_ns=capture_ns,
            processing_ms=round(self.processing_ms, 3),
            problem=self.problem,
        )


# ----------------------------------------------------------------------------------------------------
# small geometry helpers


def _odd(n: float) -> int:
    k = max(3, round(n))
    return k if k % 2 else k + 1


def _wrap90(angle_deg: float) -> float:
    """An angle folded into (-45, 45] (the board looks the same every quarter turn)."""
    a = math.fmod(angle_deg + 45.0, 90.0)
    if a <= 0.0:
        a += 90.0
    return a - 45.0


def _angle_diff90(a: np.ndarray | float, b: float) -> np.ndarray | float:
    """Smallest difference between angles taken modulo 90 degrees."""
    d = np.mod(np.asarray(a) - b + 45.0, 90.0) - 45.0
    return np.abs(d)


def _apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to an (N, 2) array."""
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    q = p @ h[:, :2].T + h[:, 2]
    return q[:, :2] / q[:, 2:3]


def pose_from_homography(h_img_to_canon: np.ndarray) -> BoardPose:
    """The :class:`messages.BoardPose` of a homography from image pixels to the canonical view."""
    inv = np.linalg.inv(h_img_to_canon)
    corners = _apply_h(inv, CANONICAL_CORNERS)
    center = _apply_h(inv, np.array([[1.5, 1.5]]))[0]
    ends = _apply_h(inv, np.array([[0.0, 1.5], [3.0, 1.5], [1.5, 0.0], [1.5, 3.0]]))
    ux, uy = ends[1] - ends[0]
    vx, vy = ends[3] - ends[2]
    # The board's x axis lies along (cos a, -sin a) and its y axis along (sin a, cos a) in the image.
    a1 = math.atan2(-uy, ux)
    a2 = math.atan2(vx, vy)
    angle = math.degrees(math.atan2(math.sin(a1) + math.sin(a2), math.cos(a1) + math.cos(a2)))
    hn = h_img_to_canon / h_img_to_canon[2, 2]
    return BoardPose(
        center_px=Point(float(center[0]), float(center[1])),
        angle_deg=float(angle),
        corners_px=tuple(Point(float(x), float(y)) for x, y in corners),  # type: ignore[arg-type]
        homography=tuple(float(v) for v in hn.ravel()),
    )


def _quarter_turn(k: int) -> np.ndarray:
    """Canonical-view rotation by ``k`` quarter turns about the grid's centre (1.5, 1.5)."""
    c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][k % 4]
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    shift = np.array([[1.0, 0.0, 1.5], [0.0, 1.0, 1.5], [0.0, 0.0, 1.0]])
    return shift @ rot @ np.linalg.inv(shift)


def _normalise_turn(h: np.ndarray) -> tuple[np.ndarray, BoardPose]:
    """Relabel the squares by quarter turns so that the reported angle lies in (-45, 45]: which corner
    is square 1 follows from the angle, not from the order the cells were found in."""
    pose = pose_from_homography(h)
    turn = round((pose.angle_deg - _wrap90(pose.angle_deg)) / 90.0)
    for k in (turn, -turn):
        if k % 4 == 0:
            break
        h2 = _quarter_turn(k) @ h
        pose2 = pose_from_homography(h2)
        if -45.0 < pose2.angle_deg <= 45.0 + 1e-9:
            return h2, pose2
    return h, pose


def homography_of(pose: BoardPose) -> np.ndarray:
    """The image-to-canonical homography of ``pose`` (from its corners when it carries none)."""
    if len(pose.homography) == 9:
        return np.array(pose.homography, np.float64).reshape(3, 3)
    src = np.array([[p.x, p.y] for p in pose.corners_px], np.float32)
    return cv2.getPerspectiveTransform(src, CANONICAL_CORNERS).astype(np.float64)


def pitch_of(pose: BoardPose) -> float:
    """Mean side of one square in image pixels."""
    c = np.array([[p.x, p.y] for p in pose.corners_px])
    sides = np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)
    return float(sides.mean() / GRID_SQUARES)


# ----------------------------------------------------------------------------------------------------
# stage 1: cell candidates


@dataclass
class _Cells:
    """Candidate cells of one mask, as parallel arrays."""

    center: np.ndarray  # (N, 2)
    side: np.ndarray  # (N,)
    angle: np.ndarray  # (N,) degrees in (-45, 45]
    solid: np.ndarray  # (N,) region area / hull area


def noise_sigma(gray: np.ndarray) -> float:
    """Robust estimate of the sensor noise (grey levels) from horizontal pixel differences.

    Edges are a minority of pixels, so the median of absolute differences measures the noise.
    """
    sub = gray[::8, :]
    # |a - b| of 8-bit pixels is exact in 8 bits; its median from a histogram (exact for integers,
    # several times faster than sorting).
    d = cv2.absdiff(sub[:, 1:], sub[:, :-1])
    return _median_of_counts(np.bincount(d.ravel(), minlength=256), d.size) * 1.4826 / math.sqrt(2.0)


def _order_stat(cum: np.ndarray, k: int) -> int:
    """The ``k``-th smallest value (0-based) of integers whose histogram's running sum is ``cum``."""
    return int(np.searchsorted(cum, k, side="right"))


def _median_of_counts(counts: np.ndarray, n: int) -> float:
    """The median of ``n`` integers given as a histogram ``counts`` (``counts[v]`` values equal to v),
    exactly as ``np.median`` gives it: the mean of the two middle values when ``n`` is even."""
    cum = np.cumsum(counts)
    return (_order_stat(cum, (n - 1) // 2) + _order_stat(cum, n // 2)) / 2.0


def _percentile_of_counts(cum: np.ndarray, n: int, q: float) -> float:
    """``np.percentile(values, q)`` (linear interpolation) of ``n`` integers whose histogram's running sum
    is ``cum``, computed in the same float64 steps as numpy's so that the result is the same to the bit."""
    virtual = (n - 1) * (q / 100.0)
    below = math.floor(virtual)
    if virtual >= n - 1:
        return float(_order_stat(cum, n - 1))
    a, b = _order_stat(cum, below), _order_stat(cum, below + 1)
    gamma = virtual - below
    diff = float(b - a)
    # numpy's lerp: from the nearer end, so that the ends are exact.
    return b - diff * (1.0 - gamma) if gamma >= 0.5 else a + diff * gamma


def _cell_candidates(mask_lines: np.ndarray, params: DetectorParams) -> _Cells:
    """Regions enclosed by ``mask_lines`` that look like square cells."""
    h, w = mask_lines.shape
    short = min(h, w)
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


#: a lattice position near an anchor cell (column and row steps from it) -> (residual, cell index, cells
#: there) of the cell nearest to it (the first of equals), in the order the positions first appear.
_Nearest = dict[tuple[int, int], tuple[float, int, int]]


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


def _find_lattice(cells: _Cells, params: DetectorParams) -> _Lattice | None:
    """The best 3x3 window of cells on a common lattice (see the module's step 2), or None."""
    n = len(cells.side)
    if n < 2:
        return None
    #: the best window so far: (score, its squares' keys sorted, their cells, pitch, anchor's angle).
    best: tuple[float, list[int], list[int], float, float] | None = None
    tol = params.lattice_tolerance
    for i in range(n):
        if best is not None and len(best[1]) == GRID_SQUARES**2 and best[0] > FULL_GRID_SCORE:
            break  # a full, tight grid: no other anchor can beat it by more than noise
        si = cells.side[i]
        ai = cells.angle[i]
        ok = (np.abs(cells.side / si - 1.0) < params.size_tolerance) & (
            _angle_diff90(cells.angle, ai) < params.angle_tolerance_deg
        )
        idx = np.flatnonzero(ok)
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
        # The best 3x3 window containing the anchor (0, 0).
        for c0 in range(-2, 1):
            for r0 in range(-2, 1):
                inside = [
                    (col - c0 + 3 * (row - r0), at)
                    for (col, row), at in nearest.items()
                    if c0 <= col <= c0 + 2 and r0 <= row <= r0 + 2
                ]
                if sum(at[2] for _, at in inside) < 2:
                    continue  # fewer than two cells in the window
                count = len(inside)
                # Summed in the order the squares' cells first appear (the same float sum every time).
                mean_res = sum(at[0] for _, at in inside) / count
                score = count - mean_res
                if best is None or score > best[0]:
                    inside.sort(key=lambda entry: entry[0])
                    best = (score, [k for k, _ in inside], [at[1] for _, at in inside], pitch, float(ai))
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
        side=float(np.median(cells.side[mem])),
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


def _segment_bounds(s: int, m: int) -> np.ndarray:
    """Start and end (canonical px, along the line) of every segment: two per square side, clear of the
    crossings. Shape (3 * SEGMENTS_PER_SIDE, 2)."""
    out = []
    for j in range(GRID_SQUARES):
        for a, b in ((0.12, 0.5), (0.5, 0.88)):
            out.append((m + int((j + a) * s), m + int((j + b) * s)))
    return np.array(out)


def _straight_fit(t: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Slope and intercept of the least-squares line through (``t``, ``y``): ``np.polyfit(t, y, 1)``
    without its checks and options, in the same steps (columns scaled to unit norm, the same LAPACK
    solve), so that the fit is the same to the bit."""
    design = np.empty((t.size, 2))
    design[:, 0] = t
    design[:, 1] = 1.0
    scale = np.sqrt((design * design).sum(axis=0))
    design /= scale
    coef = np.linalg.lstsq(design, y + 0.0, t.size * FLOAT_EPS)[0]
    return coef / scale


def _fit_lines(
    gray: np.ndarray, h: np.ndarray, pitch_px: float, sign: int, half_width: float, params: DetectorParams
) -> _LineFit | None:
    """Place each grid line in a canonical view warped with ``h`` from cross-line profiles, fit a
    straight line to each, and correct ``h`` so that their 16 crossings land where they belong.

    A profile's half-maximum centroid is the line's centre (independent of the line's width); segments
    without contrast (covered) or far from their line's fit (a piece beside the line) do not count.
    None when the view cannot be built (a degenerate homography).
    """
    s = int(min(params.canonical_max_px, max(params.canonical_min_px, round(pitch_px))))
    m = max(2, round(CANON_MARGIN * s))
    size = GRID_SQUARES * s + 2 * m
    to_canvas = np.array([[s, 0.0, m], [0.0, s, m], [0.0, 0.0, 1.0]])
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
    bounds = _segment_bounds(s, m)
    lines = m + s * np.arange(GRID_SQUARES + 1)
    # profiles[d, k, j, o]: direction d (0 vertical lines, 1 horizontal), line k, segment j, offset o.
    cols = lines[:, None] + offsets.astype(int)[None, :]  # (4, O)
    vert = img[:, cols]  # (size, 4, O): rows along the vertical lines
    horiz = img[cols, :].transpose(2, 0, 1)  # (size, 4, O): columns along the horizontal lines
    idx = bounds.ravel()
    lengths = (bounds[:, 1] - bounds[:, 0]).astype(np.float32)
    prof = np.stack(
        [np.add.reduceat(a, idx, axis=0)[::2] / lengths[:, None, None] for a in (vert, horiz)]
    )  # (2, J, 4, O)
    lo = prof.min(axis=3, keepdims=True)
    hi = prof.max(axis=3, keepdims=True)
    contrast = (hi - lo)[..., 0]  # (2, J, 4)
    weight = np.maximum(prof - (lo + 0.5 * (hi - lo)), 0.0)
    offset = (weight * offsets).sum(axis=3) / np.maximum(weight.sum(axis=3), 1e-6)  # (2, J, 4)
    typical = float(np.median(contrast))
    seen = contrast >= SEGMENT_SEEN_FRAC * max(typical, 1e-3)
    # The line's ends are inside the profile window: a centroid near the window's edge is not a line.
    seen &= np.abs(offset) < reach - 0.5
    along = ((bounds[:, 0] + bounds[:, 1]) / 2.0).astype(np.float64)  # (J,)
    fits: list[list[tuple[float, float] | None]] = [[], []]
    used = []
    for d in range(2):
        for k in range(GRID_SQUARES + 1):
            ok = seen[d, :, k]
            fit = None
            for _ in range(2):
                if ok.sum() < 2:
                    fit = None
                    break
                t = along[ok] - size / 2.0
                a, b = (
                    _straight_fit(t, offset[d, ok, k])
                    if ok.sum() >= 3
                    else (0.0, float(offset[d, ok, k].mean()))
                )
                resid = np.abs(a * (along - size / 2.0) + b - offset[d, :, k])
                fit = (float(lines[k] + b), float(a))
                keep = ok & (resid <= SEGMENT_OUTLIER_PX)
                if keep.sum() == ok.sum():
                    break
                ok = keep
            used.append(ok)
            fits[d].append(fit)
    seen_frac = float(seen.mean())
    offs = np.abs(offset[seen]) if seen.any() else np.array([np.inf])
    max_off, rms = float(offs.max()), float(np.sqrt(np.mean(offs**2)))
    vert_fits = [(k, f) for k, f in enumerate(fits[0]) if f is not None]
    horiz_fits = [(k, f) for k, f in enumerate(fits[1]) if f is not None]
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
    h_new = np.linalg.inv(to_canvas) @ corr @ to_canvas @ h
    return _LineFit(h_new / h_new[2, 2], max_off, rms, seen_frac, s)


# ----------------------------------------------------------------------------------------------------
# stage 4 and 5: reading the squares and the lines in the canonical view


@dataclass
class _Canon:
    img: np.ndarray  # grey float32, the grid plus a margin on every side
    px: int  # pixels per square
    margin: int  # pixels of margin on each side
    colour: np.ndarray | None = None  # the same view in colour (float32, 3 channels), lightly smoothed


def _canonical(
    gray: np.ndarray, h: np.ndarray, pitch_px: float, params: DetectorParams, bgr: np.ndarray | None = None
) -> _Canon:
    s = int(min(params.canonical_max_px, max(params.canonical_min_px, round(pitch_px))))
    m = max(2, round(CANON_MARGIN * s))
    to_canvas = np.array([[s, 0.0, m], [0.0, s, m], [0.0, 0.0, 1.0]])
    size = GRID_SQUARES * s + 2 * m
    warp = to_canvas @ h
    img = cv2.warpPerspective(
        gray, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    colour = None
    if bgr is not None:
        c = cv2.warpPerspective(
            bgr, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        colour = cv2.GaussianBlur(c, (3, 3), 0).astype(np.float32)
    return _Canon(img.astype(np.float32), s, m, colour)


@lru_cache(maxsize=64)
def _line_sampling(s: int, m: int, band: int, off: int) -> tuple[np.ndarray, ...]:
    """Pixel indices of every line sample in a canonical view of ``s`` px per square and ``m`` margin,
    as flat indices into the view (each clipped to it): (line pixels (L, B), reference pixels beside
    the line (L, 2), owners (L, 2): the squares (0..8, -1 none) on its two sides)."""
    lr, lc, rr, rc, own = [], [], [], [], []
    offsets = np.arange(-band, band + 1)
    pos = (np.arange(LINE_SAMPLES) + 0.5) / LINE_SAMPLES
    for k in range(GRID_SQUARES + 1):
        line = m + k * s
        for j in range(GRID_SQUARES):
            for t in pos:
                along = m + int((j + 0.15 + 0.7 * t) * s)
                a_sq = k - 1 if k >= 1 else -1
                b_sq = k if k <= 2 else -1
                for vertical in (True, False):
                    refs = [line - off, line + off]
                    if vertical:
                        lr.append(np.full_like(offsets, along))
                        lc.append(line + offsets)
                        rr.append([along, along])
                        rc.append(refs)
                        own.append([j * 3 + a_sq if a_sq >= 0 else -1, j * 3 + b_sq if b_sq >= 0 else -1])
                    else:
                        lr.append(line + offsets)
                        lc.append(np.full_like(offsets, along))
                        rr.append(refs)
                        rc.append([along, along])
                        own.append([a_sq * 3 + j if a_sq >= 0 else -1, b_sq * 3 + j if b_sq >= 0 else -1])
    size = GRID_SQUARES * s + 2 * m

    def flat(rows: list, cols: list) -> np.ndarray:
        return np.clip(np.array(rows), 0, size - 1) * size + np.clip(np.array(cols), 0, size - 1)

    return _read_only(flat(lr, lc), flat(rr, rc), np.array(own))


def _read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """``arrays``, marked read-only: a cached function hands the same arrays to every caller, so none
    may change them."""
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _line_contrast(
    canon: _Canon, sign: int, half_width: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Contrast of every line sample against the board beside it (positive when the line stands out
    the expected way) on the side where it is larger and on the side where it is smaller, the squares
    (0..8, -1 none) each sample borders, and the line's grey level."""
    s = canon.px
    band = max(1, round(half_width * s))
    off = band + max(2, round(0.1 * s))
    line_at, ref_at, own = _line_sampling(s, canon.margin, band, off)
    img = canon.img.ravel()
    line_vals = img[line_at]
    peak = line_vals.max(axis=1) if sign > 0 else line_vals.min(axis=1)
    ref_vals = img[ref_at]
    # Against the side where the line stands out most: a white piece beside a light line hides the
    # contrast on its side only, while a hand over the line hides it on both sides.
    sides = sign * (peak[:, None] - ref_vals)
    return sides.max(axis=1), sides.min(axis=1), own, peak


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
        corner &= cheb_i <= float(np.median(cheb_i[corner]))
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
    # Where each square's corner levels are measured, as _plate_surface takes them: square by square
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
        ),
    )


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


def _median_of_nine(values: np.ndarray) -> float:
    """``float(np.median(values))`` of the nine squares' ``values`` (9,): the fifth smallest, which an
    odd count needs no mean for, without np.median's overhead."""
    return sorted(values.tolist())[GRID_SQUARES**2 // 2]


def _masked_medians(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``np.median(values[k][mask[k]], axis=0)`` for every row ``k`` of ``values`` ((N, P) or (N, P, C);
    ``mask`` (N, P)) at once, NaN for a row with nothing in it: the same numbers (the middle value, or
    the mean of the middle two), without a call per row. The masked-out values sort last as NaN."""
    where = mask if values.ndim == 2 else mask[..., None]
    v = np.where(where, values, np.nan)
    v.sort(axis=1)
    count = np.count_nonzero(mask, axis=1)
    shape = (-1, 1) + (1,) * (values.ndim - 2)
    lo = (np.maximum(count - 1, 0) // 2).reshape(shape)
    hi = (count // 2).reshape(shape)
    return ((np.take_along_axis(v, lo, 1) + np.take_along_axis(v, hi, 1)) / 2)[:, 0]


def _corner_medians(values: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """The median of ``values`` ((9, P, C), over each square's inside) in each corner of each square:
    (Q, 9, C), quadrant by quadrant, as ``np.median`` gives them."""
    z = values[:, geo.corner_index]  # (9, Q, K, C)
    n_q, k = geo.corner_index.shape
    valid = np.broadcast_to(geo.corner_valid, (len(values), n_q, k)).reshape(-1, k)
    medians = _masked_medians(z.reshape(-1, k, z.shape[-1]), valid)  # (9 * Q, C)
    return medians.reshape(len(values), n_q, -1).swapaxes(0, 1)


def _plate_design(p: np.ndarray) -> np.ndarray:
    """The plate surface's terms (a quadratic in the canonical coordinates about the board's centre) at
    the points ``p`` (N, 2): (N, 6)."""
    x, y = p[:, 0] - 1.5, p[:, 1] - 1.5
    return np.stack([np.ones_like(x), x, y, x * x, x * y, y * y], axis=1)


def _plate_surface(values: np.ndarray, a: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The board's plate as a smooth surface: a quadratic in the canonical coordinates fitted robustly to
    ``values`` (N, C) measured at the points whose :func:`_plate_design` is ``a`` (the squares' corners,
    which no piece covers), then evaluated at the points whose design is ``at`` (M, 6). Corners that
    something else covers (a shadow, a hand, a sheet) stray from the others and are dropped. Returns
    the surface at ``at`` (M, C) and at the corners (N, C)."""
    keep = np.ones(len(values), bool)
    coef = np.zeros((a.shape[1], values.shape[1]))
    for _ in range(PLATE_FIT_PASSES):
        coef, *_ = np.linalg.lstsq(a[keep], values[keep], rcond=None)
        resid = np.linalg.norm(values - a @ coef, axis=1)
        scale = MAD_TO_SIGMA * float(np.median(resid[keep])) + 1.0
        new_keep = resid <= PLATE_OUTLIER_K * scale
        if new_keep.sum() < PLATE_MIN_CORNERS or (new_keep == keep).all():
            break
        keep = new_keep
    return at @ coef, a @ coef


def _read_squares(
    canon: _Canon,
    half_width: float,
    line_level: np.ndarray,
    pitch_px: float,
    noise: float,
    params: DetectorParams,
) -> tuple[list[tuple[str, float, float, float, str, float]], np.ndarray]:
    """(state, confidence, piece evidence, lightness, foreign, plate grey) of every square; ``foreign``
    is "" or why something that is not a piece is in the square. And each square's piece as a disc
    (9, 4): its centre (pitches from the square's), its edge radius (0 where nothing differs) and its
    middle's grey.

    The *plate* (the bare board) is measured where no piece can be: in the corners of the nine squares,
    fitted as one smooth surface over the board (so gradients and vignetting pass, and a corner that a
    shadow or a hand darkens is outvoted). A pixel *differs* when its grey or its colour is clearly off
    that surface (beyond the plate's own noise and texture, and a fraction of the grid's contrast).

    *Whether* a piece is there: a piece is a round body with an edge. Around the centroid of what
    differs, the share of differing pixels is taken ring by ring: a piece of any tone fills its disc
    (a dark or light face), or at least its outline (a rim, a shadow: a white piece on a white plate);
    bare board leaves every ring near zero. The evidence is the best ring's share.
    *Which* piece: the median grey of the piece's middle, on the scale the grid itself gives around the
    square, from its dark tone (0) to its light tone (1) (plate and lines, whichever is which): below the
    middle is black. On a saturated plate with dark lines, the plate's and the middle's brightest
    channel instead of grey. A highlight or a rim is a minority of the middle and changes nothing.
    A square read bare whose middle is far from the plate's tone is not bare (its corners took a large
    piece's level), and a bare reading on a plate that could hide a piece is never certain.
    """
    s, m = canon.px, canon.margin
    # Clear of the lines' blur: a margin of a few image pixels at least.
    margin = max(params.ring_margin, MARGIN_MIN_PX / max(pitch_px, 1.0))
    geo = _square_masks(s, m, round(half_width, 3), round(margin, 3))
    grey = canon.img.ravel()[geo.pixels]  # (9, P): the inside of each square
    chans = [grey]
    colour_px = None
    if canon.colour is not None:
        colour = colour_px = np.take(canon.colour.reshape(-1, 3), geo.pixels, axis=0)
        # Opponent colour (blue-green, red-green): what the grey level cannot see.
        chans += [colour[..., 0] - colour[..., 1], colour[..., 2] - colour[..., 1]]
    data = np.stack(chans, axis=-1)  # (9, P, C)
    n_ch = data.shape[-1]
    # Each square's four corner medians, then one surface through all of them.
    vals = _corner_medians(data, geo).reshape(-1, n_ch)
    plate_px, plate_corners = _plate_surface(vals, geo.corner_design, geo.pixel_design)
    # The surface gives the plate's shape; each square's own corners its level (median of four: one
    # corner in a shadow does not move it), so a square lit or clipped unlike the surface stays bare.
    n_q = len(geo.corner_index)
    own = np.median((vals - plate_corners).reshape(n_q, 9, n_ch), axis=0)  # (9, C)
    plate = plate_px.reshape(9, -1, n_ch) + own[:, None, :]
    dev = data - plate  # (9, P, C)
    # How much bare board varies (noise, texture, JPEG) in the corners, pooled over the board: over the
    # corners whose level the plate explains (a large piece's shadow sets a corner apart from its
    # square's level; that is the piece, not the plate, and it would hide faint pieces everywhere).
    level_off = np.abs((vals - plate_corners).reshape(n_q, 9, n_ch)[..., 0] - own[None, :, 0])  # (Q, 9)
    plain = level_off <= PLAIN_CORNER_K * float(np.median(level_off)) + noise
    in_plain = geo.corner_valid[None, :, :] & plain.T[:, :, None]  # (9, Q, K)
    # (Never below the image's own noise: the corners are small where the lines are thick.) Light lines
    # on a dark plate glow into every corner (the plate darker in the middle than near the lines, as
    # much as a faint piece): there, all the corners' variation.
    if float(np.median(line_level)) > float(np.median(plate[:, 0, 0])):
        in_plain = np.broadcast_to(geo.corner_valid[None, :, :], in_plain.shape)
    vary = max(MAD_TO_SIGMA * float(np.median(np.abs(dev[:, geo.corner_index, 0][in_plain]))), noise)
    # ...and how much it varies within one corner, around that corner's own level: the plate's texture
    # alone. Soft shadows of large pieces reach some corners and set them apart from the surface, which
    # swells ``vary``; a white piece a few grey levels off a white plate then stays under it.
    texture = max(MAD_TO_SIGMA * float(np.median(_corner_spreads(dev[..., 0], geo))), noise)
    plate_grey = plate[..., 0].mean(axis=1)  # (9,)
    contrast = np.abs(line_level - plate_grey)  # (9,) the grid's own contrast around each square
    scale = _median_of_nine(contrast)
    t_grey = np.maximum(params.piece_noise_k * vary, params.piece_min_frac * contrast)
    differs = np.abs(dev[..., 0]) > t_grey[:, None]
    if n_ch == 3:
        cdev = np.hypot(dev[..., 1], dev[..., 2])
        c_corner = cdev[:, geo.corner_index][in_plain]
        # Chroma is coarsely quantised (8-bit channels, JPEG's subsampled colour): the median deviation
        # is often 0 while a tenth of the pixels stray by several levels, so the tail sets the scale too.
        vary_c = max(
            MAD_TO_SIGMA * float(np.median(c_corner)),
            CHROMA_TAIL_TO_SIGMA * float(np.percentile(c_corner, 90)),
        )
        # Pieces are black or white: on a coloured plate they differ by about the plate's own colour,
        # so a blotch of JPEG colour a fraction of that is not one.
        # (The mean over each square's pixels, summed pixel by pixel as numpy sums this strided view,
        # from a copy laid out pixel-major, which sums the same way several times faster.)
        chroma_sum = np.ascontiguousarray(plate[..., 1:].swapaxes(0, 1)).sum(axis=0)
        plate_chroma_mean = chroma_sum / plate.shape[1]  # (9, 2)
        plate_chroma = np.linalg.norm(plate_chroma_mean, axis=1)  # (9,)
        t_chroma = np.maximum.reduce(
            [
                np.full(9, params.piece_noise_k * vary_c),
                params.piece_min_chroma * contrast,
                CHROMA_OF_PLATE * plate_chroma,
            ]
        )
        differs |= cdev > t_chroma[:, None]
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
    background = np.linalg.norm(own, axis=1) > FOREIGN_BACKGROUND_FRAC * scale
    f0 = params.piece_min_fill
    evidences, centres_off, edges = _piece_evidence(differs, geo, geo.body_zone)
    # The second look, only where the first saw nothing.
    white_from = np.minimum(line_level, plate_grey) + 0.5 * contrast
    left = (evidences < f0) & ~background
    faint = _faint_pieces(t_looks, differs, dev[..., 0], grey, left, plate_grey, white_from, geo, f0)
    most = np.ones(9)  # the highest confidence each square's reading may have
    if faint:
        differs = differs.copy()
        for k, (d, evidence, centre, edge) in faint.items():
            differs[k], evidences[k], centres_off[k], edges[k] = d, evidence, centre, edge
            most[k] = FAINT_MAX_CONFIDENCE
    # Each square's middle (only pixels of the core can be in it) and its median grey, all at once.
    middles = _middles(geo, centres_off, edges)
    middle_grey = _masked_medians(grey[:, geo.core], middles)
    reaches = _reaches_corners(differs, geo)
    why = ["reaches-corners" if reaches[k] else "" for k in range(9)]
    for k in np.flatnonzero(evidences >= f0).tolist():
        if not why[k]:
            middle = np.zeros(geo.rad.size, bool)
            middle[geo.core] = middles[k]
            piece = (float(evidences[k]), centres_off[k], float(edges[k]))
            why[k] = _shape_problem(differs[k], dev[k, :, 0], piece, middle, geo, f0)
            # A clean round piece in a square whose corners are off the board's surface: its shadow and
            # rim reach them (a full board of large pieces). A sheet over the square leaves no piece.
            background[k] &= bool(why[k])
    why = ["background" if background[k] else w for k, w in enumerate(why)]
    looks_coloured = np.zeros(9, bool)
    rows = np.flatnonzero((evidences >= f0) & ~np.array([bool(w) for w in why]))
    if colour_px is not None and rows.size:
        medians = _masked_medians(colour_px[rows][:, geo.core], middles[rows])
        for row, k in enumerate(rows.tolist()):
            looks_coloured[k] = _coloured(medians[row], int(middles[k].sum()), plate[k, 0, 1:])
    # The light end of the scale, when it is a saturated plate: it is lighter than its grey says (a green
    # plate's grey is a black foam piece's in a bright room), so the plate's brightest channel, and the
    # middle's, like with like. Dark lines are about as dark in every channel. (Light lines on a dark
    # plate: in grey, as the lines are. Wood and pale plates: in grey, where a steel coin is mid-tone.)
    plate_light, middle_light = plate_grey, middle_grey
    by_light = np.zeros(9, bool)
    if colour_px is not None:
        by_light, plate_light = _saturated_plate(line_level, plate_grey, plate_chroma_mean)
        if by_light.any():
            middle_light = _masked_medians(colour_px[:, geo.core].max(axis=2), middles)
    out: list[tuple[str, float, float, float, str, float]] = []
    for k in range(9):
        evidence, problem = float(evidences[k]), why[k]
        dark_ref = min(float(line_level[k]), float(plate_grey[k]))
        if by_light[k]:
            tone = (float(middle_light[k]) - dark_ref) / max(float(plate_light[k]) - dark_ref, 1e-3)
        else:
            tone = (float(middle_grey[k]) - dark_ref) / max(float(contrast[k]), 1e-3)
        presence = min(1.0, (evidence - f0) / f0)
        if evidence < f0 and not problem:
            # How far the middle is from the plate's end of the scale, towards the other end (a middle
            # darker than a dark plate is the glow of light lines around it, not a piece).
            towards_lines = 1.0 - tone if line_level[k] < plate_grey[k] else tone
            if towards_lines <= NOT_PLATE_TONE:
                conf = 1.0 - 0.5 * evidence / f0
                if _could_hide_a_piece(float(plate_grey[k]), bool(line_level[k] < plate_grey[k])):
                    conf = min(conf, HIDING_PLATE_CONFIDENCE)
                out.append(("empty", conf, evidence, tone, "", float(plate_grey[k])))
                continue
            # Nothing differs from the square's plate, yet its middle is nowhere near the plate's tone:
            # its corners took a piece's level (a large piece's body and shadow reach them on a full
            # board). The middle's tone says which piece; never a certain reading.
            presence, most[k] = 1.0, min(float(most[k]), DISAGREEMENT_MAX_CONFIDENCE)
        if not problem and looks_coloured[k]:
            problem = "coloured"  # brass, copper, skin, a pen's cap: pieces are black or white
        elif not problem and abs(tone - 0.5) < MID_TONE:
            problem = "mid-tone"  # a steel coin, a grey eraser: as far from black as from white
        # How far the tone is from the middle of the scale, 0.3 away is certain.
        certainty = min(1.0, abs(tone - 0.5) / 0.3)
        conf = min(float(most[k]), 0.5 + 0.5 * min(presence, certainty))
        state = "black" if tone < 0.5 else "white"
        out.append((state, conf, evidence, tone, problem, float(plate_grey[k])))
    return out, np.column_stack([centres_off, edges, middle_grey])


def _could_hide_a_piece(plate_grey: float, dark_lines: bool) -> bool:
    """Whether a plate of this grey could hide a piece of its own tone: a plate as dark as black pieces
    (light lines on it), or as light as white ones (dark lines on it), in the grey levels a camera
    exposed for the board gives them. A square read bare there is never certain."""
    return plate_grey >= WHITE_PIECE_GREY if dark_lines else plate_grey <= BLACK_PIECE_GREY


def _saturated_plate(
    line_level: np.ndarray, plate_grey: np.ndarray, opponent: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Which squares' plates (grey (N,) and opponent colour (N, 2: B-G, R-G), as OpenCV weighs grey:
    0.114 B + 0.587 G + 0.299 R) are saturated, their channels spread over more than ``PLATE_SATURATED``
    of the brightest, with lines darker than them (``line_level`` (N,)): there a piece's tone is taken
    in the brightest channel. Returns that mask and each plate's brightest channel."""
    g = plate_grey - 0.114 * opponent[:, 0] - 0.299 * opponent[:, 1]
    light = np.maximum(g, g + np.max(opponent, axis=1))
    dark = np.minimum(g, g + np.min(opponent, axis=1))
    return (line_level < plate_grey) & (light - dark > PLATE_SATURATED * light), light


def _mid_tones_by_the_board(
    readings: list[tuple[str, float, float, float, str, float]],
) -> list[tuple[str, float, float, float, str, float]]:
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


def _middles(geo: _SquareMasks, centres: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each square's piece middle, whose tone says its colour: within ``MIDDLE_OF_EDGE`` of its edge
    radius (``edges`` (N,), bounded) of its centre (``centres`` (N, 2), pitches from the square's),
    over the pixels of the core (``geo.core``): (N, core pixels)."""
    radius = np.maximum(MIDDLE_MIN_RADIUS, np.minimum(MIDDLE_RADIUS, MIDDLE_OF_EDGE * edges))
    dx, dy = geo.dx[geo.core], geo.dy[geo.core]
    rr = np.hypot(dx[None, :] - centres[:, :1], dy[None, :] - centres[:, 1:])
    return rr <= radius[:, None]


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
    mid_dev = np.median(grey_dev[:, geo.very_middle], axis=1)
    for i, t in enumerate(thresholds):
        rows = left & (np.abs(mid_dev) > FAINT_PREFILTER * FAINT_BODY_K * t) if i == 0 else left
        if not rows.any():
            continue
        look = _FaintLook.at(t, differs, grey_dev, rows, geo, geo.body_zone)
        for k in look.rows.tolist():
            piece = look.piece(k, grey_dev[k], geo, f0)
            if piece is None:
                continue
            # Only a white piece, or a black one lighter than the plate (a plate darker than black
            # pieces), can be that faint: a faint dark middle is the plate between the glows of thick
            # light lines, and a black piece stands out from any plate lighter than itself. (A piece
            # seen by its outline alone has no middle off the plate to judge.) Tried: a dark middle
            # with the plate level beyond its edge; it read phantoms on the real photos' dark board.
            tone_grey = _middle_grey(grey[k], piece, geo)
            body_off = abs(tone_grey - float(plate_grey[k])) > FAINT_BODY_K * float(t[k])
            if body_off and tone_grey < white_from[k] and tone_grey <= plate_grey[k]:
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


def _combine(
    ring: list[tuple[str, float, float, float, str, float]],
    corners: list[tuple[str, float, float, float, str, float]],
) -> list[tuple[str, float, float, float, str, float]]:
    """One reading per square from the two: against the plate in the corners (``corners``, the one
    that holds for pieces of any size) and against the ring just inside the lines (``ring``, the larger
    sample of bare board where pieces are small). The corners' reading stands, except where it sees
    no clear piece (empty, or something it cannot call a piece) while the ring sees a clean reading of
    the other kind: a bare square darker or lighter in its middle than in its corners (the lines' blur
    meets there, or the plate is stained) is bare to the ring; a small piece of an odd shape (a cross)
    is a piece to the ring."""
    out = []
    for a, b in zip(ring, corners, strict=True):
        ring_clean = not a[4] and a[0] != "unknown"
        bare_to_ring = a[0] == "empty" and (bool(b[4]) or b[0] == "unknown")
        piece_to_ring = a[0] in ("black", "white") and b[0] == "empty" and not b[4]
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
        out.append(chosen)
    return out


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
    ex, ey = geo.dx[None, :] - cx[:, None], geo.dy[None, :] - cy[:, None]
    rr = np.hypot(ex, ey)
    ring = np.minimum(np.maximum(0, np.floor((rr - RING_FIRST) / RING_STEP).astype(np.int64) + 1), RING_COUNT)
    sector = ((np.arctan2(ey, ex) + math.pi) * (RING_SECTORS / (2 * math.pi))).astype(np.int64)
    sector = np.minimum(sector, RING_SECTORS - 1)
    size = (RING_COUNT + 1) * RING_SECTORS
    cell = (np.arange(n)[:, None] * size + ring * RING_SECTORS + sector).ravel()
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
    edge = np.where(best > 0, RING_FIRST + RING_STEP * outermost, 0.0)
    few = mass < MIN_EVIDENCE_PIXELS
    best[few], edge[few] = 0.0, 0.0
    cx[few], cy[few] = 0.0, 0.0
    return best, np.stack([cx, cy], axis=1), edge


def _corner_spreads(values: np.ndarray, geo: _SquareMasks) -> np.ndarray:
    """Absolute deviations of ``values`` ((9, P), one per pixel of each square's inside) in the corners
    of each square, each from its own corner's median: (corner pixels of the nine squares,) in no
    particular order."""
    z = values[:, geo.corner_index]  # (9, Q, K)
    medians = _corner_medians(values[..., None], geo)[..., 0].T  # (9, Q)
    return np.abs(z - medians[..., None])[:, geo.corner_valid]


@dataclass(frozen=True)
class _FaintLook:
    """A second look at some squares (``rows``) at a finer ``threshold`` (9,): their differing pixels
    and what :func:`_piece_evidence` makes of them."""

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
        finer = differs | (np.abs(grey_dev) > threshold[:, None])
        # (A bare square differs at the plate's texture in a few stray pixels only.)
        some = (finer & body_zone).mean(axis=1) >= FAINT_MIN_SHARE * body_zone.mean()
        rows = np.flatnonzero(looked_at & some)
        evidence = _piece_evidence(finer[rows], geo, body_zone) if rows.size else None
        return cls(threshold, rows, finer, evidence)

    def piece(
        self, k: int, grey_dev: np.ndarray, geo: _SquareMasks, f0: float
    ) -> tuple[np.ndarray, float, np.ndarray, float] | None:
        """Square ``k``'s faint piece by :func:`_faint_piece`, or None (also when not looked at)."""
        if self.evidence is None or k not in self.rows:
            return None
        row = int(np.flatnonzero(self.rows == k)[0])
        found = (float(self.evidence[0][row]), self.evidence[1][row], float(self.evidence[2][row]))
        return _faint_piece(found, self.differs[k], grey_dev, float(self.threshold[k]), geo, f0)


def _faint_piece(
    faint: tuple[float, np.ndarray, float],
    d: np.ndarray,
    grey_dev: np.ndarray,
    threshold: float,
    geo: _SquareMasks,
    f0: float,
) -> tuple[np.ndarray, float, np.ndarray, float] | None:
    """The second look at square ``k``, which shows no piece at the board's variation: a piece a few grey
    levels off the plate (a white piece on a white plate, in a large piece's shadow) seen at the plate's
    texture (``d``, the square's differing pixels at that finer ``threshold``; ``faint``, the
    evidence, centre and edge from them, as :func:`_piece_evidence` gives). It must be all a piece is,
    and more: a round body of a piece's size, not elongated, not reaching the corners, and either a
    middle that itself differs from the plate by ``FAINT_BODY_K`` thresholds with a level face and a
    short edge (:func:`_level_edge`; board texture and the glow of a shadow differ in patches and rims,
    not in a whole body), or, a piece of the plate's own tone, an outline all round a level face
    (:func:`_outline`). Returns (differing pixels, evidence, centre, edge) or None."""
    evidence, centre, edge = faint
    if evidence < f0 or not PIECE_MIN_RADIUS <= edge < PIECE_MAX_EDGE:
        return None
    rr = np.hypot(geo.dx - centre[0], geo.dy - centre[1])
    middle = rr <= max(MIDDLE_MIN_RADIUS, min(MIDDLE_RADIUS, MIDDLE_OF_EDGE * edge))
    body = float(np.median(grey_dev[middle]))
    ring = np.floor(rr / RING_STEP).astype(np.int64)
    counts = np.bincount(ring)
    profile = np.bincount(ring, weights=grey_dev) / np.maximum(counts, 1)
    lo, hi = int(PIECE_MIN_RADIUS / RING_STEP), min(int(PIECE_MAX_EDGE / RING_STEP) + 1, len(profile) - 2)
    if abs(body) <= FAINT_BODY_K * threshold:
        # No body to speak of: a piece of the plate's own tone still shows its outline (its shadow, its
        # rim) as a ring all round it (the evidence: every sector of a ring differs) around a level face.
        if not _outline(profile, counts, body, threshold, lo, hi):
            return None
    elif not _level_edge(profile, counts, body, lo, hi):
        return None
    if _reaches_corners(d[None, :], geo)[0] or _shape_problem(d, grey_dev, faint, middle, geo, f0):
        return None
    return d, evidence, centre, edge


def _level_edge(profile: np.ndarray, counts: np.ndarray, body: float, lo: int, hi: int) -> bool:
    """Whether a square's radial ``profile`` (as :func:`_outline` takes it) falls from a level face at
    ``body`` to the plate within a short step, somewhere between rings ``lo`` and ``hi`` (the smallest
    piece's radius and the largest's): the level falls by ``FAINT_EDGE_SHARE`` of the body within two
    rings, and the face before it varies by at most ``FAINT_PLATEAU`` of it. The glow of thick light
    lines fades over a whole square instead, and falls all the way."""
    falls = [
        (profile[i - 1] - profile[i + 1]) * math.copysign(1.0, body)
        for i in range(max(lo, 1), hi + 1)
        if counts[i - 1] and counts[i + 1]
    ]
    if not falls or max(falls) < FAINT_EDGE_SHARE * abs(body):
        return False
    step = max(lo, 1) + int(np.argmax(falls))
    face = profile[: max(step - 1, 2)]
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


def _coloured(med: np.ndarray, pixels: int, plate_opponent: np.ndarray) -> bool:
    """Whether a body's middle (the median of its ``pixels`` pixels' B, G, R: ``med`` (3,)) is clearly
    coloured, and not in the plate's own colour (that is the plate showing through, not an object): its
    saturation, the spread of its median's channels over its brightest channel (at least
    ``SATURATION_FLOOR``, so that the few levels of colour in a black piece's noise and JPEG do not
    count), is above ``PIECE_MAX_SATURATION`` (a white balance a tenth warm or cool leaves a white piece
    near 0.2), and its opponent colour (B-G, R-G) is off the plate's (``plate_opponent``) by more than
    ``OFF_PLATE_COLOUR`` of its own."""
    if pixels < MIN_EVIDENCE_PIXELS:
        return False
    top = float(med.max())
    if (top - float(med.min())) / max(top, SATURATION_FLOOR) <= PIECE_MAX_SATURATION:
        return False
    own = np.array([med[0] - med[1], med[2] - med[1]])
    return float(np.hypot(*(own - plate_opponent))) > OFF_PLATE_COLOUR * float(np.hypot(*own))


def _middle_grey(
    grey: np.ndarray, piece: tuple[np.ndarray, float, np.ndarray, float], geo: _SquareMasks
) -> float:
    """The median grey of a piece's middle (``piece`` as :func:`_faint_piece` returns it)."""
    _d, _evidence, centre, edge = piece
    rr = np.hypot(geo.dx - centre[0], geo.dy - centre[1])
    return float(np.median(grey[rr <= max(MIDDLE_MIN_RADIUS, min(MIDDLE_RADIUS, MIDDLE_OF_EDGE * edge))]))


def _body(d: np.ndarray, grey_dev: np.ndarray, middle: np.ndarray) -> np.ndarray:
    """Of the differing pixels ``d``, the body: those off the plate the way the middle is, by at least
    ``BODY_OF_MIDDLE`` of the middle's own deviation (``grey_dev``: each pixel's grey minus the plate's).
    A piece's soft shadow and a white piece's dark rim fall away; a sheet or a palm stays whole. When the
    middle barely differs in grey (a piece seen by its colour), all of ``d``."""
    level = float(np.median(grey_dev[middle])) if middle.any() else 0.0
    core = d & (grey_dev * math.copysign(1.0, level) >= BODY_OF_MIDDLE * abs(level))
    return core if core.sum() >= MIN_EVIDENCE_PIXELS and abs(level) > 0.0 else d


def _round(d: np.ndarray, geo: _SquareMasks, centre: np.ndarray) -> bool:
    """Whether the pixels ``d`` of one square are a piece's round body near ``centre`` (pitches from
    the square's centre), rather than a sheet or a palm. Where the square's inside does not cut the
    body off, its outline is fitted with a circle; a piece's circle is no larger than the largest piece
    (``ROUND_MAX_REACH``) and nothing of the body lies beyond it by more than ``ROUND_MAX_RATIO``. A
    body cut off nearly all round is a piece when it reaches no farther than the largest piece."""
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
    (cx, cy, c), *_ = np.linalg.lstsq(a, x * x + y * y, rcond=None)
    radius = math.sqrt(max(c + cx * cx + cy * cy, 0.0))
    farthest = float(np.hypot(geo.dx[d] - cx, geo.dy[d] - cy).max())
    return radius <= ROUND_MAX_REACH and farthest <= ROUND_MAX_RATIO * radius


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


@lru_cache(maxsize=64)
def _ring_masks(s: int, m: int, half_width: float, params: DetectorParams) -> tuple[np.ndarray, ...]:
    """One square's geometry for the ring reading, over the pixels of its inside (everything within the
    ring's outer edge): where the background ring is (a mask) and, as indices, where the ring and the
    piece disc are; each pixel's offset from the centre in pitches (dx, dy); and the nine squares'
    inside pixels as flat indices into a canonical view of ``s`` px per square and ``m`` margin (9, P).
    It depends on these sizes alone, so every frame at them shares it."""
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32)
    dx = (xx + 0.5) / s - 0.5
    dy = (yy + 0.5) / s - 0.5
    cheb = np.maximum(np.abs(dx), np.abs(dy))
    rad = np.hypot(dx, dy)
    ring_out = 0.5 - half_width - params.ring_margin
    ring_in = ring_out - params.ring_width
    ring = (cheb <= ring_out) & (cheb >= ring_in)
    disc = rad <= min(params.piece_radius, ring_in)
    inside = cheb <= ring_out
    row, col = np.divmod(np.arange(9), 3)
    ys, xs = np.nonzero(inside)
    size = GRID_SQUARES * s + 2 * m
    pixels = (m + row[:, None] * s + ys[None, :]) * size + (m + col[:, None] * s + xs[None, :])
    ring_i = ring[inside]
    return _read_only(
        ring_i, np.flatnonzero(ring_i), np.flatnonzero(disc[inside]), dx[inside], dy[inside], pixels
    )


#: the plane the nine squares' ring backgrounds are fitted with (see _foreign_ring): 1, column, row.
BACKGROUND_PLANE: Final = np.stack([np.ones(9), np.arange(9) % 3 - 1.0, np.arange(9) // 3 - 1.0], axis=1)
BACKGROUND_PLANE.flags.writeable = False


def _read_squares_ring(
    canon: _Canon, half_width: float, line_level: np.ndarray, params: DetectorParams
) -> list[tuple[str, float, float, float, str, float]]:
    """The first reading, against a ring of board just inside each square's lines: (state, confidence,
    piece fill, lightness, foreign, the ring's grey) of every square; ``foreign`` is "" or why
    something that is not a piece is in the square (see :func:`_foreign_ring`). Right where pieces are
    small beside their squares (the ring is bare board); a large piece covers the ring, and then
    :func:`_read_squares` (against the plate in the corners) is the one to believe.

    *Whether* a piece is there: the fraction of the square's central disc whose colour differs clearly
    from the square's own background (the median colour of the ring of board just inside its lines).
    Colour, not grey: a blue-black piece on an olive board has the same grey level as the board.
    *Which* piece: the disc's median grey placed on the scale the grid itself provides, from its dark
    tone (0) to its light tone (1) (board and lines, whichever is which): below the middle is black.
    Glare spots on a black piece and shading on a white one are minorities of the disc.
    """
    s, m = canon.px, canon.margin
    ring_i, ring_at, disc_at, dx_i, dy_i, pixels = _ring_masks(s, m, round(half_width, 3), params)
    grey = canon.img.ravel()[pixels]  # (9, P): the inside of each square
    grey_ring = grey[:, ring_at]
    chroma = None
    if canon.colour is None:
        bg_grey, bg_chroma = np.median(grey_ring, axis=1), np.zeros((9, 2), np.float32)  # (9,), (9, 2)
    else:
        colour = np.take(canon.colour.reshape(-1, 3), pixels, axis=0)
        # Opponent colour (blue-green, red-green): what the grey level cannot see.
        chroma = np.stack([colour[..., 0] - colour[..., 1], colour[..., 2] - colour[..., 1]], axis=-1)
        # The ring's median grey and chroma, in one call.
        ring_all = np.concatenate([grey_ring[:, :, None], chroma[:, ring_at]], axis=2)  # (9, R, 3)
        ring_level = np.median(ring_all, axis=1)
        bg_grey, bg_chroma = ring_level[:, 0], ring_level[:, 1:]
    contrast = np.abs(line_level - bg_grey)  # (9,) the grid's own contrast around each square
    # How much bare board varies (noise, texture, glow of the lines): pooled over the nine rings, robust
    # to the few a piece reaches into. A pixel differs from its background beyond k times that.
    ring_dev = np.abs(grey_ring - bg_grey[:, None])
    vary = MAD_TO_SIGMA * float(np.median(ring_dev))
    t_grey = np.maximum(params.piece_noise_k * vary, RING_PIECE_MIN_FRAC * contrast)
    differs = np.abs(grey - bg_grey[:, None]) > t_grey[:, None]  # (9, P)
    if chroma is not None:
        ring_cdev = _chroma_distance(chroma[:, ring_at], bg_chroma)
        # Chroma is coarsely quantised (8-bit channels, JPEG's subsampled colour): the median deviation
        # is often 0 while a tenth of the pixels stray by several levels, so the tail sets the scale too.
        vary_c = max(
            MAD_TO_SIGMA * float(np.median(ring_cdev)),
            CHROMA_TAIL_TO_SIGMA * float(np.percentile(ring_cdev, 90)),
        )
        t_chroma = np.maximum(params.piece_noise_k * vary_c, params.piece_min_chroma * contrast)
        differs |= _chroma_distance(chroma, bg_chroma) > t_chroma[:, None]
    fill = differs[:, disc_at].mean(axis=1)
    dark_ref = np.minimum(line_level, bg_grey)
    t = (np.median(grey[:, disc_at], axis=1) - dark_ref) / np.maximum(contrast, 1e-3)
    if chroma is not None:  # a saturated plate as the light end: in its brightest channel, as _read_squares
        by_light, light = _saturated_plate(line_level, bg_grey, bg_chroma)
        if by_light.any():
            t_light = (np.median(colour[:, disc_at].max(axis=2), axis=1) - dark_ref) / np.maximum(
                light - dark_ref, 1e-3
            )
            t = np.where(by_light, t_light, t)
    foreign = _foreign_ring(differs, ring_i, dx_i, dy_i, bg_grey, bg_chroma, contrast)
    out: list[tuple[str, float, float, float, str, float]] = []
    f0 = RING_PIECE_MIN_FILL
    for f, tone, why, bg in zip(fill.tolist(), t.tolist(), foreign, bg_grey.tolist(), strict=True):
        if f < f0 and not why:
            out.append(("empty", 1.0 - 0.5 * f / f0, f, tone, "", bg))
            continue
        presence = min(1.0, (f - f0) / f0)
        # How far the tone is from the middle of the scale, 0.5 away is certain.
        certainty = min(1.0, abs(tone - 0.5) / 0.3)
        conf = 0.5 + 0.5 * min(presence, certainty)
        out.append(("black" if tone < 0.5 else "white", conf, f, tone, why, bg))
    return out


def _chroma_distance(chroma: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """The distance of each pixel's opponent colour (``chroma``, (9, N, 2)) from its square's
    (``ref``, (9, 2)): (9, N), as ``np.linalg.norm(chroma - ref[:, None, :], axis=2)`` gives it (the
    same sum of two squares), without its detour through a strided reduction."""
    a = chroma[..., 0] - ref[:, None, 0]
    b = chroma[..., 1] - ref[:, None, 1]
    return np.sqrt(a * a + b * b)


def _foreign_ring(
    differs: np.ndarray,
    ring_i: np.ndarray,
    dx: np.ndarray,
    dy: np.ndarray,
    bg_grey: np.ndarray,
    bg_chroma: np.ndarray,
    contrast: np.ndarray,
) -> list[str]:
    """For each square, "" or why what lies in it is not a piece (a fingertip, a pen, a sheet, a hand
    that leaves the lines visible): the pixels that differ from the square's background

    - cover much of the ring of board just inside the lines ("reaches-lines": a piece, even off-centre,
      stays clear of most of it; something coming in from outside crosses it);
    - are elongated ("elongated": a disc or a cross is as wide as it is long, a finger or a pen is not);
    - or the background itself is not the board's ("background": something flat covers the whole
      square), judged against a plane through the nine squares' backgrounds (lighting gradients are
      smooth) on the grid's own contrast scale.
    """
    n = differs.shape[0]
    why = [""] * n
    ring_cover = differs[:, ring_i].mean(axis=1)
    # Shape from the part inside the ring: the glow of thick lines and the edges of shadows along the
    # border make thin strips there that are no object.
    w = (differs & ~ring_i).astype(np.float32)
    mass = w.sum(axis=1)
    mx = (w @ dx) / np.maximum(mass, 1.0)
    my = (w @ dy) / np.maximum(mass, 1.0)
    sxx = (w @ (dx * dx)) / np.maximum(mass, 1.0) - mx * mx
    syy = (w @ (dy * dy)) / np.maximum(mass, 1.0) - my * my
    sxy = (w @ (dx * dy)) / np.maximum(mass, 1.0) - mx * my
    half_tr = (sxx + syy) / 2.0
    root = np.sqrt(np.maximum(half_tr**2 - (sxx * syy - sxy**2), 0.0))
    elong = np.sqrt((half_tr + root) / np.maximum(half_tr - root, 1e-6))
    enough = mass >= RING_FOREIGN_MIN_AREA * differs.shape[1]
    # Background against a plane through the nine squares' backgrounds (grey and both chroma axes).
    design = BACKGROUND_PLANE
    bgs = np.column_stack([bg_grey, bg_chroma]).astype(np.float64)
    coef, *_ = np.linalg.lstsq(design, bgs, rcond=None)
    resid = np.linalg.norm(bgs - design @ coef, axis=1)
    scale = _median_of_nine(contrast)
    for k in range(n):
        if enough[k] and ring_cover[k] > RING_FOREIGN_RING_COVER:
            why[k] = "reaches-lines"
        elif enough[k] and elong[k] > FOREIGN_ELONGATION:
            why[k] = "elongated"
        elif resid[k] > FOREIGN_BACKGROUND_FRAC * scale:
            why[k] = "background"
    return why


# ----------------------------------------------------------------------------------------------------
# stage 6: supply pieces


def _supply(
    small: np.ndarray,
    scale: float,
    h: np.ndarray,
    pitch: float,
    sigma: float,
    spread: float,
    params: DetectorParams,
    bgr: np.ndarray | None = None,
) -> list[SupplyReading]:
    """Round piece-sized blobs clearly lighter or darker than their surroundings, off the grid.

    ``small`` is the blurred grey image reduced by ``scale`` (pixels of ``small`` per image pixel).
    The grid (with a margin) is cut out and the mask eroded a little, so that pieces lying close
    together or beside the board (joined by shadows or blur) come apart. A blob's core must differ
    clearly (``SUPPLY_CORE_K`` thresholds on average), which a soft shadow does not; it must be round
    (``supply_min_roundness`` of its enclosing circle) without filling its rectangle (the squares of a
    calibration marker do), and grey rather than coloured (pieces are black or white).
    """
    p_small = pitch * scale
    thresh = max(params.piece_noise_k * sigma, 2.0 * params.piece_min_frac * spread)
    erode = max(1, round(SUPPLY_ERODE * p_small))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * erode + 1, 2 * erode + 1))
    dmin = params.supply_min_diameter * p_small - 2 * erode
    dmax = params.supply_max_diameter * p_small - 2 * erode
    found: list[SupplyReading] = []
    mg = params.supply_grid_margin
    grid = np.array([[-mg, -mg], [3 + mg, -mg], [3 + mg, 3 + mg], [-mg, 3 + mg]])
    grid_small = np.round(_apply_h(np.linalg.inv(h), grid) * scale).astype(np.int32)
    # The background: the local mean over two pitches (the table around a piece, whatever its shade).
    win = _odd(2.0 * p_small)
    mean = cv2.blur(small, (win, win))
    for colour, diff in (("white", cv2.subtract(small, mean)), ("black", cv2.subtract(mean, small))):
        _, mask = cv2.threshold(diff, thresh, 255, cv2.THRESH_BINARY)
        # The grid is not supply: cut it out, so that a piece beside it is not joined to its lines.
        cv2.fillConvexPoly(mask, grid_small, 0)
        mask = cv2.erode(mask, kernel)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for k in _disc_sized(contours, dmin, dmax).tolist():
            for centre, radius in _piece_discs(contours[k], dmin, dmax, params.supply_min_roundness):
                u, v = _apply_h(h, centre[None, :] / scale)[0]
                if -mg < u < 3 + mg and -mg < v < 3 + mg:
                    continue
                x0, y0 = int(max(0, centre[0] - radius)), int(max(0, centre[1] - radius))
                core = diff[y0 : int(centre[1] + radius) + 1, x0 : int(centre[0] + radius) + 1]
                disc = mask[y0 : int(centre[1] + radius) + 1, x0 : int(centre[0] + radius) + 1]
                if core.size == 0 or cv2.mean(core, disc)[0] < SUPPLY_CORE_K * thresh:
                    continue  # a soft shadow or smudge, not a piece's sharp face
                if bgr is not None and not _neutral(bgr, centre / scale, 0.6 * radius / scale, colour):
                    continue  # a coloured thing on the table: pieces are black or white
                found.append(
                    SupplyReading(
                        colour,  # type: ignore[arg-type]
                        (float(centre[0] / scale), float(centre[1] / scale)),
                        float((radius + erode) / scale),
                    )
                )
    return found


def _disc_sized(contours: tuple[np.ndarray, ...], dmin: float, dmax: float) -> np.ndarray:
    """Indices of the ``contours`` of three points or more whose bounding box (as cv2.boundingRect
    gives it: the points' extent plus one) is at least ``dmin`` long and ``DISC_MIN_ASPECT`` of that
    wide, and whose points span no more than ``dmax`` (the circle enclosing them is at least as wide
    as they span; the margin covers its float32 radius): the only ones :func:`_piece_discs` can take.
    Most are specks of noise, streaks or large patches; this sorts them out in one pass."""
    if not contours:
        return np.zeros(0, np.int64)
    sizes = np.array([len(c) for c in contours])
    starts = np.cumsum(sizes) - sizes
    pts = np.concatenate(contours).reshape(-1, 2)
    extent = np.maximum.reduceat(pts, starts) - np.minimum.reduceat(pts, starts) + 1
    longer, shorter = extent.max(axis=1), extent.min(axis=1)
    fits = longer - 1 <= 1.01 * dmax
    return np.flatnonzero((sizes >= 3) & (longer >= dmin) & (shorter >= DISC_MIN_ASPECT * longer) & fits)


def _neutral(bgr: np.ndarray, centre: np.ndarray, radius: float, colour: str) -> bool:
    """Whether the disc at ``centre`` is grey rather than coloured: its channels' spread is a small
    part of its brightness (of a mid grey for a dark disc, whose hue is noise)."""
    r = max(1, int(radius))
    x, y = round(float(centre[0])), round(float(centre[1]))
    patch = bgr[max(0, y - r) : y + r + 1, max(0, x - r) : x + r + 1]
    if patch.size == 0:
        return False
    b, g, rr, _ = cv2.mean(patch)
    hi, lo = max(b, g, rr), min(b, g, rr)
    scale = hi if colour == "white" else max(hi, DARK_CHROMA_FLOOR)
    return (hi - lo) <= SUPPLY_MAX_SATURATION * max(scale, 1.0)


def _piece_discs(
    cnt: np.ndarray, dmin: float, dmax: float, roundness: float
) -> list[tuple[np.ndarray, float]]:
    """The piece one blob is: one round disc of a piece's size (centre and radius in the blob's
    pixels), or nothing."""
    _x, _y, bw, bh = cv2.boundingRect(cnt)
    if max(bw, bh) < dmin:
        return []
    # A pixel contour runs through the boundary pixels' centres: half a pixel inside the blob.
    area = cv2.contourArea(cnt) + 0.5 * cv2.arcLength(cnt, True)
    (cx, cy), radius = cv2.minEnclosingCircle(cnt)
    if 2 * radius <= dmax and min(bw, bh) >= DISC_MIN_ASPECT * max(bw, bh):
        (_rx, _ry), (rw, rh), _ra = cv2.minAreaRect(cnt)
        # Round: fills enough of its enclosing circle, and not its bounding rectangle the way the
        # squares of a calibration marker do (a disc fills pi/4 of it).
        if area >= roundness * math.pi * (radius + 0.5) ** 2 and area <= DISC_MAX_RECT_FILL * (rw + 1) * (
            rh + 1
        ):
            return [(np.array([cx, cy]), float(radius))]
        return []
    return []


# ----------------------------------------------------------------------------------------------------
# the detector


def _prepare(image: np.ndarray) -> np.ndarray:
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise DetectorError("expected a non-empty numpy image")
    if image.ndim == 3 and image.shape[2] == 3:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    elif image.ndim == 3 and image.shape[2] == 4:
        gray = cv2.cvtColor(image, cv2.COLOR_BGRA2GRAY)
    elif image.ndim == 2:
        gray = image
    else:
        raise DetectorError(f"expected a grey or BGR image, got shape {image.shape}")
    if gray.dtype != np.uint8:
        raise DetectorError(f"expected 8-bit pixels, got {gray.dtype}")
    if min(gray.shape) < MIN_IMAGE_SIDE:
        raise DetectorError(f"image too small: {gray.shape[1]}x{gray.shape[0]}")
    return gray


def _spread(gray: np.ndarray) -> float:
    """The grey range of the image's middle 90 % (5th to 95th percentile of every 8th pixel), at least
    1."""
    sub = gray[::8, ::8]
    cum = np.cumsum(np.bincount(sub.ravel(), minlength=256))
    lo, hi = (_percentile_of_counts(cum, sub.size, q) for q in (5.0, 95.0))
    return float(max(hi - lo, 1.0))


@dataclass
class _Image:
    """The image prepared once: blurred grey at full and reduced size, noise and spread."""

    gray: np.ndarray  # blurred, full size
    bgr: np.ndarray | None  # the original colour image (None for a grey input)
    small: np.ndarray  # blurred, reduced by ``scale``
    scale: float
    sigma: float  # noise left after the blur, grey levels
    spread: float
    sigma_raw: float  # noise of the original image


def _prepare_image(image: np.ndarray) -> _Image:
    raw = _prepare(image)
    sigma_raw = noise_sigma(raw)
    gray = cv2.GaussianBlur(raw, (5, 5), 1.0)
    if min(gray.shape) >= HALF_RES_MIN_SIDE:
        small = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2), interpolation=cv2.INTER_AREA)
        scale = 0.5
    else:
        small, scale = gray, 1.0
    bgr = image if image.ndim == 3 and image.shape[2] == 3 else None
    # A 5x5, sigma 1 Gaussian divides white noise by about 3.5; half a level for quantisation.
    return _Image(gray, bgr, small, scale, sigma_raw / 3.5 + 0.5, _spread(gray), sigma_raw)


def _brightest(im: _Image, keep_colour: bool) -> _Image:
    """``im`` seen in each pixel's brightest channel instead of grey, with its colour or without."""
    assert im.bgr is not None
    brightest = _prepare_image(np.ascontiguousarray(im.bgr.max(axis=2)))
    return replace(brightest, bgr=im.bgr) if keep_colour else brightest


def _locate(
    img: np.ndarray,
    scale: float,
    sigma: float,
    spread: float,
    params: DetectorParams,
    prior: BoardPose | None,
) -> tuple[_Lattice, Polarity] | None:
    """The best lattice of cells in ``img`` (an image reduced by ``scale``), in full-image pixels."""
    short = min(img.shape)
    win = _odd(params.window_frac * short)
    mean = cv2.blur(img, (win, win))
    c = max(params.line_noise_k * sigma, params.line_min_frac * spread)
    kernel = np.ones((2 * DILATION_PX + 1, 2 * DILATION_PX + 1), np.uint8)
    best: tuple[_Lattice, Polarity] | None = None
    best_score = -math.inf
    for polarity, diff in (
        ("dark-lines", cv2.subtract(mean, img)),
        ("light-lines", cv2.subtract(img, mean)),
    ):
        _, lines = cv2.threshold(diff, c, 255, cv2.THRESH_BINARY)
        lines = cv2.dilate(lines, kernel)
        lat = _find_lattice(_cell_candidates(lines, params), params)
        if lat is None or len(lat.centers) < params.min_cells:
            continue
        lat.centers = lat.centers / scale
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
        if len(lat.centers) == GRID_SQUARES**2 and score > FULL_GRID_SCORE:
            break  # nine tight cells: the other polarity cannot do better than that
    return best


def detect(
    image: np.ndarray, params: DetectorParams | None = None, prior: BoardPose | None = None
) -> Detection:
    """Find the board in ``image`` (BGR or grey, 8-bit) and read it.

    ``prior`` is the last good pose: when no grid is found in this image, the squares are read at the
    prior pose (``pose_source == "prior"``); when several grids are found, one near the prior wins.
    The result never depends on anything but the arguments.

    :raises DetectorError: when ``image`` is not an 8-bit grey or BGR image of a usable size.
    """
    t0 = time.perf_counter()
    p = params or DEFAULT_PARAMS
    return _search(_prepare_image(image), p, prior, t0)


#: a grid candidate checked on its lines: (share of line segments seen, homography, polarity, half line
#: width, cells it came from (0: the comb), pitch).
_Candidate = tuple[float, np.ndarray, Polarity, float, int, float]


def _best_candidate(
    im: _Image, candidates: list[tuple[np.ndarray, float, int]], p: DetectorParams
) -> _Candidate | None:
    """The grid candidates (homography, pitch, cells) checked and refined on the lines; the best one,
    or None when none is a grid."""
    best: _Candidate | None = None
    best_clear = 0.0
    for h, pitch, cells in candidates:
        # The mask a lattice came from does not prove the polarity (the squares' insides can stand in
        # for cells); with fewer than nine cells (pieces dent them) the window may be a square off; and
        # the cells' size says little of the lines' width when pieces dent them. The lines tell.
        checked = _verify_grid(im, h, pitch, p, may_shift=cells < GRID_SQUARES**2)
        if cells == 0 and checked[3] < COMB_MIN_CLEAR:
            # The comb places the lines to a pixel or two of its reduced image, which can be too far
            # to check them: brought onto them, it is checked again.
            checked = _verify_grid(im, _onto_lines(im, h, pitch, p), pitch, p, may_shift=True)
        h, polarity, half_width, clear = checked
        if cells == 0 and clear < COMB_MIN_CLEAR:
            continue  # the comb found something straight and periodic, not a grid
        sign = 1 if polarity == "light-lines" else -1
        # Nine cells place the grid well; fewer (pieces touching lines, half resolution, the comb) are
        # refined on the lines themselves.
        seen = 1.0
        for _ in range(REFINE_PASSES if cells < GRID_SQUARES**2 else 0):
            fit = _fit_lines(im.gray, h, pitch, sign, half_width, p)
            if fit is None:
                break
            h, seen = fit.h, fit.seen
        # The comb's grid replaces the cells' only when its lines are clearly better seen, unless the
        # cells' window did not look like a grid itself (cells on the plate between large pieces can be
        # taken a row off, and the window then reaches off the board).
        cells_trusted = best is not None and best[4] > 0 and best_clear >= COMB_MIN_CLEAR
        margin = COMB_SEEN_MARGIN if cells == 0 and cells_trusted else 0.0
        if best is None or seen > best[0] + margin:
            best, best_clear = (seen, h, polarity, half_width, cells, pitch), clear
        if cells == 0 and best[4] == 0 and best[0] >= COMB_SURE_SEEN:
            break  # the comb's other guesses are likelier wrong than better
    if best is None or (best[4] == 0 and best[0] < COMB_MIN_SEEN):
        return None
    return best


def _onto_lines(im: _Image, h: np.ndarray, pitch: float, p: DetectorParams) -> np.ndarray:
    """``h`` corrected onto the grid lines near where it puts them (:func:`_fit_lines`, at the polarity
    seen there and a typical line width), or ``h`` itself when they are not found."""
    sign = 1 if _polarity_at(im, h, pitch, p) == "light-lines" else -1
    for _ in range(REFINE_PASSES):
        fit = _fit_lines(im.gray, h, pitch, sign, DEFAULT_HALF_WIDTH, p)
        if fit is None:
            break
        h = fit.h
    return h


def _search(im: _Image, p: DetectorParams, prior: BoardPose | None, t0: float) -> Detection:
    """The full search of a prepared image (see :func:`detect`)."""
    found = _locate(im.small, im.scale, im.sigma, im.spread, p, prior)
    if im.scale != 1.0 and (found is None or len(found[0].centers) < FULL_RES_BELOW_CELLS):
        # Thin lines or small cells can vanish at half resolution: look again at full size.
        full = _locate(im.gray, 1.0, im.sigma, im.spread, p, prior)
        if full is not None and (found is None or full[0].score > found[0].score):
            found = full
    candidates: list[tuple[np.ndarray, float, int]] = []  # (homography, pitch, cells)
    if found is not None:
        lat = found[0]
        candidates.append((_fit_homography(lat), lat.pitch, len(lat.centers)))
    if found is None or len(found[0].centers) < COMB_BELOW_CELLS:
        candidates += [(h, pitch, 0) for h, pitch in _comb_search(im, p)]
    best = _best_candidate(im, candidates, p)
    if best is None and prior is None and im.scale != 1.0:
        # Lines a pixel wide vanish at half resolution, where the comb looked: look again at full size.
        # Only while no board is known (a tracked board has its prior): it costs a few tens of ms.
        full = _comb_search(replace(im, small=im.gray, scale=1.0), p)
        best = _best_candidate(im, [(h, pitch, 0) for h, pitch in full], p)
    if best is None and prior is None and im.bgr is not None:
        # Lines that differ from the plate more in colour than in luminance (dark blue lines on a blue
        # plate: blue weighs a tenth in grey) stand out in each pixel's brightest channel. The grid is
        # searched for there; the squares are still read in grey and colour.
        brightest = _search(_brightest(im, keep_colour=False), p, None, t0)
        if brightest.found and brightest.pose is not None:
            det = read_at_pose(im, brightest.pose, brightest.polarity, brightest.extra["half_width"], p)
            return replace(
                det,
                pose_source="detected",
                cells=brightest.cells,
                processing_ms=_ms_since(t0),
                extra={
                    **det.extra,
                    "half_width": brightest.extra["half_width"],
                    "tracked": 0.0,
                    "brightest": 1.0,
                },
            )
    if best is None:
        if prior is None:
            return Detection(found=False, problem="no-board", processing_ms=_ms_since(t0))
        det = read_at_pose(im, prior, None, DEFAULT_HALF_WIDTH, p)
        return replace(det, pose_source="prior", problem=det.problem or "prior", processing_ms=_ms_since(t0))
    _seen, h, polarity, half_width, cells, _pitch = best
    h, pose = _normalise_turn(h)
    det = read_at_pose(im, pose, polarity, half_width, p, h=h)
    return replace(
        det,
        pose_source="detected",
        cells=cells,
        processing_ms=_ms_since(t0),
        extra={**det.extra, "half_width": half_width, "tracked": 0.0},
    )


def _comb_angles(img: np.ndarray) -> list[float]:
    """The board's likeliest angles in ``img`` (degrees, counter-clockwise as seen, in (-45, 45]): the
    dominant straight-edge orientations, gradient directions taken modulo 90 degrees."""
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)
    mag = gx * gx + gy * gy
    ang = (np.degrees(np.arctan2(gy, gx)) + 45.0) % 90.0 - 45.0
    strong = mag > np.percentile(mag, COMB_EDGE_PERCENTILE)
    hist = np.bincount(
        np.round(ang[strong] + 45.0).astype(np.int64) % 90, weights=np.sqrt(mag[strong]), minlength=90
    )
    hist = np.convolve(np.concatenate([hist[-2:], hist, hist[:2]]), np.ones(5), mode="valid")
    angles: list[float] = []
    for i in np.argsort(hist)[::-1]:
        # Gradient directions are measured with y down; the board's angle is counter-clockwise as seen.
        a = _wrap90(45.0 - float(i))
        if all(abs(_wrap90(a - b)) > COMB_ANGLE_SEPARATION for b in angles):
            angles.append(a)
        if len(angles) == COMB_ANGLES:
            break
    return angles


def _ridges(view: np.ndarray, axis: int) -> np.ndarray:
    """How far each pixel of ``view`` stands above both its neighbours ``d`` pixels away along ``axis``,
    for the best ``d`` of ``COMB_RIDGE_REACH`` (0 where it does not): a thin line across ``axis``
    answers, a step edge (a piece's or the plate's border) does not, since one of its sides is as high
    as the edge itself."""
    out = np.zeros_like(view)
    n = view.shape[axis]
    for d in COMB_RIDGE_REACH:
        if n <= 2 * d:
            break
        mid = [slice(None)] * 2
        lo, hi = list(mid), list(mid)
        mid[axis], lo[axis], hi[axis] = slice(d, n - d), slice(0, n - 2 * d), slice(2 * d, n)
        rise = view[tuple(mid)] - np.maximum(view[tuple(lo)], view[tuple(hi)])
        np.maximum(out[tuple(mid)], rise, out=out[tuple(mid)])
    return out


def _comb_teeth(profile: np.ndarray, pitch: float) -> tuple[float, int]:
    """The best comb of four teeth ``pitch`` apart on ``profile``: its score (all four teeth, the weakest
    counting most: a comb is not one strong line) and where its first tooth stands."""
    n = profile.size - int(3 * pitch) - 1
    if n <= 0:
        return 0.0, 0
    idx = np.arange(n)[:, None] + np.round(np.arange(4) * pitch).astype(np.int64)[None, :]
    teeth = profile[idx]  # (n, 4)
    score = teeth.sum(axis=1) + 2.0 * teeth.min(axis=1)
    k = int(np.argmax(score))
    return float(score[k]), k


def _comb_profiles(evidence: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The evidence of a turned view summed down its columns (the vertical lines) and along its rows
    (the horizontal ones), each high-passed: lines are narrow peaks there, pieces and shadows broad
    bumps that the running mean takes off."""
    out = []
    for prof in (evidence.sum(axis=0, dtype=np.float32), evidence.sum(axis=1, dtype=np.float32)):
        base = np.convolve(prof, np.ones(COMB_HIGHPASS) / COMB_HIGHPASS, mode="same")
        peak = np.convolve(prof, np.ones(3) / 3.0, mode="same")
        out.append(np.maximum(peak - base, 0.0))
    return out[0], out[1]


def _best_comb(profiles: tuple[np.ndarray, np.ndarray], pitches: np.ndarray) -> tuple[float, int, int, float]:
    """The best comb on both profiles at one of ``pitches`` (see :func:`_comb_teeth`): (score, first
    vertical line, first horizontal line, pitch)."""
    best = (-math.inf, 0, 0, 0.0)
    for pitch in pitches:
        (sx, x0), (sy, y0) = _comb_teeth(profiles[0], pitch), _comb_teeth(profiles[1], pitch)
        if sx + sy > best[0]:
            best = (sx + sy, x0, y0, float(pitch))
    return best


def _comb_search(im: _Image, params: DetectorParams) -> list[tuple[np.ndarray, float]]:
    """A second way to find the grid, for boards whose cells pieces break up (large pieces touching
    thin lines, a full board): the grid is four long, evenly spaced parallel lines each way.

    At each of the likeliest angles (:func:`_comb_angles`) the image is turned so that the board's axes
    are the view's. Two kinds of evidence are summed along each axis, for either polarity: the line
    mask (pixels beyond the local mean by the line threshold, as the cells are found in), and the ridges
    (:func:`_ridges`: pixels standing out of both their sides, where the lines answer and the edges of
    pieces, plate and table do not). The comb of four equally spaced peaks with the same pitch on both
    axes is the grid. Returns the grids found, the likeliest first (interleaving the two kinds of
    evidence, whose scores are not comparable), each as the image -> canonical homography and the pitch
    in image pixels, for the caller to check on the lines.
    """
    img = im.small
    hgt, wid = img.shape
    short = min(hgt, wid)
    side = math.ceil(math.hypot(hgt, wid))  # the turned view holds the whole image
    pitches = np.arange(COMB_MIN_PITCH_FRAC * short, COMB_MAX_PITCH_FRAC * short, COMB_PITCH_STEP)
    win = _odd(params.window_frac * short)
    c = max(params.line_noise_k * im.sigma, params.line_min_frac * im.spread)
    ranked: dict[str, list[tuple[float, np.ndarray, float]]] = {"mask": [], "ridge": []}
    to_small = np.diag([im.scale, im.scale, 1.0])
    for angle in _comb_angles(img):
        # Turning the image by -angle brings the board's x axis (cos a, -sin a) onto the view's x axis.
        turn = cv2.getRotationMatrix2D((wid / 2.0, hgt / 2.0), -angle, 1.0)
        turn[:, 2] += ((side - wid) / 2.0, (side - hgt) / 2.0)
        view = cv2.warpAffine(
            img, turn, (side, side), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        to_view = np.vstack([turn, (0.0, 0.0, 1.0)]) @ to_small
        mean = cv2.blur(view, (win, win))
        signed = view.astype(np.float32)
        for diff, sign in ((cv2.subtract(mean, view), -1.0), (cv2.subtract(view, mean), 1.0)):
            ridges = sign * signed
            evidence = {
                "mask": _comb_profiles(diff > c),
                # Ridges across x for the vertical lines, across y for the horizontal ones.
                "ridge": (_comb_profiles(_ridges(ridges, 1))[0], _comb_profiles(_ridges(ridges, 0))[1]),
            }
            for kind, profiles in evidence.items():
                score, x0, y0, pitch = _best_comb(profiles, pitches)
                # canonical = ((x - x0) / pitch, (y - y0) / pitch) in the turned view.
                to_canon = np.array(
                    [[1.0 / pitch, 0.0, -x0 / pitch], [0.0, 1.0 / pitch, -y0 / pitch], [0.0, 0.0, 1.0]]
                )
                ranked[kind].append((score, to_canon @ to_view, pitch / im.scale))
    out: list[tuple[np.ndarray, float]] = []
    for kind in ranked:
        ranked[kind].sort(key=lambda t: -t[0])
    for pair in zip(*(r[:COMB_CANDIDATES] for r in ranked.values()), strict=False):
        out += [(h, pitch) for _score, h, pitch in pair]
    return out


def track(
    image: np.ndarray,
    prior: BoardPose,
    params: DetectorParams | None = None,
    *,
    polarity: Polarity | None = None,
    half_width: float = 0.0,
) -> Detection:
    """Read ``image`` at ``prior`` (the last good pose) when its grid lines are still where the prior
    puts them, with the pose corrected on those lines; otherwise search the whole image as
    :func:`detect` does (with ``prior``).

    The confirmation needs no search: the grid's lines are located from cross-line profiles in the
    canonical view (a fraction of the search's cost), so a board that stands still or drifts by a few
    pixels is followed frame by frame. A confirmed pose keeps the prior's numbering up to
    ``TRACK_HYSTERESIS_DEG`` beyond +-45 degrees, so that a board at 45 degrees is not renumbered from
    frame to frame; the result then carries ``extra["tracked"] == 1``. ``polarity`` and ``half_width``
    (in pitches) are those of the detection the prior came from, when known.

    :raises DetectorError: when ``image`` is not an 8-bit grey or BGR image of a usable size.
    """
    t0 = time.perf_counter()
    p = params or DEFAULT_PARAMS
    im = _prepare_image(image)
    h = homography_of(prior)
    hw = half_width if half_width > 0 else DEFAULT_HALF_WIDTH
    if polarity is None:
        polarity = _polarity_at(im, h, pitch_of(prior), p)
    sign = 1 if polarity == "light-lines" else -1
    fit = _fit_lines(im.gray, h, pitch_of(prior), sign, hw, p)
    if fit is not None and fit.seen >= TRACK_MIN_SEEN and fit.rms_offset <= TRACK_MAX_RMS_PX:
        h2 = fit.h
        pose = pose_from_homography(h2)
        if not -45.0 - TRACK_HYSTERESIS_DEG < pose.angle_deg <= 45.0 + TRACK_HYSTERESIS_DEG:
            h2, pose = _normalise_turn(h2)
        det = read_at_pose(im, pose, polarity, hw, p, h=h2)
        if det.line_contrast * sign > 0:
            return replace(
                det,
                pose_source="detected",
                processing_ms=_ms_since(t0),
                extra={**det.extra, "half_width": hw, "tracked": 1.0, "track_rms_px": fit.rms_offset},
            )
    return _search(im, p, prior, t0)


def keep_numbering(pose: BoardPose, like: BoardPose) -> BoardPose | None:
    """``pose`` renumbered by the quarter turn that brings its angle next to ``like``'s (the last
    good pose), when the search numbered a board standing near 45 degrees the other way; None when
    nothing is to be done (the angles agree, or the renumbered angle would leave the tracking
    hysteresis band around +-45 degrees)."""
    if abs(pose.angle_deg - like.angle_deg) <= 45.0:
        return None
    h = homography_of(pose)
    for k in (1, -1):
        turned = pose_from_homography(_quarter_turn(k) @ h)
        near = abs(turned.angle_deg - like.angle_deg) <= 45.0
        if near and -45.0 - TRACK_HYSTERESIS_DEG < turned.angle_deg <= 45.0 + TRACK_HYSTERESIS_DEG:
            return turned
    return None


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
    s = int(min(VERIFY_MAX_PX, max(VERIFY_MIN_PX, round(pitch))))
    span = GRID_SQUARES + 2  # one square beyond the grid on every side
    reach = max(3, round(VERIFY_REACH * s))
    off = s + reach  # canonical -1 minus a profile's reach
    to_canvas = np.array([[s, 0.0, off], [0.0, s, off], [0.0, 0.0, 1.0]])
    size = span * s + 2 * reach + 1
    view = (
        cv2.warpPerspective(
            im.gray, to_canvas @ h, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        ).astype(np.float32)
        * sign
    )
    offsets = np.arange(-reach, reach + 1)
    along = reach + np.arange(round(1.1 * s), round(3.9 * s))  # the grid's extent, crossings included
    strength = np.zeros((2, span + 1))
    profiles = np.zeros((2, span + 1, offsets.size))
    # Every line's cross-line offsets, one direction's lines side by side: one median per direction
    # (column by column, as each line's own would be).
    pos = (reach + s * np.arange(span + 1)[:, None] + offsets[None, :]).ravel()
    for d, prof in enumerate((view[np.ix_(along, pos)], view[np.ix_(pos, along)].T)):
        med = np.median(prof, axis=0).reshape(span + 1, offsets.size)  # robust to pieces beside the line
        profiles[d] = med
        peak = med[:, reach - 1 : reach + 2].max(axis=1)
        strength[d] = peak - np.maximum(med[:, 0], med[:, -1])
    # A row of pieces of the line's own tone along one side takes the far side's contrast, not the
    # ridge the line makes between them and the plate: the line's strength against its near sides
    # too (just beyond its own half width, as all the window's lines show it).
    typical_prof = np.median(profiles[:, 1 : GRID_SQUARES + 2].reshape(-1, offsets.size), axis=0)
    near = min(reach, math.ceil(_half_width_px(typical_prof, reach)) + NEAR_GAP_PX)
    peaks = profiles[..., reach - 1 : reach + 2].max(axis=2)
    near_strength = peaks - np.maximum(profiles[..., reach - near], profiles[..., reach + near])
    strength = np.maximum(strength, near_strength)
    shifts = [0, 0]
    for d in range(2 if may_shift else 0):
        # The window one square back or on: when a line at one end of it is missing (no line there at
        # all) while one stands just beyond the other end, and the window moved there looks more like a
        # grid (a line beside a row of pieces of its own tone may show only half its strength).
        window = strength[d, 1 : GRID_SQUARES + 2]
        typical = max(float(np.median(window)), 1e-3)
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
    half_width = _half_width_px(np.median(np.concatenate(chosen), axis=0), reach) / s
    half_width = float(min(MAX_HALF_WIDTH, max(MIN_HALF_WIDTH, half_width)))
    # How much the window looks like a grid, each way.
    clear = min(_window_clarity(strength[d], shifts[d]) for d in range(2))
    return h, polarity, half_width, clear


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
    return float(np.median(np.concatenate([p.ravel() for p in patches])))


def _window_clarity(strength: np.ndarray, shift: int) -> float:
    """How much the grid's window moved by ``shift`` squares looks like a grid in one direction, from
    the strengths of the lines from one square before the grid to one beyond it (``strength``, 6): its
    weakest line against its typical one, and the lines just beyond it, which must be weaker (1: four
    equal lines with nothing beyond; 0 or less: not a grid)."""
    window = strength[1 + shift : 2 + shift + GRID_SQUARES]
    outside = [k for k in (shift, shift + GRID_SQUARES + 2) if 0 <= k < strength.size]
    beyond = max(float(strength[k]) for k in outside)
    typical = max(float(np.median(window)), 1e-3)
    return min(1.0, float(window.min()) / typical, 1.0 - max(beyond, 0.0) / typical)


def _half_width(lat: _Lattice) -> float:
    """Half the line width in pitches, from the cells' size (corrected for the mask's dilation)."""
    side = lat.side + 2.0 * DILATION_PX / lat.scale
    return float(min(MAX_HALF_WIDTH, max(MIN_HALF_WIDTH, (1.0 - side / lat.pitch) / 2.0)))


def _ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def read_board(image: np.ndarray, pose: BoardPose, params: DetectorParams | None = None) -> Detection:
    """Read the squares of ``image`` at a given ``pose`` (no search): what the tracker uses when it
    rejects a sudden jump and keeps the last good pose.

    :raises DetectorError: when ``image`` is not an 8-bit grey or BGR image of a usable size.
    """
    t0 = time.perf_counter()
    det = read_at_pose(_prepare_image(image), pose, None, DEFAULT_HALF_WIDTH, params or DEFAULT_PARAMS)
    return replace(det, pose_source="prior", processing_ms=_ms_since(t0))


def read_at_pose(
    im: _Image,
    pose: BoardPose,
    polarity: Polarity | None,
    half_width: float,
    params: DetectorParams,
    *,
    h: np.ndarray | None = None,
    in_brightest: bool = False,
) -> Detection:
    """Read the squares, the occlusion and the supply of a prepared image at a known pose. When the
    grid shows little contrast in grey (under ``LOW_GRID_CONTRAST``) and the image has colour, it is read
    again in each pixel's brightest channel (``in_brightest``: this is that second read), and that read
    is taken when the grid shows none in grey or ``BRIGHTEST_GAIN`` times more there."""
    if h is None:
        h = homography_of(pose)
    pitch = pitch_of(pose)
    canon = _canonical(im.gray, h, pitch, params, im.bgr)
    if polarity is None:
        # The lines stand out from the squares one way or the other: look which.
        s, m = canon.px, canon.margin
        on_line = float(np.median(canon.img[:, [m + k * s for k in range(4)]]))
        off_line = float(np.median(canon.img[:, [m + int((k + 0.5) * s) for k in range(3)]]))
        polarity = "light-lines" if on_line > off_line else "dark-lines"
    sign = 1 if polarity == "light-lines" else -1
    contrast, both_sides, owners, peaks = _line_contrast(canon, sign, half_width)
    # The grid's contrast against bare board: taken where both sides of a line are board, since a
    # white piece beside a dark line doubles the contrast on its side.
    typical = float(np.percentile(both_sides, 80))
    seen = contrast >= params.line_seen_frac * max(typical, 1e-3)
    no_grid = typical < max(3.0 * im.sigma, 0.05 * im.spread)
    if typical < LOW_GRID_CONTRAST and im.bgr is not None and not in_brightest:
        # Lines that differ from the plate in colour more than in grey (dark lines on a blue plate: blue
        # weighs a tenth in grey) stand out in the brightest channel, and every threshold scales with
        # the grid's contrast (in grey, a bare square's JPEG colour reads as a piece). The pieces are
        # still told apart by colour there too. Covered lines stay covered in any channel.
        other = read_at_pose(
            _brightest(im, keep_colour=True), pose, None, half_width, params, h=h, in_brightest=True
        )
        if no_grid or abs(other.line_contrast) > BRIGHTEST_GAIN * typical:
            return other
    if no_grid:
        seen[:] = False  # no grid contrast at all: all of it is covered
    occlusion = float(1.0 - seen.mean())
    # A sample is covered when its line is not seen *and* the line's own grey is not there: two white
    # pieces on both sides of a light line take its contrast, not its grey.
    line_grey = float(np.median(peaks[seen])) if seen.any() else float(np.median(peaks))
    covered = ~seen & (np.abs(peaks - line_grey) > COVER_LEVEL_FRAC * max(typical, 1e-3))
    if no_grid:
        covered[:] = True
    line_level = _line_levels(peaks, owners, seen, line_grey)
    by_corners, discs = _read_squares(canon, half_width, line_level, pitch, im.sigma, params)
    by_corners = _mid_tones_by_the_board(by_corners)
    readings = _combine(_read_squares_ring(canon, half_width, line_level, params), by_corners)
    under_piece = _under_pieces(owners, readings, discs, COVER_LEVEL_FRAC * max(typical, 1e-3))
    crossed = _crossed_squares(~covered | under_piece, owners)
    # A line not seen between two pieces of its own tone (black pieces beside a dark line) is explained;
    # anywhere else something covers it (a sheet, a hand, a piece lying across it).
    like_line = np.array([(r[0] == "black") == (sign < 0) and r[0] in ("black", "white") for r in readings])
    own_ok = owners >= 0
    explained = (~own_ok | like_line[np.where(own_ok, owners, 0)]).all(axis=1)
    hidden_sample = np.broadcast_to((~seen & ~explained & ~under_piece)[:, None], owners.shape)
    total = np.bincount(owners[own_ok], minlength=9).astype(float)
    hidden = np.bincount(owners[own_ok], weights=hidden_sample[own_ok].astype(float), minlength=9)
    hidden_frac = hidden / np.maximum(total, 1)
    centres = _apply_h(np.linalg.inv(h), SQUARE_CENTRES)
    squares: list[SquareReading] = []
    any_low = False
    for n in range(9):
        state, conf, fill, tone, foreign, _plate = readings[n]
        occl = bool(hidden_frac[n] > params.square_occluded_frac) or bool(foreign) or bool(crossed[n])
        if occl:
            state, conf = "unknown", 0.0
        elif conf < params.min_confidence:
            state = "unknown"
            any_low = True
        squares.append(
            SquareReading(
                number=n + 1,
                state=state,  # type: ignore[arg-type]
                confidence=float(conf),
                center_px=(float(centres[n][0]), float(centres[n][1])),
                occluded=occl,
                fill=fill,
                tone=tone,
            )
        )
    occluded = occlusion > params.frame_occluded_frac or any(s.occluded for s in squares)
    # Why squares are covered, for the annotation and for study: not-a-piece inside, line crossed.
    why = {f"foreign_{r[4]}": float(sum(x[4] == r[4] for x in readings)) for r in readings if r[4]}
    why["crossed"] = float(crossed.sum())
    supply = _supply(im.small, im.scale, h, pitch, im.sigma, im.spread, params, im.bgr)
    problem = "occluded" if occluded else ("low-confidence" if any_low else "")
    return Detection(
        found=True,
        pose=pose,
        squares=tuple(squares),
        supply=tuple(supply),
        occluded=occluded,
        occlusion=occlusion,
        polarity=polarity,
        pitch_px=pitch,
        problem=problem,
        line_contrast=float(sign * typical),
        extra=why,
    )


def _under_pieces(
    owners: np.ndarray,
    readings: list[tuple[str, float, float, float, str, float]],
    discs: np.ndarray,
    tolerance: float,
) -> np.ndarray:
    """Which line samples (L,) may lie hidden between two large pieces of one kind: both squares read
    as a piece cleanly (nothing foreign), their middles' greys alike (within ``tolerance``: a coin
    beside a black piece is not one), and both discs (``discs``: centre, edge radius and middle grey
    per square, as :func:`_read_squares` measures them) reaching the sample once grown by
    ``PIECE_LINE_REACH``, their rims and soft shadows. Two such pieces side by side cover the line
    between them with their bodies, rims and shadows, as no finger does.

    Nowhere else: beside a bare square or the board's edge a piece leaves its line seen on that side,
    and what hides a line there is something else (a finger, a pen lying across the board)."""
    piece = np.array([r[0] in ("black", "white") and not r[4] for r in readings])
    at = _sample_positions()  # (L, 2) in pitches from the board's corner
    own_ok = owners >= 0
    o = np.where(own_ok, owners, 0)
    centres = SQUARE_CENTRES[o] + discs[o, :2]  # (L, 2 sides, 2)
    reach = np.hypot(*(at[:, None, :] - centres).transpose(2, 0, 1)) <= discs[o, 2] + PIECE_LINE_REACH
    alike = np.abs(discs[o[:, 0], 3] - discs[o[:, 1], 3]) <= tolerance
    return (own_ok & piece[o] & reach).all(axis=1) & alike


@lru_cache(maxsize=1)
def _sample_positions() -> np.ndarray:
    """Where each line sample lies on the board (pitches from its top-left corner, x right, y down), in
    the order :func:`_line_sampling` lays them out."""
    pos = (np.arange(LINE_SAMPLES) + 0.5) / LINE_SAMPLES
    out = [
        (k, along) if vertical else (along, k)
        for k in range(GRID_SQUARES + 1)
        for j in range(GRID_SQUARES)
        for along in (j + 0.15 + 0.7 * pos).tolist()
        for vertical in (True, False)
    ]
    return _read_only(np.array(out))[0]


def _crossed_squares(seen: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Squares (9 booleans) beside a line hidden over a stretch as long as a finger is wide
    (``HIDDEN_RUN_SAMPLES`` consecutive samples within one square's side): something lies across the
    line. A piece inside its square does not hide its lines (the contrast is taken on the side where
    the line stands out), so short covered stretches are what a fingertip, a hand's edge or a piece put
    down across a line leave. (Except between two large pieces side by side: the caller counts what
    :func:`_under_pieces` explains as seen.)"""
    # Samples are laid out as (line, square along it, position, vertical/horizontal): see _line_sampling.
    hidden = ~seen.reshape(GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)
    starts = LINE_SAMPLES - HIDDEN_RUN_SAMPLES + 1
    runs = hidden[:, :, :starts, :].copy()  # a hidden run starts at each of these samples
    for i in range(1, HIDDEN_RUN_SAMPLES):
        runs &= hidden[:, :, i : i + starts, :]
    hit = runs.any(axis=2)  # (line, square along, orientation)
    own = owners.reshape(GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2, 2)[:, :, 0, :, :]
    crossed = np.zeros(9, bool)
    marked = own[hit].ravel()
    crossed[marked[marked >= 0]] = True
    return crossed


def _line_levels(peaks: np.ndarray, owners: np.ndarray, seen: np.ndarray, overall: float) -> np.ndarray:
    """The grey level of the lines around each square (median of its seen border samples; the whole
    grid's, ``overall``, where too few are seen), so that lighting gradients shift both references of a
    square alike."""
    idx = _square_samples(owners.tobytes(), owners.shape)  # (9, K): each square's border samples
    vals = np.where(seen[idx], peaks[idx], np.nan)
    vals.sort(axis=1)  # NaN (not seen) last
    count = np.count_nonzero(~np.isnan(vals), axis=1)
    rows = np.arange(9)
    lo, hi = np.maximum(count - 1, 0) // 2, np.maximum(count, 1) // 2
    medians = (vals[rows, lo] + vals[rows, np.minimum(hi, vals.shape[1] - 1)]) / 2.0
    return np.where(count >= MIN_LINE_SAMPLES, medians, overall)


@lru_cache(maxsize=8)
def _square_samples(owners_bytes: bytes, shape: tuple[int, ...]) -> np.ndarray:
    """Indices of the line samples bordering each square, (9, K) (every square has 4 sides of samples)."""
    owners = np.frombuffer(owners_bytes, dtype=np.int64).reshape(shape)
    lists = [np.flatnonzero((owners[:, 0] == n) | (owners[:, 1] == n)) for n in range(9)]
    k = max(len(v) for v in lists)
    return _read_only(np.array([np.pad(v, (0, k - len(v)), mode="edge") for v in lists]))[0]
