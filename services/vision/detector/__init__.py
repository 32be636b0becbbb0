"""Find a 3x3 board in one image and read its squares: a pure function of the image.

The detector knows nothing about the camera that took the picture. Every size is relative to the image
or to the grid it found, every threshold is measured from the image itself (its noise, the contrast of
its own grid lines, the background next to each piece). It works for dark lines on a light board and
light lines on a dark board, anywhere in the frame, at any rotation.

How it works, in order:

1. **Cells.** A blurred grey image is compared with its local mean (a window a few percent of the image
   wide) twice: pixels clearly darker than their neighbourhood, and pixels clearly lighter. Either mask
   may hold the grid lines (the second is not searched when the first gives five or more cells in
   their places: :data:`.cells.SURE_CELLS`); the regions they enclose are the nine cells. Every
   enclosed region whose convex hull is a filled, roughly square quadrilateral is a candidate cell (a
   piece inside a cell is a hole in it, or a dent when it touches a line, neither of which changes the
   hull much).
2. **Lattice.** Candidates of similar size and orientation that sit on a common square lattice (integer
   steps of one pitch along the cell's own axes) are grouped; the best 3x3 window of the best group is
   the grid. Sorting by y then x is never used, so the order is right at any angle. When pieces break
   most cells up (large pieces touching thin lines, a full board), a **comb** search looks for the grid
   as four long, evenly spaced parallel lines each way (:func:`.comb._comb_search`); when nothing
   else finds a board, each set of lines at its own angle and pitch, as a camera that does not look
   straight down sees them (:meth:`.comb._Combs.free`); then the comb at the image's third and fourth
   likeliest angles (clutter beside the board, a printed sheet's rows, can own the first two); then
   the whole search again in the image's relief, its thin structures of either tone light on black (an
   engraved groove's shaded and lit walls; :func:`.search._in_relief`); last, the cells again with every
   thin structure of the lines' tone in the masks, however dark its surroundings (thin lines running up
   to the edge of a plate without a margin, where the local mean takes in the table beyond;
   :func:`.search._thin_lines_to_the_edge`).
3. **Pose.** A homography from the image to the canonical top view (grid (0, 0)-(3, 3), square units)
   is fitted to the found cells' centres (projective with all nine, affine with fewer). The grid is
   then checked on its own lines (:func:`.lines._verify_grid`): which way its contrast goes, whether the 3x3
   window is a square off (a column of table taken for cells), how wide the lines are; a window read with
   one outer row or column covered all along is read again a square the other way, and taken when that
   is clearly better (:func:`.search._onto_the_board`; in the tracker's search, with a prior, too).
   With fewer than nine cells it is refined on the lines: each line is located from cross-line profiles
   (half-maximum centroids), straight lines are fitted to them, and their 16 crossings correct the
   homography (a profile that runs on to an end of its window, into a piece or a table of the line's
   tone beside it, is left out while the other lines place the grid; a pass that loses a tenth of a well-seen
   grid's line segments is undone: on a small board a line fitted along the pieces beside it skews
   the crossings). A board read with squares crossed (or with their corners off the board's surface)
   is read once more with its grid moved onto its lines as a whole, a drawn grid aligned with the
   view's thin structures by OpenCV's ECC (:func:`.align.aligned_on_lines`), and taken when that
   shows the lines better (:func:`.search._onto_the_lines`: a full board placed on few cells can be a
   few hundredths of a pitch off, and its far squares' lines lie beside where the grid puts them). The
   signed angle, centre and corners follow from it. Square 1 is the top-left cell in the board's own
   frame.
4. **Reading.** The grid is warped to the canonical view and each square read twice. Against the
   *plate* (:func:`.squares._read_squares`): the bare board is measured in the squares' corners, which
   no piece reaches, as one robust surface over the board with each square's own level (with dark
   lines, after their blur's tail there is taken out: :func:`.tails.blur_tails`); a piece is a
   round body or outline (a rim, a shadow) of pixels that differ from it, found ring by ring around
   their centroid (what lies on one side only, the glow of a line, does not count), and its colour is
   the tone of its middle on the grid's own scale. Against the *ring* of board just inside the lines
   (:func:`.ring._read_squares_ring`), right where pieces are small; what differs there is a pen's
   shape only when it is long against the ring's median and against the plane of the light through the
   ring alike (a gradient across a square is long against one only). The plate's reading stands, except
   where it sees no clear piece and the ring a clean reading (:func:`.squares._combine`); a square they
   disagree on is never read with a confidence above ``squares.DISAGREEMENT_MAX_CONFIDENCE``. A square
   whose corners took its neighbours' levels (a full board of large pieces) is read against the plate
   just beyond the grid's outer lines (:func:`.squares._like_the_plate_beyond`), or against the bare
   squares nearest it (:func:`.squares._like_the_bare_squares`: a spotlight lights one square unlike
   the rest); on a saturated plate, its colour in another light counts (up to 2:1). A light middle
   more saturated than any white piece is no white piece: the plate lit brighter when it has the
   plate's hue (:func:`.squares._the_plate_lit`), something coloured otherwise. A square that reads
   bare in grey, whose middle is grey on a coloured plate and dark in the plate's brightest channel,
   holds a black piece (:func:`.squares._black_by_colour`: black foam on a dim blue board). A board
   on a saturated plate that grey leaves unsure is read again in each pixel's brightest channel, where
   its lines stand out more, once its window is settled, keeping the white pieces grey reads sure
   (:func:`.search._read_in_brightest`, :func:`.search._whites_from_grey`). Pieces of one kind are
   alike: a "piece" far dimmer than the others of its colour is a coin
   (:func:`.squares._odd_tones_by_the_board`), and a square read bare whose middle stands beyond the
   plate's tone as far as the pieces of the kind that lies there (black below a dark plate, white above
   a light one) holds one (:func:`.squares._like_the_far_kind`). The soft shadow of the gantry's arm
   under a lamp, a band across the board, leaves a stretch of plate off that smooth surface: where the
   plate beside the lines shows one (darker there, its lines with it), the board is read again with it
   divided out (:func:`.shade.shadow_gain`). A lamp's glare on a glossy board lifts a patch of it,
   plate and lines alike, and a bare square under it is a light body without an edge: where the plate
   beside the lines is lifted so, in a round patch or a long one (a tube light's), the board is read
   again with the glare taken out (:func:`.glare.glare_light`). Such a second reading is taken when the
   first one had a square in doubt and it has none, and the other light's reading (if both were found)
   tells no square otherwise (for a glare, only a round one, and only when no line is covered: a hand is
   a light patch too); a square the two readings tell apart is unknown.
5. **Occlusion.** Grid lines are sampled along their whole length; where they are not seen with the
   contrast the rest of the grid shows for the light there (and no pair of large pieces, nor a piece
   reaching over the line, its rim over the chord nearest it, explains it:
   :func:`.occlusion._under_pieces`, :func:`.occlusion._rim_chords`), something covers them. A
   hand or an arm covers long stretches (the frame is occluded), a finger a stretch a finger wide (the
   squares on both sides are). A finger of the lines' own tone hides their contrast and not their
   grey, and reads as a piece in the square it reaches; where it hides an outer line, its hand shows
   beyond, farther out than any piece reaches (:func:`.occlusion._reaching_in`). Inside a square, what
   differs from the plate
   must look like a piece: round, as wide as long, not reaching three corners, not smaller than a
   piece nor filling the square into its corners, on a plate like the others'; otherwise it is a hand,
   a pen, a coin or a sheet, and the square is occluded. A long straight edge slanted from the board's
   lines is a pen lying across it (:func:`.across._lying_across`): nothing of a game is straight and
   slanted, and a pen of the lines' tone hides none of them (over pieces of its own tone its edge
   steps only in places, beside a body of one tone all along). An occluded square is unknown, and the
   frame is occluded. A frame occluded by its lines, unseen over more than
   ``DetectorParams.frame_occluded_frac`` of the grid, may have its grid placed where the board is not:
   none of its squares is read more than ``search.DOUBTFUL_GRID_CONFIDENCE`` sure.
6. **Supply.** Piece-sized, round (not square like a marker's cells), grey (not coloured), clearly
   light or dark blobs off the grid are supply pieces.
7. **A second opinion.** Three small convolutional networks trained on the squares of the tuning sets
   and of both renderers, each from its own seed (:mod:`.doubt`, run in numpy), read each square the
   rules read less than surely, from its pixels and the board's tones; where their average is all but
   certain of another state, the square is unknown. They read nothing themselves: they can only keep a
   frame from being taken, as every detection :func:`detect`, :func:`track` and :func:`read_board`
   return is checked last.

**Tracking** (:func:`track`): with the last good pose, the lines are located at that pose as in
step 3; when they are where it puts them, the pose is corrected on them and the squares read, with
no search (a fraction of the cost). Otherwise the full search runs.

When no grid is found and a ``prior`` pose is given (the last good one), the squares are read with the
prior pose and the result says so (``pose_source == "prior"``). Rejecting sudden jumps across frames is
the job of the stateful :class:`services.vision.tracker.PoseTracker`, not of this function.

Where each step lives (each module keeps the constants only it uses; those several share are in
:mod:`.model` and :mod:`.geometry`):

- :mod:`.model`: what the detector returns and takes (:class:`Detection`, :class:`SquareReading`,
  :class:`SupplyReading`, :class:`DetectorParams`, :class:`DetectorError`) and the shared thresholds.
- :mod:`.geometry`: the board's canonical frame, homographies, poses and quarter turns, the canonical
  view (steps 3 and 4).
- :mod:`.image`: the image prepared once (grey, blurred, reduced; its noise and spread).
- :mod:`.cells`: steps 1 and 2, cell candidates and their lattice, and the pose fitted to them.
- :mod:`.comb`: step 2's comb search.
- :mod:`.lines`: step 3 on the lines, the pose refined on them, the grid's check and polarity.
- :mod:`.squares`: step 4 against the plate, the board's tones, and the two readings combined.
- :mod:`.shade`: step 4's shadow band across the board, found beside the lines.
- :mod:`.glare`: step 4's lamp glare on a glossy board, found beside the lines.
- :mod:`.pieces`: one square's geometry and what a piece in it looks like (its evidence ring by ring, a
  faint piece, a body's shape and colour): what step 4 and step 5 judge a square's contents by.
- :mod:`.ring`: step 4 against the ring, and what in it is not a piece.
- :mod:`.occlusion`: step 5 on the lines, sampled along their length.
- :mod:`.across`: step 5's straight slanted edges (a pen).
- :mod:`.supply`: step 6.
- :mod:`.doubt`: step 7, and the networks' weights beside it (``square_net.npz``, written by
  ``bench/train_square_net.py``).
- :mod:`.stats`: ``np.median`` and ``np.percentile`` to the bit, without their overhead on small arrays.
- :mod:`.search`: :func:`detect`, :func:`track`, :func:`read_board` and :func:`read_at_pose`, which run
  the steps in order.
"""

from __future__ import annotations

from .geometry import CANONICAL_CORNERS, GRID_SQUARES, homography_of, pitch_of, pose_from_homography
from .model import (
    BOARD_CHARS,
    DEFAULT_PARAMS,
    Detection,
    DetectorError,
    DetectorParams,
    Polarity,
    PoseSource,
    SquareReading,
    State,
    SupplyReading,
)
from .search import detect, keep_numbering, read_at_pose, read_board, track

__all__ = [
    "BOARD_CHARS",
    "CANONICAL_CORNERS",
    "DEFAULT_PARAMS",
    "GRID_SQUARES",
    "Detection",
    "DetectorError",
    "DetectorParams",
    "Polarity",
    "PoseSource",
    "SquareReading",
    "State",
    "SupplyReading",
    "detect",
    "homography_of",
    "keep_numbering",
    "pitch_of",
    "pose_from_homography",
    "read_at_pose",
    "read_board",
    "track",
]
