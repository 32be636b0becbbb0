"""Synthetic camera frames of a tic-tac-toe board lying on a gridded or patterned table.

Written from its requirements alone (see README.md): nothing of the board detector it is meant to judge was
read while writing it.

Contract
--------
``make_frame(index, seed)`` returns a :class:`Sample` that depends only on ``(seed, index)``: every random
choice is drawn from ``np.random.default_rng(np.random.SeedSequence([seed, index]))``, first by the scene
sampler (``sample_scene(index, seed)`` returns the same scene without rendering it), then by the renderer
(textures, scratches, sensor noise).

Geometry
--------
The world is in millimetres, z up, the table top at z = 0; the table's pattern (mat, paper, tiles, cloth,
planks) has its axes along world x and y. The board's own frame has u along its columns and w along its
rows' upward direction: the centre of square (r, c) as drawn is at ``(u, w) = ((c - 1) s, (1 - r) s)`` on the
plate's top face, s being the square's size. A pinhole camera (no lens distortion) 300-600 mm above the
table looks down, tilted by up to 20 degrees; every plane (table, mat, plate top, piece tops, a hand) is
mapped with its own homography, so raised things show parallax and their sides.

Truth
-----
``centre_px`` is the image of the centre square's centre on the plate's top face; ``pitch_px`` the mean image
distance from it to its four neighbours' centres; ``angle_deg`` the rotation of the board's x axis as seen
(counter-clockwise with image y down), the mean of the directions given by the row through the centre and by
the column through it, folded into (-45, 45]. ``board`` is re-labelled for the k quarter turns folded away:
``np.rot90(drawn, k)``, so that square (r, c) of ``board`` lies near ``centre + (c - 1) pitch (cos a, -sin a)
+ (r - 1) pitch (sin a, cos a)`` (:func:`square_centres_px` gives the exact positions).
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass, replace
from typing import Final

import cv2
import numpy as np

BGR = tuple[float, float, float]
Rect = tuple[float, float, float, float]  # x0, y0, x1, y1

# --- image and camera ------------------------------------------------------------------------------------
IMAGE_H: Final = 480
IMAGE_W: Final = 640
PITCH_RANGE_PX: Final = (35.0, 90.0)  # the truth's pitch always lies in here
PITCH_TARGET_PX: Final = (37.0, 88.0)  # pitch aimed at before the tilt's perspective changes it
CAMERA_HEIGHT_MM: Final = (300.0, 600.0)
FOCAL_PX: Final = (450.0, 1100.0)  # 640x480 webcams: about 70 to 32 degrees of horizontal field
MAX_TILT_DEG: Final = 20.0
PRINCIPAL_JITTER_PX: Final = (8.0, 6.0)
VISIBLE_MARGIN_PX: Final = 3.0  # the plate and the pieces lie this far inside the frame
NEAR_MM: Final = 60.0  # geometry nearer than this to the camera's plane is clipped away
VIEW_MARGIN: Final = 0.08  # the table is drawn this much (fraction of the frame) beyond the frame's edges

# --- board -----------------------------------------------------------------------------------------------
SQUARE_MM: Final = (28.0, 65.0)
LINE_WIDTH_FRAC: Final = (0.02, 0.12)  # of the pitch
PIECE_RADIUS_FRAC: Final = (0.20, 0.45)  # of the pitch
PIECE_OFFSET_FRAC: Final = 0.06  # of the pitch, off the square's centre
PIECE_HEIGHT_MM: Final = (3.0, 9.0)
BLACK_GREY: Final = (15.0, 55.0)
WHITE_GREY: Final = (205.0, 245.0)
LOW_CONTRAST_GREY: Final = 20.0  # white pieces within this many grey levels of the plate
PLATE_THICKNESS_MM: Final = (3.0, 18.0)
DARK_LINE_LUMA: Final = 115.0  # plates brighter than this get dark lines, the others light lines

# --- scene statistics ------------------------------------------------------------------------------------
TABLE_KINDS: Final = (
    ("plain", 0.20),
    ("cutting_mat", 0.32),
    ("graph_paper", 0.13),
    ("tiles", 0.08),
    ("gingham", 0.08),
    ("planks", 0.07),
    ("perfboard", 0.03),
    ("breadboard", 0.03),
    ("chessboard", 0.06),
)
PATTERNED_BESIDE: Final = ("perfboard", "breadboard", "chessboard")
OCCLUDER_PROBABILITY: Final = 0.10
OCCLUDER_KINDS: Final = (("hand", 0.45), ("pen", 0.30), ("coin", 0.25))
ALIGNED_PROBABILITY: Final = 0.29  # plus the ~7 % that a free rotation lands within 3 degrees: a third
ALIGNED_TOLERANCE_DEG: Final = 3.0
PITCH_MATCH_PROBABILITY: Final = 0.30
PHASE_LOCK_PROBABILITY: Final = 0.5
SPARES_PROBABILITY: Final = 0.30
EDGE_NEAR_PROBABILITY: Final = 0.5
PITCH_MATCH_TOLERANCE_MM: Final = 0.3
PITCH_MATCH_MAX_DIVISOR: Final = 10
FINE_RATIO: Final = 0.25  # pattern cell / board square at or below this: mat:fine
COARSE_RATIO: Final = 0.5  # at or above this: mat:coarse

# --- light and sensor ------------------------------------------------------------------------------------
MAX_LIGHT_RATIO: Final = 2.0  # brightest / darkest point of the plate's top
EXPOSURE_RANGE: Final = (0.65, 1.45)  # around what auto-exposure chose
AE_TARGET: Final = 125.0  # grey level auto-exposure aims the frame's mean at
AE_STRENGTH: Final = 0.5  # 0: no auto-exposure, 1: the mean always lands on AE_TARGET
MOTION_BLUR_MAX_PX: Final = 2.0
JPEG_QUALITY: Final = (50, 95)

# --- drawing ---------------------------------------------------------------------------------------------
SHIFT: Final = 4  # fixed-point bits of OpenCV's drawing calls
FIX: Final = 1 << SHIFT
CIRCLE_POINTS: Final = 40
GLOW_PX_PER_SAMPLE: Final = 6.0  # soft blobs larger than this are drawn at 1/(radius // this) resolution
MAX_CANVAS_PX: Final = 420_000  # texture canvases are at most this many pixels

TAGS: Final[frozenset[str]] = frozenset(
    {
        # what the board lies on
        "table:plain",
        "table:cutting_mat",
        "table:graph_paper",
        "table:tiles",
        "table:gingham",
        "table:planks",
        "table:perfboard",
        "table:breadboard",
        "table:chessboard",
        "surface:wood",
        "surface:laminate",
        "surface:cloth",
        "surface:paper",
        # the table's pattern, whatever it is (mat, paper, tiles, cloth, planks, the object beside)
        "mat:aligned",
        "mat:pitch_match",
        "mat:phase_locked",
        "mat:fine",
        "mat:coarse",
        "mat:light_lines",
        "mat:dark_lines",
        "mat:guides",
        "mat:circles",
        "mat:scales",
        "mat:imperial",
        "mat:translucent",
        "mat:edge_in_view",
        # the board
        "plate:white",
        "plate:light_grey",
        "plate:mid_grey",
        "plate:wood",
        "plate:dark",
        "plate:pastel",
        "plate:saturated",
        "plate:blue",
        "plate:green",
        "plate:paper",
        "plate:frame_at_edge",
        "plate:like_table",
        "lines:printed",
        "lines:engraved",
        "lines:marker",
        "lines:tape",
        "lines:light",
        "lines:thin",
        "lines:thick",
        # the pieces
        "pieces:empty",
        "pieces:full",
        "pieces:game",
        "pieces:random",
        "pieces:large",
        "pieces:small",
        "pieces:glossy",
        "pieces:low_contrast",
        "pieces:spares_columns",
        "pieces:spares_scatter",
        # light and camera
        "light:area",
        "light:point",
        "light:gradient",
        "light:warm",
        "light:cool",
        "light:bright",
        "light:dim",
        "cam:tilted",
        "cam:defocus",
        "cam:motion_blur",
        "cam:noisy",
        "cam:jpeg_low",
        # occluders (never part of the truth)
        "occ:hand",
        "occ:pen",
        "occ:coin",
    }
)


# =========================================================================================================
# Data
# =========================================================================================================
@dataclass(frozen=True, eq=False)
class Sample:
    """One synthetic frame and its truth (field meanings: module docstring and README)."""

    image: np.ndarray  # 480x640x3 uint8 BGR, after a JPEG encode/decode
    board: str  # 9 chars row by row in the folded board frame: X black, O white, . empty
    centre_px: tuple[float, float]
    angle_deg: float  # in (-45, 45]
    pitch_px: float
    occluded: bool
    tags: frozenset[str]


@dataclass(frozen=True, eq=False)
class Camera:
    """A pinhole camera without lens distortion: ``pixel ~ K @ R @ (X - C)``, world in mm, z up."""

    K: np.ndarray
    R: np.ndarray
    C: np.ndarray

    def to_camera(self, pts: np.ndarray) -> np.ndarray:
        """(N, 3) world points -> (N, 3) camera coordinates (x right, y down, z forward)."""
        return (np.asarray(pts, dtype=np.float64).reshape(-1, 3) - self.C) @ self.R.T

    def project(self, pts: np.ndarray) -> np.ndarray:
        """(N, 3) world points in front of the camera -> (N, 2) pixels (x right, y down)."""
        cam = self.to_camera(pts)
        depth = np.maximum(cam[:, 2:3], NEAR_MM)
        return cam[:, :2] / depth * np.diag(self.K)[:2] + self.K[:2, 2]

    def homography(self, z: float) -> np.ndarray:
        """3x3 map from (x, y) on the horizontal plane at height z to pixels."""
        t = self.R @ (np.array([0.0, 0.0, z]) - self.C)
        return self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], t])

    def back_project(self, px: np.ndarray, z: float) -> np.ndarray:
        """(N, 2) pixels -> (N, 2) world (x, y) where their rays meet the plane at height z."""
        px = np.asarray(px, dtype=np.float64).reshape(-1, 2)
        d_cam = np.column_stack([(px - self.K[:2, 2]) / np.diag(self.K)[:2], np.ones(len(px))])
        d = d_cam @ self.R
        lam = (z - self.C[2]) / d[:, 2]
        return self.C[:2] + lam[:, None] * d[:, :2]

    def px_per_mm(self, pts: np.ndarray) -> np.ndarray:
        """Image scale (pixels per millimetre, across the line of sight) at (N, 3) world points."""
        return self.K[0, 0] / np.maximum(self.to_camera(pts)[:, 2], NEAR_MM)


@dataclass(frozen=True)
class Surface:
    """The table's own surface, wherever no sheet or tile covers it."""

    kind: str  # "wood" | "laminate" | "cloth" | "paper"
    colour: BGR
    grain_angle: float  # radians in the world: wood grain, cloth folds
    grain_period_mm: float  # growth-ring spacing of wood
    variation: float  # relative amplitude of the texture


@dataclass(frozen=True)
class SheetGrid:
    """A cutting mat or a sheet of graph paper: a rectangle lying on the table, printed with a grid."""

    kind: str  # "cutting_mat" | "graph_paper"
    rect: Rect  # the sheet, world mm
    grid: Rect  # the printed grid's area, inside the sheet
    corner_mm: float
    thickness_mm: float
    colour: BGR
    opacity: float  # below 1: a translucent mat, the table shows through
    minor_mm: float
    major_every: int  # minor cells per heavier line (1: every line heavy)
    mid_every: int  # graph paper's medium line every mid_every minor cells (0: none)
    minor_width_mm: float
    major_width_mm: float
    line_colour: BGR
    minor_alpha: float
    major_alpha: float
    tick_mm: float  # ticks along the major lines (imperial mats: 1/8 inch; 0: none)
    scale_mm: float  # ruler scale along the grid's edges: tick spacing (0: no scale)
    number_mm: float  # a number every number_mm along the scale
    guides: tuple[float, ...]  # angles (degrees) of diagonal guides
    guide_family_mm: float  # spacing of parallel 45 degree guides (0: none)
    circles: tuple[tuple[float, float, float], ...]  # (x, y, radius) world mm
    margin_line_x: float  # notebook paper's red margin line (nan: none)
    scratches: int  # cut marks in the mat's surface


@dataclass(frozen=True)
class TilePattern:
    """Ceramic tiles with grout lines covering the whole table."""

    tile_mm: float
    grout_mm: float
    origin: tuple[float, float]
    colour: BGR
    grout_colour: BGR
    variation: float
    gloss: float  # strength of the light's reflection blob


@dataclass(frozen=True)
class GinghamPattern:
    """A checkered tablecloth: crossing stripes of width check_mm every 2 check_mm."""

    check_mm: float
    origin: tuple[float, float]
    colour: BGR  # where stripes cross; one stripe alone gives the mean of colour and white


@dataclass(frozen=True)
class PlankPattern:
    """A wooden table of parallel planks along world x (the surface holds the wood's colour and grain)."""

    plank_mm: float
    seam_mm: float
    origin: float  # y of one seam
    seam_colour: BGR


@dataclass(frozen=True)
class BesideObject:
    """A flat box with a patterned top lying beside the board: perfboard, breadboard or chessboard."""

    kind: str
    centre: tuple[float, float]
    angle: float  # radians in the world
    half: tuple[float, float]  # half sizes along its own axes, mm
    thickness_mm: float
    cell_mm: float  # hole pitch or chess square
    border_mm: float
    colours: tuple[BGR, ...]


Pattern = SheetGrid | TilePattern | GinghamPattern | PlankPattern


@dataclass(frozen=True)
class Plate:
    """The board: a plate (or paper sheet) with 4 + 4 lines."""

    kind: str  # tag suffix: white, light_grey, ..., paper
    colour: BGR
    square_mm: float
    rect: Rect  # the plate's top in board coordinates (u0, w0, u1, w1), mm
    thickness_mm: float  # 0 for paper
    corner_mm: float
    wood: bool  # grain texture on the top
    opacity: float  # paper lets a little of the table show through
    line_style: str  # printed | engraved | marker | tape
    line_width_mm: float
    line_colour: BGR
    side_colour: BGR


@dataclass(frozen=True)
class PieceSet:
    """The pieces' look, shared by all pieces of the frame (board and spares)."""

    radius_mm: float
    height_mm: float
    black: BGR
    white: BGR
    rim_frac: float
    rim_dark: float
    side_shade: float
    glossy: bool
    dome_mm: (
        float  # radius of curvature of the top: a highlight shows where its normal bisects light and view
    )


@dataclass(frozen=True)
class Piece:
    """A disc whose base's centre is at (x, y, z), world mm."""

    x: float
    y: float
    z: float
    colour: str  # "X" black, "O" white


@dataclass(frozen=True)
class Light:
    """Key light: an area light (window, ceiling panel: soft shadows) or a lamp (point: hard shadows)."""

    kind: str  # "area" | "point"
    azimuth: float  # radians in the world, from the board towards the light
    elevation: float  # radians above the horizon
    position: tuple[float, float, float]  # point lights only (world mm); area lights: far away
    ratio: float  # brightest / darkest on the plate (<= MAX_LIGHT_RATIO)
    shadow: float  # darkness of a full shadow
    penumbra: float  # angular radius of the light (radians)


@dataclass(frozen=True)
class Optics:
    """Exposure, white balance, blur, noise and compression."""

    exposure: float
    wb: BGR  # per-channel gains
    vignette: float  # darkening at the corners
    defocus_px: float  # Gaussian sigma
    motion_px: float  # motion blur length
    motion_angle: float
    read_noise: float  # grey levels
    shot_noise: float  # variance per grey level
    jpeg_quality: int


@dataclass(frozen=True)
class Occluder:
    """A hand, a pen or a coin over the grid (never part of the truth)."""

    kind: str  # "hand" | "pen" | "coin"
    anchor: tuple[float, float, float]  # hand: fingertip; pen: middle of its axis; coin: base centre
    angle: float  # hand: direction from wrist to fingertip; pen: its axis
    size_mm: float  # hand: scale (1 = adult); pen: length; coin: radius
    width_mm: float  # pen: diameter; coin: thickness
    colour: BGR  # skin, pen body or metal
    colour2: BGR  # sleeve, pen clip and tip
    variant: int  # hand: +-1 pointing, +-2 reaching with open fingers; the sign picks the hand (left/right)


@dataclass(frozen=True)
class Truth:
    """What a detector should find (see Sample)."""

    board: str
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    quarter_turns: int  # k of np.rot90(drawn, k)
    occluded: bool
    tags: frozenset[str]


@dataclass(frozen=True, eq=False)
class Scene:
    """Everything make_frame draws; sampled by sample_scene without rendering."""

    camera: Camera
    floor_z: float  # height the board and spares lie at (a mat's thickness)
    surface: Surface
    pattern: Pattern | None
    beside: BesideObject | None
    plate: Plate
    board_centre: tuple[float, float]
    board_angle: float  # radians: the board's u axis in the world
    drawn: tuple[str, str, str]  # rows as drawn, in the board's own frame
    pieces: tuple[Piece, ...]
    spares: tuple[Piece, ...]
    piece_set: PieceSet
    light: Light
    optics: Optics
    occluder: Occluder | None
    table: str  # TABLE_KINDS name
    cell_mm: float  # the pattern's finest line spacing (nan on plain tables)
    pitch_match: bool  # the board's square is 1..10 times one of the pattern's line spacings
    phase_locked: bool  # and the pattern was shifted to put its lines on the board's lines
    board_mode: str  # empty | full | game | random
    low_contrast: bool  # white pieces within LOW_CONTRAST_GREY of the plate
    spare_mode: str  # "", "columns" or "scatter"
    truth: Truth | None  # None only while the scene is being built

    @property
    def top_z(self) -> float:
        """Height of the plate's top face."""
        return self.floor_z + self.plate.thickness_mm

    def board_to_world(self, uw: np.ndarray) -> np.ndarray:
        """(N, 2) board coordinates -> (N, 2) world (x, y)."""
        return _board_to_world(np.asarray(uw, dtype=np.float64), self.board_centre, self.board_angle)


