"""Sealed synthetic camera frames of a tic-tac-toe board, written independently of the reader.

Contract
--------
* :func:`make_set` ``(n, seed)`` returns ``n`` :class:`Sample` objects; sample ``i`` depends only on
  ``(seed, i)``, so ``make_set(60, s) == make_set(300, s)[:60]`` pixel for pixel.
* :func:`render_sample` ``(seed, i)`` equals ``make_set(i + 1, seed)[i]``.
* ``Sample.image`` is BGR ``uint8`` of shape ``(480, 640, 3)``.
* ``Sample.board`` has 9 characters (``X`` black piece, ``O`` white piece, ``.`` empty), row-major in the
  board frame folded so that ``angle_deg`` lies in ``(-45, 45]``: the square that appears top-left in
  that frame is ``board[0]``.  Only pieces resting on the plate count; occluders never do.
* ``centre_px`` is the image position of the centre square's centre, ``pitch_px`` the mean image
  distance from it to the centres of its four neighbours, ``angle_deg`` the direction of the folded
  board x axis (from the left neighbour's centre to the right one's), counter-clockwise as seen with
  image y pointing down.  All three are measured after lens distortion.
* The seen rotation is kept at least :data:`FOLD_GUARD_DEG` away from the fold boundary (+-45 deg).
* The whole plate (top face and side) lies inside the frame.
* ``occluded`` is true iff something that is not a piece lies over the board's squares or lines.
* ``tags`` is a subset of :data:`ALL_TAGS` naming the conditions drawn (see README.md).

Everything is drawn from numpy, OpenCV and the standard library only; randomness comes from
``np.random.SeedSequence([seed, i])`` and a few stratifying streams keyed by ``(seed, salt, block)``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any, Final

import cv2
import numpy as np

# --------------------------------------------------------------------------------------------------
# Frame and truth contract
# --------------------------------------------------------------------------------------------------
IMG_W: Final = 640
IMG_H: Final = 480
N_SIDE: Final = 3
FOLD_GUARD_DEG: Final = 1.0
PITCH_MIN_PX: Final = 35.0
PITCH_MAX_PX: Final = 90.0
FIT_MARGIN_PX: Final = 3.0
GRID_HALF: Final = 1.5  # board units (1 unit = 1 pitch) from the centre to an outer line's axis

# Camera
FOCAL_RANGE_PX: Final = (500.0, 620.0)
PRINCIPAL_JITTER_PX: Final = (8.0, 6.0)
TILT_MAX_DEG: Final = 15.0
TILT_TAG_DEG: Final = 5.0
BARREL_K_RANGE: Final = (0.012, 0.05)
CHROMA_MAX_PX: Final = 1.0
DIST_NORM_PX: Final = 400.0  # half-diagonal of the frame: distortion radius 1 at the corners
MOTION_MAX_PX: Final = 2.0
DEFOCUS_SIGMA_RANGE: Final = (0.6, 1.5)
JPEG_RANGE: Final = (50, 95)
READ_NOISE_RANGE: Final = (0.6, 3.0)
SHOT_NOISE_RANGE: Final = (0.02, 0.25)
PITCH_SMALL_TAG_PX: Final = 50.0
PITCH_LARGE_TAG_PX: Final = 75.0
DIAGONAL_TAG_DEG: Final = 30.0

# Stratification (every category cycles through all its values in each block of frames)
SALT_BOARD: Final = 101
SALT_PLATE: Final = 102
SALT_TABLE: Final = 103
SALT_LINES: Final = 104
SALT_OCC_SLOTS: Final = 105
SALT_OCC_KIND: Final = 106
OCC_BLOCK: Final = 25
OCC_PER_BLOCK: Final = 3  # 3 / 25 = 12 % occluded frames

BOARD_KINDS: Final = ("empty", "full", "game", "random")
PLATE_KINDS: Final = (
    "white",
    "light_grey",
    "mid_grey",
    "wood",
    "dark",
    "blue",
    "green",
    "red",
    "yellow",
    "pastel",
    "paper",
)
TABLE_KINDS: Final = ("wood", "cloth", "laminate", "paper", "dark")
LINE_STYLES: Final = ("printed", "marker", "engraved")
OCCLUDER_KINDS: Final = ("hand", "pen", "coin", "gantry", "paper", "held_piece")
CLUTTER_KINDS: Final = ("paper", "tape", "phone", "ruler", "cable", "gantry_parked")

# Plate
MARGIN_PROB: Final = 0.7
MARGIN_RANGE: Final = (0.08, 0.7)
LINE_WIDTH_RANGE: Final = (0.02, 0.12)
THIN_LINE: Final = 0.05
THICK_LINE: Final = 0.08
PLATE_GLOSSY_PROB: Final = 0.35
PLATE_SUPERSAMPLE: Final = 1.15
PLATE_PAD_PX: Final = 2
LIGHT_LINE_LUMA: Final = 95.0
DARK_LINE_LUMA: Final = 150.0

# Pieces
PIECE_RADIUS_RANGE: Final = (0.20, 0.45)
PIECE_OFFSET_MAX: Final = 0.1
BLACK_GREY_RANGE: Final = (15.0, 55.0)
WHITE_GREY_RANGE: Final = (205.0, 245.0)
VISIBLE_GREY_GAP: Final = 12.0
NEAR_TONE_GAP: Final = 20.0
FLAT_HEIGHT_RANGE: Final = (0.07, 0.16)
DOME_EDGE_RANGE: Final = (0.025, 0.05)
DOME_HEIGHT_RANGE: Final = (0.06, 0.14)
RIM_DARK_RANGE: Final = (0.55, 0.78)
RIM_WIDTH_RANGE: Final = (0.06, 0.14)
CONTACT_SHADOW_RANGE: Final = (0.25, 0.55)
SUPPLY_PER_COLOUR: Final = 5
PIECE_SPRITE_SCALE: Final = 1.3
FLAT_GLINT_REACH: Final = 0.55  # lamp reflection on a flat glossy top: distance from centre / r
FLAT_GLINT_SIGMA: Final = 0.12
FLAT_GLINT_PEAK: Final = 0.6
DOME_GLINT_PEAK: Final = 0.9
DOME_GLINT_EXPONENT: Final = 300.0  # a tight lamp reflection, not a broad sheen
CIRCLE_POINTS: Final = 40

# Lighting
GRADIENT_RATIO_RANGE: Final = (1.5, 2.0)
VIGNETTE_RANGE: Final = (0.15, 0.4)
FLICKER_AMP_RANGE: Final = (0.015, 0.04)
FLICKER_PERIOD_RANGE: Final = (30.0, 140.0)
ARM_SHADOW_RANGE: Final = (0.25, 0.5)
GLARE_AMP_RANGE: Final = (40.0, 110.0)
WB_SHIFT_RANGE: Final = (0.08, 0.22)
CLIP_OVER_RANGE: Final = (1.05, 1.3)
CRUSH_RANGE: Final = (0.85, 1.05)
BRIGHT_PLATE_LUMA: Final = 185.0
DARK_PLATE_LUMA: Final = 60.0
GAIN_MAP_SCALE: Final = 4

Colour = tuple[float, float, float]
ALL_TAGS: Final = frozenset(
    [f"board:{k}" for k in BOARD_KINDS]
    + [f"plate:{k}" for k in PLATE_KINDS]
    + ["plate:glossy", "plate:margin", "plate:no_margin"]
    + [f"lines:{k}" for k in LINE_STYLES]
    + ["lines:dark", "lines:light", "lines:thin", "lines:thick"]
    + ["pieces:flat", "pieces:domed", "pieces:matte", "pieces:glossy", "pieces:rim"]
    + ["pieces:contact_shadow", "pieces:offset", "pieces:white_on_white", "pieces:black_on_dark"]
    + ["light:warm", "light:cool", "light:gradient", "light:vignette", "light:lamp_glare"]
    + ["light:flicker", "light:arm_shadow"]
    + ["cam:tilt", "cam:barrel", "cam:chroma", "cam:motion_blur", "cam:defocus", "cam:noise"]
    + ["cam:jpeg", "cam:clipped", "cam:crushed", "cam:pitch_small", "cam:pitch_large"]
    + ["geom:diagonal"]
    + [f"clutter:{k}" for k in CLUTTER_KINDS]
    + ["clutter:supply", "clutter:supply_tray", "clutter:supply_paper"]
    + [f"table:{k}" for k in TABLE_KINDS]
    + [f"occluded:{k}" for k in OCCLUDER_KINDS]
)


# --------------------------------------------------------------------------------------------------
# Public types
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Sample:
    """One synthetic frame and its folded truth (see the module docstring for the contract)."""

    image: np.ndarray
    board: str
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    occluded: bool
    tags: frozenset[str]
    plate_px: tuple[tuple[float, float], ...] = ()
    coin_squares: tuple[int, ...] = ()
    seed: int = 0
    index: int = 0

    def __eq__(self, other: object) -> bool:
        """Equal when every field matches and the images are identical pixel for pixel."""
        if not isinstance(other, Sample):
            return NotImplemented
        return (
            self.board == other.board
            and self.centre_px == other.centre_px
            and self.angle_deg == other.angle_deg
            and self.pitch_px == other.pitch_px
            and self.occluded == other.occluded
            and self.tags == other.tags
            and self.plate_px == other.plate_px
            and self.coin_squares == other.coin_squares
            and self.seed == other.seed
            and self.index == other.index
            and self.image.shape == other.image.shape
            and bool(np.array_equal(self.image, other.image))
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Geometry:
    """Camera and board pose. World units are board pitches; Z is height above the plate top."""

    focal_px: float
    principal: tuple[float, float]
    height: float
    tilt_deg: float
    tilt_dir_deg: float
    barrel_k: float
    chroma_px: tuple[float, float]  # radial shift of (blue, red) at the frame corner, px
    centre_world: tuple[float, float]
    theta_deg: float  # in-plane rotation of the plate, counter-clockwise as seen
    margin: float  # plate beyond the outer lines' outer edge
    line_width: float
    thickness: float

    @property
    def half_size(self) -> float:
        """Half the plate side, board units."""
        return GRID_HALF + self.line_width / 2 + self.margin


@dataclass(frozen=True)
class PlateStyle:
    """Look of the plate and its lines."""

    kind: str
    colour: Colour
    side_colour: Colour
    glossy: bool
    line_style: str
    line_colour: Colour
    line_light: bool


@dataclass(frozen=True)
class PieceStyle:
    """Look of the piece set (board and supply share it)."""

    radius: float
    height: float  # wall height of a flat disc, or the edge height under a dome
    dome: float  # 0 for flat discs
    glossy: bool
    rim_dark: float  # 1.0 means no darker rim
    rim_width: float  # fraction of the radius
    black: float
    white: float
    tint: Colour
    shadow: float
    wall_shade: float
    offsets: tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Lighting:
    """Illumination and exposure."""

    azimuth_deg: float
    elevation_deg: float
    wb: Colour
    gradient: float
    gradient_dir_deg: float
    vignette: float
    flicker: tuple[float, float, float]  # amplitude, period px, phase
    arm_shadow: tuple[float, float, float, float, float] | None  # angle, offset, width, soft, depth
    glare: tuple[float, float, float, float] | None  # u, v, sigma (board units), amplitude
    exposure: float
    black_level: float


@dataclass(frozen=True)
class CameraFx:
    """Optics and sensor effects applied after the scene is composed."""

    defocus_sigma: float
    motion_px: float
    motion_deg: float
    read_noise: float
    shot_noise: float
    jpeg_quality: int  # 0: no JPEG round trip


@dataclass(frozen=True)
class Item:
    """A clutter object or an occluder: a kind and its drawing parameters."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Scene:
    """Every random choice for one frame; :func:`render_scene` is a pure function of it."""

    seed: int
    index: int
    clean: bool
    board: str  # plate frame, row-major (rows along the plate's +v, columns along +u)
    geometry: Geometry
    plate: PlateStyle
    pieces: PieceStyle
    table_kind: str
    table_colour: Colour
    light: Lighting
    camera: CameraFx
    supply: Item | None
    clutter: tuple[Item, ...]
    occluder: Item | None
    tags: frozenset[str]
    tex_seed: int


# --------------------------------------------------------------------------------------------------
# Geometry
# --------------------------------------------------------------------------------------------------
def _rotation(g: Geometry) -> np.ndarray:
    """Camera rotation: a tilt of ``tilt_deg`` about a horizontal axis at ``tilt_dir_deg``."""
    phi = math.radians(g.tilt_dir_deg)
    vec = np.array([math.cos(phi), math.sin(phi), 0.0]) * math.radians(g.tilt_deg)
    return cv2.Rodrigues(vec)[0]


def _intrinsics(g: Geometry) -> np.ndarray:
    return np.array([[g.focal_px, 0.0, g.principal[0]], [0.0, g.focal_px, g.principal[1]], [0.0, 0.0, 1.0]])


def _project(g: Geometry, pts: np.ndarray) -> np.ndarray:
    """World points (N, 3) to undistorted pixel coordinates (N, 2); pixel centres are integers."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
    q = np.column_stack([pts[:, 0], pts[:, 1], g.height - pts[:, 2]])
    pc = q @ _rotation(g).T
    return g.focal_px * pc[:, :2] / pc[:, 2:3] + np.array(g.principal)


def _backproject(g: Geometry, xy: np.ndarray, z: float) -> np.ndarray:
    """Undistorted pixels (N, 2) to world points on the plane at height ``z`` (N, 3)."""
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    d = np.column_stack([(xy - np.array(g.principal)) / g.focal_px, np.ones(len(xy), dtype=np.float64)])
    q = d @ _rotation(g)  # R^T d for each row
    s = (g.height - z) / q[:, 2]
    return np.column_stack([s * q[:, 0], s * q[:, 1], np.full(len(xy), z)])


def _board_axes(g: Geometry) -> tuple[np.ndarray, np.ndarray]:
    """World directions of the plate's +u (x) and +v (y, down) axes."""
    t = math.radians(g.theta_deg)
    return np.array([math.cos(t), -math.sin(t)]), np.array([math.sin(t), math.cos(t)])


def _board_to_world(g: Geometry, uv: np.ndarray, z: float = 0.0) -> np.ndarray:
    uv = np.asarray(uv, dtype=np.float64).reshape(-1, 2)
    ex, ey = _board_axes(g)
    xy = np.array(g.centre_world) + uv[:, :1] * ex + uv[:, 1:2] * ey
    return np.column_stack([xy, np.full(len(uv), z)])


