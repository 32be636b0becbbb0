"""What lies straight across the board at an angle to its lines (:func:`_lying_across`): a pen, a
pencil, a ruler. Nothing of a game is straight and slanted on the board: the lines run along its two
axes and the pieces are round. A pen lying on the pieces hides no line where it is of the lines' own
tone, and where it lies on a piece the piece's reading may still look clean; its long straight edge
gives it away. Nothing but the edge of a lamp's sharp shadow, which hides nothing: the lines go on
across it (:func:`_a_shadows_edge`), and where the board is read again with that shadow evened out
(:func:`.shade.shadow_gain`) its edges cover no square."""

from __future__ import annotations

import math
from typing import Final

import cv2
import numpy as np

from .geometry import GRID_SQUARES
from .model import MAD_TO_SIGMA
from .stats import median

#: an edge counts from this long (pitches): longer than any piece's straight stretch, shorter than a pen
#: across one square.
ACROSS_MIN_LENGTH: Final = 1.0
#: ...slanted at least this much (degrees) from both of the board's axes (its lines, a pose a degree or
#: two off, a perspective the pose does not hold). (12 let a pen at 10 degrees to the lines pass; at 8,
#: occluded frames read clear 22 -> 20 of 240 on the eight tuning runs, and no clear frame is flagged.)
ACROSS_MIN_ANGLE_DEG: Final = 8.0
#: the edges are found where the grey steps by this share of the grid's contrast (and by this many
#: times the image's noise): the lines' and pieces' own edges are as strong, texture and grain weaker.
ACROSS_EDGE_SHARE: Final = 0.5
ACROSS_EDGE_NOISE_K: Final = 4.0
#: ...gaps up to this long (pitches) are bridged (a pen's edge over a piece of its own tone).
ACROSS_MAX_GAP: Final = 0.1
#: an edge is an object's when the grey on its two sides, this far from it (pitches, at least
#: ACROSS_SIDE_MIN_PX), differs by at least ACROSS_STEP_SHARE of the grid's contrast, the same way, along
#: ACROSS_CONSISTENT of its length: a row of crossings or the grain of a wood plate that happen to line
#: up step either way, or not at all.
ACROSS_SIDE: Final = 0.05
ACROSS_SIDE_MIN_PX: Final = 2.0
ACROSS_STEP_SHARE: Final = 0.25
ACROSS_CONSISTENT: Final = 0.8
#: ...or the grey steps one way along ACROSS_ONE_WAY of it and the other way along at most
#: ACROSS_OTHER_WAY, while one side stays within ACROSS_UNIFORM_SHARE of the grid's contrast of its own
#: median (median absolute deviation): a pen's body, of one tone all along, lying over pieces of its
#: own tone in places (where it steps not at all) and over the plate or other pieces elsewhere.
ACROSS_ONE_WAY: Final = 0.4
ACROSS_OTHER_WAY: Final = 0.05
ACROSS_UNIFORM_SHARE: Final = 0.05
#: ...and by this many times the plate's texture (the view's fine detail, see _texture): the grain of
#: a wood plate runs straight and slanted too, a few times its own texture off the plate.
ACROSS_TEXTURE_K: Final = 4.0
#: the texture is the view's detail finer than a Gaussian this wide (pixels).
ACROSS_TEXTURE_SIGMA_PX: Final = 2.0
#: where a slanted edge crosses a grid line, the line is sampled this far along it on each side of the
#: edge (pitches), clear of the edge's own blur and of the grid's crossings.
SHADOW_LINE_ALONG: Final = (0.06, 0.09, 0.12, 0.15)
#: half the band across a line its extreme is taken in (pitches), and how far beside it the plate is.
SHADOW_LINE_BAND: Final = 0.06
SHADOW_LINE_PLATE: Final = 0.1
#: the line's contrast relative to the plate beside it, on its two sides of the edge, within this share
#: of the larger: a shadow darkens the line and the plate by one factor; what lies across hides it.
SHADOW_RATIO_SHARE: Final = 0.35
#: ...and the line stands out by this share of the plate at least on both sides (it is seen there).
SHADOW_LINE_MIN: Final = 0.08
#: a shadow takes at least this share of the light on its side of the edge, this far from it (pitches).
SHADOW_STEP_MIN: Final = 0.1
SHADOW_SIDE: Final = 0.12
#: a crossing this near a grid crossing (pitches) is not judged (the other line is in its samples).
SHADOW_CROSSING_CLEAR: Final = 0.2
#: an edge runs along a shadow band's found edge (:func:`.shade.shadow_gain`) when the band's light
#: differs by this much (a share of the lit board's) this far either side of it (pitches), along this
#: share of its length: the band's own edge, or what dividing it out left of it.
BAND_EDGE_STEP: Final = 0.05
BAND_EDGE_SIDE: Final = 0.1
BAND_EDGE_SHARE: Final = 0.6