# =========================================================================================================
# Public API
# =========================================================================================================
def make_frame(index: int, seed: int) -> Sample:
    """Render frame ``index`` of the sequence ``seed``; a pure function of (seed, index)."""
    rng = _rng(index, seed)
    scene = _sample_scene(rng)
    image = _render(scene, rng)
    t = scene.truth
    assert t is not None
    return Sample(
        image=image,
        board=t.board,
        centre_px=t.centre_px,
        angle_deg=t.angle_deg,
        pitch_px=t.pitch_px,
        occluded=t.occluded,
        tags=t.tags,
    )


def sample_scene(index: int, seed: int) -> Scene:
    """The scene make_frame(index, seed) draws, without drawing it (fast)."""
    return _sample_scene(_rng(index, seed))


def make_set(n: int, seed: int) -> list[Sample]:
    """Frames 0..n-1 of the sequence ``seed`` (as bench/vision.py's generator reports take them)."""
    return [make_frame(index, seed) for index in range(n)]


def square_centres_px(scene: Scene) -> np.ndarray:
    """(3, 3, 2) image positions of the squares' centres on the plate's top, indexed like ``Sample.board``
    (folded frame: element [r, c] belongs to board[3 * r + c])."""
    drawn = _drawn_centres_px(
        scene.camera, scene.board_centre, scene.board_angle, scene.plate.square_mm, scene.top_z
    )
    assert scene.truth is not None
    return np.rot90(drawn, k=scene.truth.quarter_turns)


def _rng(index: int, seed: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, index]))


# =========================================================================================================
# Geometry
# =========================================================================================================
def _rot2(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s], [s, c]])


def _board_to_world(uw: np.ndarray, centre: tuple[float, float], angle: float) -> np.ndarray:
    return uw.reshape(-1, 2) @ _rot2(angle).T + np.asarray(centre)


def _lift(xy: np.ndarray, z: float) -> np.ndarray:
    """(N, 2) -> (N, 3) at height z."""
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    return np.column_stack([xy, np.full(len(xy), float(z))])


def _apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = pts @ h[:, :2].T + h[:, 2]
    return q[:, :2] / q[:, 2:3]


def _make_camera(
    focal: float,
    principal: tuple[float, float],
    height: float,
    tilt: float,
    tilt_dir: float,
    yaw: float,
) -> Camera:
    """A camera at (0, 0, height) looking down, turned by yaw about the vertical, then tilted by tilt."""
    x_axis = np.array([math.cos(yaw), math.sin(yaw), 0.0])
    y_axis = np.array([math.sin(yaw), -math.cos(yaw), 0.0])  # image down = world -y at yaw 0
    z_axis = np.array([0.0, 0.0, -1.0])
    r0 = np.stack([x_axis, y_axis, z_axis])
    axis = np.array([math.cos(tilt_dir), math.sin(tilt_dir), 0.0]) * tilt
    r_tilt = cv2.Rodrigues(axis.reshape(3, 1))[0]
    k = np.array([[focal, 0.0, principal[0]], [0.0, focal, principal[1]], [0.0, 0.0, 1.0]])
    return Camera(K=k, R=r0 @ r_tilt.T, C=np.array([0.0, 0.0, height]))


def _footprint(cam: Camera, z: float, margin: float = VIEW_MARGIN) -> np.ndarray:
    """(4, 2) world points seen at the frame's corners (pushed out by margin) on the plane at height z."""
    mx, my = IMAGE_W * margin, IMAGE_H * margin
    corners = np.array([[-mx, -my], [IMAGE_W + mx, -my], [IMAGE_W + mx, IMAGE_H + my], [-mx, IMAGE_H + my]])
    return cam.back_project(corners, z)


def _bbox(pts: np.ndarray) -> Rect:
    return (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))


def _intersect(a: Rect, b: Rect) -> Rect | None:
    r = (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))
    return r if r[2] > r[0] and r[3] > r[1] else None


def _clip_segment(p0: np.ndarray, p1: np.ndarray, rect: Rect) -> tuple[np.ndarray, np.ndarray] | None:
    """Liang-Barsky clipping of the segment p0-p1 to an axis-aligned rectangle."""
    d = p1 - p0
    t0, t1 = 0.0, 1.0
    for p, q in (
        (-d[0], p0[0] - rect[0]),
        (d[0], rect[2] - p0[0]),
        (-d[1], p0[1] - rect[1]),
        (d[1], rect[3] - p0[1]),
    ):
        if abs(p) < 1e-12:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return p0 + t0 * d, p0 + t1 * d


def _project_polygon(cam: Camera, pts3: np.ndarray) -> np.ndarray:
    """Project a planar polygon (N, 3), clipped to the space in front of the camera; (M, 2), M may be 0."""
    depth = cam.to_camera(pts3)[:, 2]
    if np.all(depth >= NEAR_MM):
        return cam.project(pts3)
    out = []
    n = len(pts3)
    for i in range(n):
        j = (i + 1) % n
        if depth[i] >= NEAR_MM:
            out.append(pts3[i])
        if (depth[i] >= NEAR_MM) != (depth[j] >= NEAR_MM):
            t = (NEAR_MM - depth[i]) / (depth[j] - depth[i])
            out.append(pts3[i] + t * (pts3[j] - pts3[i]))
    if len(out) < 3:
        return np.empty((0, 2))
    return cam.project(np.array(out))


def _project_segments(cam: Camera, a3: np.ndarray, b3: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Segments (N, 3) -> ((M, 2, 2) pixels, (N,) bool kept), clipped to the space in front of the camera."""
    da = cam.to_camera(a3)[:, 2]
    db = cam.to_camera(b3)[:, 2]
    keep = (da >= NEAR_MM) | (db >= NEAR_MM)
    a3, b3, da, db = a3[keep], b3[keep], da[keep], db[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip((NEAR_MM - da) / (db - da), 0.0, 1.0)
    a_new = np.where((da < NEAR_MM)[:, None], a3 + t[:, None] * (b3 - a3), a3)
    b_new = np.where((db < NEAR_MM)[:, None], a3 + t[:, None] * (b3 - a3), b3)
    segs = np.stack([cam.project(a_new), cam.project(b_new)], axis=1)
    return segs, keep


def _circle(radius: float, n: int = CIRCLE_POINTS) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    return np.column_stack([np.cos(a), np.sin(a)]) * radius


def _rounded_rect(rect: Rect, radius: float) -> np.ndarray:
    """Outline (N, 2) of a rectangle with rounded corners, counter-clockwise."""
    x0, y0, x1, y1 = rect
    r = min(max(radius, 0.0), (x1 - x0) / 2, (y1 - y0) / 2)
    if r < 0.5:
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)
    pts = []
    for cx, cy, a0 in (
        (x1 - r, y0 + r, -90),
        (x1 - r, y1 - r, 0),
        (x0 + r, y1 - r, 90),
        (x0 + r, y0 + r, 180),
    ):
        for a in np.radians(np.linspace(a0, a0 + 90, 5)):
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return np.array(pts)


def _hull(pts: np.ndarray) -> np.ndarray:
    if len(pts) < 3:
        return pts
    return cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2).astype(np.float64)


def _drawn_centres_px(
    cam: Camera, centre: tuple[float, float], angle: float, square: float, top_z: float
) -> np.ndarray:
    """(3, 3, 2) image positions of the squares' centres as drawn (board frame, before folding)."""
    r, c = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
    uw = np.column_stack([(c.ravel() - 1) * square, (1 - r.ravel()) * square])
    return cam.project(_lift(_board_to_world(uw, centre, angle), top_z)).reshape(3, 3, 2)


def _light_dir(light: Light, at: np.ndarray) -> np.ndarray:
    """Unit vector(s) (N, 3) from world points (N, 3) towards the light."""
    at = np.asarray(at, dtype=np.float64).reshape(-1, 3)
    if light.kind == "point":
        d = np.asarray(light.position) - at
    else:
        ce = math.cos(light.elevation)
        d = np.tile(
            [ce * math.cos(light.azimuth), ce * math.sin(light.azimuth), math.sin(light.elevation)],
            (len(at), 1),
        )
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def _shadow_shift(light: Light, at: np.ndarray, height: float) -> np.ndarray:
    """(N, 2) world shift of the shadow of a point `height` above the points `at` (N, 3)."""
    d = _light_dir(light, at)
    return -d[:, :2] / np.maximum(d[:, 2:3], 0.2) * height


# =========================================================================================================
# Sampling: colours
# =========================================================================================================
def _choice(rng: np.random.Generator, options: tuple[tuple[str, float], ...]) -> str:
    p = np.array([o[1] for o in options], dtype=np.float64)
    return options[int(rng.choice(len(options), p=p / p.sum()))][0]


def _hsv(h: float, s: float, v: float) -> BGR:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return (b * 255.0, g * 255.0, r * 255.0)


def _grey(g: float, rng: np.random.Generator | None = None, tint: float = 0.0) -> BGR:
    j = rng.uniform(-tint, tint, 3) if rng is not None and tint > 0 else np.zeros(3)
    return (g + j[0], g + j[1], g + j[2])


def _jitter(rng: np.random.Generator, c: BGR, amount: float) -> BGR:
    j = rng.uniform(-amount, amount, 3)
    return (c[0] + j[0], c[1] + j[1], c[2] + j[2])


def _mix(a: BGR, b: BGR, t: float) -> BGR:
    """a + (b - a) * t."""
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t)


def _scale(c: BGR, k: float) -> BGR:
    return (c[0] * k, c[1] * k, c[2] * k)


def _clip_colour(c: BGR) -> BGR:
    return (min(max(c[0], 0.0), 255.0), min(max(c[1], 0.0), 255.0), min(max(c[2], 0.0), 255.0))


def _luma(c: BGR) -> float:
    return 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]


def _wood_colour(rng: np.random.Generator, lo: float = 0.0, hi: float = 1.0) -> BGR:
    """Woods from walnut (0) to maple (1)."""
    t = rng.uniform(lo, hi)
    dark, light = (40.0, 62.0, 95.0), (145.0, 188.0, 222.0)
    return _jitter(rng, _mix(dark, light, t), 8.0)


# =========================================================================================================
# Sampling: table, board, pieces
# =========================================================================================================
SURFACES_PLAIN: Final = (("wood", 0.4), ("laminate", 0.3), ("cloth", 0.15), ("paper", 0.15))
SURFACES_UNDER: Final = (("wood", 0.5), ("laminate", 0.5))
PLATE_KINDS: Final = (
    ("white", 0.14),
    ("light_grey", 0.11),
    ("mid_grey", 0.08),
    ("wood", 0.15),
    ("dark", 0.11),
    ("pastel", 0.09),
    ("saturated", 0.08),
    ("blue", 0.07),
    ("green", 0.07),
    ("paper", 0.10),
)
LINE_STYLES: Final = (("printed", 0.4), ("engraved", 0.2), ("marker", 0.25), ("tape", 0.15))
LINE_STYLE_WIDTH: Final = {
    "printed": (0.02, 0.08),
    "engraved": (0.03, 0.08),
    "marker": (0.03, 0.09),
    "tape": (0.07, 0.12),
}
MAT_SIZES_MM: Final = ((450.0, 300.0), (600.0, 450.0), (900.0, 600.0), (1200.0, 900.0))
PAPER_SIZES_MM: Final = ((210.0, 297.0), (297.0, 420.0), (216.0, 279.0))


def _sample_surface(rng: np.random.Generator, kinds: tuple[tuple[str, float], ...]) -> Surface:
    kind = _choice(rng, kinds)
    angle = rng.uniform(0.0, math.pi)
    if kind == "wood":
        return Surface(kind, _wood_colour(rng), angle, rng.uniform(2.5, 9.0), rng.uniform(0.08, 0.2))
    if kind == "laminate":
        options: list[BGR] = [
            _grey(rng.uniform(210, 245), rng, 4),
            _grey(rng.uniform(120, 200), rng, 5),
            _jitter(rng, (170.0, 198.0, 214.0), 10),
            _grey(rng.uniform(30, 60), rng, 3),
            _wood_colour(rng, 0.4, 1.0),
        ]
        return Surface(kind, options[int(rng.integers(len(options)))], angle, 5.0, rng.uniform(0.02, 0.05))
    if kind == "cloth":
        colour = _hsv(rng.random(), rng.uniform(0.1, 0.65), rng.uniform(0.3, 0.9))
        return Surface(kind, colour, angle, rng.uniform(150, 400), rng.uniform(0.05, 0.12))
    colour = _grey(rng.uniform(225, 248), rng, 3) if rng.random() < 0.7 else _jitter(rng, (110, 150, 185), 10)
    return Surface("paper", colour, angle, rng.uniform(200, 500), rng.uniform(0.02, 0.05))


def _sample_plate(rng: np.random.Generator, s: float) -> Plate:
    kind = _choice(rng, PLATE_KINDS)
    wood = False
    if kind == "white":
        colour = _grey(rng.uniform(225, 250), rng, 4)
    elif kind == "light_grey":
        colour = _grey(rng.uniform(180, 215), rng, 4)
    elif kind == "mid_grey":
        colour = _grey(rng.uniform(105, 165), rng, 4)
    elif kind == "wood":
        colour, wood = _wood_colour(rng, 0.35, 1.0), True
    elif kind == "dark":
        options = [
            _grey(rng.uniform(18, 50), rng, 3),
            _wood_colour(rng, 0.0, 0.15),
            _jitter(rng, (62, 40, 24), 6),
        ]
        pick = int(rng.integers(3))
        colour, wood = options[pick], pick == 1
    elif kind == "pastel":
        colour = _hsv(rng.random(), rng.uniform(0.15, 0.35), rng.uniform(0.86, 0.97))
    elif kind == "saturated":
        colour = _hsv(rng.random(), rng.uniform(0.6, 0.9), rng.uniform(0.55, 0.9))
    elif kind == "blue":
        colour = (
            _hsv(rng.uniform(0.55, 0.62), rng.uniform(0.2, 0.38), rng.uniform(0.9, 0.98))
            if rng.random() < 0.5
            else _hsv(rng.uniform(0.57, 0.65), rng.uniform(0.65, 0.85), rng.uniform(0.45, 0.75))
        )
    elif kind == "green":
        colour = (
            _hsv(rng.uniform(0.27, 0.4), rng.uniform(0.18, 0.35), rng.uniform(0.86, 0.96))
            if rng.random() < 0.5
            else _hsv(rng.uniform(0.3, 0.42), rng.uniform(0.6, 0.85), rng.uniform(0.35, 0.65))
        )
    else:  # paper
        colour = _jitter(rng, (rng.uniform(228, 246) - rng.uniform(0, 12), 240.0, 242.0), 3)
    colour = _clip_colour(colour)
    paper = kind == "paper"
    style = ("marker" if rng.random() < 0.6 else "printed") if paper else _choice(rng, LINE_STYLES)
    lw = rng.uniform(*LINE_STYLE_WIDTH[style]) * s
    dark_lines = _luma(colour) > DARK_LINE_LUMA
    line_colour = _sample_line_colour(rng, style, colour, dark_lines)
    e = 1.5 * s + lw / 2
    if paper:
        m = rng.uniform(0.25, 1.1, 4) * s
    elif rng.random() < 0.3:
        m = np.zeros(4)
    else:
        m = np.full(4, rng.uniform(0.06, 0.55) * s)
    rect = (-e - m[0], -e - m[1], e + m[2], e + m[3])
    thickness = 0.0 if paper else rng.uniform(*PLATE_THICKNESS_MM)
    corner = 0.0 if paper else (rng.uniform(0, 1.5) if m[0] == 0 else rng.uniform(0, min(m[0], 0.3 * s)))
    side = _scale(colour, rng.uniform(0.5, 0.7) if wood else rng.uniform(0.55, 0.8))
    return Plate(
        kind=kind,
        colour=colour,
        square_mm=s,
        rect=rect,
        thickness_mm=thickness,
        corner_mm=corner,
        wood=wood,
        opacity=rng.uniform(0.9, 0.99) if paper else 1.0,
        line_style=style,
        line_width_mm=lw,
        line_colour=_clip_colour(line_colour),
        side_colour=side,
    )


def _sample_line_colour(rng: np.random.Generator, style: str, plate: BGR, dark: bool) -> BGR:
    if style == "engraved":
        # a groove: burnt or shadowed on light plates, filled with paint on dark ones
        return _scale(plate, rng.uniform(0.3, 0.55)) if dark else _grey(rng.uniform(200, 240), rng, 6)
    if dark:
        if style == "marker":
            inks = [_grey(rng.uniform(15, 45)), (110.0, 45.0, 25.0), (40.0, 35.0, 165.0), (50.0, 95.0, 30.0)]
            return _jitter(rng, inks[int(rng.choice(4, p=[0.55, 0.2, 0.15, 0.1]))], 8)
        if style == "tape" and rng.random() < 0.35:
            return _jitter(rng, [(120.0, 50.0, 20.0), (40.0, 40.0, 170.0)][int(rng.integers(2))], 10)
        return _grey(rng.uniform(12, 60), rng, 4)
    options = [
        _grey(rng.uniform(210, 250), rng, 4),
        (150.0, 215.0, 235.0),
        (80.0, 180.0, 215.0),
        _grey(190.0),
    ]
    return _jitter(rng, options[int(rng.choice(4, p=[0.6, 0.15, 0.15, 0.1]))], 6)


