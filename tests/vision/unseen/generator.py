"""An independent generator of 640x480 camera frames of a 3x3 board, with ground truth.

Written from a requirements text alone (see README.md, "Independence"): it shares no code, colours or
constants with the project's other renderers, so the detector can be judged on frames nobody tuned on.

Contract
--------
``make_set(n, seed)`` returns ``n`` :class:`Sample` objects. Sample ``i`` depends only on ``(seed, i)``
(its random stream is ``SeedSequence([seed, i])``), so a longer set starts with the shorter one and the
same ``(n, seed)`` always gives the same pixels.

Geometry: the board lives in its own plane, in units of one pitch, origin at the board centre, x to the
right and y down (row-major squares, row 0 on top). A homography built from a pinhole camera (focal
length, distance, tilt up to ~12 degrees) maps that plane into the image. Everything lying on the table
(plate, lines, pieces, coins, paper, tape, supply trays) is drawn through that homography; things above
the table (hands, pens) are drawn in image space.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

# --------------------------------------------------------------------------------------------------
# Public interface

FRAME_W = 640
FRAME_H = 480
BOARD_CHARS = "XO."
PITCH_MIN = 35.0
PITCH_MAX = 90.0


@dataclass(frozen=True)
class Sample:
    """One frame and its truth.

    ``board`` is row-major in the board's own frame (with ``angle_deg`` 0, chars 0..2 are the top row).
    ``angle_deg`` in (-45, 45] is the rotation of the board's x axis, counter-clockwise as seen.
    ``pitch_px`` is the mean distance from the centre square's centre to its four neighbours' centres.
    ``occluded`` is True when a hand, pen or coin lies over the board; ``board`` never includes it.
    """

    image: np.ndarray
    board: str
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    occluded: bool
    tags: frozenset[str]


def make_set(n: int, seed: int) -> list[Sample]:
    """Return ``n`` frames; sample ``i`` depends only on ``(seed, i)`` (prefix property, deterministic)."""
    return [render_sample(seed, i) for i in range(n)]


def render_sample(seed: int, index: int) -> Sample:
    """Render sample ``index`` of the set ``seed`` (the same as ``make_set(n, seed)[index]``)."""
    scene = sample_scene(_rng_for(seed, index))
    image, tags = draw_scene(scene)
    return _to_sample(scene, image, tags)


# --------------------------------------------------------------------------------------------------
# Constants (ranges of the requirements and plausible camera/table values)

JPEG_Q_MIN, JPEG_Q_MAX = 50, 95
JPEG_LOW_BELOW = 65
TILT_MAX_DEG = 12.0
TILT_TAG_ABOVE_DEG = 6.0
FOCAL_RANGE_PX = (450.0, 750.0)
PITCH_SMALL_BELOW = 48.0
PITCH_LARGE_ABOVE = 72.0
FRAME_MARGIN_PX = 4.0
PLATE_MARGIN_RANGE = (0.10, 0.60)  # plate beyond the outer line, in pitches
PLATE_MARGIN_MIN = 0.06
LINE_WIDTH_RANGE = (0.02, 0.12)  # in pitches
LINE_THIN_BELOW = 0.04
LINE_THICK_ABOVE = 0.09
PIECE_RADIUS_RANGE = (0.20, 0.45)  # in pitches
PIECE_RADIUS_JITTER = 0.015
LARGE_PIECE_ABOVE = 0.38
SMALL_PIECE_BELOW = 0.26
PIECE_OFFSET_MAX = 0.10  # off-centre, in pitches
PIECE_OFFSET_MIN = 0.02
PIECE_EDGE_REACH = 0.52  # a piece's edge may reach this far from its square's centre (touching lines)
BLACK_GREY_RANGE = (15, 55)
WHITE_GREY_RANGE = (205, 245)
WHITE_NEAR_PLATE = 20  # grey levels
FORCE_WHITE_ON_WHITE_P = 0.15
OCCLUDED_P = 0.10
EMPTY_BOARD_P = 0.06
FULL_BOARD_P = 0.06
LEGAL_BOARD_P = 0.5
GLOSSY_P = 0.45
GRADIENT_MAX_RATIO = 2.0
GRADIENT_TAG_ABOVE = 1.3
GRADIENT_SATURATION = 0.75  # board widths over which the gradient flattens off
VIGNETTE_MAX = 0.45
VIGNETTE_TAG_ABOVE = 0.2
MOTION_BLUR_MAX_PX = 2.0
MOTION_BLUR_TAG_ABOVE = 0.75
DEFOCUS_SIGMA_RANGE = (0.5, 1.6)
NOISE_SIGMA_RANGE = (0.8, 5.0)
NOISE_TAG_ABOVE = 3.5
CIRCLE_POINTS = 40
HAND_THUMB_P, HAND_THUMB_ANGLE, HAND_CREASE = 0.6, math.radians(45), 0.78  # thumb share, its turn, crease
DOME_OFFSET, DOME_RADIUS, DOME_BLUR, DOME_LIGHT = 0.35, 0.55, 0.25, 9.0  # piece top shading (of r)
WOOD_WARP = 0.45  # how far (in ring periods) the growth rings wander
FIXED_SHIFT = 4  # cv2 sub-pixel drawing: coordinates * 16
FIXED_SCALE = 1 << FIXED_SHIFT

PLATE_KINDS = ("white", "grey", "wood", "dark", "blue", "green", "red", "yellow", "pastel")
PLATE_KIND_WEIGHTS = (0.2, 0.1, 0.14, 0.12, 0.08, 0.08, 0.07, 0.07, 0.14)
TABLE_KINDS = ("wood", "cloth", "desk", "paper", "dark")
OCCLUDERS = ("hand", "pen", "coin")

SKIN_BGR = ((150, 180, 228), (120, 155, 205), (85, 118, 170), (55, 80, 120), (40, 58, 90))
COIN_BGR = {"steel": (172, 170, 165), "brass": (70, 165, 205), "copper": (60, 105, 185)}
PEN_BGR = ((160, 70, 20), (25, 25, 28), (40, 40, 190), (40, 200, 235), (70, 150, 60), (220, 220, 220))
TAPE_BGR = ((200, 140, 40), (60, 200, 235), (60, 60, 200), (90, 170, 70), (170, 215, 230))


# --------------------------------------------------------------------------------------------------
# Scene description


@dataclass
class Piece:
    """A disc on the table plane: centre ``(x, y)`` in pitches, radius in pitches, grey level."""

    x: float
    y: float
    radius: float
    grey: float
    black: bool


@dataclass
class Scene:
    """Every random choice of one frame; :func:`draw_scene` turns it into pixels deterministically."""

    rng_state: dict[str, Any]  # the random stream's state after sampling: it drives the drawing
    board_plane: str  # the board in the plane's own frame (before the angle is folded into (-45, 45])
    homography: np.ndarray  # board plane (pitches) -> image pixels
    plate_half: float
    plate_bgr: tuple[float, float, float]
    plate_kind: str
    line_bgr: tuple[float, float, float]
    line_width: float
    pieces: list[Piece]
    glossy: bool
    light_dir: tuple[float, float]  # unit vector in the image pointing towards the light
    table_kind: str
    occluder: str | None
    coin_cell: int | None
    tags: set[str] = field(default_factory=set)
    params: dict[str, float] = field(default_factory=dict)


def _rng_for(seed: int, index: int) -> np.random.Generator:
    """The random stream of sample ``index`` of set ``seed``: independent of the set's length."""
    return np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(index)]))


