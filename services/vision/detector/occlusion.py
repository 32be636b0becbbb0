"""Step 5 of the package's overview on the grid's lines: each line sampled along its whole length in
the canonical view (:func:`_line_sampling`, :func:`_line_contrast`: one missed where the grid puts it
is looked for a little either side), the lines' level around each square, the stretches hidden as long
as a finger is wide (:func:`_crossed_squares`) unless the line only grew faint there
(:func:`_faded_samples`), and the samples large pieces side by side, or one reaching over the line,
explain (:func:`_under_pieces`, :func:`_whole_stretches`). (What inside a square is not a piece:
:mod:`.pieces` and :mod:`.ring`.)"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import numpy as np

from .geometry import GRID_SQUARES, SQUARE_CENTRES, _Canon, _read_only
from .model import SquareRead
from .stats import median, percentile

#: line samples per square side, spread over the middle of the side (corners are crossings).
LINE_SAMPLES: Final = 10
#: consecutive hidden line samples (0.07 pitch apart) that make a covered stretch (about a finger's width).
HIDDEN_RUN_SAMPLES: Final = 4
#: how far beyond a piece's measured edge (pitches) it may hide a line: its rim and soft shadow, and
#: the edge's own step (``pieces.RING_STEP``). (0.12 left the line between two large glossy pieces
#: crossed where their shadows meet, 0.55-0.6 of a pitch from their centres: 7 squares of the tuning
#: runs; no occluded frame of 240 reads clear at this reach that did not at that one.)
PIECE_LINE_REACH: Final = 0.18
#: how far beyond its measured edge (pitches) a piece's own rim reaches: a line sample that near a
#: piece lies under it, beside a bare square too. (A ring more, 0.10, since the edge is the last ring
#: the body fills: tuning sets 59,274 -> 59,290 squares right read cold, but read as the tracker reads a
#: board it follows, a piece held over the board by the gantry's head (sealed 3/127) then explained the
#: outer line its arm hides, and the frame was taken with that piece as the square's: left at 0.06.)
PIECE_OVER_LINE: Final = 0.06
#: ...when its middle is this far (on the grid's tone scale) from the plate's end of it: a body of the
#: plate's own tone is as likely the plate (a phantom white piece on a white plate beside a faint line).
OVER_LINE_TONE: Final = 0.25
#: how far beyond its measured edge (pitches) a piece reaching over its line may hide the chord of the
#: line centred on the point nearest it (:func:`_rim_chords`): its rim, contact shadow and blur lie
#: beyond the edge its body gives. (Clear tuning frames flagged "crossed" alone: such chords 0.04-0.13
#: beyond. The gantry's head holding a piece over the top outer line, read as the tracker reads it, hides
#: a chord 0.081-0.124 beyond the held piece, sealed 3/127: at 0.12 still covered. On the tuning sets read
#: cold, squares right 59,536 -> 59,552, clear frames flagged 209 -> 201, occluded read clear 77 -> 77;
#: tracked 59,561 -> 59,580, 186 -> 177, 75 -> 75.)
PIECE_RIM_REACH: Final = 0.12
#: how far (pitches) either side of where the grid puts a line missed there it is looked for, each line
#: whole (:func:`_line_contrast`)...
LINE_SHIFT: Final = 0.05
#: ...and taken there when more of its samples are seen and it stands out this many times more (its
#: samples' contrast summed). (Tuning sets, with the plate beside a whole line for one fading from an
#: end (:func:`_faded_samples`), measured while ``PIECE_OVER_LINE`` was 0.10: 59,290 -> 59,304 squares
#: right, wrong 139 -> 135, occluded frames read clear 77 -> 77; a frame whose grid was placed off the
#: board now on it and read whole. Every line,
#: seen or not, looked for at the shift where it stands out more: 59,316 right, but 15 frames with
#: squares lost, dark plates' faint lines drawn to the pieces' shadows.)
LINE_SHIFT_GAIN: Final = 1.1
#: a line is missed where the grid puts it when fewer than half its samples stand out by this share of
#: the grid's typical contrast (about as ``DetectorParams.line_seen_frac`` sees a sample).
MISSED_LINE_SHARE: Final = 0.45
#: fewest seen line samples around a square to take their level rather than the grid's.
MIN_LINE_SAMPLES: Final = 6
#: a line sample not seen is the line fading (a marker running dry, an engraved groove the light does
#: not catch), not something lying across it, when both its sides are within this share of the grid's
#: contrast of the plate beside the same line's seen samples a square each way... (0.25 let fingers of a
#: wood plate's tone and a hand on a pale plate through: 8 occluded tuning frames more read clear, in a
#: first version that took each sample on its own; a side's unseen samples all or none, as now: 14 squares
#: of the tuning sets fewer right than each on its own, one frame fewer taken wrong.)
FADED_SIDES_SHARE: Final = 0.2
#: ...and the line still stands out there by this share of the grid's contrast: under a finger, a pen or
#: a sheet nothing of it is left. (0.15: one occluded tuning frame more read clear.)
FADED_CONTRAST_SHARE: Final = 0.25
#: A line fainter still, down to this share of the grid's contrast and ``FADED_NOISE_K`` times the image's
#: noise (a thin pen line drawn light over a stretch, at a tenth to a quarter of the grid's contrast), is
#: the line fading when both its sides lie within ``FADED_TIGHT_SHARE`` of the contrast of the plate: a
#: finger of the plate's own tone leaves no line between (its samples are noise), and anything else puts
#: its own tone beside. (Tuning sets: 52,163 -> 52,178 squares right, frames flagged 237 -> 229, occluded
#: frames read clear 74 -> 74. The floor at 0.05 of the contrast, or twice the noise: not one frame
#: otherwise; the sides within 0.15: an occluded frame's covered square read.)
FADED_FAINT_SHARE: Final = 0.1
FADED_NOISE_K: Final = 3.0
FADED_TIGHT_SHARE: Final = 0.1


#: how far beyond the board's outer lines (pitches) to look for what reaches in over them: farther than
#: any piece inside the grid reaches (a radius of 0.45 off its square's centre by 0.1 ends 0.05 beyond).
BEYOND_OUTER: Final = 0.25
#: there, a sample differs from its outer line's others by this many of their robust spreads (or of the
#: image's noise), and this share of the grid's contrast at least.
BEYOND_K: Final = 3.0
BEYOND_CONTRAST_SHARE: Final = 0.3
#: the width of a normal distribution's densest third, in sigmas (two times 0.43).
SHORTH_THIRD_WIDTH: Final = 0.86
#: fewest samples of an outer line seen to measure what lies beyond it there (else beyond all of it).
MIN_BEYOND_SEEN: Final = 6


def _along(s: int, m: int, j: int, i: int) -> int:
    """The view's row or column (``s`` px per square, ``m`` margin) of sample ``i`` along square ``j``'s
    side of a line: spread over the middle of the side, clear of the crossings."""
    return m + int((j + 0.15 + 0.7 * ((i + 0.5) / LINE_SAMPLES)) * s)


@lru_cache(maxsize=64)
def _line_sampling(s: int, m: int, band: int, off: int) -> tuple[np.ndarray, ...]:
    """Pixel indices of every line sample in a canonical view of ``s`` px per square and ``m`` margin,
    as flat indices into the view (each clipped to it): (line pixels (L, B), reference pixels beside
    the line (L, 2), owners (L, 2): the squares (0..8, -1 none) on its two sides)."""
    lr, lc, rr, rc, own = [], [], [], [], []
    offsets = np.arange(-band, band + 1)
    for k in range(GRID_SQUARES + 1):
        line = m + k * s
        for j in range(GRID_SQUARES):
            for i in range(LINE_SAMPLES):
                along = _along(s, m, j, i)
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


def _line_samples_of(canon: _Canon, half_width: float) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_line_sampling` for a canonical view whose lines are ``half_width`` pitches wide each side:
    the half band across a line (px; a line sample's middle pixel is at this index), then its line
    pixels, reference pixels beside the line (clear of its blur) and owners."""
    s = canon.px
    band = max(1, round(half_width * s))
    off = band + max(2, round(0.1 * s))
    return (band, *_line_sampling(s, canon.margin, band, off))