def _sample_piece_set(rng: np.random.Generator, plate: Plate) -> tuple[PieceSet, bool]:
    """The pieces' look; also whether white pieces are within LOW_CONTRAST_GREY of the plate."""
    s = plate.square_mm
    radius = rng.uniform(*PIECE_RADIUS_FRAC) * s
    height = rng.uniform(PIECE_HEIGHT_MM[0], min(PIECE_HEIGHT_MM[1], max(3.5, 0.8 * radius)))
    black = _grey(rng.uniform(*BLACK_GREY), rng, 3)
    plate_grey = _luma(plate.colour)
    low = False
    if not plate.wood and plate_grey >= WHITE_GREY[0] - LOW_CONTRAST_GREY and rng.random() < 0.3:
        g = float(np.clip(plate_grey + rng.uniform(-LOW_CONTRAST_GREY, LOW_CONTRAST_GREY), *WHITE_GREY))
        low = abs(g - plate_grey) <= LOW_CONTRAST_GREY
    else:
        g = rng.uniform(*WHITE_GREY)
    ivory = rng.uniform(0, 10) if rng.random() < 0.3 else 0.0
    white = (g - ivory, g - ivory * 0.3, g)
    return (
        PieceSet(
            radius_mm=radius,
            height_mm=height,
            black=black,
            white=white,
            rim_frac=rng.uniform(0.05, 0.16),
            rim_dark=rng.uniform(0.7, 0.9),
            side_shade=rng.uniform(0.6, 0.85),
            glossy=bool(rng.random() < 0.45),
            dome_mm=3.0 * radius,
        ),
        low,
    )


def _winner(b: list[str]) -> bool:
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
    return any(b[i] != "." and b[i] == b[j] == b[k] for i, j, k in lines)


def _sample_board(rng: np.random.Generator) -> tuple[tuple[str, str, str], str]:
    """Rows of the board as drawn and the way it was made (empty | full | game | random)."""
    u = rng.random()
    cells = ["."] * 9
    if u < 0.1:
        mode = "empty"
    elif u < 0.2:
        mode = "full"
        first, second = ("X", "O") if rng.random() < 0.5 else ("O", "X")
        order = rng.permutation(9)
        for i, pos in enumerate(order):
            cells[int(pos)] = first if i % 2 == 0 else second
    elif u < 0.6:
        mode = "game"
        player = "X" if rng.random() < 0.7 else "O"
        for _ in range(int(rng.integers(1, 10))):
            empties = [i for i in range(9) if cells[i] == "."]
            cells[int(rng.choice(empties))] = player
            if _winner(cells):
                break
            player = "O" if player == "X" else "X"
    else:
        mode = "random"
        n = int(rng.integers(1, 9))
        nx = n // 2 + (n % 2 if rng.random() < 0.5 else 0)
        order = rng.permutation(9)
        for i, pos in enumerate(order[:n]):
            cells[int(pos)] = "X" if i < nx else "O"
    rows = ("".join(cells[0:3]), "".join(cells[3:6]), "".join(cells[6:9]))
    return rows, mode


def _sample_cells(rng: np.random.Generator, kind: str) -> dict[str, float]:
    """The pattern's line spacings (mm), sampled before the board so that the board can match them."""
    if kind == "cutting_mat":
        if rng.random() < 0.2:
            minor = 12.7 if rng.random() < 0.6 else 25.4
            return {"minor": minor, "every": 25.4 / minor, "mid": 0, "tick": 3.175, "imperial": 1}
        minor = 10.0 if rng.random() < 0.75 else 5.0
        return {"minor": minor, "every": 50.0 / minor, "mid": 0, "tick": 0.0, "imperial": 0}
    if kind == "graph_paper":
        v = rng.random()
        if v < 0.4:  # engineering: 5 mm, heavier every 1 cm
            return {"minor": 5.0, "every": 2, "mid": 0, "tick": 0.0, "imperial": 0}
        if v < 0.75:  # notebook squares
            return {"minor": 5.0, "every": 1, "mid": 0, "tick": 0.0, "imperial": 0}
        return {"minor": 1.0, "every": 10, "mid": 5, "tick": 0.0, "imperial": 0}  # millimetre paper
    if kind == "tiles":
        return {"minor": rng.uniform(100, 300)}
    if kind == "gingham":
        return {"minor": rng.uniform(3.0, 25.0)}
    if kind == "planks":
        return {"minor": rng.uniform(70, 200)}
    if kind in ("perfboard", "breadboard"):
        return {"minor": 2.54}
    if kind == "chessboard":
        return {"minor": rng.uniform(25.0, 57.0)}
    return {}


def _sample_square(
    rng: np.random.Generator, kind: str, cells: dict[str, float]
) -> tuple[float, dict[str, float]]:
    """The board's square size (mm), matched to the pattern in PITCH_MATCH_PROBABILITY of the frames."""
    s = rng.uniform(*SQUARE_MM)
    if (
        kind not in ("cutting_mat", "graph_paper", "gingham", "chessboard")
        or rng.random() >= PITCH_MATCH_PROBABILITY
    ):
        return s, cells
    cells = dict(cells)
    if kind == "cutting_mat":
        major = cells["minor"] * cells["every"]
        if rng.random() < 0.5:
            return (major if major >= SQUARE_MM[0] else 2 * major), cells
        n = [
            k
            for k in range(1, PITCH_MATCH_MAX_DIVISOR + 1)
            if SQUARE_MM[0] <= k * cells["minor"] <= SQUARE_MM[1]
        ]
        return cells["minor"] * float(rng.choice(n)), cells
    if kind == "graph_paper":
        step = 10.0 if rng.random() < 0.5 else 5.0
        n = [k for k in range(1, 14) if SQUARE_MM[0] <= k * step <= SQUARE_MM[1]]
        return step * float(rng.choice(n)), cells
    if kind == "gingham":
        n = min(int(rng.integers(1, 9)), math.floor(s / 3.0))
        cells["minor"] = s / n
        return s, cells
    cells["minor"] = s  # chessboard squares as large as the board's
    return s, cells


# =========================================================================================================
# Sampling: camera and placement
# =========================================================================================================
def _keep_in_view_uw(plate: Plate) -> np.ndarray:
    """Board-frame corners that must be seen: the plate's, or the drawn grid's on a paper sheet."""
    if plate.kind == "paper":
        g = 1.5 * plate.square_mm + plate.line_width_mm + 0.15 * plate.square_mm
        x0, y0, x1, y1 = -g, -g, g, g
    else:
        x0, y0, x1, y1 = plate.rect
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


def _in_view(cam: Camera, pts3: np.ndarray, margin: float = VISIBLE_MARGIN_PX) -> bool:
    if np.any(cam.to_camera(pts3)[:, 2] < NEAR_MM):
        return False
    px = cam.project(pts3)
    return bool(
        np.all(px[:, 0] >= margin)
        and np.all(px[:, 0] <= IMAGE_W - 1 - margin)
        and np.all(px[:, 1] >= margin)
        and np.all(px[:, 1] <= IMAGE_H - 1 - margin)
    )


def _pitch_of(centres: np.ndarray) -> float:
    c = centres[1, 1]
    return float(np.mean([np.linalg.norm(centres[i, j] - c) for i, j in ((0, 1), (2, 1), (1, 0), (1, 2))]))


def _sample_camera(
    rng: np.random.Generator, plate: Plate, piece_set: PieceSet, floor_z: float, angle: float
) -> tuple[Camera, tuple[float, float]]:
    """A camera and the board's centre in the world such that the board is fully seen at a pitch in range."""
    s = plate.square_mm
    top = floor_z + plate.thickness_mm
    corners = _keep_in_view_uw(plate)
    reach = float(np.max(np.linalg.norm(corners, axis=1)))
    for _ in range(500):
        height = rng.uniform(*CAMERA_HEIGHT_MM)
        lo = max(PITCH_TARGET_PX[0], FOCAL_PX[0] * s / (height - top))
        hi = min(PITCH_TARGET_PX[1], FOCAL_PX[1] * s / (height - top))
        if lo > hi:
            continue
        pitch = rng.uniform(lo, hi)
        cam = _make_camera(
            focal=pitch * (height - top) / s,
            principal=(
                IMAGE_W / 2 - 0.5 + rng.uniform(-1, 1) * PRINCIPAL_JITTER_PX[0],
                IMAGE_H / 2 - 0.5 + rng.uniform(-1, 1) * PRINCIPAL_JITTER_PX[1],
            ),
            height=height,
            tilt=math.radians(rng.uniform(0.0, MAX_TILT_DEG)),
            tilt_dir=rng.uniform(0.0, 2 * math.pi),
            yaw=rng.uniform(0.0, 2 * math.pi),
        )
        half = reach * pitch / s + 4
        mx, my = min(half, IMAGE_W / 2), min(half, IMAGE_H / 2)
        target = np.array([rng.uniform(mx, IMAGE_W - mx), rng.uniform(my, IMAGE_H - my)])
        centre_xy = cam.back_project(target, top)[0]
        centre = (float(centre_xy[0]), float(centre_xy[1]))
        world = _board_to_world(corners, centre, angle)
        pts = [_lift(world, top + piece_set.height_mm)]
        if plate.thickness_mm > 0:
            pts.append(_lift(world, floor_z))
        if not _in_view(cam, np.vstack(pts)):
            continue
        p = _pitch_of(_drawn_centres_px(cam, centre, angle, s, top))
        if PITCH_RANGE_PX[0] + 0.5 <= p <= PITCH_RANGE_PX[1] - 0.5:
            return cam, centre
    raise RuntimeError("no camera placement found")  # pragma: no cover - never seen in 10^5 frames


def _plate_world(plate: Plate, centre: tuple[float, float], angle: float) -> np.ndarray:
    x0, y0, x1, y1 = plate.rect
    return _board_to_world(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]), centre, angle)


def _place_interval(rng: np.random.Generator, lo: float, hi: float, length: float, near: bool) -> float:
    """Start of an interval of `length` holding [lo, hi] with 10 mm to spare; near: one end close to it."""
    a, b = hi + 10 - length, lo - 10
    if a > b:
        return (lo + hi - length) / 2
    if near:
        return max(b - rng.uniform(0, 110), a) if rng.random() < 0.5 else min(a + rng.uniform(0, 110), b)
    return rng.uniform(a, b)


def _snap(start: float, border: float, phase: float, period: float) -> float:
    """Move a sheet's start so that its grid (starting `border` inside) has a line at phase (mod period)."""
    g = start + border
    return phase + round((g - phase) / period) * period - border


def _sample_sheet(
    rng: np.random.Generator,
    kind: str,
    cells: dict[str, float],
    plate_box: Rect,
    lock: tuple[float, float] | None,
    surface_colour: BGR,
) -> SheetGrid:
    """A cutting mat (holding the plate) or a sheet of graph paper (holding the board's centre)."""
    minor = cells["minor"]
    every = max(1, round(cells["every"]))
    major = minor * every
    px0, py0, px1, py1 = plate_box
    if kind == "cutting_mat":
        need = max(px1 - px0, py1 - py0) + 80
        sizes = [sz for sz in MAT_SIZES_MM if sz[1] >= need] or [MAT_SIZES_MM[-1]]
        w, h = sizes[int(rng.integers(len(sizes)))]
        if rng.random() < 0.5:
            w, h = h, w
        border = rng.uniform(10, 22)
        near = rng.random() < EDGE_NEAR_PROBABILITY
        x0 = _place_interval(rng, px0, px1, w, near and rng.random() < 0.7)
        y0 = _place_interval(rng, py0, py1, h, near and rng.random() < 0.7)
    else:
        w, h = PAPER_SIZES_MM[int(rng.choice(len(PAPER_SIZES_MM), p=[0.35, 0.45, 0.2]))]
        if rng.random() < 0.5:
            w, h = h, w
        border = rng.uniform(5, 15)
        cx, cy = (px0 + px1) / 2, (py0 + py1) / 2
        x0 = cx - w * rng.uniform(0.2, 0.8)  # the board's centre in the middle 60 % of the sheet
        y0 = cy - h * rng.uniform(0.2, 0.8)
    phase = lock if lock is not None else (rng.uniform(0, major), rng.uniform(0, major))
    x0 = _snap(x0, border, phase[0] % major, major)
    y0 = _snap(y0, border, phase[1] % major, major)
    gx0, gy0 = x0 + border, y0 + border
    gx1 = gx0 + math.floor((w - 2 * border) / major + 1e-9) * major
    gy1 = gy0 + math.floor((h - 2 * border) / major + 1e-9) * major
    grid = (gx0, gy0, gx1, gy1)
    imperial = bool(cells.get("imperial", 0))
    if kind == "cutting_mat":
        return _mat_look(
            rng, (x0, y0, x0 + w, y0 + h), grid, minor, every, imperial, cells["tick"], surface_colour
        )
    return _paper_look(rng, (x0, y0, x0 + w, y0 + h), grid, minor, every, int(cells["mid"]))


MAT_COLOURS: Final = (
    ("green", (82.0, 118.0, 45.0)),
    ("dark_green", (52.0, 76.0, 22.0)),
    ("blue", (150.0, 82.0, 35.0)),
    ("grey", (118.0, 116.0, 112.0)),
    ("black", (36.0, 36.0, 38.0)),
    ("pink", (172.0, 138.0, 232.0)),
    ("red", (58.0, 52.0, 182.0)),
    ("translucent", (228.0, 232.0, 226.0)),
)


