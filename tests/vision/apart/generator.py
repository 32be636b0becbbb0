"""Synthetic USB-camera frames of a tic-tac-toe board, for tuning the vision code.

Written from the requirements alone (see README.md beside this file): nothing here reads or imports the
detector or the other frame generators.

Contract
--------
``make_frame(index, seed)`` returns a :class:`Sample` whose pixels and truth depend only on
``(seed, index)`` (every random choice comes from ``np.random.SeedSequence([seed, index])``):

* ``image``: 480x640x3 uint8 BGR, after a JPEG encode/decode;
* ``board``: 9 characters, row by row in the board's own frame ("X" black piece, "O" white, "." empty);
* ``centre_px``: the image position of the centre square's centre, on the plate's top surface;
* ``angle_deg``: rotation of the board's own x axis in the image, counter-clockwise as seen (image y
  down), folded into (-45, 45]; the plate is square, so the quarter turns folded away are re-labelled into
  ``board``;
* ``pitch_px``: mean image distance from the centre square's centre to its four neighbours' centres;
* ``occluded``: a hand, a pen or a coin lies over the grid (the occluder is never part of ``board``);
* ``tags``: names of the conditions drawn (:data:`TAGS` lists them all).

How it renders
--------------
The world is in millimetres: the table top is the plane z = 0 (x right, y down as a straight-down camera
sees it, z into the table) and a pinhole camera hangs above it, tilted up to 20 degrees. Everything on the
table (cloth or wood, papers, tape, the plate, lines, shadows, pieces) is painted into one top-down
*canvas* of the table plane, which a single perspective warp turns into the camera image. Things above
the table are painted where the camera's ray through them meets the table: seen from the camera centre a
point at height h over (x, y) lands on the table at (x, y) * H / (H - h), a homothety about the camera's
foot, so raised discs and their sides come out exactly as a pinhole camera sees them, parallax included.
The hand and the pen, which stand well above the plate, are drawn in image space after the warp. Light
fields, white balance, blur, noise and JPEG follow in image space.

Everything random is drawn by :func:`sample_scene` into a :class:`Scene`; :func:`render` is a pure
function of the scene, so tests can switch single conditions off with ``dataclasses.replace``.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

# --- the frame -------------------------------------------------------------------------------------------

IMAGE_W = 640
IMAGE_H = 480

#: image pitch at the board centre, the range the truth keeps to
PITCH_RANGE_PX = (35.0, 90.0)
#: the pitch aimed at stays this far inside PITCH_RANGE_PX: after the correction step a little perspective
#: is left in the measured pitch, and the slack keeps the truth inside the range
PITCH_AIM_SLACK_PX = 1.0
PITCH_SMALL_PX = 45.0
PITCH_LARGE_PX = 75.0
#: the whole plate (top and foot) stays this far inside the image
FIT_MARGIN_PX = 4.0
FIT_TRIES = 80

OCCLUDED_RATE = 0.10
OCCLUDER_KINDS = ("hand", "pen", "coin")

# --- camera ----------------------------------------------------------------------------------------------

#: 48-67 degrees of horizontal field at 640 px, what USB webcams have
FOCAL_PX_RANGE = (480.0, 720.0)
PRINCIPAL_JITTER_PX = 8.0
MAX_TILT_DEG = 20.0
PERSPECTIVE_TAG_TILT_DEG = 10.0
#: camera 30-60 cm above the table; the board's millimetre pitch then follows from the image pitch, kept
#: inside PITCH_MM_RANGE by moving the camera within CAMERA_HEIGHT_LIMITS_MM when both cannot hold
CAMERA_HEIGHT_MM = (300.0, 600.0)
CAMERA_HEIGHT_LIMITS_MM = (220.0, 700.0)
PITCH_MM_RANGE = (22.0, 75.0)

# --- board -----------------------------------------------------------------------------------------------

PLATE_KINDS = ("white", "light-grey", "mid-grey", "wood", "dark", "pastel", "contest", "saturated")
PLATE_KIND_WEIGHTS = (0.18, 0.10, 0.08, 0.17, 0.12, 0.13, 0.13, 0.09)
#: "light" plates keep every channel in this band
LIGHT_PLATE_CHANNELS = (150.0, 250.0)
#: share of plates whose outer frame lines sit at the plate's edge (no margin of plate beyond them)
FRAME_AT_EDGE_RATE = 0.25
PLATE_MARGIN_FRAC = (0.12, 0.7)
PLATE_THICKNESS_FRAC = (0.04, 0.2)
LINE_WIDTH_FRAC = (0.02, 0.12)
THIN_LINE_FRAC = 0.04
THICK_LINE_FRAC = 0.08
ENGRAVED_RATE = 0.3

PIECE_RADIUS_FRAC = (0.20, 0.45)
LARGE_PIECE_FRAC = 0.38
PIECE_OFFSET_FRAC = 0.06
#: piece thickness as a fraction of its radius (a 30 mm disc is 2-5 mm thick)
PIECE_THICKNESS_OF_RADIUS = (0.15, 0.3)
BLACK_GREY = (15.0, 55.0)
WHITE_GREY = (205.0, 245.0)
WHITE_NEAR_PLATE_LEVELS = 20.0
WHITE_NEAR_PLATE_RATE = 0.35
GLOSSY_RATE = 0.5
#: in a glossy scene about this share of the pieces catch the light
HIGHLIGHT_RATE = 0.5
#: the top of a disc brightens a little towards its middle (a slight dome)
DOME = 0.04

# --- scene -----------------------------------------------------------------------------------------------

TABLE_KINDS = ("wood", "cloth", "laminate", "paper")
TABLE_KIND_WEIGHTS = (0.3, 0.2, 0.3, 0.2)
A4_MM = (210.0, 297.0)
SHEETS_RATE = 0.35
SUPPLY_RATE = 0.3
SUPPLY_PER_COLOUR = 5
TAPE_RATE = 0.2

LIGHT_KINDS = ("area", "point")
#: shadow blur per millimetre of height of the object casting it (angular size of the light)
SHADOW_SOFTNESS = {"area": (0.5, 1.2), "point": (0.05, 0.15)}
SHADOW_STRENGTH = {"area": (0.18, 0.4), "point": (0.35, 0.6)}
LIGHT_ELEVATION_DEG = {"area": (50.0, 80.0), "point": (35.0, 65.0)}
CONTACT_SHADOW_STRENGTH = 0.3
#: the wood grain of a plate is computed on a grid this many canvas pixels apart, then scaled up
WOOD_STEP = 2
#: blurs wider than this many pixels per sigma run on a reduced copy
BLUR_CELLS_PER_SIGMA = 3.0
#: the hand's shadow is computed on a grid this many pixels apart, then blurred and scaled up
HAND_SHADOW_STEP = 2
#: height used to measure the shadow direction in the image
SHADOW_PROBE_MM = 10.0

# --- optics and sensor -----------------------------------------------------------------------------------

EXPOSURE_RANGE = (0.65, 1.35)
EXPOSURE_LOW = 0.8
EXPOSURE_HIGH = 1.2
WB_RATE = 0.25  # each of warm and cool
GRADIENT_RATE = 0.35
#: a strong gradient brightens one side of the board up to twice the other
GRADIENT_RATIO = (1.5, 2.0)
MILD_GRADIENT_RATIO = (1.0, 1.2)
VIGNETTE_RATE = 0.4
VIGNETTE_STRENGTH = (0.25, 0.5)
MILD_VIGNETTE = (0.0, 0.1)
DEFOCUS_SIGMA_PX = (0.0, 1.4)
DEFOCUS_TAG_SIGMA_PX = 1.0
MOTION_BLUR_RATE = 0.2
MOTION_BLUR_PX = (1.0, 2.0)
NOISE_FLOOR = (1.0, 3.5)  # grey levels
NOISE_SHOT = (0.02, 0.08)  # variance per grey level
JPEG_QUALITY = (50, 95)
JPEG_LOW = 65

# --- rendering -------------------------------------------------------------------------------------------

#: canvas pixels per image pixel at the board, so the warp never has to invent detail there
CANVAS_OVERSAMPLE = 1.15
CANVAS_MAX_PIXELS = 1_800_000
TABLE_TEXTURE_DOWNSAMPLE = 2
#: fixed-point bits for OpenCV's anti-aliased fills (1/16 px)
SHIFT = 4
CIRCLE_POINTS = 36

TAGS = frozenset(
    {
        "plate:white",
        "plate:grey",
        "plate:wood",
        "plate:dark",
        "plate:colour",
        "plate:contest",
        "frame-at-edge",
        "lines:dark",
        "lines:light",
        "lines:thin",
        "lines:thick",
        "lines:engraved",
        "large-pieces",
        "glossy",
        "matte",
        "white-near-plate",
        "table:wood",
        "table:cloth",
        "table:laminate",
        "table:paper",
        "papers",
        "supply",
        "tape",
        "light:area",
        "light:point",
        "gradient",
        "vignette",
        "wb:warm",
        "wb:cool",
        "exposure:low",
        "exposure:high",
        "defocus",
        "motion-blur",
        "jpeg:low",
        "pitch:small",
        "pitch:large",
        "perspective",
        "occ:hand",
        "occ:pen",
        "occ:coin",
    }
)

BGR = tuple[float, float, float]


@dataclass(frozen=True)
class Sample:
    """One frame and its truth; see the module docstring for the meaning of each field."""

    image: np.ndarray
    board: str
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    occluded: bool
    tags: frozenset[str]


# --- the scene description -------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Camera:
    """A pinhole camera whose centre is ``height_mm`` above the world origin on the table.

    World: x right, y down as a straight-down camera sees it, z into the table; the table top is z = 0 and
    a height h above it is z = -h. ``rotation`` maps world directions to camera ones (OpenCV camera axes).
    """

    focal_px: float
    principal_px: tuple[float, float]
    rotation: np.ndarray
    height_mm: float
    tilt_deg: float

    def project(self, xy: np.ndarray, height_mm: float = 0.0) -> np.ndarray:
        """Image positions (N, 2) of world points (N, 2) at ``height_mm`` above the table."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        rel = np.column_stack([xy, np.full(len(xy), self.height_mm - height_mm)])
        cam = rel @ self.rotation.T
        return cam[:, :2] / cam[:, 2:3] * self.focal_px + np.asarray(self.principal_px)

    def rays(self, uv: np.ndarray) -> np.ndarray:
        """World directions (N, 3) through image points, scaled to unit depth along the optical axis."""
        uv = np.asarray(uv, dtype=np.float64).reshape(-1, 2)
        rel = (uv - np.asarray(self.principal_px)) / self.focal_px
        return np.column_stack([rel, np.ones(len(uv))]) @ self.rotation

    def back_project(self, uv: np.ndarray) -> np.ndarray:
        """Table points (N, 2) seen at image points (N, 2); every ray meets the table (tilt <= 20 deg)."""
        d = self.rays(uv)
        return d[:, :2] * (self.height_mm / d[:, 2:3])

    def table_homography(self) -> np.ndarray:
        """3x3 map from table points (x, y, 1) to image pixels."""
        k = np.array(
            [[self.focal_px, 0, self.principal_px[0]], [0, self.focal_px, self.principal_px[1]], [0, 0, 1]]
        )
        r = self.rotation
        return k @ np.column_stack([r[:, 0], r[:, 1], r @ np.array([0.0, 0.0, self.height_mm])])