# --------------------------------------------------------------------------------------------------
# Geometry


def camera_homography(
    angle_deg: float, tilt_deg: float, tilt_axis_deg: float, focal: float, distance: float
) -> np.ndarray:
    """Homography from the board plane (pitches, y down) to an image whose board centre is (0, 0).

    The board is rotated by ``angle_deg`` counter-clockwise as seen, then the plane is tilted by
    ``tilt_deg`` about an in-plane axis at ``tilt_axis_deg``, at ``distance`` pitches from a pinhole of
    focal length ``focal`` px. Without tilt the pitch is ``focal / distance`` px.
    """
    a = math.radians(angle_deg)
    in_plane = np.array([[math.cos(a), math.sin(a), 0.0], [-math.sin(a), math.cos(a), 0.0], [0, 0, 1.0]])
    axis = np.array([math.cos(math.radians(tilt_axis_deg)), math.sin(math.radians(tilt_axis_deg)), 0.0])
    rot, _ = cv2.Rodrigues(axis * math.radians(tilt_deg))
    extrinsic = np.column_stack([rot[:, 0], rot[:, 1], np.array([0.0, 0.0, distance])])
    intrinsic = np.array([[focal, 0.0, 0.0], [0.0, focal, 0.0], [0.0, 0.0, 1.0]])
    return intrinsic @ extrinsic @ in_plane


def project(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Map (N, 2) board-plane points through homography ``h`` to (N, 2) image points."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    hom = np.column_stack([pts, np.ones(len(pts))]) @ h.T
    return hom[:, :2] / hom[:, 2:3]


def _translate(h: np.ndarray, dx: float, dy: float) -> np.ndarray:
    return np.array([[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]]) @ h


def measured_pitch_and_angle(h: np.ndarray) -> tuple[float, float]:
    """The pitch (mean distance centre -> 4 neighbours, px) and the x axis's angle (deg, CCW seen)."""
    p = project(h, np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=float))
    pitch = float(np.mean(np.linalg.norm(p[1:] - p[0], axis=1)))
    ux, uy = p[1] - p[2]
    return pitch, math.degrees(math.atan2(-uy, ux))


def fold_angle(angle_deg: float) -> tuple[float, int]:
    """Fold an angle into (-45, 45]: return it and the number k of quarter turns taken off (a - 90k)."""
    k = round(angle_deg / 90.0)
    folded = angle_deg - 90.0 * k
    if folded <= -45.0:
        folded += 90.0
        k -= 1
    elif folded > 45.0:
        folded -= 90.0
        k += 1
    return folded, k


def board_in_folded_frame(board_plane: str, quarter_turns: int) -> str:
    """Re-read a plane-frame board in a frame whose axes are turned by ``-90 * quarter_turns`` (as seen).

    A turn by phi counter-clockwise as seen (y down) maps (x, y) to (x cos phi + y sin phi,
    -x sin phi + y cos phi); the folded frame's axes are the plane's axes turned by ``-90 k``.
    """
    phi = math.radians(-90.0 * quarter_turns)
    c, s = round(math.cos(phi)), round(math.sin(phi))
    e1 = (c, -s)
    e2 = (s, c)
    out = []
    for r in range(3):
        for col in range(3):
            px = (col - 1) * e1[0] + (r - 1) * e2[0]
            py = (col - 1) * e1[1] + (r - 1) * e2[1]
            out.append(board_plane[(py + 1) * 3 + (px + 1)])
    return "".join(out)


def _circle(cx: float, cy: float, r: float, n: int = CIRCLE_POINTS) -> np.ndarray:
    t = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    return np.column_stack([cx + r * np.cos(t), cy + r * np.sin(t)])


def _rect(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=float)


def _oriented_rect(cx: float, cy: float, length: float, width: float, ang: float) -> np.ndarray:
    u = np.array([math.cos(ang), math.sin(ang)])
    v = np.array([-u[1], u[0]])
    c = np.array([cx, cy])
    return np.array(
        [
            c + u * length / 2 + v * width / 2,
            c - u * length / 2 + v * width / 2,
            c - u * length / 2 - v * width / 2,
            c + u * length / 2 - v * width / 2,
        ]
    )


def _capsule(p0: np.ndarray, p1: np.ndarray, width: float) -> np.ndarray:
    """A stadium from ``p0`` to ``p1`` (image px) of the given width, as a polygon."""
    d = p1 - p0
    ang = math.atan2(d[1], d[0])
    r = width / 2
    t0 = np.linspace(ang + math.pi / 2, ang + 3 * math.pi / 2, 10)
    t1 = np.linspace(ang - math.pi / 2, ang + math.pi / 2, 10)
    a = np.column_stack([p0[0] + r * np.cos(t0), p0[1] + r * np.sin(t0)])
    b = np.column_stack([p1[0] + r * np.cos(t1), p1[1] + r * np.sin(t1)])
    return np.vstack([a, b])


# --------------------------------------------------------------------------------------------------
# Drawing primitives (float32 BGR canvas, anti-aliased masks limited to the shape's bounding box)