def _board_homography(g: Geometry, z: float = 0.0) -> np.ndarray:
    """Homography from board units (u, v) on the plane at height ``z`` to undistorted pixels."""
    ex, ey = _board_axes(g)
    m = np.array(
        [
            [ex[0], ey[0], g.centre_world[0]],
            [ex[1], ey[1], g.centre_world[1]],
            [0.0, 0.0, g.height - z],
        ]
    )
    return _intrinsics(g) @ _rotation(g) @ m


def _jacobian(g: Geometry, world: np.ndarray) -> np.ndarray:
    """2x2 derivative of the undistorted image position with respect to world (X, Y)."""
    eps = 1e-3
    w = np.asarray(world, dtype=np.float64).reshape(3)
    pts = w + np.array([[0.0, 0.0, 0.0], [eps, 0.0, 0.0], [0.0, eps, 0.0]])
    p = _project(g, pts)
    return np.column_stack([(p[1] - p[0]) / eps, (p[2] - p[0]) / eps])


def _distort(g: Geometry, pts: np.ndarray) -> np.ndarray:
    """Undistorted to distorted (green channel) pixel positions under the barrel model.

    The renderer samples a distorted pixel ``d`` from ``c + (d - c) * (1 + k r_d^2) / (1 + k)``
    (``r_d`` normalised by :data:`DIST_NORM_PX`), so corners stay put and the centre is magnified.
    """
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    k = g.barrel_k
    if k == 0.0:
        return pts.copy()
    c = np.array(g.principal)
    d = pts - c
    ru = np.hypot(d[:, 0], d[:, 1]) / DIST_NORM_PX
    rd = ru.copy()
    for _ in range(6):
        f = rd * (1 + k * rd * rd) - ru * (1 + k)
        rd -= f / (1 + 3 * k * rd * rd)
    scale = np.where(ru > 1e-12, rd / np.maximum(ru, 1e-12), 1.0 + k)
    return c + d * scale[:, None]


@dataclass(frozen=True)
class _Truth:
    centre: tuple[float, float]
    angle: float
    pitch: float
    quarter_turns: int


def _truth(g: Geometry) -> _Truth:
    uv = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float64)
    img = _distort(g, _project(g, _board_to_world(g, uv)))
    pitch = float(np.mean(np.hypot(*(img[1:] - img[0]).T)))
    d = img[1] - img[2]
    seen = math.degrees(math.atan2(-d[1], d[0]))
    k = math.ceil((seen - 45.0) / 90.0)
    folded = seen - 90.0 * k
    return _Truth((float(img[0, 0]), float(img[0, 1])), float(folded), pitch, int(k))


def _fold_board(board: str, quarter_turns: int) -> str:
    """Re-label a plate-frame board into the folded frame (``np.rot90`` by the quarter turns)."""
    grid = np.array(list(board)).reshape(N_SIDE, N_SIDE)
    return "".join(np.rot90(grid, quarter_turns).ravel().tolist())


def _folded_index(plate_index: int, quarter_turns: int) -> int:
    idx = np.rot90(np.arange(N_SIDE * N_SIDE).reshape(N_SIDE, N_SIDE), quarter_turns).ravel()
    return int(np.flatnonzero(idx == plate_index)[0])


def _plate_outline(g: Geometry, per_edge: int = 8) -> np.ndarray:
    """Undistorted image points along the plate's top and bottom edges."""
    hs = g.half_size
    t = np.linspace(-hs, hs, per_edge)
    edge = np.concatenate(
        [
            np.column_stack([t, np.full_like(t, -hs)]),
            np.column_stack([np.full_like(t, hs), t]),
            np.column_stack([t[::-1], np.full_like(t, hs)]),
            np.column_stack([np.full_like(t, -hs), t[::-1]]),
        ]
    )
    top = _project(g, _board_to_world(g, edge, 0.0))
    bottom = _project(g, _board_to_world(g, edge, -g.thickness))
    return np.concatenate([top, bottom])


def _plate_fits(g: Geometry) -> bool:
    pts = _distort(g, _plate_outline(g))
    lo = FIT_MARGIN_PX
    return bool(
        np.all(pts[:, 0] >= lo)
        and np.all(pts[:, 0] <= IMG_W - 1 - lo)
        and np.all(pts[:, 1] >= lo)
        and np.all(pts[:, 1] <= IMG_H - 1 - lo)
    )


def _plate_polygon(g: Geometry) -> np.ndarray:
    """Convex hull (undistorted px) of the plate's top face and sides."""
    hs = g.half_size
    corners = np.array([[-hs, -hs], [hs, -hs], [hs, hs], [-hs, hs]])
    pts = np.concatenate(
        [
            _project(g, _board_to_world(g, corners, 0.0)),
            _project(g, _board_to_world(g, corners, -g.thickness)),
        ]
    )
    return cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2).astype(np.float64)


def _grid_polygon(g: Geometry) -> np.ndarray:
    """Undistorted image quad of the grid (outer lines' outer edges)."""
    e = GRID_HALF + g.line_width / 2
    corners = np.array([[-e, -e], [e, -e], [e, e], [-e, e]])
    return _project(g, _board_to_world(g, corners, 0.0))


# --------------------------------------------------------------------------------------------------
# Drawing helpers (float32 BGR images, pixel centres at integer coordinates)
# --------------------------------------------------------------------------------------------------
def _bbox(pts: np.ndarray, pad: float, w: int = IMG_W, h: int = IMG_H) -> tuple[int, int, int, int] | None:
    """Integer box ``(x0, y0, x1, y1)`` around points, padded and clipped; ``None`` if empty."""
    pts = np.asarray(pts).reshape(-1, 2)
    x0 = max(math.floor(pts[:, 0].min() - pad), 0)
    y0 = max(math.floor(pts[:, 1].min() - pad), 0)
    x1 = min(math.ceil(pts[:, 0].max() + pad) + 1, w)
    y1 = min(math.ceil(pts[:, 1].max() + pad) + 1, h)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def _mask(polys: list[np.ndarray], shape: tuple[int, int], origin: tuple[float, float]) -> np.ndarray:
    """Anti-aliased coverage (float32 0..1) of filled polygons in a local box."""
    m = np.zeros(shape, np.uint8)
    for p in polys:  # one call each: fillPoly uses even-odd filling across several contours
        pts = np.round((np.asarray(p) - origin) * 16).astype(np.int32).reshape(-1, 1, 2)
        cv2.fillPoly(m, [pts], 255, cv2.LINE_AA, shift=4)
    return m.astype(np.float32) * (1.0 / 255.0)


def _fill(
    img: np.ndarray, polys: list[np.ndarray], colour: Colour | np.ndarray, opacity: float = 1.0
) -> None:
    """Paint polygons in a flat colour (or a colour image the size of their box)."""
    pts = np.concatenate([np.asarray(p).reshape(-1, 2) for p in polys])
    bb = _bbox(pts, 2, img.shape[1], img.shape[0])  # (img may be a layer smaller than the frame)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    a = _mask(polys, (y1 - y0, x1 - x0), (x0, y0)) * opacity
    roi = img[y0:y1, x0:x1]
    col = np.asarray(colour, np.float32)
    if col.ndim == 3:
        col = col[: y1 - y0, : x1 - x0]
    roi += (col - roi) * a[..., None]


def _stroke(
    img: np.ndarray, lines: list[np.ndarray], width: float, colour: Colour, opacity: float = 1.0
) -> None:
    """Paint open polylines (round caps) of about ``width`` px in a flat colour."""
    if not lines:
        return
    bb = _bbox(np.concatenate([np.asarray(q).reshape(-1, 2) for q in lines]), width + 2)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    pts = [np.round((np.asarray(q) - (x0, y0)) * 16).astype(np.int32).reshape(-1, 1, 2) for q in lines]
    cv2.polylines(m, pts, False, 255, max(1, round(width)), cv2.LINE_AA, 4)
    a = m.astype(np.float32) * (opacity / 255.0)
    roi = img[y0:y1, x0:x1]
    roi += (np.asarray(colour, np.float32) - roi) * a[..., None]


def _shadow(img: np.ndarray, polys: list[np.ndarray], depth: float, sigma: float) -> None:
    """Darken the image under soft (Gaussian-blurred) polygons by up to ``depth``."""
    if depth <= 0 or not polys:
        return
    ds = int(np.clip(sigma / 2.0, 1, 4))
    pad = 3 * sigma + 2
    bb = _bbox(np.concatenate([np.asarray(p).reshape(-1, 2) for p in polys]), pad)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    lw = (x1 - x0 + ds - 1) // ds
    lh = (y1 - y0 + ds - 1) // ds
    small = [(np.asarray(p) - (x0, y0) + 0.5) / ds - 0.5 for p in polys]
    m = _mask(small, (lh, lw), (0.0, 0.0))
    s = sigma / ds
    if s > 0.3:
        m = cv2.GaussianBlur(m, (0, 0), s)
    if ds > 1:
        m = cv2.resize(m, (lw * ds, lh * ds), interpolation=cv2.INTER_LINEAR)
    m = m[: y1 - y0, : x1 - x0]
    img[y0:y1, x0:x1] *= (1.0 - depth * m)[..., None]


def _over(roi: np.ndarray, premult: np.ndarray) -> None:
    """Composite a premultiplied BGRA layer over ``roi`` in place."""
    roi *= 1.0 - premult[..., 3:4]
    roi += premult[..., :3]


def _paste_affine(img: np.ndarray, sprite: np.ndarray, m: np.ndarray, blur: float = 0.0) -> None:
    """Warp a premultiplied BGRA sprite into the image with the 2x3 affine ``m`` (sprite -> image)."""
    h, w = sprite.shape[:2]
    corners = np.array([[-1, -1], [w, -1], [w, h], [-1, h]], dtype=np.float64)
    pts = corners @ m[:, :2].T + m[:, 2]
    bb = _bbox(pts, 2 + 3 * blur, img.shape[1], img.shape[0])  # (img may be a layer)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    mm = m.astype(np.float64).copy()
    mm[:, 2] -= (x0, y0)
    layer = cv2.warpAffine(
        sprite, mm, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT
    )
    if blur > 0.3:
        layer = cv2.GaussianBlur(layer, (0, 0), blur)
    _over(img[y0:y1, x0:x1], layer)


def _capsule(p0: np.ndarray, p1: np.ndarray, r: float, n: int = 10) -> np.ndarray:
    """Polygon of a stadium (segment ``p0``-``p1`` thickened by ``r``)."""
    p0 = np.asarray(p0, np.float64)
    p1 = np.asarray(p1, np.float64)
    d = p1 - p0
    a = math.atan2(d[1], d[0])
    arc1 = a - math.pi / 2 + np.linspace(0, math.pi, n)
    arc0 = a + math.pi / 2 + np.linspace(0, math.pi, n)
    pts1 = p1 + r * np.column_stack([np.cos(arc1), np.sin(arc1)])
    pts0 = p0 + r * np.column_stack([np.cos(arc0), np.sin(arc0)])
    return np.concatenate([pts1, pts0])


def _rect(centre: np.ndarray, size: tuple[float, float], angle_deg: float) -> np.ndarray:
    """Corners of a rotated rectangle (width along the angle, height across it)."""
    a = math.radians(angle_deg)
    ux = np.array([math.cos(a), math.sin(a)])
    uy = np.array([-math.sin(a), math.cos(a)])
    w, h = size[0] / 2, size[1] / 2
    c = np.asarray(centre, np.float64)
    return np.array([c - ux * w - uy * h, c + ux * w - uy * h, c + ux * w + uy * h, c - ux * w + uy * h])


def _rounded_rect(centre: np.ndarray, size: tuple[float, float], angle_deg: float, r: float) -> np.ndarray:
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    w, h = size[0] / 2 - r, size[1] / 2 - r
    pts = []
    for cx, cy, start in ((w, h, 0), (-w, h, 90), (-w, -h, 180), (w, -h, 270)):
        t = np.radians(start + np.linspace(0, 90, 6))
        pts.append(np.column_stack([cx + r * np.cos(t), cy + r * np.sin(t)]))
    return np.concatenate(pts) @ rot.T + np.asarray(centre, np.float64)


def _noise(rng: np.random.Generator, h: int, w: int, cell_y: float, cell_x: float) -> np.ndarray:
    """Smooth noise (roughly unit amplitude) with feature size ``cell`` px, float32 (h, w)."""
    gh = max(int(h / cell_y) + 3, 2)
    gw = max(int(w / cell_x) + 3, 2)
    g = rng.standard_normal((gh, gw)).astype(np.float32)
    return cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)


def _luma(c: Colour | np.ndarray) -> float:
    return float(0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2])


def _light_vector(light: Lighting) -> np.ndarray:
    az = math.radians(light.azimuth_deg)
    el = math.radians(light.elevation_deg)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def _shadow_shift(light: Lighting, z: float) -> np.ndarray:
    """World (X, Y) displacement of the shadow of a point at height ``z``."""
    lv = _light_vector(light)
    return -z * lv[:2] / lv[2]


class _Workspace(threading.local):
    """Per-thread full-frame scratch buffers.

    Re-using them avoids allocating (and page-faulting) several megabytes per frame, which would
    otherwise cost about a fifth of the render time.  Nothing in them outlives a render call.
    """

    def __init__(self) -> None:
        shape = (IMG_H, IMG_W, 3)
        self.frames = [np.empty(shape, np.float32) for _ in range(3)]
        self.planes = [np.empty((IMG_H, IMG_W), np.float32) for _ in range(4)]


_WS = _Workspace()


