"""The detector's entry points, which run the steps of the package's overview in order: :func:`detect`
(the full search: cells at half resolution and at full, the comb, the candidates checked and refined on
the lines, the brightest channel when grey shows nothing), :func:`track` (a last good pose confirmed on
its lines, without a search), :func:`read_board` and :func:`read_at_pose` (the squares, the occlusion
and the supply read at a known pose)."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Final

import numpy as np

from messages import BoardPose

from .across import _lying_across
from .align import aligned_on_lines
from .cells import _fit_homography, _Lattice, _locate
from .comb import COMB_ANGLES, _comb_search
from .doubt import doubted
from .geometry import (
    CANONICAL_CORNERS,
    GRID_SQUARES,
    SQUARE_CENTRES,
    _apply_h,
    _canonical,
    _normalise_turn,
    _odd,
    _quarter_turn,
    homography_of,
    in_view,
    pitch_of,
    pose_from_homography,
)
from .glare import glare_light
from .image import _brightest, _Image, _prepare_image, relief
from .lines import _fit_lines, _grid_runs_on, _polarity_at, _verify_grid
from .model import DEFAULT_PARAMS, Detection, DetectorParams, Polarity, SquareReading
from .occlusion import (
    _crossed_squares,
    _faded_samples,
    _line_contrast,
    _line_levels,
    _reaching_in,
    _under_pieces,
)
from .ring import _read_squares_ring
from .shade import shadow_gain
from .squares import (
    _bare_off_the_plate,
    _black_above_the_plate,
    _combine,
    _like_the_far_kind,
    _mid_tones_by_the_board,
    _odd_tones_by_the_board,
    _read_squares,
    _scale_of_the_pieces,
    _two_kinds_by_the_board,
)
from .stats import brightest_channel, median, percentile
from .supply import _supply

#: the grid is searched again at full resolution when fewer cells than this were found at half.
FULL_RES_BELOW_CELLS: Final = 7
#: ...around the cells found at half resolution, this many squares beyond their 3x3 window, unless that is
#: more than this share of the image.
AROUND_CELLS_SQUARES: Final = 1.1
AROUND_CELLS_MOST: Final = 0.9
#: when nothing else finds a grid, the cells are sought again at full size in line masks dilated by this
#: many pixels (cells.DILATION_PX otherwise). (On the tuning sets: 2 of the 13 clear frames without a
#: board found and read, and 3 occluded ones, read occluded; 2 pixels found 1.)
WIDE_DILATION_PX: Final = 3
#: the checking of the comb's likeliest grids (comb.COMB_CANDIDATES of each kind of evidence) stops at
#: a grid whose lines are seen this well.
COMB_SURE_SEEN: Final = 0.95
#: ...and that looks this clearly like a grid (see lines._window_clarity).
COMB_SURE_CLEAR: Final = 0.8
#: the comb search runs when the cells gave fewer than this many squares; its grid is taken when this
#: share of the line segments is seen where it puts them.
COMB_BELOW_CELLS: Final = 6
COMB_MIN_SEEN: Final = 0.8
COMB_SEEN_MARGIN: Final = 0.15
#: the comb's grid must be this clear (see lines._verify_grid): its weakest line at least this share of its
#: typical one, and nothing beyond it as strong as this share's complement. (0.2 lost a full board of
#: large pieces on a blue plate, clear to 0.16 between them; at 0.15 no frame of 300 with the board
#: painted out is read as a clear board, the same as at 0.2.)
COMB_MIN_CLEAR: Final = 0.15
#: a grid window looks like a grid from this clarity: one from a few cells below it is brought onto its
#: lines and checked again (kept when it then reaches this), and the comb's grid replaces one from cells
#: this clear only when its lines are clearly better seen.
GRID_CLEAR: Final = 0.2
#: a prior pose is confirmed when this fraction of its line segments is seen...
TRACK_MIN_SEEN: Final = 0.8
#: ...and they lie this close (root mean square, canonical pixels, about image pixels) to where it puts them.
TRACK_MAX_RMS_PX: Final = 1.5
#: a tracked pose keeps its numbering this many degrees beyond +-45 (hysteresis: a board standing at 45
#: degrees must not have its squares renumbered from one frame to the next).
TRACK_HYSTERESIS_DEG: Final = 2.0
#: a found window one square off the board (one outer row or column covered all along) is moved a square
#: when that leaves at least this many fewer squares covered. (On the tuning sets: 3 frames read right
#: that were a square off; at 1, a hand over one side of a board moved it onto the table.)
OFF_BOARD_GAIN: Final = 2
#: a grid moved onto its lines as a whole (:func:`_onto_the_lines`) is taken only when no corner of it
#: moved farther than this (pitches): the pose it corrects is a few hundredths off at the centre (the
#: moves taken on the tuning sets reach 0.28 at a corner); farther, the drawn grid may have slid onto
#: something else straight and periodic (a lined sheet, a row of the pieces' rims).
ALIGN_MAX_MOVE: Final = 0.3
#: refinements of a found pose on the grid lines (the cells' centres are found at half resolution).
REFINE_PASSES: Final = 2
#: ...a pass that leaves this share of the line segments fewer seen than before it is undone, when
#: COMB_MIN_SEEN of them were seen before it. (On the tuning sets: 9 squares more right, a small board
#: found and read that was not; at 0.05, 5 more right, but a white piece on a white plate read bare at
#: 1.0 in a flagged frame; undone whatever was seen before, a blue contest board's square unknown.)
REFINE_MAX_LOSS: Final = 0.1
#: half the line width in pitches, when it cannot be measured (reading at a prior pose); its bounds, as
#: measured: model.MIN_HALF_WIDTH and MAX_HALF_WIDTH.
DEFAULT_HALF_WIDTH: Final = 0.04
#: a grid found is no grid (all of it covered) where its lines stand out from the plate beside them (the
#: 80th percentile of the line samples) by less than this many times the image's noise, or this share of
#: its grey range. (At 0.05, faint light lines on a dark plate 8 levels off it, under a scene 220 levels
#: wide, were no grid: on the tuning sets 9 squares more right at 0.03; at 0.02 two white pieces on a
#: white plate read bare.)
NO_GRID_NOISE_K: Final = 3.0
NO_GRID_SPREAD_SHARE: Final = 0.03
#: a hidden line sample counts as covered when its grey is this far (in line contrasts) from the lines'.
COVER_LEVEL_FRAC: Final = 0.35
#: Below this grid contrast in grey (levels), the grid is also looked at in each pixel's brightest
#: channel, and read there when its contrast is ``BRIGHTEST_GAIN`` times higher.
LOW_GRID_CONTRAST: Final = 24.0
BRIGHTEST_GAIN: Final = 2.0
#: Above it, a grid whose lines stand out this many times more in the brightest channel than in grey (a
#: saturated plate: black foam on a blue plate is as dark as the plate in grey) is read there too when
#: grey leaves the board unsure, once its window is settled (:func:`_read_in_brightest`), and that read
#: is taken when the lines stand out there as much more. A quick look at the canonical view's brightest
#: channel tells such a plate at the cost of a few line samples. (On the tuning sets, against none: at 2,
#: 12 squares more right, 4 clear frames fewer flagged, no more wrong; at 1.5, 15 and 7; at 1.3, an
#: occluded frame read clear, and wrong.)
SATURATED_GAIN: Final = 1.5
#: ...where grey reads a clean white piece this sure, the brightest channel's read takes it (see
#: _whites_from_grey).
WHITE_IN_GREY_CONFIDENCE: Final = 0.9
#: every square of a frame whose lines are hidden, unexplained, over more than
#: ``DetectorParams.frame_occluded_frac`` of the grid is read this confident at most: the grid may stand
#: where the board is not. (On the tuning sets and apart, all four squares wrong at 1.0 were in such
#: frames, their grid placed off the board.)
DOUBTFUL_GRID_CONFIDENCE: Final = 0.85
#: every square of a board read with a shadow band divided out (:func:`.shade.shadow_gain`) is read this
#: confident at most: the band is an estimate, and a bare square it leaves a few grey levels off the
#: plate reads as a faint piece.
SHADED_CONFIDENCE: Final = 0.85
#: ...and so is every square of a board read with a lamp's glare taken out (:func:`.glare.glare_light`).
UNGLARED_CONFIDENCE: Final = 0.85
#: ...and in that read (a round glare's), what lies within this share of the glare taken out off the
#: plate is the plate: the glare's fit is a blob's, and where it falls short or overshoots a bare square
#: under it keeps a light or a dark round body without an edge, which reads as a white piece. (Drawn
#: empty boards under a compact glare, bench/vision.py's glare report: 28 of 192 read whole with a piece
#: without it, 7 with it; squares read a piece at >= 0.9, 13 and 3. On the tuning sets: 6 squares fewer
#: right, 2 fewer wrong, as many clear frames read whole; tracked, 1 more right, 3 fewer wrong.)
GLARE_SLACK: Final = 0.15
#: a plate this bright (grey level, as the square reader measures it around a square) is at the camera's
#: ceiling: a white piece there is clipped to the plate's tone, and only its shadow may show. A frame with
#: a square read bare on such a plate is "overexposed" (:func:`_exposure_checked`): the service lowers
#: the exposure and waits rather than take it (:mod:`services.vision.exposure`). (The tuning sets' clear
#: frames: white pieces read bare where the plate stood at 250 or above, 39 of 1,203 squares read bare
#: there, 3.2 %; at 230-249, 6 of 2,360; below 230, 49 of 24,260, 0.2 %. In the simulator, a white
#: plate at 1.7 times its exposure hid 64 of 81 white pieces, every square read bare at 0.85.)
CLIPPED_PLATE_LEVEL: Final = 250.0
#: dark lines are taken at least this share of the plate's grey below it, as the dark end of the scale
#: pieces are told black or white on: a groove's walls (one in shade, one lit), or a line a pixel wide,
#: average close to the plate's grey, and a white piece a little darker than a white plate then reads
#: black, surely. Black pieces lie far below any plate with dark lines. (Engraved lines 4-10% of the
#: pitch, tests/vision/synth.py, 200 frames: 4 squares wrong at 0.9 or more without it, none with it
#: from 0.3 to 0.5; on the tuning sets 4 squares more right, 2 clear frames fewer passed wrong.)
DARK_LINES_SPAN_MIN: Final = 0.4


# ----------------------------------------------------------------------------------------------------
# the detector


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
    im = _prepare_image(image)
    return _finished(im, _search(im, p, prior, t0), t0)


def _finished(im: _Image, det: Detection, t0: float) -> Detection:
    """What :func:`detect`, :func:`track` and :func:`read_board` return: ``det`` checked for exposure,
    then with the squares the learned second opinion doubts made unknown (:func:`.doubt.doubted`), its
    ``processing_ms`` counted from ``t0`` to the end of both. (In that order: a clipped plate is said
    overexposed, so that the camera's exposure is lowered, whatever the network makes of its squares.)"""
    det = doubted(im.bgr if im.bgr is not None else im.gray, _exposure_checked(det))
    return replace(det, processing_ms=_ms_since(t0))


def _exposure_checked(det: Detection) -> Detection:
    """``det``, its ``problem`` "overexposed" when it has none else and a square was read bare on a plate
    at the camera's ceiling (``CLIPPED_PLATE_LEVEL``): a white piece may lie there unseen. Set last, on
    what :func:`detect`, :func:`track` and :func:`read_board` return, so that no step of the search
    treats it as a reading gone wrong (the squares are read as well as the image allows)."""
    if det.found and not det.problem and det.extra.get("clipped_bare", 0.0) > 0:
        return replace(det, problem="overexposed")
    return det


#: a grid candidate checked on its lines: (share of line segments seen, homography, polarity, half line
#: width, cells it came from (0: the comb), pitch).
_Candidate = tuple[float, np.ndarray, Polarity, float, int, float]


def _best_candidate(
    im: _Image, candidates: list[tuple[np.ndarray, float, int]], p: DetectorParams, patchy: bool = False
) -> _Candidate | None:
    """The grid candidates (homography, pitch, cells) checked and refined on the lines; the best one,
    or None when none is a grid. ``patchy``: the cells' window has cells of its lattice beyond it, and
    its lines are looked for beyond it in the image as the comb's grids' are."""
    best: _Candidate | None = None
    best_clear = 0.0
    for h, pitch, cells in candidates:
        # The mask a lattice came from does not prove the polarity (the squares' insides can stand in
        # for cells); with fewer than nine cells (pieces dent them) the window may be a square off; and
        # the cells' size says little of the lines' width when pieces dent them. The lines tell.
        checked = _verify_grid(im, h, pitch, p, may_shift=cells < GRID_SQUARES**2)
        if cells < GRID_SQUARES**2 and checked[3] < GRID_CLEAR:
            # The comb places the lines to a pixel or two of its reduced image, and a few cells skew the
            # grid's far lines off their place, which can be too far to check them: brought onto the
            # lines, it is checked again.
            again = _verify_grid(im, _onto_lines(im, h, pitch, p), pitch, p, may_shift=True)
            if cells == 0 or again[3] >= GRID_CLEAR:
                checked = again
        h, polarity, half_width, clear = checked
        if cells == 0 and clear < COMB_MIN_CLEAR:
            continue  # the comb found something straight and periodic, not a grid
        sign = 1 if polarity == "light-lines" else -1
        # Nine cells place the grid well; fewer (pieces touching lines, half resolution, the comb) are
        # refined on the lines themselves.
        seen = 1.0
        refined: tuple[np.ndarray, float] | None = None  # the pose the last pass refined, its lines seen
        for _ in range(REFINE_PASSES if cells < GRID_SQUARES**2 else 0):
            fit = _fit_lines(im.gray, h, pitch, sign, half_width, p)
            if fit is None:
                break
            seen_before = refined[1] if refined is not None else 0.0
            lost = seen_before >= COMB_MIN_SEEN and fit.seen < seen_before - REFINE_MAX_LOSS
            if refined is not None and lost:
                # The last pass moved a grid whose lines were seen off them (a line fitted along the
                # pieces beside it skews the crossings of a small grid): the pose it refined stands.
                # (Where few were seen, as on a blue plate in grey, a pass's count says little.)
                h, seen = refined
                break
            refined = (h, fit.seen)
            h, seen = fit.h, fit.seen
        if (cells == 0 or patchy) and _grid_runs_on(im, h, pitch, polarity):
            # A window of a larger grid (a cutting mat's), not the board. The cells' windows were set
            # aside by their lines in the mask (cells._lines_run_on), yet a mat's window whose lines the
            # mask breaks (its faint minor lines, a frame's edge) still shows them going on in the image:
            # looked for where the window has cells of its lattice beyond it (a board's, as a rule, has
            # none; the look costs 0.6 ms, which every frame would pay).
            continue
        # The comb's grid replaces the cells' only when its lines are clearly better seen, unless the
        # cells' window did not look like a grid itself (cells on the plate between large pieces can be
        # taken a row off, and the window then reaches off the board).
        cells_trusted = best is not None and best[4] > 0 and best_clear >= GRID_CLEAR
        margin = COMB_SEEN_MARGIN if cells == 0 and cells_trusted else 0.0
        # Between two of the comb's grids seen as well, the one that looks more like a grid: on a full
        # board the plate's strips between large pieces make a second grid, offset, whose lines show.
        clearer = best is not None and cells == 0 and best[4] == 0 and seen >= best[0] and clear > best_clear
        if best is None or seen > best[0] + margin or clearer:
            best, best_clear = (seen, h, polarity, half_width, cells, pitch), clear
        if cells == 0 and best[4] == 0 and best[0] >= COMB_SURE_SEEN and best_clear >= COMB_SURE_CLEAR:
            break  # the comb's other guesses are likelier wrong than better
    if best is None or (best[4] == 0 and best[0] < COMB_MIN_SEEN):
        return None
    return best


def _in_view(im: _Image, pose: BoardPose) -> bool:
    """Whether the grid of ``pose`` lies in the image (see :func:`.geometry.in_view`)."""
    rows, cols = im.gray.shape
    corners = [(p.x, p.y) for p in pose.corners_px]
    return in_view(corners, pitch_of(pose), (0.0, 0.0, cols - 1.0, rows - 1.0))


def _onto_lines(im: _Image, h: np.ndarray, pitch: float, p: DetectorParams) -> np.ndarray:
    """``h`` corrected onto the grid lines near where it puts them (:func:`.lines._fit_lines`, at the polarity
    seen there and a typical line width), or ``h`` itself when they are not found."""
    sign = 1 if _polarity_at(im, h, pitch, p) == "light-lines" else -1
    for _ in range(REFINE_PASSES):
        fit = _fit_lines(im.gray, h, pitch, sign, DEFAULT_HALF_WIDTH, p)
        if fit is None:
            break
        h = fit.h
    return h


def _search(
    im: _Image,
    p: DetectorParams,
    prior: BoardPose | None,
    t0: float,
    *,
    in_relief: bool = True,
    onto_lines: bool = True,
    more_angles: bool = True,
) -> Detection:
    """The full search of a prepared image (see :func:`detect`); last, while no board is known, in its
    relief (``in_relief``: :func:`_in_relief`). A board found with squares crossed is moved onto its
    lines (``onto_lines``: :func:`_onto_the_lines`; not in another view of the image, whose pose is read
    again in the image itself). When nothing else finds a board the comb is tried at the next likeliest
    angles (``more_angles``; not in the brightest channel: see :func:`_in_the_brightest`)."""
    found = _locate(im.small, im.scale, im.sigma, im.spread, p, prior)
    if im.scale != 1.0 and (found is None or len(found[0].centers) < FULL_RES_BELOW_CELLS):
        # Thin lines or small cells can vanish at half resolution: look again at full size (around the
        # cells found, when some were).
        within = None if found is None else _around_cells(found[0], im.gray.shape, p)
        full = _locate(im.gray, 1.0, im.sigma, im.spread, p, prior, within)
        if full is not None and (found is None or full[0].score > found[0].score):
            found = full
    candidates: list[tuple[np.ndarray, float, int]] = []  # (homography, pitch, cells)
    if found is not None:
        candidates.append(_from_cells(found[0]))
    combs = None
    if found is None or len(found[0].centers) < COMB_BELOW_CELLS:
        combs = _comb_search(im, p)
        candidates += [(h, pitch, 0) for h, pitch in combs.square]
    best = _best_candidate(im, candidates, p, patchy=found is not None and found[0].beyond > 0)
    if best is None and prior is None and im.scale != 1.0:
        # Lines a pixel wide vanish at half resolution, where the comb looked: look again at full size.
        # Only while no board is known (a tracked board has its prior): it costs a few tens of ms.
        full = _comb_search(replace(im, small=im.gray, scale=1.0), p).square
        best = _best_candidate(im, [(h, pitch, 0) for h, pitch in full], p)
    if best is None and prior is None and im.bgr is not None:
        found_there = _in_the_brightest(im, p, t0)
        if found_there is not None:
            return found_there
    if best is None and prior is None:
        # Thin lines broken into fragments (a small, blurred board, a coarse JPEG) leave gaps of more
        # than a pixel between cells: the line masks closed wider, at full size.
        wide = _locate(im.gray, 1.0, im.sigma, im.spread, p, None, dilation=WIDE_DILATION_PX)
        if wide is not None:
            best = _best_candidate(im, [_from_cells(wide[0])], p, patchy=wide[0].beyond > 0)
    in_perspective = False
    if best is None and prior is None:
        # A board seen in perspective, its cells broken by pieces: its two sets of lines are neither
        # square to each other in the image nor spaced alike, which the comb above assumes. The comb
        # again, each set on its own. (Last: it would offer grids a square off where the others hold.)
        free = (combs or _comb_search(im, p)).free()
        best = _best_candidate(im, [(h, pitch, 0) for h, pitch in free], p)
        in_perspective = best is not None
    if best is None and prior is None and more_angles:
        # Clutter (a printed sheet, a phone, a tray) can outweigh a full board's edges in the angles the
        # comb tries: the comb again at the next likeliest angles. (On the tuning sets' clear frames: 42
        # without a board found -> 35, 5 of them read whole and right, no square more wrong, no occluded
        # frame more read clear. Four angles from the start: 9 squares more wrong, windows of cutting
        # mats found at the other angles.)
        more = _comb_search(im, p, skip_angles=COMB_ANGLES).square
        best = _best_candidate(im, [(h, pitch, 0) for h, pitch in more], p)
    if best is None and prior is None:
        found_there = _in_relief(im, p, t0) if in_relief else None
        if found_there is not None:
            return found_there
        if in_relief:  # (the image itself, not one of its other views)
            best = _thin_lines_to_the_edge(im, p)
        if best is None:
            return Detection(found=False, problem="no-board", processing_ms=_ms_since(t0))
    if best is None:
        assert prior is not None
        det = read_at_pose(im, prior, None, DEFAULT_HALF_WIDTH, p)
        return replace(det, pose_source="prior", problem=det.problem or "prior", processing_ms=_ms_since(t0))
    _seen, h, polarity, half_width, cells, _pitch = best
    h, pose = _normalise_turn(h)
    det = read_at_pose(im, pose, polarity, half_width, p, h=h)
    if in_perspective and det.occlusion >= 1.0:
        # No line of that grid shows where its squares are read: with each set of lines free, the comb
        # finds a grid in anything textured (a table's grain, a camera's noise). Nothing was found.
        return Detection(found=False, problem="no-board", processing_ms=_ms_since(t0))
    # (With a prior too: the tracker searches when a board's lines do not confirm its pose, and a window
    # found there a square off would be refused as a jump frame after frame while the board stood still.
    # On the tuning sets read as the tracker reads them: 3 clear frames the search without a prior read
    # on the board were taken a square off -> 0, squares right 59,516 -> 59,545, no clear frame more
    # wrong.)
    if det.occluded:
        det = _onto_the_board(im, det, h, polarity, half_width, p)
    if prior is None and det.pose is not None and not _in_view(im, det.pose):
        # The camera sees the whole board: a grid reaching out of the image is something else (a window
        # of a cutting mat's grid cut by its edge, a table's grain), and the board is looked for in the
        # other views. (Checked on the pose read, not on the candidates: a candidate a square off the
        # board is brought onto it when read.)
        return _found_elsewhere(im, p, t0, in_relief)
    if det.occlusion >= 1.0 and prior is None and im.bgr is not None:
        # Not a line of the grid found shows when its squares are read: it was something else straight
        # and periodic (a lined sheet beside the board), while the board's own lines differ from its
        # plate in colour more than in grey (thin dark lines on a red plate).
        found_there = _in_the_brightest(im, p, t0)
        if found_there is not None and found_there.occlusion < 1.0:
            return found_there
    det = _read_in_brightest(im, det, half_width, p)
    if det.occluded and onto_lines:
        det = _onto_the_lines(im, det, polarity, half_width, p)
    return replace(
        det,
        pose_source="detected",
        cells=cells,
        processing_ms=_ms_since(t0),
        extra={**det.extra, "half_width": half_width, "tracked": 0.0},
    )


def _thin_lines_to_the_edge(im: _Image, p: DetectorParams) -> _Candidate | None:
    """The grid's cells sought again with every thin structure of the lines' tone in the line masks
    (:func:`.cells._locate` ``thin``), at half size, then at full size; the best grid, or None. Last of
    all the views: thin lines running up to a plate's edge (a board without a margin on a dark table)
    fall under the local mean beside the edge, which takes in the table, and the outer cells stay open."""
    sizes = [(im.small, im.scale)] + ([(im.gray, 1.0)] if im.scale != 1.0 else [])
    for img, scale in sizes:
        found = _locate(img, scale, im.sigma, im.spread, p, None, thin=True)
        best = None if found is None else _best_candidate(im, [_from_cells(found[0])], p, found[0].beyond > 0)
        if best is not None:
            return best
    return None


def _onto_the_board(
    im: _Image, det: Detection, h: np.ndarray, polarity: Polarity, half_width: float, p: DetectorParams
) -> Detection:
    """``det``, read at the homography ``h``, or the board read with its window moved one square, when
    the window lies a square off the board: one of its outer rows or columns (and only one) is covered
    all along (the squares' corners off the board's surface, their lines not there: a strip of table or
    paper), and the window moved a square away from it leaves at least ``OFF_BOARD_GAIN`` fewer squares
    covered and fewer of its line samples hidden. Large pieces dent the cells beside them, and a column
    of paper with supply pieces on it can make up the rest of a lattice; the lines' check
    (:func:`.lines._verify_grid`) may not move such a window when the line it would take in runs along
    a row of large pieces of its own tone. A hand over one side of the board leaves the other side's
    lines where they are: the window moved takes in a strip beyond the board, no better read."""
    covered = np.array([sq.occluded for sq in det.squares]).reshape(GRID_SQUARES, GRID_SQUARES)
    sides = [
        step
        for step, strip in (
            ((1, 0), covered[:, 0]),
            ((-1, 0), covered[:, -1]),
            ((0, 1), covered[0, :]),
            ((0, -1), covered[-1, :]),
        )
        if strip.all()
    ]
    if len(sides) != 1:
        return det
    ((dx, dy),) = sides
    moved, pose = _normalise_turn(np.array([[1.0, 0.0, -dx], [0.0, 1.0, -dy], [0.0, 0.0, 1.0]]) @ h)
    again = read_at_pose(im, pose, polarity, half_width, p, h=moved)
    fewer = sum(sq.occluded for sq in det.squares) - sum(sq.occluded for sq in again.squares)
    return again if fewer >= OFF_BOARD_GAIN and again.occlusion < det.occlusion else det


def _onto_the_lines(
    im: _Image,
    det: Detection,
    polarity: Polarity,
    half_width: float,
    p: DetectorParams,
    *,
    beyond_45: float = 0.0,
) -> Detection:
    """``det`` (read in grey with the lines' ``polarity``, then in the brightest channel where that tells
    more), or the board read so again with its grid moved onto its lines as a whole
    (:func:`.align.aligned_on_lines`), when ``det`` has squares taken as crossed or as lying off the
    board's surface, no corner moved more than ``ALIGN_MAX_MOVE``, and the move shows the lines better
    (:func:`_shows_the_lines_better`: fewer squares covered, fewer crossed or off the surface, no more
    of the lines hidden, no fewer squares flagged for anything else in them, the squares read alike).

    A pose a little off (a full board placed on few cells) leaves the far squares' lines beside where
    it puts them, and those squares are taken as crossed. A hand crossing a line hides it wherever the
    grid lies: moved onto the lines, its squares stay crossed. What a square holds is read afresh at the
    moved pose, and a square flagged for it (a pen, a shadow's edge) must stay flagged: a grid moved so
    that something foreign falls on its lines instead would read a covered board clear. (How much of
    the grid's samples are unseen in all is not asked: the stretches under large pieces, explained,
    move with the grid; asked, 4 clear frames of the tuning sets more stayed flagged, sealed 3 #291,
    a full board 3 degrees off, among them.)

    The moved grid keeps ``det``'s numbering while its angle stays within ``beyond_45`` degrees
    beyond +-45 (the tracker's hysteresis: a board standing at 45 degrees is not renumbered from frame
    to frame), and is numbered as the search numbers a board otherwise."""
    off_the_lines = det.extra.get("crossed", 0.0) or det.extra.get("foreign_background", 0.0)
    if not off_the_lines or det.pose is None:
        return det
    h = homography_of(det.pose)
    moved = aligned_on_lines(im.gray, h, polarity, half_width)
    if moved is None:
        return det
    pitch = pitch_of(det.pose)
    shift = np.linalg.norm(
        _apply_h(np.linalg.inv(moved), CANONICAL_CORNERS) - _apply_h(np.linalg.inv(h), CANONICAL_CORNERS),
        axis=1,
    )
    if shift.max() > ALIGN_MAX_MOVE * pitch:
        return det
    pose = pose_from_homography(moved)
    if not -45.0 - beyond_45 < pose.angle_deg <= 45.0 + beyond_45:
        moved, pose = _normalise_turn(moved)
    again = _read_in_brightest(
        im, read_at_pose(im, pose, polarity, half_width, p, h=moved), half_width, p, h=moved
    )
    return again if _shows_the_lines_better(det, again) else det


def _shows_the_lines_better(before: Detection, after: Detection) -> bool:
    """Whether ``after`` (the board read with its grid moved) shows its lines better than ``before``
    (see :func:`_onto_the_lines`): fewer squares covered; fewer crossed, or as many and fewer whose
    corners lie off the board's surface ("background": a grid a little off puts an outer square's
    corners on the table beyond a board without a margin); no more of the lines hidden; no fewer squares
    flagged for anything else that lies inside them; and every square both read, read alike. (A move
    of a few hundredths of a pitch that changes what a square holds leaves one of the two reads unsure;
    the first one stands, its covered squares with it.)"""

    def covered(d: Detection) -> int:
        return sum(sq.occluded for sq in d.squares)

    def flagged_inside(d: Detection) -> float:
        return sum(v for k, v in d.extra.items() if k.startswith("foreign_") and k != "foreign_background")

    def count(d: Detection, key: str) -> float:
        return d.extra.get(key, 0.0)

    def agree(a: SquareReading) -> bool:
        # (The same square after the move, by where it lies: a board standing near 45 degrees may be
        # numbered a quarter turn otherwise once moved.)
        b = min(after.squares, key=lambda sq: math.dist(sq.center_px, a.center_px))
        return a.state == b.state or "unknown" in (a.state, b.state)

    return (
        covered(after) < covered(before)
        and all(agree(a) for a in before.squares)
        and (
            count(after, "crossed") < count(before, "crossed")
            or (
                count(after, "crossed") == count(before, "crossed")
                and count(after, "foreign_background") < count(before, "foreign_background")
            )
        )
        and count(after, "lines_hidden") <= count(before, "lines_hidden")
        and flagged_inside(after) >= flagged_inside(before)
    )


def _from_cells(lat: _Lattice) -> tuple[np.ndarray, float, int]:
    """A lattice of cells as a grid candidate for :func:`_best_candidate`: (homography, pitch, cells)."""
    return _fit_homography(lat), lat.pitch, len(lat.centers)


def _found_elsewhere(im: _Image, p: DetectorParams, t0: float, in_relief: bool) -> Detection:
    """The board found in the image's brightest channel or (``in_relief``) in its relief, or no board:
    what the search does when the grey image's grid is not the board."""
    there = _in_the_brightest(im, p, t0) if im.bgr is not None else None
    if there is None and in_relief:
        there = _in_relief(im, p, t0)
    return there or Detection(found=False, problem="no-board", processing_ms=_ms_since(t0))


def _in_the_brightest(im: _Image, p: DetectorParams, t0: float) -> Detection | None:
    """The grid searched for in each pixel's brightest channel and its squares read (still in grey and
    colour), or None when none is found there. Lines that differ from the plate more in colour than in
    luminance (dark blue lines on a blue plate: blue weighs a tenth in grey) stand out there."""
    # (Its relief is not looked in: the grey image's is, last of all. Nor is the comb tried at more
    # angles: on the tuning sets that read 2 frames more whole, but lost one and read an empty square of
    # a wooden plate across a shadow as a white piece, at 1.0.)
    brightest = _search(
        _brightest(im, keep_colour=False), p, None, t0, in_relief=False, onto_lines=False, more_angles=False
    )
    if not brightest.found or brightest.pose is None:
        return None
    half_width = brightest.extra["half_width"]
    det = _read_in_brightest(
        im, read_at_pose(im, brightest.pose, brightest.polarity, half_width, p), half_width, p
    )
    return _found_in(det, "brightest", brightest.cells, half_width, t0)


def _in_relief(im: _Image, p: DetectorParams, t0: float) -> Detection | None:
    """The grid searched for in the image's relief (:func:`.image.relief`: its thin structures, light
    and dark alike, light on black) and its squares read in the image itself, or None when none is found
    there, or when no line of the grid found shows in the image where its squares are read (the relief
    makes a lattice of anything fine and periodic: a table's grain, a cloth's weave).

    An engraved line is a groove with a wall in shade and a wall in the light: a dark and a light line
    side by side, which average to the plate's grey a little way off, so that neither the cells between
    the lines nor the comb's profiles across them show it. In the relief both walls are light."""
    there = _search(_prepare_image(relief(im.gray)), p, None, t0, in_relief=False, onto_lines=False)
    if not there.found or there.pose is None:
        return None
    half_width = there.extra["half_width"]
    det = read_at_pose(im, there.pose, None, half_width, p)
    if det.occlusion >= 1.0:
        return None
    return _found_in(det, "relief", there.cells, half_width, t0)


def _found_in(det: Detection, view: str, cells: int, half_width: float, t0: float) -> Detection:
    """``det``, the board read at a pose found in another ``view`` of the image (its ``extra`` says
    which), by ``cells`` cells (0: the comb), its lines ``half_width`` wide; searched since ``t0``."""
    return replace(
        det,
        pose_source="detected",
        cells=cells,
        processing_ms=_ms_since(t0),
        extra={**det.extra, "half_width": half_width, "tracked": 0.0, view: 1.0},
    )


def _around_cells(
    lat: _Lattice, shape: tuple[int, ...], p: DetectorParams
) -> tuple[int, int, int, int] | None:
    """Where the full-size search looks for the grid of a lattice found at half resolution (``lat``): the
    box (x0, y0, x1, y1, image pixels) around its 3x3 window and ``AROUND_CELLS_SQUARES`` squares
    more on every side (the window may be a square off, or reach a square off the board), widened by half
    the local mean's window (:func:`.cells._locate`), so that its cells are found there as in the whole
    image; None (the whole image) when that box is most of it."""
    h = _fit_homography(lat)
    if h is None:
        return None
    a, b = -AROUND_CELLS_SQUARES, GRID_SQUARES + AROUND_CELLS_SQUARES
    corners = _apply_h(np.linalg.inv(h), np.array([[a, a], [b, a], [b, b], [a, b]], dtype=np.float64))
    pad = _odd(p.window_frac * min(shape[:2])) // 2 + 2
    rows, cols = shape[:2]
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - pad
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + pad + 1
    x0, y0, x1, y1 = max(0, int(x0)), max(0, int(y0)), min(cols, int(x1)), min(rows, int(y1))
    if x1 - x0 <= 0 or y1 - y0 <= 0 or (x1 - x0) * (y1 - y0) > AROUND_CELLS_MOST * rows * cols:
        return None
    return x0, y0, x1, y1


def track(
    image: np.ndarray,
    prior: BoardPose,
    params: DetectorParams | None = None,
    *,
    polarity: Polarity | None = None,
    half_width: float = 0.0,
    search_with_prior: bool = True,
) -> Detection:
    """Read ``image`` at ``prior`` (the last good pose) when its grid lines are still where the prior
    puts them, with the pose corrected on those lines; otherwise search the whole image as
    :func:`detect` does: with ``prior``, or without it when ``search_with_prior`` is false (a prior
    this process has not seen confirmed yet, such as one remembered from before a restart: it must
    neither be read blind where no board is found nor keep the search from its last resorts, which
    run only while no board is known).

    The confirmation needs no search: the grid's lines are located from cross-line profiles in the
    canonical view (a fraction of the search's cost), so a board that stands still or drifts by a few
    pixels is followed frame by frame. A confirmed pose keeps the prior's numbering up to
    ``TRACK_HYSTERESIS_DEG`` beyond +-45 degrees, so that a board at 45 degrees is not renumbered from
    frame to frame; the result then carries ``extra["tracked"] == 1``. A confirmed pose read with squares
    crossed is moved onto its lines as the search's is (:func:`_onto_the_lines`: the line profiles that
    confirm it are those the search refines on). ``polarity`` and ``half_width``
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
        det = _read_in_brightest(im, read_at_pose(im, pose, polarity, hw, p, h=h2), hw, p, h=h2)
        if det.occluded:
            det = _onto_the_lines(im, det, polarity, hw, p, beyond_45=TRACK_HYSTERESIS_DEG)
        if det.line_contrast * sign > 0:
            return _finished(
                im,
                replace(
                    det,
                    pose_source="detected",
                    extra={**det.extra, "half_width": hw, "tracked": 1.0, "track_rms_px": fit.rms_offset},
                ),
                t0,
            )
    return _finished(im, _search(im, p, prior if search_with_prior else None, t0), t0)


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


def _ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def read_board(image: np.ndarray, pose: BoardPose, params: DetectorParams | None = None) -> Detection:
    """Read the squares of ``image`` at a given ``pose`` (no search): what the tracker uses when it
    rejects a sudden jump and keeps the last good pose.

    :raises DetectorError: when ``image`` is not an 8-bit grey or BGR image of a usable size.
    """
    t0 = time.perf_counter()
    p = params or DEFAULT_PARAMS
    im = _prepare_image(image)
    det = _read_in_brightest(im, read_at_pose(im, pose, None, DEFAULT_HALF_WIDTH, p), DEFAULT_HALF_WIDTH, p)
    return _finished(im, replace(det, pose_source="prior"), t0)


def _read_in_brightest(
    im: _Image, det: Detection, half_width: float, params: DetectorParams, *, h: np.ndarray | None = None
) -> Detection:
    """``det`` (read in grey at ``det.pose``, or ``h`` when given), or the board read again at that pose in
    each pixel's brightest channel, colour kept, when grey left it unsure (``det.problem``: a square
    unknown, the frame flagged) and its lines stood out there ``SATURATED_GAIN`` times more than in grey
    at the first read's quick look and do at the full read (a saturated plate: black foam on a blue
    plate, as dark as the plate in grey, is dark on a bright plate there). A board read clean in grey
    keeps that read: the brightest channel of a saturated plate carries its chroma's noise.

    Only once the window is settled: a strip of white paper beside the board, which grey shows covered and
    :func:`_onto_the_board` moves the window off, can pass for a plate in the brightest channel."""
    if im.bgr is None or det.pose is None or det.extra.get("brightest_gain", 0.0) <= SATURATED_GAIN:
        return det
    if not det.problem:
        return det  # read clean and sure in grey
    other = read_at_pose(
        _brightest(im, keep_colour=True), det.pose, None, half_width, params, h=h, in_brightest=True
    )
    if abs(other.line_contrast) <= SATURATED_GAIN * abs(det.line_contrast):
        return det
    extra = {**other.extra, "brightest_gain": det.extra["brightest_gain"], "read_in_brightest": 1.0}
    return replace(_whites_from_grey(det, other, params), extra=extra)


def _whites_from_grey(grey: Detection, brightest: Detection, params: DetectorParams) -> Detection:
    """``brightest`` (a saturated plate's read in the brightest channel) with the white pieces that
    ``grey`` (the same pose's read in grey) reads clean and at least ``WHITE_IN_GREY_CONFIDENCE`` sure
    where ``brightest`` reads no black piece. A white piece is white in every channel, the plate in its
    brightest one: there the piece is about the plate's level, its outline faint (read bare, or its edge
    as a shape that is no piece), while in grey it stands far off the plate. The frame is then flagged
    by its squares and its lines' unexplained share (``lines_hidden``), as :func:`read_at_pose` flags it."""
    squares = list(brightest.squares)
    doubtful_grid = brightest.extra["lines_hidden"] > params.frame_occluded_frac
    most_sure = DOUBTFUL_GRID_CONFIDENCE if doubtful_grid else 1.0  # (as read_at_pose caps them)
    for n, (in_grey, there) in enumerate(zip(grey.squares, brightest.squares, strict=True)):
        sure = in_grey.state == "white" and not in_grey.occluded
        if sure and in_grey.confidence >= WHITE_IN_GREY_CONFIDENCE and there.state != "black":
            squares[n] = replace(in_grey, confidence=min(in_grey.confidence, most_sure))
    if squares == list(brightest.squares):
        return brightest
    occluded = doubtful_grid or any(s.occluded for s in squares)
    unsure = any(s.state == "unknown" for s in squares)
    problem = "occluded" if occluded else ("low-confidence" if unsure else "")
    return replace(brightest, squares=tuple(squares), occluded=occluded, problem=problem)


def _lit_into_white(first: list[SquareReading], unglared: Detection) -> bool:
    """Whether the read with a glare taken out (``unglared``) reads a white piece on a square the first
    read left unknown (or covered): what a glare leaves where its fit falls short is a light round
    body without an edge, which is what a white piece is to the reader."""
    return any(
        a.state == "unknown" and b.state == "white" for a, b in zip(first, unglared.squares, strict=True)
    )


def _disagree(a: Detection, b: Detection) -> bool:
    """Whether two reads of one board read some square seen in both as different states."""
    return any(
        x.state != y.state and "unknown" not in (x.state, y.state)
        for x, y in zip(a.squares, b.squares, strict=True)
    )


def read_at_pose(
    im: _Image,
    pose: BoardPose,
    polarity: Polarity | None,
    half_width: float,
    params: DetectorParams,
    *,
    h: np.ndarray | None = None,
    in_brightest: bool = False,
    shade: np.ndarray | None = None,
    glare: np.ndarray | None = None,
    glare_slack: float = 0.0,
) -> Detection:
    """Read the squares, the occlusion and the supply of a prepared image at a known pose. When the
    grid shows little contrast in grey (under ``LOW_GRID_CONTRAST``) and the image has colour, it is read
    again in each pixel's brightest channel (``in_brightest``: this is that second read), and that read
    is taken when the grid shows none in grey or ``BRIGHTEST_GAIN`` times more there.

    A board under uneven light is read a second time with the light evened out: a shadow band divided
    out (``shade``, :func:`.shade.shadow_gain`), a lamp's glare taken out (``glare``,
    :func:`.glare.glare_light`; what lies within ``glare_slack`` of it off the plate is the plate). A
    square the two reads tell apart is unknown; a board read whole only the second way is taken so (for
    a glare, only where no line is covered, and where it reads no white piece on a square the first read
    left unknown: :func:`_lit_into_white`)."""
    if h is None:
        h = homography_of(pose)
    pitch = pitch_of(pose)
    canon = _canonical(im.gray, h, pitch, (params.canonical_min_px, params.canonical_max_px), im.bgr)
    if shade is not None:
        # The light a shadow band across the board leaves (see the end): divided out.
        colour = None if canon.colour is None else canon.colour / shade[..., None]
        canon = replace(canon, img=canon.img / shade, colour=colour)
    if glare is not None:
        # The light a lamp's glare adds (see the end): taken out, of every channel alike (it is the lamp's
        # own light, reflected).
        colour = None if canon.colour is None else canon.colour - glare[..., None]
        slack = glare_slack * glare if glare_slack > 0.0 else None
        canon = replace(canon, img=canon.img - glare, colour=colour, slack=slack)
    if polarity is None:
        # The lines stand out from the squares one way or the other: look which, beside the crossings
        # (the squares' middles may all hold pieces of one colour).
        polarity = _polarity_at(im, h, pitch, params)
    sign = 1 if polarity == "light-lines" else -1
    contrast, both_sides, owners, peaks = _line_contrast(canon, sign, half_width)
    # The grid's contrast against bare board: taken where both sides of a line are board, since a
    # white piece beside a dark line doubles the contrast on its side.
    typical = percentile(both_sides, 80)
    # A sample is seen when its contrast is a share of the typical one *for the light there*: a 2:1
    # gradient across the board halves the lines' and the plate's grey, and their difference with them.
    # (The light there: the brighter of the line and the board beside it, the line when light, the
    # board, the line's grey and its contrast, when the lines are dark.)
    light = peaks if sign > 0 else peaks + contrast
    light_both = peaks if sign > 0 else peaks + both_sides
    typical_share = percentile(both_sides / np.maximum(light_both, 1.0), 80)
    seen = contrast / np.maximum(light, 1.0) >= params.line_seen_frac * max(typical_share, 1e-4)
    # ...or when it stands out of both its sides by that share of the typical contrast itself: a lamp's
    # glare adds light to a patch of the board, lines and plate alike, which leaves the line's contrast
    # as it was but lowers it against the light there. (Both sides: a coin's or a marble's rim on a line
    # stands out of one side only. On the tuning sets: 14 squares more right, 3 clear frames fewer
    # flagged, no occluded frame more read clear; on one side only, 3 occluded frames read clear.)
    seen |= both_sides >= params.line_seen_frac * max(typical, 1e-3)
    no_grid = typical < max(NO_GRID_NOISE_K * im.sigma, NO_GRID_SPREAD_SHARE * im.spread)
    brightest_gain = 0.0  # how many times more the lines stand out in the brightest channel (colour only)
    if canon.colour is not None and not in_brightest and typical >= LOW_GRID_CONTRAST:
        in_brightest_view = replace(canon, img=brightest_channel(canon.colour))
        brightest_gain = percentile(_line_contrast(in_brightest_view, sign, half_width)[1], 80) / typical
    if typical < LOW_GRID_CONTRAST and im.bgr is not None and not in_brightest:
        # Lines that differ from the plate in colour more than in grey (dark lines on a blue plate: blue
        # weighs a tenth in grey) stand out in the brightest channel, and every threshold scales with
        # the grid's contrast (in grey, a bare square's JPEG colour reads as a piece). The pieces are
        # still told apart by colour there too. Covered lines stay covered in any channel.
        other = read_at_pose(
            _brightest(im, keep_colour=True),
            pose,
            None,
            half_width,
            params,
            h=h,
            in_brightest=True,
            shade=shade,
            glare=glare,
            glare_slack=glare_slack,
        )
        if no_grid or abs(other.line_contrast) > BRIGHTEST_GAIN * typical:
            return other
    if no_grid:
        seen[:] = False  # no grid contrast at all: all of it is covered
    occlusion = float(1.0 - seen.mean())
    # A sample is covered when its line is not seen *and* the line's own grey is not there: two white
    # pieces on both sides of a light line take its contrast, not its grey.
    line_grey = median(peaks[seen]) if seen.any() else median(peaks)
    covered = ~seen & (np.abs(peaks - line_grey) > COVER_LEVEL_FRAC * max(typical, 1e-3))
    # ...and the line has not merely grown faint there, the plate beside it unchanged.
    covered &= ~_faded_samples(peaks, contrast, both_sides, sign, seen, max(typical, 1e-3), im.sigma)
    if no_grid:
        covered[:] = True
    line_level = _line_levels(peaks, owners, seen, line_grey)
    if sign < 0 and seen.any():
        # (``light`` is the plate beside each dark line sample.)
        line_level = np.minimum(line_level, (1.0 - DARK_LINES_SPAN_MIN) * median(light[seen]))
    by_corners, discs = _read_squares(canon, half_width, line_level, pitch, im.sigma, params, sign < 0)
    by_corners = _scale_of_the_pieces(by_corners, params.piece_min_fill)
    by_corners = _two_kinds_by_the_board(by_corners, params.piece_min_fill, line_level, sign < 0)
    by_corners = _black_above_the_plate(by_corners, params.piece_min_fill, line_level, sign < 0)
    by_corners = _mid_tones_by_the_board(by_corners)
    readings = _combine(
        _read_squares_ring(canon, half_width, line_level, params, sign < 0), by_corners, line_level
    )
    # Pieces of one kind are alike: a dim "white piece" among bright ones is a coin.
    readings = _odd_tones_by_the_board(readings, sign < 0, line_level)
    # ...and a piece of the kind beyond the plate, read bare, is told by that kind's other pieces.
    readings, discs = _like_the_far_kind(readings, discs, sign < 0)
    # ...and a bare square whose middle is not the plate is not certain (nor bare, if it looks like them).
    readings = _bare_off_the_plate(readings, sign < 0)
    # The soft shadow of the gantry's arm across the board under a lamp takes a band of the plate off
    # its smooth surface: the board is read again with it divided out (below).
    gain = None
    if shade is None and glare is None and not in_brightest:
        gain = shadow_gain(canon, half_width)
    # A pen lying across the board: a long straight edge slanted from its lines. (Where the board lies
    # in a shadow that is read again with the light evened out, the shadow's own edges are excused, and
    # so are the edges of a band found, and what dividing it out leaves of them.)
    shadowed = shade is not None or gain is not None
    band_light = shade if gain is None else gain
    across = _lying_across(
        canon.img,
        canon.px,
        canon.margin,
        typical,
        im.sigma,
        sign < 0,
        shadowed,
        band_light=band_light,
        evened=shade is not None,
    )
    readings = [(*r[:4], r[4] or "across", r[5]) if across[k] else r for k, r in enumerate(readings)]
    tolerance = COVER_LEVEL_FRAC * max(typical, 1e-3)
    under_piece = _under_pieces(owners, readings, discs, tolerance, sign < 0, hidden=covered)
    crossed = _crossed_squares(~covered | under_piece, owners)
    # ...or by something reaching in over the outer lines, of their own tone (a finger, its hand beyond).
    crossed |= _crossed_squares(~_reaching_in(canon, seen, typical, im.sigma), owners)
    # A line not seen between two pieces of its own tone (black pieces beside a dark line) is explained;
    # anywhere else something covers it (a sheet, a hand, a piece lying across it).
    like_line = np.array([(r[0] == "black") == (sign < 0) and r[0] in ("black", "white") for r in readings])
    own_ok = owners >= 0
    explained = (~own_ok | like_line[np.where(own_ok, owners, 0)]).all(axis=1)
    unexplained = ~seen & ~explained & ~under_piece
    hidden_sample = np.broadcast_to(unexplained[:, None], owners.shape)
    total = np.bincount(owners[own_ok], minlength=9).astype(float)
    hidden = np.bincount(owners[own_ok], weights=hidden_sample[own_ok].astype(float), minlength=9)
    hidden_frac = hidden / np.maximum(total, 1)
    # The frame is covered where its lines are hidden and nothing on the board explains it: a full board
    # of large pieces hides much of its lines, each stretch between two pieces of the lines' tone or
    # under a piece reaching over it. (Without a grid, all of it is covered.)
    frame_hidden = occlusion if no_grid else float(unexplained.mean())
    # So much of the grid unseen may be a grid placed where the board is not (on its pieces and the table
    # around): then no square read through it is certain.
    most_sure = DOUBTFUL_GRID_CONFIDENCE if frame_hidden > params.frame_occluded_frac else 1.0
    if shade is not None:
        most_sure = min(most_sure, SHADED_CONFIDENCE)
    if glare is not None:
        most_sure = min(most_sure, UNGLARED_CONFIDENCE)
    inv = np.linalg.inv(h)
    centres = _apply_h(inv, SQUARE_CENTRES)
    squares: list[SquareReading] = []
    any_low = False
    for n in range(9):
        state, conf, fill, tone, foreign, _plate = readings[n]
        conf = min(conf, most_sure)
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
    occluded = frame_hidden > params.frame_occluded_frac or any(s.occluded for s in squares)
    # Why squares are covered, for the annotation and for study: not-a-piece inside, line crossed.
    why = {f"foreign_{r[4]}": float(sum(x[4] == r[4] for x in readings)) for r in readings if r[4]}
    why["crossed"] = float(crossed.sum())
    why["brightest_gain"] = brightest_gain
    why["lines_hidden"] = frame_hidden
    # The plate's brightest level, for the service's exposure control, and the squares read bare where it
    # is clipped (a white piece there may be lost in it).
    # (Plain floats: this runs for every pose read, many a frame. A NaN level compares false: left out.)
    plates = [float(r[5]) for r in readings]
    why["plate_top"] = max((p for p in plates if p == p), default=0.0)
    why["clipped_bare"] = float(
        sum(s.state == "empty" and p >= CLIPPED_PLATE_LEVEL for s, p in zip(squares, plates, strict=True))
    )
    problem = "occluded" if occluded else ("low-confidence" if any_low else "")
    second_reads: list[tuple[Detection, str]] = []
    if gain is not None:
        second_reads.append((read_at_pose(im, pose, polarity, half_width, params, h=h, shade=gain), "shadow"))
    if shade is None and glare is None:
        # A lamp's glare lifts a patch of the board, lines and all: read again with it taken out. (Looked
        # for with a shadow band found divided out: the lit board beside a band is a lifted patch too.)
        glared = glare_light(canon if gain is None else replace(canon, img=canon.img / gain), half_width)
        if glared is not None:
            # (A tube light's narrow glare is taken out less exactly: only to doubt the first read, and
            # so without slack: a faint black piece under it read bare would no longer doubt.)
            unglared = read_at_pose(
                im,
                pose,
                polarity,
                half_width,
                params,
                h=h,
                in_brightest=in_brightest,
                glare=glared.added,
                glare_slack=0.0 if glared.long else GLARE_SLACK,
            )
            second_reads.append((unglared, "long_glare" if glared.long else "glare"))
    read_whole = not problem
    lines_covered = bool(
        crossed.any()
        or (hidden_frac > params.square_occluded_frac).any()
        or frame_hidden > params.frame_occluded_frac
    )
    for second, light in second_reads:
        if (
            not read_whole
            and not second.problem
            and (light == "shadow" or (light == "glare" and not lines_covered))
            and not (light == "glare" and _lit_into_white(squares, second))
            and not any(_disagree(second, other) for other, _ in second_reads if other is not second)
        ):
            # Read whole only with the light evened out. (For a round glare, only where no line is
            # covered: glare leaves the lines seen, and a hand is a light patch too. And only when the
            # other light found reads no square otherwise: a tube light's glare on a dark plate is a lit
            # band, and the plate on either side of it a "shadow band" too.)
            return second
        # A square read differently with the light evened out and without was not seen clearly either way.
        for n, (first, other) in enumerate(zip(squares, second.squares, strict=True)):
            if first.state != other.state and first.state != "unknown":
                squares[n] = replace(first, state="unknown", confidence=0.0)
                problem = problem or "low-confidence"
        why[f"{light}_doubt"] = float(sum(s.state == "unknown" for s in squares))
    supply = _supply(im.small, im.scale, h, pitch, im.sigma, im.spread, params, im.bgr, h_inv=inv)
    if shade is not None:
        why["shadow_band"] = float(shade.min())
    if glare is not None:
        why["glare"] = float(glare.max())
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
