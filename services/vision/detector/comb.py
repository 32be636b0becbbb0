"""Step 2's second way to the grid, for boards whose cells pieces break up (large pieces touching thin
lines, a full board): the comb search (:func:`_comb_search`) looks for four long, evenly spaced
parallel lines each way."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from .geometry import _odd, _wrap90
from .image import _Image
from .model import DetectorParams

#: the comb search: edges above this percentile of gradient energy vote for the angle; this many
#: candidate angles at least this many degrees apart are tried (and as many more, the next likeliest,
#: when nothing else finds a board: see search._search).
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
#: the comb's likeliest grids checked on the lines, at most this many of each kind of evidence (the
#: checking stops at a grid whose lines are seen search.COMB_SURE_SEEN well). Not more: on a full board
#: the plate's strips between lines and pieces make a second, offset grid that passes the check (4 a
#: kind: 84 of 725 passing grids on rendered full boards were a quarter pitch off; 1 a kind: 0 of 200).
COMB_CANDIDATES: Final = 1
#: the comb for a board seen in perspective (:meth:`_Combs.free`): each set of lines its own angle, turned at
#: most this many degrees from square to the other's, and its own pitch, at most this ratio to the
#: other's (a camera tilted so that the board's far side is a fifth smaller than its near side).
COMB_FREE_ANGLE: Final = 10.0
COMB_FREE_PITCH_RATIO: Final = 1.2


def _comb_angles(img: np.ndarray, count: int = COMB_ANGLES) -> list[float]:
    """The board's ``count`` likeliest angles in ``img`` (degrees, counter-clockwise as seen, in
    (-45, 45]), likeliest first: the dominant straight-edge orientations, gradient directions taken
    modulo 90 degrees."""
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)
    mag = gx * gx + gy * gy
    strong = mag > np.percentile(mag, COMB_EDGE_PERCENTILE)
    ang = (np.degrees(np.arctan2(gy[strong], gx[strong])) + 45.0) % 90.0 - 45.0
    hist = np.bincount(np.round(ang + 45.0).astype(np.int64) % 90, weights=np.sqrt(mag[strong]), minlength=90)
    hist = np.convolve(np.concatenate([hist[-2:], hist, hist[:2]]), np.ones(5), mode="valid")
    angles: list[float] = []
    for i in np.argsort(hist)[::-1]:
        # Gradient directions are measured with y down; the board's angle is counter-clockwise as seen.
        a = _wrap90(45.0 - float(i))
        if all(abs(_wrap90(a - b)) > COMB_ANGLE_SEPARATION for b in angles):
            angles.append(a)
        if len(angles) == count:
            break
    return angles


def _ridges(view: np.ndarray, axis: int) -> np.ndarray:
    """How far each pixel of ``view`` stands above both its neighbours ``d`` pixels away along ``axis``,
    for the best ``d`` of ``COMB_RIDGE_REACH`` (0 where it does not): a thin line across ``axis``
    answers, a step edge (a piece's or the plate's border) does not, since one of its sides is as high
    as the edge itself."""
    # The higher of the two neighbours d away is a dilation by a kernel of just those two pixels; a
    # neighbour beyond the view counts as infinitely high, so a reach that does not fit says nothing.
    infinite = float(np.finfo(np.float32).max)
    nearest = np.full_like(view, infinite)
    for d in COMB_RIDGE_REACH:
        pair = np.zeros((2 * d + 1, 1) if axis == 0 else (1, 2 * d + 1), np.uint8)
        pair.flat[0] = pair.flat[-1] = 1
        higher = cv2.dilate(view, pair, borderType=cv2.BORDER_CONSTANT, borderValue=infinite)
        np.minimum(nearest, higher, out=nearest)
    return np.maximum(view - nearest, 0.0)


def _comb_teeth(profiles: np.ndarray, pitch: float) -> tuple[np.ndarray, np.ndarray]:
    """The best comb of four teeth ``pitch`` apart on each row of ``profiles`` (profiles of one length):
    its score (all four teeth, the weakest counting most: a comb is not one strong line) and where its
    first tooth stands, a row each; 0 and 0 where four teeth do not fit."""
    rows, length = profiles.shape
    n = length - int(3 * pitch) - 1
    if n <= 0:
        return np.zeros(rows), np.zeros(rows, dtype=np.int64)
    # The four teeth as shifted views of the profiles (no gather), all profiles at once: this runs for
    # every pitch of a comb search.
    a, b, c, d = (profiles[:, o : o + n] for o in (0, round(pitch), round(2 * pitch), round(3 * pitch)))
    score = (a + b + c + d) + 2.0 * np.minimum(np.minimum(a, b), np.minimum(c, d))
    k = np.argmax(score, axis=1)
    return score[np.arange(rows), k], k


def _comb_profile(evidence: np.ndarray, axis: int) -> np.ndarray:
    """The evidence of a turned view summed along ``axis`` (0: down its columns, for the vertical lines;
    1: along its rows, for the horizontal ones), high-passed: lines are narrow peaks there, pieces and
    shadows broad bumps that the running mean takes off."""
    prof = evidence.sum(axis=axis, dtype=np.float32)
    base = np.convolve(prof, np.ones(COMB_HIGHPASS) / COMB_HIGHPASS, mode="same")
    peak = np.convolve(prof, np.ones(3) / 3.0, mode="same")
    return np.maximum(peak - base, 0.0)


def _best_combs(
    profiles: list[tuple[np.ndarray, np.ndarray]], pitches: np.ndarray
) -> list[tuple[float, int, int, float]]:
    """The best comb on both profiles of each pair at one of ``pitches`` (see :func:`_comb_teeth`): a
    (score, first vertical line, first horizontal line, pitch) for each pair, the smallest such pitch on
    a tie. All profiles are of one length (the turned views are square)."""
    pairs = len(profiles)
    if pairs == 0:
        return []
    stack = np.array([p for pair in profiles for p in pair], dtype=np.float64)
    best = np.full(pairs, -math.inf)
    x0s, y0s = np.zeros(pairs, dtype=np.int64), np.zeros(pairs, dtype=np.int64)
    best_pitch = np.zeros(pairs)
    for pitch in pitches:
        score, start = _comb_teeth(stack, pitch)
        total = score[0::2] + score[1::2]
        better = total > best
        best = np.where(better, total, best)
        x0s = np.where(better, start[0::2], x0s)
        y0s = np.where(better, start[1::2], y0s)
        best_pitch = np.where(better, pitch, best_pitch)
    return [(float(best[i]), int(x0s[i]), int(y0s[i]), float(best_pitch[i])) for i in range(pairs)]


def _comb_search(im: _Image, params: DetectorParams, skip_angles: int = 0) -> _Combs:
    """A second way to find the grid, for boards whose cells pieces break up (large pieces touching
    thin lines, a full board): the grid is four long, evenly spaced parallel lines each way.

    At each of the ``COMB_ANGLES`` likeliest angles (:func:`_comb_angles`), after the ``skip_angles``
    likelier ones, the image is turned so that the board's axes are the view's. Two kinds of evidence
    are summed along each axis, for either polarity: the line mask (pixels beyond the local mean by the
    line threshold, as the cells are found in), and the ridges
    (:func:`_ridges`: pixels standing out of both their sides, where the lines answer and the edges of
    pieces, plate and table do not). The comb of four equally spaced peaks with the same pitch on both
    axes is the grid. Returns the grids found, the likeliest first (interleaving the two kinds of
    evidence, whose scores are not comparable), each as the image -> canonical homography and the pitch
    in image pixels, for the caller to check on the lines (:attr:`_Combs.square`); and, from the same
    profiles, the grids of a board seen in perspective, on demand (:meth:`_Combs.free`).
    """
    img = im.small
    hgt, wid = img.shape
    short = min(hgt, wid)
    side = math.ceil(math.hypot(hgt, wid))  # the turned view holds the whole image
    pitches = np.arange(COMB_MIN_PITCH_FRAC * short, COMB_MAX_PITCH_FRAC * short, COMB_PITCH_STEP)
    win = _odd(params.window_frac * short)
    c = max(params.line_noise_k * im.sigma, params.line_min_frac * im.spread)
    # Every view's profiles first, then the combs of all of them at once (one pass over the pitches).
    found: list[tuple[str, np.ndarray]] = []  # (kind of evidence, image -> turned view)
    profiles: list[tuple[np.ndarray, np.ndarray]] = []
    to_small = np.diag([im.scale, im.scale, 1.0])
    angles = _comb_angles(img, COMB_ANGLES + skip_angles)[skip_angles:]
    for angle in angles:
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
            found += [("mask", to_view), ("ridge", to_view)]
            mask = diff > c
            profiles.append((_comb_profile(mask, 0), _comb_profile(mask, 1)))
            # Ridges across x for the vertical lines, across y for the horizontal ones.
            profiles.append((_comb_profile(_ridges(ridges, 1), 0), _comb_profile(_ridges(ridges, 0), 1)))
    square = [
        (kind, score, _turned_to_canonical(x0, y0, pitch) @ to_view, pitch)
        for (kind, to_view), (score, x0, y0, pitch) in zip(found, _best_combs(profiles, pitches), strict=True)
    ]
    return _Combs(_likeliest(square, im.scale), found, profiles, pitches, angles, im.scale)


def _turned_to_canonical(x0: float, y0: float, pitch: float) -> np.ndarray:
    """canonical = ((x - x0) / pitch, (y - y0) / pitch) in a turned view."""
    return np.array([[1.0 / pitch, 0.0, -x0 / pitch], [0.0, 1.0 / pitch, -y0 / pitch], [0.0, 0.0, 1.0]])


def _likeliest(
    grids: list[tuple[str, float, np.ndarray, float]], scale: float
) -> list[tuple[np.ndarray, float]]:
    """The ``COMB_CANDIDATES`` best-scoring of ``grids`` (kind of evidence, score, image -> canonical
    homography, pitch in the comb's image, which is the prepared image at ``scale``) of each kind,
    interleaved, as (homography, pitch in image pixels)."""
    ranked: dict[str, list[tuple[float, np.ndarray, float]]] = {"mask": [], "ridge": []}
    for kind, score, h, pitch in grids:
        ranked[kind].append((score, h, pitch / scale))
    out: list[tuple[np.ndarray, float]] = []
    for kind in ranked:
        ranked[kind].sort(key=lambda t: -t[0])
    for pair in zip(*(r[:COMB_CANDIDATES] for r in ranked.values()), strict=False):
        out += [(h, pitch) for _score, h, pitch in pair]
    return out


@dataclass(frozen=True)
class _Combs:
    """What :func:`_comb_search` found: the grids of a board seen straight (``square``), and what it
    found them from, for the grids of a board seen in perspective (:meth:`free`)."""

    square: list[tuple[np.ndarray, float]]
    found: list[tuple[str, np.ndarray]]
    profiles: list[tuple[np.ndarray, np.ndarray]]
    pitches: np.ndarray
    angles: list[float]
    scale: float

    def free(self) -> list[tuple[np.ndarray, float]]:
        """The grids of a board seen in perspective (a camera that does not look straight down): its two
        sets of lines are not square to each other in the image, nor spaced alike. Each set takes its own
        angle of the likeliest ones and its own pitch (:func:`_free_combs`), and the grid is the affine
        map that puts both sets on whole pitches; the lines correct the rest."""
        return _likeliest(_free_combs(self.found, self.profiles, self.pitches, self.angles), self.scale)


def _free_combs(
    found: list[tuple[str, np.ndarray]],
    profiles: list[tuple[np.ndarray, np.ndarray]],
    pitches: np.ndarray,
    angles: list[float],
) -> list[tuple[str, float, np.ndarray, float]]:
    """The combs of :func:`_comb_search` with each set of lines on its own (:meth:`_Combs.free`): every
    profile's best comb at its own pitch (:func:`_comb_teeth`), then for each kind of evidence and
    polarity every pairing of one angle's vertical lines with one angle's horizontal lines (``angles``,
    as the views in ``found`` and ``profiles`` are laid out, angle by angle) whose angles are within
    ``COMB_FREE_ANGLE`` of each other (modulo 90 degrees) and whose pitches are within
    ``COMB_FREE_PITCH_RATIO``. Returns (kind, score, image -> canonical homography, pitch in the
    comb's pixels: the two pitches' geometric mean) for each pairing."""
    stack = np.array([p for pair in profiles for p in pair], dtype=np.float64)
    best = np.full(len(stack), -math.inf)
    start = np.zeros(len(stack), dtype=np.int64)
    own_pitch = np.zeros(len(stack))
    for pitch in pitches:
        score, first = _comb_teeth(stack, pitch)
        better = score > best
        best = np.where(better, score, best)
        start = np.where(better, first, start)
        own_pitch = np.where(better, pitch, own_pitch)
    views = len(found) // max(len(angles), 1)  # the views of one angle: polarities and kinds
    out: list[tuple[str, float, np.ndarray, float]] = []
    for view in range(views):
        for i, across_x in enumerate(angles):
            for j, across_y in enumerate(angles):
                if abs(_wrap90(across_x - across_y)) > COMB_FREE_ANGLE:
                    continue
                # Row 2 v of the stack: view v's vertical lines; 2 v + 1: its horizontal lines.
                vx, vy = 2 * (i * views + view), 2 * (j * views + view) + 1
                px, py = float(own_pitch[vx]), float(own_pitch[vy])
                if min(px, py) <= 0.0 or max(px, py) > COMB_FREE_PITCH_RATIO * min(px, py):
                    continue
                # canonical x = (x' - x0) / px in angle i's view, canonical y = (y' - y0) / py in j's.
                to_x, to_y = found[i * views + view][1], found[j * views + view][1]
                h = np.array([to_x[0] / px, to_y[1] / py, (0.0, 0.0, 1.0)])
                h[0, 2] -= start[vx] / px
                h[1, 2] -= start[vy] / py
                out.append((found[i * views + view][0], float(best[vx] + best[vy]), h, math.sqrt(px * py)))
    return out