def _lying_across(
    view: np.ndarray,
    px: int,
    margin: int,
    contrast: float,
    noise: float,
    dark_lines: bool,
    shadowed: bool = False,
    band_light: np.ndarray | None = None,
    evened: bool = False,
) -> np.ndarray:
    """Which squares (9 booleans, row by row) a straight slanted edge crosses, in the canonical view
    ``view`` (grey, ``px`` pixels a square, the grid's corner at ``margin``; ``contrast``, the grid's
    lines against the plate, and ``noise``, the image's, both in grey levels; ``dark_lines``, the
    grid's polarity). ``shadowed``: the board lies partly in a shadow (read again with it evened out),
    whose own edges are not an object's (:func:`_a_shadows_edge`); ``band_light``: the light a shadow
    band found across the board leaves at each pixel of the view, whose edges are not an object's
    either (:func:`_along_band_edge`). ``evened``: the view is read with that band divided out, so a
    shadow's edge still found in it, not along the band's, is light the band did not even out: the
    squares it crosses are not read there either."""
    crossed = np.zeros(GRID_SQUARES * GRID_SQUARES, bool)
    for x1, y1, x2, y2 in _slanted_edges(view, px, margin, contrast, noise):
        if band_light is not None and _along_band_edge(band_light, (x1, y1, x2, y2), px):
            continue
        if shadowed and not evened and _a_shadows_edge(view, (x1, y1, x2, y2), px, margin, dark_lines):
            continue
        length = math.hypot(x2 - x1, y2 - y1)
        t = np.linspace(0.0, 1.0, max(2, int(length)))
        col = np.floor((x1 + t * (x2 - x1) - margin) / px).astype(np.int64)
        row = np.floor((y1 + t * (y2 - y1) - margin) / px).astype(np.int64)
        on = (col >= 0) & (col < GRID_SQUARES) & (row >= 0) & (row < GRID_SQUARES)
        crossed[row[on] * GRID_SQUARES + col[on]] = True
    return crossed


