"""Step 2's second way to the grid, for boards whose cells pieces break up (large pieces touching thin
lines, a full board): the comb search (:func:`_comb_search`) looks for four long, evenly spaced
parallel lines each way."""

from __future__ import annotations

import math
from typing import Final

import cv2
import numpy as np

from .geometry import _odd, _wrap90
from .image import _Image
from .model import DetectorParams

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
#: the comb's likeliest grids checked on the lines, at most this many of each kind of evidence (the
#: checking stops at a grid whose lines are seen search.COMB_SURE_SEEN well). Not more: on a full board
#: the plate's strips between lines and pieces make a second, offset grid that passes the check (4 a
#: kind: 84 of 725 passing grids on rendered full boards were a quarter pitch off; 1 a kind: 0 of 200).
COMB_CANDIDATES: Final = 1


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