def _mask_roi(
    shape: tuple[int, int], polys: list[np.ndarray], blur: float
) -> tuple[tuple[slice, slice], np.ndarray] | None:
    """An anti-aliased coverage mask (0..1) of ``polys`` in their padded bounding box (None: off-frame)."""
    allp = np.vstack(polys)
    pad = 2 + math.ceil(3 * blur)
    x0 = max(math.floor(allp[:, 0].min()) - pad, 0)
    y0 = max(math.floor(allp[:, 1].min()) - pad, 0)
    x1 = min(math.ceil(allp[:, 0].max()) + pad + 1, shape[1])
    y1 = min(math.ceil(allp[:, 1].max()) + pad + 1, shape[0])
    if x1 <= x0 or y1 <= y0:
        return None
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    for p in polys:  # one call each: a single fillPoly of overlapping polygons leaves their overlap empty
        fixed = np.round((p - [x0, y0]) * FIXED_SCALE).astype(np.int32)
        cv2.fillPoly(mask, [fixed], 255, cv2.LINE_AA, FIXED_SHIFT)
    m = mask.astype(np.float32) * (1.0 / 255.0)
    if blur > 0:
        m = cv2.GaussianBlur(m, (0, 0), blur)
    return (slice(y0, y1), slice(x0, x1)), m


def paint(
    img: np.ndarray,
    polys: list[np.ndarray],
    colour: tuple[float, float, float] | np.ndarray,
    alpha: float = 1.0,
    blur: float = 0.0,
) -> None:
    """Cover ``polys`` with ``colour`` (a BGR triple or a full-frame (H, W, 3) texture) at ``alpha``."""
    got = _mask_roi(img.shape[:2], polys, blur)
    if got is None:
        return
    roi, m = got
    m = (m * alpha)[:, :, None]
    col = colour[roi] if isinstance(colour, np.ndarray) and colour.ndim == 3 else np.float32(colour)
    img[roi] = img[roi] * (1.0 - m) + col * m


def shade(img: np.ndarray, polys: list[np.ndarray], factor: float, blur: float = 0.0) -> None:
    """Multiply the pixels under ``polys`` by ``factor`` (a shadow when < 1), with soft edges."""
    got = _mask_roi(img.shape[:2], polys, blur)
    if got is None:
        return
    roi, m = got
    img[roi] *= (1.0 - (1.0 - factor) * m)[:, :, None]


def add_light(img: np.ndarray, polys: list[np.ndarray], amount: float, blur: float) -> None:
    """Add ``amount`` grey levels under ``polys`` (a specular highlight), with soft edges."""
    got = _mask_roi(img.shape[:2], polys, blur)
    if got is None:
        return
    roi, m = got
    img[roi] += (m * amount)[:, :, None]


# --------------------------------------------------------------------------------------------------
# Textures