def _slanted_edges(
    view: np.ndarray, px: int, margin: int, contrast: float, noise: float
) -> list[tuple[float, float, float, float]]:
    """The straight edges within the grid's lines (see :func:`_lying_across`), slanted from both axes,
    each an object's (:func:`_steps_along`), as (x1, y1, x2, y2) in the view's pixels."""
    lo, hi = margin + 2, margin + GRID_SQUARES * px - 2
    grey = np.clip(view[lo:hi, lo:hi], 0, 255).astype(np.uint8)
    high = max(ACROSS_EDGE_SHARE * contrast, ACROSS_EDGE_NOISE_K * noise, 1.0)
    dx = cv2.Sobel(grey, cv2.CV_16S, 1, 0, ksize=3)
    dy = cv2.Sobel(grey, cv2.CV_16S, 0, 1, ksize=3)
    edges = cv2.Canny(dx, dy, high / 2, high, L2gradient=True)
    # Only the edge pixels slanted from both axes vote: the lines' own edges (most of them) do not, which
    # leaves the search a fraction of its work. (Slanted by at least the angle: the smaller of the two
    # gradient components is at least its tangent times the larger.)
    ax, ay = np.abs(dx.astype(np.float32)), np.abs(dy.astype(np.float32))
    edges[np.minimum(ax, ay) < math.tan(math.radians(ACROSS_MIN_ANGLE_DEG)) * np.maximum(ax, ay)] = 0
    found = cv2.HoughLinesP(
        edges,
        1,
        math.pi / 180,
        threshold=max(8, px // 2),
        minLineLength=ACROSS_MIN_LENGTH * px,
        maxLineGap=ACROSS_MAX_GAP * px,
    )
    out: list[tuple[float, float, float, float]] = []
    if found is None:
        return out
    step = 0.0
    for x1, y1, x2, y2 in (found.reshape(-1, 4).astype(np.float64) + lo).tolist():
        angle = math.degrees(math.atan2(y2 - y1, x2 - x1)) % 90.0
        if min(angle, 90.0 - angle) < ACROSS_MIN_ANGLE_DEG:
            continue
        if not step:  # (only when there is an edge to judge: the texture takes a blur of the view)
            step = max(ACROSS_STEP_SHARE * contrast, ACROSS_TEXTURE_K * _texture(view[lo:hi, lo:hi]), 1e-3)
        if _steps_along(view, (x1, y1, x2, y2), max(ACROSS_SIDE * px, ACROSS_SIDE_MIN_PX), step, contrast):
            out.append((x1, y1, x2, y2))
    return out


def _texture(view: np.ndarray) -> float:
    """The grey levels (one sigma, robust) of ``view``'s detail finer than ``ACROSS_TEXTURE_SIGMA_PX``."""
    fine = view - cv2.GaussianBlur(view, (0, 0), ACROSS_TEXTURE_SIGMA_PX)
    return MAD_TO_SIGMA * median(np.abs(fine))


def _the_two_sides(
    view: np.ndarray, seg: tuple[float, float, float, float], side: float
) -> tuple[np.ndarray, np.ndarray]:
    """The view's grey ``side`` pixels either side of the edge ``seg`` (x1, y1, x2, y2), a pixel apart
    along it: (one side's, the other's)."""
    x1, y1, x2, y2 = seg
    length = math.hypot(x2 - x1, y2 - y1)
    nx, ny = -(y2 - y1) / length, (x2 - x1) / length
    t = np.linspace(0.0, 1.0, max(2, int(length)))
    x, y = x1 + t * (x2 - x1), y1 + t * (y2 - y1)
    h, w = view.shape

    def at(dx: float, dy: float) -> np.ndarray:
        xi = np.clip(np.rint(x + dx).astype(np.int64), 0, w - 1)
        yi = np.clip(np.rint(y + dy).astype(np.int64), 0, h - 1)
        return view[yi, xi]

    return at(side * nx, side * ny), at(-side * nx, -side * ny)


def _steps_along(
    view: np.ndarray, seg: tuple[float, float, float, float], side: float, big: float, contrast: float
) -> bool:
    """Whether the grey steps across the edge ``seg`` the same way along ``ACROSS_CONSISTENT`` of it, by
    ``big`` grey levels or more (the two sides sampled ``side`` pixels from it); or one way along
    ``ACROSS_ONE_WAY`` of it and the other way along no more than ``ACROSS_OTHER_WAY``, with one side of
    one tone all along (within ``ACROSS_UNIFORM_SHARE`` of the grid's ``contrast``)."""
    left, right = _the_two_sides(view, seg, side)
    step = left - right
    up, down = np.count_nonzero(step >= big) / step.size, np.count_nonzero(step <= -big) / step.size
    if max(up, down) >= ACROSS_CONSISTENT:
        return True
    if max(up, down) < ACROSS_ONE_WAY or min(up, down) > ACROSS_OTHER_WAY:
        return False
    spread = min(median(np.abs(left - median(left))), median(np.abs(right - median(right))))
    return spread <= ACROSS_UNIFORM_SHARE * contrast


def _along_band_edge(light: np.ndarray, seg: tuple[float, float, float, float], px: int) -> bool:
    """Whether the edge ``seg`` (x1, y1, x2, y2, view pixels) runs along an edge of the shadow band whose
    light ``light`` leaves at each pixel: the light differs by ``BAND_EDGE_STEP`` ``BAND_EDGE_SIDE``
    either side of it along ``BAND_EDGE_SHARE`` of it. (A pen lying across the band's edge crosses it
    at one point.)"""
    if math.hypot(seg[2] - seg[0], seg[3] - seg[1]) < 1.0:
        return False
    one, other = _the_two_sides(light, seg, BAND_EDGE_SIDE * px)
    return bool(np.mean(np.abs(one - other) >= BAND_EDGE_STEP) >= BAND_EDGE_SHARE)


def _a_shadows_edge(
    view: np.ndarray, seg: tuple[float, float, float, float], px: int, margin: int, dark_lines: bool
) -> bool:
    """Whether the edge ``seg`` (x1, y1, x2, y2, view pixels) is a shadow's, not an object's: it crosses
    at least one grid line away from the grid's crossings, and every line it crosses goes on across it,
    standing out from the plate beside it by the same share on both sides (a shadow darkens line and
    plate by one factor; a pen, a sheet or a hand hides the line), and the light differs on its two
    sides all along (:func:`_darker_side_all_along`). An edge through the grid's crossings alone is
    judged an object's."""
    x1, y1, x2, y2 = seg
    h, w = view.shape
    sign = -1.0 if dark_lines else 1.0
    band = max(1, round(SHADOW_LINE_BAND * px))
    off = max(band + 2, round(SHADOW_LINE_PLATE * px))
    judged = 0
    for vertical in (True, False):
        a1, a2 = (x1, x2) if vertical else (y1, y2)  # across the lines of this family
        b1, b2 = (y1, y2) if vertical else (x1, x2)  # along them
        if a1 == a2:
            continue
        for k in range(GRID_SQUARES + 1):
            line = margin + k * px
            t = (line - a1) / (a2 - a1)
            if not 0.0 < t < 1.0:
                continue
            along = b1 + t * (b2 - b1)
            pos = (along - margin) / px
            if abs(pos - round(pos)) < SHADOW_CROSSING_CLEAR or not 0.0 < pos < GRID_SQUARES:
                continue
            # (the line's pixels across it, and the plate's on either side, within the view)
            lo, hi = max(0, line - off), min((w if vertical else h) - 1, line + off)
            ratios = []
            for direction in (-1.0, 1.0):
                samples = []
                for d in SHADOW_LINE_ALONG:
                    b = round(along + direction * d * px)
                    if not 0 <= b < (h if vertical else w):
                        continue
                    cut = view[b, :] if vertical else view[:, b]
                    core = cut[max(0, line - band) : line + band + 1]
                    plate = 0.5 * (float(cut[lo]) + float(cut[hi]))
                    extreme = float(core.max()) if sign > 0 else float(core.min())
                    samples.append(sign * (extreme - plate) / max(plate, 1.0))
                if not samples:
                    return False
                ratios.extend(samples)
            low, high = min(ratios), max(ratios)
            if low < SHADOW_LINE_MIN or high - low > SHADOW_RATIO_SHARE * high:
                return False
            judged += 1
    return judged > 0 and _darker_side_all_along(view, seg, px)


def _darker_side_all_along(view: np.ndarray, seg: tuple[float, float, float, float], px: int) -> bool:
    """Whether the two sides of the edge ``seg``, ``SHADOW_SIDE`` pitches from it (beyond a thin pen),
    differ by ``SHADOW_STEP_MIN`` of the light or more along ``ACROSS_CONSISTENT`` of its length: a
    shadow darkens plate, lines and pieces alike on its side, while beyond a thin pen's far edge the
    plate is the plate again."""
    one, other = (np.maximum(v.astype(np.float64), 1.0) for v in _the_two_sides(view, seg, SHADOW_SIDE * px))
    # (Either side: where a side's sample lies on a grid line, that side is the darker there.)
    darker = np.minimum(one, other) / np.maximum(one, other) <= 1.0 - SHADOW_STEP_MIN
    return np.count_nonzero(darker) >= ACROSS_CONSISTENT * darker.size