# --------------------------------------------------------------------------------------------------
# Table and plate textures
# --------------------------------------------------------------------------------------------------
def _table_image(rng: np.random.Generator, kind: str, colour: Colour, out: np.ndarray) -> np.ndarray:
    """Full-frame table texture (float32 BGR), written into ``out``."""
    h, w = IMG_H // 2, IMG_W // 2
    if kind == "wood":
        along_x = rng.random() < 0.5
        hh, ww = (h, w) if along_x else (w, h)
        t = np.arange(hh, dtype=np.float32)[:, None] + _noise(rng, hh, ww, 30, 90) * rng.uniform(2, 6)
        period = rng.uniform(2.5, 6.0)
        grain = (0.5 + 0.5 * np.sin(t * (2 * math.pi / period))) ** 3
        plank_w = rng.uniform(35, 90)
        off = rng.uniform(0, plank_w)
        idx = ((np.arange(hh) + off) // plank_w).astype(int)
        plank = rng.uniform(-0.1, 0.1, idx.max() + 1).astype(np.float32)[idx][:, None]
        seam = (((np.arange(hh) + off) % plank_w) < 1.0).astype(np.float32)[:, None]
        lum = 1.0 + plank - 0.12 * grain + 0.05 * _noise(rng, hh, ww, 1.5, 25) - 0.35 * seam
        if not along_x:
            lum = np.ascontiguousarray(lum.T)
    elif kind == "cloth":
        lum = 1.0 + 0.08 * _noise(rng, h, w, 40, 40) + 0.03 * _noise(rng, h, w, 1.2, 1.2)
    elif kind == "laminate":
        lum = 1.0 + 0.025 * _noise(rng, h, w, 1.0, 1.0) + 0.03 * _noise(rng, h, w, 60, 60)
    elif kind == "paper":
        lum = 1.0 + 0.03 * _noise(rng, h, w, 1.0, 6.0) + 0.05 * _noise(rng, h, w, 80, 80)
    else:  # dark
        lum = 1.0 + 0.06 * _noise(rng, h, w, 1.0, 1.0) + 0.08 * _noise(rng, h, w, 50, 50)
    lum = cv2.resize(
        lum.astype(np.float32), (IMG_W, IMG_H), dst=_WS.planes[0], interpolation=cv2.INTER_LINEAR
    )
    if kind == "cloth":
        p = rng.uniform(3.0, 5.0)
        wx = np.sin(np.arange(IMG_W, dtype=np.float32) * (2 * math.pi / p))
        wy = np.sin(np.arange(IMG_H, dtype=np.float32) * (2 * math.pi / p))
        weave = np.outer(wy * np.float32(0.05), wx, out=_WS.planes[1])
        lum += weave
    col = np.asarray(colour, np.float32)
    for ch in range(3):
        np.multiply(lum, col[ch], out=_WS.planes[1 + ch])
    return cv2.merge(_WS.planes[1:4], dst=out)


def _line_profile(
    rng: np.random.Generator, n: int, amp: float, width_var: float, smooth_px: float
) -> tuple[np.ndarray, np.ndarray]:
    """Centre offset and relative half-width along a line (marker wobble), float64 (n,)."""
    if amp == 0.0 and width_var == 0.0:
        return np.zeros(n), np.ones(n)
    k = max(int(n / smooth_px) + 3, 3)
    c = cv2.resize(rng.standard_normal((k, 1)), (1, n), interpolation=cv2.INTER_CUBIC).ravel()
    wv = cv2.resize(rng.standard_normal((k, 1)), (1, n), interpolation=cv2.INTER_CUBIC).ravel()
    slope = rng.uniform(-1, 1) * amp * np.linspace(-1, 1, n)
    return amp * 0.6 * c + slope, 1.0 + width_var * np.clip(wv, -2, 2)


def _box_cov(x: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float, hp: float) -> np.ndarray:
    """Fraction of each pixel ``[x - hp, x + hp]`` inside ``[lo, hi]``."""
    return np.clip((np.minimum(x + hp, hi) - np.maximum(x - hp, lo)) / (2 * hp), 0.0, 1.0)


def _plate_texture(
    rng: np.random.Generator, g: Geometry, style: PlateStyle, light: Lighting, scale: float
) -> np.ndarray:
    """Premultiplied BGRA texture of the plate top, ``scale`` px per board unit, centred."""
    hs = g.half_size
    n = math.ceil(2 * hs * scale) + 2 * PLATE_PAD_PX
    c0 = (n - 1) / 2
    coord = (np.arange(n, dtype=np.float64) - c0) / scale
    hp = 0.5 / scale
    cov = _box_cov(coord, -hs, hs, hp).astype(np.float32)
    alpha = np.outer(cov, cov)

    colour = np.asarray(style.colour, np.float32)
    lum = 1.0 + 0.012 * _noise(rng, n, n, 1.0, 1.0)
    if style.kind == "wood":
        along_u = rng.random() < 0.5
        t = coord[:, None] if along_u else coord[None, :]
        warp = _noise(rng, n, n, scale * 0.8, scale * 2.5) * rng.uniform(0.02, 0.08)
        period = rng.uniform(0.05, 0.14)
        ring = (0.5 + 0.5 * np.sin((t + warp) * (2 * math.pi / period))) ** 4
        fib = _noise(rng, n, n, 1.0, 12.0) if along_u else _noise(rng, n, n, 12.0, 1.0)
        lum = lum - 0.16 * ring.astype(np.float32) + 0.04 * fib
    elif style.kind == "paper":
        lum = lum + 0.035 * _noise(rng, n, n, scale * 0.8, scale * 0.8)
    else:
        lum = lum + 0.015 * _noise(rng, n, n, scale, scale)

    if style.kind == "paper":
        # Crease: a straight fold with a light and a dark flank.
        a = rng.uniform(0, math.pi)
        off = rng.uniform(-0.6, 0.6) * hs
        d = (coord[None, :] * math.cos(a) + coord[:, None] * math.sin(a) - off) / rng.uniform(0.03, 0.07)
        lum = lum + (rng.uniform(0.1, 0.2) * d * np.exp(-d * d)).astype(np.float32)
    tex = lum[..., None] * colour

    if style.kind == "paper" and g.margin > 0.12:
        border = rng.uniform(0.03, min(0.1, g.margin - 0.05))
        inner = _box_cov(coord, -hs + border, hs - border, hp).astype(np.float32)
        paper_a = np.outer(inner, inner)[..., None]
        card = np.asarray(style.side_colour, np.float32) * 1.25
        tex = tex * paper_a + card * (1.0 - paper_a)

    # Lines: 4 vertical (constant u) and 4 horizontal (constant v), each spanning the grid.
    lw = g.line_width
    if style.line_style == "marker":
        amp, wvar = min(0.02, 0.3 * lw + 0.005), 0.18
    elif style.kind == "paper":
        amp, wvar = 0.006, 0.0
    else:
        amp, wvar = 0.0, 0.0
    ink = np.zeros((n, n), np.float32)
    edge_lit = np.zeros((n, n), np.float32)
    edge_dark = np.zeros((n, n), np.float32)
    lv = _light_vector(light)
    ex, ey = _board_axes(g)
    lit_low = (float(lv[:2] @ ex) > 0, float(lv[:2] @ ey) > 0)
    edge_w = max(0.25 * lw, 0.6 / scale)
    for axis in (0, 1):
        for k in (-1.5, -0.5, 0.5, 1.5):
            centre, rel = _line_profile(rng, n, amp, wvar, scale * 0.7)
            centre = centre + k
            half = lw / 2 * rel
            end = rng.uniform(-0.04, 0.04, 2) if style.line_style == "marker" else np.zeros(2)
            span = _box_cov(coord, -GRID_HALF - lw / 2 + end[0], GRID_HALF + lw / 2 + end[1], hp)
            reach = lw / 2 * (1 + 2 * wvar) + 2.5 * amp + 2 * hp
            i0 = max(math.floor((k - reach) * scale + c0), 0)
            i1 = min(math.ceil((k + reach) * scale + c0) + 1, n)
            x = coord[None, i0:i1]
            lo = (centre - half)[:, None]
            hi = (centre + half)[:, None]
            strength = rng.uniform(0.85, 1.0) if style.line_style == "marker" else 1.0
            cov = (_box_cov(x, lo, hi, hp) * span[:, None] * strength).astype(np.float32)
            lit = dark = None
            if style.line_style == "engraved":
                low = (_box_cov(x, lo, lo + edge_w, hp) * span[:, None]).astype(np.float32)
                high = (_box_cov(x, hi - edge_w, hi, hp) * span[:, None]).astype(np.float32)
                lit, dark = (low, high) if lit_low[axis] else (high, low)
            if axis == 1:  # horizontal line: swap roles of rows and columns
                cov = cov.T
                lit = None if lit is None else lit.T
                dark = None if dark is None else dark.T
                sl = (slice(i0, i1), slice(None))
            else:
                sl = (slice(None), slice(i0, i1))
            ink[sl] = 1.0 - (1.0 - ink[sl]) * (1.0 - cov)
            if lit is not None and dark is not None:
                edge_lit[sl] = np.maximum(edge_lit[sl], lit)
                edge_dark[sl] = np.maximum(edge_dark[sl], dark)
    if style.line_style == "engraved":
        groove = rng.uniform(0.55, 0.78)
        tex *= (1.0 - ink * (1.0 - groove))[..., None]
        tex *= (1.0 + 0.35 * edge_lit - 0.45 * edge_dark)[..., None]
    else:
        tex += (np.asarray(style.line_colour, np.float32) - tex) * ink[..., None]

    out = np.empty((n, n, 4), np.float32)
    out[..., :3] = tex * alpha[..., None]
    out[..., 3] = alpha
    return out


# --------------------------------------------------------------------------------------------------
# Pieces
# --------------------------------------------------------------------------------------------------
def _piece_sprite(style: PieceStyle, grey: float, light: Lighting, spr: float) -> np.ndarray:
    """Premultiplied BGRA image of a piece's top face in world (X, Y) axes, ``spr`` px per unit."""
    r = style.radius
    half = math.ceil(r * spr * 1.05) + 2
    n = 2 * half + 1
    c = np.arange(n, dtype=np.float32) - half
    x, y = np.meshgrid(c / spr, c / spr)
    d = np.hypot(x, y)
    rho = np.minimum(d / r, 1.0)
    alpha = np.clip((r - d) * spr + 0.5, 0.0, 1.0)
    lv = _light_vector(light).astype(np.float32)
    if style.dome > 0:
        slope = 2.0 * style.dome / (r * r)
        nx, ny = slope * x, slope * y
        norm = np.sqrt(nx * nx + ny * ny + 1.0)
        ndotl = (nx * lv[0] + ny * lv[1] + lv[2]) / norm
        shade = np.clip(1.0 + 0.55 * (ndotl - lv[2]), 0.45, 1.3)
        if style.glossy:
            hv = lv + np.array([0, 0, 1], np.float32)
            hv /= np.linalg.norm(hv)
            ndoth = np.clip((nx * hv[0] + ny * hv[1] + hv[2]) / norm, 0, 1)
            spec = DOME_GLINT_PEAK * ndoth**DOME_GLINT_EXPONENT
        else:
            spec = np.zeros_like(x)
    else:
        shade = 1.0 - 0.12 * np.clip((rho - 0.85) / 0.15, 0, 1)
        if style.glossy:
            reach = FLAT_GLINT_REACH * r / max(float(np.hypot(lv[0], lv[1])), 1e-6)
            hx, hy = reach * lv[0], reach * lv[1]
            s2 = (FLAT_GLINT_SIGMA * r) ** 2
            spec = FLAT_GLINT_PEAK * np.exp(-((x - hx) ** 2 + (y - hy) ** 2) / (2 * s2))
        else:
            spec = np.zeros_like(x)
    if style.rim_dark < 1.0:
        inner = 1.0 - style.rim_width
        t = np.clip((rho - inner) * r * spr + 0.5, 0.0, 1.0)
        shade = shade * (1.0 - (1.0 - style.rim_dark) * t)
    base = grey * np.asarray(style.tint, np.float32)
    out = np.empty((n, n, 4), np.float32)
    sp = spec * (255.0 - 0.4 * grey)
    for ch in range(3):
        out[..., ch] = (base[ch] * shade + sp) * alpha
    out[..., 3] = alpha
    return out


def _circle(centre: np.ndarray, r: float, z: float) -> np.ndarray:
    t = np.linspace(0, 2 * math.pi, CIRCLE_POINTS, endpoint=False)
    return np.column_stack([centre[0] + r * np.cos(t), centre[1] + r * np.sin(t), np.full(CIRCLE_POINTS, z)])


def _draw_piece(
    img: np.ndarray,
    g: Geometry,
    style: PieceStyle,
    sprite: np.ndarray,
    grey: float,
    world: np.ndarray,
    blur: float = 0.0,
) -> None:
    """Draw one piece standing at ``world`` (X, Y, Z of its base): side wall then top sprite."""
    top_z = world[2] + style.height
    base = _project(g, _circle(world, style.radius, world[2]))
    top = _project(g, _circle(world, style.radius, top_z))
    hull = cv2.convexHull(np.concatenate([base, top]).astype(np.float32)).reshape(-1, 2)
    wall = grey * style.wall_shade * np.asarray(style.tint, np.float32)
    centre = np.array([world[0], world[1], top_z])
    p = _project(g, centre)[0]
    jac = _jacobian(g, centre)
    spr = PIECE_SPRITE_SCALE * float(np.sqrt(abs(np.linalg.det(jac))))
    half = (sprite.shape[0] - 1) / 2
    a = jac / spr
    m = np.column_stack([a, p - a @ np.array([half, half])])
    if blur <= 0.3:
        _fill(img, [hull], tuple(wall))
        _paste_affine(img, sprite, m)
        return
    # A piece out of the focal plane: draw into a copy of its box, then blend the blurred copy.
    bb = _bbox(hull, 3 * blur + 3)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    roi = img[y0:y1, x0:x1]
    layer = roi.copy()
    sub_hull = hull - (x0, y0)
    _fill(layer, [sub_hull], tuple(wall))
    m_local = m.copy()
    m_local[:, 2] -= (x0, y0)
    _paste_affine(layer, sprite, m_local)
    cover = _mask([sub_hull], layer.shape[:2], (0.0, 0.0))
    cover = cv2.GaussianBlur(cover, (0, 0), blur)[..., None]
    layer = cv2.GaussianBlur(layer, (0, 0), blur)
    roi += (layer - roi) * cover


def _piece_sprite_px(g: Geometry, z: float) -> float:
    jac = _jacobian(g, np.array([g.centre_world[0], g.centre_world[1], z]))
    return PIECE_SPRITE_SCALE * float(np.sqrt(abs(np.linalg.det(jac))))


def _contact_shadows(
    img: np.ndarray, g: Geometry, style: PieceStyle, light: Lighting, bases: list[np.ndarray]
) -> None:
    """Soft shadows under pieces standing at ``bases``; pieces on the plate and beside it apart."""
    if not bases:
        return
    shift = _shadow_shift(light, style.height + style.dome * 0.5) * 0.5
    groups: dict[bool, list[np.ndarray]] = {True: [], False: []}
    for w in bases:
        c = np.array([w[0] + shift[0], w[1] + shift[1], w[2]])
        groups[bool(w[2] >= 0.0)].append(_project(g, _circle(c, style.radius * 1.04, w[2])))
    sigma = max(0.07 * _piece_sprite_px(g, 0.0) / PIECE_SPRITE_SCALE, 1.0)
    for polys in groups.values():
        _shadow(img, polys, style.shadow, sigma)


# --------------------------------------------------------------------------------------------------
# Clutter and occluders
# --------------------------------------------------------------------------------------------------
def _draw_rect_item(img: np.ndarray, it: Item, light_px: np.ndarray, rng: np.random.Generator) -> None:
    """Paper sheets, tape, phones and rulers (flat, image-space rectangles)."""
    p = it.params
    c = np.array(p["centre"])
    size = p["size"]
    ang = p["angle"]
    kind = it.kind
    if kind == "paper":
        poly = _rect(c, size, ang)
        _shadow(img, [poly + light_px * p["lift"]], 0.25, max(1.0, 2.0 * p["lift"]))
        _fill(img, [poly], p["colour"])
        # printed text: rows of short dark dashes
        a = math.radians(ang)
        ux = np.array([math.cos(a), math.sin(a)])
        uy = np.array([-math.sin(a), math.cos(a)])
        rows = int(size[1] / p["row_px"]) - 2
        lines: list[np.ndarray] = []
        for j in range(1, rows):
            y = -size[1] / 2 + (j + 0.5) * p["row_px"]
            x = -size[0] / 2 + 0.12 * size[0]
            end = size[0] / 2 - 0.12 * size[0] * rng.uniform(0.5, 3)
            while x < end:
                wlen = p["row_px"] * rng.uniform(0.6, 2.5)
                q0 = c + ux * x + uy * y
                q1 = c + ux * min(x + wlen, end) + uy * y
                lines.append(np.array([q0, q1]))
                x += wlen + p["row_px"] * 0.5
        _stroke(img, lines, 0.25 * p["row_px"], p["ink"], 0.55)
    elif kind == "tape":
        poly = _rect(c, size, ang)
        _fill(img, [poly], p["colour"], p["opacity"])
    elif kind == "phone":
        r = 0.12 * min(size)
        body = _rounded_rect(c, size, ang, r)
        _shadow(img, [body + light_px * 0.15], 0.45, 4.0)
        _fill(img, [body], p["colour"])
        if p["screen"]:
            scr = _rounded_rect(c, (size[0] * 0.9, size[1] * 0.92), ang, r * 0.6)
            _fill(img, [scr], (18.0, 16.0, 14.0))
            refl = _rect(
                c + np.array([size[0] * 0.1, -size[1] * 0.1]), (size[0] * 0.4, size[1] * 0.8), ang + 25
            )
            _fill(img, [refl], (90.0, 90.0, 90.0), 0.15)
        else:
            a = math.radians(ang)
            ux = np.array([math.cos(a), math.sin(a)])
            uy = np.array([-math.sin(a), math.cos(a)])
            lens = c - ux * size[0] * 0.28 - uy * size[1] * 0.36
            bump = _rounded_rect(lens, (size[0] * 0.36, size[0] * 0.36), ang, size[0] * 0.06)
            _fill(img, [bump], tuple(np.asarray(p["colour"]) * 0.7))
            for off in (-0.08, 0.08):
                _fill(
                    img,
                    [_capsule(lens + uy * size[0] * off, lens + uy * size[0] * off, size[0] * 0.06)],
                    (20, 20, 20),
                )
    elif kind == "ruler":
        poly = _rect(c, size, ang)
        _shadow(img, [poly + light_px * 0.05], 0.3, 2.0)
        _fill(img, [poly], p["colour"], p["opacity"])
        a = math.radians(ang)
        ux = np.array([math.cos(a), math.sin(a)])
        uy = np.array([-math.sin(a), math.cos(a)])
        step = p["tick_px"]
        ticks: list[np.ndarray] = []
        x = -size[0] / 2 + step
        j = 1
        while x < size[0] / 2 - step / 2:
            tl = size[1] * (0.45 if j % 5 == 0 else 0.25)
            q0 = c + ux * x - uy * size[1] / 2
            ticks.append(np.array([q0, q0 + uy * tl]))
            x += step
            j += 1
        _stroke(img, ticks, 1.0, (30.0, 30.0, 30.0), 0.8)


def _draw_cable(img: np.ndarray, it: Item, light_px: np.ndarray) -> None:
    pts = np.asarray(it.params["points"], np.float64)
    r = it.params["radius"]
    col = np.asarray(it.params["colour"], np.float32)
    _shadow(
        img,
        [_capsule(pts[j], pts[j + 1], r, 4) + light_px * 0.06 for j in range(len(pts) - 1)],
        0.35,
        max(1.0, r),
    )
    _stroke(img, [pts], 2 * r, (float(col[0]), float(col[1]), float(col[2])))
    hi = np.minimum(col * 1.6 + 40, 255)
    _stroke(img, [pts - r * 0.35], max(1.0, r * 0.5), (float(hi[0]), float(hi[1]), float(hi[2])), 0.5)


def _draw_gantry(img: np.ndarray, g: Geometry, light: Lighting, p: dict[str, Any]) -> None:
    """Electromagnet head (a cylinder seen from above) and its arm reaching to the frame edge."""
    world = np.array(p["world"], np.float64)  # (X, Y) under the head
    zb, zt, rh = p["z_bottom"], p["z_top"], p["radius"]
    col = np.asarray(p["colour"], np.float32)
    base = _project(g, _circle(np.array([world[0], world[1]]), rh, zb))
    top = _project(g, _circle(np.array([world[0], world[1]]), rh, zt))
    hull = cv2.convexHull(np.concatenate([base, top]).astype(np.float32)).reshape(-1, 2)
    ct = _project(g, np.array([[world[0], world[1], zt]]))[0]
    cb = _project(g, np.array([[world[0], world[1], zb]]))[0]
    d2 = np.array(p["arm_dir"], np.float64)
    ahead = _project(g, np.array([[world[0] + d2[0], world[1] + d2[1], zt]]))[0]
    u = ahead - ct
    u /= np.linalg.norm(u)
    scale = float(np.sqrt(abs(np.linalg.det(_jacobian(g, np.array([world[0], world[1], zt]))))))
    arm_w = p["arm_width"] * scale
    far = ct + u * (IMG_W + IMG_H)
    arm = _capsule(ct, far, arm_w / 2, 2)
    # shadows on the plate / table below
    sh = _shadow_shift(light, zb)
    shp = _project(g, np.array([[world[0] + sh[0], world[1] + sh[1], 0.0]]))[0]
    off = shp - cb
    _shadow(img, [hull + off, arm + off], p["shadow"], max(2.0, 0.12 * scale * (1 + zb)))
    _fill(img, [hull], tuple(col * 0.55))
    _fill(img, [arm], tuple(np.asarray(p["arm_colour"], np.float32)))
    nrm = np.array([-u[1], u[0]])
    for s in (-0.22, 0.22):
        slot = _capsule(ct + nrm * arm_w * s, far + nrm * arm_w * s, max(0.7, arm_w * 0.05), 2)
        _fill(img, [slot], tuple(np.asarray(p["arm_colour"], np.float32) * 0.6))
    # head top face: a radial metallic / anodised look with a chamfer ring and a central bolt
    bb = _bbox(top, 2)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    rad = float(np.mean(np.hypot(*(top - ct).T)))
    rr = np.hypot(xx - ct[0], yy - ct[1]) / rad
    ang = np.arctan2(yy - ct[1], xx - ct[0])
    sheen = 0.8 + (0.35 if p["metallic"] else 0.12) * np.cos(2 * (ang - math.radians(light.azimuth_deg)))
    ring = 1.0 - 0.35 * np.exp(-(((rr - 0.82) / 0.05) ** 2)) + 0.25 * np.exp(-(((rr - 0.95) / 0.04) ** 2))
    bolt = 1.0 - 0.5 * (rr < 0.18)
    colimg = (sheen * ring * bolt)[..., None] * col
    a = _mask([top], (y1 - y0, x1 - x0), (x0, y0))[..., None]
    roi = img[y0:y1, x0:x1]
    roi += (colimg - roi) * a
    # the arm passes over the head's far half
    _fill(img, [_capsule(ct, far, arm_w / 2, 2)], tuple(np.asarray(p["arm_colour"], np.float32)))


def _draw_hand(img: np.ndarray, p: dict[str, Any], light_px: np.ndarray) -> None:
    polys = [np.asarray(q) for q in p["polys"]]
    skin = np.asarray(p["skin"], np.float32)
    _shadow(img, [q + light_px * p["height"] for q in polys], p["shadow"], p["shadow_sigma"])
    bb = _bbox(np.concatenate(polys), 2)
    if bb is None:
        return
    x0, y0, x1, y1 = bb
    m = _mask(polys, (y1 - y0, x1 - x0), (x0, y0))
    soft = cv2.GaussianBlur(m, (0, 0), max(1.0, p["finger_px"] * 0.45))
    shade = 0.6 + 0.5 * soft
    col = shade[..., None] * skin
    if p["sleeve"] is not None:
        sl = _mask([np.asarray(p["sleeve"])], (y1 - y0, x1 - x0), (x0, y0))[..., None]
        col = col * (1 - sl) + sl * (shade[..., None] * np.asarray(p["sleeve_colour"], np.float32))
    roi = img[y0:y1, x0:x1]
    roi += (col - roi) * m[..., None]
    # gaps between fingers and nails
    for f in p["fingers"]:
        outline = _capsule(np.asarray(f[0]), np.asarray(f[1]), f[2], 8)
        cv2.polylines(
            roi,
            [np.round((outline - (x0, y0)) * 16).astype(np.int32)],
            True,
            tuple(float(v) for v in skin * 0.55),
            1,
            cv2.LINE_AA,
            4,
        )
        tip = np.asarray(f[1])
        d = tip - np.asarray(f[0])
        d /= np.linalg.norm(d)
        nail = _capsule(tip - d * f[2] * 0.9, tip - d * f[2] * 0.1, f[2] * 0.55, 6)
        _fill(img, [nail], tuple(np.minimum(skin * 1.12 + np.array([10, 10, 20]), 255)), 0.7)


def _pen_sprite(p: dict[str, Any]) -> np.ndarray:
    length, width = p["length_px"], p["width_px"]
    n_l = math.ceil(length) + 4
    n_w = math.ceil(width) + 4
    x = np.arange(n_l, dtype=np.float32) - (n_l - 1) / 2
    y = np.arange(n_w, dtype=np.float32) - (n_w - 1) / 2
    t = np.clip(np.abs(y) / (width / 2), 0, 1)
    prof = 0.55 + 0.45 * np.sqrt(1 - t * t) + 0.45 * np.exp(-((((y / (width / 2)) + 0.35) / 0.18) ** 2))
    xs = (x + length / 2) / length  # 0 at the tip end, 1 at the cap end
    tip_len = 0.1
    halfw = np.where(xs < tip_len, width / 2 * np.clip(xs / tip_len, 0.15, 1), width / 2)
    alpha = np.clip(halfw[None, :] - np.abs(y)[:, None] + 0.5, 0, 1) * np.clip(
        np.minimum(xs, 1 - xs)[None, :] * length + 0.5, 0, 1
    )
    body = np.asarray(p["body"], np.float32)
    cap = np.asarray(p["cap"], np.float32)
    metal = np.array([150, 150, 155], np.float32)
    colx = np.where(
        (xs < tip_len)[:, None], metal[None, :], np.where((xs > 1 - p["cap_frac"])[:, None], cap, body)
    )
    out = np.empty((n_w, n_l, 4), np.float32)
    out[..., :3] = np.minimum(prof[:, None, None] * colx[None, :, :], 255) * alpha[..., None]
    out[..., 3] = alpha
    return out


def _coin_sprite(p: dict[str, Any], light: Lighting, spr: float, rng: np.random.Generator) -> np.ndarray:
    r = p["radius"]
    half = math.ceil(r * spr) + 2
    n = 2 * half + 1
    c = (np.arange(n, dtype=np.float32) - half) / spr
    x, y = np.meshgrid(c, c)
    d = np.hypot(x, y)
    rho = d / r
    alpha = np.clip((r - d) * spr + 0.5, 0, 1)
    ang = np.arctan2(y, x)
    sheen = 0.75 + 0.4 * np.cos(2 * (ang - math.radians(light.azimuth_deg)))
    rim = 1.0 + 0.25 * ((rho > 0.86) & (rho < 0.97)) - 0.35 * (rho >= 0.97)
    relief = 1.0 + 0.12 * cv2.GaussianBlur(rng.standard_normal((n, n)).astype(np.float32), (0, 0), 1.5)
    shade = sheen * rim * np.where(rho < 0.8, relief, 1.0)
    out = np.empty((n, n, 4), np.float32)
    col = np.asarray(p["colour"], np.float32)
    for ch in range(3):
        out[..., ch] = np.minimum(col[ch] * shade, 255) * alpha
    out[..., 3] = alpha
    return out


# --------------------------------------------------------------------------------------------------
# Lighting and camera
# --------------------------------------------------------------------------------------------------
_LR_W = IMG_W // GAIN_MAP_SCALE
_LR_H = IMG_H // GAIN_MAP_SCALE
_LR_X = (np.arange(_LR_W, dtype=np.float64) + 0.5) * GAIN_MAP_SCALE - 0.5
_LR_Y = (np.arange(_LR_H, dtype=np.float64) + 0.5) * GAIN_MAP_SCALE - 0.5


def _gain_map(g: Geometry, light: Lighting, out: np.ndarray) -> np.ndarray:
    """Light gain per pixel and channel: gradient, vignetting, gantry-arm shadow, white balance and
    exposure, float32 (H, W, 3).  Built at low resolution; smooth, so applying it after the lens
    distortion instead of before moves it by a few pixels at most."""
    xx, yy = np.meshgrid(_LR_X, _LR_Y)
    hinv = np.linalg.inv(_board_homography(g))
    w = hinv[2, 0] * xx + hinv[2, 1] * yy + hinv[2, 2]
    u = (hinv[0, 0] * xx + hinv[0, 1] * yy + hinv[0, 2]) / w
    v = (hinv[1, 0] * xx + hinv[1, 1] * yy + hinv[1, 2]) / w
    gain = np.ones_like(u)
    if light.gradient > 1.0:
        a = math.radians(light.gradient_dir_deg)
        t = np.clip((u * math.cos(a) + v * math.sin(a)) / (2 * g.half_size), -1.0, 1.0)
        gain *= light.gradient**t
    if light.vignette > 0:
        cx, cy = g.principal
        r2 = ((xx - cx) ** 2 + (yy - cy) ** 2) / DIST_NORM_PX**2
        gain *= 1.0 - light.vignette * r2
    if light.arm_shadow is not None:
        ang, off, width, soft, depth = light.arm_shadow
        a = math.radians(ang)
        dist = np.abs(-u * math.sin(a) + v * math.cos(a) - off)
        band = 1.0 - np.clip((dist - width / 2) / soft + 0.5, 0.0, 1.0)
        gain *= 1.0 - depth * band
    gain3 = gain.astype(np.float32)[..., None] * (
        np.asarray(light.wb, np.float32) * np.float32(light.exposure)
    )
    return cv2.resize(gain3, (IMG_W, IMG_H), dst=out, interpolation=cv2.INTER_LINEAR)


def _add_glare(
    img: np.ndarray, g: Geometry, light: Lighting, plate_alpha: np.ndarray, box: tuple[int, int, int, int]
) -> None:
    if light.glare is None:
        return
    u, v, sig, amp = light.glare
    x0, y0, x1, y1 = box
    c = _project(g, _board_to_world(g, np.array([[u, v]])))[0]
    s = sig * _truth(g).pitch
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    blob = np.exp(-((xx - c[0]) ** 2 + (yy - c[1]) ** 2) / (2 * s * s)) * amp * plate_alpha
    img[y0:y1, x0:x1] += blob[..., None] * np.array([1.0, 1.0, 1.0], np.float32)


def _distortion_map(g: Geometry) -> tuple[np.ndarray, np.ndarray]:
    """Fixed-point remap table of the barrel distortion (see :func:`_distort`).

    A distorted pixel ``d`` samples ``c + (d - c) * (1 + k r^2) / (1 + k)`` with ``r = |d - c| /
    DIST_NORM_PX``: OpenCV's radial model with ``k1 = k`` and a source focal length of
    ``DIST_NORM_PX / (1 + k)``.
    """
    cx, cy = g.principal
    new_k = np.array([[DIST_NORM_PX, 0, cx], [0, DIST_NORM_PX, cy], [0, 0, 1.0]])
    f = DIST_NORM_PX / (1.0 + g.barrel_k)
    src_k = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]])
    coeffs = np.array([g.barrel_k, 0.0, 0.0, 0.0])
    m1, m2 = cv2.initUndistortRectifyMap(src_k, coeffs, None, new_k, (IMG_W, IMG_H), cv2.CV_16SC2)
    return m1, m2


