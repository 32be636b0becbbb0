"""Held-out synthetic camera frames of a tic-tac-toe board, written from the requirements alone.

Each frame is a 640x480 BGR photo-like rendering of a 3x3 board (full grid with frame) on a table,
seen from above, with its ground truth (board string, centre, angle, pitch, occlusion) and the
set of conditions it exhibits. Nothing here reads or imports the detector; see README.md.

Geometry (image y down): a point at offset (dx, dy) from the board centre in the board's own frame
lies at ``x = cx + dx*cos(a) + dy*sin(a)``, ``y = cy - dx*sin(a) + dy*cos(a)``; square n (row
``(n-1)//3``, column ``(n-1)%3``) is centred at ``((c-1)*pitch, (r-1)*pitch)``. A mild homography
centred on the board (identity Jacobian at the centre) is applied afterwards, so the projected
centre and the direction of the board's x axis through it are exactly the unprojected ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# --------------------------------------------------------------------------- constants

IMAGE_W = 640
IMAGE_H = 480
SUPERSAMPLE = 2  # the board is rendered at this scale, then INTER_AREA down, then warped

PITCH_MIN, PITCH_MAX = 35.0, 90.0
SMALL_PITCH_MAX, BIG_PITCH_MIN = 45.0, 80.0
LINE_FRAC_MIN, LINE_FRAC_MAX = 0.02, 0.12
THIN_LINE_MAX, THICK_LINE_MIN = 0.04, 0.09
RADIUS_FRAC_MIN, RADIUS_FRAC_MAX = 0.20, 0.45
LARGE_RADIUS_MIN, SMALL_RADIUS_MAX = 0.38, 0.25
MAX_PIECE_OFFSET_FRAC = 0.06
BLACK_GREY = (15.0, 55.0)
WHITE_GREY = (205.0, 245.0)
WHITE_ON_LIGHT_DELTA = 20.0
PASTEL_RANGE = (150.0, 250.0)
ANGLE_LIMIT = 45.0
MAX_PERSPECTIVE = 3.0e-4  # homography p, q terms (1/px): about 5% scale change across a big board
VIEW_MARGIN_PX = 3.0
JPEG_QUALITY = (50, 95)
JPEG_LOW_MAX = 60
BLUR_MIN_PX, BLUR_MAX_PX = 1.0, 2.0
GRADIENT_RATIO = 2.0
VIGNETTE_STRONG = (0.3, 0.5)  # brightness loss at the image corners
VIGNETTE_MILD_MAX = 0.1
NOISE_SIGMA = (1.5, 4.0)
WARM_GAINS = ((0.80, 0.90), (1.10, 1.22))  # (blue range, red range)
COOL_GAINS = ((1.10, 1.22), (0.82, 0.92))
SUPPLY_COUNT = 5
LIGHT_MAP_STEP = 8  # the lighting field is computed at 1/8 resolution (it is smooth)
TABLE_TEXTURE_STEP = 2  # the table's texture is computed at 1/2 resolution
RANDOM_FAMILIES_PER_CYCLE = 4  # unforced frames per cycle of tags in make_set (keeps occlusion ~10%)

PLATE_KINDS = ("white", "grey", "wood", "dark", "blue", "green", "pastel")
OCCLUDERS = ("hand", "pen", "coin")

TAGS: tuple[str, ...] = (
    *(f"plate:{k}" for k in PLATE_KINDS),
    "lines:light",
    "lines:thin",
    "lines:thick",
    "large-pieces",
    "small-pieces",
    "glossy",
    "white-on-light",
    "warm",
    "cool",
    "gradient",
    "vignette",
    "jpeg-low",
    "blur",
    "small-pitch",
    "big-pitch",
    "supply",
    *(f"occluded:{k}" for k in OCCLUDERS),
)

TABLE_COLOURS = (  # BGR
    (100.0, 150.0, 190.0),  # light wood
    (55.0, 80.0, 115.0),  # dark wood
    (125.0, 125.0, 122.0),  # grey laminate
    (200.0, 205.0, 205.0),  # white desk
    (160.0, 182.0, 198.0),  # beige
    (50.0, 50.0, 55.0),  # dark desk
)
SKIN_COLOURS = ((105.0, 140.0, 195.0), (85.0, 118.0, 170.0), (60.0, 90.0, 140.0), (140.0, 170.0, 220.0))
PEN_COLOURS = ((160.0, 60.0, 20.0), (30.0, 30.0, 35.0), (40.0, 40.0, 190.0), (235.0, 235.0, 235.0))
COIN_COLOURS = ((175.0, 178.0, 182.0), (70.0, 140.0, 195.0), (60.0, 95.0, 170.0))


# --------------------------------------------------------------------------- public types


@dataclass(frozen=True)
class Sample:
    """One rendered frame and its ground truth."""

    image: np.ndarray  # BGR uint8, 480x640
    board: str  # 9 chars X/O/.
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    occluded: bool
    conditions: frozenset[str]  # tags


@dataclass(frozen=True)
class FrameParams:
    """Every random choice behind one frame (for debugging and the generator's own tests)."""

    board: str
    plate_kind: str
    plate_bgr: tuple[float, float, float]
    line_bgr: tuple[float, float, float]
    line_light: bool
    line_frac: float
    radius_frac: float
    piece_offsets: tuple[tuple[float, float], ...]  # per square, in pitch units
    black_grey: float
    white_grey: float
    glossy: bool
    pitch: float
    angle: float
    centre: tuple[float, float]
    persp: tuple[float, float]
    plate_margin_frac: float
    light_angle: float
    white_balance: str  # "warm", "cool" or "neutral"
    wb_gains: tuple[float, float, float]
    exposure: float
    gradient: bool
    gradient_angle: float
    gradient_ratio: float
    vignette: float
    jpeg_quality: int | None
    blur_px: float
    blur_angle: float
    noise_sigma: float
    defocus_sigma: float
    table_bgr: tuple[float, float, float]
    supply: tuple[float, float, float, float, bool] | None  # (cx, cy, angle_deg, spacing, on a tray)
    occluder: str | None
    distractors: int


@dataclass(frozen=True)
class RenderInfo:
    """Masks and parameters of one frame, for checking the generator (not for a detector)."""

    params: FrameParams
    plate_mask: np.ndarray  # uint8 0/255, where the plate is
    grid_mask: np.ndarray  # uint8 0/255, the 3x3 squares area
    occluder_mask: np.ndarray | None  # uint8 0/255, where the occluder is (None if not occluded)


# --------------------------------------------------------------------------- geometry helpers


def _to_image_affine(angle_deg: float, centre: tuple[float, float]) -> np.ndarray:
    """3x3 matrix from board-frame offsets to image pixels (before perspective)."""
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, s, centre[0]], [-s, c, centre[1]], [0.0, 0.0, 1.0]])


def _perspective(persp: tuple[float, float], centre: tuple[float, float]) -> np.ndarray:
    """A mild homography fixing ``centre`` with identity Jacobian there (a slightly tilted camera)."""
    p = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [persp[0], persp[1], 1.0]])
    t = np.array([[1.0, 0.0, centre[0]], [0.0, 1.0, centre[1]], [0.0, 0.0, 1.0]])
    t_inv = np.array([[1.0, 0.0, -centre[0]], [0.0, 1.0, -centre[1]], [0.0, 0.0, 1.0]])
    return t @ p @ t_inv


