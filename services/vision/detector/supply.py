"""Step 6 of the package's overview: supply pieces, the piece-sized, round, grey, clearly light or dark
blobs off the grid (:func:`_supply`)."""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Final

import cv2
import numpy as np

from .geometry import _apply_h, _odd
from .model import DetectorParams, SupplyReading

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
    *,
    h_inv: np.ndarray | None = None,
) -> list[SupplyReading]:
    """Round piece-sized blobs clearly lighter or darker than their surroundings, off the grid.

    ``small`` is the blurred grey image reduced by ``scale`` (pixels of ``small`` per image pixel).
    The grid (with a margin) is cut out and the mask eroded a little, so that pieces lying close
    together or beside the board (joined by shadows or blur) come apart. A blob's core must differ
    clearly (``SUPPLY_CORE_K`` thresholds on average), which a soft shadow does not; it must be round
    (``supply_min_roundness`` of its enclosing circle) without filling its rectangle (the squares of a
    calibration marker do), and grey rather than coloured (pieces are black or white). ``h_inv`` is
    ``np.linalg.inv(h)`` when the caller has it already.
    """
    p_small = pitch * scale
    thresh = max(params.piece_noise_k * sigma, 2.0 * params.piece_min_frac * spread)
    erode = max(1, round(SUPPLY_ERODE * p_small))
    kernel = _erode_kernel(erode)
    dmin = params.supply_min_diameter * p_small - 2 * erode
    dmax = params.supply_max_diameter * p_small - 2 * erode
    found: list[SupplyReading] = []
    mg = params.supply_grid_margin
    grid = np.array([[-mg, -mg], [3 + mg, -mg], [3 + mg, 3 + mg], [-mg, 3 + mg]])
    to_image = np.linalg.inv(h) if h_inv is None else h_inv
    grid_small = np.round(_apply_h(to_image, grid) * scale).astype(np.int32)
    # The background: the local mean over two pitches (the table around a piece, whatever its shade).
    win = _odd(2.0 * p_small)
    mean = cv2.blur(small, (win, win))
    for colour, diff in (("white", cv2.subtract(small, mean)), ("black", cv2.subtract(mean, small))):
        _, mask = cv2.threshold(diff, thresh, 255, cv2.THRESH_BINARY)
        # The grid is not supply: cut it out, so that a piece beside it is not joined to its lines.
        cv2.fillConvexPoly(mask, grid_small, 0)
        mask = cv2.erode(mask, kernel)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        for k, box in _disc_sized(contours, dmin, dmax):
            for cx, cy, radius in _piece_discs(contours[k], box, dmax, params.supply_min_roundness):
                # (In plain floats: the same float64 steps as on the centre as an array.)
                at = (cx / scale, cy / scale)  # in image pixels
                u, v = _apply_h(h, np.array([at]))[0]
                if -mg < u < 3 + mg and -mg < v < 3 + mg:
                    continue
                x0, y0 = int(max(0, cx - radius)), int(max(0, cy - radius))
                core = diff[y0 : int(cy + radius) + 1, x0 : int(cx + radius) + 1]
                disc = mask[y0 : int(cy + radius) + 1, x0 : int(cx + radius) + 1]
                if core.size == 0 or cv2.mean(core, disc)[0] < SUPPLY_CORE_K * thresh:
                    continue  # a soft shadow or smudge, not a piece's sharp face
                if bgr is not None and not _neutral(bgr, at, 0.6 * radius / scale, colour):
                    continue  # a coloured thing on the table: pieces are black or white
                found.append(SupplyReading(colour, at, (radius + erode) / scale))  # type: ignore[arg-type]
    return found


@lru_cache(maxsize=16)
def _erode_kernel(erode: int) -> np.ndarray:
    """The supply mask's erosion kernel, a disc ``erode`` pixels in radius: the same for every frame at
    one size, so made once (read-only: every caller shares it)."""
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * erode + 1, 2 * erode + 1))
    kernel.flags.writeable = False
    return kernel


def _disc_sized(
    contours: tuple[np.ndarray, ...], dmin: float, dmax: float
) -> list[tuple[int, tuple[int, int]]]:
    """The ``contours`` of three points or more whose bounding box is at least ``dmin`` long and
    ``DISC_MIN_ASPECT`` of that wide, and whose points span no more than ``dmax`` (the circle enclosing
    them is at least as wide as they span; the margin covers its float32 radius): the only ones
    :func:`_piece_discs` can take, as (index, (box width, box height)). Most are specks of noise,
    streaks or large patches. (A loop over ``cv2.boundingRect`` sorts the few dozen a mask has out
    faster than gathering all their points into one array.)"""
    out = []
    for k, cnt in enumerate(contours):
        if len(cnt) < 3:
            continue
        _x, _y, bw, bh = cv2.boundingRect(cnt)
        longer, shorter = (bw, bh) if bw >= bh else (bh, bw)
        # (The box is the points' extent plus one: they span one less.)
        if longer >= dmin and shorter >= DISC_MIN_ASPECT * longer and longer - 1 <= 1.01 * dmax:
            out.append((k, (bw, bh)))
    return out


def _neutral(bgr: np.ndarray, centre: tuple[float, float], radius: float, colour: str) -> bool:
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
    cnt: np.ndarray, box: tuple[int, int], dmax: float, roundness: float
) -> list[tuple[float, float, float]]:
    """The piece one blob is: one round disc of a piece's size (centre x, y and radius in the blob's
    pixels), or nothing. ``box`` is the blob's bounding box (width, height), which
    :func:`_disc_sized` found at least a piece's size long."""
    bw, bh = box
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
            return [(cx, cy, float(radius))]
        return []
    return []