def _line_contrast(
    canon: _Canon, sign: int, half_width: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Contrast of every line sample against the board beside it (positive when the line stands out
    the expected way) on the side where it is larger and on the side where it is smaller, the squares
    (0..8, -1 none) each sample borders, and the line's grey level."""
    _band, line_at, ref_at, own = _line_samples_of(canon, half_width)
    img = canon.img.ravel()

    def shifted(d: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(contrast on the clearer side, on the other, the line's grey) of every sample ``d`` px off."""
        lines, refs = line_at, ref_at
        if d:  # (every frame reads its lines in place; only a missed line is read off it)
            step = np.where(_VERTICAL[:, None], d, d * canon.img.shape[1])
            lines = np.clip(line_at + step, 0, img.size - 1)
            refs = np.clip(ref_at + step, 0, img.size - 1)
        line_vals = img[lines]
        peak = line_vals.max(axis=1) if sign > 0 else line_vals.min(axis=1)
        ref_vals = img[refs]
        # Against the side where the line stands out most: a white piece beside a light line hides the
        # contrast on its side only, while a hand over the line hides it on both sides.
        sides = sign * (peak[:, None] - ref_vals)
        return sides.max(axis=1), sides.min(axis=1), peak

    best = shifted(0)
    # A line mostly missed where the grid puts it is looked for a pixel or two either side, whole: a
    # board's outer lines drawn a little off its inner lines' spacing, a lens's barrel.
    line_of = _LINE_OF
    floor = MISSED_LINE_SHARE * percentile(best[1], 80)
    seen = np.bincount(line_of, weights=best[0] >= floor, minlength=8)
    missed = seen < 0.5 * np.bincount(line_of, minlength=8)
    if floor > 0 and missed.any():
        level = np.bincount(line_of, weights=np.maximum(best[0], 0.0), minlength=8)
        reach = max(1, round(LINE_SHIFT * canon.px))
        for d in sorted(range(-reach, reach + 1), key=abs)[1:]:
            found = shifted(d)
            seen_there = np.bincount(line_of, weights=found[0] >= floor, minlength=8)
            level_there = np.bincount(line_of, weights=np.maximum(found[0], 0.0), minlength=8)
            better = missed & (seen_there > seen) & (level_there > LINE_SHIFT_GAIN * level)
            if better.any():
                best = tuple(np.where(better[line_of], a, b) for a, b in zip(found, best, strict=True))
                seen, level = np.where(better, seen_there, seen), np.where(better, level_there, level)
    return best[0], best[1], own, best[2]


#: each line sample's line (0..7: the line's number across the board times two, plus one when
#: horizontal) and whether it is vertical, in :func:`_line_sampling`'s order.
_SAMPLE_INDEX = np.arange((GRID_SQUARES + 1) * GRID_SQUARES * LINE_SAMPLES * 2)
_LINE_OF: Final = _SAMPLE_INDEX // (GRID_SQUARES * LINE_SAMPLES * 2) * 2 + _SAMPLE_INDEX % 2
_VERTICAL: Final = _LINE_OF % 2 == 0


def _under_pieces(
    owners: np.ndarray,
    readings: list[SquareRead],
    discs: np.ndarray,
    tolerance: float,
    dark_lines: bool,
    hidden: np.ndarray | None = None,
) -> np.ndarray:
    """Which line samples (L,) may lie hidden between two large pieces: both squares read as a piece
    cleanly (nothing foreign), of one kind with their middles' greys alike (within ``tolerance``: a grey
    coin read black beside a black piece is not one) or a black and a white piece (the black body hides
    a dark line on its side, the white piece's darker rim on the other), and both discs (``discs``:
    centre, edge radius and middle grey per square, as :func:`.squares._read_squares` measures them)
    reaching the sample once grown by ``PIECE_LINE_REACH``, their rims and soft shadows. Two such pieces
    side by side cover the line between them with their bodies, rims and shadows, as no finger does.

    And where a piece whose middle is clearly off the plate's tone (``OVER_LINE_TONE`` on the grid's
    scale from the plate's end of it, which ``dark_lines``, the grid's polarity, says) reaches over the
    line with its disc and rim (its edge and ``PIECE_OVER_LINE``; or ``PIECE_RIM_REACH`` along the hidden
    stretch that holds the line's point nearest it: :func:`_rim_chords`), beside anything; given the
    samples ``hidden`` (L,), only stretches of them mostly within that reach (:func:`_whole_stretches`).

    Nowhere else: beside a bare square or the board's edge a piece inside its square leaves its line
    seen on that side, and what hides a line there is something else (a finger, a pen lying across the
    board). (A body of the plate's own tone is not taken so: a phantom white piece on a white plate
    would explain the faint dark line it sits beside.)"""
    piece = np.array([r[0] in ("black", "white") and not r[4] for r in readings])
    at = _sample_positions()  # (L, 2) in pitches from the board's corner
    own_ok = owners >= 0
    o = np.where(own_ok, owners, 0)
    centres = SQUARE_CENTRES[o] + discs[o, :2]  # (L, 2 sides, 2)
    beyond_edge = np.hypot(*(at[:, None, :] - centres).transpose(2, 0, 1)) - discs[o, 2]  # (L, 2 sides)
    reach = beyond_edge <= PIECE_LINE_REACH
    alike = np.abs(discs[o[:, 0], 3] - discs[o[:, 1], 3]) <= tolerance
    black = np.array([r[0] == "black" for r in readings])
    unlike = black[o[:, 0]] != black[o[:, 1]]  # (both are pieces: one black, one white)
    # A piece clearly off the plate's tone whose disc, with its rim, reaches over the line hides it,
    # whatever is beside it.
    plate = 1.0 if dark_lines else 0.0
    off_plate = piece & np.array([abs(r[3] - plate) >= OVER_LINE_TONE for r in readings])
    over = beyond_edge <= PIECE_OVER_LINE
    if hidden is not None:
        over |= _rim_chords(hidden, beyond_edge)
    pairs = (own_ok & piece[o] & reach).all(axis=1) & (alike | unlike)
    over_line = (own_ok & off_plate[o] & over).any(axis=1)
    if hidden is not None:
        over_line = _whole_stretches(hidden, over_line)
    return pairs | over_line


def _rim_chords(hidden: np.ndarray, beyond_edge: np.ndarray) -> np.ndarray:
    """Which line samples (L, 2 sides) lie under the rim of the piece on that side, given the samples
    ``hidden`` (L,) and how far each lies beyond that piece's measured edge (``beyond_edge``, (L, 2),
    pitches): the stretch of hidden samples along a square's side that holds the sample nearest the
    piece's centre, when all of it lies within ``PIECE_RIM_REACH``. A piece reaching over its line hides
    the chord its disc, rim and shadow cut, centred on the point of the line nearest the piece; a pen or
    a coin beside the piece crosses the line wherever it lies, and a stretch longer than a rim reaches is
    something else (an arm, a sheet)."""
    shape = (GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)  # see _line_sampling
    hid = hidden.reshape(shape).transpose(0, 1, 3, 2).reshape(-1, LINE_SAMPLES)
    out = np.zeros((hid.shape[0], LINE_SAMPLES, 2), bool)
    beyond = beyond_edge.reshape(*shape, 2).transpose(0, 1, 3, 2, 4).reshape(-1, LINE_SAMPLES, 2)
    for side in np.flatnonzero(_hidden_runs(hid)):
        h = hid[side]
        label = np.cumsum(np.r_[h[0], h[1:] & ~h[:-1]]) * h
        for piece in range(2):
            b = beyond[side, :, piece]
            foot = int(np.argmin(b))
            chord = (label == label[foot]) & h
            if h[foot] and (b[chord] <= PIECE_RIM_REACH).all():
                out[side, chord, piece] = True
    out = out.reshape(GRID_SQUARES + 1, GRID_SQUARES, 2, LINE_SAMPLES, 2).transpose(0, 1, 3, 2, 4)
    return out.reshape(-1, 2)


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


@lru_cache(maxsize=16)
def _beyond_sampling(s: int, m: int) -> np.ndarray:
    """Flat indices into a canonical view (``s`` px per square, ``m`` margin) of the pixel
    ``BEYOND_OUTER`` beyond each outer-line sample of :func:`_line_sampling`, in its order, (L,); -1 for
    the samples of the inner lines."""
    size = GRID_SQUARES * s + 2 * m
    d = round(BEYOND_OUTER * s)
    out = []
    for k in range(GRID_SQUARES + 1):
        line = m + k * s
        outside = line - d if k == 0 else line + d
        for j in range(GRID_SQUARES):
            for i in range(LINE_SAMPLES):
                along = _along(s, m, j, i)
                for vertical in (True, False):
                    if k not in (0, GRID_SQUARES):
                        out.append(-1)
                        continue
                    row, col = (along, outside) if vertical else (outside, along)
                    out.append(min(max(row, 0), size - 1) * size + min(max(col, 0), size - 1))
    return _read_only(np.array(out))[0]


def _reaching_in(canon: _Canon, seen: np.ndarray, typical: float, noise: float) -> np.ndarray:
    """Which line samples (L,) of the board's outer lines are hidden by something that reaches in over
    them from outside the grid: the line is not seen there (``seen``), and ``BEYOND_OUTER`` beyond it the
    view differs from what lies beyond the rest of that line (by ``BEYOND_K`` of its robust spread, or
    of the image's ``noise``, and ``BEYOND_CONTRAST_SHARE`` of the grid's contrast ``typical``). A finger
    of the lines' own tone hides their contrast, not their grey, and is read as a piece in the square
    it reaches: its hand beyond the board gives it away. A piece reaching over the outer line ends
    before that far; a supply piece or the tape beside the board leaves the line seen."""
    idx = _beyond_sampling(canon.px, canon.margin)
    vals = canon.img.ravel()[np.maximum(idx, 0)]
    # (line, square along, position, orientation): each outer line's samples, on their own.
    shape = (GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)
    per_line, seen_at = vals.reshape(shape), seen.reshape(shape)
    out = np.zeros(shape, bool)
    along = np.arange(GRID_SQUARES * LINE_SAMPLES, dtype=float)
    for k in (0, GRID_SQUARES):
        for o in range(2):
            if not _hidden_runs(~seen_at[k, :, :, o]).any():
                continue  # (no stretch of this side hidden as long as a finger is wide: nothing to tell)
            v, ok = per_line[k, :, :, o].ravel(), seen_at[k, :, :, o].ravel()
            if ok.sum() < MIN_BEYOND_SEEN:
                ok = np.ones_like(ok)
            # What lies beyond where the line is seen (an arm may lie beyond it there too, and a hand
            # of one tone be the densest level of the whole side): one level, or one less the light's
            # gradient along the side, whichever holds it tighter (the plate's margin ending part way
            # along a side is a step, no gradient).
            spread = _shorth(v[ok])
            off = v - _robust_slope(along[ok], v[ok]) * along
            spread_off = _shorth(off[ok])
            if spread_off < spread:
                spread = spread_off
            else:
                off = v
            limit = max(BEYOND_K * max(spread, noise), BEYOND_CONTRAST_SHARE * typical)
            level = _consensus(off[ok], limit)
            out[k, :, :, o] = (np.abs(off - level) > limit).reshape(GRID_SQUARES, LINE_SAMPLES)
    return out.ravel() & ~seen


def _whole_stretches(hidden: np.ndarray, under: np.ndarray) -> np.ndarray:
    """Which line samples (L,) ``under`` explains (a piece reaching over the line) once each stretch of
    ``hidden`` samples in a row along a square's side is taken whole: none of it explained unless most of
    it is. A piece hides the stretch of its line under its own rim, which its measured edge places to a
    ring (``PIECE_OVER_LINE``); a stretch that lies mostly beyond it is something else lying there (a
    coin against a piece's edge), and the piece's reach must not nibble it below a finger's width."""
    shape = (GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)  # see _line_sampling
    hid = hidden.reshape(shape).transpose(0, 1, 3, 2).reshape(-1, LINE_SAMPLES)
    und = (under & hidden).reshape(shape).transpose(0, 1, 3, 2).reshape(-1, LINE_SAMPLES)
    out = und.copy()
    for side in np.flatnonzero((hid & ~und).any(axis=1) & und.any(axis=1)):
        # Label the stretches along the side (1, 2, ...; 0 where seen), then judge each as a whole.
        h = hid[side]
        label = np.cumsum(np.r_[h[0], h[1:] & ~h[:-1]]) * h
        for run in np.unique(label[h]):
            at = label == run
            if 2 * np.count_nonzero(und[side] & at) <= np.count_nonzero(at):
                out[side, at] = False
    out = out.reshape(GRID_SQUARES + 1, GRID_SQUARES, 2, LINE_SAMPLES).transpose(0, 1, 3, 2)
    return out.ravel() | (under & ~hidden)


def _hidden_runs(hidden: np.ndarray) -> np.ndarray:
    """Whether each side of ``hidden`` (..., ``LINE_SAMPLES``: the samples along one square's side last)
    holds ``HIDDEN_RUN_SAMPLES`` hidden samples in a row: a stretch as long as a finger is wide."""
    starts = LINE_SAMPLES - HIDDEN_RUN_SAMPLES + 1
    runs = hidden[..., :starts].copy()  # a hidden run starts at each of these samples
    for i in range(1, HIDDEN_RUN_SAMPLES):
        runs &= hidden[..., i : i + starts]
    return runs.any(axis=-1)


def _robust_slope(x: np.ndarray, y: np.ndarray) -> float:
    """The Theil-Sen slope of ``y`` over ``x``: the median of the slopes between every two points (a
    third of them may be anything)."""
    i, j = np.triu_indices(len(x), 1)
    return float(np.median((y[j] - y[i]) / (x[j] - x[i]))) if len(i) else 0.0


def _shorth(values: np.ndarray) -> float:
    """The spread of the level most of ``values`` share, as a normal sigma: from the width of their
    densest third (a hand beyond the board may fill more than half of one side's samples)."""
    v = np.sort(values)
    w = max(2, len(v) // 3)
    return float((v[w - 1 :] - v[: len(v) - w + 1]).min()) / SHORTH_THIRD_WIDTH


def _consensus(values: np.ndarray, tolerance: float) -> float:
    """The level the most of ``values`` lie within ``tolerance`` of (the median of those): beyond a side
    whose plate margin ends part way along it, the longer stretch; beyond an arm, the table."""
    near = np.abs(values[:, None] - values[None, :]) <= tolerance
    return float(np.median(values[near[int(np.argmax(near.sum(axis=1)))]]))


def _crossed_squares(seen: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Squares (9 booleans) beside a line hidden over a stretch as long as a finger is wide
    (``HIDDEN_RUN_SAMPLES`` consecutive samples within one square's side): something lies across the
    line. A piece inside its square does not hide its lines (the contrast is taken on the side where
    the line stands out), so short covered stretches are what a fingertip, a hand's edge or a piece put
    down across a line leave. (Except between two large pieces side by side: the caller counts what
    :func:`_under_pieces` explains as seen.)"""
    # Samples are laid out as (line, square along it, position, vertical/horizontal): see _line_sampling.
    hidden = ~seen.reshape(GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)
    hit = _hidden_runs(hidden.transpose(0, 1, 3, 2))  # (line, square along, orientation)
    own = owners.reshape(GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2, 2)[:, :, 0, :, :]
    crossed = np.zeros(9, bool)
    marked = own[hit].ravel()
    crossed[marked[marked >= 0]] = True
    return crossed


def _faded_samples(
    peaks: np.ndarray,
    contrast: np.ndarray,
    both_sides: np.ndarray,
    sign: int,
    seen: np.ndarray,
    typical: float,
    noise: float,
) -> np.ndarray:
    """Which line samples (L,) not ``seen`` are the line itself grown faint, not covered: the line still
    stands out there (``contrast``, on its clearer side, ``FADED_CONTRAST_SHARE`` of the grid's
    ``typical`` contrast at least) and both its sides (``peaks``, the line's grey, less ``sign`` times
    ``contrast`` and ``both_sides``) lie within ``FADED_SIDES_SHARE`` of ``typical`` of the plate: the
    median of what lies beside the same line's seen samples a square each way. Or fainter, down to
    ``FADED_FAINT_SHARE`` of ``typical`` and ``FADED_NOISE_K`` times the image's ``noise``, with both
    sides within ``FADED_TIGHT_SHARE`` of it. A marker's stroke running dry or an engraved groove turned
    from the light fades along the line, the plate on both sides unchanged; a finger, a pen or a hand
    across the line puts its own tone on both sides and leaves nothing of the line between."""
    shape = (GRID_SQUARES + 1, GRID_SQUARES, LINE_SAMPLES, 2)  # see _line_sampling
    strong = contrast >= FADED_CONTRAST_SHARE * typical
    faint = contrast >= max(FADED_FAINT_SHARE * typical, FADED_NOISE_K * noise)
    candidates = (~seen & (strong | faint)).reshape(shape)
    strong = strong.reshape(shape)
    out = np.zeros(shape, bool)
    if not candidates.any():
        return out.ravel()
    sides = np.stack([peaks - sign * contrast, peaks - sign * both_sides], axis=-1).reshape(*shape, 2)
    seen_at = seen.reshape(shape)
    tolerance = FADED_SIDES_SHARE * typical
    for k, j, o in zip(*np.nonzero(candidates.any(axis=2)), strict=True):
        near = slice(max(0, j - 1), j + 2)
        ok = seen_at[k, near, :, o]
        if ok.sum() < MIN_LINE_SAMPLES:
            # Too little of the line seen nearby to tell the plate beside it: the whole line's (a line
            # fading from one end, under a gradient, is seen at the other).
            near = slice(0, GRID_SQUARES)
            ok = seen_at[k, near, :, o]
        if ok.sum() < MIN_LINE_SAMPLES:
            continue
        plate = median(sides[k, near, :, o][ok])
        within = np.where(strong[k, j, :, o], tolerance, FADED_TIGHT_SHARE * typical)
        faded = candidates[k, j, :, o] & (np.abs(sides[k, j, :, o] - plate) <= within[:, None]).all(axis=-1)
        # All of the side's unseen samples, or none: a finger's edges keep some of the line's contrast
        # beside its own tone, and taking them out would shorten what it hides below a finger's width.
        if (faded | seen_at[k, j, :, o]).all():
            out[k, j, :, o] = faded
    return out.ravel()


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