def _blur_kernel(fx: CameraFx) -> np.ndarray | None:
    if fx.motion_px <= 0.0:
        return None
    size = 2 * math.ceil(fx.motion_px / 2 + 1) + 1
    k = np.zeros((size, size), np.float32)
    c = size // 2
    a = math.radians(fx.motion_deg)
    for t in np.linspace(-fx.motion_px / 2, fx.motion_px / 2, 9):
        x, y = c + t * math.cos(a), c + t * math.sin(a)
        ix, iy = math.floor(x), math.floor(y)
        fx_, fy_ = x - ix, y - iy
        k[iy, ix] += (1 - fx_) * (1 - fy_)
        k[iy, ix + 1] += fx_ * (1 - fy_)
        k[iy + 1, ix] += (1 - fx_) * fy_
        k[iy + 1, ix + 1] += fx_ * fy_
    return k / k.sum()


# --------------------------------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------------------------------
def _light_px(g: Geometry, light: Lighting) -> np.ndarray:
    """Image displacement of the shadow of a point one board unit above the plate centre."""
    c = np.array([g.centre_world[0], g.centre_world[1], 0.0])
    return _jacobian(g, c) @ _shadow_shift(light, 1.0)


def render_scene(scene: Scene) -> Sample:
    """Render a :class:`Scene` into a :class:`Sample` (pure and deterministic)."""
    g = scene.geometry
    # one stream per stage, so that removing clutter or pieces leaves every other texture unchanged
    rng_table, rng_clutter, rng_plate, rng_occ, rng_sensor = (
        np.random.default_rng(q) for q in np.random.SeedSequence(scene.tex_seed).spawn(5)
    )
    light = scene.light
    lpx = _light_px(g, light)
    truth = _truth(g)

    img = _table_image(rng_table, scene.table_kind, scene.table_colour, _WS.frames[0])

    # plate drop shadow / ambient occlusion on the table
    hs = g.half_size
    corners = np.array([[-hs, -hs], [hs, -hs], [hs, hs], [-hs, hs]])
    bottom = _project(g, _board_to_world(g, corners, -g.thickness))
    _shadow(img, [bottom + lpx * g.thickness * 2], 0.45, max(1.5, 0.12 * truth.pitch))

    # clutter beside the board
    for it in scene.clutter:
        if it.kind in ("paper", "tape", "phone", "ruler"):
            _draw_rect_item(img, it, lpx, rng_clutter)
    if scene.supply is not None:
        _draw_supply_base(img, scene.supply, lpx)
    for it in scene.clutter:
        if it.kind == "cable":
            _draw_cable(img, it, lpx)
        elif it.kind == "gantry_parked":
            _draw_gantry(img, g, light, it.params)

    # plate: side faces, then the textured top
    top = _project(g, _board_to_world(g, corners, 0.0))
    side = cv2.convexHull(np.concatenate([top, bottom]).astype(np.float32)).reshape(-1, 2)
    _fill(img, [side], scene.plate.side_colour)
    scale = float(np.clip(truth.pitch * PLATE_SUPERSAMPLE, 40.0, 110.0))
    tex = _plate_texture(rng_plate, g, scene.plate, light, scale)
    c0 = (tex.shape[0] - 1) / 2
    a_map = np.array([[1 / scale, 0, -c0 / scale], [0, 1 / scale, -c0 / scale], [0, 0, 1.0]])
    box = _bbox(top, 2)
    plate_alpha = np.zeros((1, 1), np.float32)
    if box is not None:
        x0, y0, x1, y1 = box
        t_box = np.array([[1.0, 0, -x0], [0, 1.0, -y0], [0, 0, 1.0]])
        hm = t_box @ _board_homography(g) @ a_map
        layer = cv2.warpPerspective(
            tex, hm, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT
        )
        _over(img[y0:y1, x0:x1], layer)
        plate_alpha = layer[..., 3]

    # pieces: contact shadows first, then the bodies
    st = scene.pieces
    placed: list[tuple[float, np.ndarray]] = []
    for s, ch in enumerate(scene.board):
        if ch == ".":
            continue
        r, col = divmod(s, N_SIDE)
        ou, ov = st.offsets[s]
        w = _board_to_world(g, np.array([[col - 1 + ou, r - 1 + ov]]), 0.0)[0]
        placed.append((st.black if ch == "X" else st.white, w))
    if scene.supply is not None:
        for sx, sy, sz, ch in scene.supply.params["pieces"]:
            placed.append((st.black if ch == "X" else st.white, np.array([sx, sy, sz])))
    _contact_shadows(img, g, st, light, [w for _, w in placed])
    sprites: dict[float, np.ndarray] = {}
    spr = _piece_sprite_px(g, st.height)
    for grey, w in placed:
        if grey not in sprites:
            sprites[grey] = _piece_sprite(st, grey, light, spr)
        _draw_piece(img, g, st, sprites[grey], grey, w)

    if not scene.clean and box is not None:
        _add_glare(img, g, light, plate_alpha, box)

    coin_squares: tuple[int, ...] = ()
    if scene.occluder is not None:
        coin_squares = _draw_occluder(img, g, scene, rng_occ, lpx, sprites, truth.quarter_turns)

    if not scene.clean:
        img = _camera(img, g, light, scene.camera, rng_sensor)
    img += 0.5
    np.clip(img, 0, 255, out=img)
    out = img.astype(np.uint8)
    if not scene.clean and scene.camera.jpeg_quality > 0:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scene.camera.jpeg_quality])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)

    plate_corners = _distort(g, top)
    return Sample(
        image=out,
        board=_fold_board(scene.board, truth.quarter_turns),
        centre_px=truth.centre,
        angle_deg=truth.angle,
        pitch_px=truth.pitch,
        occluded=scene.occluder is not None,
        tags=scene.tags,
        plate_px=tuple((float(x), float(y)) for x, y in plate_corners),
        coin_squares=coin_squares,
        seed=scene.seed,
        index=scene.index,
    )