@dataclass(frozen=True, eq=False)
class Plate:
    """The square plate. Lengths are fractions of the pitch."""

    kind: str
    bgr: BGR
    margin_frac: float  # plate beyond the outer lines' outer edges; 0: the frame sits at the edge
    thickness_frac: float
    grain_period_frac: float  # wood only
    grain_seed: int


@dataclass(frozen=True, eq=False)
class Grid:
    """The 4 + 4 lines, outer frame included."""

    bgr: BGR
    width_frac: float
    engraved: bool  # engraved lines have soft edges; printed ones are sharp


@dataclass(frozen=True, eq=False)
class Pieces:
    """The pieces on the board, in the drawn frame (before the truth's quarter-turn fold)."""

    cells: str  # 9 chars, "X" black, "O" white, "." empty
    offsets_frac: np.ndarray  # (9, 2) board-frame offsets from the square centres, in pitches
    radius_frac: float
    thickness_frac: float  # of the pitch
    black_bgr: BGR
    white_bgr: BGR
    rim_frac: float  # width of the darker rim, of the radius
    rim_dark: float  # rim brightness factor at the very edge
    glossy: bool
    highlights: tuple[bool, ...]  # per square: a specular highlight (only when glossy)
    highlight_gain: float


@dataclass(frozen=True, eq=False)
class Board:
    centre_xy: tuple[float, float]  # world mm
    yaw_rad: float  # board x axis direction on the table
    pitch_mm: float
    plate: Plate
    grid: Grid
    pieces: Pieces

    @property
    def axes(self) -> tuple[np.ndarray, np.ndarray]:
        """World directions of the board's x and y axes (y is "down" in the board's own frame)."""
        c, s = math.cos(self.yaw_rad), math.sin(self.yaw_rad)
        return np.array([c, s]), np.array([-s, c])

    def to_world(self, bxy: np.ndarray) -> np.ndarray:
        """World points (N, 2) of board-frame points (N, 2) in millimetres."""
        ex, ey = self.axes
        bxy = np.asarray(bxy, dtype=np.float64).reshape(-1, 2)
        return np.asarray(self.centre_xy) + bxy[:, :1] * ex + bxy[:, 1:] * ey

    @property
    def plate_half_mm(self) -> float:
        p = self.pitch_mm
        return 1.5 * p + 0.5 * self.grid.width_frac * p + self.plate.margin_frac * p

    @property
    def plate_height_mm(self) -> float:
        return self.plate.thickness_frac * self.pitch_mm

    def square_centres_mm(self) -> np.ndarray:
        """Board-frame centres (9, 2) of the squares, row by row."""
        rows, cols = np.divmod(np.arange(9), 3)
        return np.column_stack([cols - 1.0, rows - 1.0]) * self.pitch_mm


@dataclass(frozen=True, eq=False)
class Table:
    kind: str
    bgr: BGR
    grain_period_mm: float


@dataclass(frozen=True, eq=False)
class Sheet:
    """A sheet of paper lying on the table."""

    centre_xy: tuple[float, float]
    size_mm: tuple[float, float]
    angle_rad: float
    bgr: BGR


@dataclass(frozen=True, eq=False)
class Supply:
    """Spare pieces in two columns on a sheet of white paper beside one side of the plate."""

    side: int  # 0..3: board +x, +y, -x, -y
    gap_frac: float  # from the plate's edge to the paper, in pitches
    black: int
    white: int
    jitter_frac: np.ndarray  # (2 * SUPPLY_PER_COLOUR, 2), of the piece radius
    paper_bgr: BGR


@dataclass(frozen=True, eq=False)
class Tape:
    """Red tape stuck around the plate: four strips."""

    gap_mm: float
    width_mm: float
    bgr: BGR
    skew_rad: tuple[float, ...]  # per strip
    overshoot_mm: tuple[float, ...]  # per strip


@dataclass(frozen=True, eq=False)
class Light:
    kind: str  # "area" or "point"
    azimuth_rad: float  # world direction from the board towards the light
    elevation_deg: float  # seen from the board centre
    height_mm: float  # point light only
    strength: float
    softness: float  # shadow blur per millimetre of height of the caster


@dataclass(frozen=True, eq=False)
class Hand:
    """Fingers reaching from an image edge over a square."""

    square: int
    tip_jitter_frac: tuple[float, float]
    approach_jitter_rad: float
    scale: float
    skin_bgr: BGR
    sleeve_bgr: BGR | None
    right: bool
    spread_rad: float
    curl: tuple[float, ...]  # per finger, the visible share of its length
    thumb_angle_rad: float
    height_mm: float


@dataclass(frozen=True, eq=False)
class Pen:
    """A pen lying across the board."""

    centre_frac: tuple[float, float]  # board frame, in pitches
    angle_rad: float  # board frame
    length_mm: float
    radius_mm: float
    body_bgr: BGR
    cap_bgr: BGR
    tip_bgr: BGR


@dataclass(frozen=True, eq=False)
class Coin:
    """A coin lying flat in a square, on a line, or on top of a piece."""

    centre_frac: tuple[float, float]  # board frame, in pitches
    radius_frac: float
    thickness_mm: float
    bgr: BGR
    on_square: int | None  # the square whose piece it lies on, if any


@dataclass(frozen=True, eq=False)
class Post:
    """Light fields, optics and sensor, applied in image space."""

    exposure: float
    wb_gains: BGR
    gradient_ratio: float
    gradient_angle_rad: float
    vignette: float
    defocus_sigma_px: float
    motion_px: float
    motion_angle_rad: float
    noise_floor: float
    noise_shot: float
    jpeg_quality: int


@dataclass(frozen=True, eq=False)
class Scene:
    camera: Camera
    board: Board
    table: Table
    sheets: tuple[Sheet, ...]
    supply: Supply | None
    tape: Tape | None
    light: Light
    occluder: Hand | Pen | Coin | None
    post: Post
    texture_seed: int


# --- public entry points ---------------------------------------------------------------------------------