def board_to_image(params: FrameParams) -> np.ndarray:
    """3x3 homography from board-frame offsets (pixels) to image pixels."""
    return _perspective(params.persp, params.centre) @ _to_image_affine(params.angle, params.centre)


def _project(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply homography ``m`` to an (N, 2) array of points."""
    h = np.hstack([pts, np.ones((len(pts), 1))]) @ m.T
    return h[:, :2] / h[:, 2:3]


def _square_rect(half: float) -> np.ndarray:
    return np.array([[-half, -half], [half, -half], [half, half], [-half, half]])


def _luma(bgr: tuple[float, float, float] | np.ndarray) -> float:
    return float(0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2])


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def _roi(shape: tuple[int, ...], x0: float, y0: float, x1: float, y1: float) -> tuple[int, int, int, int]:
    h, w = shape[:2]
    return (
        max(0, math.floor(x0)),
        max(0, math.floor(y0)),
        min(w, math.ceil(x1) + 1),
        min(h, math.ceil(y1) + 1),
    )


# --------------------------------------------------------------------------- parameter sampling


def _plate_colour(rng: np.random.Generator, kind: str) -> tuple[float, float, float]:
    if kind == "white":
        g = rng.uniform(215.0, 248.0)
        return (g + rng.uniform(-4, 4), g + rng.uniform(-3, 3), g + rng.uniform(-4, 4))
    if kind == "grey":
        g = rng.uniform(110.0, 190.0)
        return (g + rng.uniform(-4, 4), g, g + rng.uniform(-4, 4))
    if kind == "wood":
        k = rng.uniform(0.8, 1.1)
        return (k * rng.uniform(70, 110), k * rng.uniform(130, 165), k * rng.uniform(175, 210))
    if kind == "dark":
        g = rng.uniform(18.0, 70.0)
        return (g + rng.uniform(0, 6), g, g)
    if kind == "blue":
        return (rng.uniform(150, 215), rng.uniform(60, 120), rng.uniform(10, 50))
    if kind == "green":
        return (rng.uniform(30, 80), rng.uniform(115, 175), rng.uniform(20, 70))
    # pastel: each channel 150..250 with a visible hue
    while True:
        c = rng.uniform(*PASTEL_RANGE, size=3)
        if c.max() - c.min() >= 40.0:
            return (float(c[0]), float(c[1]), float(c[2]))


def _random_board(rng: np.random.Generator, forced: str | None) -> str:
    cells = ["."] * 9
    if rng.random() < (0.35 if forced == "large-pieces" else 0.12):
        nx = int(rng.choice([4, 5]))
        no = 9 - nx
    else:
        nx = int(rng.integers(0, 6))
        no = int(rng.integers(0, 6))
        while nx + no > 9:
            no -= 1
    if forced == "white-on-light" and no == 0:
        no = 1
        nx = min(nx, 8)
    if forced in ("large-pieces", "small-pieces", "glossy") and nx + no == 0:
        nx = 1
    if forced == "occluded:coin" and nx + no == 9:
        nx -= 1
    order = rng.permutation(9)
    for i in order[:nx]:
        cells[int(i)] = "X"
    for i in order[nx : nx + no]:
        cells[int(i)] = "O"
    return "".join(cells)


def _fit_centre(
    rng: np.random.Generator, angle: float, persp: tuple[float, float], half: float
) -> tuple[float, float] | None:
    """A random centre such that the square of half-size ``half`` stays in view, or None."""
    offsets = _project(board_to_image_like(angle, persp), _square_rect(half))
    lo_x = -offsets[:, 0].min() + VIEW_MARGIN_PX
    hi_x = IMAGE_W - 1 - offsets[:, 0].max() - VIEW_MARGIN_PX
    lo_y = -offsets[:, 1].min() + VIEW_MARGIN_PX
    hi_y = IMAGE_H - 1 - offsets[:, 1].max() - VIEW_MARGIN_PX
    if lo_x > hi_x or lo_y > hi_y:
        return None
    return (float(rng.uniform(lo_x, hi_x)), float(rng.uniform(lo_y, hi_y)))


def board_to_image_like(angle: float, persp: tuple[float, float]) -> np.ndarray:
    """Board-to-image homography for a board centred at the origin (offsets relative to the centre)."""
    return _perspective(persp, (0.0, 0.0)) @ _to_image_affine(angle, (0.0, 0.0))


def _supply_poly(cx: float, cy: float, ang: float, radius: float, spacing: float) -> np.ndarray:
    """Corners of the supply paper/tray holding two columns of pieces."""
    half_len = (SUPPLY_COUNT * spacing) / 2.0 + 0.6 * radius
    half_wid = 2.4 * radius
    a = math.radians(ang)
    ex, ey = math.cos(a), -math.sin(a)  # column axis
    nx, ny = -ey, ex
    pts = []
    for sl, sw in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        pts.append(
            (cx + sl * half_len * ex + sw * half_wid * nx, cy + sl * half_len * ey + sw * half_wid * ny)
        )
    return np.array(pts)


def _supply_piece_centres(cx: float, cy: float, ang: float, radius: float, spacing: float) -> np.ndarray:
    """Centres of the 5 black (first) and 5 white supply pieces."""
    a = math.radians(ang)
    ex, ey = math.cos(a), -math.sin(a)
    nx, ny = -ey, ex
    pts = []
    for side in (-1.15, 1.15):
        for k in range(SUPPLY_COUNT):
            along = (k - (SUPPLY_COUNT - 1) / 2.0) * spacing
            pts.append((cx + along * ex + side * radius * nx, cy + along * ey + side * radius * ny))
    return np.array(pts)


def _polys_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    area, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    return bool(area > 0.0)


def _inside_frame(pts: np.ndarray, margin: float) -> bool:
    return bool(
        (pts[:, 0] >= margin).all()
        and (pts[:, 0] <= IMAGE_W - 1 - margin).all()
        and (pts[:, 1] >= margin).all()
        and (pts[:, 1] <= IMAGE_H - 1 - margin).all()
    )


def _place_supply(
    rng: np.random.Generator, plate_poly: np.ndarray, angle: float, radius: float
) -> tuple[float, float, float, float, bool] | None:
    spacing = radius * 2.0 * rng.uniform(1.08, 1.3)
    grown = plate_poly.mean(axis=0) + (plate_poly - plate_poly.mean(axis=0)) * 1.05
    for _ in range(40):
        if rng.random() < 0.85:  # columns roughly along one of the board's axes
            ang = angle + float(rng.choice([0.0, 90.0])) + rng.uniform(-8, 8)
        else:
            ang = rng.uniform(-90, 90)
        cx, cy = rng.uniform(0, IMAGE_W), rng.uniform(0, IMAGE_H)
        poly = _supply_poly(cx, cy, ang, radius, spacing)
        if _inside_frame(
            _supply_piece_centres(cx, cy, ang, radius, spacing), radius + 2.0
        ) and not _polys_overlap(poly, grown):
            return (float(cx), float(cy), float(ang), float(spacing), bool(rng.random() < 0.35))
    return None


def _sample_params(rng: np.random.Generator, forced: str | None) -> FrameParams:
    """Draw one frame's parameters; ``forced`` (a tag) is guaranteed to hold."""
    for _attempt in range(60):
        params = _try_sample(rng, forced)
        if params is not None:
            return params
    raise RuntimeError(f"could not sample a frame for {forced!r}")  # pragma: no cover


def _try_sample(rng: np.random.Generator, forced: str | None) -> FrameParams | None:
    f = forced or ""
    # plate and lines
    if f.startswith("plate:"):
        kind = f.split(":", 1)[1]
    elif f == "lines:light":
        kind = str(rng.choice(["dark", "blue", "green"]))
    elif f == "white-on-light":
        kind = "white"
    else:
        kind = str(rng.choice(PLATE_KINDS, p=[0.2, 0.12, 0.18, 0.12, 0.14, 0.12, 0.12]))
    plate = _plate_colour(rng, kind)
    if kind == "dark":
        light = True
    elif kind in ("blue", "green"):
        light = f == "lines:light" or rng.random() < 0.6
    else:
        light = False
    if light:
        g = rng.uniform(195, 240)
        line = (g + rng.uniform(-5, 5), g + rng.uniform(-5, 5), g + rng.uniform(-5, 5))
    else:
        g = rng.uniform(12, 60)
        line = (g + rng.uniform(0, 12), g + rng.uniform(0, 6), g)
    if f == "lines:thin":
        line_frac = rng.uniform(LINE_FRAC_MIN, THIN_LINE_MAX)
    elif f == "lines:thick":
        line_frac = rng.uniform(THICK_LINE_MIN, LINE_FRAC_MAX)
    else:
        line_frac = rng.uniform(LINE_FRAC_MIN, LINE_FRAC_MAX)
    # pieces
    r_max = min(RADIUS_FRAC_MAX, 0.5 - line_frac / 2.0)
    if f == "large-pieces":
        radius_frac = rng.uniform(LARGE_RADIUS_MIN, r_max)
    elif f == "small-pieces":
        radius_frac = rng.uniform(RADIUS_FRAC_MIN, SMALL_RADIUS_MAX)
    elif f == "supply":
        radius_frac = rng.uniform(RADIUS_FRAC_MIN, min(r_max, 0.4))
    else:
        radius_frac = rng.uniform(RADIUS_FRAC_MIN, r_max)
    max_off = max(0.0, min(MAX_PIECE_OFFSET_FRAC, 0.5 - line_frac / 2.0 - radius_frac - 0.005))
    offsets = tuple(
        (float(rng.uniform(-1, 1) * max_off), float(rng.uniform(-1, 1) * max_off)) for _ in range(9)
    )
    board = _random_board(rng, forced)
    black = rng.uniform(*BLACK_GREY)
    if f == "white-on-light":
        white = float(np.clip(_luma(plate) + rng.uniform(-18, 18), *WHITE_GREY))
    else:
        white = rng.uniform(*WHITE_GREY)
    glossy = f == "glossy" or rng.random() < 0.35
    # geometry
    if f == "small-pitch":
        pitch = rng.uniform(PITCH_MIN, SMALL_PITCH_MAX)
    elif f == "big-pitch":
        pitch = rng.uniform(BIG_PITCH_MIN, PITCH_MAX)
    elif f == "supply":
        pitch = rng.uniform(PITCH_MIN, 62.0)
    else:
        pitch = rng.uniform(PITCH_MIN, PITCH_MAX)
    angle = ANGLE_LIMIT - 2.0 * ANGLE_LIMIT * rng.random()  # (-45, 45]
    tilt = rng.uniform(0, 2 * math.pi)
    mag = rng.uniform(0, MAX_PERSPECTIVE)
    persp = (mag * math.cos(tilt), mag * math.sin(tilt))
    margin_frac = rng.uniform(0.15, 0.6)
    centre = None
    for shrink in (1.0, 0.6, 0.3, 0.0):
        half = 1.5 * pitch + margin_frac * pitch * shrink + 0.15 * pitch * (1 - shrink)
        centre = _fit_centre(rng, angle, persp, half)
        if centre is not None:
            margin_frac = margin_frac * shrink + 0.15 * (1 - shrink)
            break
    if centre is None:
        return None
    # table, supply
    table = TABLE_COLOURS[int(rng.integers(len(TABLE_COLOURS)))]
    supply = None
    if f == "supply" or (not f.startswith("occluded") and rng.random() < 0.3):
        m = _perspective(persp, centre) @ _to_image_affine(angle, centre)
        plate_poly = _project(m, _square_rect(1.5 * pitch + margin_frac * pitch))
        supply = _place_supply(rng, plate_poly, angle, radius_frac * pitch)
        if supply is None and f == "supply":
            return None
    # photometry
    if f == "warm" or (f != "cool" and rng.random() < 0.2):
        wb = "warm"
        gains = (rng.uniform(*WARM_GAINS[0]), rng.uniform(0.97, 1.03), rng.uniform(*WARM_GAINS[1]))
    elif f == "cool" or rng.random() < 0.25:
        wb = "cool"
        gains = (rng.uniform(*COOL_GAINS[0]), rng.uniform(0.97, 1.03), rng.uniform(*COOL_GAINS[1]))
    else:
        wb = "neutral"
        gains = (rng.uniform(0.97, 1.03), rng.uniform(0.98, 1.02), rng.uniform(0.97, 1.03))
    gradient = f == "gradient" or rng.random() < 0.25
    vignette = rng.uniform(*VIGNETTE_STRONG) if f == "vignette" or rng.random() < 0.3 else 0.0
    if vignette == 0.0:
        vignette = rng.uniform(0.0, VIGNETTE_MILD_MAX)
    if f == "jpeg-low":
        quality: int | None = int(rng.integers(JPEG_QUALITY[0], JPEG_LOW_MAX + 1))
    elif rng.random() < 0.75:
        quality = int(rng.integers(JPEG_QUALITY[0], JPEG_QUALITY[1] + 1))
    else:
        quality = None
    blur = rng.uniform(BLUR_MIN_PX, BLUR_MAX_PX) if f == "blur" or rng.random() < 0.2 else 0.0
    occluder = f.split(":", 1)[1] if f.startswith("occluded:") else None
    return FrameParams(
        board=board,
        plate_kind=kind,
        plate_bgr=(float(plate[0]), float(plate[1]), float(plate[2])),
        line_bgr=(float(line[0]), float(line[1]), float(line[2])),
        line_light=light,
        line_frac=float(line_frac),
        radius_frac=float(radius_frac),
        piece_offsets=offsets,
        black_grey=float(black),
        white_grey=float(white),
        glossy=glossy,
        pitch=float(pitch),
        angle=float(angle),
        centre=centre,
        persp=(float(persp[0]), float(persp[1])),
        plate_margin_frac=float(margin_frac),
        light_angle=float(rng.uniform(0, 360)),
        white_balance=wb,
        wb_gains=(float(gains[0]), float(gains[1]), float(gains[2])),
        exposure=float(rng.uniform(0.85, 1.08)),
        gradient=gradient,
        gradient_angle=float(rng.uniform(0, 360)),
        gradient_ratio=GRADIENT_RATIO if gradient else float(rng.uniform(1.0, 1.15)),
        vignette=float(vignette),
        jpeg_quality=quality,
        blur_px=float(blur),
        blur_angle=float(rng.uniform(0, 180)),
        noise_sigma=float(rng.uniform(*NOISE_SIGMA)),
        defocus_sigma=float(rng.uniform(0.3, 0.75)),
        table_bgr=table,
        supply=supply,
        occluder=occluder,
        distractors=int(rng.integers(0, 4)) if rng.random() < 0.5 else 0,
    )


def conditions_of(p: FrameParams) -> frozenset[str]:
    """The tags a frame with these parameters exhibits."""
    tags = {f"plate:{p.plate_kind}"}
    pieces = any(ch != "." for ch in p.board) or p.supply is not None
    if p.line_light:
        tags.add("lines:light")
    if p.line_frac <= THIN_LINE_MAX:
        tags.add("lines:thin")
    if p.line_frac >= THICK_LINE_MIN:
        tags.add("lines:thick")
    if pieces and p.radius_frac >= LARGE_RADIUS_MIN:
        tags.add("large-pieces")
    if pieces and p.radius_frac <= SMALL_RADIUS_MAX:
        tags.add("small-pieces")
    if pieces and p.glossy:
        tags.add("glossy")
    if "O" in p.board and abs(p.white_grey - _luma(p.plate_bgr)) <= WHITE_ON_LIGHT_DELTA:
        tags.add("white-on-light")
    if p.white_balance in ("warm", "cool"):
        tags.add(p.white_balance)
    if p.gradient:
        tags.add("gradient")
    if p.vignette >= VIGNETTE_STRONG[0]:
        tags.add("vignette")
    if p.jpeg_quality is not None and p.jpeg_quality <= JPEG_LOW_MAX:
        tags.add("jpeg-low")
    if p.blur_px >= BLUR_MIN_PX:
        tags.add("blur")
    if p.pitch <= SMALL_PITCH_MAX:
        tags.add("small-pitch")
    if p.pitch >= BIG_PITCH_MIN:
        tags.add("big-pitch")
    if p.supply is not None:
        tags.add("supply")
    if p.occluder is not None:
        tags.add(f"occluded:{p.occluder}")
    return frozenset(tags)


# --------------------------------------------------------------------------- drawing primitives


def _draw_disc_shadow(
    canvas: np.ndarray, cx: float, cy: float, radius: float, offset: tuple[float, float], strength: float
) -> None:
    """Darken a soft disc-shaped drop shadow under a piece (in place)."""
    sx, sy = cx + offset[0], cy + offset[1]
    soft = 0.3 * radius + 1.0
    x0, y0, x1, y1 = _roi(
        canvas.shape, sx - radius - soft, sy - radius - soft, sx + radius + soft, sy + radius + soft
    )
    if x0 >= x1 or y0 >= y1:
        return
    xs = np.arange(x0, x1, dtype=np.float32)[None, :] - sx
    ys = np.arange(y0, y1, dtype=np.float32)[:, None] - sy
    d = np.sqrt(xs * xs + ys * ys)
    a = _smoothstep((radius + soft - d) / (2.0 * soft))
    canvas[y0:y1, x0:x1] *= (1.0 - strength * a)[..., None]


def _draw_piece(
    canvas: np.ndarray,
    cx: float,
    cy: float,
    radius: float,
    colour: np.ndarray,
    light: tuple[float, float],
    glossy: bool,
    rim_dark: float,
) -> None:
    """A round disc piece: flat top lit from ``light`` (unit vector), darker rim, optional highlight."""
    x0, y0, x1, y1 = _roi(canvas.shape, cx - radius - 1, cy - radius - 1, cx + radius + 1, cy + radius + 1)
    if x0 >= x1 or y0 >= y1:
        return
    xs = np.arange(x0, x1, dtype=np.float32)[None, :] - cx
    ys = np.arange(y0, y1, dtype=np.float32)[:, None] - cy
    d = np.sqrt(xs * xs + ys * ys)
    alpha = np.clip(radius + 0.5 - d, 0.0, 1.0)
    t = d / radius
    shade = 1.0 - rim_dark * _smoothstep((t - 0.78) / 0.22)
    shade = shade * (1.0 + 0.07 * (xs * light[0] + ys * light[1]) / radius)
    col = colour[None, None, :] * shade[..., None]
    if glossy:
        hx, hy = 0.45 * radius * light[0], 0.45 * radius * light[1]
        u = (xs - hx) * light[0] + (ys - hy) * light[1]  # along the light direction
        v = -(xs - hx) * light[1] + (ys - hy) * light[0]
        g = np.exp(-2.0 * ((u / (0.11 * radius)) ** 2 + (v / (0.22 * radius)) ** 2))
        col = col + (250.0 - col) * (0.9 * g)[..., None]
    roi = canvas[y0:y1, x0:x1]
    roi += (col - roi) * alpha[..., None]


def _draw_coin(
    canvas: np.ndarray,
    cx: float,
    cy: float,
    radius: float,
    colour: np.ndarray,
    light: tuple[float, float],
    rng: np.random.Generator,
) -> None:
    """A metal coin: raised rim, embossed noisy face, broad metallic sheen."""
    x0, y0, x1, y1 = _roi(canvas.shape, cx - radius - 1, cy - radius - 1, cx + radius + 1, cy + radius + 1)
    xs = np.arange(x0, x1, dtype=np.float32)[None, :] - cx
    ys = np.arange(y0, y1, dtype=np.float32)[:, None] - cy
    d = np.sqrt(xs * xs + ys * ys)
    alpha = np.clip(radius + 0.5 - d, 0.0, 1.0)
    t = d / radius
    rim = np.exp(-(((t - 0.9) / 0.06) ** 2))
    emboss = cv2.GaussianBlur(rng.standard_normal(d.shape).astype(np.float32), (0, 0), max(0.8, radius / 10))
    emboss *= 0.25 / (float(np.abs(emboss).max()) + 1e-6)
    sheen = 0.35 * (xs * light[0] + ys * light[1]) / radius
    shade = 0.85 + sheen + 0.25 * rim + emboss * (t < 0.82)
    col = np.clip(colour[None, None, :] * shade[..., None], 0, 255)
    roi = canvas[y0:y1, x0:x1]
    roi += (col - roi) * alpha[..., None]


def _poly_alpha(shape: tuple[int, int], polys: list[np.ndarray]) -> np.ndarray:
    """Antialiased coverage (0..1 float32) of filled polygons."""
    mask = np.zeros(shape, np.uint8)
    for pts in polys:
        cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return mask.astype(np.float32) / 255.0


def _shift(mask: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """``mask`` moved by (dx, dy) pixels; edges replicate (objects cut by the frame continue)."""
    m = np.array([[1.0, 0.0, dx], [0.0, 1.0, dy]])
    return cv2.warpAffine(mask, m, (mask.shape[1], mask.shape[0]), borderMode=cv2.BORDER_REPLICATE)


def _blend(img: np.ndarray, alpha: np.ndarray, colour: np.ndarray) -> None:
    """img = img*(1-alpha) + colour*alpha where alpha > 0, in place; colour may be an image."""
    ys, xs = np.nonzero(alpha > 0.0)
    if len(xs) == 0:
        return
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    a = alpha[y0:y1, x0:x1, None]
    c = colour[y0:y1, x0:x1] if colour.ndim == 3 else colour[None, None, :]
    img[y0:y1, x0:x1] += (c - img[y0:y1, x0:x1]) * a


def _gauss(rng: np.random.Generator, shape: tuple[int, ...], sigma: float = 1.0) -> np.ndarray:
    """Gaussian noise (float32), fast: OpenCV's generator seeded from ``rng`` (deterministic)."""
    cv2.setRNGSeed(int(rng.integers(1, 2**31 - 1)))
    out = np.empty(shape, np.float32)
    cv2.randn(out, 0.0, sigma)
    return out


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cells: tuple[int, int]) -> np.ndarray:
    """Low-frequency noise in about [-1, 1], shape (h, w)."""
    small = rng.standard_normal(cells).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _grain(rng: np.random.Generator, h: int, w: int, period: float) -> np.ndarray:
    """Wood grain along x: streaks in [-1, 1] that wander a little, shape (h, w)."""
    n = rng.standard_normal(h + 40).astype(np.float32)[:, None]
    coarse = cv2.GaussianBlur(n, (1, 0), sigmaX=0.01, sigmaY=period / 3)[:, 0]
    fine = cv2.GaussianBlur(n, (1, 0), sigmaX=0.01, sigmaY=0.9)[:, 0]
    line = coarse / (np.abs(coarse).max() + 1e-6) + 0.5 * fine / (np.abs(fine).max() + 1e-6)
    rings = np.sin(np.arange(h + 40, dtype=np.float32) * (2 * math.pi / period) + 3 * coarse) ** 8
    profile = (0.6 * line - 0.8 * rings).astype(np.float32)
    wander = _smooth_noise(rng, h, w, (4, 3)) * (period * 0.8) + 20.0
    map_y = (np.arange(h, dtype=np.float32)[:, None] + wander).astype(np.float32)
    map_x = np.zeros((h, w), np.float32)
    img = cv2.remap(profile[:, None], map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    return np.clip(img, -1.0, 1.0)


# --------------------------------------------------------------------------- scene parts


def _render_table(rng: np.random.Generator, p: FrameParams) -> np.ndarray:
    base = np.array(p.table_bgr, np.float32) * rng.uniform(0.9, 1.1, 3).astype(np.float32)
    th, tw = IMAGE_H // TABLE_TEXTURE_STEP, IMAGE_W // TABLE_TEXTURE_STEP
    shade = 1.0 + 0.04 * _smooth_noise(rng, th, tw, (5, 7))
    if p.table_bgr in TABLE_COLOURS[:2]:  # wooden table: grain
        g = _grain(rng, th, tw, rng.uniform(7, 15))
        if rng.random() < 0.5:
            g = cv2.resize(g.T.copy(), (tw, th))
        shade *= 1.0 + 0.08 * g
    shade *= 1.0 + 0.015 * cv2.resize(_gauss(rng, (th // 2, tw // 2)), (tw, th))
    shade = cv2.resize(shade, (IMAGE_W, IMAGE_H), interpolation=cv2.INTER_LINEAR)
    return shade[..., None] * base[None, None, :]


def _rect_poly(cx: float, cy: float, ang: float, half_len: float, half_wid: float) -> np.ndarray:
    a = math.radians(ang)
    ex, ey = math.cos(a), -math.sin(a)
    nx, ny = -ey, ex
    return np.array(
        [
            (cx + sl * half_len * ex + sw * half_wid * nx, cy + sl * half_len * ey + sw * half_wid * ny)
            for sl, sw in ((-1, -1), (1, -1), (1, 1), (-1, 1))
        ]
    )


def _render_distractors(rng: np.random.Generator, img: np.ndarray, p: FrameParams) -> None:
    """Red tape strips and sheets of paper lying on the table (under the board if they meet it)."""
    for _ in range(p.distractors):
        cx, cy = rng.uniform(-40, IMAGE_W + 40), rng.uniform(-40, IMAGE_H + 40)
        ang = rng.uniform(-90, 90)
        if rng.random() < 0.55:
            colour = np.array([rng.uniform(35, 70), rng.uniform(35, 70), rng.uniform(165, 215)], np.float32)
            poly = _rect_poly(cx, cy, ang, rng.uniform(40, 160), rng.uniform(7, 15))
        else:
            g = rng.uniform(215, 248)
            colour = np.array([g - rng.uniform(0, 25), g - rng.uniform(0, 8), g], np.float32)
            poly = _rect_poly(cx, cy, ang, rng.uniform(70, 160), rng.uniform(50, 110))
        alpha = _poly_alpha((IMAGE_H, IMAGE_W), [poly])
        shadow = cv2.GaussianBlur(_shift(alpha, 2.0, 2.0), (0, 0), 1.5)
        img *= (1.0 - 0.15 * shadow)[..., None]
        _blend(img, alpha, colour)


def _piece_colour(rng: np.random.Generator, grey: float, lo: float, hi: float) -> np.ndarray:
    g = float(np.clip(grey + rng.uniform(-4, 4), lo, hi))
    return np.array([g + rng.uniform(-2, 3), g, g + rng.uniform(-2, 2)], np.float32)


def _render_supply(
    rng: np.random.Generator, img: np.ndarray, p: FrameParams, light: tuple[float, float]
) -> None:
    """Two columns of spare pieces (5 black, 5 white) on white paper or a tray, beside the board."""
    assert p.supply is not None
    cx, cy, ang, spacing, tray = p.supply
    radius = p.radius_frac * p.pitch
    poly = _supply_poly(cx, cy, ang, radius, spacing)
    alpha = _poly_alpha((IMAGE_H, IMAGE_W), [poly])
    shadow = cv2.GaussianBlur(_shift(alpha, -light[0] * 3.0, -light[1] * 3.0), (0, 0), 2.5)
    img *= (1.0 - (0.35 if tray else 0.15) * shadow)[..., None]
    if tray:
        g = rng.uniform(40, 170)
        _blend(img, alpha, np.array([g + rng.uniform(-10, 30), g, g], np.float32))
        inner = _supply_poly(cx, cy, ang, radius * 0.85, spacing)
        _blend(img, _poly_alpha((IMAGE_H, IMAGE_W), [inner]) * 0.35, np.array([g * 0.7] * 3, np.float32))
    else:
        g = rng.uniform(225, 250)
        _blend(img, alpha, np.array([g - rng.uniform(0, 12), g - rng.uniform(0, 4), g], np.float32))
    a = math.radians(ang)
    ex, ey = math.cos(a), -math.sin(a)
    nx, ny = -ey, ex
    shadow_off = (-light[0] * 0.14 * radius, -light[1] * 0.14 * radius)
    for col_idx, (grey, lo, hi) in enumerate(((p.black_grey, *BLACK_GREY), (p.white_grey, *WHITE_GREY))):
        side = -1.15 if col_idx == 0 else 1.15
        for k in range(SUPPLY_COUNT):
            along = (k - (SUPPLY_COUNT - 1) / 2.0) * spacing
            px = cx + along * ex + side * radius * nx + rng.uniform(-1, 1)
            py = cy + along * ey + side * radius * ny + rng.uniform(-1, 1)
            _draw_disc_shadow(img, px, py, radius, shadow_off, 0.45)
            _draw_piece(img, px, py, radius, _piece_colour(rng, grey, lo, hi), light, p.glossy, 0.3)


def _render_board(
    rng: np.random.Generator, p: FrameParams, light_img: tuple[float, float]
) -> tuple[np.ndarray, float]:
    """The plate with its grid and pieces in the board's own frame, at SUPERSAMPLE then reduced.

    Returns a float32 (N, N, 4) BGRA canvas whose pixel X corresponds to board offset X + 0.5 - N/2.
    """
    pitch = p.pitch
    half_plate = 1.5 * pitch + p.plate_margin_frac * pitch
    n = 2 * math.ceil(half_plate + 4.0)
    h = n / 2.0
    ss = SUPERSAMPLE
    ns = n * ss

    def to_ss(u: float) -> float:
        return (u + h) * ss - 0.5

    # plate texture (a brightness factor) at 1x, then upsampled
    shade1 = 1.0 + 0.025 * _smooth_noise(rng, n, n, (4, 4))
    if p.plate_kind == "wood":
        g = _grain(rng, n, n, rng.uniform(6, 14) * n / 200.0 + 4.0)
        if rng.random() < 0.5:
            g = g.T.copy()
        shade1 *= 1.0 + 0.12 * g
    shade1 *= 1.0 + 0.012 * _gauss(rng, (n, n))
    shade = cv2.resize(shade1, (ns, ns), interpolation=cv2.INTER_LINEAR)

    coords = np.arange(ns, dtype=np.float32)
    # plate outline with a slightly darker bevel at the edge
    edge = h * ss - np.abs(coords + 0.5 - h * ss)  # distance (ss px) inside the canvas edge
    inside = edge - (h - half_plate) * ss
    cov = np.clip(inside + 0.5, 0.0, 1.0)
    plate_alpha = cov[:, None] * cov[None, :]
    bevel_w = max(1.0, 0.03 * pitch) * ss
    bev = 1.0 - 0.15 * np.clip(1.0 - inside / bevel_w, 0.0, 1.0)
    shade *= np.minimum(bev[:, None], bev[None, :])

    # grid lines (4 + 4, separable coverage)
    half_w = p.line_frac * pitch / 2.0 * ss
    span_half = (1.5 * pitch + p.line_frac * pitch / 2.0) * ss
    span = np.clip(span_half - np.abs(coords - to_ss(0.0)) + 0.5, 0.0, 1.0)
    across = np.zeros(ns, np.float32)
    for i in range(4):
        pos = to_ss((i - 1.5) * pitch)
        across = np.maximum(across, np.clip(half_w - np.abs(coords - pos) + 0.5, 0.0, 1.0))
    line_alpha = np.maximum(across[None, :] * span[:, None], span[None, :] * across[:, None])
    shade *= 1.0 - line_alpha
    canvas = shade[..., None] * np.array(p.plate_bgr, np.float32)[None, None, :]
    canvas += line_alpha[..., None] * np.array(p.line_bgr, np.float32)[None, None, :]

    # pieces: light and shadow directions are fixed in the image, so rotate them into the board frame
    a = math.radians(p.angle)
    lx = light_img[0] * math.cos(a) - light_img[1] * math.sin(a)
    ly = light_img[0] * math.sin(a) + light_img[1] * math.cos(a)
    radius = p.radius_frac * pitch * ss
    shadow_len = radius * rng.uniform(0.08, 0.18)
    shadow_off = (-lx * shadow_len, -ly * shadow_len)
    shadow_strength = rng.uniform(0.35, 0.6)
    rim_dark = rng.uniform(0.2, 0.45)
    centres = []
    for idx, ch in enumerate(p.board):
        if ch == ".":
            continue
        r, c = divmod(idx, 3)
        ox, oy = p.piece_offsets[idx]
        centres.append((to_ss((c - 1 + ox) * pitch), to_ss((r - 1 + oy) * pitch), ch))
    for x, y, _ in centres:
        _draw_disc_shadow(canvas, x, y, radius, shadow_off, shadow_strength)
    for x, y, ch in centres:
        if ch == "X":
            colour = _piece_colour(rng, p.black_grey, *BLACK_GREY)
        else:
            colour = _piece_colour(rng, p.white_grey, *WHITE_GREY)
        _draw_piece(canvas, x, y, radius, colour, (lx, ly), p.glossy, rim_dark)

    small = cv2.resize(canvas, (n, n), interpolation=cv2.INTER_AREA)
    small_alpha = cv2.resize(plate_alpha.astype(np.float32), (n, n), interpolation=cv2.INTER_AREA)
    return cv2.merge([*cv2.split(small), small_alpha]), h


def _render_hand(
    rng: np.random.Generator, p: FrameParams, m: np.ndarray, grid_mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """An arm coming from a frame edge with a palm and fingers over part of the board.

    Returns (alpha float32, colour image float32) or None if the draw did not cover part of the grid.
    """
    pitch = p.pitch
    grid_area = float((grid_mask > 0).sum())
    palm_w = rng.uniform(1.2, 1.9) * pitch
    palm_len = palm_w * rng.uniform(1.0, 1.2)
    finger_len = palm_len * rng.uniform(0.6, 0.85)
    finger_w = 0.22 * palm_w
    target = _project(m, np.array([[rng.uniform(-1.3, 1.3) * pitch, rng.uniform(-1.3, 1.3) * pitch]]))[0]
    psi = rng.uniform(0, 2 * math.pi)
    d = np.array([math.cos(psi), math.sin(psi)])  # direction the hand points (towards the board)
    nrm = np.array([-d[1], d[0]])
    palm_c = target - d * (finger_len + palm_len / 2.0) * 0.9
    far = palm_c - d * 2000.0
    mask = np.zeros((IMAGE_H, IMAGE_W), np.uint8)

    def pt(v: np.ndarray) -> tuple[int, int]:
        return (round(float(v[0]) * 16), round(float(v[1]) * 16))

    arm_w = 0.85 * palm_w
    arm = np.array(
        [palm_c + nrm * arm_w / 2, far + nrm * arm_w / 1.6, far - nrm * arm_w / 1.6, palm_c - nrm * arm_w / 2]
    )
    cv2.fillPoly(mask, [np.round(arm * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    cv2.ellipse(
        mask,
        pt(palm_c),
        (round(palm_len / 2 * 16), round(palm_w / 2 * 16)),
        math.degrees(psi),
        0,
        360,
        255,
        -1,
        cv2.LINE_AA,
        shift=4,
    )
    front = palm_c + d * palm_len * 0.35
    curl = rng.uniform(0.6, 1.0)
    for k, frac in enumerate((-0.36, -0.12, 0.12, 0.36)):
        base = front + nrm * frac * palm_w
        spread = math.radians(frac * rng.uniform(10, 30) + rng.uniform(-4, 4))
        fd = np.array(
            [
                d[0] * math.cos(spread) - d[1] * math.sin(spread),
                d[0] * math.sin(spread) + d[1] * math.cos(spread),
            ]
        )
        length = finger_len * curl * (0.8 if k in (0, 3) else 1.0)
        cv2.line(mask, pt(base), pt(base + fd * length), 255, max(2, round(finger_w)), cv2.LINE_AA, shift=4)
    side = 1.0 if rng.random() < 0.5 else -1.0
    thumb_base = palm_c - d * palm_len * 0.1 + nrm * side * palm_w * 0.4
    th = math.radians(side * rng.uniform(35, 60))
    td = np.array([d[0] * math.cos(th) - d[1] * math.sin(th), d[0] * math.sin(th) + d[1] * math.cos(th)])
    cv2.line(
        mask,
        pt(thumb_base),
        pt(thumb_base + td * finger_len * 0.8),
        255,
        max(2, round(finger_w * 1.15)),
        cv2.LINE_AA,
        shift=4,
    )

    overlap = float(((mask > 127) & (grid_mask > 0)).sum())
    if not 0.1 * grid_area <= overlap <= 0.75 * grid_area:
        return None
    alpha = mask.astype(np.float32) / 255.0
    dist = cv2.distanceTransform((mask > 127).astype(np.uint8), cv2.DIST_L2, 3)
    shade = 0.68 + 0.32 * np.sqrt(np.clip(dist / (0.3 * finger_w + 2.0), 0.0, 1.0))
    skin = np.array(SKIN_COLOURS[int(rng.integers(len(SKIN_COLOURS)))], np.float32) * rng.uniform(0.9, 1.1)
    blotch = 1.0 + 0.05 * _smooth_noise(rng, IMAGE_H, IMAGE_W, (8, 10))
    colour = skin[None, None, :] * (shade * blotch)[..., None]
    return alpha, colour


def _render_pen(
    rng: np.random.Generator, img: np.ndarray, p: FrameParams, m: np.ndarray, light: tuple[float, float]
) -> np.ndarray:
    """A pen lying across a square; returns its coverage."""
    pitch = p.pitch
    sq = int(rng.integers(9))
    r, c = divmod(sq, 3)
    centre = _project(
        m,
        np.array([[(c - 1 + rng.uniform(-0.15, 0.15)) * pitch, (r - 1 + rng.uniform(-0.15, 0.15)) * pitch]]),
    )[0]
    length = rng.uniform(2.5, 4.5) * pitch
    width = rng.uniform(0.18, 0.3) * pitch
    ang = rng.uniform(0, math.pi)
    e = np.array([math.cos(ang), math.sin(ang)])
    p0 = centre - e * length * rng.uniform(0.3, 0.7)
    body_len = length * 0.85
    hw = width / 2.0
    corners = np.array([p0, p0 + e * length])
    x0, y0, x1, y1 = _roi(
        img.shape,
        corners[:, 0].min() - width - 8,
        corners[:, 1].min() - width - 8,
        corners[:, 0].max() + width + 8,
        corners[:, 1].max() + width + 8,
    )
    xs = np.arange(x0, x1, dtype=np.float32)[None, :] - p0[0]
    ys = np.arange(y0, y1, dtype=np.float32)[:, None] - p0[1]
    t = xs * e[0] + ys * e[1]
    s = -xs * e[1] + ys * e[0]

    def capsule_dist(tt: np.ndarray, ssv: np.ndarray) -> np.ndarray:
        tc = np.clip(tt, 0.0, body_len)
        return np.sqrt((tt - tc) ** 2 + ssv**2)

    # shadow first
    off = (-light[0] * 0.5 * width, -light[1] * 0.5 * width)
    ts = (xs - off[0]) * e[0] + (ys - off[1]) * e[1]
    sh_s = -(xs - off[0]) * e[1] + (ys - off[1]) * e[0]
    soft = 0.35 * width
    sh = _smoothstep((hw + soft - capsule_dist(ts, sh_s)) / (2 * soft))
    img[y0:y1, x0:x1] *= (1.0 - 0.45 * sh)[..., None]
    body_a = np.clip(hw - capsule_dist(t, s) + 0.5, 0.0, 1.0)
    taper = hw * (1.0 - 0.8 * np.clip((t - body_len) / (length - body_len), 0.0, 1.0))
    tip_a = np.clip(taper - np.abs(s) + 0.5, 0.0, 1.0) * np.clip(length - t + 0.5, 0.0, 1.0) * (t > body_len)
    alpha = np.maximum(body_a, tip_a)
    colour = np.array(PEN_COLOURS[int(rng.integers(len(PEN_COLOURS)))], np.float32)
    tip_colour = np.array([150.0, 150.0, 155.0], np.float32)
    q = np.clip(s / hw, -1.0, 1.0)
    cyl = 0.55 + 0.45 * np.sqrt(1.0 - q * q)
    spec = np.exp(-(((q + 0.35) / 0.15) ** 2)) * 0.55
    band = (np.abs(t - body_len * 0.35) < 0.04 * body_len)[..., None]
    base = np.where((t > body_len)[..., None], tip_colour, colour * np.where(band, 0.7, 1.0))
    col = base * cyl[..., None]
    col = col + (245.0 - col) * spec[..., None]
    roi = img[y0:y1, x0:x1]
    roi += (col - roi) * alpha[..., None]
    full = np.zeros((IMAGE_H, IMAGE_W), np.float32)
    full[y0:y1, x0:x1] = alpha
    return full


def _render_coin(
    rng: np.random.Generator, img: np.ndarray, p: FrameParams, m: np.ndarray, light: tuple[float, float]
) -> np.ndarray:
    """A coin lying in an empty square; returns its coverage."""
    pitch = p.pitch
    empty = [i for i, ch in enumerate(p.board) if ch == "."]
    sq = int(rng.choice(empty))
    r, c = divmod(sq, 3)
    radius_frac = rng.uniform(0.22, min(0.38, 0.5 - p.line_frac / 2 - 0.02))
    slack = max(0.0, 0.5 - p.line_frac / 2 - radius_frac - 0.02)
    off = rng.uniform(-slack, slack, 2)
    centre = _project(m, np.array([[(c - 1 + off[0]) * pitch, (r - 1 + off[1]) * pitch]]))[0]
    radius = radius_frac * pitch
    _draw_disc_shadow(
        img,
        float(centre[0]),
        float(centre[1]),
        radius,
        (-light[0] * 0.1 * radius, -light[1] * 0.1 * radius),
        0.4,
    )
    colour = np.array(COIN_COLOURS[int(rng.integers(len(COIN_COLOURS)))], np.float32)
    _draw_coin(img, float(centre[0]), float(centre[1]), radius, colour, light, rng)
    full = np.zeros((IMAGE_H, IMAGE_W), np.uint8)
    cv2.circle(
        full,
        (round(centre[0] * 16), round(centre[1] * 16)),
        round(radius * 16),
        255,
        -1,
        cv2.LINE_AA,
        shift=4,
    )
    return full.astype(np.float32) / 255.0


def _motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """A normalised 5x5 linear motion-blur kernel of subpixel ``length``."""
    k = np.zeros((5, 5), np.float32)
    a = math.radians(angle_deg)
    for t in np.linspace(-length / 2, length / 2, 33):
        x, y = 2.0 + t * math.cos(a), 2.0 + t * math.sin(a)
        ix, iy = math.floor(x), math.floor(y)
        fx, fy = x - ix, y - iy
        k[iy, ix] += (1 - fx) * (1 - fy)
        k[iy, ix + 1] += fx * (1 - fy)
        k[iy + 1, ix] += (1 - fx) * fy
        k[iy + 1, ix + 1] += fx * fy
    return k / k.sum()


def _apply_camera(
    rng: np.random.Generator, img: np.ndarray, p: FrameParams, plate_poly: np.ndarray
) -> np.ndarray:
    """Lighting (gradient, vignette, white balance), optics (defocus, motion), noise, JPEG."""
    # the light field is smooth: compute it at 1/LIGHT_MAP_STEP resolution, then resize
    step = LIGHT_MAP_STEP
    xs = (np.arange(IMAGE_W // step, dtype=np.float32)[None, :] + 0.5) * step - 0.5
    ys = (np.arange(IMAGE_H // step, dtype=np.float32)[:, None] + 0.5) * step - 0.5
    ga = math.radians(p.gradient_angle)
    gx, gy = math.cos(ga), math.sin(ga)
    proj = plate_poly @ np.array([gx, gy])
    s0, s1 = float(proj.min()), float(proj.max())
    frac = np.clip((xs * gx + ys * gy - s0) / (s1 - s0), -0.15, 1.15)
    gain = 1.0 - (1.0 - 1.0 / p.gradient_ratio) * frac
    r2 = ((xs - IMAGE_W / 2) ** 2 + (ys - IMAGE_H / 2) ** 2) / ((IMAGE_W / 2) ** 2 + (IMAGE_H / 2) ** 2)
    gain = gain * (1.0 - p.vignette * r2) * p.exposure
    if p.gradient:  # keep the bright side of a 2:1 gradient near full exposure
        gain = gain * 1.1
    field = gain[..., None] * np.array(p.wb_gains, np.float32)[None, None, :]
    img *= cv2.resize(field, (IMAGE_W, IMAGE_H), interpolation=cv2.INTER_LINEAR)
    img = cv2.GaussianBlur(img, (0, 0), p.defocus_sigma)
    if p.blur_px > 0.0:
        img = cv2.filter2D(img, -1, _motion_kernel(p.blur_px, p.blur_angle), borderType=cv2.BORDER_REFLECT)
    img += _gauss(rng, img.shape, p.noise_sigma)
    out = cv2.convertScaleAbs(cv2.max(img, 0.0))  # rounds and saturates to uint8
    if p.jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, p.jpeg_quality])
        assert ok
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out


# --------------------------------------------------------------------------- frame assembly


def _render(rng: np.random.Generator, forced: str | None) -> tuple[Sample, RenderInfo]:
    for _attempt in range(40):
        result = _try_render(rng, _sample_params(rng, forced))
        if result is not None:
            return result
    raise RuntimeError(f"could not render a frame for {forced!r}")  # pragma: no cover


def _try_render(rng: np.random.Generator, p: FrameParams) -> tuple[Sample, RenderInfo] | None:
    m = board_to_image(p)
    la = math.radians(p.light_angle)
    light = (math.cos(la), math.sin(la))  # unit vector towards the light, image frame
    plate_half = 1.5 * p.pitch + p.plate_margin_frac * p.pitch
    plate_poly = _project(m, _square_rect(plate_half))
    grid_poly = _project(m, _square_rect(1.5 * p.pitch))
    grid_mask = np.zeros((IMAGE_H, IMAGE_W), np.uint8)
    cv2.fillPoly(grid_mask, [np.round(grid_poly * 16).astype(np.int32)], 255, cv2.LINE_8, shift=4)

    hand = None
    if p.occluder == "hand":
        hand = _render_hand(rng, p, m, grid_mask)
        if hand is None:
            return None

    img = _render_table(rng, p)
    _render_distractors(rng, img, p)
    if p.supply is not None:
        _render_supply(rng, img, p, light)

    canvas, h = _render_board(rng, p, light)
    shift = np.array([[1.0, 0.0, 0.5 - h], [0.0, 1.0, 0.5 - h], [0.0, 0.0, 1.0]])
    warp = m @ shift
    board = cv2.warpPerspective(canvas, warp, (IMAGE_W, IMAGE_H), flags=cv2.INTER_LINEAR, borderValue=0)
    alpha = board[..., 3]
    off = np.array([[1.0, 0.0, -light[0] * 4.0], [0.0, 1.0, -light[1] * 4.0], [0.0, 0.0, 1.0]])
    sh = cv2.warpPerspective(canvas[..., 3], off @ warp, (IMAGE_W, IMAGE_H), flags=cv2.INTER_LINEAR)
    # composite only around the plate (and its shadow)
    x0, y0, x1, y1 = _roi(img.shape, *(plate_poly.min(axis=0) - 16), *(plate_poly.max(axis=0) + 16))
    sh = cv2.GaussianBlur(sh[y0:y1, x0:x1], (0, 0), 3.0)
    roi = img[y0:y1, x0:x1]
    roi *= (1.0 - 0.35 * sh)[..., None]
    a = alpha[y0:y1, x0:x1, None]
    roi += (board[y0:y1, x0:x1, :3] - roi) * a

    occ_alpha: np.ndarray | None = None
    if hand is not None:
        hand_alpha, hand_colour = hand
        hs = cv2.GaussianBlur(_shift(hand_alpha, -light[0] * 14.0, -light[1] * 14.0), (0, 0), 7.0)
        img *= (1.0 - 0.45 * hs)[..., None]
        img += (hand_colour - img) * hand_alpha[..., None]
        occ_alpha = hand_alpha
    elif p.occluder == "pen":
        occ_alpha = _render_pen(rng, img, p, m, light)
    elif p.occluder == "coin":
        occ_alpha = _render_coin(rng, img, p, m, light)

    image = _apply_camera(rng, img, p, plate_poly)
    x1 = _project(m, np.array([[0.0, 0.0], [1.5 * p.pitch, 0.0]]))
    centre = (float(x1[0, 0]), float(x1[0, 1]))
    angle = math.degrees(math.atan2(-(x1[1, 1] - x1[0, 1]), x1[1, 0] - x1[0, 0]))
    sample = Sample(
        image=image,
        board=p.board,
        centre_px=centre,
        angle_deg=float(angle),
        pitch_px=p.pitch,
        occluded=p.occluder is not None,
        conditions=conditions_of(p),
    )
    info = RenderInfo(
        params=p,
        plate_mask=(alpha > 0.5).astype(np.uint8) * 255,
        grid_mask=grid_mask,
        occluder_mask=None if occ_alpha is None else (occ_alpha > 0.5).astype(np.uint8) * 255,
    )
    return sample, info


def _frame_rng(seed: int, family: int, index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, family, index]))


def make_condition_with_info(tag: str, n: int, seed: int) -> list[tuple[Sample, RenderInfo]]:
    """``n`` frames that all have ``tag``, with their render masks (for testing the generator)."""
    if tag not in TAGS:
        raise ValueError(f"unknown tag {tag!r}; known: {', '.join(TAGS)}")
    family = TAGS.index(tag) + 1
    return [_render(_frame_rng(seed, family, i), tag) for i in range(n)]


def make_condition(tag: str, n: int, seed: int) -> list[Sample]:
    """``n`` frames that all have ``tag`` (other parameters random); deterministic for a seed."""
    return [s for s, _ in make_condition_with_info(tag, n, seed)]


def set_families(n: int, seed: int) -> list[str | None]:
    """The forced tag (None: unforced) of each frame of ``make_set(n, seed)``.

    Cycles of len(TAGS) + RANDOM_FAMILIES_PER_CYCLE, each shuffled: every tag appears in any
    ``n >= len(TAGS) + RANDOM_FAMILIES_PER_CYCLE`` frames, and about 10% of frames are occluded.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, 0, 0]))
    cycle: list[str | None] = [*TAGS, *([None] * RANDOM_FAMILIES_PER_CYCLE)]
    out: list[str | None] = []
    while len(out) < n:
        out.extend(cycle[int(i)] for i in rng.permutation(len(cycle)))
    return out[:n]


def make_set_with_info(n: int, seed: int) -> list[tuple[Sample, RenderInfo]]:
    """Like :func:`make_set`, with each frame's render masks."""
    return [_render(_frame_rng(seed, 0, i + 1), fam) for i, fam in enumerate(set_families(n, seed))]


def make_frame(index: int, seed: int) -> Sample:
    """Frame ``index`` of ``make_set(n, seed)`` for any ``n`` above it, rendered alone."""
    family = set_families(index + 1, seed)[index]
    return _render(_frame_rng(seed, 0, index + 1), family)[0]


def make_set(n: int, seed: int) -> list[Sample]:
    """``n`` frames cycling through the condition families; deterministic for a seed."""
    return [s for s, _ in make_set_with_info(n, seed)]