def _camera(
    img: np.ndarray, g: Geometry, light: Lighting, fx: CameraFx, rng: np.random.Generator
) -> np.ndarray:
    """Optics (distortion, chromatic aberration, blur), light gain, then the sensor (flicker rows,
    noise, black level).  Works in the thread's scratch frames; returns one of them."""
    spare = [f for f in _WS.frames if f is not img]

    def swap(new: np.ndarray) -> np.ndarray:
        spare.remove(new)
        spare.append(img)
        return new

    if g.barrel_k != 0.0 or g.chroma_px != (0.0, 0.0):
        m1, m2 = _distortion_map(g)
        img = swap(cv2.remap(img, m1, m2, cv2.INTER_LINEAR, dst=spare[0], borderMode=cv2.BORDER_REPLICATE))
    if g.chroma_px != (0.0, 0.0):
        # lateral chromatic aberration: blue and red magnified about the centre (shift at corner)
        chans = list(cv2.split(img, _WS.planes[:3]))
        cx, cy = g.principal
        for ch, shift, dst in ((0, g.chroma_px[0], 3), (2, g.chroma_px[1], 1)):
            s = 1.0 + shift / DIST_NORM_PX
            m = np.array([[s, 0.0, cx * (1 - s)], [0.0, s, cy * (1 - s)]])
            chans[ch] = cv2.warpAffine(
                chans[ch],
                m,
                (IMG_W, IMG_H),
                dst=_WS.planes[dst],
                flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                borderMode=cv2.BORDER_REPLICATE,
            )
        img = swap(cv2.merge(chans, dst=spare[0]))
    if fx.defocus_sigma > 0:
        img = swap(cv2.GaussianBlur(img, (0, 0), fx.defocus_sigma, dst=spare[0]))
    kern = _blur_kernel(fx)
    if kern is not None:
        img = swap(cv2.filter2D(img, -1, kern, dst=spare[0], borderType=cv2.BORDER_REFLECT))
    img *= _gain_map(g, light, spare[0])
    amp, period, phase = light.flicker
    if amp > 0:
        y = np.arange(IMG_H, dtype=np.float32)
        rows = 1.0 + amp * np.sin(y * np.float32(2 * math.pi / period) + np.float32(phase))
        img.reshape(IMG_H, IMG_W * 3)[...] *= rows[:, None]
    if fx.read_noise > 0:
        sigma = np.maximum(img, 0.0, out=spare[0])
        sigma *= np.float32(fx.shot_noise)
        sigma += np.float32(fx.read_noise**2)
        cv2.sqrt(sigma, dst=sigma)
        noise = spare[1]
        cv2.setRNGSeed(int(rng.integers(2**31 - 1)))
        cv2.randn(noise, 0.0, 1.0)
        noise *= sigma
        img += noise
    if light.black_level > 0:
        img -= np.float32(light.black_level)
        img *= np.float32(255.0 / (255.0 - light.black_level))
    return img


def _draw_supply_base(img: np.ndarray, supply: Item, lpx: np.ndarray) -> None:
    p = supply.params
    poly = np.asarray(p["poly"])
    if p["container"] == "tray":
        _shadow(img, [poly + lpx * 0.15], 0.4, 3.0)
        _fill(img, [poly], p["colour"])
        inner = np.asarray(p["inner"])
        _fill(img, [inner], tuple(np.asarray(p["colour"], np.float32) * 0.85))
    else:
        _shadow(img, [poly + lpx * 0.02], 0.15, 1.5)
        _fill(img, [poly], p["colour"])
    for slot in p["slots"]:
        ring = np.asarray(slot)
        cv2.polylines(
            img,
            [np.round(ring * 16).astype(np.int32)],
            True,
            tuple(float(v) for v in np.asarray(p["colour"], np.float32) * 0.7),
            1,
            cv2.LINE_AA,
            4,
        )


def _draw_occluder(
    img: np.ndarray,
    g: Geometry,
    scene: Scene,
    rng: np.random.Generator,
    lpx: np.ndarray,
    sprites: dict[float, np.ndarray],
    quarter_turns: int,
) -> tuple[int, ...]:
    """Draw the frame's occluder; return the folded indices of squares holding a coin."""
    occ = scene.occluder
    assert occ is not None
    p = occ.params
    light = scene.light
    st = scene.pieces
    if occ.kind == "hand":
        _draw_hand(img, p, lpx)
    elif occ.kind == "pen":
        sprite = _pen_sprite(p)
        c = np.asarray(p["centre_px"])
        a = math.radians(p["angle"])
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        h, w = sprite.shape[:2]
        m = np.column_stack([rot, c - rot @ np.array([(w - 1) / 2, (h - 1) / 2])])
        body = _capsule(
            c - rot[:, 0] * p["length_px"] / 2, c + rot[:, 0] * p["length_px"] / 2, p["width_px"] / 2
        )
        _shadow(img, [body + lpx * p["height"]], 0.4, max(1.5, p["width_px"] * 0.4))
        _paste_affine(img, sprite, m)
    elif occ.kind == "coin":
        squares = []
        for s, (u, v), radius, colour in p["coins"]:
            w = _board_to_world(g, np.array([[u, v]]), 0.0)[0]
            spr = _piece_sprite_px(g, 0.0)
            cp = {"radius": radius, "colour": colour}
            sprite = _coin_sprite(cp, light, spr, rng)
            jac = _jacobian(g, w)
            a = jac / spr
            half = (sprite.shape[0] - 1) / 2
            pc = _project(g, w)[0]
            poly = _project(g, _circle(w, radius * 1.05, 0.0))
            _shadow(img, [poly + lpx * 0.03], 0.45, max(1.0, 0.05 * _truth(g).pitch))
            _paste_affine(img, sprite, np.column_stack([a, pc - a @ np.array([half, half])]))
            squares.append(_folded_index(s, quarter_turns))
        return tuple(sorted(squares))
    elif occ.kind == "gantry":
        _draw_gantry(img, g, light, p)
    elif occ.kind == "paper":
        _draw_rect_item(img, Item("paper", p), lpx, rng)
    elif occ.kind == "held_piece":
        w = np.array(p["world"], np.float64)
        grey = st.black if p["colour"] == "X" else st.white
        shift = _shadow_shift(light, w[2])
        sh_world = np.array([w[0] + shift[0], w[1] + shift[1], 0.0])
        poly = _project(g, _circle(sh_world, st.radius * 1.1, 0.0))
        _shadow(img, [poly], p["shadow"], max(2.0, 0.12 * w[2] * _truth(g).pitch))
        spr = _piece_sprite_px(g, w[2] + st.height)
        sprite = _piece_sprite(st, grey, light, spr)
        _draw_piece(img, g, st, sprite, grey, w, blur=p["blur"])
        head = dict(p["head"])
        _draw_gantry(img, g, light, head)
    return ()