def make_frame(index: int, seed: int) -> Sample:
    """Frame ``index`` of the stream ``seed``; identical pixels and truth for identical arguments."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index]))
    return render(sample_scene(rng))


def make_set(n: int, seed: int) -> list[Sample]:
    """Frames 0..n-1 of the stream ``seed`` (as bench/vision.py's generator reports take them)."""
    return [make_frame(index, seed) for index in range(n)]


def square_centres_px(scene: Scene) -> np.ndarray:
    """Image positions (9, 2) of the square centres on the plate's top, in the *drawn* board frame."""
    board = scene.board
    return scene.camera.project(board.to_world(board.square_centres_mm()), board.plate_height_mm)


def render(scene: Scene) -> Sample:
    """The frame and truth of a scene; a pure function of ``scene``."""
    rng = np.random.default_rng(scene.texture_seed)
    canvas_map = _CanvasMap.for_scene(scene)
    canvas = _table_texture(scene.table, canvas_map, rng)
    _draw_sheets(canvas, canvas_map, scene)
    _draw_table_shadows(canvas, canvas_map, scene)
    _draw_plate(canvas, canvas_map, scene.board, rng)
    _draw_discs(canvas, canvas_map, scene, rng)
    warped = cv2.warpPerspective(
        canvas,
        canvas_map.to_image(scene.camera),
        (IMAGE_W, IMAGE_H),
        flags=cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    image = warped.astype(np.float32)
    if isinstance(scene.occluder, Hand):
        _draw_hand(image, scene, scene.occluder)
    elif isinstance(scene.occluder, Pen):
        _draw_pen(image, scene, scene.occluder)
    image = _post(image, scene, rng)

    centres = square_centres_px(scene)
    centre = centres[4]
    pitch = float(np.mean(np.linalg.norm(centres[[1, 3, 5, 7]] - centre, axis=1)))
    drawn_angle = _drawn_angle_deg(centres)
    angle, quarter_turns = _fold_angle(drawn_angle)
    grid = np.array(list(scene.board.pieces.cells)).reshape(3, 3)
    board = "".join(np.rot90(grid, quarter_turns).ravel())
    return Sample(
        image=image,
        board=board,
        centre_px=(float(centre[0]), float(centre[1])),
        angle_deg=angle,
        pitch_px=pitch,
        occluded=scene.occluder is not None,
        tags=_tags(scene, pitch),
    )


def _drawn_angle_deg(centres: np.ndarray) -> float:
    """Counter-clockwise-as-seen angle of the drawn board's x axis, averaging both axes' directions so
    perspective shear does not favour one of them."""
    ex = centres[5] - centres[3]
    ey = centres[7] - centres[1]
    a1 = math.atan2(-ex[1], ex[0])
    # the y axis ("down" on the board) points along (sin a, cos a) in the image for a board at angle a
    a2 = math.atan2(ey[0], ey[1])
    return math.degrees(math.atan2(math.sin(a1) + math.sin(a2), math.cos(a1) + math.cos(a2)))


def _fold_angle(angle_deg: float) -> tuple[float, int]:
    """The angle folded into (-45, 45] and the quarter turns k folded away (angle = folded + 90 k).

    Turning the board's frame by -90 k degrees makes new[r][c] = old[c][2 - r] for each step, which is
    ``np.rot90(old, k)``.
    """
    k = round(angle_deg / 90.0)
    folded = angle_deg - 90.0 * k
    if folded <= -45.0:
        folded += 90.0
        k -= 1
    elif folded > 45.0:
        folded -= 90.0
        k += 1
    return folded, k % 4


def _tags(scene: Scene, pitch_px: float) -> frozenset[str]:
    board, post = scene.board, scene.post
    plate, grid, pieces = board.plate, board.grid, board.pieces
    tags = {
        {
            "white": "plate:white",
            "light-grey": "plate:grey",
            "mid-grey": "plate:grey",
            "wood": "plate:wood",
            "dark": "plate:dark",
        }.get(plate.kind, "plate:colour"),
        "lines:dark" if _luma(grid.bgr) < _luma(plate.bgr) else "lines:light",
        "glossy" if pieces.glossy else "matte",
        f"table:{scene.table.kind}",
        f"light:{scene.light.kind}",
    }
    if plate.kind == "contest":
        tags.add("plate:contest")
    if plate.margin_frac == 0.0:
        tags.add("frame-at-edge")
    if grid.width_frac < THIN_LINE_FRAC:
        tags.add("lines:thin")
    if grid.width_frac > THICK_LINE_FRAC:
        tags.add("lines:thick")
    if grid.engraved:
        tags.add("lines:engraved")
    if pieces.radius_frac > LARGE_PIECE_FRAC:
        tags.add("large-pieces")
    if "O" in pieces.cells and abs(_luma(pieces.white_bgr) - _luma(plate.bgr)) <= WHITE_NEAR_PLATE_LEVELS:
        tags.add("white-near-plate")
    if scene.sheets:
        tags.add("papers")
    if scene.supply is not None:
        tags.add("supply")
    if scene.tape is not None:
        tags.add("tape")
    if post.gradient_ratio >= GRADIENT_RATIO[0]:
        tags.add("gradient")
    if post.vignette >= VIGNETTE_STRENGTH[0]:
        tags.add("vignette")
    if post.wb_gains[2] > post.wb_gains[0] * 1.1:
        tags.add("wb:warm")
    elif post.wb_gains[0] > post.wb_gains[2] * 1.1:
        tags.add("wb:cool")
    if post.exposure < EXPOSURE_LOW:
        tags.add("exposure:low")
    elif post.exposure > EXPOSURE_HIGH:
        tags.add("exposure:high")
    if post.defocus_sigma_px > DEFOCUS_TAG_SIGMA_PX:
        tags.add("defocus")
    if post.motion_px > 0.0:
        tags.add("motion-blur")
    if post.jpeg_quality < JPEG_LOW:
        tags.add("jpeg:low")
    if pitch_px < PITCH_SMALL_PX:
        tags.add("pitch:small")
    elif pitch_px > PITCH_LARGE_PX:
        tags.add("pitch:large")
    if scene.camera.tilt_deg > PERSPECTIVE_TAG_TILT_DEG:
        tags.add("perspective")
    if scene.occluder is not None:
        tags.add("occ:" + {Hand: "hand", Pen: "pen", Coin: "coin"}[type(scene.occluder)])
    return frozenset(tags)


# --- sampling --------------------------------------------------------------------------------------------


def _luma(bgr: Sequence[float]) -> float:
    return 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2]


def _hsv(h: float, s: float, v: float) -> BGR:
    """BGR (0-255) of a hue, saturation and value in 0-1."""
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return (b * 255.0, g * 255.0, r * 255.0)


def _grey(rng: np.random.Generator, lo: float, hi: float, tint: float = 3.0) -> BGR:
    """A near-neutral colour: a grey in [lo, hi] with each channel nudged by up to ``tint`` (staying in
    [lo, hi], so the stated ranges hold per channel)."""
    g = rng.uniform(lo, hi)
    b, gg, r = np.clip(g + rng.uniform(-tint, tint, 3), lo, hi)
    return (float(b), float(gg), float(r))


def _scaled(bgr: BGR, k: float) -> BGR:
    return (min(bgr[0] * k, 255.0), min(bgr[1] * k, 255.0), min(bgr[2] * k, 255.0))


def sample_scene(rng: np.random.Generator) -> Scene:
    """Draw every random choice of one frame."""
    plate = _sample_plate(rng)
    grid = _sample_grid(rng, plate)
    pieces = _sample_pieces(rng, plate)
    camera, centre_xy, yaw, pitch_mm = _place_board(rng, plate, grid)
    board = Board(centre_xy, yaw, pitch_mm, plate, grid, pieces)
    light = _sample_light(rng)
    occluder: Hand | Pen | Coin | None = None
    if rng.random() < OCCLUDED_RATE:
        kind = OCCLUDER_KINDS[rng.integers(len(OCCLUDER_KINDS))]
        occluder = {"hand": _sample_hand, "pen": _sample_pen, "coin": _sample_coin}[kind](rng, board)
    return Scene(
        camera=camera,
        board=board,
        table=_sample_table(rng),
        sheets=_sample_sheets(rng, board),
        supply=_sample_supply(rng, pieces) if rng.random() < SUPPLY_RATE else None,
        tape=_sample_tape(rng) if rng.random() < TAPE_RATE else None,
        light=light,
        occluder=occluder,
        post=_sample_post(rng),
        texture_seed=int(rng.integers(2**31)),
    )


def _sample_plate(rng: np.random.Generator) -> Plate:
    kind = PLATE_KINDS[rng.choice(len(PLATE_KINDS), p=PLATE_KIND_WEIGHTS)]
    hi = LIGHT_PLATE_CHANNELS[1]
    if kind == "white":
        bgr = _grey(rng, 225.0, hi - 5.0)
    elif kind == "light-grey":
        bgr = _grey(rng, 175.0, 215.0)
    elif kind == "mid-grey":
        bgr = _grey(rng, 100.0, 160.0)
    elif kind == "wood":
        # maple, oak, walnut-ish stains: a brown hue at varying value
        bgr = _hsv(rng.uniform(0.06, 0.1), rng.uniform(0.35, 0.55), rng.uniform(0.45, 0.88))
    elif kind == "dark":
        bgr = _grey(rng, 15.0, 50.0)
    elif kind == "pastel":
        # value and saturation bounds keep every channel inside LIGHT_PLATE_CHANNELS
        bgr = _hsv(rng.random(), rng.uniform(0.1, 0.3), rng.uniform(0.88, 0.97))
    elif kind == "contest":
        blue = rng.random() < 0.5
        hue = rng.uniform(0.57, 0.63) if blue else rng.uniform(0.3, 0.4)
        bgr = _hsv(hue, rng.uniform(0.6, 0.9), rng.uniform(0.5, 0.8))
    else:
        bgr = _hsv(rng.random(), rng.uniform(0.55, 0.9), rng.uniform(0.5, 0.9))
    margin = 0.0 if rng.random() < FRAME_AT_EDGE_RATE else rng.uniform(*PLATE_MARGIN_FRAC)
    return Plate(
        kind=kind,
        bgr=bgr,
        margin_frac=margin,
        thickness_frac=rng.uniform(*PLATE_THICKNESS_FRAC),
        grain_period_frac=rng.uniform(0.08, 0.25),
        grain_seed=int(rng.integers(2**31)),
    )


def _sample_grid(rng: np.random.Generator, plate: Plate) -> Grid:
    light_plate = plate.kind in ("white", "light-grey", "pastel", "wood")
    if plate.kind == "dark":
        dark_lines = False
    elif light_plate:
        dark_lines = True
    elif plate.kind == "mid-grey":
        dark_lines = rng.random() < 0.5
    else:  # contest and saturated plates: mostly white lines, as printed contest boards have
        dark_lines = rng.random() < 0.3
    if dark_lines:
        if rng.random() < 0.6:
            bgr = _grey(rng, 10.0, 70.0)
        else:  # dark blue, brown or green ink
            bgr = _hsv(rng.random(), rng.uniform(0.4, 0.8), rng.uniform(0.15, 0.35))
    else:
        bgr = _grey(rng, 195.0, 245.0)
    return Grid(bgr=bgr, width_frac=rng.uniform(*LINE_WIDTH_FRAC), engraved=rng.random() < ENGRAVED_RATE)


def _sample_pieces(rng: np.random.Generator, plate: Plate) -> Pieces:
    count = int(rng.integers(0, 10))
    blacks = count // 2 + (count % 2 if rng.random() < 0.5 else 0)
    squares = rng.permutation(9)
    cells = ["."] * 9
    for i, square in enumerate(squares[:count]):
        cells[square] = "X" if i < blacks else "O"
    white = _grey(rng, *WHITE_GREY)
    plate_luma = _luma(plate.bgr)
    if plate_luma > WHITE_GREY[0] - WHITE_NEAR_PLATE_LEVELS and rng.random() < WHITE_NEAR_PLATE_RATE:
        # white pieces hard to tell from a light plate
        near = np.clip(plate_luma + rng.uniform(-15.0, 15.0), *WHITE_GREY)
        white = _grey(rng, near - 1.0, near + 1.0)
    radius = rng.uniform(*PIECE_RADIUS_FRAC)
    offset_r = PIECE_OFFSET_FRAC * np.sqrt(rng.random(9))
    offset_a = rng.uniform(0.0, 2 * math.pi, 9)
    glossy = rng.random() < GLOSSY_RATE
    return Pieces(
        cells="".join(cells),
        offsets_frac=np.column_stack([offset_r * np.cos(offset_a), offset_r * np.sin(offset_a)]),
        radius_frac=radius,
        thickness_frac=radius * rng.uniform(*PIECE_THICKNESS_OF_RADIUS),
        black_bgr=_grey(rng, *BLACK_GREY),
        white_bgr=white,
        rim_frac=rng.uniform(0.06, 0.16),
        rim_dark=rng.uniform(0.5, 0.8),
        glossy=glossy,
        highlights=tuple(bool(glossy and h) for h in rng.random(9) < HIGHLIGHT_RATE),
        highlight_gain=rng.uniform(0.5, 1.0),
    )


def _camera_rotation(tilt_rad: float, tilt_dir_rad: float, roll_rad: float) -> np.ndarray:
    """World-to-camera rotation: a roll about the vertical, then a tilt of the optical axis."""
    c, s = math.cos(roll_rad), math.sin(roll_rad)
    roll = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    axis = np.array([math.cos(tilt_dir_rad), math.sin(tilt_dir_rad), 0.0]) * tilt_rad
    tilt, _ = cv2.Rodrigues(axis)
    return tilt @ roll


def _place_board(
    rng: np.random.Generator, plate: Plate, grid: Grid
) -> tuple[Camera, tuple[float, float], float, float]:
    """Camera, board centre, yaw and millimetre pitch: the board lands anywhere in the frame, fully
    visible, with its image pitch inside PITCH_RANGE_PX.

    Tries random image positions for the centre; later tries pull the position towards the image centre and
    the pitch down, so the last tries always fit.
    """
    focal = rng.uniform(*FOCAL_PX_RANGE)
    principal = (
        IMAGE_W / 2 + rng.uniform(-PRINCIPAL_JITTER_PX, PRINCIPAL_JITTER_PX),
        IMAGE_H / 2 + rng.uniform(-PRINCIPAL_JITTER_PX, PRINCIPAL_JITTER_PX),
    )
    tilt = math.radians(MAX_TILT_DEG) * math.sqrt(rng.random())
    rotation = _camera_rotation(tilt, rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi))
    lo, hi = PITCH_RANGE_PX[0] + PITCH_AIM_SLACK_PX, PITCH_RANGE_PX[1] - PITCH_AIM_SLACK_PX
    aim0 = rng.uniform(lo, hi)
    height0 = rng.uniform(*CAMERA_HEIGHT_MM)
    half_frac = 1.5 + 0.5 * grid.width_frac + plate.margin_frac
    corners_frac = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64) * half_frac
    square_frac = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.float64)

    camera = Camera(focal, principal, rotation, height0, math.degrees(tilt))
    centre_xy, yaw, pitch_mm = np.zeros(2), 0.0, PITCH_MM_RANGE[0]
    for attempt in range(FIT_TRIES):
        pull = 1.0 - attempt / FIT_TRIES
        shrink = 0.985 ** max(0, attempt - FIT_TRIES // 3)
        aim = max(lo, aim0 * shrink)
        uv = np.array(
            [
                principal[0] + rng.uniform(-1.0, 1.0) * IMAGE_W / 2 * pull,
                principal[1] + rng.uniform(-1.0, 1.0) * IMAGE_H / 2 * pull,
            ]
        )
        yaw = rng.uniform(0.0, 2 * math.pi)
        ray = Camera(focal, principal, rotation, 1.0, 0.0).rays(uv)[0]
        # depth along the optical axis that gives the aimed pitch for a pitch of pitch_mm: depth = f P / aim
        pitch_mm = float(np.clip(aim * height0 / (focal * ray[2]), *PITCH_MM_RANGE))
        height = float(np.clip(pitch_mm * focal * ray[2] / aim, *CAMERA_HEIGHT_LIMITS_MM))
        pitch_mm = aim * height / (focal * ray[2])
        camera = Camera(focal, principal, rotation, height, math.degrees(tilt))
        centre_xy = ray[:2] * (height / ray[2])
        c, s = math.cos(yaw), math.sin(yaw)
        # rows are the board's x and y axes on the table
        axes = np.array([[c, s], [-s, c]])
        for _ in range(2):  # the camera sees the board slightly obliquely: scale the board to the aim
            plate_h = plate.thickness_frac * pitch_mm
            pts = camera.project(centre_xy + (square_frac * pitch_mm) @ axes, plate_h)
            measured = float(np.mean(np.linalg.norm(pts[1:] - pts[0], axis=1)))
            pitch_mm *= aim / measured
        plate_h = plate.thickness_frac * pitch_mm
        plate_xy = centre_xy + (corners_frac * pitch_mm) @ axes
        corners = np.vstack([camera.project(plate_xy, plate_h), camera.project(plate_xy, 0.0)])
        inside = (
            (corners[:, 0] >= FIT_MARGIN_PX).all()
            and (corners[:, 0] <= IMAGE_W - 1 - FIT_MARGIN_PX).all()
            and (corners[:, 1] >= FIT_MARGIN_PX).all()
            and (corners[:, 1] <= IMAGE_H - 1 - FIT_MARGIN_PX).all()
        )
        if inside:
            break
    return camera, (float(centre_xy[0]), float(centre_xy[1])), yaw, pitch_mm


def _sample_table(rng: np.random.Generator) -> Table:
    kind = TABLE_KINDS[rng.choice(len(TABLE_KINDS), p=TABLE_KIND_WEIGHTS)]
    if kind == "wood":
        bgr = _hsv(rng.uniform(0.05, 0.1), rng.uniform(0.3, 0.6), rng.uniform(0.3, 0.8))
    elif kind == "cloth":
        bgr = _hsv(rng.random(), rng.uniform(0.05, 0.5), rng.uniform(0.25, 0.8))
    elif kind == "laminate":
        bgr = _hsv(rng.random(), rng.uniform(0.0, 0.15), rng.uniform(0.2, 0.92))
    else:  # white or kraft paper covering the table
        bgr = _grey(rng, 215.0, 245.0) if rng.random() < 0.6 else _hsv(0.08, 0.35, rng.uniform(0.6, 0.8))
    return Table(kind=kind, bgr=bgr, grain_period_mm=rng.uniform(3.0, 9.0))


def _sample_sheets(rng: np.random.Generator, board: Board) -> tuple[Sheet, ...]:
    if rng.random() >= SHEETS_RATE:
        return ()
    sheets = []
    for _ in range(int(rng.integers(1, 3))):
        distance = rng.uniform(0.5, 2.0) * board.plate_half_mm + 0.5 * A4_MM[0]
        direction = rng.uniform(0, 2 * math.pi)
        centre = np.asarray(board.centre_xy) + distance * np.array([math.cos(direction), math.sin(direction)])
        sheets.append(
            Sheet(
                centre_xy=(float(centre[0]), float(centre[1])),
                size_mm=A4_MM if rng.random() < 0.7 else (A4_MM[0] / 2, A4_MM[1] / 2),
                angle_rad=rng.uniform(0, math.pi),
                bgr=_grey(rng, 215.0, 248.0),
            )
        )
    return tuple(sheets)


def _sample_supply(rng: np.random.Generator, pieces: Pieces) -> Supply:
    # spares are what is not on the board yet, give or take one
    black = max(0, SUPPLY_PER_COLOUR - pieces.cells.count("X") - int(rng.integers(0, 2)))
    white = max(0, SUPPLY_PER_COLOUR - pieces.cells.count("O") - int(rng.integers(0, 2)))
    return Supply(
        side=int(rng.integers(4)),
        gap_frac=rng.uniform(0.2, 0.8),
        black=black,
        white=white,
        jitter_frac=rng.uniform(-0.12, 0.12, (2 * SUPPLY_PER_COLOUR, 2)),
        paper_bgr=_grey(rng, 225.0, 250.0),
    )


def _sample_tape(rng: np.random.Generator) -> Tape:
    return Tape(
        gap_mm=rng.uniform(5.0, 40.0),
        width_mm=rng.uniform(12.0, 25.0),
        bgr=_hsv(rng.uniform(-0.02, 0.02), rng.uniform(0.65, 0.9), rng.uniform(0.6, 0.9)),
        skew_rad=tuple(rng.uniform(-0.04, 0.04, 4)),
        overshoot_mm=tuple(rng.uniform(0.0, 30.0, 4)),
    )


def _sample_light(rng: np.random.Generator) -> Light:
    kind = LIGHT_KINDS[rng.integers(len(LIGHT_KINDS))]
    return Light(
        kind=kind,
        azimuth_rad=rng.uniform(0, 2 * math.pi),
        elevation_deg=rng.uniform(*LIGHT_ELEVATION_DEG[kind]),
        height_mm=rng.uniform(500.0, 1200.0),
        strength=rng.uniform(*SHADOW_STRENGTH[kind]),
        softness=rng.uniform(*SHADOW_SOFTNESS[kind]),
    )


SKIN_TONES: tuple[BGR, ...] = (
    (150.0, 175.0, 225.0),
    (125.0, 155.0, 210.0),
    (100.0, 135.0, 190.0),
    (75.0, 105.0, 150.0),
    (50.0, 70.0, 105.0),
)


def _sample_hand(rng: np.random.Generator, board: Board) -> Hand:
    tone = np.asarray(SKIN_TONES[rng.integers(len(SKIN_TONES))]) * rng.uniform(0.92, 1.06)
    sleeve = _hsv(rng.random(), rng.uniform(0.0, 0.7), rng.uniform(0.15, 0.8)) if rng.random() < 0.5 else None
    return Hand(
        square=int(rng.integers(9)),
        tip_jitter_frac=(float(rng.uniform(-0.3, 0.3)), float(rng.uniform(-0.3, 0.3))),
        approach_jitter_rad=rng.uniform(-0.6, 0.6),
        scale=rng.uniform(0.85, 1.1),
        skin_bgr=(float(tone[0]), float(tone[1]), float(tone[2])),
        sleeve_bgr=sleeve,
        right=bool(rng.random() < 0.5),
        spread_rad=rng.uniform(0.02, 0.12),
        curl=tuple(rng.uniform(0.55, 1.0, 4)),
        thumb_angle_rad=rng.uniform(0.5, 1.1),
        height_mm=rng.uniform(20.0, 60.0),
    )


PEN_COLOURS: tuple[BGR, ...] = (
    (150.0, 60.0, 20.0),  # blue
    (25.0, 25.0, 25.0),  # black
    (40.0, 40.0, 180.0),  # red
    (230.0, 230.0, 230.0),  # white
    (170.0, 170.0, 165.0),  # silver
    (40.0, 140.0, 60.0),  # green
)


def _sample_pen(rng: np.random.Generator, board: Board) -> Pen:
    body = PEN_COLOURS[rng.integers(len(PEN_COLOURS))]
    return Pen(
        centre_frac=(float(rng.uniform(-1.0, 1.0)), float(rng.uniform(-1.0, 1.0))),
        angle_rad=rng.uniform(0, math.pi),
        length_mm=rng.uniform(125.0, 150.0),
        radius_mm=rng.uniform(3.5, 5.5),
        body_bgr=body,
        cap_bgr=body if rng.random() < 0.5 else PEN_COLOURS[rng.integers(len(PEN_COLOURS))],
        tip_bgr=(175.0, 175.0, 170.0) if rng.random() < 0.5 else _scaled(body, 0.7),
    )


COIN_COLOURS: tuple[BGR, ...] = ((170.0, 172.0, 170.0), (70.0, 150.0, 195.0), (60.0, 100.0, 170.0))
COIN_THICKNESS_MM = (1.5, 2.3)


def _sample_coin(rng: np.random.Generator, board: Board) -> Coin:
    """A coin smaller than a piece, in an empty square or on a line clear of the pieces, else on a piece."""
    pieces = board.pieces
    radius = pieces.radius_frac * rng.uniform(0.55, 0.85)
    square_xy = board.square_centres_mm() / board.pitch_mm + pieces.offsets_frac
    occupied = [i for i in range(9) if pieces.cells[i] != "."]
    empty = [i for i in range(9) if pieces.cells[i] == "."]
    colour = COIN_COLOURS[rng.integers(len(COIN_COLOURS))]
    thickness = rng.uniform(*COIN_THICKNESS_MM)

    def clear(xy: np.ndarray) -> bool:
        if not occupied:
            return True
        gaps = np.linalg.norm(square_xy[occupied] - xy, axis=1)
        return bool(gaps.min() >= pieces.radius_frac + radius)

    if empty and rng.random() < 0.6:
        square = empty[rng.integers(len(empty))]
        xy = board.square_centres_mm()[square] / board.pitch_mm + rng.uniform(-0.12, 0.12, 2)
        if clear(xy):
            return Coin((float(xy[0]), float(xy[1])), radius, thickness, colour, None)
    for _ in range(20):  # on a line: a point of one of the 8 lines, inside the grid
        along = rng.uniform(-1.4, 1.4)
        across = rng.choice([-1.5, -0.5, 0.5, 1.5])
        xy = np.array([across, along]) if rng.random() < 0.5 else np.array([along, across])
        if clear(xy):
            return Coin((float(xy[0]), float(xy[1])), radius, thickness, colour, None)
    square = occupied[rng.integers(len(occupied))]
    xy = square_xy[square] + rng.uniform(-0.3, 0.3, 2) * (pieces.radius_frac - radius)
    return Coin((float(xy[0]), float(xy[1])), radius, thickness, colour, square)


def _sample_post(rng: np.random.Generator) -> Post:
    wb = rng.random()
    if wb < WB_RATE:  # warm: tungsten-ish, red up, blue down
        gains = (rng.uniform(0.78, 0.9), 1.0, rng.uniform(1.1, 1.25))
    elif wb < 2 * WB_RATE:  # cool: daylight on a tungsten setting
        gains = (rng.uniform(1.1, 1.22), 1.0, rng.uniform(0.8, 0.9))
    else:
        gains = (rng.uniform(0.97, 1.03), 1.0, rng.uniform(0.97, 1.03))
    strong_gradient = rng.random() < GRADIENT_RATE
    return Post(
        exposure=rng.uniform(*EXPOSURE_RANGE),
        wb_gains=gains,
        gradient_ratio=rng.uniform(*(GRADIENT_RATIO if strong_gradient else MILD_GRADIENT_RATIO)),
        gradient_angle_rad=rng.uniform(0, 2 * math.pi),
        vignette=rng.uniform(*(VIGNETTE_STRENGTH if rng.random() < VIGNETTE_RATE else MILD_VIGNETTE)),
        defocus_sigma_px=rng.uniform(*DEFOCUS_SIGMA_PX),
        motion_px=rng.uniform(*MOTION_BLUR_PX) if rng.random() < MOTION_BLUR_RATE else 0.0,
        motion_angle_rad=rng.uniform(0, math.pi),
        noise_floor=rng.uniform(*NOISE_FLOOR),
        noise_shot=rng.uniform(*NOISE_SHOT),
        jpeg_quality=int(rng.integers(JPEG_QUALITY[0], JPEG_QUALITY[1] + 1)),
    )


# --- the canvas ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _CanvasMap:
    """A top-down canvas of the table plane, and where raised things land on it.

    A world point (x, y) at height h is painted at ``((x, y) * H / (H - h) - origin) * scale``: where the
    camera's ray through it meets the table (the camera centre is above the world origin at height H).
    """

    camera_height_mm: float
    scale: float  # canvas pixels per millimetre of table
    origin: tuple[float, float]  # world point of canvas pixel (0, 0)
    size: tuple[int, int]  # width, height

    @staticmethod
    def for_scene(scene: Scene) -> _CanvasMap:
        camera, board = scene.camera, scene.board
        corners = np.array(
            [[-0.5, -0.5], [IMAGE_W - 0.5, -0.5], [IMAGE_W - 0.5, IMAGE_H - 0.5], [-0.5, IMAGE_H - 0.5]]
        )
        footprint = camera.back_project(corners)
        centre = np.asarray(board.centre_xy)
        ex = board.axes[0]
        ends = camera.project(np.vstack([centre - ex * board.pitch_mm, centre + ex * board.pitch_mm]))
        image_px_per_mm = float(np.linalg.norm(ends[1] - ends[0])) / (2 * board.pitch_mm)
        scale = CANVAS_OVERSAMPLE * image_px_per_mm
        lo = footprint.min(axis=0)
        extent = footprint.max(axis=0) - lo
        if extent[0] * extent[1] * scale * scale > CANVAS_MAX_PIXELS:
            scale = math.sqrt(CANVAS_MAX_PIXELS / (extent[0] * extent[1]))
        pad = 4.0 / scale
        origin = (float(lo[0] - pad), float(lo[1] - pad))
        size = (math.ceil(extent[0] * scale + 8), math.ceil(extent[1] * scale + 8))
        return _CanvasMap(camera.height_mm, scale, origin, size)

    def magnification(self, height_mm: float) -> float:
        return self.camera_height_mm / (self.camera_height_mm - height_mm)

    def to_px(self, xy: np.ndarray, height_mm: float = 0.0) -> np.ndarray:
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        return (xy * self.magnification(height_mm) - np.asarray(self.origin)) * self.scale

    def length_px(self, mm: float, height_mm: float = 0.0) -> float:
        return mm * self.magnification(height_mm) * self.scale

    def to_image(self, camera: Camera) -> np.ndarray:
        """Homography from canvas pixels to image pixels."""
        s = 1.0 / self.scale
        canvas_to_world = np.array([[s, 0, self.origin[0]], [0, s, self.origin[1]], [0, 0, 1]])
        return camera.table_homography() @ canvas_to_world


def _fixed(pts: np.ndarray) -> np.ndarray:
    """Points as OpenCV's fixed-point polygon (SHIFT fractional bits)."""
    return np.round(np.asarray(pts, dtype=np.float64) * (1 << SHIFT)).astype(np.int32).reshape(-1, 1, 2)


def _fill(img: np.ndarray, pts: np.ndarray, colour: float | BGR) -> None:
    """Anti-aliased fill of a convex polygon."""
    cv2.fillConvexPoly(img, _fixed(pts), colour, lineType=cv2.LINE_AA, shift=SHIFT)


def _hull(pts: np.ndarray) -> np.ndarray:
    return cv2.convexHull(np.asarray(pts, dtype=np.float32)).reshape(-1, 2)


def _circle(centre: np.ndarray, radius: float, n: int = CIRCLE_POINTS) -> np.ndarray:
    a = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
    return np.asarray(centre).reshape(1, 2) + radius * np.column_stack([np.cos(a), np.sin(a)])


def _rect(centre: np.ndarray, half: tuple[float, float], ax: np.ndarray, ay: np.ndarray) -> np.ndarray:
    """Corners of a rectangle with half sizes along the unit axes ax, ay."""
    signs = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)
    return np.asarray(centre) + (signs[:, :1] * half[0]) * ax + (signs[:, 1:] * half[1]) * ay