def _mat_look(
    rng: np.random.Generator,
    rect: Rect,
    grid: Rect,
    minor: float,
    every: int,
    imperial: bool,
    tick: float,
    surface_colour: BGR,
) -> SheetGrid:
    name, base = MAT_COLOURS[
        int(rng.choice(len(MAT_COLOURS), p=[0.3, 0.12, 0.14, 0.1, 0.1, 0.07, 0.07, 0.1]))
    ]
    colour = _jitter(rng, base, 8)
    opacity = rng.uniform(0.3, 0.5) if name == "translucent" else 1.0
    under = _mix(surface_colour, colour, opacity)
    dark_lines = rng.random() < (0.65 if name in ("pink", "translucent", "grey") else 0.08)
    if dark_lines:
        line = _jitter(
            rng, [(25.0, 25.0, 25.0), (40.0, 70.0, 30.0), (70.0, 40.0, 20.0)][int(rng.integers(3))], 6
        )
    else:
        line = _jitter(
            rng,
            [(240.0, 242.0, 240.0), (70.0, 220.0, 240.0), (165.0, 238.0, 185.0)][
                int(rng.choice(3, p=[0.6, 0.25, 0.15]))
            ],
            6,
        )
    if abs(_luma(line) - _luma(under)) < 40:  # keep the print visible
        line = (240.0, 242.0, 240.0) if _luma(under) < 128 else (25.0, 25.0, 25.0)
    major = minor * every
    guides: tuple[float, ...] = ()
    family = 0.0
    if rng.random() < 0.45:
        pick = rng.random(3) < 0.5
        pick[1] |= not pick.any()
        guides = tuple(a for a, p in zip((30.0, 45.0, 60.0), pick, strict=True) if p)
        family = major * float(rng.integers(2, 5)) if rng.random() < 0.5 else 0.0
    circles: list[tuple[float, float, float]] = []
    gw, gh = grid[2] - grid[0], grid[3] - grid[1]
    if rng.random() < 0.2 and min(gw, gh) > 2 * major:
        step = major if major >= 25 else 2 * major
        kx = int(rng.integers(1, max(2, int(gw // major))))
        ky = int(rng.integers(1, max(2, int(gh // major))))
        cx, cy = grid[0] + kx * major, grid[1] + ky * major
        room = min(cx - grid[0], grid[2] - cx, cy - grid[1], grid[3] - cy)
        circles = [(cx, cy, r) for r in np.arange(1, 5) * step if r <= room]
    return SheetGrid(
        kind="cutting_mat",
        rect=rect,
        grid=grid,
        corner_mm=rng.uniform(3, 15),
        thickness_mm=rng.uniform(1.8, 3.0),
        colour=_clip_colour(colour),
        opacity=opacity,
        minor_mm=minor,
        major_every=every,
        mid_every=0,
        minor_width_mm=rng.uniform(0.2, 0.4),
        major_width_mm=rng.uniform(0.45, 1.0),
        line_colour=_clip_colour(line),
        minor_alpha=rng.uniform(0.45, 0.85),
        major_alpha=rng.uniform(0.7, 0.95),
        tick_mm=tick,
        scale_mm=(3.175 if imperial else 1.0) if rng.random() < 0.7 else 0.0,
        number_mm=25.4 if imperial else 10.0,
        guides=guides,
        guide_family_mm=family,
        circles=tuple(circles),
        margin_line_x=math.nan,
        scratches=int(rng.integers(0, 40)),
    )


def _paper_look(
    rng: np.random.Generator, rect: Rect, grid: Rect, minor: float, every: int, mid: int
) -> SheetGrid:
    inks = [(225.0, 180.0, 110.0), (140.0, 195.0, 130.0), (160.0, 160.0, 160.0), (90.0, 155.0, 245.0)]
    line = _jitter(rng, inks[int(rng.integers(4))], 8)
    notebook = every == 1
    fine = minor < 2
    margin = grid[0] + rng.uniform(20, 35) if notebook and rng.random() < 0.5 else math.nan
    return SheetGrid(
        kind="graph_paper",
        rect=rect,
        grid=grid,
        corner_mm=0.0,
        thickness_mm=0.1,
        colour=_clip_colour(_jitter(rng, _grey(rng.uniform(236, 250)), 3)),
        opacity=1.0,
        minor_mm=minor,
        major_every=every,
        mid_every=mid,
        minor_width_mm=rng.uniform(0.12, 0.22) if not notebook else rng.uniform(0.18, 0.3),
        major_width_mm=rng.uniform(0.3, 0.5) if not notebook else rng.uniform(0.18, 0.3),
        line_colour=_clip_colour(line),
        minor_alpha=rng.uniform(0.35, 0.6) if fine else rng.uniform(0.5, 0.85),
        major_alpha=rng.uniform(0.7, 0.95) if not notebook else rng.uniform(0.55, 0.85),
        tick_mm=0.0,
        scale_mm=0.0,
        number_mm=0.0,
        guides=(),
        guide_family_mm=0.0,
        circles=(),
        margin_line_x=margin,
        scratches=0,
    )


TILE_COLOURS: Final = (
    (236.0, 238.0, 238.0),
    (176.0, 198.0, 214.0),
    (150.0, 150.0, 150.0),
    (62.0, 92.0, 170.0),
    (62.0, 62.0, 66.0),
    (185.0, 130.0, 70.0),
    (200.0, 210.0, 205.0),
)
GINGHAM_COLOURS: Final = (
    (45.0, 45.0, 185.0),
    (150.0, 75.0, 30.0),
    (90.0, 40.0, 20.0),
    (60.0, 130.0, 40.0),
    (40.0, 40.0, 40.0),
    (70.0, 200.0, 230.0),
    (150.0, 120.0, 230.0),
)


def _sample_tiles(rng: np.random.Generator, cells: dict[str, float]) -> TilePattern:
    colour = _jitter(rng, TILE_COLOURS[int(rng.integers(len(TILE_COLOURS)))], 8)
    grout = _grey(rng.uniform(60, 90)) if rng.random() < 0.25 else _grey(rng.uniform(175, 225), rng, 5)
    if abs(_luma(grout) - _luma(colour)) < 25:
        grout = _scale(colour, 0.6) if _luma(colour) > 128 else _grey(210.0)
    tile = cells["minor"]
    return TilePattern(
        tile_mm=tile,
        grout_mm=rng.uniform(2.0, 8.0),
        origin=(rng.uniform(0, tile), rng.uniform(0, tile)),
        colour=_clip_colour(colour),
        grout_colour=_clip_colour(grout),
        variation=rng.uniform(0.02, 0.07),
        gloss=rng.uniform(0.0, 0.45),
    )


def _sample_beside(
    rng: np.random.Generator,
    kind: str,
    cells: dict[str, float],
    cam: Camera,
    plate_world: np.ndarray,
    board_angle: float,
    floor_z: float,
) -> BesideObject:
    """A perfboard, breadboard or chessboard beside the plate, at least partly in view."""
    if kind == "perfboard":
        sizes = ((100.0, 160.0), (160.0, 233.0), (100.0, 100.0), (100.0, 150.0), (70.0, 90.0))
        w, h = sizes[int(rng.integers(len(sizes)))]
        board_colour = [(70.0, 120.0, 170.0), (60.0, 112.0, 40.0), (120.0, 150.0, 175.0)][
            int(rng.integers(3))
        ]
        pad = (70.0, 140.0, 200.0) if rng.random() < 0.6 else board_colour
        colours = (_jitter(rng, board_colour, 8), pad, _grey(rng.uniform(30, 55)))
        thickness, cell, border = 1.6, 2.54, rng.uniform(1.5, 4.0)
    elif kind == "breadboard":
        w, h = (165.0, 55.0) if rng.random() < 0.6 else (83.0, 55.0)
        colours = (
            _grey(rng.uniform(228, 245), rng, 4),
            _grey(rng.uniform(55, 85)),
            (40.0, 40.0, 200.0),
            (180.0, 90.0, 40.0),
        )
        thickness, cell, border = 8.5, 2.54, 0.0
    else:
        cell = cells["minor"]
        style = int(rng.integers(3))
        if style == 0:  # wood
            colours = (_wood_colour(rng, 0.7, 1.0), _wood_colour(rng, 0.0, 0.25), _wood_colour(rng, 0.1, 0.5))
            thickness = rng.uniform(8, 20)
        elif style == 1:  # tournament roll-up vinyl
            colours = ((215.0, 235.0, 240.0), (70.0, 120.0, 70.0), (225.0, 240.0, 242.0))
            thickness = 0.8
        else:  # plastic
            colours = (_grey(rng.uniform(200, 235)), _grey(rng.uniform(30, 60)), _grey(rng.uniform(90, 130)))
            thickness = rng.uniform(3, 10)
        border = rng.uniform(8, 25)
        w = h = 8 * cell + 2 * border
    half = (w / 2, h / 2)
    aligned = rng.random() < ALIGNED_PROBABILITY
    angle = board_angle + (
        math.radians(90 * int(rng.integers(4)) + rng.uniform(-ALIGNED_TOLERANCE_DEG, ALIGNED_TOLERANCE_DEG))
        if aligned
        else rng.uniform(0, 2 * math.pi)
    )
    centre_plate = plate_world.mean(axis=0)
    plate_reach = float(np.max(np.linalg.norm(plate_world - centre_plate, axis=1)))
    # try a few directions; keep the one showing most of the object
    grid = (
        np.stack(np.meshgrid(np.linspace(-0.9, 0.9, 5), np.linspace(-0.9, 0.9, 5)), -1).reshape(-1, 2) * half
    )
    best, best_seen = np.zeros(2), -1
    for _ in range(12):
        direction = rng.uniform(0, 2 * math.pi)
        d = np.array([math.cos(direction), math.sin(direction)])
        local = _rot2(-angle) @ d  # support distance of the rotated rectangle along -d
        obj = abs(local[0]) * half[0] + abs(local[1]) * half[1]
        centre = centre_plate + d * (plate_reach + rng.uniform(10, 60) + obj)
        px = cam.project(_lift(_board_to_world(grid, (centre[0], centre[1]), angle), floor_z))
        seen = int(np.sum((px[:, 0] > 0) & (px[:, 0] < IMAGE_W) & (px[:, 1] > 0) & (px[:, 1] < IMAGE_H)))
        if seen > best_seen:
            best, best_seen = centre, seen
    return BesideObject(
        kind=kind,
        centre=(float(best[0]), float(best[1])),
        angle=angle,
        half=half,
        thickness_mm=thickness,
        cell_mm=cell,
        border_mm=border,
        colours=tuple(_clip_colour(c) for c in colours),
    )


def _sample_spares(
    rng: np.random.Generator,
    plate: Plate,
    piece_set: PieceSet,
    centre: tuple[float, float],
    angle: float,
    floor_z: float,
    avoid: np.ndarray | None,
) -> tuple[tuple[Piece, ...], str]:
    """Spare pieces beside the plate: two columns or a loose scatter (or none)."""
    if rng.random() >= SPARES_PROBABILITY:
        return (), ""
    r = piece_set.radius_mm
    s = plate.square_mm
    sides = [0, 1, 2, 3]
    if avoid is not None:  # not on the side of the object beside
        local = _rot2(-angle) @ (avoid - np.asarray(centre))
        towards = round(math.atan2(local[1], local[0]) / (math.pi / 2)) % 4
        sides.remove(towards)
    side = sides[int(rng.integers(len(sides)))]
    x0, y0, x1, y1 = plate.rect
    edge = (x1, y1, -x0, -y0)[side]  # distance from the centre to the plate's edge on that side
    rot = _rot2(side * math.pi / 2)
    n_black, n_white = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    colours = ["X"] * n_black + ["O"] * n_white
    pts: list[np.ndarray] = []
    if rng.random() < 0.5:
        mode = "columns"
        gap = rng.uniform(0.2, 0.8) * s
        step = 2 * r * rng.uniform(1.05, 1.3)
        for col, n in ((0, n_black), (1, n_white)):
            for i in range(n):
                pts.append(np.array([edge + gap + r + col * step, (i - (n - 1) / 2) * step]))
    else:
        mode = "scatter"
        for _ in range(len(colours)):
            for _try in range(20):
                p = np.array([edge + r + rng.uniform(4, 1.6 * s), rng.uniform(-1.8, 1.8) * s])
                if all(np.linalg.norm(p - q) > 2.05 * r for q in pts):
                    pts.append(p)
                    break
        colours = colours[: len(pts)]
    uw = np.array(pts) @ rot.T
    world = _board_to_world(uw, centre, angle)
    return tuple(
        Piece(float(x), float(y), floor_z, c) for (x, y), c in zip(world, colours, strict=True)
    ), mode


def _sample_light(
    rng: np.random.Generator, centre: tuple[float, float], top: float, plate_world: np.ndarray
) -> Light:
    az = rng.uniform(0, 2 * math.pi)
    if rng.random() < 0.55:
        el = math.radians(rng.uniform(45, 80))
        return Light(
            kind="area",
            azimuth=az,
            elevation=el,
            position=(0.0, 0.0, 0.0),
            ratio=rng.uniform(1.0, 1.7),
            shadow=rng.uniform(0.18, 0.4),
            penumbra=rng.uniform(0.10, 0.30),
        )
    el = math.radians(rng.uniform(35, 72))
    dist = rng.uniform(450, 1300)
    pos = np.array([centre[0], centre[1], top]) + dist * np.array(
        [math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)]
    )
    e = _irradiance(pos, _lift(plate_world, top))
    return Light(
        kind="point",
        azimuth=az,
        elevation=el,
        position=(float(pos[0]), float(pos[1]), float(pos[2])),
        ratio=float(min(e.max() / e.min(), MAX_LIGHT_RATIO)),
        shadow=rng.uniform(0.38, 0.62),
        penumbra=rng.uniform(0.01, 0.04),
    )


def _irradiance(light_pos: np.ndarray, pts3: np.ndarray) -> np.ndarray:
    """Lambertian irradiance of a point light on horizontal surfaces (unnormalised)."""
    d = np.asarray(light_pos) - pts3
    dist = np.linalg.norm(d, axis=1)
    return d[:, 2] / dist**3


def _sample_optics(rng: np.random.Generator) -> Optics:
    temp = rng.uniform(-1, 1)
    return Optics(
        exposure=float(math.exp(rng.uniform(math.log(EXPOSURE_RANGE[0]), math.log(EXPOSURE_RANGE[1])))),
        wb=(1 - 0.2 * temp, 1 + rng.uniform(-0.03, 0.03), 1 + 0.17 * temp),
        vignette=rng.uniform(0.0, 0.4),
        defocus_px=rng.uniform(0.25, 0.9) if rng.random() < 0.8 else rng.uniform(0.9, 1.6),
        motion_px=rng.uniform(0.4, MOTION_BLUR_MAX_PX) if rng.random() < 0.35 else 0.0,
        motion_angle=rng.uniform(0, math.pi),
        read_noise=rng.uniform(0.8, 4.0),
        shot_noise=rng.uniform(0.0, 0.12),
        jpeg_quality=int(rng.integers(JPEG_QUALITY[0], JPEG_QUALITY[1] + 1)),
    )


def _sample_occluder(
    rng: np.random.Generator,
    plate: Plate,
    piece_set: PieceSet,
    drawn: tuple[str, str, str],
    centre: tuple[float, float],
    angle: float,
    top: float,
) -> Occluder | None:
    if rng.random() >= OCCLUDER_PROBABILITY:
        return None
    kind = _choice(rng, OCCLUDER_KINDS)
    s = plate.square_mm
    cells = "".join(drawn)
    any_piece = any(c != "." for c in cells)

    def square_world(i: int) -> np.ndarray:
        r, c = divmod(i, 3)
        return _board_to_world(np.array([[(c - 1) * s, (1 - r) * s]]), centre, angle)[0]

    if kind == "coin":
        empties = [i for i in range(9) if cells[i] == "."]
        i = int(rng.choice(empties)) if empties else int(rng.integers(9))
        z = top + (0.0 if cells[i] == "." else piece_set.height_mm)
        p = square_world(i) + rng.uniform(-0.12, 0.12, 2) * s
        radius = rng.uniform(max(0.14 * s, 0.5 * piece_set.radius_mm), 0.9 * piece_set.radius_mm)
        radius = min(radius, 0.9 * piece_set.radius_mm)
        metal = [_grey(rng.uniform(170, 200)), (70.0, 110.0, 175.0), (80.0, 165.0, 200.0)][
            int(rng.integers(3))
        ]
        return Occluder(
            "coin", (float(p[0]), float(p[1]), z), 0.0, radius, rng.uniform(1.5, 2.2), metal, metal, 0
        )
    if kind == "pen":
        p = np.asarray(centre) + _rot2(angle) @ (rng.uniform(-0.8, 0.8, 2) * s)
        dia = rng.uniform(8, 11)
        z = top + (piece_set.height_mm if any_piece else 0.0) + dia / 2
        bodies = [
            (150.0, 60.0, 20.0),
            _grey(30.0),
            (40.0, 40.0, 190.0),
            _grey(232.0),
            _grey(185.0),
            (40.0, 170.0, 220.0),
        ]
        body = _jitter(rng, bodies[int(rng.integers(len(bodies)))], 8)
        clip = _grey(rng.uniform(170, 215)) if rng.random() < 0.6 else _scale(body, 0.8)
        return Occluder(
            "pen",
            (float(p[0]), float(p[1]), z),
            rng.uniform(0, math.pi),
            rng.uniform(125, 150),
            dia,
            body,
            clip,
            0,
        )
    i = int(rng.integers(9))
    p = square_world(i) + rng.uniform(-0.15, 0.15, 2) * s
    z = top + piece_set.height_mm + rng.uniform(6, 22)
    skins = [(165.0, 190.0, 230.0), (120.0, 152.0, 200.0), (70.0, 95.0, 135.0)]
    skin = _jitter(rng, skins[int(rng.choice(3, p=[0.45, 0.35, 0.2]))], 10)
    sleeve = _hsv(rng.random(), rng.uniform(0.0, 0.7), rng.uniform(0.15, 0.85))
    variant = (1 + int(rng.integers(2))) * (1 if rng.random() < 0.5 else -1)
    return Occluder(
        "hand",
        (float(p[0]), float(p[1]), z),
        rng.uniform(0, 2 * math.pi),
        rng.uniform(0.85, 1.1),
        0.0,
        skin,
        sleeve,
        variant,
    )


# =========================================================================================================
# Sampling: the scene and its truth
# =========================================================================================================
def _sample_scene(rng: np.random.Generator) -> Scene:
    kind = _choice(rng, TABLE_KINDS)
    cells = _sample_cells(rng, kind)
    s, cells = _sample_square(rng, kind, cells)
    plate = _sample_plate(rng, s)
    piece_set, low_contrast = _sample_piece_set(rng, plate)
    drawn, mode = _sample_board(rng)
    patterned = kind not in ("plain", *PATTERNED_BESIDE)
    if patterned and rng.random() < ALIGNED_PROBABILITY:
        angle = math.radians(
            90 * int(rng.integers(4)) + rng.uniform(-ALIGNED_TOLERANCE_DEG, ALIGNED_TOLERANCE_DEG)
        )
    else:
        angle = rng.uniform(0, 2 * math.pi)
    surface = _sample_surface(rng, SURFACES_PLAIN if kind == "plain" else SURFACES_UNDER)
    if kind == "gingham":
        surface = Surface(
            "cloth",
            _grey(rng.uniform(232, 248), rng, 3),
            rng.uniform(0, math.pi),
            rng.uniform(150, 400),
            0.06,
        )
    elif kind == "planks":
        surface = Surface("wood", _wood_colour(rng), 0.0, rng.uniform(2.5, 9.0), rng.uniform(0.08, 0.2))
    floor_z = rng.uniform(1.8, 3.0) if kind == "cutting_mat" else 0.0
    cam, centre = _sample_camera(rng, plate, piece_set, floor_z, angle)
    top = floor_z + plate.thickness_mm
    plate_world = _plate_world(plate, centre, angle)

    # the table's pattern, placed around the board
    pattern: Pattern | None = None
    beside: BesideObject | None = None
    lock = None
    match = _pitch_matches(s, cells, kind)
    if match and kind in ("cutting_mat", "graph_paper", "gingham") and rng.random() < PHASE_LOCK_PROBABILITY:
        # a pattern line through the middle of the board's inner lines (meaningful when aligned)
        lock = (centre[0] + 0.5 * s, centre[1] + 0.5 * s)
    if kind in ("cutting_mat", "graph_paper"):
        pattern = _sample_sheet(rng, kind, cells, _bbox(plate_world), lock, surface.colour)
        if kind == "cutting_mat":
            pattern = replace(pattern, thickness_mm=floor_z)
    elif kind == "tiles":
        pattern = _sample_tiles(rng, cells)
    elif kind == "gingham":
        c = cells["minor"]
        origin = lock if lock is not None else (rng.uniform(0, 2 * c), rng.uniform(0, 2 * c))
        colour = _jitter(rng, GINGHAM_COLOURS[int(rng.integers(len(GINGHAM_COLOURS)))], 10)
        pattern = GinghamPattern(c, origin, _clip_colour(colour))
    elif kind == "planks":
        pattern = PlankPattern(
            cells["minor"],
            rng.uniform(1.0, 4.5),
            rng.uniform(0, cells["minor"]),
            _scale(surface.colour, rng.uniform(0.25, 0.5)),
        )
    elif kind in PATTERNED_BESIDE:
        beside = _sample_beside(rng, kind, cells, cam, plate_world, angle, floor_z)
    spares, spare_mode = _sample_spares(
        rng, plate, piece_set, centre, angle, floor_z, None if beside is None else np.asarray(beside.centre)
    )
    light = _sample_light(rng, centre, top, plate_world)
    optics = _sample_optics(rng)
    occluder = _sample_occluder(rng, plate, piece_set, drawn, centre, angle, top)

    # pieces on the board, then the dome radius that gives about half of a glossy set a highlight
    pieces = []
    for r in range(3):
        for c in range(3):
            if drawn[r][c] != ".":
                off = rng.uniform(-1, 1, 2)
                off *= PIECE_OFFSET_FRAC * s * math.sqrt(rng.random()) / max(np.linalg.norm(off), 1e-9)
                uw = np.array([[(c - 1) * s + off[0], (1 - r) * s + off[1]]])
                x, y = _board_to_world(uw, centre, angle)[0]
                pieces.append(Piece(float(x), float(y), top, drawn[r][c]))
    if pieces:
        q = _half_vector_tilt(cam, light, pieces, piece_set.height_mm)
        piece_set = replace(
            piece_set,
            dome_mm=0.8 * piece_set.radius_mm / max(float(np.median(q)), 1e-3) * rng.uniform(0.9, 1.1),
        )

    scene = Scene(
        camera=cam,
        floor_z=floor_z,
        surface=surface,
        pattern=pattern,
        beside=beside,
        plate=plate,
        board_centre=centre,
        board_angle=angle,
        drawn=drawn,
        pieces=tuple(pieces),
        spares=spares,
        piece_set=piece_set,
        light=light,
        optics=optics,
        occluder=occluder,
        table=kind,
        cell_mm=cells.get("minor", math.nan),
        pitch_match=match,
        phase_locked=lock is not None,
        board_mode=mode,
        low_contrast=low_contrast,
        spare_mode=spare_mode,
        truth=None,
    )
    return replace(scene, truth=_truth(scene, _tags(scene)))


def _half_vector_tilt(cam: Camera, light: Light, pieces: list[Piece], height: float) -> np.ndarray:
    """|horizontal part| of the unit half-vector between light and view at the pieces' tops."""
    tops = np.array([[p.x, p.y, p.z + height] for p in pieces])
    v = cam.C - tops
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    h = v + _light_dir(light, tops)
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    return np.linalg.norm(h[:, :2], axis=1)


def _pitch_matches(s: float, cells: dict[str, float], kind: str) -> bool:
    """Whether the board's square is an integer multiple (1..10) of one of the pattern's line spacings."""
    if kind in ("plain", "tiles", "planks", "perfboard", "breadboard") or not cells:
        return False
    spacings = [cells["minor"]]
    if kind in ("cutting_mat", "graph_paper"):
        spacings.append(cells["minor"] * cells["every"])
        if cells.get("mid"):
            spacings.append(cells["minor"] * cells["mid"])
    for sp in spacings:
        n = round(s / sp)
        if 1 <= n <= PITCH_MATCH_MAX_DIVISOR and abs(s - n * sp) <= PITCH_MATCH_TOLERANCE_MM:
            return True
    return False


def _truth(scene: Scene, tags: frozenset[str]) -> Truth:
    """The truth of Sample, from the scene's geometry (module docstring: definitions)."""
    cs = _drawn_centres_px(
        scene.camera, scene.board_centre, scene.board_angle, scene.plate.square_mm, scene.top_z
    )
    x_dir = (cs[1, 2] - cs[1, 0]) / 2
    y_dir = (cs[2, 1] - cs[0, 1]) / 2
    a1 = math.atan2(-x_dir[1], x_dir[0])  # x axis = pitch (cos a, -sin a)
    a2 = math.atan2(y_dir[0], y_dir[1])  # y axis = pitch (sin a, cos a)
    a = math.degrees(math.atan2(math.sin(a1) + math.sin(a2), math.cos(a1) + math.cos(a2)))
    k = math.ceil((a - 45.0) / 90.0)
    folded = a - 90.0 * k
    board = np.rot90(np.array([list(row) for row in scene.drawn]), k=k % 4)
    c = cs[1, 1]
    return Truth(
        board="".join(board.ravel()),
        centre_px=(float(c[0]), float(c[1])),
        angle_deg=float(folded),
        pitch_px=_pitch_of(cs),
        quarter_turns=k % 4,
        occluded=scene.occluder is not None,
        tags=tags,
    )


def _tags(scene: Scene) -> frozenset[str]:
    """The frame's condition names (all in TAGS; README: meanings)."""
    kind, s, plate, piece_set, mode = (
        scene.table,
        scene.plate.square_mm,
        scene.plate,
        scene.piece_set,
        scene.board_mode,
    )
    surface, pattern, beside, cam, light, optics = (
        scene.surface, scene.pattern, scene.beside, scene.camera, scene.light, scene.optics
    )  # fmt: skip
    occluder, angle = scene.occluder, scene.board_angle
    t = {
        f"table:{kind}",
        f"plate:{plate.kind}",
        f"lines:{plate.line_style}",
        f"pieces:{mode}",
        f"light:{light.kind}",
    }
    if kind not in ("tiles", "gingham", "planks"):
        t.add(f"surface:{surface.kind}")
    if kind != "plain":
        cell = scene.cell_mm
        if cell / s <= FINE_RATIO:
            t.add("mat:fine")
        if cell / s >= COARSE_RATIO:
            t.add("mat:coarse")
        if scene.pitch_match:
            t.add("mat:pitch_match")
        rel = math.degrees(angle - (beside.angle if beside is not None else 0.0))
        if abs((rel + 45) % 90 - 45) <= ALIGNED_TOLERANCE_DEG:
            t.add("mat:aligned")
            if scene.pitch_match and scene.phase_locked:
                t.add("mat:phase_locked")
    if isinstance(pattern, SheetGrid):
        under = surface.colour
        base = _mix(under, pattern.colour, pattern.opacity)
        t.add("mat:light_lines" if _luma(pattern.line_colour) > _luma(base) else "mat:dark_lines")
        if pattern.guides:
            t.add("mat:guides")
        if pattern.circles:
            t.add("mat:circles")
        if pattern.opacity < 1:
            t.add("mat:translucent")
        if pattern.tick_mm > 0:
            t.add("mat:imperial")
        fp = _footprint(cam, scene.floor_z, margin=0.0)
        x0, y0, x1, y1 = pattern.rect
        inside = (fp[:, 0] > x0) & (fp[:, 0] < x1) & (fp[:, 1] > y0) & (fp[:, 1] < y1)
        if not inside.all():
            t.add("mat:edge_in_view")
            if pattern.scale_mm > 0:
                t.add("mat:scales")
    elif isinstance(pattern, TilePattern):
        t.add("mat:light_lines" if _luma(pattern.grout_colour) > _luma(pattern.colour) else "mat:dark_lines")
    elif isinstance(pattern, PlankPattern):
        t.add("mat:dark_lines")
    table_colour = pattern.colour if isinstance(pattern, SheetGrid | TilePattern) else surface.colour
    if max(abs(a - b) for a, b in zip(plate.colour, table_colour, strict=True)) < 30:
        t.add("plate:like_table")
    x0, _, _, _ = plate.rect
    if plate.kind != "paper" and abs(-x0 - 1.5 * s - plate.line_width_mm / 2) < 1e-6:
        t.add("plate:frame_at_edge")
    if _luma(plate.line_colour) > _luma(plate.colour):
        t.add("lines:light")
    frac = plate.line_width_mm / s
    if frac < 0.04:
        t.add("lines:thin")
    if frac > 0.09:
        t.add("lines:thick")
    ratio = piece_set.radius_mm / s
    if ratio > 0.4:
        t.add("pieces:large")
    if ratio < 0.27:
        t.add("pieces:small")
    if piece_set.glossy:
        t.add("pieces:glossy")
    if scene.low_contrast and mode != "empty":
        t.add("pieces:low_contrast")
    if scene.spare_mode:
        t.add(f"pieces:spares_{scene.spare_mode}")
    if light.ratio >= 1.4:
        t.add("light:gradient")
    if optics.wb[2] - optics.wb[0] > 0.15:
        t.add("light:warm")
    if optics.wb[0] - optics.wb[2] > 0.15:
        t.add("light:cool")
    if optics.exposure > 1.22:
        t.add("light:bright")
    if optics.exposure < 0.8:
        t.add("light:dim")
    tilt = math.degrees(math.acos(min(1.0, -float(cam.R[2] @ np.array([0.0, 0.0, 1.0])))))
    if tilt > 10:
        t.add("cam:tilted")
    if optics.defocus_px > 1.0:
        t.add("cam:defocus")
    if optics.motion_px >= 1.0:
        t.add("cam:motion_blur")
    if optics.read_noise > 3.3 or optics.shot_noise > 0.1:
        t.add("cam:noisy")
    if optics.jpeg_quality < 65:
        t.add("cam:jpeg_low")
    if occluder is not None:
        t.add(f"occ:{occluder.kind}")
    unknown = t - TAGS
    assert not unknown, unknown
    return frozenset(t)


# =========================================================================================================
# Drawing helpers (uint8 BGR albedo image; anti-aliased, sub-pixel coordinates)
# =========================================================================================================
def _fx(pts: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(pts, dtype=np.float64) * FIX).astype(np.int32)


def _col(c: BGR) -> tuple[float, float, float]:
    c = _clip_colour(c)
    return (float(c[0]), float(c[1]), float(c[2]))


def _fill(img: np.ndarray, pts: np.ndarray, colour: BGR) -> None:
    """Opaque anti-aliased polygon."""
    if len(pts) >= 3:
        cv2.fillPoly(img, [_fx(pts)], _col(colour), cv2.LINE_AA, SHIFT)


def _roi(pts: np.ndarray, pad: float) -> tuple[int, int, int, int] | None:
    x0 = max(math.floor(pts[:, 0].min() - pad), 0)
    y0 = max(math.floor(pts[:, 1].min() - pad), 0)
    x1 = min(math.ceil(pts[:, 0].max() + pad) + 1, IMAGE_W)
    y1 = min(math.ceil(pts[:, 1].max() + pad) + 1, IMAGE_H)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def _blend(
    img: np.ndarray, x0: int, y0: int, mask: np.ndarray, colour: np.ndarray | BGR, alpha: float = 1.0
) -> None:
    """img[roi] += (colour - img[roi]) * mask / 255 * alpha; colour is a BGR triple or an (h, w, 3) array."""
    h, w = mask.shape
    sub = img[y0 : y0 + h, x0 : x0 + w].astype(np.float32)
    a = mask.astype(np.float32)[..., None] * np.float32(alpha / 255.0)
    sub += (np.asarray(colour, dtype=np.float32) - sub) * a
    img[y0 : y0 + h, x0 : x0 + w] = np.clip(sub + 0.5, 0, 255).astype(np.uint8)


def _poly_mask(pts: np.ndarray, pad: float = 2.0) -> tuple[int, int, np.ndarray] | None:
    if len(pts) < 3:
        return None
    roi = _roi(pts, pad)
    if roi is None:
        return None
    x0, y0, x1, y1 = roi
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [_fx(pts - (x0, y0))], 255, cv2.LINE_AA, SHIFT)
    return x0, y0, mask


def _fill_alpha(img: np.ndarray, pts: np.ndarray, colour: BGR, alpha: float) -> None:
    m = _poly_mask(pts)
    if m is not None:
        _blend(img, m[0], m[1], m[2], colour, alpha)


def _fill_shaded(img: np.ndarray, pts: np.ndarray, colour: BGR, direction: np.ndarray, amp: float) -> None:
    """Polygon filled with colour * (1 + amp * s), s going from -1 to 1 across it along `direction`."""
    m = _poly_mask(pts)
    if m is None:
        return
    x0, y0, mask = m
    h, w = mask.shape
    proj = (pts - (x0, y0)) @ direction
    mid, half = (proj.min() + proj.max()) / 2, max((proj.max() - proj.min()) / 2, 1.0)
    xs = (np.arange(w, dtype=np.float32) * np.float32(direction[0]))[None, :]
    ys = (np.arange(h, dtype=np.float32) * np.float32(direction[1]))[:, None]
    shade = 1 + amp * np.clip((xs + ys - np.float32(mid)) / np.float32(half), -1, 1)
    _blend(img, x0, y0, mask, shade[..., None] * np.asarray(colour, dtype=np.float32))


def _glow(
    img: np.ndarray,
    centre: np.ndarray,
    radius: float,
    colour: BGR,
    strength: float,
    stretch: float = 1.0,
    angle: float = 0.0,
) -> None:
    """A soft blob blending the image towards `colour` (highlights, reflections)."""
    radius = max(radius, 0.6)
    blur = radius * 0.6 + 0.4
    pad = radius * max(stretch, 1.0) + 3 * blur + 2
    roi = _roi(np.array([centre]), pad)
    if roi is None:
        return
    x0, y0, x1, y1 = roi
    f = max(1, int(radius // GLOW_PX_PER_SAMPLE))  # large blobs are blurred at a reduced resolution
    h, w = (y1 - y0 + f - 1) // f, (x1 - x0 + f - 1) // f
    mask = np.zeros((h, w), np.uint8)
    c = _fx((np.asarray(centre) - (x0, y0) + 0.5) / f - 0.5)
    axes = (max(int(radius * stretch / f * FIX), 1), max(int(radius / f * FIX), 1))
    cv2.ellipse(mask, (int(c[0]), int(c[1])), axes, math.degrees(angle), 0, 360, 255, -1, cv2.LINE_AA, SHIFT)
    mask = cv2.GaussianBlur(mask, (0, 0), blur / f)
    if f > 1:
        mask = cv2.resize(mask, (w * f, h * f), interpolation=cv2.INTER_LINEAR)[: y1 - y0, : x1 - x0]
    _blend(img, x0, y0, mask, colour, strength)


def _polylines(img: np.ndarray, lines: list[np.ndarray], colour: BGR, thickness: int = 1) -> None:
    if lines:
        cv2.polylines(img, [_fx(p) for p in lines], False, _col(colour), thickness, cv2.LINE_AA, SHIFT)


def _draw_lines(
    img: np.ndarray,
    cam: Camera,
    z: float,
    a: np.ndarray,
    b: np.ndarray,
    width_mm: float,
    ink: BGR,
    base: BGR,
    alpha: float,
) -> None:
    """Straight printed lines on the horizontal plane at height z, segments a[i]-b[i] (world (N, 2)).

    Lines thinner than 1.6 px are 1 px anti-aliased strokes whose colour is pre-mixed with `base` by
    alpha x coverage; thicker ones are exact projected quads.
    """
    if len(a) == 0:
        return
    a3, b3 = _lift(a, z), _lift(b, z)
    segs, keep = _project_segments(cam, a3, b3)
    if len(segs) == 0:
        return
    scale = cam.px_per_mm((a3[keep] + b3[keep]) / 2)
    width_px = width_mm * scale
    thin = width_px < 1.6
    if thin.any():
        cover = np.clip(width_px[thin], 0.45, 1.0) / 1.25
        levels = np.round(cover * 8) / 8
        for lv in np.unique(levels):
            sel = segs[thin][levels == lv]
            _polylines(img, list(sel), _mix(base, ink, alpha * float(lv)))
    if (~thin).any():
        colour = _mix(base, ink, alpha)
        d = b[keep][~thin] - a[keep][~thin]
        n = np.column_stack([-d[:, 1], d[:, 0]]) / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-9)
        n *= width_mm / 2
        aa, bb = a[keep][~thin], b[keep][~thin]
        for i in range(len(aa)):
            quad = np.array([aa[i] + n[i], bb[i] + n[i], bb[i] - n[i], aa[i] - n[i]])
            _fill(img, _project_polygon(cam, _lift(quad, z)), colour)


class _Shadows:
    """Soft shadows drawn at half resolution, blurred once, then multiplied into the image."""

    def __init__(self) -> None:
        self.mask = np.zeros((IMAGE_H // 2, IMAGE_W // 2), np.uint8)
        self.box: list[float] | None = None

    def _grow(self, p: np.ndarray, pad: float) -> None:
        lo, hi = p.min(axis=0) - pad, p.max(axis=0) + pad
        if self.box is None:
            self.box = [lo[0], lo[1], hi[0], hi[1]]
        else:
            self.box = [
                min(self.box[0], lo[0]),
                min(self.box[1], lo[1]),
                max(self.box[2], hi[0]),
                max(self.box[3], hi[1]),
            ]

    def add(self, pts: np.ndarray, darkness: float) -> None:
        """A shadow polygon (pixels, full resolution)."""
        if len(pts) < 3:
            return
        p = (pts + 0.5) / 2 - 0.5
        cv2.fillPoly(self.mask, [_fx(p)], float(255 * darkness), cv2.LINE_AA, SHIFT)
        self._grow(p, 1)

    def add_line(self, pts: np.ndarray, width_px: float, darkness: float) -> None:
        """A shadow of a capsule along a polyline (pixels, full resolution)."""
        if len(pts) < 2:
            return
        p = (pts + 0.5) / 2 - 0.5
        t = max(1, round(width_px / 2))
        cv2.polylines(self.mask, [_fx(p)], False, float(255 * darkness), t, cv2.LINE_AA, SHIFT)
        self._grow(p, t)

    def apply(self, img: np.ndarray, sigma_px: float) -> None:
        if self.box is None:
            return
        s = max(sigma_px / 2, 0.35)
        pad = int(3 * s + 2)
        hh, hw = self.mask.shape
        x0, y0 = max(int(self.box[0]) - pad, 0), max(int(self.box[1]) - pad, 0)
        x1, y1 = min(int(self.box[2]) + pad + 2, hw), min(int(self.box[3]) + pad + 2, hh)
        if x1 <= x0 or y1 <= y0:
            return
        sub = cv2.GaussianBlur(self.mask[y0:y1, x0:x1].astype(np.float32) * np.float32(1 / 255), (0, 0), s)
        full = cv2.resize(sub, ((x1 - x0) * 2, (y1 - y0) * 2), interpolation=cv2.INTER_LINEAR)
        region = img[2 * y0 : 2 * y1, 2 * x0 : 2 * x1]
        full = full[: region.shape[0], : region.shape[1]]
        region[...] = np.clip(region.astype(np.float32) * (1 - full[..., None]) + 0.5, 0, 255).astype(
            np.uint8
        )


def _light_dir_px(cam: Camera, light: Light, at3: np.ndarray) -> np.ndarray:
    """Unit image direction pointing towards the light from the world point at3."""
    d = _light_dir(light, at3)[0]
    p = cam.project(np.vstack([at3.reshape(1, 3), at3.reshape(1, 3) + np.array([d[0], d[1], 0.0]) * 20]))
    v = p[1] - p[0]
    return v / max(float(np.linalg.norm(v)), 1e-9)


def _warp_into(
    img: np.ndarray, tex: np.ndarray, m: np.ndarray, poly_px: np.ndarray, alpha: float = 1.0
) -> None:
    """Texture `tex` mapped by homography m (texture pixels -> image pixels), inside the polygon."""
    mk = _poly_mask(poly_px, pad=1)
    if mk is None:
        return
    x0, y0, mask = mk
    h, w = mask.shape
    t = np.array([[1.0, 0.0, -x0], [0.0, 1.0, -y0], [0.0, 0.0, 1.0]])
    warped = cv2.warpPerspective(tex, t @ m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    _blend(img, x0, y0, mask, warped, alpha)


# =========================================================================================================
# Textures
# =========================================================================================================
def _upsampled_noise(
    rng: np.random.Generator, shape_lo: tuple[int, int], shape: tuple[int, int], cubic: bool = True
) -> np.ndarray:
    lo = rng.standard_normal((max(shape_lo[0], 2), max(shape_lo[1], 2))).astype(np.float32)
    return cv2.resize(lo, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC if cubic else cv2.INTER_LINEAR)


def _wood_texture(
    rng: np.random.Generator,
    shape: tuple[int, int],
    px_per_mm: float,
    colour: BGR,
    period_mm: float,
    variation: float,
    y0_mm: float = 0.0,
    planks: PlankPattern | None = None,
) -> np.ndarray:
    """Wood with its grain along the canvas's x axis; rows are `y0_mm + row / px_per_mm` across the grain."""
    h, w = shape
    ys = (y0_mm + np.arange(h, dtype=np.float32) / np.float32(px_per_mm))[:, None]
    span_y, span_x = h / px_per_mm, w / px_per_mm
    # growth rings bent on two scales: broad sweeps and local irregular spacing
    warp = _upsampled_noise(rng, (int(span_y / 60) + 2, int(span_x / 300) + 2), (h, w)) * np.float32(0.7)
    warp += _upsampled_noise(rng, (int(span_y / 10) + 2, int(span_x / 120) + 2), (h, w)) * np.float32(0.3)
    phase = ys / np.float32(period_mm) + warp
    tone_plank = np.float32(0.0)
    if planks is not None:
        idx = np.floor((ys[:, 0] - planks.origin) / planks.plank_mm).astype(np.int64)
        idx -= idx.min()
        n = int(idx.max()) + 1
        phase = phase + rng.uniform(0, 20, n).astype(np.float32)[idx][:, None]
        tone_plank = rng.uniform(-0.1, 0.1, n).astype(np.float32)[idx][:, None]
    ring = (0.5 + 0.5 * np.sin(np.float32(2 * math.pi) * phase)) ** 3
    streak = _upsampled_noise(rng, (h // 2 + 2, int(span_x / 30) + 2), (h, w), cubic=False)
    tone = 1 + np.float32(variation) * (np.float32(0.35) - ring + np.float32(0.3) * streak) + tone_plank
    return np.clip(tone[..., None] * np.asarray(colour, dtype=np.float32), 0, 255).astype(np.uint8)


def _smooth_texture(rng: np.random.Generator, colour: BGR, variation: float, folds: bool) -> np.ndarray:
    """A small canvas of slow variations (laminate, paper, cloth with folds), upsampled by the warp."""
    h, w = 40, 40
    tone = 1 + np.float32(variation) * _upsampled_noise(rng, (6, 6), (h, w))
    if folds:
        x = np.linspace(0, 1, w, dtype=np.float32)[None, :]
        tone += (
            np.float32(variation)
            * 1.5
            * np.sin(np.float32(2 * math.pi * rng.uniform(1.5, 3.5)) * x + np.float32(rng.uniform(0, 6)))
        )
    return np.clip(tone[..., None] * np.asarray(colour, dtype=np.float32), 0, 255).astype(np.uint8)


def _canvas_frame(
    cam: Camera, z: float, theta: float, px_per_mm: float
) -> tuple[np.ndarray, tuple[int, int], float]:
    """A canvas covering the view on the plane at height z, with axes rotated by theta in the world.

    Returns (M canvas pixels -> image pixels, (h, w), px_per_mm actually used)."""
    fp = _footprint(cam, z) @ _rot2(-theta).T
    x0, y0, x1, y1 = _bbox(fp)
    area = (x1 - x0) * (y1 - y0)
    ppm = min(px_per_mm, math.sqrt(MAX_CANVAS_PX / max(area, 1.0)))
    w, h = max(int((x1 - x0) * ppm) + 2, 2), max(int((y1 - y0) * ppm) + 2, 2)
    a = np.array([[1 / ppm, 0.0, x0], [0.0, 1 / ppm, y0], [0.0, 0.0, 1.0]])
    r = np.eye(3)
    r[:2, :2] = _rot2(theta)
    return cam.homography(z) @ r @ a, (h, w), ppm


# =========================================================================================================
# Rendering: the table
# =========================================================================================================
def _draw_surface(img: np.ndarray, scene: Scene, rng: np.random.Generator) -> None:
    """The table's own surface over the whole frame."""
    cam, sf = scene.camera, scene.surface
    planks = scene.pattern if isinstance(scene.pattern, PlankPattern) else None
    if sf.kind == "wood":
        scale = float(cam.px_per_mm(_lift(np.array(scene.board_centre), 0.0))[0])
        theta = 0.0 if planks is not None else sf.grain_angle
        m, shape, ppm = _canvas_frame(cam, 0.0, theta, scale * 0.9)
        y0 = _bbox(_footprint(cam, 0.0) @ _rot2(-theta).T)[1]
        tex = _wood_texture(rng, shape, ppm, sf.colour, sf.grain_period_mm, sf.variation, y0, planks)
        flags = cv2.INTER_LINEAR
    else:
        tex = _smooth_texture(rng, sf.colour, sf.variation, folds=sf.kind == "cloth")
        m0, shape, _ = _canvas_frame(cam, 0.0, sf.grain_angle, 1.0)
        a = np.diag([shape[1] / tex.shape[1], shape[0] / tex.shape[0], 1.0])
        m, flags = m0 @ a, cv2.INTER_CUBIC
    cv2.warpPerspective(tex, m, (IMAGE_W, IMAGE_H), dst=img, flags=flags, borderMode=cv2.BORDER_REPLICATE)


def _view_box(cam: Camera, z: float) -> Rect:
    return _bbox(_footprint(cam, z))


def _grid_family(
    view: Rect, origin: float, spacing: float, axis: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lines x = origin + k spacing (axis 0) or y = ... (axis 1) across the view: (a, b, k)."""
    lo, hi = (view[0], view[2]) if axis == 0 else (view[1], view[3])
    k = np.arange(math.ceil((lo - origin) / spacing - 1e-9), math.floor((hi - origin) / spacing + 1e-9) + 1)
    v = origin + k * spacing
    if axis == 0:
        a = np.column_stack([v, np.full(len(v), view[1])])
        b = np.column_stack([v, np.full(len(v), view[3])])
    else:
        a = np.column_stack([np.full(len(v), view[0]), v])
        b = np.column_stack([np.full(len(v), view[2]), v])
    return a, b, k


# Stroke font for a mat's ruler numbers: per digit, strokes separated by "|", each a list of x y points in
# tenths of the digit's height (a box 6 wide and 10 high, y up).
_DIGIT_STROKES: Final = {
    "0": "0 1.5 0 8.5 1.5 10 4.5 10 6 8.5 6 1.5 4.5 0 1.5 0 0 1.5",
    "1": "1.2 8 3.5 10 3.5 0 | 1 0 5.8 0",
    "2": "0 8 1.5 10 4.5 10 6 8.2 6 6.2 0 0 6 0",
    "3": "0 8.6 1.5 10 4.5 10 6 8.6 6 6.6 4.5 5.3 2 5.3 | 4.5 5.3 6 4 6 1.4 4.5 0 1.5 0 0 1.4",
    "4": "4.5 0 4.5 10 0 3 6.2 3",
    "5": "5.8 10 0.5 10 0 5.5 4 6 6 4.2 6 1.5 4.5 0 1.5 0 0 1.2",
    "6": "5.5 9 4 10 2 10 0 8 0 1.5 1.5 0 4.5 0 6 1.5 6 4 4.5 5.5 1.5 5.5 0 4",
    "7": "0 10 6 10 2 0",
    "8": "3 5.5 0.5 7 0.5 8.8 1.8 10 4.2 10 5.5 8.8 5.5 7 3 5.5 0 3.8 0 1.3 1.5 0 4.5 0 6 1.3 6 3.8 3 5.5",
    "9": "6 6 4.5 4.5 1.5 4.5 0 6 0 8.5 1.5 10 4.5 10 6 8.5 6 2 4 0 1 0",
}
_DIGITS: Final = {
    ch: tuple(np.array(stroke.split(), dtype=np.float64).reshape(-1, 2) / 10 for stroke in spec.split("|"))
    for ch, spec in _DIGIT_STROKES.items()
}


def _text_strokes(text: str, centre: tuple[float, float], height: float) -> list[np.ndarray]:
    """World polylines of `text` centred at `centre`, upright along +y, `height` mm tall."""
    advance = 0.8 * height
    x = centre[0] - (len(text) * advance - 0.2 * height) / 2
    out = []
    for ch in text:
        for stroke in _DIGITS[ch]:
            out.append(stroke * height + np.array([x, centre[1] - height / 2]))
        x += advance
    return out


def _draw_sheet(img: np.ndarray, scene: Scene, rng: np.random.Generator) -> None:
    """A cutting mat or a graph paper sheet: the sheet, its grid, scales, guides and cut marks."""
    p = scene.pattern
    assert isinstance(p, SheetGrid)
    cam = scene.camera
    z = scene.floor_z if p.kind == "cutting_mat" else p.thickness_mm
    outline = _rounded_rect(p.rect, p.corner_mm)
    top = _project_polygon(cam, _lift(outline, z))
    if p.thickness_mm >= 0.5:
        bottom = _project_polygon(cam, _lift(outline, 0.0))
        if len(bottom) and len(top):
            _fill(img, _hull(np.vstack([bottom, top])), _scale(p.colour, 0.62))
    if p.opacity >= 1:
        _fill(img, top, p.colour)
    else:
        _fill_alpha(img, top, p.colour, p.opacity)
    base = _mix(scene.surface.colour, p.colour, p.opacity)
    view = _intersect(_view_box(cam, z), p.grid)
    if view is not None:
        major = p.minor_mm * p.major_every
        for axis in (0, 1):
            a, b, k = _grid_family(view, p.grid[axis], p.minor_mm, axis)
            heavy = k % p.major_every == 0
            mid = (k % p.mid_every == 0) & ~heavy if p.mid_every else np.zeros(len(k), bool)
            light = ~heavy & ~mid
            _draw_lines(img, cam, z, a[light], b[light], p.minor_width_mm, p.line_colour, base, p.minor_alpha)
            mid_w = (p.minor_width_mm + p.major_width_mm) / 2
            _draw_lines(
                img, cam, z, a[mid], b[mid], mid_w, p.line_colour, base, (p.minor_alpha + p.major_alpha) / 2
            )
            _draw_lines(img, cam, z, a[heavy], b[heavy], p.major_width_mm, p.line_colour, base, p.major_alpha)
            if p.tick_mm > 0:  # ticks across each major line
                ma, _, _ = _grid_family(view, p.grid[axis], major, axis)
                other = 1 - axis
                tk = np.arange(
                    math.ceil((view[other] - p.grid[other]) / p.tick_mm),
                    math.floor((view[other + 2] - p.grid[other]) / p.tick_mm) + 1,
                )
                pos = p.grid[other] + tk * p.tick_mm
                length = np.where(tk % 4 == 0, 2.2, 1.2)
                line_pos = np.repeat(ma[:, axis], len(pos))
                along = np.tile(pos, len(ma))
                half = np.tile(length, len(ma))
                if axis == 0:
                    ta, tb = (
                        np.column_stack([line_pos - half, along]),
                        np.column_stack([line_pos + half, along]),
                    )
                else:
                    ta, tb = (
                        np.column_stack([along, line_pos - half]),
                        np.column_stack([along, line_pos + half]),
                    )
                _draw_lines(img, cam, z, ta, tb, p.minor_width_mm, p.line_colour, base, p.minor_alpha)
        _draw_guides(img, cam, z, p, view, base)
    if p.scale_mm > 0:
        _draw_scales(img, cam, z, p, base)
    if not math.isnan(p.margin_line_x):
        x = p.margin_line_x
        _draw_lines(
            img,
            cam,
            z,
            np.array([[x, p.rect[1]]]),
            np.array([[x, p.rect[3]]]),
            0.35,
            (60.0, 60.0, 215.0),
            base,
            0.7,
        )
    if p.scratches:
        sheet_view = _intersect(_view_box(cam, z), p.rect)
        if sheet_view is not None:
            n = p.scratches
            c = rng.uniform(sheet_view[:2], sheet_view[2:], (n, 2))
            ang = np.where(
                rng.random(n) < 0.5,
                rng.integers(0, 2, n) * math.pi / 2 + rng.normal(0, 0.01, n),
                rng.uniform(0, math.pi, n),
            )
            half = rng.uniform(8, 90, (n, 1)) * np.column_stack([np.cos(ang), np.sin(ang)])
            mark = (
                _mix(p.colour, (255.0, 255.0, 255.0), 0.25)
                if _luma(p.colour) < 150
                else _scale(p.colour, 0.8)
            )
            clipped = [_clip_segment(a, b, p.rect) for a, b in zip(c - half, c + half, strict=True)]
            segs = [sg for sg in clipped if sg is not None]
            if segs:
                sa, sb = np.array([sg[0] for sg in segs]), np.array([sg[1] for sg in segs])
                _draw_lines(img, cam, z, sa, sb, 0.25, mark, base, rng.uniform(0.4, 0.9))


def _draw_guides(img: np.ndarray, cam: Camera, z: float, p: SheetGrid, view: Rect, base: BGR) -> None:
    """Diagonal angle guides and circles of a cutting mat, clipped to its grid."""
    gx0, gy0, gx1, gy1 = p.grid
    starts: list[tuple[np.ndarray, np.ndarray]] = []
    for deg in p.guides:
        t = math.radians(deg)
        starts.append((np.array([gx0, gy0]), np.array([math.cos(t), math.sin(t)])))
        starts.append((np.array([gx1, gy0]), np.array([-math.cos(t), math.sin(t)])))
    if p.guide_family_mm > 0:
        span = (gx1 - gx0) + (gy1 - gy0)
        for k in np.arange(-span, span, p.guide_family_mm):
            starts.append((np.array([gx0 + k, gy0]), np.array([1.0, 1.0]) / math.sqrt(2)))
    a, b = [], []
    for start, d in starts:
        seg = _clip_segment(start, start + d * 4000.0, view)
        if seg is not None:
            a.append(seg[0])
            b.append(seg[1])
    if a:
        _draw_lines(
            img, cam, z, np.array(a), np.array(b), p.minor_width_mm, p.line_colour, base, p.minor_alpha
        )
    for cx, cy, r in p.circles:
        pts = _circle(r, 120) + np.array([cx, cy])
        px = cam.project(_lift(pts, z))
        scale = float(cam.px_per_mm(_lift(np.array([cx, cy]), z))[0])
        cover = min(max(p.minor_width_mm * scale, 0.3), 1.0) / 1.25
        cv2.polylines(
            img,
            [_fx(px)],
            True,
            _col(_mix(base, p.line_colour, p.minor_alpha * cover)),
            1,
            cv2.LINE_AA,
            SHIFT,
        )


def _draw_scales(img: np.ndarray, cam: Camera, z: float, p: SheetGrid, base: BGR) -> None:
    """Ruler ticks and numbers along the grid's edges, in the mat's border."""
    gx0, gy0, gx1, gy1 = p.grid
    view = _view_box(cam, z)
    border = min(p.grid[0] - p.rect[0], p.grid[1] - p.rect[1])
    long_tick = min(4.0, border * 0.35)
    height = min(4.5, border * 0.4)
    ta, tb, strokes = [], [], []
    for axis, edge, out in ((0, gy1, 1.0), (1, gx0, -1.0), (0, gy0, -1.0)):
        lo, hi = (gx0, gx1) if axis == 0 else (gy0, gy1)
        k = np.arange(0, math.floor((hi - lo) / p.scale_mm + 1e-9) + 1)
        pos = lo + k * p.scale_mm
        vis = (pos >= (view[0] if axis == 0 else view[1])) & (pos <= (view[2] if axis == 0 else view[3]))
        if not vis.any():
            continue
        per_number = round(p.number_mm / p.scale_mm)
        length = np.where(
            k % per_number == 0,
            long_tick,
            np.where(k % max(per_number // 2, 1) == 0, long_tick * 0.65, long_tick * 0.4),
        )
        for kk, ps, ln in zip(k[vis], pos[vis], length[vis], strict=True):
            if axis == 0:
                ta.append((ps, edge))
                tb.append((ps, edge + out * ln))
            else:
                ta.append((edge, ps))
                tb.append((edge + out * ln, ps))
            if kk % per_number == 0:
                text = str(int(kk // per_number))
                gap = long_tick + 1.0 + height / 2
                if axis == 0:
                    strokes += _text_strokes(text, (ps, edge + out * gap), height)
                else:
                    strokes += _text_strokes(
                        text, (edge + out * (gap + 0.4 * height * len(text)), ps), height
                    )
    if ta:
        _draw_lines(
            img, cam, z, np.array(ta), np.array(tb), p.minor_width_mm, p.line_colour, base, p.major_alpha
        )
    if strokes:
        scale = float(cam.px_per_mm(_lift(np.array([(gx0 + gx1) / 2, (gy0 + gy1) / 2]), z))[0])
        cover = min(max(0.4 * scale, 0.3), 1.0) / 1.25
        px = [cam.project(_lift(s, z)) for s in strokes]
        _polylines(img, px, _mix(base, p.line_colour, p.major_alpha * cover))


def _draw_tiles(img: np.ndarray, scene: Scene, rng: np.random.Generator) -> None:
    p = scene.pattern
    assert isinstance(p, TilePattern)
    cam = scene.camera
    view = _view_box(cam, 0.0)
    img[...] = np.asarray(_col(p.grout_colour), dtype=np.uint8)
    ix = np.arange(
        math.floor((view[0] - p.origin[0]) / p.tile_mm), math.ceil((view[2] - p.origin[0]) / p.tile_mm)
    )
    iy = np.arange(
        math.floor((view[1] - p.origin[1]) / p.tile_mm), math.ceil((view[3] - p.origin[1]) / p.tile_mm)
    )
    g = p.grout_mm / 2
    for i in ix:
        for j in iy:
            x0, y0 = p.origin[0] + i * p.tile_mm, p.origin[1] + j * p.tile_mm
            quad = _rounded_rect((x0 + g, y0 + g, x0 + p.tile_mm - g, y0 + p.tile_mm - g), 1.0)
            tone = 1 + p.variation * float(rng.standard_normal())
            _fill(img, _project_polygon(cam, _lift(quad, 0.0)), _scale(p.colour, tone))
    if p.gloss > 0 and scene.light.kind == "point":
        c, lp = cam.C, np.asarray(scene.light.position)
        mirror = c[:2] + (lp[:2] - c[:2]) * c[2] / (c[2] + lp[2])
        px = cam.project(_lift(mirror, 0.0))[0]
        _glow(img, px, rng.uniform(40, 110), (255.0, 255.0, 255.0), p.gloss)


def _draw_gingham(img: np.ndarray, scene: Scene) -> None:
    """Crossing translucent stripes: white, mixed where one stripe lies, full colour where two cross."""
    p = scene.pattern
    assert isinstance(p, GinghamPattern)
    cam = scene.camera
    view = _view_box(cam, 0.0)
    c = p.check_mm
    masks = []
    for axis in (0, 1):
        mask = np.zeros((IMAGE_H, IMAGE_W), np.uint8)
        a, b, _ = _grid_family(view, p.origin[axis], 2 * c, axis)
        off = np.array([c, 0.0]) if axis == 0 else np.array([0.0, c])
        for i in range(len(a)):
            quad = np.array([a[i], b[i], b[i] + off, a[i] + off])
            q = _project_polygon(cam, _lift(quad, 0.0))
            if len(q) >= 3:
                cv2.fillConvexPoly(mask, _fx(q), 255, cv2.LINE_AA, SHIFT)
        masks.append(mask)
    t = (masks[0].astype(np.float32) + masks[1]) * np.float32(1 / 510)
    white = np.asarray(scene.surface.colour, dtype=np.float32)
    gain = np.asarray(p.colour, dtype=np.float32) / np.maximum(white, 1) - 1
    img[...] = np.clip(img * (1 + t[..., None] * gain) + 0.5, 0, 255).astype(np.uint8)


def _draw_plank_seams(img: np.ndarray, scene: Scene, rng: np.random.Generator) -> None:
    p = scene.pattern
    assert isinstance(p, PlankPattern)
    cam = scene.camera
    view = _view_box(cam, 0.0)
    a, b, _ = _grid_family(view, p.origin, p.plank_mm, 1)
    _draw_lines(img, cam, 0.0, a, b, p.seam_mm, p.seam_colour, scene.surface.colour, 1.0)
    # butt joints: a few short seams across the planks
    k = np.arange(math.floor((view[1] - p.origin) / p.plank_mm), math.ceil((view[3] - p.origin) / p.plank_mm))
    x = rng.uniform(view[0], view[2], len(k))
    keep = rng.random(len(k)) < 0.5
    y0 = p.origin + k * p.plank_mm
    ja = np.column_stack([x, y0])[keep]
    jb = np.column_stack([x, y0 + p.plank_mm])[keep]
    _draw_lines(img, cam, 0.0, ja, jb, p.seam_mm * 0.8, p.seam_colour, scene.surface.colour, 1.0)


# =========================================================================================================
# Rendering: objects
# =========================================================================================================
def _beside_texture(rng: np.random.Generator, o: BesideObject) -> np.ndarray:
    """Top of the object beside the board; canvas x along its u axis, rows from +w down to -w."""
    if o.kind in ("perfboard", "breadboard"):
        q = 8  # canvas pixels per hole pitch
        ppm = q / o.cell_mm
        h, w = max(int(2 * o.half[1] * ppm), q), max(int(2 * o.half[0] * ppm), q)
        body = np.asarray(_col(o.colours[0]), dtype=np.uint8)
        tex = np.empty((h, w, 3), np.uint8)
        tex[...] = body
        if o.kind == "perfboard":
            cell = np.empty((q, q, 3), np.uint8)
            cell[...] = body
            centre = (int(3.5 * FIX), int(3.5 * FIX))
            cv2.circle(cell, centre, int(2.6 * FIX), _col(o.colours[1]), -1, cv2.LINE_AA, SHIFT)
            cv2.circle(cell, centre, int(1.5 * FIX), _col(o.colours[2]), -1, cv2.LINE_AA, SHIFT)
            b = int(o.border_mm * ppm)
            inner = np.tile(cell, ((h - 2 * b) // q + 1, (w - 2 * b) // q + 1, 1))
            tex[b : h - b, b : w - b] = inner[: h - 2 * b, : w - 2 * b]
        else:
            hole = np.asarray(_col(o.colours[1]), dtype=np.uint8)
            n_cols = w // q
            rows = [1, 2, *range(5, 10), *range(12, 17), 19, 20]
            cols = np.array([c for c in range(1, n_cols - 1)])
            for r in rows:
                y = r * q + 3
                if y + 2 >= h:
                    continue
                cs = cols if r in range(5, 17) else cols[(cols % 6) != 0]
                for dx in (0, 1):
                    for dy in (0, 1):
                        tex[y + dy, cs * q + 3 + dx] = hole
            ch = int(10.75 * q)
            tex[max(ch - 2, 0) : ch + 2] = (tex[max(ch - 2, 0) : ch + 2] * 0.8).astype(np.uint8)
            for y, colour in (
                (int(0.4 * q), o.colours[2]),
                (int(3.4 * q), o.colours[3]),
                (int(18.4 * q), o.colours[2]),
                (int(21.4 * q), o.colours[3]),
            ):
                if y < h:
                    cv2.line(tex, (q, y), (w - q, y), _col(colour), 1, cv2.LINE_AA)
        return tex
    # chessboard
    span = 2 * o.half[0]
    ppm = min(2.0, math.sqrt(MAX_CANVAS_PX / span**2))
    sq = max(round(o.cell_mm * ppm), 4)
    bpx = max(round(o.border_mm * ppm), 1)
    checker = (np.arange(8)[:, None] + np.arange(8)[None, :]) % 2
    board = np.kron(checker, np.ones((sq, sq), dtype=np.int64))
    size = 8 * sq + 2 * bpx
    idx = np.full((size, size), 2, dtype=np.int64)
    idx[bpx : bpx + 8 * sq, bpx : bpx + 8 * sq] = board
    palette = np.array([_col(o.colours[0]), _col(o.colours[1]), _col(o.colours[2])], dtype=np.float32)
    tex = palette[idx]
    tex *= (1 + 0.04 * _upsampled_noise(rng, (size // 8 + 2, size // 40 + 2), (size, size)))[..., None]
    return np.clip(tex, 0, 255).astype(np.uint8)


def _draw_box(
    img: np.ndarray,
    cam: Camera,
    light: Light,
    centre: tuple[float, float],
    angle: float,
    rect: Rect,
    z0: float,
    thickness: float,
    side: BGR,
    top_colour: BGR | None,
    tex: np.ndarray | None = None,
    corner: float = 0.0,
    alpha: float = 1.0,
) -> np.ndarray:
    """A flat box (plate, breadboard...): visible sides, then its top (a colour or a texture over `rect`).

    Returns the top's outline in pixels."""
    outline = _rounded_rect(rect, corner)
    world = _board_to_world(outline, centre, angle)
    top = _project_polygon(cam, _lift(world, z0 + thickness))
    if thickness >= 0.3:
        bottom = _project_polygon(cam, _lift(world, z0))
        if len(bottom) and len(top):
            hull = _hull(np.vstack([bottom, top]))
            _fill_shaded(img, hull, side, _light_dir_px(cam, light, _lift(np.array(centre), z0)), 0.3)
    if tex is not None:
        x0, y0, x1, y1 = rect
        th, tw = tex.shape[:2]
        a = np.array([[(x1 - x0) / tw, 0.0, x0], [0.0, -(y1 - y0) / th, y1], [0.0, 0.0, 1.0]])
        r = np.eye(3)
        r[:2, :2] = _rot2(angle)
        r[:2, 2] = centre
        _warp_into(img, tex, cam.homography(z0 + thickness) @ r @ a, top, alpha)
    elif top_colour is not None:
        if alpha >= 1:
            _fill(img, top, top_colour)
        else:
            _fill_alpha(img, top, top_colour, alpha)
    return top


def _disc_points(x: float, y: float, radius: float) -> np.ndarray:
    return _circle(radius) + np.array([x, y])


def _draw_disc(
    img: np.ndarray,
    cam: Camera,
    light: Light,
    x: float,
    y: float,
    z0: float,
    radius: float,
    height: float,
    top: BGR,
    side: BGR,
    rim: BGR,
    rim_frac: float,
) -> None:
    """A short cylinder: its visible side (convex hull of both rims), a darker rim, the top face."""
    circle = _disc_points(x, y, radius)
    bottom_px = cam.project(_lift(circle, z0))
    top_px = cam.project(_lift(circle, z0 + height))
    towards = _light_dir_px(cam, light, np.array([x, y, z0]))
    _fill_shaded(img, _hull(np.vstack([bottom_px, top_px])), side, towards, 0.3)
    _fill(img, top_px, rim)
    inner = cam.project(_lift(_disc_points(x, y, radius * (1 - rim_frac)), z0 + height))
    _fill_shaded(img, inner, top, towards, 0.07)


def _draw_piece(img: np.ndarray, scene: Scene, p: Piece) -> None:
    ps, cam, light = scene.piece_set, scene.camera, scene.light
    base = ps.black if p.colour == "X" else ps.white
    side = _scale(base, ps.side_shade) if p.colour == "O" else _mix(base, (90.0, 90.0, 90.0), 0.25)
    _draw_disc(
        img,
        cam,
        light,
        p.x,
        p.y,
        p.z,
        ps.radius_mm,
        ps.height_mm,
        base,
        side,
        _scale(base, ps.rim_dark),
        ps.rim_frac,
    )
    if not ps.glossy:
        return
    top = np.array([p.x, p.y, p.z + ps.height_mm])
    h = _light_dir(light, top)[0] + (cam.C - top) / np.linalg.norm(cam.C - top)
    h /= np.linalg.norm(h)
    offset = ps.dome_mm * h[:2]
    if np.linalg.norm(offset) > 0.8 * ps.radius_mm:
        return
    spot = cam.project(_lift(top[:2] + offset, top[2]))[0]
    scale = float(cam.px_per_mm(top.reshape(1, 3))[0])
    size = ps.radius_mm * (0.22 if light.kind == "area" else 0.1) * scale
    strength = 0.85 if p.colour == "X" else 0.7
    _glow(
        img, spot, size, (250.0, 250.0, 252.0), strength, 1.4 if light.kind == "area" else 1.0, light.azimuth
    )


def _draw_piece_shadow(shadows: _Shadows, contact: _Shadows, scene: Scene, p: Piece, darkness: float) -> None:
    ps, cam = scene.piece_set, scene.camera
    base = _disc_points(p.x, p.y, ps.radius_mm)
    shift = _shadow_shift(scene.light, np.array([[p.x, p.y, p.z]]), ps.height_mm)[0]
    hull = _hull(np.vstack([cam.project(_lift(base, p.z)), cam.project(_lift(base + shift, p.z))]))
    shadows.add(hull, darkness)
    contact.add(cam.project(_lift(_disc_points(p.x, p.y, ps.radius_mm * 1.04), p.z)), 0.45)


def _box_shadow(
    shadows: _Shadows,
    contact: _Shadows,
    scene: Scene,
    world: np.ndarray,
    z0: float,
    height: float,
    darkness: float,
) -> None:
    cam = scene.camera
    shift = _shadow_shift(scene.light, _lift(world.mean(axis=0), z0), height)[0]
    bottom = _project_polygon(cam, _lift(world, z0))
    moved = _project_polygon(cam, _lift(world + shift, z0))
    if len(bottom) and len(moved):
        shadows.add(_hull(np.vstack([bottom, moved])), darkness)
    if height > 0.5:
        c = world.mean(axis=0)
        grown = c + (world - c) * (1 + 1.0 / max(float(np.linalg.norm(world - c, axis=1).min()), 1.0))
        contact.add(_project_polygon(cam, _lift(grown, z0)), 0.4)


def _board_line_polys(rng: np.random.Generator, plate: Plate) -> list[np.ndarray]:
    """The 4 + 4 lines as polygons in board coordinates: printed and engraved exact, marker wavy, tape
    slightly askew."""
    s, lw = plate.square_mm, plate.line_width_mm
    e = 1.5 * s + lw / 2
    polys = []
    for axis in (0, 1):
        for pos in (-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s):
            if plate.line_style == "marker":
                start, end = -e - rng.uniform(-0.02, 0.05) * s, e + rng.uniform(-0.02, 0.05) * s
                t = np.linspace(start, end, 14)
                amp = rng.uniform(0.04, 0.12) * lw + rng.uniform(0.1, 0.4)
                wave = amp * np.sin(2 * math.pi * t / rng.uniform(30, 90) + rng.uniform(0, 6))
                wave += amp * 0.6 * np.sin(2 * math.pi * t / rng.uniform(8, 20) + rng.uniform(0, 6))
                wave += math.tan(math.radians(rng.uniform(-0.8, 0.8))) * t
                half = lw / 2 * (1 + 0.12 * np.sin(2 * math.pi * t / rng.uniform(20, 60) + rng.uniform(0, 6)))
                left = np.column_stack([pos + wave + half, t])
                right = np.column_stack([pos + wave - half, t])[::-1]
                poly = np.vstack([left, right])
            else:
                start, end = -e, e
                skew, shift = 0.0, 0.0
                if plate.line_style == "tape":
                    start, end = -e - rng.uniform(-0.5, 3), e + rng.uniform(-0.5, 3)
                    skew, shift = math.tan(math.radians(rng.uniform(-0.5, 0.5))), rng.uniform(-0.3, 0.3)
                poly = np.array(
                    [
                        [pos + shift - lw / 2 + skew * start, start],
                        [pos + shift + lw / 2 + skew * start, start],
                        [pos + shift + lw / 2 + skew * end, end],
                        [pos + shift - lw / 2 + skew * end, end],
                    ]
                )
            polys.append(poly if axis == 0 else poly[:, ::-1])
    return polys


def _draw_plate(img: np.ndarray, scene: Scene, rng: np.random.Generator) -> None:
    plate, cam, light = scene.plate, scene.camera, scene.light
    top_z = scene.top_z
    tex = None
    if plate.wood:
        x0, y0, x1, y1 = plate.rect
        ppm = min(float(cam.px_per_mm(_lift(np.array(scene.board_centre), top_z))[0]) * 1.2, 3.0)
        shape = (max(int((y1 - y0) * ppm), 8), max(int((x1 - x0) * ppm), 8))
        tex = _wood_texture(rng, shape, ppm, plate.colour, rng.uniform(2.5, 7.0), rng.uniform(0.06, 0.16))
    outline = _draw_box(
        img, cam, light, scene.board_centre, scene.board_angle, plate.rect, scene.floor_z, plate.thickness_mm,
        plate.side_colour, plate.colour, tex, plate.corner_mm, plate.opacity,
    )  # fmt: skip
    if plate.thickness_mm > 0 and len(outline):  # a faint bevel catching the light
        _polylines(img, [np.vstack([outline, outline[:1]])], _mix(plate.colour, (255.0, 255.0, 255.0), 0.18))
    h = cam.homography(top_z)
    r = np.eye(3)
    r[:2, :2] = _rot2(scene.board_angle)
    r[:2, 2] = scene.board_centre
    to_px = h @ r
    polys = [_apply_h(to_px, p) for p in _board_line_polys(rng, plate)]
    style, colour = plate.line_style, plate.line_colour
    if style == "engraved":
        allpts = np.vstack(polys)
        roi = _roi(allpts, 4)
        if roi is None:
            return
        x0, y0, x1, y1 = roi
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        for p in polys:
            cv2.fillPoly(mask, [_fx(p - (x0, y0))], 255, cv2.LINE_AA, SHIFT)
        mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(0.5, 1.0))
        d = _light_dir_px(cam, light, _lift(np.array(scene.board_centre), top_z))
        shifted = np.roll(mask, (round(d[1]), round(d[0])), axis=(0, 1))
        _blend(img, x0, y0, shifted, _mix(plate.colour, (255.0, 255.0, 255.0), 0.35), 0.35)
        _blend(img, x0, y0, mask, colour)
    elif style == "tape":
        for p in polys:
            d = p[2] - p[1]
            _fill_shaded(img, p, colour, d / max(float(np.linalg.norm(d)), 1e-9), rng.uniform(0.03, 0.1))
    elif style == "marker":
        ink = _mix(plate.colour, colour, rng.uniform(0.85, 0.97))
        for p in polys:
            _fill(img, p, ink)
    else:
        for p in polys:
            _fill(img, p, colour)


def _hand_parts(o: Occluder) -> list[tuple[str, np.ndarray, float]]:
    """The hand as world geometry in drawing order: ("skin"|"sleeve", polyline (N, 3), width mm),
    ("palm", polygon (N, 3), 0) and ("nail", [tip, towards], width mm)."""
    k = o.size_mm
    side = 1.0 if o.variant > 0 else -1.0
    reach = abs(o.variant) == 2
    d = np.array([math.cos(o.angle), math.sin(o.angle)])
    n = np.array([-d[1], d[0]]) * side
    tip = np.array(o.anchor[:2])
    zt = o.anchor[2]
    zk = zt + 30 * k
    knuckle = tip - d * 72 * k
    parts: list[tuple[str, np.ndarray, float]] = []

    def pt(xy: np.ndarray, z: float) -> np.ndarray:
        return np.array([xy[0], xy[1], z])

    palm_c = knuckle + n * 27 * k - d * 42 * k
    wrist = palm_c - d * 50 * k
    parts.append(
        ("skin", np.array([pt(wrist + d * 20 * k, zk + 15), pt(wrist - d * 150 * k, zk + 60)]), 58 * k)
    )
    parts.append(
        ("sleeve", np.array([pt(wrist - d * 110 * k, zk + 50), pt(wrist - d * 450 * k, zk + 140)]), 92 * k)
    )
    thumb_base = palm_c - n * 30 * k - d * 5 * k
    blobs = (
        (knuckle - d * 4 * k, 10.0),
        (knuckle + n * 53 * k - d * 12 * k, 8.0),
        (wrist + n * 22 * k, 8.0),
        (wrist - n * 22 * k, 8.0),
        (thumb_base, 15.0),
    )
    palm = _hull(np.vstack([_circle(r * k, 12) + c for c, r in blobs]))
    parts.append(("palm", _lift(palm, zk + 8), 0.0))
    t_dir = _rot2(-side * math.radians(50)) @ d
    parts.append(
        ("skin", np.array([pt(thumb_base, zk + 4), pt(thumb_base + t_dir * 48 * k, zk - 6)]), 21 * k)
    )
    fingers = (
        (0.0, 72.0, 17.5, 0.0),
        (19.0, 78.0, 17.5, 4.0),
        (37.0, 72.0, 16.5, -1.0),
        (53.0, 58.0, 14.5, -8.0),
    )
    for j, (offset, length, width, forward) in enumerate(fingers):
        base = knuckle + n * offset * k + d * forward * k
        if j == 0 or reach:
            f_dir = _rot2(side * math.radians(4.0 * j)) @ d
            end = base + f_dir * length * k
            z_end = zt + (0 if j == 0 else 3 + 2 * j)
            mid = base + f_dir * length * k * 0.55
            parts.append(("skin", np.array([pt(base, zk), pt(mid, zk - 4)]), width * k))
            parts.append(("skin", np.array([pt(mid, zk - 4), pt(end, z_end)]), width * k * 0.86))
            parts.append(
                ("nail", np.array([pt(end - f_dir * 6 * k, z_end + 2), pt(end, z_end + 2)]), width * k * 0.55)
            )
        else:
            end = base + d * 22 * k
            parts.append(("skin", np.array([pt(base, zk), pt(end, zk - 14)]), width * k * 1.05))
    return parts


def _draw_capsule(
    img: np.ndarray,
    cam: Camera,
    pts3: np.ndarray,
    width_mm: float,
    colour: BGR,
    towards: np.ndarray,
    gloss: float = 0.12,
) -> None:
    """A rounded rod (finger, pen, forearm) shaded across its width."""
    px = cam.project(pts3)
    width = width_mm * float(np.mean(cam.px_per_mm(pts3)))
    _polylines(img, [px], _scale(colour, 0.72), max(round(width), 1))
    _polylines(img, [px + towards * width * 0.08], colour, max(round(width * 0.7), 1))
    _polylines(
        img,
        [px + towards * width * 0.2],
        _mix(colour, (255.0, 255.0, 255.0), gloss),
        max(round(width * 0.25), 1),
    )


def _draw_hand(img: np.ndarray, scene: Scene, o: Occluder) -> None:
    cam = scene.camera
    towards = _light_dir_px(cam, scene.light, np.asarray(o.anchor))
    for kind, pts, width in _hand_parts(o):
        if kind == "palm":
            _fill_shaded(img, cam.project(pts), o.colour, towards, 0.15)
        elif kind == "nail":
            a, b = cam.project(pts)
            _polylines(
                img,
                [np.array([a, b])],
                _mix(o.colour, (230.0, 225.0, 250.0), 0.45),
                max(round(width * float(cam.px_per_mm(pts)[0])), 1),
            )
        elif kind == "sleeve":
            _draw_capsule(img, cam, pts, width, o.colour2, towards, 0.05)
        else:
            _draw_capsule(img, cam, pts, width, o.colour, towards)


def _pen_parts(o: Occluder) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    d = np.array([math.cos(o.angle), math.sin(o.angle)])
    c = np.array(o.anchor[:2])
    a, b = c - d * o.size_mm / 2, c + d * o.size_mm / 2
    return a, b, d


def _draw_pen(img: np.ndarray, scene: Scene, o: Occluder) -> None:
    cam = scene.camera
    z = o.anchor[2]
    a, b, d = _pen_parts(o)
    towards = _light_dir_px(cam, scene.light, np.asarray(o.anchor))
    n = np.array([-d[1], d[0]])
    r = o.width_mm / 2
    cone = np.array(
        [b + n * r * 0.9, b + d * 16 + n * 0.7, b + d * 17.5, b + d * 16 - n * 0.7, b - n * r * 0.9]
    )
    _fill_shaded(img, cam.project(_lift(cone, z)), o.colour2, towards, 0.3)
    _draw_capsule(img, cam, np.array([[*a, z], [*b, z]]), o.width_mm, o.colour, towards, 0.35)
    _draw_capsule(
        img,
        cam,
        np.array([[*(a + d * 6), z + r * 0.6], [*(a + d * 45), z + r * 0.6]]),
        2.6,
        o.colour2,
        towards,
        0.5,
    )


def _draw_coin(img: np.ndarray, scene: Scene, o: Occluder, rng: np.random.Generator) -> None:
    cam, light = scene.camera, scene.light
    x, y, z = o.anchor
    _draw_disc(
        img,
        cam,
        light,
        x,
        y,
        z,
        o.size_mm,
        o.width_mm,
        _scale(o.colour, 0.92),
        _scale(o.colour, 0.7),
        _mix(o.colour, (255.0, 255.0, 255.0), 0.2),
        0.12,
    )
    top = z + o.width_mm
    relief = _disc_points(x, y, o.size_mm * 0.45) + rng.uniform(-0.2, 0.2, (CIRCLE_POINTS, 2)) * o.size_mm
    _fill_alpha(img, cam.project(_lift(relief, top)), _scale(o.colour, 0.75), 0.5)
    spot = np.array([x, y]) + np.array([math.cos(light.azimuth), math.sin(light.azimuth)]) * o.size_mm * 0.35
    scale = float(cam.px_per_mm(np.array([[x, y, top]]))[0])
    _glow(img, cam.project(_lift(spot, top))[0], o.size_mm * 0.35 * scale, (250.0, 250.0, 250.0), 0.55)


def _occluder_shadow(shadows: _Shadows, scene: Scene, o: Occluder) -> float:
    """Draw the occluder's shadow on the plate's top; returns the blur (pixels) it needs."""
    cam, light, top = scene.camera, scene.light, scene.top_z
    scale = float(cam.px_per_mm(_lift(np.array(scene.board_centre), top))[0])
    if o.kind == "coin":
        base = _disc_points(o.anchor[0], o.anchor[1], o.size_mm)
        shift = _shadow_shift(light, np.array([o.anchor]), o.width_mm)[0]
        z = o.anchor[2]
        shadows.add(
            _hull(np.vstack([cam.project(_lift(base, z)), cam.project(_lift(base + shift, z))])), light.shadow
        )
        return 1.0
    if o.kind == "pen":
        a, b, _ = _pen_parts(o)
        h = o.anchor[2] - top
        shift = _shadow_shift(light, np.array([o.anchor]), h)[0]
        shadows.add_line(
            cam.project(_lift(np.array([a + shift, b + shift]), top)), o.width_mm * scale * 0.9, light.shadow
        )
        return 1.0 + h * math.tan(light.penumbra) * scale
    heights = []
    for kind, pts, width in _hand_parts(o):
        if kind == "nail":
            continue
        shift = _shadow_shift(light, pts, 1.0) * (pts[:, 2:3] - top)
        px = cam.project(_lift(pts[:, :2] + shift, top))
        heights.append(float(np.mean(pts[:, 2] - top)))
        if kind == "palm":
            shadows.add(px, light.shadow * 0.9)
        else:
            shadows.add_line(px, width * scale, light.shadow * 0.9)
    return 2.0 + min(heights) * math.tan(light.penumbra) * scale * 1.5


# =========================================================================================================
# Rendering: the frame
# =========================================================================================================
def _render(scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """Draw the scene's albedo with shadows, then light, optics, sensor and JPEG."""
    img = np.empty((IMAGE_H, IMAGE_W, 3), np.uint8)
    cam, light, plate = scene.camera, scene.light, scene.plate
    _draw_surface(img, scene, rng)
    if isinstance(scene.pattern, SheetGrid):
        _draw_sheet(img, scene, rng)
    elif isinstance(scene.pattern, TilePattern):
        _draw_tiles(img, scene, rng)
    elif isinstance(scene.pattern, GinghamPattern):
        _draw_gingham(img, scene)
    elif isinstance(scene.pattern, PlankPattern):
        _draw_plank_seams(img, scene, rng)
    scale = float(cam.px_per_mm(_lift(np.array(scene.board_centre), scene.top_z))[0])

    # shadows on the floor (table or mat): plate, object beside, spare pieces
    floor, contact = _Shadows(), _Shadows()
    if plate.thickness_mm > 0:
        _box_shadow(
            floor,
            contact,
            scene,
            _plate_world(plate, scene.board_centre, scene.board_angle),
            scene.floor_z,
            plate.thickness_mm,
            light.shadow,
        )
    o = scene.beside
    if o is not None:
        corners = np.array(
            [
                [-o.half[0], -o.half[1]],
                [o.half[0], -o.half[1]],
                [o.half[0], o.half[1]],
                [-o.half[0], o.half[1]],
            ]
        )
        _box_shadow(
            floor,
            contact,
            scene,
            _board_to_world(corners, o.centre, o.angle),
            scene.floor_z,
            o.thickness_mm,
            light.shadow,
        )
    for p in scene.spares:
        _draw_piece_shadow(floor, contact, scene, p, light.shadow)
    floor.apply(img, 1.0 + plate.thickness_mm * math.tan(light.penumbra) * scale)
    contact.apply(img, 1.2)

    if o is not None:
        _draw_box(
            img,
            cam,
            light,
            o.centre,
            o.angle,
            (-o.half[0], -o.half[1], o.half[0], o.half[1]),
            scene.floor_z,
            o.thickness_mm,
            _scale(o.colours[0], 0.6),
            None,
            _beside_texture(rng, o),
        )
    for p in scene.spares:
        _draw_piece(img, scene, p)
    _draw_plate(img, scene, rng)

    # shadows on the plate: pieces, coin, pen, hand
    on_plate, contact = _Shadows(), _Shadows()
    for p in scene.pieces:
        _draw_piece_shadow(on_plate, contact, scene, p, light.shadow)
    on_plate.apply(img, 1.0 + scene.piece_set.height_mm * math.tan(light.penumbra) * scale)
    contact.apply(img, 1.0)
    occ = scene.occluder
    if occ is not None and occ.kind == "coin":
        coin_shadow = _Shadows()
        _occluder_shadow(coin_shadow, scene, occ)
        coin_shadow.apply(img, 1.0)
    for p in scene.pieces:
        _draw_piece(img, scene, p)
    if occ is not None:
        if occ.kind == "coin":
            _draw_coin(img, scene, occ, rng)
        else:
            shadow = _Shadows()
            sigma = _occluder_shadow(shadow, scene, occ)
            shadow.apply(img, sigma)
            (_draw_pen if occ.kind == "pen" else _draw_hand)(img, scene, occ)
    return _finish(img, scene, rng)


def _gain_map(scene: Scene) -> np.ndarray:
    """(H, W, 3) float32 illumination x vignetting x white balance (exposure comes later)."""
    cam, light, opt = scene.camera, scene.light, scene.optics
    gh, gw = 24, 32
    xs = (np.arange(gw) + 0.5) * IMAGE_W / gw - 0.5
    ys = (np.arange(gh) + 0.5) * IMAGE_H / gh - 0.5
    px = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2)
    world = cam.back_project(px, scene.top_z)
    centre = np.asarray(scene.board_centre)
    if light.kind == "point":
        e = _irradiance(np.asarray(light.position), _lift(world, scene.top_z))
        e0 = _irradiance(np.asarray(light.position), _lift(centre, scene.top_z))[0]
        plate_e = _irradiance(
            np.asarray(light.position),
            _lift(_plate_world(scene.plate, scene.board_centre, scene.board_angle), scene.top_z),
        )
        raw = float(plate_e.max() / plate_e.min())
        gamma = math.log(light.ratio) / math.log(raw) if raw > 1.0001 else 1.0
        e = (np.maximum(e, 1e-12) / e0) ** gamma
    else:
        d = np.array([math.cos(light.azimuth), math.sin(light.azimuth)])
        corners = _plate_world(scene.plate, scene.board_centre, scene.board_angle)
        proj = (corners - centre) @ d
        span = max(float(proj.max() - proj.min()), 1.0)
        e = np.exp(math.log(light.ratio) * ((world - centre) @ d) / span)
    e = np.clip(e, 0.35, 2.5)
    r2 = (((px - cam.K[:2, 2]) / (IMAGE_W / 2)) ** 2).sum(axis=1) / (1 + (IMAGE_H / IMAGE_W) ** 2)
    g = (e * (1 - opt.vignette * r2)).reshape(gh, gw, 1) * np.asarray(opt.wb)
    return cv2.resize(g.astype(np.float32), (IMAGE_W, IMAGE_H), interpolation=cv2.INTER_LINEAR)


def _motion_kernel(length: float, angle: float) -> np.ndarray:
    size = 2 * math.ceil(length / 2) + 3
    k = np.zeros((size, size), np.float32)
    c = (size - 1) / 2
    for t in np.linspace(-length / 2, length / 2, 17):
        x, y = c + t * math.cos(angle), c + t * math.sin(angle)
        x0, y0 = math.floor(x), math.floor(y)
        fx, fy = x - x0, y - y0
        k[y0, x0] += (1 - fx) * (1 - fy)
        k[y0, x0 + 1] += fx * (1 - fy)
        k[y0 + 1, x0] += (1 - fx) * fy
        k[y0 + 1, x0 + 1] += fx * fy
    return k / k.sum()


def _finish(img: np.ndarray, scene: Scene, rng: np.random.Generator) -> np.ndarray:
    opt = scene.optics
    f = img.astype(np.float32)
    f *= _gain_map(scene)
    # auto-exposure pulls the frame's mean part of the way to mid-grey; then the frame's own deviation
    mean = max(float(f[::8, ::8].mean()), 1.0)
    f *= np.float32(opt.exposure * (AE_TARGET / mean) ** AE_STRENGTH)
    if opt.motion_px > 0:
        f = cv2.filter2D(
            f, -1, _motion_kernel(opt.motion_px, opt.motion_angle), borderType=cv2.BORDER_REFLECT
        )
    f = cv2.GaussianBlur(f, (0, 0), opt.defocus_px)
    a = rng.integers(0, 256, size=f.shape, dtype=np.uint8)
    b = rng.integers(0, 256, size=f.shape, dtype=np.uint8)
    noise = (a.astype(np.float32) + b - np.float32(255)) * np.float32(1 / 104.5)  # unit variance, triangular
    sigma = np.sqrt(np.float32(opt.read_noise**2) + np.float32(opt.shot_noise) * np.clip(f, 0, 255))
    f += noise * sigma
    out = np.clip(f + 0.5, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, opt.jpeg_quality])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)