# --------------------------------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------------------------------
def _stratum(seed: int, i: int, salt: int, k: int) -> int:
    """Category index for frame ``i``: each block of ``k`` frames holds every category once."""
    perm = np.random.default_rng(np.random.SeedSequence([seed, salt, i // k])).permutation(k)
    return int(perm[i % k])


def _occluder_kind(seed: int, i: int) -> str | None:
    """Exactly :data:`OCC_PER_BLOCK` occluded frames per block; kinds cycle over consecutive ones."""
    block = i // OCC_BLOCK
    slots = np.random.default_rng(np.random.SeedSequence([seed, SALT_OCC_SLOTS, block])).permutation(
        OCC_BLOCK
    )[:OCC_PER_BLOCK]
    hit = np.flatnonzero(slots == i % OCC_BLOCK)
    if hit.size == 0:
        return None
    n = block * OCC_PER_BLOCK + int(hit[0])
    k = len(OCCLUDER_KINDS)
    perm = np.random.default_rng(np.random.SeedSequence([seed, SALT_OCC_KIND, n // k])).permutation(k)
    return OCCLUDER_KINDS[int(perm[n % k])]


def _winner(cells: list[str]) -> bool:
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
    return any(cells[a] != "." and cells[a] == cells[b] == cells[c] for a, b, c in lines)


def _sample_board(rng: np.random.Generator, kind: str) -> str:
    n = N_SIDE * N_SIDE
    if kind == "empty":
        return "." * n
    if kind == "full":
        cells = ["X"] * 5 + ["O"] * 4
        rng.shuffle(cells)
        return "".join(cells)
    if kind == "game":
        cells = ["."] * n
        moves = int(rng.integers(1, n))
        for m in range(moves):
            free = [j for j in range(n) if cells[j] == "."]
            cells[int(rng.choice(free))] = "X" if m % 2 == 0 else "O"
            if _winner(cells):
                break
        return "".join(cells)
    probs = rng.dirichlet([1.0, 1.0, 1.0])
    cells = list(rng.choice(np.array([".", "X", "O"]), size=n, p=probs))
    if all(c == "." for c in cells):
        cells[int(rng.integers(n))] = "X"
    return "".join(str(c) for c in cells)


def _jitter(rng: np.random.Generator, base: Colour, amount: float) -> Colour:
    c = np.clip(np.asarray(base) + rng.uniform(-amount, amount, 3), 0, 255)
    return (float(c[0]), float(c[1]), float(c[2]))


def _grey(rng: np.random.Generator, lo: float, hi: float, tint: float = 3.0) -> Colour:
    v = rng.uniform(lo, hi)
    return _jitter(rng, (v, v, v), tint)


def _sample_plate_colour(rng: np.random.Generator, kind: str) -> Colour:
    if kind == "white":
        return _grey(rng, 222, 248)
    if kind == "light_grey":
        return _grey(rng, 170, 210)
    if kind == "mid_grey":
        return _grey(rng, 105, 150)
    if kind == "wood":
        woods = ((110, 170, 215), (75, 125, 180), (50, 90, 135), (95, 150, 200))
        return _jitter(rng, woods[int(rng.integers(len(woods)))], 12)
    if kind == "dark":
        darks = ((22, 22, 22), (80, 34, 22), (34, 58, 24))  # near black, navy, dark green
        return _jitter(rng, darks[int(rng.integers(len(darks)))], 6)
    if kind == "blue":
        return _jitter(rng, (195, 100, 25), 18)
    if kind == "green":
        return _jitter(rng, (55, 160, 40), 18)
    if kind == "red":
        return _jitter(rng, (45, 45, 195), 15)
    if kind == "yellow":
        return _jitter(rng, (40, 210, 235), 12)
    if kind == "pastel":
        pastels = ((205, 190, 245), (205, 235, 195), (235, 200, 210), (240, 220, 190), (185, 210, 245))
        return _jitter(rng, pastels[int(rng.integers(len(pastels)))], 8)
    return _jitter(rng, (232, 238, 242), 6)  # paper


def _sample_geometry(
    rng: np.random.Generator, clean: bool, margin: float, line_width: float, thickness: float
) -> Geometry:
    """Pick a camera and pose with the plate inside the frame and the rotation off the fold line."""
    focal = rng.uniform(*FOCAL_RANGE_PX)
    principal = (
        IMG_W / 2 + rng.uniform(-1, 1) * PRINCIPAL_JITTER_PX[0],
        IMG_H / 2 + rng.uniform(-1, 1) * PRINCIPAL_JITTER_PX[1],
    )
    pitch = rng.uniform(PITCH_MIN_PX, PITCH_MAX_PX)
    theta = rng.uniform(-180.0, 180.0)
    tilt = rng.uniform(0, TILT_MAX_DEG) if rng.random() < 0.75 else rng.uniform(0, 2)
    tilt_dir = rng.uniform(0, 360)
    barrel = rng.uniform(*BARREL_K_RANGE) if rng.random() < 0.5 else 0.0
    chroma = (
        (float(rng.uniform(-1, 1) * CHROMA_MAX_PX), float(rng.uniform(-1, 1) * CHROMA_MAX_PX))
        if rng.random() < 0.4
        else (0.0, 0.0)
    )
    if clean:
        tilt, barrel, chroma = 0.0, 0.0, (0.0, 0.0)
    for attempt in range(200):
        if attempt and attempt % 12 == 0:
            if margin > 0.02:
                margin *= 0.6
            else:
                pitch = max(PITCH_MIN_PX, pitch * 0.94)
        hs = GRID_HALF + line_width / 2 + margin
        ext = pitch * hs * (abs(math.cos(math.radians(theta))) + abs(math.sin(math.radians(theta))))
        lo_x, hi_x = ext + 6, IMG_W - ext - 6
        lo_y, hi_y = ext + 6, IMG_H - ext - 6
        cx = rng.uniform(lo_x, hi_x) if hi_x > lo_x else IMG_W / 2
        cy = rng.uniform(lo_y, hi_y) if hi_y > lo_y else IMG_H / 2
        g = Geometry(
            focal,
            principal,
            focal / pitch,
            tilt,
            tilt_dir,
            barrel,
            chroma,
            (0.0, 0.0),
            theta,
            margin,
            line_width,
            thickness,
        )
        for _ in range(3):
            tmp = Geometry(**{**g.__dict__, "centre_world": (0.0, 0.0)})
            world = _backproject(tmp, np.array([[cx, cy]]), 0.0)[0]
            g = Geometry(**{**g.__dict__, "centre_world": (float(world[0]), float(world[1]))})
            measured = _truth(g).pitch
            g = Geometry(**{**g.__dict__, "height": g.height * measured / pitch})
        tr = _truth(g)
        if abs(abs(tr.angle) - 45.0) < FOLD_GUARD_DEG:
            theta += 3 * FOLD_GUARD_DEG
            continue
        if PITCH_MIN_PX - 0.5 <= tr.pitch <= PITCH_MAX_PX + 0.5 and _plate_fits(g):
            return g
    raise RuntimeError("could not place the board")  # pragma: no cover


def _sample_pieces(
    rng: np.random.Generator,
    plate_luma: float,
    plate_kind: str,
    board: str,
    exposure_mode: str,
    tags: set[str],
) -> PieceStyle:
    radius = rng.uniform(*PIECE_RADIUS_RANGE)
    domed = rng.random() < 0.5
    glossy = rng.random() < 0.5
    rim = rng.random() < 0.5
    black = rng.uniform(*BLACK_GREY_RANGE)
    white = rng.uniform(*WHITE_GREY_RANGE)
    has_x, has_o = "X" in board, "O" in board
    if plate_kind in ("white", "paper") and rng.random() < 0.6:
        d = rng.uniform(6, NEAR_TONE_GAP) * (1 if rng.random() < 0.5 else -1)
        white = float(np.clip(plate_luma + d, *WHITE_GREY_RANGE))
    if plate_kind == "dark":
        lo_gap = plate_luma + VISIBLE_GREY_GAP
        hi_gap = plate_luma - VISIBLE_GREY_GAP
        above = (max(lo_gap, BLACK_GREY_RANGE[0]), min(lo_gap + 10, BLACK_GREY_RANGE[1]))
        below = (BLACK_GREY_RANGE[0], min(hi_gap, BLACK_GREY_RANGE[1]))
        if rng.random() < 0.6 or exposure_mode == "crushed":
            if above[1] > above[0] and (
                exposure_mode == "crushed" or below[1] <= below[0] or rng.random() < 0.6
            ):
                black = rng.uniform(*above)
            elif below[1] > below[0]:
                black = rng.uniform(*below)
        if has_x:
            tags.add("pieces:black_on_dark")
    if abs(black - plate_luma) < VISIBLE_GREY_GAP:
        black = plate_luma + VISIBLE_GREY_GAP if plate_luma + VISIBLE_GREY_GAP <= 55 else plate_luma - 14
        black = float(np.clip(black, *BLACK_GREY_RANGE))
    if abs(white - plate_luma) < VISIBLE_GREY_GAP or exposure_mode == "clipped":
        rim = True
    if has_o and plate_kind in ("white", "paper") and abs(white - plate_luma) <= NEAR_TONE_GAP:
        tags.add("pieces:white_on_white")
    offsets = _sample_offsets(rng, radius)
    style = PieceStyle(
        radius=radius,
        height=rng.uniform(*DOME_EDGE_RANGE) if domed else rng.uniform(*FLAT_HEIGHT_RANGE),
        dome=rng.uniform(*DOME_HEIGHT_RANGE) if domed else 0.0,
        glossy=glossy,
        rim_dark=rng.uniform(*RIM_DARK_RANGE) if rim else 1.0,
        rim_width=rng.uniform(*RIM_WIDTH_RANGE),
        black=float(black),
        white=float(white),
        tint=_jitter(rng, (1.0, 1.0, 1.0), 0.03),
        shadow=rng.uniform(*CONTACT_SHADOW_RANGE),
        wall_shade=rng.uniform(0.55, 0.78),
        offsets=offsets,
    )
    if has_x or has_o:
        tags.add("pieces:domed" if domed else "pieces:flat")
        tags.add("pieces:glossy" if glossy else "pieces:matte")
        tags.add("pieces:contact_shadow")
        if rim:
            tags.add("pieces:rim")
        occupied = [s for s, ch in enumerate(board) if ch != "."]
        if any(math.hypot(*offsets[s]) > 0.05 for s in occupied):
            tags.add("pieces:offset")
    return style


def _sample_offsets(rng: np.random.Generator, radius: float) -> tuple[tuple[float, float], ...]:
    """Per-square offsets (<= 0.1 pitch) such that no two pieces overlap."""
    n = N_SIDE * N_SIDE
    centres = np.array([(s % N_SIDE - 1.0, s // N_SIDE - 1.0) for s in range(n)])
    offs = np.zeros((n, 2))
    for s in range(n):
        for _ in range(20):
            a = rng.uniform(0, 2 * math.pi)
            m = PIECE_OFFSET_MAX * math.sqrt(rng.random())
            cand = np.array([m * math.cos(a), m * math.sin(a)])
            pos = centres[s] + cand
            ok = all(np.hypot(*(pos - centres[t] - offs[t])) >= 2 * radius + 0.01 for t in range(s))
            if ok:
                offs[s] = cand
                break
    return tuple((float(x), float(y)) for x, y in offs)


def _sample_light(
    rng: np.random.Generator,
    clean: bool,
    glossy_plate: bool,
    exposure: float,
    black_level: float,
    tags: set[str],
) -> Lighting:
    wb_pick = rng.random()
    shift = rng.uniform(*WB_SHIFT_RANGE)
    if wb_pick < 0.3:
        wb = (1.0 - shift, 1.0, 1.0 + shift * 0.8)
        tags.add("light:warm")
    elif wb_pick < 0.6:
        wb = (1.0 + shift * 0.8, 1.0, 1.0 - shift)
        tags.add("light:cool")
    else:
        wb = (1.0, 1.0, 1.0)
    gradient = rng.uniform(*GRADIENT_RATIO_RANGE) if rng.random() < 0.5 else rng.uniform(1.0, 1.15)
    if gradient >= GRADIENT_RATIO_RANGE[0]:
        tags.add("light:gradient")
    vignette = rng.uniform(*VIGNETTE_RANGE) if rng.random() < 0.5 else rng.uniform(0.0, 0.08)
    if vignette >= VIGNETTE_RANGE[0]:
        tags.add("light:vignette")
    flicker = (0.0, 1.0, 0.0)
    if rng.random() < 0.25:
        flicker = (
            rng.uniform(*FLICKER_AMP_RANGE),
            rng.uniform(*FLICKER_PERIOD_RANGE),
            rng.uniform(0, 2 * math.pi),
        )
        tags.add("light:flicker")
    arm = None
    if rng.random() < 0.22:
        arm = (
            rng.uniform(0, 180),
            rng.uniform(-1.2, 1.2),
            rng.uniform(0.35, 0.9),
            rng.uniform(0.15, 0.35),
            rng.uniform(*ARM_SHADOW_RANGE),
        )
        tags.add("light:arm_shadow")
    glare = None
    if glossy_plate and rng.random() < 0.6:
        glare = (
            rng.uniform(-1.2, 1.2),
            rng.uniform(-1.2, 1.2),
            rng.uniform(0.4, 1.0),
            rng.uniform(*GLARE_AMP_RANGE),
        )
        tags.add("light:lamp_glare")
    light = Lighting(
        azimuth_deg=rng.uniform(0, 360),
        elevation_deg=rng.uniform(35, 72),
        wb=wb,
        gradient=gradient,
        gradient_dir_deg=rng.uniform(0, 360),
        vignette=vignette,
        flicker=flicker,
        arm_shadow=arm,
        glare=glare,
        exposure=exposure,
        black_level=black_level,
    )
    if clean:
        for t in [t for t in tags if t.startswith("light:")]:
            tags.discard(t)
        light = Lighting(
            light.azimuth_deg,
            light.elevation_deg,
            (1.0, 1.0, 1.0),
            1.0,
            0.0,
            0.0,
            (0.0, 1.0, 0.0),
            None,
            None,
            1.0,
            0.0,
        )
    return light


def _sample_camera_fx(rng: np.random.Generator, clean: bool, tags: set[str]) -> CameraFx:
    defocus = rng.uniform(*DEFOCUS_SIGMA_RANGE) if rng.random() < 0.4 else rng.uniform(0.0, 0.45)
    motion = rng.uniform(0.5, MOTION_MAX_PX) if rng.random() < 0.3 else 0.0
    noisy = rng.random() < 0.85
    read = rng.uniform(*READ_NOISE_RANGE)
    shot = rng.uniform(*SHOT_NOISE_RANGE)
    jpeg = int(rng.integers(JPEG_RANGE[0], JPEG_RANGE[1] + 1)) if rng.random() < 0.8 else 0
    fx = CameraFx(defocus, motion, rng.uniform(0, 180), read if noisy else 0.0, shot if noisy else 0.0, jpeg)
    if clean:
        return CameraFx(0.0, 0.0, 0.0, 0.0, 0.0, 0)
    if defocus >= DEFOCUS_SIGMA_RANGE[0]:
        tags.add("cam:defocus")
    if motion > 0:
        tags.add("cam:motion_blur")
    if noisy:
        tags.add("cam:noise")
    if jpeg:
        tags.add("cam:jpeg")
    return fx


def _free_of_plate(poly: np.ndarray, plate: np.ndarray, gap: float) -> bool:
    """True if a convex polygon keeps at least ``gap`` px away from the plate polygon."""
    centre = plate.mean(axis=0)
    rad = float(np.max(np.hypot(*(plate - centre).T)))
    grown = centre + (plate - centre) * (1 + gap / max(rad, 1.0))
    area, _ = cv2.intersectConvexConvex(poly.astype(np.float32), grown.astype(np.float32))
    return area <= 0.0


def _in_frame(poly: np.ndarray, min_area: float) -> bool:
    frame = np.array([[0, 0], [IMG_W - 1, 0], [IMG_W - 1, IMG_H - 1], [0, IMG_H - 1]], np.float32)
    hull = cv2.convexHull(poly.astype(np.float32))
    area, _ = cv2.intersectConvexConvex(hull, frame)
    return area >= min_area


def _sample_supply(
    rng: np.random.Generator, g: Geometry, style: PieceStyle, board: str, plate: np.ndarray, tags: set[str]
) -> Item | None:
    """Remaining supply pieces (5 minus those on the board per colour) in two lines beside the board."""
    pitch = _truth(g).pitch
    rpx = style.radius * pitch
    step = 2.3 * rpx + 0.08 * pitch
    lx0, ly0 = plate.min(axis=0)
    lx1, ly1 = plate.max(axis=0)
    room = {"left": lx0, "right": IMG_W - 1 - lx1, "top": ly0, "bottom": IMG_H - 1 - ly1}
    side = max(room, key=lambda k: room[k] + rng.uniform(0, 20))
    vertical = side in ("left", "right")
    length = SUPPLY_PER_COLOUR * step
    breadth = 2 * step
    pad = 0.35 * rpx + 4
    tray = rng.random() < 0.5
    angle = rng.uniform(-8, 8) + (90.0 if vertical else 0.0)
    gap = rng.uniform(0.25, 0.6) * pitch
    c_img = np.array([(lx0 + lx1) / 2, (ly0 + ly1) / 2]) + rng.uniform(-0.2, 0.2, 2) * pitch
    out_dir = {"left": (-1, 0), "right": (1, 0), "top": (0, -1), "bottom": (0, 1)}[side]
    size = (length + 2 * pad, breadth + 2 * pad)
    pos = None
    for dist in np.arange(0, 8 * pitch, 4):
        cand = c_img + np.array(out_dir) * dist
        poly = _rect(cand, size, angle)
        if _free_of_plate(poly, plate, gap):
            pos = cand
            break
    if pos is None:
        return None
    poly = _rect(pos, size, angle)
    a = math.radians(angle)
    ux = np.array([math.cos(a), math.sin(a)])
    uy = np.array([-math.sin(a), math.cos(a)])
    n_black = max(0, SUPPLY_PER_COLOUR - board.count("X"))
    n_white = max(0, SUPPLY_PER_COLOUR - board.count("O"))
    black_first = rng.random() < 0.5
    pieces = []
    slots = []
    visible = 0
    z = -g.thickness + (0.03 if tray else 0.005)
    t_circle = np.linspace(0, 2 * math.pi, 24, endpoint=False)
    for line in range(2):
        colour = "X" if (line == 0) == black_first else "O"
        count = n_black if colour == "X" else n_white
        for j in range(SUPPLY_PER_COLOUR):
            c = pos + ux * (j - (SUPPLY_PER_COLOUR - 1) / 2) * step + uy * (line - 0.5) * step
            c = c + rng.uniform(-0.04, 0.04, 2) * pitch
            slots.append(c + 1.08 * rpx * np.column_stack([np.cos(t_circle), np.sin(t_circle)]))
            if j < count:
                w = _backproject(g, c[None, :], z)[0]
                pieces.append((float(w[0]), float(w[1]), float(z), colour))
                if 0 <= c[0] < IMG_W and 0 <= c[1] < IMG_H:
                    visible += 1
    if not _in_frame(poly, 0.15 * size[0] * size[1]):
        return None
    inner = _rect(pos, (size[0] - 2 * pad * 0.6, size[1] - 2 * pad * 0.6), angle)
    if tray:
        colour = _jitter(
            rng, ((60, 110, 160), (200, 200, 200), (40, 40, 40), (150, 80, 40))[int(rng.integers(4))], 10
        )
    else:
        colour = _grey(rng, 215, 245)
    tags.add("clutter:supply_tray" if tray else "clutter:supply_paper")
    if visible:
        tags.add("clutter:supply")
    return Item(
        "supply",
        {
            "container": "tray" if tray else "paper",
            "poly": poly,
            "inner": inner,
            "colour": colour,
            "slots": slots if not tray or rng.random() < 0.5 else [],
            "pieces": pieces,
        },
    )


def _random_edge_point(rng: np.random.Generator) -> np.ndarray:
    side = int(rng.integers(4))
    t = rng.uniform(0.1, 0.9)
    return np.array(
        [[t * IMG_W, -5.0], [IMG_W + 5.0, t * IMG_H], [t * IMG_W, IMG_H + 5.0], [-5.0, t * IMG_H]][side]
    )


def _sample_clutter(
    rng: np.random.Generator, g: Geometry, plate: np.ndarray, blocked: list[np.ndarray], tags: set[str]
) -> tuple[Item, ...]:
    pitch = _truth(g).pitch
    items: list[Item] = []
    gap = 0.2 * pitch

    def place(
        size: tuple[float, float], must_avoid: list[np.ndarray], rounds: int = 25
    ) -> tuple[np.ndarray, float] | None:
        for _ in range(rounds):
            c = np.array([rng.uniform(-0.1, 1.1) * IMG_W, rng.uniform(-0.1, 1.1) * IMG_H])
            ang = rng.uniform(0, 180)
            poly = _rect(c, size, ang)
            if not _free_of_plate(poly, plate, gap):
                continue
            if any(
                cv2.intersectConvexConvex(poly.astype(np.float32), b.astype(np.float32))[0] > 0
                for b in must_avoid
            ):
                continue
            if not _in_frame(poly, 0.12 * size[0] * size[1]):
                continue
            return c, ang
        return None

    if rng.random() < 0.45:
        size = (rng.uniform(3.5, 6.0) * pitch, rng.uniform(4.5, 8.0) * pitch)
        got = place(size, [])
        if got is not None:
            c, ang = got
            items.append(
                Item(
                    "paper",
                    {
                        "centre": c,
                        "size": size,
                        "angle": ang,
                        "colour": _grey(rng, 215, 250),
                        "ink": _grey(rng, 30, 80),
                        "row_px": rng.uniform(0.12, 0.2) * pitch,
                        "lift": 0.02,
                    },
                )
            )
            tags.add("clutter:paper")
    if rng.random() < 0.4:
        size = (rng.uniform(1.0, 3.0) * pitch, rng.uniform(0.35, 0.55) * pitch)
        got = place(size, blocked)
        if got is not None:
            c, ang = got
            masking = rng.random() < 0.6
            colour = _jitter(rng, (150, 200, 225), 10) if masking else _grey(rng, 220, 245)
            items.append(
                Item(
                    "tape",
                    {
                        "centre": c,
                        "size": size,
                        "angle": ang,
                        "colour": colour,
                        "opacity": rng.uniform(0.6, 0.85) if masking else rng.uniform(0.15, 0.3),
                    },
                )
            )
            tags.add("clutter:tape")
    if rng.random() < 0.35:
        size = (rng.uniform(1.3, 1.6) * pitch, rng.uniform(2.7, 3.2) * pitch)
        got = place(size, blocked)
        if got is not None:
            c, ang = got
            colour = ((20, 20, 20), (230, 230, 235), (140, 90, 40), (60, 60, 160))[int(rng.integers(4))]
            items.append(
                Item(
                    "phone",
                    {
                        "centre": c,
                        "size": size,
                        "angle": ang,
                        "colour": _jitter(rng, colour, 8),
                        "screen": rng.random() < 0.5,
                    },
                )
            )
            blocked.append(_rect(c, size, ang))
            tags.add("clutter:phone")
    if rng.random() < 0.35:
        size = (rng.uniform(5.0, 7.0) * pitch, rng.uniform(0.5, 0.75) * pitch)
        got = place(size, blocked)
        if got is not None:
            c, ang = got
            kind = int(rng.integers(3))
            colour = ((120, 190, 225), (225, 225, 225), (175, 175, 180))[kind]
            items.append(
                Item(
                    "ruler",
                    {
                        "centre": c,
                        "size": size,
                        "angle": ang,
                        "colour": _jitter(rng, colour, 10),
                        "opacity": (0.95, 0.35, 1.0)[kind],
                        "tick_px": 0.2 * pitch,
                    },
                )
            )
            blocked.append(_rect(c, size, ang))
            tags.add("clutter:ruler")
    if rng.random() < 0.45:
        radius = rng.uniform(0.03, 0.06) * pitch
        for _ in range(15):
            start = _random_edge_point(rng)
            ctrl = [start]
            for _k in range(3):
                ctrl.append(np.array([rng.uniform(0, IMG_W), rng.uniform(0, IMG_H)]))
            ctrl_a = np.array(ctrl)
            t = np.linspace(0, 1, 24)[:, None]
            pts = (
                (1 - t) ** 3 * ctrl_a[0]
                + 3 * (1 - t) ** 2 * t * ctrl_a[1]
                + 3 * (1 - t) * t * t * ctrl_a[2]
                + t**3 * ctrl_a[3]
            )
            contour = plate.astype(np.float32).reshape(-1, 1, 2)
            far = all(
                cv2.pointPolygonTest(contour, (float(x), float(y)), True) < -(gap + radius) for x, y in pts
            )
            clear = all(
                cv2.pointPolygonTest(b.astype(np.float32).reshape(-1, 1, 2), (float(x), float(y)), True)
                < -radius
                for b in blocked
                for x, y in pts
            )
            if far and clear:
                colour = ((25, 25, 25), (225, 225, 225), (110, 110, 110))[int(rng.integers(3))]
                items.append(
                    Item("cable", {"points": pts, "radius": radius, "colour": _jitter(rng, colour, 6)})
                )
                tags.add("clutter:cable")
                break
    if rng.random() < 0.35:
        item = _sample_parked_gantry(rng, g, plate, pitch, gap)
        if item is not None:
            items.append(item)
            tags.add("clutter:gantry_parked")
    return tuple(items)


def _gantry_params(
    rng: np.random.Generator, world_xy: np.ndarray, arm_dir: np.ndarray, z_bottom: float
) -> dict[str, Any]:
    metallic = rng.random() < 0.5
    colour = _grey(rng, 150, 200) if metallic else _grey(rng, 25, 50)
    return {
        "world": (float(world_xy[0]), float(world_xy[1])),
        "z_bottom": z_bottom,
        "z_top": z_bottom + rng.uniform(0.4, 0.9),
        "radius": rng.uniform(0.25, 0.5),
        "colour": colour,
        "metallic": metallic,
        "arm_dir": (float(arm_dir[0]), float(arm_dir[1])),
        "arm_width": rng.uniform(0.3, 0.6),
        "arm_colour": _grey(rng, 140, 190) if rng.random() < 0.6 else _grey(rng, 20, 45),
        "shadow": rng.uniform(0.3, 0.5),
    }


def _gantry_polys(g: Geometry, p: dict[str, Any]) -> list[np.ndarray]:
    world = p["world"]
    pts = [_project(g, _circle(np.array(world), p["radius"], z)) for z in (p["z_bottom"], p["z_top"])]
    hull = cv2.convexHull(np.concatenate(pts).astype(np.float32)).reshape(-1, 2).astype(np.float64)
    ct = _project(g, np.array([[world[0], world[1], p["z_top"]]]))[0]
    ahead = _project(g, np.array([[world[0] + p["arm_dir"][0], world[1] + p["arm_dir"][1], p["z_top"]]]))[0]
    u = (ahead - ct) / np.linalg.norm(ahead - ct)
    scale = float(np.sqrt(abs(np.linalg.det(_jacobian(g, np.array([world[0], world[1], p["z_top"]]))))))
    arm = _rect(
        ct + u * (IMG_W + IMG_H) / 2,
        (IMG_W + IMG_H, p["arm_width"] * scale),
        math.degrees(math.atan2(u[1], u[0])),
    )
    return [hull, arm]


def _sample_parked_gantry(
    rng: np.random.Generator, g: Geometry, plate: np.ndarray, pitch: float, gap: float
) -> Item | None:
    for _ in range(12):
        side = int(rng.integers(4))
        inset = rng.uniform(0.5, 1.0) * pitch
        t = rng.uniform(0.1, 0.9)
        xy = [(t * IMG_W, inset), (IMG_W - inset, t * IMG_H), (t * IMG_W, IMG_H - inset), (inset, t * IMG_H)][
            side
        ]
        arm_img = (
            [(1, 0), (0, 1), (-1, 0), (0, -1)][side]
            if rng.random() < 0.5
            else [(-1, 0), (0, -1), (1, 0), (0, 1)][side]
        )
        z_b = rng.uniform(0.5, 1.5) - g.thickness
        w = _backproject(g, np.array([xy]), z_b)[0]
        w2 = _backproject(g, np.array([xy]) + np.array([arm_img]) * 20.0, z_b)[0]
        d = (w2 - w)[:2]
        d /= np.linalg.norm(d)
        p = _gantry_params(rng, w[:2], d, z_b)
        polys = _gantry_polys(g, p)
        if all(_free_of_plate(q, plate, gap) for q in polys):
            return Item("gantry_parked", p)
    return None


def _sample_occluder(
    rng: np.random.Generator,
    kind: str,
    g: Geometry,
    board: str,
    style: PieceStyle,
    light: Lighting,
    tags: set[str],
) -> Item:
    """Parameters of an occluder lying over the board's squares or lines."""
    truth = _truth(g)
    pitch = truth.pitch
    tags.add(f"occluded:{kind}")
    lpx = _light_px(g, light)
    if kind == "hand":
        target = _project(g, _board_to_world(g, rng.uniform(-1.3, 1.3, (1, 2))))[0]
        entry = _random_edge_point(rng)
        axis = target - entry
        axis /= np.linalg.norm(axis)
        nrm = np.array([-axis[1], axis[0]])
        s = pitch * rng.uniform(1.05, 1.3)
        side = 1 if rng.random() < 0.5 else -1
        n_f = int(rng.integers(1, 5))
        f_len = rng.uniform(1.2, 1.6) * s
        f_rad = rng.uniform(0.17, 0.21) * s
        knuckle = target - axis * f_len
        polys: list[np.ndarray] = []
        fingers = []
        for j in range(4):
            base = knuckle + nrm * side * j * 0.42 * s
            spread = math.radians(rng.uniform(-8, 8) + j * side * 4)
            rot = np.array([[math.cos(spread), -math.sin(spread)], [math.sin(spread), math.cos(spread)]])
            direction = rot @ axis
            length = f_len * (1.0, 1.06, 0.98, 0.8)[j] if j < n_f else 0.35 * s
            tip = base + direction * length
            polys.append(_capsule(base, tip, f_rad * (1.0, 1.02, 0.98, 0.9)[j], 8))
            if j < n_f:
                fingers.append((tuple(base), tuple(tip), f_rad))
        palm_c = knuckle + nrm * side * 0.63 * s
        polys.append(_capsule(palm_c - axis * 0.35 * s, palm_c - axis * 1.3 * s, 0.82 * s, 10))
        thumb0 = palm_c - axis * 0.9 * s - nrm * side * 0.75 * s
        ta = math.radians(-side * rng.uniform(25, 50))
        trot = np.array([[math.cos(ta), -math.sin(ta)], [math.sin(ta), math.cos(ta)]])
        thumb1 = thumb0 + trot @ axis * rng.uniform(0.7, 1.0) * s
        polys.append(_capsule(thumb0, thumb1, 0.22 * s, 8))
        wrist = palm_c - axis * 1.6 * s
        far = entry - axis * 4 * s
        polys.append(_capsule(wrist, far, 0.72 * s, 8))
        sleeve = _capsule(palm_c - axis * 2.6 * s, far, 0.9 * s, 8) if rng.random() < 0.5 else None
        skins = ((150, 175, 225), (120, 150, 205), (85, 115, 170), (55, 75, 115), (140, 160, 210))
        return Item(
            "hand",
            {
                "polys": polys,
                "fingers": fingers,
                "skin": _jitter(rng, skins[int(rng.integers(len(skins)))], 10),
                "sleeve": sleeve,
                "sleeve_colour": _jitter(rng, (90, 70, 60), 50),
                "finger_px": f_rad,
                "height": rng.uniform(0.3, 1.2),
                "shadow": rng.uniform(0.3, 0.5),
                "shadow_sigma": rng.uniform(0.1, 0.25) * pitch,
            },
        )
    if kind == "pen":
        uv = rng.uniform(-1.2, 1.2, 2)
        c = _project(g, _board_to_world(g, uv[None, :]))[0]
        bodies = ((150, 60, 20), (25, 25, 25), (40, 40, 190), (235, 235, 235), (40, 140, 40))
        return Item(
            "pen",
            {
                "centre_px": c,
                "angle": rng.uniform(0, 360),
                "length_px": rng.uniform(2.6, 4.0) * pitch,
                "width_px": rng.uniform(0.1, 0.16) * pitch,
                "height": rng.uniform(0.08, 0.2),
                "body": _jitter(rng, bodies[int(rng.integers(len(bodies)))], 12),
                "cap": _jitter(rng, bodies[int(rng.integers(len(bodies)))], 12),
                "cap_frac": rng.uniform(0.2, 0.35),
            },
        )
    if kind == "coin":
        empty = [s for s, ch in enumerate(board) if ch == "."]
        n_coins = 1 if rng.random() < 0.7 or len(empty) < 2 else 2
        chosen = rng.choice(np.array(empty), size=n_coins, replace=False)
        metals = ((185, 185, 190), (70, 175, 215), (70, 115, 195))
        coins = []
        for s in chosen:
            s = int(s)
            radius = rng.uniform(0.15, 0.26)
            centre = np.array([s % N_SIDE - 1.0, s // N_SIDE - 1.0])
            for _ in range(20):
                off = rng.uniform(-0.2, 0.2, 2)
                if _coin_clear(centre + off, radius, board, style):
                    break
            else:
                off = np.zeros(2)
            coins.append(
                (
                    s,
                    (float(centre[0] + off[0]), float(centre[1] + off[1])),
                    radius,
                    _jitter(rng, metals[int(rng.integers(3))], 12),
                )
            )
        return Item("coin", {"coins": coins})
    if kind == "gantry":
        uv = rng.uniform(-1.4, 1.4, 2)
        w = _board_to_world(g, uv[None, :])[0]
        axes = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
        d = axes[int(rng.integers(4))] + rng.uniform(-0.08, 0.08, 2)
        return Item("gantry", _gantry_params(rng, w[:2], d / np.linalg.norm(d), rng.uniform(0.35, 1.2)))
    if kind == "paper":
        grid = _grid_polygon(g)
        grid_area = cv2.contourArea(grid.astype(np.float32))
        size = (rng.uniform(2.5, 4.5) * pitch, rng.uniform(3.5, 6.0) * pitch)
        ang = rng.uniform(0, 180)
        direction = rng.uniform(0, 2 * math.pi)
        target = rng.uniform(0.15, 0.5)
        centre = np.array(truth.centre)
        unit = np.array([math.cos(direction), math.sin(direction)])
        lo, hi = 0.0, 6.0 * pitch
        for _ in range(30):
            mid = (lo + hi) / 2
            poly = _rect(centre + unit * mid, size, ang)
            area, _ = cv2.intersectConvexConvex(poly.astype(np.float32), grid.astype(np.float32))
            if area / grid_area > target:
                lo = mid
            else:
                hi = mid
        colours = ((245, 245, 245), (200, 235, 245), (150, 240, 250), (245, 225, 200))
        return Item(
            "paper",
            {
                "centre": centre + unit * lo,
                "size": size,
                "angle": ang,
                "colour": _jitter(rng, colours[int(rng.integers(len(colours)))], 8),
                "ink": _grey(rng, 30, 80),
                "row_px": rng.uniform(0.12, 0.2) * pitch,
                "lift": rng.uniform(0.03, 0.12),
            },
        )
    # held piece: hanging under the magnet above a square
    s = int(rng.integers(N_SIDE * N_SIDE))
    uv = np.array([s % N_SIDE - 1.0, s // N_SIDE - 1.0]) + rng.uniform(-0.3, 0.3, 2)
    z = rng.uniform(0.8, 2.0)
    w = _board_to_world(g, uv[None, :], z)[0]
    head = _gantry_params(
        rng,
        w[:2],
        np.array([1.0, 0.0]) if rng.random() < 0.5 else np.array([0.0, 1.0]),
        z + style.height + style.dome,
    )
    head["radius"] = style.radius * rng.uniform(0.45, 0.65)
    if rng.random() < 0.5:
        head["arm_dir"] = (-head["arm_dir"][0], -head["arm_dir"][1])
    _ = lpx
    return Item(
        "held_piece",
        {
            "world": (float(w[0]), float(w[1]), float(z)),
            "colour": "X" if rng.random() < 0.5 else "O",
            "blur": rng.uniform(1.2, 3.0),
            "shadow": rng.uniform(0.3, 0.5),
            "head": head,
        },
    )


def _coin_clear(pos: np.ndarray, radius: float, board: str, style: PieceStyle) -> bool:
    for t, ch in enumerate(board):
        if ch == ".":
            continue
        c = np.array([t % N_SIDE - 1.0, t // N_SIDE - 1.0]) + np.array(style.offsets[t])
        if np.hypot(*(pos - c)) < radius + style.radius + 0.03:
            return False
    return True


def draw_scene(seed: int, i: int, *, clean: bool = False) -> Scene:
    """Draw every random choice of frame ``i`` of set ``seed``.

    ``clean=True`` keeps the plate, pieces, board and clutter but drops tilt, lens effects, lighting,
    sensor effects and the occluder (used by the tests to check the truth against the pixels).
    """
    ss = np.random.SeedSequence([seed, i])
    rng_style, rng_geo, rng_clutter, rng_occ, rng_fx, rng_tex = (
        np.random.default_rng(s) for s in ss.spawn(6)
    )
    tags: set[str] = set()

    board_kind = BOARD_KINDS[_stratum(seed, i, SALT_BOARD, len(BOARD_KINDS))]
    occ_kind = _occluder_kind(seed, i)
    if occ_kind == "coin" and board_kind == "full":
        board_kind = "game"
    board = _sample_board(rng_style, board_kind)
    if occ_kind == "coin" and "." not in board:
        board = "." + board[1:]
    tags.add(f"board:{board_kind}")

    plate_kind = PLATE_KINDS[_stratum(seed, i, SALT_PLATE, len(PLATE_KINDS))]
    table_kind = TABLE_KINDS[_stratum(seed, i, SALT_TABLE, len(TABLE_KINDS))]
    line_style = LINE_STYLES[_stratum(seed, i, SALT_LINES, len(LINE_STYLES))]
    if plate_kind == "paper" and line_style == "engraved":
        line_style = "printed"
    colour = _sample_plate_colour(rng_style, plate_kind)
    luma = _luma(colour)
    glossy = rng_style.random() < PLATE_GLOSSY_PROB
    if line_style == "engraved":
        line_light = False
    elif luma < LIGHT_LINE_LUMA:
        line_light = True
    elif luma > DARK_LINE_LUMA:
        line_light = False
    else:
        line_light = rng_style.random() < 0.5
    line_colour = _grey(rng_style, 205, 250) if line_light else _grey(rng_style, 12, 70, 10)
    side = (
        _jitter(rng_style, (120, 140, 150), 25)
        if plate_kind == "paper"
        else tuple(float(v) for v in np.asarray(colour) * rng_style.uniform(0.55, 0.75))
    )
    plate = PlateStyle(plate_kind, colour, side, glossy, line_style, line_colour, line_light)  # type: ignore[arg-type]
    tags.update({f"plate:{plate_kind}", f"lines:{line_style}", "lines:light" if line_light else "lines:dark"})
    if glossy:
        tags.add("plate:glossy")
    margin = rng_style.uniform(*MARGIN_RANGE) if rng_style.random() < MARGIN_PROB else 0.0
    line_width = rng_style.uniform(*LINE_WIDTH_RANGE)
    if line_width < THIN_LINE:
        tags.add("lines:thin")
    elif line_width > THICK_LINE:
        tags.add("lines:thick")
    thickness = rng_style.uniform(0.03, 0.07) if plate_kind == "paper" else rng_style.uniform(0.05, 0.2)

    exposure_mode = "normal"
    pick = rng_style.random()
    if not clean and luma >= BRIGHT_PLATE_LUMA and pick < 0.35:
        exposure_mode = "clipped"
    elif not clean and luma <= DARK_PLATE_LUMA and pick < 0.45:
        exposure_mode = "crushed"
    pieces = _sample_pieces(rng_style, luma, plate_kind, board, exposure_mode, tags)
    exposure, black_level = 1.0, 0.0
    if not clean:
        exposure = rng_style.uniform(0.9, 1.1)
        if exposure_mode == "clipped":
            exposure = 255.0 * rng_style.uniform(*CLIP_OVER_RANGE) / luma
            tags.add("cam:clipped")
        elif exposure_mode == "crushed":
            black_level = luma * exposure * rng_style.uniform(*CRUSH_RANGE)
            tags.add("cam:crushed")
    light = _sample_light(rng_style, clean, glossy, exposure, black_level, tags)

    geo = _sample_geometry(rng_geo, clean, margin, line_width, thickness)
    tags.add("plate:margin" if geo.margin > 0.0 else "plate:no_margin")
    truth = _truth(geo)
    if geo.tilt_deg >= TILT_TAG_DEG:
        tags.add("cam:tilt")
    if geo.barrel_k > 0:
        tags.add("cam:barrel")
    if geo.chroma_px != (0.0, 0.0):
        tags.add("cam:chroma")
    if truth.pitch < PITCH_SMALL_TAG_PX:
        tags.add("cam:pitch_small")
    elif truth.pitch > PITCH_LARGE_TAG_PX:
        tags.add("cam:pitch_large")
    if abs(truth.angle) >= DIAGONAL_TAG_DEG:
        tags.add("geom:diagonal")
    fx = _sample_camera_fx(rng_fx, clean, tags)

    table_colour = {
        "wood": _jitter(rng_clutter, (70, 115, 160), 25),
        "cloth": _jitter(rng_clutter, tuple(rng_clutter.uniform(40, 200, 3)), 0),  # type: ignore[arg-type]
        "laminate": _grey(rng_clutter, 160, 235, 8),
        "paper": _jitter(rng_clutter, (150, 185, 205) if rng_clutter.random() < 0.5 else (225, 228, 230), 10),
        "dark": _grey(rng_clutter, 22, 50, 6),
    }[table_kind]
    tags.add(f"table:{table_kind}")
    plate_poly = _plate_polygon(geo)
    supply = (
        _sample_supply(rng_clutter, geo, pieces, board, plate_poly, tags)
        if rng_clutter.random() < 0.85
        else None
    )
    blocked = [np.asarray(supply.params["poly"])] if supply is not None else []
    clutter = _sample_clutter(rng_clutter, geo, plate_poly, blocked, tags)

    occluder = None
    if occ_kind is not None and not clean:
        occluder = _sample_occluder(rng_occ, occ_kind, geo, board, pieces, light, tags)

    return Scene(
        seed=seed,
        index=i,
        clean=clean,
        board=board,
        geometry=geo,
        plate=plate,
        pieces=pieces,
        table_kind=table_kind,
        table_colour=table_colour,
        light=light,
        camera=fx,
        supply=supply,
        clutter=clutter,
        occluder=occluder,
        tags=frozenset(tags),
        tex_seed=int(rng_tex.integers(2**63 - 1)),
    )


def render_sample(seed: int, i: int, *, clean: bool = False) -> Sample:
    """Sample ``i`` of set ``seed`` (equals ``make_set(i + 1, seed)[i]`` when ``clean`` is false)."""
    return render_scene(draw_scene(seed, i, clean=clean))


def make_set(n: int, seed: int) -> list[Sample]:
    """The first ``n`` samples of set ``seed``."""
    return [render_sample(seed, i) for i in range(n)]