def _roi(pts: np.ndarray, pad: float, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """Integer box (x0, y0, x1, y1) around points, padded and clipped to an image of ``size``."""
    x0 = max(0, math.floor(pts[:, 0].min() - pad))
    y0 = max(0, math.floor(pts[:, 1].min() - pad))
    x1 = min(size[0], math.ceil(pts[:, 0].max() + pad) + 1)
    y1 = min(size[1], math.ceil(pts[:, 1].max() + pad) + 1)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def _smooth_noise(
    rng: np.random.Generator, shape: tuple[int, int], cell_px: tuple[float, float]
) -> np.ndarray:
    """Roughly unit-variance noise of ``shape`` (h, w) varying over ``cell_px`` (x, y) pixels."""
    h, w = shape
    gw = max(2, math.ceil(w / max(cell_px[0], 1.0)) + 1)
    gh = max(2, math.ceil(h / max(cell_px[1], 1.0)) + 1)
    small = rng.standard_normal((gh, gw), dtype=np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _table_texture(table: Table, cmap: _CanvasMap, rng: np.random.Generator) -> np.ndarray:
    """The bare table over the whole canvas: built at reduced resolution (its detail is finer than the
    camera resolves anyway) and scaled up."""
    w, h = cmap.size
    tw, th = -(-w // TABLE_TEXTURE_DOWNSAMPLE), -(-h // TABLE_TEXTURE_DOWNSAMPLE)
    mm_per_px = TABLE_TEXTURE_DOWNSAMPLE / cmap.scale

    def cells(x_mm: float, y_mm: float) -> tuple[float, float]:
        return x_mm / mm_per_px, y_mm / mm_per_px

    mottle = _smooth_noise(rng, (th, tw), cells(90.0, 90.0))
    fine = rng.standard_normal((th, tw), dtype=np.float32)
    if table.kind == "wood":
        # grain runs along world x; its phase wanders slowly so the rings bend
        warp = _smooth_noise(rng, (th, tw), cells(250.0, 60.0))
        ys = (np.arange(th, dtype=np.float32) * mm_per_px)[:, None]
        grain = np.sin((ys / table.grain_period_mm + 0.8 * warp) * (2 * math.pi))
        streak = _smooth_noise(rng, (th, tw), cells(300.0, 1.2))
        factor = 1.0 + 0.06 * grain + 0.05 * streak + 0.05 * mottle + 0.012 * fine
    elif table.kind == "cloth":
        folds = _smooth_noise(rng, (th, tw), cells(150.0, 150.0))
        factor = 1.0 + 0.06 * folds + 0.03 * mottle + 0.05 * fine
    elif table.kind == "laminate":
        factor = 1.0 + 0.025 * mottle + 0.02 * fine
    else:
        factor = 1.0 + 0.02 * mottle + 0.01 * fine
    tex = factor[:, :, None] * np.asarray(table.bgr, dtype=np.float32)
    small = np.clip(tex, 0, 255).astype(np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _supply_layout(board: Board, supply: Supply) -> tuple[np.ndarray, list[tuple[np.ndarray, str]]]:
    """World corners of the supply's paper, and its pieces (world centre, "X" or "O")."""
    p = board.pitch_mm
    radius = board.pieces.radius_frac * p
    ex, ey = board.axes
    out = [ex, ey, -ex, -ey][supply.side]
    along = np.array([-out[1], out[0]])
    spacing = 2.25 * radius
    column_gap = 2.5 * radius
    near = board.plate_half_mm + supply.gap_frac * p
    paper_depth = max(A4_MM[0], 2 * column_gap + 2 * radius + 30.0)
    paper_centre = np.asarray(board.centre_xy) + out * (near + paper_depth / 2)
    paper = _rect(paper_centre, (paper_depth / 2, A4_MM[1] / 2), out, along)
    first_column = near + paper_depth / 2 - column_gap / 2
    pieces: list[tuple[np.ndarray, str]] = []
    for column, (char, count) in enumerate((("X", supply.black), ("O", supply.white))):
        for j in range(count):
            jitter = supply.jitter_frac[column * SUPPLY_PER_COLOUR + j] * radius
            xy = (
                np.asarray(board.centre_xy)
                + out * (first_column + column * column_gap + jitter[0])
                + along * ((j - (count - 1) / 2) * spacing + jitter[1])
            )
            pieces.append((xy, char))
    return paper, pieces


def _draw_sheets(canvas: np.ndarray, cmap: _CanvasMap, scene: Scene) -> None:
    """Loose sheets, the supply's paper and the tape: flat on the table, under the plate."""
    for sheet in scene.sheets:
        c, s = math.cos(sheet.angle_rad), math.sin(sheet.angle_rad)
        corners = _rect(
            np.asarray(sheet.centre_xy), (sheet.size_mm[0] / 2, sheet.size_mm[1] / 2), (c, s), (-s, c)
        )
        _fill(canvas, cmap.to_px(corners), sheet.bgr)
    board = scene.board
    if scene.supply is not None:
        paper, _ = _supply_layout(board, scene.supply)
        _fill(canvas, cmap.to_px(paper), scene.supply.paper_bgr)
    if scene.tape is not None:
        tape = scene.tape
        ex, ey = board.axes
        reach = board.plate_half_mm + tape.gap_mm + tape.width_mm / 2
        for k, out in enumerate((ex, ey, -ex, -ey)):
            skew = tape.skew_rad[k]
            c, s = math.cos(skew), math.sin(skew)
            out_k = np.array([c * out[0] - s * out[1], s * out[0] + c * out[1]])
            along = np.array([-out_k[1], out_k[0]])
            half_len = reach + tape.width_mm / 2 + tape.overshoot_mm[k]
            strip = _rect(
                np.asarray(board.centre_xy) + out * reach, (tape.width_mm / 2, half_len), out_k, along
            )
            _fill(canvas, cmap.to_px(strip), tape.bgr)


def _light_foot(scene: Scene) -> np.ndarray:
    """World point of the table below a point light."""
    light = scene.light
    toward = np.array([math.cos(light.azimuth_rad), math.sin(light.azimuth_rad)])
    reach = light.height_mm / math.tan(math.radians(light.elevation_deg))
    return np.asarray(scene.board.centre_xy) + toward * reach


def _shadow_vector(scene: Scene, xy: np.ndarray, height_mm: float) -> np.ndarray:
    """How far and which way the shadow of a point ``height_mm`` above the receiving surface at ``xy``
    falls. An area light is treated as distant (one direction everywhere); a point light throws shadows
    radially away from its foot, longer further from it."""
    light = scene.light
    if light.kind == "area":
        toward = np.array([math.cos(light.azimuth_rad), math.sin(light.azimuth_rad)])
        return -toward * height_mm / math.tan(math.radians(light.elevation_deg))
    return (np.asarray(xy, dtype=np.float64).reshape(2) - _light_foot(scene)) * height_mm / light.height_mm


def _shadow_of(scene: Scene, footprint: np.ndarray, height_mm: float) -> np.ndarray:
    """World polygon of the shadow of a prism of ``height_mm`` standing on a convex ``footprint``."""
    offset = _shadow_vector(scene, footprint.mean(axis=0), height_mm)
    return _hull(np.vstack([footprint, footprint + offset])).astype(np.float64)


def _apply_shadows(canvas: np.ndarray, polys_px: list[np.ndarray], sigma_px: float, strength: float) -> None:
    """Darken the canvas under polygons blurred by ``sigma_px``."""
    if not polys_px:
        return
    pad = 3.0 * sigma_px + 2.0
    box = _roi(np.vstack(polys_px), pad, (canvas.shape[1], canvas.shape[0]))
    if box is None:
        return
    x0, y0, x1, y1 = box
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    for poly in polys_px:
        _fill(mask, poly - (x0, y0), 255)
    soft = _soften(mask, max(sigma_px, 0.5)).astype(np.float32)
    keep = 1.0 - (strength / 255.0) * soft
    roi = canvas[y0:y1, x0:x1]
    roi[:] = np.clip(roi * keep[:, :, None], 0, 255).astype(np.uint8)


def _soften(mask: np.ndarray, sigma_px: float) -> np.ndarray:
    """Gaussian blur; wide blurs run on a reduced copy (a soft shadow has no detail to lose), which keeps
    their cost flat however soft the light."""
    step = max(1, int(sigma_px / BLUR_CELLS_PER_SIGMA))
    if step == 1:
        return cv2.GaussianBlur(mask, (0, 0), sigma_px)
    h, w = mask.shape
    small = cv2.resize(mask, (-(-w // step), -(-h // step)), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), sigma_px / step)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _piece_discs(scene: Scene) -> list[_Disc]:
    """Every disc standing in the scene: the coin (if on the plate), supply pieces, board pieces, and a coin
    lying on a piece, in drawing order."""
    board = scene.board
    pieces = board.pieces
    p = board.pitch_mm
    plate_h = board.plate_height_mm
    radius = pieces.radius_frac * p
    thickness = pieces.thickness_frac * p
    toward = np.array([math.cos(scene.light.azimuth_rad), math.sin(scene.light.azimuth_rad)])
    foot = _light_foot(scene)

    def light_dir(xy: np.ndarray) -> np.ndarray:
        if scene.light.kind == "area":
            return toward
        d = foot - xy
        return d / (np.linalg.norm(d) + 1e-9)

    def piece(xy: np.ndarray, base: float, char: str, highlight: bool) -> _Disc:
        top = pieces.black_bgr if char == "X" else pieces.white_bgr
        gain = pieces.highlight_gain * (130.0 if char == "X" else 60.0) if highlight else 0.0
        return _Disc(
            xy=xy,
            base_mm=base,
            radius_mm=radius,
            thickness_mm=thickness,
            top_bgr=top,
            side_bgr=_scaled(top, 0.68),
            rim_frac=pieces.rim_frac,
            rim_dark=pieces.rim_dark,
            highlight=gain,
            light_dir=light_dir(xy),
            metal=False,
        )

    discs: list[_Disc] = []
    coin = scene.occluder if isinstance(scene.occluder, Coin) else None
    coin_disc = None
    if coin is not None:
        xy = board.to_world(np.asarray(coin.centre_frac) * p)[0]
        base = plate_h + (thickness if coin.on_square is not None else 0.0)
        coin_disc = _Disc(
            xy=xy,
            base_mm=base,
            radius_mm=coin.radius_frac * p,
            thickness_mm=coin.thickness_mm,
            top_bgr=coin.bgr,
            side_bgr=_scaled(coin.bgr, 0.6),
            rim_frac=0.1,
            rim_dark=0.75,
            highlight=90.0,
            light_dir=light_dir(xy),
            metal=True,
        )
        if coin.on_square is None:
            discs.append(coin_disc)
    if scene.supply is not None:
        _, spares = _supply_layout(board, scene.supply)
        discs.extend(piece(xy, 0.0, char, False) for xy, char in spares)
    centres = board.to_world(board.square_centres_mm() + pieces.offsets_frac * p)
    for square, char in enumerate(pieces.cells):
        if char != ".":
            discs.append(piece(centres[square], plate_h, char, pieces.highlights[square]))
    if coin_disc is not None and coin.on_square is not None:
        discs.append(coin_disc)
    return discs


@dataclass(frozen=True, eq=False)
class _Disc:
    """A flat cylinder standing on a surface: a piece or a coin."""

    xy: np.ndarray  # world centre
    base_mm: float  # height of the surface it stands on
    radius_mm: float
    thickness_mm: float
    top_bgr: BGR
    side_bgr: BGR
    rim_frac: float
    rim_dark: float
    highlight: float  # added grey levels at the specular spot; 0: none
    light_dir: np.ndarray  # world unit vector from the disc towards the light
    metal: bool


def _draw_table_shadows(canvas: np.ndarray, cmap: _CanvasMap, scene: Scene) -> None:
    """Shadows cast on the table: by the plate and by supply pieces."""
    board, light = scene.board, scene.light
    half = board.plate_half_mm
    ex, ey = board.axes
    plate = _rect(np.asarray(board.centre_xy), (half, half), ex, ey)
    plate_h = board.plate_height_mm
    polys = [cmap.to_px(_shadow_of(scene, plate, plate_h))]
    _apply_shadows(canvas, polys, cmap.length_px(light.softness * plate_h + 0.5), light.strength)
    if scene.supply is not None:
        _, spares = _supply_layout(board, scene.supply)
        radius = board.pieces.radius_frac * board.pitch_mm
        thickness = board.pieces.thickness_frac * board.pitch_mm
        polys = [cmap.to_px(_shadow_of(scene, _circle(xy, radius, 24), thickness)) for xy, _ in spares]
        _apply_shadows(canvas, polys, cmap.length_px(light.softness * thickness + 0.5), light.strength)
        contact = [cmap.to_px(_circle(xy, radius * 1.05, 24)) for xy, _ in spares]
        _apply_shadows(canvas, contact, cmap.length_px(0.06 * radius) + 0.7, CONTACT_SHADOW_STRENGTH)


def _draw_plate(canvas: np.ndarray, cmap: _CanvasMap, board: Board, rng: np.random.Generator) -> None:
    """The plate's visible side, its top (wood grain for wood) and the grid lines on it."""
    plate, grid = board.plate, board.grid
    p = board.pitch_mm
    h = board.plate_height_mm
    half = board.plate_half_mm
    ex, ey = board.axes
    centre = np.asarray(board.centre_xy)
    corners = _rect(centre, (half, half), ex, ey)
    top = cmap.to_px(corners, h)
    _fill(canvas, _hull(np.vstack([cmap.to_px(corners, 0.0), top])), _scaled(plate.bgr, 0.62))

    box = _roi(top, 2.0, cmap.size)
    if box is None:
        return
    x0, y0, x1, y1 = box
    rw, rh = x1 - x0, y1 - y0
    colour = np.empty((rh, rw, 3), np.float32)
    colour[:] = plate.bgr
    mottle = _smooth_noise(rng, (rh, rw), (cmap.length_px(0.6 * p), cmap.length_px(0.6 * p)))
    shade = 1.0 + 0.012 * mottle
    if plate.kind == "wood":
        # board-frame x, y of every other pixel (the grain is smooth at that scale; scaled up below): the
        # canvas maps the board frame by a rotation and a scale
        k = cmap.scale * cmap.magnification(h)
        c0 = cmap.to_px(centre, h)[0]
        us = np.arange(x0, x1, WOOD_STEP, dtype=np.float32) - c0[0]
        vs = np.arange(y0, y1, WOOD_STEP, dtype=np.float32)[:, None] - c0[1]
        bx = (us * ex[0] + vs * ex[1]) / k
        by = (us * ey[0] + vs * ey[1]) / k
        period = plate.grain_period_frac * p
        # the grain runs along the board's x axis and bends gently: a few slow waves, in cycles of grain
        streak_rng = np.random.default_rng(plate.grain_seed)
        phases = streak_rng.uniform(0.0, 2 * math.pi, 2)
        wander = 0.6 * np.sin(bx * (2 * math.pi / (3.0 * p)) + phases[0]) + 0.35 * np.sin(
            (bx / (1.3 * p) + by / (4.0 * p)) * (2 * math.pi) + phases[1]
        )
        grain = np.sin((by / period + wander) * (2 * math.pi))
        # fine streaks along the grain: a 1-D random profile across it
        span = 2.0 * half * 1.5
        knots = np.arange(-span, span, 0.6, dtype=np.float32)
        profile = streak_rng.standard_normal(len(knots)).astype(np.float32)
        streak = np.interp(by + 0.3 * period * wander, knots, profile).astype(np.float32)
        wood = cv2.resize(0.07 * grain + 0.035 * streak, (rw, rh), interpolation=cv2.INTER_LINEAR)
        shade = shade + wood
    colour *= shade[:, :, None]

    lines = np.zeros((rh, rw), np.uint8)
    w_mm = grid.width_frac * p
    reach = 1.5 * p + w_mm / 2
    for i in range(4):
        offset = (i - 1.5) * p
        for along, across in ((ey, ex), (ex, ey)):
            rect = _rect(centre + across * offset, (w_mm / 2, reach), across, along)
            _fill(lines, cmap.to_px(rect, h) - (x0, y0), 255)
    ink = lines.astype(np.float32) / 255.0
    if grid.engraved:
        ink = cv2.GaussianBlur(ink, (0, 0), max(0.5, 0.3 * cmap.length_px(w_mm, h)))
    colour += (np.asarray(grid.bgr, np.float32) - colour) * ink[:, :, None]

    alpha = np.zeros((rh, rw), np.uint8)
    _fill(alpha, top - (x0, y0), 255)
    a = alpha.astype(np.float32)[:, :, None] / 255.0
    roi = canvas[y0:y1, x0:x1]
    roi[:] = np.clip(roi + (colour - roi) * a, 0, 255).astype(np.uint8)


def _draw_discs(canvas: np.ndarray, cmap: _CanvasMap, scene: Scene, rng: np.random.Generator) -> None:
    """Shadows on the plate, then every disc: sides before tops, as no side can hide a top of the same
    height (the sight line to a top runs above every side)."""
    board, light = scene.board, scene.light
    discs = _piece_discs(scene)
    plate_h = board.plate_height_mm
    on_plate = [d for d in discs if d.base_mm == plate_h]
    if on_plate:
        polys = [
            cmap.to_px(_shadow_of(scene, _circle(d.xy, d.radius_mm, 24), d.thickness_mm), plate_h)
            for d in on_plate
        ]
        thickness = max(d.thickness_mm for d in on_plate)
        _apply_shadows(canvas, polys, cmap.length_px(light.softness * thickness + 0.5), light.strength)
        contact = [cmap.to_px(_circle(d.xy, d.radius_mm * 1.05, 24), plate_h) for d in on_plate]
        radius = max(d.radius_mm for d in on_plate)
        _apply_shadows(canvas, contact, cmap.length_px(0.06 * radius) + 0.7, CONTACT_SHADOW_STRENGTH)
    # a coin lying on a piece goes after all pieces; the rest stand on one level per group
    last = discs[-1] if discs and discs[-1].base_mm > plate_h else None
    standing = discs[:-1] if last is not None else discs
    for d in standing:
        _draw_disc_side(canvas, cmap, d)
    for d in standing:
        _draw_disc_top(canvas, cmap, d, rng)
    if last is not None:
        _draw_disc_side(canvas, cmap, last)
        _draw_disc_top(canvas, cmap, last, rng)


def _draw_disc_side(canvas: np.ndarray, cmap: _CanvasMap, d: _Disc) -> None:
    """The disc's cylinder wall: the hull of its foot and top circles as the camera sees them."""
    foot = _circle(cmap.to_px(d.xy, d.base_mm)[0], cmap.length_px(d.radius_mm, d.base_mm))
    top_h = d.base_mm + d.thickness_mm
    top = _circle(cmap.to_px(d.xy, top_h)[0], cmap.length_px(d.radius_mm, top_h))
    _fill(canvas, _hull(np.vstack([foot, top])), d.side_bgr)


def _draw_disc_top(canvas: np.ndarray, cmap: _CanvasMap, d: _Disc, rng: np.random.Generator) -> None:
    """The disc's top face: a slight dome, a darker rim, a specular spot; coins get a raised rim, relief
    and a metallic sheen."""
    top_h = d.base_mm + d.thickness_mm
    c = cmap.to_px(d.xy, top_h)[0]
    r = cmap.length_px(d.radius_mm, top_h)
    box = _roi(c.reshape(1, 2), r + 2.0, cmap.size)
    if box is None:
        return
    x0, y0, x1, y1 = box
    xs = np.arange(x0, x1, dtype=np.float32)[None, :] - np.float32(c[0])
    ys = np.arange(y0, y1, dtype=np.float32)[:, None] - np.float32(c[1])
    dist = np.sqrt(xs * xs + ys * ys) / np.float32(r)  # in radii
    alpha = np.clip((1.0 - dist) * r + 0.5, 0.0, 1.0)
    rim_start = 1.0 - d.rim_frac
    rim = np.clip((dist - rim_start) / d.rim_frac, 0.0, 1.0)
    shade = (1.0 + DOME * (0.5 - dist * dist)) * (1.0 - (1.0 - d.rim_dark) * rim**1.5)
    lx, ly = float(d.light_dir[0]), float(d.light_dir[1])
    if d.metal:
        along_light = (xs * lx + ys * ly) / np.float32(r)
        ring = np.exp(-(((dist - 0.86) / 0.05) ** 2))
        relief = _smooth_noise(rng, dist.shape, (max(1.0, r / 4), max(1.0, r / 4)))
        shade = shade * (1.0 + 0.25 * along_light + 0.15 * ring + 0.06 * relief * (dist < 0.78))
    colour = shade[:, :, None] * np.asarray(d.top_bgr, np.float32)
    if d.highlight > 0.0:
        # the spot sits towards the light on the slightly domed top
        hx, hy = 0.4 * lx, 0.4 * ly
        spot = np.exp(-((xs / np.float32(r) - hx) ** 2 + (ys / np.float32(r) - hy) ** 2) / (2 * 0.16**2))
        colour += (d.highlight * spot)[:, :, None]
    a = alpha[:, :, None]
    roi = canvas[y0:y1, x0:x1]
    roi[:] = np.clip(roi + (colour - roi) * a, 0, 255).astype(np.uint8)


# --- occluders in image space ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _ImageFrame:
    """What the image-space occluders need to know about the board in the image."""

    squares: np.ndarray  # (9, 2) drawn-frame square centres
    pitch_px: float
    px_per_mm: float
    shadow_dir: np.ndarray  # image unit vector along which shadows fall
    shadow_per_mm: float  # image shadow offset per millimetre of height of the caster


def _image_frame(scene: Scene) -> _ImageFrame:
    board = scene.board
    squares = square_centres_px(scene)
    pitch = float(np.mean(np.linalg.norm(squares[[1, 3, 5, 7]] - squares[4], axis=1)))
    centre = np.asarray(board.centre_xy)
    offset = _shadow_vector(scene, centre, SHADOW_PROBE_MM)
    ends = scene.camera.project(np.vstack([centre, centre + offset]), board.plate_height_mm)
    step = ends[1] - ends[0]
    norm = float(np.linalg.norm(step))
    return _ImageFrame(
        squares=squares,
        pitch_px=pitch,
        px_per_mm=pitch / board.pitch_mm,
        shadow_dir=step / max(norm, 1e-9),
        shadow_per_mm=norm / SHADOW_PROBE_MM,
    )


def _capsule(xs: np.ndarray, ys: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distance from each pixel to the segment a-b, and the position along it (0 at a, 1 at b)."""
    ab = b - a
    length2 = float(ab @ ab) + 1e-9
    t = np.clip(((xs - a[0]) * ab[0] + (ys - a[1]) * ab[1]) / length2, 0.0, 1.0)
    dx = xs - (a[0] + t * ab[0])
    dy = ys - (a[1] + t * ab[1])
    return np.sqrt(dx * dx + dy * dy), t


def _rotate(v: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _hand_parts(
    hand: Hand, frame: _ImageFrame, magnify: float
) -> list[tuple[np.ndarray, np.ndarray, float, str]]:
    """Capsules (a, b, radius, part) in image pixels, drawn in this order: arm, palm, thumb, fingers."""
    mm = frame.px_per_mm * magnify * hand.scale
    tip = frame.squares[hand.square] + np.asarray(hand.tip_jitter_frac) * frame.pitch_px
    # the arm comes in from the nearest image edge, give or take
    edges = [
        (tip[0], math.pi),
        (IMAGE_W - tip[0], 0.0),
        (tip[1], -math.pi / 2),
        (IMAGE_H - tip[1], math.pi / 2),
    ]
    base_angle = min(edges)[1] + hand.approach_jitter_rad
    u = np.array([math.cos(base_angle), math.sin(base_angle)])  # from the fingertips towards the arm
    n = np.array([-u[1], u[0]])
    finger_len, finger_r = 72.0 * mm, 8.5 * mm
    palm_len, palm_w = 95.0 * mm, 84.0 * mm
    lengths = (0.92, 1.0, 0.94, 0.76)  # index, middle, ring, little
    # the middle finger's visible (possibly curled) tip lands on the target, over the grid
    knuckles = tip + u * finger_len * lengths[1] * hand.curl[1]
    palm_centre = knuckles + u * palm_len / 2
    parts: list[tuple[np.ndarray, np.ndarray, float, str]] = []
    arm_far = palm_centre + u * (IMAGE_W + IMAGE_H)
    wrist = palm_centre + u * (palm_len / 2 + 20.0 * mm)
    parts.append((wrist, arm_far, 30.0 * mm, "sleeve"))
    parts.append((palm_centre, wrist + u * 10.0 * mm, 27.0 * mm, "skin"))
    parts.append((knuckles + u * palm_w * 0.35, palm_centre + u * palm_len * 0.2, palm_w / 2, "skin"))
    side = 1.0 if hand.right else -1.0
    thumb_base = palm_centre + n * side * palm_w * 0.42 + u * palm_len * 0.1
    thumb_dir = _rotate(-u, side * hand.thumb_angle_rad)
    parts.append((thumb_base, thumb_base + thumb_dir * 58.0 * mm, 10.5 * mm, "skin"))
    for i in range(4):
        lateral = (i - 1.5) * side * palm_w * 0.235
        base = knuckles + n * lateral + u * (1.0 - lengths[i]) * finger_len * 0.4
        direction = _rotate(-u, (i - 1.5) * side * hand.spread_rad)
        end = base + direction * finger_len * lengths[i] * hand.curl[i]
        parts.append((base + u * 15.0 * mm, end, finger_r * (1.0 if i < 3 else 0.85), "finger"))
    return parts


def _part_box(
    a: np.ndarray, b: np.ndarray, pad: float, box: tuple[int, int, int, int], step: int = 1
) -> tuple[int, int, int, int] | None:
    """The part of ``box`` (x0, y0, x1, y1) within ``pad`` of the segment a-b, in cells of ``step`` pixels
    counted from the box's corner."""
    x0, y0, x1, y1 = box
    lo = np.minimum(a, b) - pad
    hi = np.maximum(a, b) + pad
    i0 = max(0, math.floor((lo[0] - x0) / step))
    j0 = max(0, math.floor((lo[1] - y0) / step))
    i1 = min(-(-(x1 - x0) // step), math.ceil((hi[0] - x0) / step) + 1)
    j1 = min(-(-(y1 - y0) // step), math.ceil((hi[1] - y0) / step) + 1)
    if i1 <= i0 or j1 <= j0:
        return None
    return i0, j0, i1, j1


def _draw_hand(image: np.ndarray, scene: Scene, hand: Hand) -> None:
    """A skin-coloured hand reaching in from an image edge, fingers over the grid, with its shadow.

    Each capsule is evaluated only over its own bounding box: the arm alone can span the frame.
    """
    frame = _image_frame(scene)
    magnify = scene.camera.height_mm / (scene.camera.height_mm - hand.height_mm)
    parts = _hand_parts(hand, frame, magnify)
    shadow_shift = frame.shadow_dir * frame.shadow_per_mm * hand.height_mm
    ends = np.vstack([np.vstack([a, b]) for a, b, _, _ in parts])
    pad = max(r for _, _, r, _ in parts) + float(np.linalg.norm(shadow_shift)) + 8.0
    box = _roi(ends, pad, (IMAGE_W, IMAGE_H))
    if box is None:
        return
    x0, y0, x1, y1 = box
    # the shadow: the hand's outline, shifted and softened, at half resolution (it is blurred anyway)
    step = HAND_SHADOW_STEP
    cover = np.zeros((-(-(y1 - y0) // step), -(-(x1 - x0) // step)), np.float32)
    for a, b, r, _ in parts:
        sub = _part_box(a + shadow_shift, b + shadow_shift, r + 1.0, box, step)
        if sub is None:
            continue
        i0, j0, i1, j1 = sub
        xs = (x0 + step * np.arange(i0, i1, dtype=np.float32))[None, :]
        ys = (y0 + step * np.arange(j0, j1, dtype=np.float32))[:, None]
        dist, _ = _capsule(xs, ys, a + shadow_shift, b + shadow_shift)
        cell = cover[j0:j1, i0:i1]
        np.maximum(cell, np.clip((r - dist) / step, 0.0, 1.0), out=cell)
    sigma = max(1.0, 0.5 * scene.light.softness * hand.height_mm * frame.px_per_mm) / step
    cover = cv2.GaussianBlur(cover, (0, 0), sigma)
    cover = cv2.resize(cover, (cover.shape[1] * step, cover.shape[0] * step), interpolation=cv2.INTER_LINEAR)
    roi = image[y0:y1, x0:x1]
    roi *= (1.0 - scene.light.strength * cover[: y1 - y0, : x1 - x0])[:, :, None]

    skin = np.asarray(hand.skin_bgr, np.float32)
    sleeve = np.asarray(hand.sleeve_bgr if hand.sleeve_bgr is not None else hand.skin_bgr, np.float32)
    nail = np.clip(skin * 1.12 + np.float32(12.0), 0, 255)
    for a, b, r, part in parts:
        sub = _part_box(a, b, r + 1.0, box)
        if sub is None:
            continue
        i0, j0, i1, j1 = sub
        xs = np.arange(x0 + i0, x0 + i1, dtype=np.float32)[None, :]
        ys = np.arange(y0 + j0, y0 + j1, dtype=np.float32)[:, None]
        dist, t = _capsule(xs, ys, a, b)
        alpha = np.clip(r - dist + 0.5, 0.0, 1.0)
        # a rounded body: bright along its middle, darker towards its outline
        depth = np.sqrt(np.clip(1.0 - dist / r, 0.0, 1.0))
        shade = (0.6 + 0.4 * depth)[:, :, None]
        colour = (sleeve if part == "sleeve" else skin) * shade
        if part == "finger":
            # a nail near the tip, on the back of the finger
            nail_zone = np.clip((t - 0.78) * 12.0, 0.0, 1.0) * np.clip((0.55 - dist / r) * 6.0, 0.0, 1.0)
            colour += (nail - colour) * (0.6 * nail_zone)[:, :, None]
        cell = roi[j0:j1, i0:i1]
        cell += (colour - cell) * alpha[:, :, None]


def _draw_pen(image: np.ndarray, scene: Scene, pen: Pen) -> None:
    """A pen lying across the board: a shaded cylinder with a cap at one end and a cone at the other."""
    frame = _image_frame(scene)
    board = scene.board
    p = board.pitch_mm
    centre = board.to_world(np.asarray(pen.centre_frac) * p)[0]
    ex, ey = board.axes
    axis = ex * math.cos(pen.angle_rad) + ey * math.sin(pen.angle_rad)
    lift = board.plate_height_mm + pen.radius_mm
    ends = scene.camera.project(
        np.vstack([centre - axis * pen.length_mm / 2, centre + axis * pen.length_mm / 2]), lift
    )
    a, b = ends[0], ends[1]
    radius = pen.radius_mm * frame.px_per_mm
    shadow_shift = frame.shadow_dir * frame.shadow_per_mm * lift
    pad = radius + float(np.linalg.norm(shadow_shift)) + 6.0
    box = _roi(ends, pad, (IMAGE_W, IMAGE_H))
    if box is None:
        return
    x0, y0, x1, y1 = box
    tip_start = 0.86  # the last part of the length tapers to the writing tip

    def outline(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dist, t = _capsule(xs, ys, a, b)
        r = radius * np.where(t > tip_start, 1.0 - 0.7 * (t - tip_start) / (1.0 - tip_start), 1.0)
        return dist, t, r

    xs = np.arange(x0, x1, dtype=np.float32)[None, :]
    ys = np.arange(y0, y1, dtype=np.float32)[:, None]
    dist, _, r = outline(xs - np.float32(shadow_shift[0]), ys - np.float32(shadow_shift[1]))
    cover = cv2.GaussianBlur(np.clip(r - dist, 0.0, 1.0).astype(np.float32), (0, 0), max(1.0, 0.5 * radius))
    roi = image[y0:y1, x0:x1]
    roi *= (1.0 - 0.8 * scene.light.strength * cover)[:, :, None]

    dist, t, r = outline(xs, ys)
    alpha = np.clip(r - dist + 0.5, 0.0, 1.0)
    # signed position across the pen, -1..1, for the cylinder's shading
    ab = (b - a) / (np.linalg.norm(b - a) + 1e-9)
    across = ((xs - a[0]) * -ab[1] + (ys - a[1]) * ab[0]) / np.maximum(r, 1e-3)
    lit_side = -1.0 if (frame.shadow_dir @ np.array([-ab[1], ab[0]])) > 0 else 1.0
    body = np.sqrt(np.clip(1.0 - across * across, 0.0, 1.0))
    spot = np.exp(-(((across - 0.45 * lit_side) / 0.14) ** 2))
    shade = 0.45 + 0.45 * body + 0.1 * lit_side * np.clip(across, -1.0, 1.0)
    colour = np.empty((*dist.shape, 3), np.float32)
    colour[:] = pen.body_bgr
    colour[t < 0.3] = pen.cap_bgr
    colour[t > tip_start] = pen.tip_bgr
    colour = colour * shade[:, :, None] + (90.0 * spot)[:, :, None]
    roi += (colour - roi) * alpha[:, :, None]


# --- optics and sensor -----------------------------------------------------------------------------------


def _post(image: np.ndarray, scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """Light gradient, vignetting, exposure and white balance; defocus and motion blur; sensor noise;
    JPEG. Returns the decoded uint8 frame."""
    post = scene.post
    # the multiplicative light field is smooth: compute it coarse and scale it up
    gw, gh = IMAGE_W // 16, IMAGE_H // 16
    gx = (np.arange(gw, dtype=np.float32)[None, :] + 0.5) * (IMAGE_W / gw)
    gy = (np.arange(gh, dtype=np.float32)[:, None] + 0.5) * (IMAGE_H / gh)
    squares = square_centres_px(scene)
    centre = squares[4]
    pitch = float(np.mean(np.linalg.norm(squares[[1, 3, 5, 7]] - centre, axis=1)))
    across_board = 2.0 * scene.board.plate_half_mm / scene.board.pitch_mm * pitch
    dx, dy = math.cos(post.gradient_angle_rad), math.sin(post.gradient_angle_rad)
    along = ((gx - centre[0]) * dx + (gy - centre[1]) * dy) / across_board
    field = np.exp(math.log(post.gradient_ratio) * np.clip(along, -0.9, 0.9))
    cx, cy = scene.camera.principal_px
    rho2 = ((gx - cx) ** 2 + (gy - cy) ** 2) / (cx * cx + cy * cy)
    field = field * (1.0 - post.vignette * rho2) * post.exposure
    field = cv2.resize(field.astype(np.float32), (IMAGE_W, IMAGE_H), interpolation=cv2.INTER_LINEAR)
    image *= field[:, :, None]
    image *= np.asarray(post.wb_gains, np.float32)

    if post.defocus_sigma_px >= 0.3:
        image = cv2.GaussianBlur(image, (0, 0), post.defocus_sigma_px)
    if post.motion_px > 0.0:
        image = cv2.filter2D(image, -1, _motion_kernel(post.motion_px, post.motion_angle_rad))
    np.clip(image, 0.0, 255.0, out=image)
    sigma = np.sqrt(post.noise_floor**2 + post.noise_shot * image)
    image += sigma * rng.standard_normal(image.shape, dtype=np.float32)
    frame = np.clip(image + 0.5, 0, 255).astype(np.uint8)
    ok, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, post.jpeg_quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR)


def _motion_kernel(length_px: float, angle_rad: float) -> np.ndarray:
    """A normalised line kernel ``length_px`` long (anti-aliased), for a straight camera shake."""
    size = 2 * math.ceil(length_px / 2) + 3
    kernel = np.zeros((size, size), np.float32)
    mid = (size - 1) / 2
    dx, dy = math.cos(angle_rad) * length_px / 2, math.sin(angle_rad) * length_px / 2
    pts = np.array([[mid - dx, mid - dy], [mid + dx, mid + dy]])
    cv2.line(kernel, tuple(_fixed(pts[0]).ravel()), tuple(_fixed(pts[1]).ravel()), 1.0, 1, cv2.LINE_AA, SHIFT)
    return kernel / kernel.sum()


__all__ = ["TAGS", "Sample", "Scene", "make_frame", "render", "sample_scene", "square_centres_px"]