def _smooth_noise(rng: np.random.Generator, cells: int, h: int = FRAME_H, w: int = FRAME_W) -> np.ndarray:
    """Low-frequency noise (about ``cells`` blobs across the width), zero mean, unit-ish amplitude."""
    cw = max(cells, 2)
    ch = max(round(cells * h / w), 2)
    small = rng.standard_normal((ch, cw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _coords() -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.mgrid[0:FRAME_H, 0:FRAME_W].astype(np.float32)
    return xs, ys


_XS, _YS = _coords()


def wood_texture(rng: np.random.Generator, base: np.ndarray, grain_deg: float, period: float) -> np.ndarray:
    """Wood: growth rings of ``period`` px across the grain, warped by noise, with fine streaks."""
    a = math.radians(grain_deg)
    v = -_XS * math.sin(a) + _YS * math.cos(a)
    warp = _smooth_noise(rng, 3) * WOOD_WARP
    rings = np.sin((v / period + warp) * (2 * math.pi))
    rings = np.sign(rings) * np.abs(rings) ** 0.5  # late wood: sharper, darker bands
    streak = np.sin((v / (period / 6.5) + 0.8 * _smooth_noise(rng, 10)) * (2 * math.pi))
    shade_ = 0.9 + 0.06 * rings + 0.03 * streak + 0.04 * _smooth_noise(rng, 3)
    return shade_[:, :, None] * base.astype(np.float32)[None, None, :]


def table_texture(rng: np.random.Generator, kind: str) -> np.ndarray:
    """A full-frame float32 BGR table surface of the given kind."""
    if kind == "wood":
        base = np.array([rng.uniform(55, 105), rng.uniform(100, 150), rng.uniform(140, 200)])
        return wood_texture(rng, base, rng.uniform(0, 180), rng.uniform(14, 45))
    if kind == "cloth":
        hue_bgr = [
            (120, 110, 60),
            (50, 110, 40),
            (140, 90, 50),
            (130, 130, 130),
            (110, 150, 180),
            (60, 60, 130),
        ][int(rng.integers(6))]
        base = np.array(hue_bgr, np.float32) * rng.uniform(0.7, 1.2)
        p = rng.uniform(2.5, 5.0)
        weave = np.sin(_XS * (2 * math.pi / p)) * np.sin(_YS * (2 * math.pi / p))
        tex = 1.0 + 0.05 * weave + 0.05 * _smooth_noise(rng, 5) + 0.025 * _smooth_noise(rng, 120)
        return tex[:, :, None] * base[None, None, :]
    if kind == "desk":
        g = rng.uniform(110, 225)
        tint = np.array([rng.uniform(0.85, 1.0), rng.uniform(0.93, 1.0), 1.0], np.float32)
        tex = 1.0 + 0.03 * _smooth_noise(rng, 4) + 0.015 * _smooth_noise(rng, 200)
        return tex[:, :, None] * (g * tint)[None, None, :]
    if kind == "paper":
        g = rng.uniform(215, 245)
        tex = 1.0 + 0.02 * _smooth_noise(rng, 3) + 0.012 * _smooth_noise(rng, 160)
        return tex[:, :, None] * np.array([g * rng.uniform(0.94, 1.0), g, g], np.float32)[None, None, :]
    g = rng.uniform(25, 70)  # dark table (black desk, dark stained wood)
    tex = 1.0 + 0.06 * _smooth_noise(rng, 5) + 0.04 * _smooth_noise(rng, 150)
    return tex[:, :, None] * np.array([g, g * 1.02, g * rng.uniform(1.0, 1.2)], np.float32)[None, None, :]


def _luma(bgr: tuple[float, float, float] | np.ndarray) -> float:
    b, g, r = (float(c) for c in bgr)
    return 0.114 * b + 0.587 * g + 0.299 * r


def plate_colour(rng: np.random.Generator, kind: str) -> tuple[float, float, float]:
    """The plate's base BGR colour for a kind (the wood kind gets grain on top of this)."""
    if kind == "white":
        g = rng.uniform(212, 250)
        return (g * rng.uniform(0.95, 1.0), g * rng.uniform(0.98, 1.0), g)
    if kind == "grey":
        g = rng.uniform(100, 190)
        return (g, g, g * rng.uniform(0.97, 1.03))
    if kind == "wood":
        return (rng.uniform(70, 120), rng.uniform(130, 175), rng.uniform(175, 225))
    if kind == "dark":
        choices = [(35, 35, 35), (60, 45, 40), (70, 40, 25), (30, 45, 70), (45, 60, 45)]
        base = np.array(choices[int(rng.integers(len(choices)))]) * rng.uniform(0.7, 1.2)
        return tuple(float(c) for c in base)
    if kind in ("blue", "green", "red", "yellow"):
        hue = {"blue": 110, "green": 60, "red": 178, "yellow": 27}[kind] + rng.uniform(-6, 6)
        sat = rng.uniform(150, 240)
        val = rng.uniform(150, 230) if kind != "yellow" else rng.uniform(200, 245)
    else:  # pastel
        hue, sat, val = rng.uniform(0, 180), rng.uniform(35, 90), rng.uniform(205, 245)
    hsv = np.array([[[hue % 180, sat, val]]], np.uint8)
    bgr = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return tuple(float(c) for c in bgr)


# --------------------------------------------------------------------------------------------------
# Sampling a scene


def _sample_board(rng: np.random.Generator) -> tuple[str, set[str]]:
    u = rng.random()
    if u < EMPTY_BOARD_P:
        return "." * 9, {"empty-board"}
    if u < EMPTY_BOARD_P + FULL_BOARD_P:
        cells = rng.choice(["X", "O"], size=9)
        return "".join(cells), {"full-board"}
    if rng.random() < LEGAL_BOARD_P:  # a game in progress: X starts, alternate moves
        moves = int(rng.integers(1, 10))
        order = rng.permutation(9)[:moves]
        cells = ["."] * 9
        for k, c in enumerate(order):
            cells[c] = "X" if k % 2 == 0 else "O"
        tags = {"legal"}
    else:
        p_x, p_o = rng.dirichlet([1.5, 1.5, 1.5])[:2]
        cells = list(rng.choice(["X", "O", "."], size=9, p=[p_x, p_o, 1 - p_x - p_o]))
        tags = {"random-board"}
    b = "".join(cells)
    if "." not in b:
        tags.add("full-board")
    if set(b) == {"."}:
        tags.add("empty-board")
    return b, tags


def _sample_geometry(
    rng: np.random.Generator, tags: set[str], params: dict[str, float]
) -> tuple[np.ndarray, float]:
    """A homography that keeps the whole plate inside the frame, and the plate half-size (pitches)."""
    angle = rng.uniform(-180.0, 180.0)
    tilt = TILT_MAX_DEG * math.sqrt(rng.random())
    tilt_axis = rng.uniform(0, 360)
    focal = rng.uniform(*FOCAL_RANGE_PX)
    target = rng.uniform(PITCH_MIN + 1.0, PITCH_MAX - 1.0)
    margin = rng.uniform(*PLATE_MARGIN_RANGE)
    shift_u = rng.random(2)
    for _ in range(60):
        half = 1.5 + margin
        h = camera_homography(angle, tilt, tilt_axis, focal, focal / target)
        pitch, _ = measured_pitch_and_angle(h)
        if pitch > PITCH_MAX - 0.5 or pitch < PITCH_MIN + 0.5:
            target *= (PITCH_MAX - 1.0) / pitch if pitch > PITCH_MAX - 0.5 else (PITCH_MIN + 1.0) / pitch
            continue
        corners = project(h, _rect(-half, -half, half, half))
        lo, hi = corners.min(axis=0), corners.max(axis=0)
        room = np.array([FRAME_W, FRAME_H]) - 2 * FRAME_MARGIN_PX - (hi - lo)
        if room.min() >= 0:
            offset = FRAME_MARGIN_PX - lo + shift_u * room
            break
        if margin > PLATE_MARGIN_MIN:
            margin = max(PLATE_MARGIN_MIN, margin - 0.08)
        else:
            target = max(PITCH_MIN + 1.0, target * 0.96)
    else:  # unreachable in practice: a 35 px board always fits
        raise RuntimeError("board does not fit in the frame")
    h = _translate(h, float(offset[0]), float(offset[1]))
    params.update(tilt=tilt, focal=focal, design_angle=angle)
    if tilt > TILT_TAG_ABOVE_DEG:
        tags.add("tilt")
    pitch, _ = measured_pitch_and_angle(h)
    if pitch < PITCH_SMALL_BELOW:
        tags.add("pitch:small")
    elif pitch > PITCH_LARGE_ABOVE:
        tags.add("pitch:large")
    return h, 1.5 + margin


def _sample_pieces(
    rng: np.random.Generator, board: str, plate_grey: float, tags: set[str], force_near: bool
) -> list[Piece]:
    base_r = rng.uniform(*PIECE_RADIUS_RANGE)
    black_g = rng.uniform(*BLACK_GREY_RANGE)
    if force_near:
        lo = max(WHITE_GREY_RANGE[0], plate_grey - WHITE_NEAR_PLATE + 2)
        hi = min(WHITE_GREY_RANGE[1], plate_grey + WHITE_NEAR_PLATE - 2)
        white_g = rng.uniform(lo, hi) if lo < hi else rng.uniform(*WHITE_GREY_RANGE)
    else:
        white_g = rng.uniform(*WHITE_GREY_RANGE)
    pieces = []
    for i, ch in enumerate(board):
        if ch == ".":
            continue
        r = float(
            np.clip(base_r + rng.uniform(-PIECE_RADIUS_JITTER, PIECE_RADIUS_JITTER), *PIECE_RADIUS_RANGE)
        )
        reach = float(np.clip(PIECE_EDGE_REACH - r, PIECE_OFFSET_MIN, PIECE_OFFSET_MAX))
        rho, th = reach * math.sqrt(rng.random()), rng.uniform(0, 2 * math.pi)
        cx = (i % 3 - 1) + rho * math.cos(th)
        cy = (i // 3 - 1) + rho * math.sin(th)
        black = ch == "X"
        grey = (black_g if black else white_g) + rng.uniform(-3, 3)
        grey = float(np.clip(grey, *(BLACK_GREY_RANGE if black else WHITE_GREY_RANGE)))
        pieces.append(Piece(cx, cy, r, grey, black))
    if base_r > LARGE_PIECE_ABOVE:
        tags.add("large-pieces")
    elif base_r < SMALL_PIECE_BELOW:
        tags.add("small-pieces")
    if any(not p.black and abs(p.grey - plate_grey) <= WHITE_NEAR_PLATE for p in pieces):
        tags.add("white-near-plate")
    if any(p.black and abs(p.grey - plate_grey) <= WHITE_NEAR_PLATE for p in pieces):
        tags.add("black-near-plate")
    return pieces


def sample_scene(rng: np.random.Generator) -> Scene:
    """Draw every random choice of one frame from ``rng`` (the pixels follow from the returned scene)."""
    tags: set[str] = set()
    params: dict[str, float] = {}
    board, btags = _sample_board(rng)
    tags |= btags
    h, plate_half = _sample_geometry(rng, tags, params)

    force_near = rng.random() < FORCE_WHITE_ON_WHITE_P
    kind = "white" if force_near else str(rng.choice(PLATE_KINDS, p=PLATE_KIND_WEIGHTS))
    plate = plate_colour(rng, kind)
    plate_grey = _luma(plate)
    tags.add(f"plate:{kind}")

    light_lines = plate_grey < 95 or (kind in ("blue", "green", "red") and rng.random() < 0.3)
    if light_lines:
        g = rng.uniform(190, 245)
        line = (g * rng.uniform(0.95, 1.0), g, g)
        tags.add("lines:light")
    else:
        g = rng.uniform(10, min(75.0, plate_grey - 60))
        line = (g * rng.uniform(0.9, 1.15), g, g * rng.uniform(0.9, 1.1))
        tags.add("lines:dark")
    line_w = rng.uniform(*LINE_WIDTH_RANGE)
    if line_w < LINE_THIN_BELOW:
        tags.add("lines:thin")
    elif line_w > LINE_THICK_ABOVE:
        tags.add("lines:thick")

    pieces = _sample_pieces(rng, board, plate_grey, tags, force_near)
    glossy = rng.random() < GLOSSY_P
    if pieces:
        tags.add("glossy" if glossy else "matte")
    la = rng.uniform(0, 2 * math.pi)
    light_dir = (math.cos(la), math.sin(la))

    table_kind = str(rng.choice(TABLE_KINDS))
    tags.add(f"table:{table_kind}")

    occluder = None
    coin_cell = None
    if rng.random() < OCCLUDED_P:
        options = [o for o in OCCLUDERS if o != "coin" or "." in board]
        occluder = str(rng.choice(options))
        if occluder == "coin":
            empties = [i for i, c in enumerate(board) if c == "."]
            coin_cell = int(rng.choice(empties))
        tags.add(f"occluded:{occluder}")
        tags.add("occluded")

    return Scene(
        rng_state=rng.bit_generator.state,
        board_plane=board,
        homography=h,
        plate_half=plate_half,
        plate_bgr=plate,
        plate_kind=kind,
        line_bgr=line,
        line_width=line_w,
        pieces=pieces,
        glossy=glossy,
        light_dir=light_dir,
        table_kind=table_kind,
        occluder=occluder,
        coin_cell=coin_cell,
        tags=tags,
        params=params,
    )


# --------------------------------------------------------------------------------------------------
# Drawing a scene


def _plane_shift(scene: Scene, dist_px: float) -> tuple[float, float]:
    """A board-plane offset (pitches) that moves about ``dist_px`` px away from the light in the image."""
    c = project(scene.homography, np.zeros((1, 2)))[0]
    away = c - np.array(scene.light_dir) * dist_px
    inv = np.linalg.inv(scene.homography)
    p = project(inv, away[None, :])[0]
    return float(p[0]), float(p[1])


def _draw_clutter(img: np.ndarray, scene: Scene, rng: np.random.Generator, pitch: float) -> None:
    """Paper, tape and a supply of spare pieces on the table, all outside (or under) the plate."""
    h = scene.homography
    half = scene.plate_half
    if rng.random() < 0.3:  # a sheet of paper, under the board or beside it
        long_side = rng.uniform(4.0, 7.5)
        under = rng.random() < 0.5
        d = 0.0 if under else rng.uniform(half + 1.0, half + 4.0)
        a = rng.uniform(0, 2 * math.pi)
        cx, cy = d * math.cos(a) + rng.uniform(-0.5, 0.5), d * math.sin(a) + rng.uniform(-0.5, 0.5)
        poly = _oriented_rect(cx, cy, long_side, long_side / math.sqrt(2), rng.uniform(0, math.pi))
        g = rng.uniform(215, 250)
        paint(img, [project(h, poly)], (g * rng.uniform(0.93, 1.0), g, g))
        scene.tags.add("paper")
    if rng.random() < 0.3:  # coloured tape on the table
        d = rng.uniform(half + 0.6, half + 3.0)
        a = rng.uniform(0, 2 * math.pi)
        poly = _oriented_rect(
            d * math.cos(a),
            d * math.sin(a),
            rng.uniform(2.5, 8.0),
            rng.uniform(0.3, 0.7),
            a + math.pi / 2 + rng.uniform(-0.4, 0.4),
        )
        col = np.array(TAPE_BGR[int(rng.integers(len(TAPE_BGR)))]) * rng.uniform(0.8, 1.1)
        paint(img, [project(h, poly)], tuple(col), alpha=rng.uniform(0.85, 1.0))
        scene.tags.add("tape")
    if rng.random() < 0.35:  # spare pieces in rows beside the board, on paper or a tray
        side = int(rng.integers(4))
        rows = int(rng.integers(1, 3))
        r = float(np.clip(rng.uniform(*PIECE_RADIUS_RANGE), 0.2, 0.42))
        count = int(rng.integers(3, 6))
        depth = rows * 2 * r + 0.35
        length = count * 2 * r * 1.15 + 0.3
        gap = rng.uniform(0.25, 0.9)
        along = rng.uniform(-1.0, 1.0)
        x0, x1 = along - length / 2, along + length / 2
        y0, y1 = half + gap, half + gap + depth
        rot = np.array([[1, 0], [0, 1]], float)
        for _ in range(side):
            rot = np.array([[0, -1], [1, 0]], float) @ rot
        tray = _rect(x0, y0, x1, y1) @ rot.T
        on_tray = rng.random() < 0.5
        tray_col = ((60, 60, 60) if rng.random() < 0.5 else (150, 90, 40)) if on_tray else (235, 238, 240)
        tray_col = tuple(np.array(tray_col) * rng.uniform(0.8, 1.1))
        paint(img, [project(h, tray)], tray_col)
        if on_tray:
            inner = _rect(x0 + 0.08, y0 + 0.08, x1 - 0.08, y1 - 0.08) @ rot.T
            paint(img, [project(h, inner)], tuple(np.array(tray_col) * 1.15))
        kinds = [True, False] if rows == 2 else [bool(rng.random() < 0.5)]
        visible = 0
        for ri, black in enumerate(kinds):
            for k in range(count):
                px = x0 + 0.15 + r * 1.15 + k * 2 * r * 1.15 + rng.uniform(-0.03, 0.03)
                py = y0 + 0.175 + r + ri * 2 * r + rng.uniform(-0.03, 0.03)
                c = np.array([px, py]) @ rot.T
                g = rng.uniform(*(BLACK_GREY_RANGE if black else WHITE_GREY_RANGE))
                _draw_disc(img, scene, Piece(float(c[0]), float(c[1]), r, g, black), pitch)
                ci = project(h, c[None, :])[0]
                visible += 0 <= ci[0] < FRAME_W and 0 <= ci[1] < FRAME_H
        if visible:
            scene.tags.add("supply")


def _draw_disc(img: np.ndarray, scene: Scene, p: Piece, pitch: float) -> None:
    """A piece: soft shadow, body, darker rim, and a specular highlight if the set is glossy."""
    h = scene.homography
    sx, sy = _plane_shift(scene, scene.params["shadow_px"])
    shade(
        img,
        [project(h, _circle(p.x + sx, p.y + sy, p.radius))],
        scene.params["shadow_k"],
        blur=scene.params["shadow_blur"] * pitch,
    )
    rim_k = scene.params["rim_k_black"] if p.black else scene.params["rim_k_white"]
    rim_w = scene.params["rim_w"]
    paint(img, [project(h, _circle(p.x, p.y, p.radius))], (p.grey * rim_k,) * 3)
    paint(
        img,
        [project(h, _circle(p.x, p.y, p.radius * (1 - rim_w)))],
        (p.grey,) * 3,
        blur=0.35 * rim_w * p.radius * pitch,
    )
    lx, ly = scene.light_dir
    cimg = project(h, np.array([[p.x, p.y]]))[0]
    rpx = p.radius * pitch
    dome = cimg + np.array([lx, ly]) * rpx * DOME_OFFSET  # a rounded top: lighter towards the light
    add_light(img, [_circle(dome[0], dome[1], rpx * DOME_RADIUS, 24)], DOME_LIGHT, blur=rpx * DOME_BLUR)
    if scene.glossy:
        hr = p.radius * pitch * scene.params["spec_r"]
        hc = cimg + np.array([lx, ly]) * p.radius * pitch * scene.params["spec_off"]
        amount = scene.params["spec_black"] if p.black else scene.params["spec_white"]
        add_light(img, [_circle(hc[0], hc[1], hr, 16)], amount, blur=hr * 0.5)


def _draw_coin(img: np.ndarray, scene: Scene, rng: np.random.Generator, pitch: float) -> None:
    assert scene.coin_cell is not None
    h = scene.homography
    metal = str(rng.choice(list(COIN_BGR)))
    col = np.array(COIN_BGR[metal]) * rng.uniform(0.85, 1.1)
    r = rng.uniform(0.2, 0.33)
    cx = scene.coin_cell % 3 - 1 + rng.uniform(-0.08, 0.08)
    cy = scene.coin_cell // 3 - 1 + rng.uniform(-0.08, 0.08)
    sx, sy = _plane_shift(scene, 0.04 * pitch)
    shade(img, [project(h, _circle(cx + sx, cy + sy, r))], 0.7, blur=0.04 * pitch)
    paint(img, [project(h, _circle(cx, cy, r))], tuple(col * 0.75))
    paint(img, [project(h, _circle(cx, cy, r * 0.9))], tuple(col))
    paint(img, [project(h, _circle(cx, cy, r * 0.78))], tuple(col * 0.9), alpha=0.5, blur=1.0)
    cimg = project(h, np.array([[cx, cy]]))[0] + np.array(scene.light_dir) * r * pitch * 0.35
    add_light(img, [_circle(cimg[0], cimg[1], r * pitch * 0.35, 16)], rng.uniform(40, 90), r * pitch * 0.3)
    scene.tags.add(f"coin:{metal}")


def _draw_pen(img: np.ndarray, scene: Scene, rng: np.random.Generator, pitch: float) -> None:
    c = project(scene.homography, rng.uniform(-1.2, 1.2, size=(1, 2)))[0]
    ang = rng.uniform(0, math.pi)
    u = np.array([math.cos(ang), math.sin(ang)])
    length = rng.uniform(3.5, 6.0) * pitch
    width = rng.uniform(0.13, 0.25) * pitch
    along = rng.uniform(-0.3, 0.3) * length
    p0 = c + u * (along - length / 2)
    p1 = c + u * (along + length / 2)
    off = -np.array(scene.light_dir) * rng.uniform(0.08, 0.25) * pitch
    shade(img, [_capsule(p0 + off, p1 + off, width)], rng.uniform(0.55, 0.75), blur=0.08 * pitch)
    col = np.array(PEN_BGR[int(rng.integers(len(PEN_BGR)))]) * rng.uniform(0.85, 1.1)
    tip_len = 0.12 * length
    body_end = p1 - u * tip_len
    paint(img, [_capsule(p0, body_end, width)], tuple(col))
    v = np.array([-u[1], u[0]])
    tip = np.array([body_end + v * width / 2, body_end - v * width / 2, p1])
    paint(img, [tip], (120, 170, 200) if rng.random() < 0.5 else (150, 150, 150))
    # a highlight along the barrel (it is a cylinder)
    hl_off = v * width * 0.2
    add_light(img, [_capsule(p0 + hl_off, body_end + hl_off, width * 0.18)], rng.uniform(30, 70), 1.0)


def _draw_hand(img: np.ndarray, scene: Scene, rng: np.random.Generator, pitch: float) -> None:
    """A hand reaching in from outside the frame: arm, palm and 2-4 fingers whose tips lie on squares."""
    target_cell = rng.uniform(-1.0, 1.0, size=2)
    tip = project(scene.homography, target_cell[None, :])[0]
    ang = rng.uniform(0, 2 * math.pi)
    u = np.array([math.cos(ang), math.sin(ang)])  # from the fingertips towards the wrist
    v = np.array([-u[1], u[0]])
    scale = pitch * rng.uniform(0.9, 1.3)
    finger_w = 0.36 * scale
    palm_c = tip + u * 1.9 * scale
    wrist = palm_c + u * 1.2 * scale
    elbow = wrist + u * 8.0 * scale
    skin = np.array(SKIN_BGR[int(rng.integers(len(SKIN_BGR)))]) * rng.uniform(0.9, 1.1)
    nf = int(rng.integers(1, 5))
    shapes = [
        _capsule(wrist, elbow, 1.5 * scale),
        cv2.ellipse2Poly(
            tuple(int(t) for t in palm_c),
            (int(1.0 * scale), int(0.8 * scale)),
            int(math.degrees(ang)),
            0,
            360,
            15,
        ).astype(float),
    ]
    fingers = []
    lead = int(rng.integers(nf))  # the finger whose tip lies on the target square
    for k in range(nf):
        w = finger_w * rng.uniform(0.85, 1.05)
        base = palm_c - u * 0.7 * scale + v * (k - (nf - 1) / 2) * finger_w
        ftip = tip + v * (k - lead) * finger_w * 1.25 + u * abs(k - lead) * rng.uniform(0.1, 0.3) * scale
        fingers.append((base, ftip, w))
    if rng.random() < HAND_THUMB_P:  # the thumb, from the side of the palm, turned outwards
        side = 1.0 if rng.random() < 0.5 else -1.0
        base = palm_c + v * side * 0.7 * scale
        out = -u * math.cos(HAND_THUMB_ANGLE) + v * side * math.sin(HAND_THUMB_ANGLE)
        fingers.append((base, base + out * 1.1 * scale, finger_w * 1.1))
    shapes += [_capsule(b0, b1, w) for b0, b1, w in fingers]
    off = -np.array(scene.light_dir) * rng.uniform(0.3, 0.8) * pitch
    shade(img, [s + off for s in shapes], rng.uniform(0.5, 0.75), blur=0.25 * pitch)
    paint(img, shapes[:2], tuple(skin), blur=0.6)
    for b0, b1, w in fingers:  # each finger: a darker crease around a skin-coloured core, and a nail
        paint(img, [_capsule(b0, b1, w)], tuple(skin * HAND_CREASE), blur=0.5)
        paint(img, [_capsule(b0, b1, w * 0.78)], tuple(skin), blur=0.8)
        d = (b1 - b0) / max(float(np.linalg.norm(b1 - b0)), 1e-6)
        paint(
            img, [_capsule(b1 - d * w * 0.55, b1 - d * w * 0.1, w * 0.45)], tuple(skin * 1.1 + 12), 0.7, 0.8
        )
    # a little relief: lit side brighter
    add_light(img, [s + np.array(scene.light_dir) * 0.1 * scale for s in shapes[2:]], 10.0, 0.1 * scale)


def _illumination(scene: Scene, rng: np.random.Generator, pitch: float) -> np.ndarray:
    """Multiplicative light over the frame: a gradient (up to 2:1 across the board), cast shadow, vignette."""
    h = scene.homography
    c = project(h, np.zeros((1, 2)))[0]
    corners = project(h, _rect(-scene.plate_half, -scene.plate_half, scene.plate_half, scene.plate_half))
    lx, ly = scene.light_dir
    proj = (_XS - c[0]) * lx + (_YS - c[1]) * ly
    cproj = (corners[:, 0] - c[0]) * lx + (corners[:, 1] - c[1]) * ly
    span = max(float(cproj.max() - cproj.min()), 1.0)
    ratio = 1.0 + (GRADIENT_MAX_RATIO - 1.0) * rng.random() ** 0.8
    # ratio:1 from one side of the board to the other, flattening off beyond it (a lamp, not a ramp)
    sat = GRADIENT_SATURATION
    k = math.log(ratio) / (2 * sat * math.tanh(0.5 / sat))
    gain = np.exp(k * sat * np.tanh(proj / (span * sat))).astype(np.float32)
    if ratio > GRADIENT_TAG_ABOVE:
        scene.tags.add("gradient")
    if rng.random() < 0.25:  # a shadow across the table (a person, a lamp arm...)
        sa = rng.uniform(0, 2 * math.pi)
        n = np.array([math.cos(sa), math.sin(sa)])
        d0 = rng.uniform(-0.6, 1.3) * span / 2
        soft = rng.uniform(6, 40)
        dist = (_XS - c[0]) * n[0] + (_YS - c[1]) * n[1] - d0
        inside = 1.0 / (1.0 + np.exp(np.clip(-dist / soft, -30, 30)))
        k = rng.uniform(0.55, 0.8)
        gain *= (1.0 - (1.0 - k) * inside).astype(np.float32)
        scene.tags.add("table-shadow")
        if float(((corners - c) @ n).max()) > d0:
            scene.tags.add("shadow-on-board")
    s = VIGNETTE_MAX * rng.random()
    if s > 0.02:
        r2 = ((_XS - FRAME_W / 2) ** 2 + (_YS - FRAME_H / 2) ** 2) / ((FRAME_W / 2) ** 2 + (FRAME_H / 2) ** 2)
        gain *= (1.0 / (1.0 + s * r2) ** 2).astype(np.float32)
        if s > VIGNETTE_TAG_ABOVE:
            scene.tags.add("vignette")
    return gain


def _motion_kernel(length: float, ang: float) -> np.ndarray:
    """A normalised line kernel of ``length`` px (sub-pixel, anti-aliased) at angle ``ang``."""
    size = 7
    k = np.zeros((size * 8, size * 8), np.uint8)
    c = size * 4
    dx, dy = math.cos(ang) * length * 4, math.sin(ang) * length * 4
    p0 = (round((c - dx) * FIXED_SCALE), round((c - dy) * FIXED_SCALE))
    p1 = (round((c + dx) * FIXED_SCALE), round((c + dy) * FIXED_SCALE))
    cv2.line(k, p0, p1, 255, 8, cv2.LINE_AA, FIXED_SHIFT)
    small = cv2.resize(k.astype(np.float32), (size, size), interpolation=cv2.INTER_AREA)
    return small / small.sum()


def draw_scene(
    scene: Scene, effects: bool = True, occluders: bool = True
) -> tuple[np.ndarray, frozenset[str]]:
    """Render a scene to a BGR uint8 frame and its full tag set; ``scene`` itself is left unchanged.

    Deterministic: the scene's saved random stream drives the details. ``effects=False`` leaves out the
    camera and light (gradient, cast shadow, vignette, white balance, blur, noise, JPEG) and
    ``occluders=False`` the hand/pen/coin, for tests that read the drawn truth; the pieces, plate and
    clutter are the same either way.
    """
    scene = replace(scene, tags=set(scene.tags), params=dict(scene.params))
    rng = np.random.default_rng()
    rng.bit_generator.state = scene.rng_state
    h = scene.homography
    pitch, _ = measured_pitch_and_angle(h)
    scene.params.update(
        shadow_px=rng.uniform(0.03, 0.1) * pitch,
        shadow_k=rng.uniform(0.55, 0.85),
        shadow_blur=rng.uniform(0.03, 0.09),
        rim_k_black=rng.uniform(0.75, 1.0),
        rim_k_white=rng.uniform(0.72, 0.92),
        rim_w=rng.uniform(0.06, 0.16),
        spec_r=rng.uniform(0.12, 0.24),
        spec_off=rng.uniform(0.38, 0.55),
        spec_black=rng.uniform(50, 140),
        spec_white=rng.uniform(25, 60),
    )

    img = table_texture(rng, scene.table_kind)
    _draw_clutter(img, scene, rng, pitch)

    half = scene.plate_half
    plate_poly = project(h, _rect(-half, -half, half, half))
    sx, sy = _plane_shift(scene, rng.uniform(0.04, 0.12) * pitch)
    shade(
        img,
        [project(h, _rect(-half + sx, -half + sy, half + sx, half + sy))],
        rng.uniform(0.55, 0.8),
        blur=rng.uniform(0.02, 0.08) * pitch,
    )
    if scene.plate_kind == "wood":
        _, ang = measured_pitch_and_angle(h)
        tex = wood_texture(
            rng, np.array(scene.plate_bgr), -ang + 90 * int(rng.integers(2)), rng.uniform(0.15, 0.5) * pitch
        )
        paint(img, [plate_poly], tex)
    else:
        paint(img, [plate_poly], scene.plate_bgr)
    # a thin lighter or darker edge: the plate's bevel
    edge_in = project(h, _rect(-half + 0.03, -half + 0.03, half - 0.03, half - 0.03))
    bevel = rng.uniform(0.8, 1.15)
    shade(img, [plate_poly], bevel)
    shade(img, [edge_in], 1.0 / bevel)

    w = scene.line_width / 2
    lines = []
    for k in range(4):
        t = -1.5 + k
        lines.append(project(h, _rect(t - w, -1.5 - w, t + w, 1.5 + w)))
        lines.append(project(h, _rect(-1.5 - w, t - w, 1.5 + w, t + w)))
    paint(img, lines, scene.line_bgr, alpha=rng.uniform(0.85, 1.0))

    for p in scene.pieces:
        _draw_disc(img, scene, p, pitch)

    occ_rng = np.random.default_rng(rng.integers(1 << 62))
    if occluders and scene.occluder == "coin":
        _draw_coin(img, scene, occ_rng, pitch)
    elif occluders and scene.occluder == "pen":
        _draw_pen(img, scene, occ_rng, pitch)
    elif occluders and scene.occluder == "hand":
        _draw_hand(img, scene, occ_rng, pitch)

    if effects:
        img *= _illumination(scene, rng, pitch)[:, :, None]
        img *= np.float32(rng.uniform(0.85, 1.08))  # exposure
        wb = rng.random()
        if wb < 0.35:
            gains = (rng.uniform(0.72, 0.9), 1.0, rng.uniform(1.05, 1.2))
            scene.tags.add("wb:warm")
        elif wb < 0.7:
            gains = (rng.uniform(1.05, 1.22), 1.0, rng.uniform(0.8, 0.95))
            scene.tags.add("wb:cool")
        else:
            gains = (rng.uniform(0.96, 1.04), 1.0, rng.uniform(0.96, 1.04))
            scene.tags.add("wb:neutral")
        img *= np.array(gains, np.float32)[None, None, :]
        if rng.random() < 0.35:
            sigma = rng.uniform(*DEFOCUS_SIGMA_RANGE)
            img = cv2.GaussianBlur(img, (0, 0), sigma)
            scene.tags.add("defocus")
        mlen = MOTION_BLUR_MAX_PX * rng.random() if rng.random() < 0.4 else 0.0
        if mlen > 0.2:
            img = cv2.filter2D(img, -1, _motion_kernel(mlen, rng.uniform(0, math.pi)))
            if mlen > MOTION_BLUR_TAG_ABOVE:
                scene.tags.add("motion-blur")
        sigma_n = rng.uniform(*NOISE_SIGMA_RANGE)
        shot = rng.uniform(0.0, 0.08)
        noise = rng.standard_normal(img.shape, dtype=np.float32)
        img += noise * np.sqrt(sigma_n**2 + shot * np.maximum(img, 0.0))
        if sigma_n > NOISE_TAG_ABOVE:
            scene.tags.add("noise")
        quality = int(rng.integers(JPEG_Q_MIN, JPEG_Q_MAX + 1))
        out = np.clip(img + 0.5, 0, 255).astype(np.uint8)
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
        assert ok
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        scene.tags.add("jpeg:low" if quality < JPEG_LOW_BELOW else "jpeg:high")
        scene.params["jpeg_quality"] = quality
    else:
        out = np.clip(img + 0.5, 0, 255).astype(np.uint8)
    return out, frozenset(scene.tags)


def _to_sample(scene: Scene, image: np.ndarray, tags: frozenset[str]) -> Sample:
    """Fold the plane-frame truth into the reported frame: angle in (-45, 45], board re-read to match."""
    h = scene.homography
    pitch, angle = measured_pitch_and_angle(h)
    folded, k = fold_angle(angle)
    c = project(h, np.zeros((1, 2)))[0]
    board = board_in_folded_frame(scene.board_plane, k)
    return Sample(
        image=image,
        board=board,
        centre_px=(float(c[0]), float(c[1])),
        angle_deg=float(folded),
        pitch_px=float(pitch),
        occluded=scene.occluder is not None,
        tags=tags,
    )
