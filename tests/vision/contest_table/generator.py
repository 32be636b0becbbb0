"""Independent generator of tic-tac-toe table frames with ground truth (a tuning set).

Contract
--------
``make_set(n, seed)`` returns ``n`` :class:`Sample` objects. Sample ``i`` depends only on ``(seed, i)``
(never on ``n``), and the same ``(seed, i)`` always gives the same pixels. Even indices are ``contest``
frames (a blue or green painted board with black lines and large foam/plastic pieces, as on a 2024 contest
table); odd indices are ``general`` frames drawn from the wide list of conditions in README.md.
Indices 3 and 14 of every 20 (10 %, one contest and one general frame) are occluded, by a hand, a pen or a
coin in turn.

Geometry: the board lives on a plane with its own units (1 unit = 1 pitch, origin at the board centre,
``u`` right, ``v`` down). The plane is mapped to the image by ``H = T(centre) . pitch*R(angle) . P(g)``
where ``P`` is a pure projective term (camera tilt) whose Jacobian at the origin is the identity, so the
reported ``centre_px``, ``angle_deg`` and ``pitch_px`` are exact at the board centre.
Everything lying on the table plane (board, paper, tape, spare pieces, pen, coin) is drawn on a canvas of
that plane and warped once; the table texture, a hand, the lighting and the camera defects are in image space.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

FRAME_W = 640
FRAME_H = 480
PITCH_MIN = 35.0
PITCH_MAX = 90.0
ANGLE_MIN_EXCL = -45.0
ANGLE_MAX = 45.0
TILT_MAX_DEG = 12.0
FRAME_MARGIN_PX = 4.0  # the plate stays at least this far inside the frame

SUPERSAMPLE = 1.1  # canvas pixels per image pixel at the board centre
CANVAS_HALF_UNITS = 4.0  # the plane canvas spans [-4, 4] pitches each way
SUBPIX_SHIFT = 4  # fixed-point bits for cv2 drawing
SUBPIX = 1 << SUBPIX_SHIFT

BLACK_GREY = (15.0, 55.0)
WHITE_GREY = (205.0, 245.0)
CONTEST_BLACK_GREY = (20.0, 50.0)
CONTEST_WHITE_GREY = (200.0, 245.0)
RADIUS_RANGE = (0.20, 0.45)
CONTEST_RADIUS_RANGE = (0.38, 0.45)
LARGE_RADIUS = 0.38
SMALL_RADIUS = 0.28
LINE_WIDTH_RANGE = (0.02, 0.12)
THIN_LINE = 0.04
THICK_LINE = 0.08
WHITE_NEAR_PLATE_GREY = 20.0
MAX_PIECE_OFFSET = 0.06  # pieces sit a little off-centre (pitch units)

OCCLUDED_CYCLE = 20
# indices (mod 20) of occluded frames: exactly 10 % of every 20 frames, one contest and one general frame
OCCLUDED_SLOTS = (3, 14)
OCCLUDERS = ("hand", "pen", "coin")  # a coin needs an empty square, else it becomes a pen
JPEG_RANGE = (50, 95)
JPEG_LOW = 65
MOTION_BLUR_MAX_PX = 2.0
GRADIENT_MAX_RATIO = 2.0

PLATE_KINDS_GENERAL: tuple[tuple[str, float], ...] = (
    ("white", 0.20),
    ("grey", 0.08),
    ("wood", 0.12),
    ("dark", 0.10),
    ("blue", 0.10),
    ("green", 0.10),
    ("red", 0.08),
    ("yellow", 0.08),
    ("pastel", 0.14),
)
TABLE_KINDS: tuple[str, ...] = ("wood", "cloth", "desk", "paper", "dark")
TAPE_COLOURS_BGR: tuple[tuple[float, float, float], ...] = (
    (40.0, 40.0, 200.0),  # red
    (45.0, 60.0, 215.0),  # red-orange
    (40.0, 190.0, 225.0),  # yellow
    (190.0, 120.0, 40.0),  # blue
    (60.0, 160.0, 60.0),  # green
    (235.0, 235.0, 235.0),  # white
    (35.0, 35.0, 35.0),  # black
)
COIN_BGR: dict[str, tuple[float, float, float]] = {
    "steel": (178.0, 180.0, 176.0),
    "brass": (70.0, 165.0, 205.0),
    "copper": (55.0, 105.0, 185.0),
}


@dataclass(frozen=True)
class Sample:
    """One frame and its truth.

    ``board`` is row-major in the board's own frame ('X' black, 'O' white, '.' empty); ``angle_deg`` is in
    (-45, 45], counter-clockwise as seen with image y down; ``pitch_px`` is the mean distance between
    neighbouring square centres at the board centre; ``occluded`` is True when a hand, a pen or a coin lies
    over the board (the board string never lists the occluder).
    """

    image: np.ndarray
    board: str
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    occluded: bool
    tags: frozenset[str]


@dataclass(frozen=True)
class RenderInfo:
    """Extra truth for tests and analysis (not part of the public Sample)."""

    plate_bgr: tuple[float, float, float]
    piece_radius: float  # pitch units
    coin_square: int | None  # index 0..8 of the square holding a coin
    homography: np.ndarray  # 3x3, board plane (pitch units) -> image pixels


def make_set(n: int, seed: int) -> list[Sample]:
    """Return ``n`` frames; frame ``i`` is ``render(seed, i)`` and so independent of ``n``."""
    return [render(seed, i)[0] for i in range(n)]


def render(seed: int, index: int) -> tuple[Sample, RenderInfo]:
    """Render frame ``index`` of the set ``seed`` (deterministic in ``(seed, index)``)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(index)]))
    occluder: str | None = None
    if index % OCCLUDED_CYCLE in OCCLUDED_SLOTS:  # hand, pen and coin in turn
        turn = (index // OCCLUDED_CYCLE) * len(OCCLUDED_SLOTS) + OCCLUDED_SLOTS.index(index % OCCLUDED_CYCLE)
        occluder = OCCLUDERS[turn % len(OCCLUDERS)]
    return _Frame(rng, contest=index % 2 == 0, occluder=occluder).build()


# ----------------------------------------------------------------------------------------------- helpers


def _hsv_bgr(h: float, s: float, v: float) -> np.ndarray:
    px = np.uint8([[[int(h) % 180, int(np.clip(s, 0, 255)), int(np.clip(v, 0, 255))]]])
    return cv2.cvtColor(px, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def _grey_of(bgr: np.ndarray | tuple[float, float, float]) -> float:
    b, g, r = (float(c) for c in bgr)
    return 0.114 * b + 0.587 * g + 0.299 * r


def _smooth_noise(rng: np.random.Generator, h: int, w: int, cells_y: int, cells_x: int) -> np.ndarray:
    """Zero-mean unit-ish noise of shape (h, w), smooth over about h/cells_y by w/cells_x pixels."""
    small = rng.standard_normal((max(cells_y, 2), max(cells_x, 2))).astype(np.float32)
    return cv2.resize(small, (max(w, 1), max(h, 1)), interpolation=cv2.INTER_CUBIC)


def _fp(x: float) -> int:
    return round(x * SUBPIX)


def _rot(a_deg: float) -> np.ndarray:
    """2x2 map from board axes to image axes, counter-clockwise as seen with y down."""
    a = math.radians(a_deg)
    return np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])


class _Canvas:
    """A float BGR + alpha canvas of the table plane (pitch units -> canvas pixels)."""

    def __init__(self, scale: float) -> None:
        self.s = scale
        self.n = math.ceil(2 * CANVAS_HALF_UNITS * scale)
        self.rgba = np.zeros((self.n, self.n, 4), np.float32)
        self.col = self.rgba[..., :3]
        self.alpha = self.rgba[..., 3]

    def px(self, u: float, v: float) -> tuple[float, float]:
        return (u + CANVAS_HALF_UNITS) * self.s, (v + CANVAS_HALF_UNITS) * self.s

    def roi(self, x0: float, y0: float, x1: float, y1: float) -> tuple[int, int, int, int] | None:
        xa, ya = max(math.floor(x0) - 2, 0), max(math.floor(y0) - 2, 0)
        xb, yb = min(math.ceil(x1) + 3, self.n), min(math.ceil(y1) + 3, self.n)
        if xa >= xb or ya >= yb:
            return None
        return xa, ya, xb, yb

    def poly_mask(self, polys_uv: list[np.ndarray]) -> tuple[np.ndarray, int, int] | None:
        """Antialiased uint8 mask of polygons given in plane units, cut to its bounding box."""
        pts = [np.array([self.px(u, v) for u, v in p]) for p in polys_uv]
        allp = np.concatenate(pts)
        box = self.roi(allp[:, 0].min(), allp[:, 1].min(), allp[:, 0].max(), allp[:, 1].max())
        if box is None:
            return None
        xa, ya, xb, yb = box
        mask = np.zeros((yb - ya, xb - xa), np.uint8)
        fixed = [np.round((p - [xa, ya]) * SUBPIX).astype(np.int32) for p in pts]
        for poly in fixed:  # one call each: a single call would leave the overlaps out (even-odd fill)
            cv2.fillPoly(mask, [poly], 255, cv2.LINE_AA, SUBPIX_SHIFT)
        return mask, xa, ya

    def blend(
        self,
        mask: np.ndarray,
        xa: int,
        ya: int,
        colour: np.ndarray | Callable[[int, int], np.ndarray],
        opacity: float = 1.0,
    ) -> None:
        """Paint ``colour`` (BGR, or a function (h, w) -> (h, w, 3) texture) through ``mask`` at (xa, ya)."""
        h, w = mask.shape
        m = (mask.astype(np.float32) * (opacity / 255.0))[..., None]
        tex = colour(h, w) if callable(colour) else np.asarray(colour, np.float32)
        reg = self.col[ya : ya + h, xa : xa + w]
        reg += m * (tex - reg)
        a = self.alpha[ya : ya + h, xa : xa + w]
        np.maximum(a, m[..., 0], out=a)

    def disc_mask(self, cx: float, cy: float, r: float) -> tuple[np.ndarray, int, int] | None:
        box = self.roi(cx - r, cy - r, cx + r, cy + r)
        if box is None:
            return None
        xa, ya, xb, yb = box
        mask = np.zeros((yb - ya, xb - xa), np.uint8)
        cv2.circle(mask, (_fp(cx - xa), _fp(cy - ya)), max(_fp(r), 1), 255, -1, cv2.LINE_AA, SUBPIX_SHIFT)
        return mask, xa, ya


def _rect_uv(cu: float, cv: float, length: float, width: float, ang: float) -> np.ndarray:
    """Corners of a rectangle in plane units centred at (cu, cv), long side along angle ``ang`` (rad)."""
    d = np.array([math.cos(ang), math.sin(ang)])
    p = np.array([-d[1], d[0]])
    c = np.array([cu, cv])
    hl, hw = length / 2, width / 2
    return np.array([c - d * hl - p * hw, c + d * hl - p * hw, c + d * hl + p * hw, c - d * hl + p * hw])


# ------------------------------------------------------------------------------------------------- frame


@dataclass
class _Piece:
    u: float
    v: float
    black: bool


class _Frame:
    """Draws one frame; every random choice is taken from ``rng`` in a fixed order."""

    def __init__(self, rng: np.random.Generator, contest: bool, occluder: str | None) -> None:
        self.rng = rng
        self.contest = contest
        self.occluder = occluder
        self.tags: set[str] = {"contest" if contest else "general"}

    def u(self, a: float = 0.0, b: float = 1.0) -> float:
        return float(self.rng.uniform(a, b))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    # ---------------------------------------------------------------------------------------- choices

    def _choose_board(self) -> str:
        mode = self.rng.random()
        full_p = 0.22 if self.contest else 0.10
        if mode < 0.08:
            self.tags.add("empty-board")
            return "." * 9
        if mode < 0.08 + full_p:
            self.tags.add("full-board")
            cells = list("XXXXXOOOO") if self.chance(0.8) else list(self.rng.choice(["X", "O"], 9))
            self.rng.shuffle(cells)
            return "".join(cells)
        k = int(self.rng.integers(1, 9))
        if self.chance(0.7):  # legal-looking: X moves first
            nx = (k + 1) // 2
            marks = ["X"] * nx + ["O"] * (k - nx)
        else:
            marks = list(self.rng.choice(["X", "O"], k))
        cells = marks + ["."] * (9 - k)
        self.rng.shuffle(cells)
        return "".join(cells)

    def _choose_plate(self) -> tuple[str, np.ndarray]:
        if self.contest:
            kind = "blue" if self.chance(0.5) else "green"
        else:
            names = [k for k, _ in PLATE_KINDS_GENERAL]
            probs = np.array([p for _, p in PLATE_KINDS_GENERAL])
            kind = str(self.rng.choice(names, p=probs / probs.sum()))
        u = self.u
        if kind == "white":
            g = u(212, 250)
            bgr = np.array([g - u(0, 8), g - u(0, 4), g], np.float32)
        elif kind == "grey":
            g = u(105, 190)
            bgr = np.full(3, g, np.float32)
        elif kind == "wood":
            bgr = _hsv_bgr(u(10, 22), u(80, 150), u(150, 220))
        elif kind == "dark":
            bgr = _hsv_bgr(u(0, 180), u(0, 80), u(25, 75))
        elif kind == "blue":
            bgr = _hsv_bgr(u(100, 118), u(150, 245), u(120, 215) if self.contest else u(90, 230))
        elif kind == "green":
            bgr = _hsv_bgr(u(48, 78), u(120, 230), u(90, 185) if self.contest else u(80, 220))
        elif kind == "red":
            bgr = _hsv_bgr(u(-6, 6), u(150, 240), u(120, 220))
        elif kind == "yellow":
            bgr = _hsv_bgr(u(22, 32), u(140, 230), u(170, 240))
        else:  # pastel
            bgr = _hsv_bgr(u(0, 180), u(35, 90), u(195, 245))
        self.tags.add(f"plate:{kind}")
        return kind, bgr

    def _choose_geometry(self, margin: float) -> None:
        """Pitch, angle, tilt and a centre that keeps the whole plate inside the frame."""
        if self.contest:
            pitch = self.u(45, 85)
            angle = self.u(-12, 12) if self.chance(0.75) else ANGLE_MAX - 90.0 * self.rng.random()
            tilt = self.u(0, 7)
        else:
            pitch = self.u(PITCH_MIN, PITCH_MAX)
            angle = ANGLE_MAX - 90.0 * self.rng.random()  # in (-45, 45]
            tilt = self.u(0, TILT_MAX_DEG)
        tilt_dir = self.u(0, 2 * math.pi)
        focal = self.u(480, 700)
        half = 1.5 + margin
        corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        while True:
            g = math.tan(math.radians(tilt)) * pitch / focal
            proj = np.array([[1, 0, 0], [0, 1, 0], [g * math.cos(tilt_dir), g * math.sin(tilt_dir), 1]])
            lin = np.eye(3)
            lin[:2, :2] = pitch * _rot(angle)
            h0 = lin @ proj
            pts = cv2.perspectiveTransform(corners[None].astype(np.float64), h0)[0]
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            span_x = (FRAME_W - 2 * FRAME_MARGIN_PX) - (hi[0] - lo[0])
            span_y = (FRAME_H - 2 * FRAME_MARGIN_PX) - (hi[1] - lo[1])
            if span_x > 0 and span_y > 0:
                break
            pitch *= 0.96
        cx = FRAME_MARGIN_PX - lo[0] + self.u(0, span_x)
        cy = FRAME_MARGIN_PX - lo[1] + self.u(0, span_y)
        trans = np.array([[1, 0, cx], [0, 1, cy], [0, 0, 1]])
        self.h = trans @ h0
        self.centre = (float(cx), float(cy))
        self.angle = float(angle)
        self.tilt = tilt
        self.focal = focal
        nb = cv2.perspectiveTransform(np.array([[[1.0, 0], [-1, 0], [0, 1], [0, -1], [0, 0]]]), self.h)[0]
        measured = float(np.mean(np.linalg.norm(nb[:4] - nb[4], axis=1)))
        # perspective makes the mean neighbour distance a hair longer than the scale at the centre: scale the
        # map about the centre so that the reported pitch is the sampled one (and stays within its range)
        k = pitch / measured
        self.h = np.array([[k, 0, cx * (1 - k)], [0, k, cy * (1 - k)], [0, 0, 1]]) @ self.h
        self.pitch = float(pitch)
        if self.pitch < 50:
            self.tags.add("pitch:small")
        elif self.pitch > 75:
            self.tags.add("pitch:large")
        if tilt > 6:
            self.tags.add("perspective")
        if abs(angle) > 15:
            self.tags.add("rotated")

    # ----------------------------------------------------------------------------------------- build

    def build(self) -> tuple[Sample, RenderInfo]:
        rng, u, chance = self.rng, self.u, self.chance
        board = self._choose_board()
        plate_kind, plate_bgr = self._choose_plate()
        plate_grey = _grey_of(plate_bgr)
        margin = u(0.08, 0.35)
        self._choose_geometry(margin)

        # lines
        light_lines = (not self.contest) and plate_grey < 95 and chance(0.85)
        if light_lines:
            line_bgr = np.full(3, u(195, 240), np.float32)
            self.tags.add("lines:light")
        else:
            line_bgr = np.full(3, u(10, 45) if self.contest else u(10, 65), np.float32)
            self.tags.add("lines:dark")
        lw = u(0.03, 0.10) if self.contest else u(*LINE_WIDTH_RANGE)
        if lw < THIN_LINE:
            self.tags.add("lines:thin")
        elif lw > THICK_LINE:
            self.tags.add("lines:thick")

        # pieces
        radius = u(*(CONTEST_RADIUS_RANGE if self.contest else RADIUS_RANGE))
        if radius > LARGE_RADIUS:
            self.tags.add("large-pieces")
        elif radius < SMALL_RADIUS:
            self.tags.add("small-pieces")
        black_grey = u(*(CONTEST_BLACK_GREY if self.contest else BLACK_GREY))
        if not self.contest and plate_grey > 185 and chance(0.8):
            white_grey = float(np.clip(plate_grey + u(-18, 18), *WHITE_GREY))
        else:
            white_grey = u(*(CONTEST_WHITE_GREY if self.contest else WHITE_GREY))
        if "O" in board and abs(white_grey - plate_grey) <= WHITE_NEAR_PLATE_GREY:
            self.tags.add("white-near-plate")
        white_glossy = chance(0.45 if self.contest else 0.4)
        black_glossy = (not self.contest) and chance(0.25)
        if ("O" in board and white_glossy) or ("X" in board and black_glossy):
            self.tags.add("glossy")
        white_tint = np.array([u(-4, 4), u(-3, 3), u(-4, 4)], np.float32)
        pieces = []
        for k, ch in enumerate(board):
            if ch == ".":
                continue
            r_, c_ = divmod(k, 3)
            off = rng.uniform(-1, 1, 2) * MAX_PIECE_OFFSET
            pieces.append(_Piece(c_ - 1 + float(off[0]), r_ - 1 + float(off[1]), ch == "X"))

        # occluder
        occluder = self.occluder
        if occluder == "coin" and "." not in board:
            occluder = "pen"
        coin_square: int | None = None

        # table-plane canvas
        cv_ = _Canvas(self.pitch * SUPERSAMPLE)
        s = cv_.s
        light_dir = u(0, 2 * math.pi)
        ldx, ldy = math.cos(light_dir), math.sin(light_dir)
        shadow_len = u(0.04, 0.12)
        shadow_blur = u(0.04, 0.10) * s
        shadow_strength = u(0.25, 0.5)
        shadow_mask = np.zeros((cv_.n, cv_.n), np.uint8)

        paper_white = u(225, 252)
        paper_bgr = np.array([paper_white - u(0, 10), paper_white - u(0, 5), paper_white], np.float32)

        def paper_tex(h: int, w: int) -> np.ndarray:
            n = _smooth_noise(rng, h, w, 4, 4) * 3.0
            return paper_bgr + n[..., None]

        # a loose sheet of paper (general) partly under or beside the board, drawn on the table later
        sheet: np.ndarray | None = None
        if not self.contest and chance(0.3):
            self.tags.add("paper")
            ang = u(0, math.pi)
            dist = u(1.2, 3.0)
            at = u(0, 2 * math.pi)
            sheet = _rect_uv(dist * math.cos(at), dist * math.sin(at), u(2.5, 4.5), u(1.8, 3.2), ang)

        # supply columns of spare pieces
        supply: list[_Piece] = []
        has_supply = chance(0.8 if self.contest else 0.35)
        if has_supply:
            self.tags.add("supply")
            sides = [(-1, True), (1, False)] if chance(0.5) else [(-1, False), (1, True)]
            if not self.contest and chance(0.3):
                sides = [sides[int(rng.integers(0, 2))]]
            vertical = self.contest or chance(0.6)
            step = 2 * radius + u(0.05, 0.25)
            count = int(rng.integers(3, 6))
            tilt_sheet = math.radians(u(-4, 4))
            for side, black in sides:
                off = side * (1.5 + margin + u(0.3, 0.6) + radius + 0.15)
                along = [(j - (count - 1) / 2) * step + u(-0.05, 0.05) for j in range(count)]
                col_pts = [(off + u(-0.04, 0.04), a) for a in along]
                if not vertical:
                    col_pts = [(b, a) for a, b in col_pts]
                if self.contest or chance(0.6):  # on white paper (else a tray-less table)
                    length, width = count * step + 0.4, 2 * radius + 0.45
                    ang = (math.pi / 2 if vertical else 0.0) + tilt_sheet
                    cu, cv2_ = (off, 0.0) if vertical else (0.0, off)
                    pm = cv_.poly_mask([_rect_uv(cu, cv2_, length, width, ang)])
                    if pm is not None:
                        cv_.blend(*pm, paper_tex)
                for pu, pv in col_pts:
                    supply.append(_Piece(pu, pv, black))

        # coloured tape around the board
        if chance(0.75 if self.contest else 0.2):
            self.tags.add("tape")
            tape_bgr = np.array(
                TAPE_COLOURS_BGR[0 if self.contest and chance(0.6) else int(rng.integers(0, 7))]
            )
            tape_bgr = tape_bgr * u(0.85, 1.1)
            d = 1.5 + margin + u(0.08, 0.4)
            tw = u(0.12, 0.28)
            sides_on = [chance(0.9) for _ in range(4)]
            polys = []
            for side in range(4):
                if not sides_on[side]:
                    continue
                ang = side * math.pi / 2 + u(-0.02, 0.02)
                cx_, cy_ = (
                    math.cos(ang + math.pi / 2) * (d + tw / 2),
                    math.sin(ang + math.pi / 2) * (d + tw / 2),
                )
                polys.append(_rect_uv(cx_, cy_, 2 * d + 2 * tw + u(-0.1, 0.3), tw, ang))
            if polys:
                pm = cv_.poly_mask(polys)
                if pm is not None:
                    cv_.blend(*pm, tape_bgr, opacity=u(0.85, 1.0))

        # plate
        half = 1.5 + margin
        plate_poly = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        surface = "paint" if self.contest and chance(0.6) else ("card" if self.contest else None)
        if surface is None:
            surface = "wood" if plate_kind == "wood" else str(rng.choice(["paint", "card", "plastic"]))
        pm = cv_.poly_mask([plate_poly])
        assert pm is not None
        pmask, pxa, pya = pm

        def plate_tex(h: int, w: int) -> np.ndarray:
            low = _smooth_noise(rng, h, w, 4, 4) * u(0.015, 0.045)
            fine = rng.standard_normal((h, w)).astype(np.float32) * u(0.004, 0.015)
            f = 1.0 + low + fine
            if surface == "wood":
                grain = _smooth_noise(rng, h, w, max(h // 3, 2), 5) * u(0.03, 0.07)
                f += grain
            elif surface == "paint":
                f += _smooth_noise(rng, h, w, max(h // 6, 2), 3) * 0.012
            tex = plate_bgr * f[..., None]
            if surface == "card" or chance(0.3):  # creases and scuffs
                for _ in range(int(rng.integers(1, 4))):
                    x0, y0 = u(0, w), u(0, h)
                    ang = u(0, math.pi)
                    ln = u(0.3, 1.0) * max(h, w)
                    p0 = (_fp(x0), _fp(y0))
                    p1 = (_fp(x0 + ln * math.cos(ang)), _fp(y0 + ln * math.sin(ang)))
                    crease = np.zeros((h, w), np.float32)
                    cv2.line(crease, p0, p1, 1.0, max(1, round(0.015 * s)), cv2.LINE_AA, SUBPIX_SHIFT)
                    crease = cv2.GaussianBlur(crease, (0, 0), 0.8)
                    tex *= (1.0 + crease * u(-0.12, 0.10))[..., None]
                self.tags.add("creases")
                for _ in range(int(rng.integers(0, 6))):
                    sc = np.zeros((h, w), np.float32)
                    cv2.ellipse(
                        sc,
                        (_fp(u(0, w)), _fp(u(0, h))),
                        (_fp(u(0.02, 0.12) * s), _fp(u(0.01, 0.04) * s)),
                        u(0, 180),
                        0,
                        360,
                        1.0,
                        -1,
                        cv2.LINE_AA,
                        SUBPIX_SHIFT,
                    )
                    tex += (sc * u(10, 35))[..., None]
            return tex

        cv_.blend(pmask, pxa, pya, plate_tex)

        # grid lines: outer frame and two inner lines each way
        polys = []
        for k in range(4):
            q = -1.5 + k
            ext = 1.5 + lw / 2
            polys.append(
                np.array([[q - lw / 2, -ext], [q + lw / 2, -ext], [q + lw / 2, ext], [q - lw / 2, ext]])
            )
            polys.append(
                np.array([[-ext, q - lw / 2], [ext, q - lw / 2], [ext, q + lw / 2], [-ext, q + lw / 2]])
            )
        lm = cv_.poly_mask(polys)
        assert lm is not None
        line_noise = u(0.0, 0.06)

        def line_tex(h: int, w: int) -> np.ndarray:
            return line_bgr * (1.0 + _smooth_noise(rng, h, w, 12, 12) * line_noise)[..., None]

        cv_.blend(*lm, line_tex, opacity=u(0.85, 1.0))

        # coin in an empty square
        coin: tuple[float, float, float, str] | None = None
        if occluder == "coin":
            empties = [k for k, ch in enumerate(board) if ch == "."]
            coin_square = int(rng.choice(empties))
            r_, c_ = divmod(coin_square, 3)
            metal = str(rng.choice(list(COIN_BGR)))
            coin = (c_ - 1 + u(-0.12, 0.12), r_ - 1 + u(-0.12, 0.12), u(0.2, 0.3), metal)

        # pen or pencil lying across the board
        pen: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if occluder == "pen":
            ang = u(0, math.pi)
            length, width = u(3.0, 5.0), u(0.12, 0.22)
            cu, cv2_ = u(-0.8, 0.8), u(-0.8, 0.8)
            body = _rect_uv(cu, cv2_, length, width, ang)
            tip_c = (cu + math.cos(ang) * (length / 2 + 0.15), cv2_ + math.sin(ang) * (length / 2 + 0.15))
            d = np.array([math.cos(ang), math.sin(ang)])
            p = np.array([-d[1], d[0]])
            base = np.array([cu, cv2_]) + d * length / 2
            tip = np.array([base - p * width / 2, base + p * width / 2, np.array(tip_c) + d * 0.15])
            pen_colours = [(160, 60, 20), (25, 25, 25), (40, 40, 190), (40, 200, 230), (200, 200, 200)]
            pen = (body, tip, np.array(pen_colours[int(rng.integers(0, len(pen_colours)))], np.float32))

        # shadows of everything that stands on the plane
        sdx, sdy = ldx * shadow_len * s, ldy * shadow_len * s
        for pc in pieces + supply:
            x, y = cv_.px(pc.u, pc.v)
            cv2.circle(
                shadow_mask,
                (_fp(x + sdx), _fp(y + sdy)),
                _fp(radius * s * 1.02),
                255,
                -1,
                cv2.LINE_AA,
                SUBPIX_SHIFT,
            )
        if coin is not None:
            x, y = cv_.px(coin[0], coin[1])
            cv2.circle(
                shadow_mask,
                (_fp(x + sdx * 0.4), _fp(y + sdy * 0.4)),
                _fp(coin[2] * s),
                160,
                -1,
                cv2.LINE_AA,
                SUBPIX_SHIFT,
            )
        if pen is not None:
            shifted = pen[0] + np.array([ldx, ldy]) * shadow_len * 1.5
            pts = np.array([cv_.px(a, b) for a, b in shifted])
            cv2.fillPoly(
                shadow_mask, [np.round(pts * SUBPIX).astype(np.int32)], 200, cv2.LINE_AA, SUBPIX_SHIFT
            )
        if pieces or supply or coin or pen:
            bx, by, bw, bh = cv2.boundingRect(shadow_mask)
            pad = int(3 * shadow_blur) + 2
            xa, ya = max(bx - pad, 0), max(by - pad, 0)
            xb, yb = min(bx + bw + pad, cv_.n), min(by + bh + pad, cv_.n)
            sh = cv2.GaussianBlur(shadow_mask[ya:yb, xa:xb], (0, 0), shadow_blur).astype(np.float32)
            cv_.col[ya:yb, xa:xb] *= (1.0 - sh * (shadow_strength / 255.0))[..., None]

        # pieces
        thickness = u(0.06, 0.14)  # piece height in pitch units (for the visible side wall)
        rim = u(0.03, 0.08)
        foam_tex = u(3.0, 9.0)
        for pc in pieces + supply:
            grey = black_grey if pc.black else white_grey
            base = np.full(3, grey, np.float32) + (0 if pc.black else white_tint)
            self._draw_piece(
                cv_,
                pc,
                radius,
                base,
                thickness,
                rim,
                foam_tex,
                white_glossy if not pc.black else black_glossy,
                (ldx, ldy),
            )

        if coin is not None:
            self._draw_coin(cv_, coin, (ldx, ldy))
            self.tags.add("occluded:coin")
        if pen is not None:
            body, tip, colour = pen
            pm = cv_.poly_mask([body])
            if pm is not None:

                def pen_tex(h: int, w: int) -> np.ndarray:
                    return colour * (1.0 + _smooth_noise(rng, h, w, 3, 3) * 0.05)[..., None]

                cv_.blend(*pm, pen_tex)
            pm = cv_.poly_mask([tip])
            if pm is not None:
                cv_.blend(*pm, np.array([120, 170, 205], np.float32))
            self.tags.add("occluded:pen")

        # -------------------------------------------------------------------------- image space
        img = self._table()
        if sheet is not None:  # on the table, under the board: drawn in image space (never cut)
            pts = cv2.perspectiveTransform(sheet[None].astype(np.float64), self.h)[0]
            sm = np.zeros((FRAME_H, FRAME_W), np.uint8)
            cv2.fillPoly(sm, [np.round(pts * SUBPIX).astype(np.int32)], 255, cv2.LINE_AA, SUBPIX_SHIFT)
            smf = (sm.astype(np.float32) / 255.0)[..., None]
            img += smf * (paper_tex(FRAME_H, FRAME_W) - img)
        canvas_to_world = np.array(
            [[1 / s, 0, -CANVAS_HALF_UNITS], [0, 1 / s, -CANVAS_HALF_UNITS], [0, 0, 1]]
        )
        hc = self.h @ canvas_to_world
        warped = cv2.warpPerspective(
            cv_.rgba,
            hc,
            (FRAME_W, FRAME_H),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=0,
        )
        alpha = warped[..., 3]
        # drop shadow of the plate and sheets on the table
        drop = self.pitch * u(0.03, 0.1)
        m = np.float32([[1, 0, ldx * drop], [0, 1, ldy * drop]])
        ds = cv2.warpAffine(alpha, m, (FRAME_W, FRAME_H))
        ds = cv2.GaussianBlur(ds, (0, 0), max(1.0, drop * 0.8))
        keep = 1.0 - alpha
        keep *= 1.0 - u(0.2, 0.45) * ds
        img *= keep[..., None]
        img += warped[..., :3]  # the canvas colour is premultiplied by its coverage

        if occluder == "hand":
            self._draw_hand(img, (ldx, ldy))
            self.tags.add("occluded:hand")

        img = self._light(img)
        img = self._camera(img)
        sample = Sample(
            image=img,
            board=board,
            centre_px=self.centre,
            angle_deg=self.angle,
            pitch_px=self.pitch,
            occluded=occluder is not None,
            tags=frozenset(self.tags),
        )
        info = RenderInfo(
            plate_bgr=(float(plate_bgr[0]), float(plate_bgr[1]), float(plate_bgr[2])),
            piece_radius=radius,
            coin_square=coin_square,
            homography=self.h.copy(),
        )
        return sample, info

    # ------------------------------------------------------------------------------------ drawing parts

    def _draw_piece(
        self,
        cv_: _Canvas,
        pc: _Piece,
        radius: float,
        base: np.ndarray,
        thickness: float,
        rim: float,
        foam_tex: float,
        glossy: bool,
        light: tuple[float, float],
    ) -> None:
        """A disc seen from a camera above: side wall (parallax), top face with darker rim, highlight."""
        s = cv_.s
        x, y = cv_.px(pc.u, pc.v)
        r = radius * s
        # parallax: the top face moves away from the image centre by height / camera distance
        img_pt = self.h @ np.array([pc.u, pc.v, 1.0])
        ix, iy = img_pt[0] / img_pt[2], img_pt[1] / img_pt[2]
        par = thickness * self.pitch / self.focal
        dimg = np.array([ix - FRAME_W / 2, iy - FRAME_H / 2]) * par
        dplane = np.linalg.solve(self.pitch * _rot(self.angle), dimg) * s
        tx, ty = x + dplane[0], y + dplane[1]
        wall = base * (0.62 if pc.black else 0.72)
        dm = cv_.disc_mask(x, y, r)  # the base; the top face covers all but a thin crescent of side wall
        if dm is not None:
            cv_.blend(*dm, wall)
        dm = cv_.disc_mask(tx, ty, r)
        if dm is None:
            return
        mask, xa, ya = dm
        h, w = mask.shape
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        rr = np.sqrt((xx + xa - tx) ** 2 + (yy + ya - ty) ** 2) / max(r, 1e-3)
        # top face: slightly domed shading, darker rim, foam texture for black pieces
        shade = 1.0 - 0.06 * rr**2 - 0.18 * np.clip((rr - (1 - rim * 2.5)) / (rim * 2.5), 0, 1)
        shade += ((xx + xa - tx) * -light[0] + (yy + ya - ty) * -light[1]) / max(r, 1e-3) * 0.03
        tex = base * shade[..., None]
        if pc.black:
            tex = tex + (self.rng.standard_normal((h, w)).astype(np.float32) * foam_tex)[..., None]
        else:
            tex = tex + (self.rng.standard_normal((h, w)).astype(np.float32) * 1.5)[..., None]
        if glossy:
            hx, hy = tx - light[0] * r * 0.45, ty - light[1] * r * 0.45
            spot = np.exp(-((xx + xa - hx) ** 2 + (yy + ya - hy) ** 2) / (2 * (0.16 * r) ** 2))
            tex = tex + (spot * (120.0 if pc.black else 60.0))[..., None]
        cv_.blend(mask, xa, ya, np.clip(tex, 0, 255))

    def _draw_coin(
        self, cv_: _Canvas, coin: tuple[float, float, float, str], light: tuple[float, float]
    ) -> None:
        cu, cvv, cr, metal = coin
        x, y = cv_.px(cu, cvv)
        r = cr * cv_.s
        dm = cv_.disc_mask(x, y, r)
        if dm is None:
            return
        mask, xa, ya = dm
        h, w = mask.shape
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        dx, dy = (xx + xa - x) / r, (yy + ya - y) / r
        rr = np.sqrt(dx**2 + dy**2)
        shade = 0.85 + 0.25 * (-dx * light[0] - dy * light[1]) - 0.25 * ((rr > 0.85) & (rr < 0.92))
        shade += self.rng.standard_normal((h, w)).astype(np.float32) * 0.04
        tex = np.array(COIN_BGR[metal], np.float32) * shade[..., None]
        cv_.blend(mask, xa, ya, np.clip(tex, 0, 255))

    def _table(self) -> np.ndarray:
        """Textured table surface in image space, float32 BGR."""
        u = self.u
        kind = (
            str(self.rng.choice(["desk", "paper", "wood"]))
            if self.contest
            else str(self.rng.choice(TABLE_KINDS))
        )
        self.tags.add(f"table:{kind}")
        h, w = FRAME_H, FRAME_W
        if kind == "wood":
            base = _hsv_bgr(u(8, 22), u(70, 170), u(90, 200))
            if self.chance(0.5):
                grain = _smooth_noise(self.rng, h, w, h // 4, 6)
            else:
                grain = _smooth_noise(self.rng, h, w, 6, w // 4)
            f = 1.0 + grain * 0.07 + _smooth_noise(self.rng, h, w, 5, 6) * 0.05
        elif kind == "cloth":
            base = _hsv_bgr(u(0, 180), u(20, 160), u(50, 200))
            weave = self.rng.standard_normal((h, w)).astype(np.float32)
            weave = cv2.GaussianBlur(weave, (0, 0), 0.7)
            f = 1.0 + weave * 0.05 + _smooth_noise(self.rng, h, w, 6, 8) * 0.06
        elif kind == "desk":
            g = u(120, 210)
            base = np.array([g + u(-10, 10), g + u(-5, 5), g + u(-10, 10)], np.float32)
            f = 1.0 + _smooth_noise(self.rng, h, w, 5, 6) * 0.03
        elif kind == "paper":
            g = u(215, 250)
            base = np.array([g - u(0, 10), g - u(0, 4), g], np.float32)
            f = 1.0 + _smooth_noise(self.rng, h, w, 5, 6) * 0.02
        else:
            base = _hsv_bgr(u(0, 180), u(0, 80), u(25, 70))
            f = 1.0 + _smooth_noise(self.rng, h, w, 5, 6) * 0.06
        f = f + self.rng.standard_normal((h // 2, w // 2)).astype(np.float32).repeat(2, 0).repeat(2, 1) * 0.01
        return base * f[..., None]

    def _draw_hand(self, img: np.ndarray, light: tuple[float, float]) -> None:
        """Fingers (and part of a palm) reaching over the board from outside, with a soft shadow."""
        u = self.u
        cx, cy = self.centre
        p = self.pitch
        ang = u(0, 2 * math.pi)
        d = np.array([math.cos(ang), math.sin(ang)])
        palm = np.array([cx, cy]) + d * p * u(1.9, 2.8)
        mask = np.zeros((FRAME_H, FRAME_W), np.uint8)
        pr = p * u(0.9, 1.3)
        cv2.ellipse(
            mask,
            (_fp(palm[0]), _fp(palm[1])),
            (_fp(pr * 1.3), _fp(pr)),
            math.degrees(ang),
            0,
            360,
            255,
            -1,
            cv2.LINE_AA,
            SUBPIX_SHIFT,
        )
        # a forearm running off towards the frame edge
        far = palm + d * 600
        cv2.line(
            mask,
            (_fp(palm[0]), _fp(palm[1])),
            (_fp(far[0]), _fp(far[1])),
            255,
            max(2, int(pr * 1.6)),
            cv2.LINE_AA,
            SUBPIX_SHIFT,
        )
        n_f = int(self.rng.integers(1, 5))
        fw = max(3, int(p * u(0.28, 0.42)))
        for k in range(n_f):
            spread = (k - (n_f - 1) / 2) * u(0.18, 0.3)
            fd = np.array([math.cos(ang + math.pi + spread), math.sin(ang + math.pi + spread)])
            start = palm - d * pr * 0.8
            tip = start + fd * p * u(0.9, 1.9)
            cv2.line(
                mask,
                (_fp(start[0]), _fp(start[1])),
                (_fp(tip[0]), _fp(tip[1])),
                255,
                fw,
                cv2.LINE_AA,
                SUBPIX_SHIFT,
            )
        mf = cv2.GaussianBlur(mask, (0, 0), u(0.8, 2.5)).astype(np.float32) / 255.0
        # shadow first (the hand is above the table: a larger, softer offset)
        off = p * u(0.25, 0.6)
        m = np.float32([[1, 0, light[0] * off], [0, 1, light[1] * off]])
        sh = cv2.GaussianBlur(cv2.warpAffine(mf, m, (FRAME_W, FRAME_H)), (0, 0), p * 0.2)
        img *= (1.0 - u(0.25, 0.5) * sh)[..., None]
        skin = _hsv_bgr(u(5, 17), u(60, 150), u(140, 235))
        shade = 1.0 + _smooth_noise(self.rng, FRAME_H, FRAME_W, 8, 10) * 0.06
        skin_img = skin * shade[..., None]
        img += mf[..., None] * (skin_img - img)

    def _light(self, img: np.ndarray) -> np.ndarray:
        """Lamps (gradient, bright spots, cast shadow across the table), vignetting and white balance."""
        u, chance = self.u, self.chance
        lh, lw_ = FRAME_H // 8, FRAME_W // 8
        yy, xx = np.mgrid[0:lh, 0:lw_].astype(np.float32)
        xx = (xx + 0.5) * 8
        yy = (yy + 0.5) * 8
        field = np.ones((lh, lw_), np.float32)
        grad_p = 0.8 if self.contest else 0.6
        if chance(grad_p):
            ratio = u(1.1, GRADIENT_MAX_RATIO)
            if ratio > 1.4:
                self.tags.add("gradient")
            ga = u(0, 2 * math.pi)
            extent = 2.2 * self.pitch
            t = ((xx - self.centre[0]) * math.cos(ga) + (yy - self.centre[1]) * math.sin(ga)) / extent
            field *= np.exp(math.log(ratio) * np.clip(t, -1.2, 1.2))
        n_lamps = int(self.rng.integers(1, 3)) if self.contest else int(self.rng.integers(0, 3))
        for _ in range(n_lamps):
            sx, sy = u(0, FRAME_W), u(0, FRAME_H)
            sig = u(80, 260)
            amp = u(0.1, 0.45)
            field += amp * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * sig**2))
            if amp > 0.3:
                self.tags.add("spot")
        if chance(0.6):
            k = u(0.05, 0.4)
            if k > 0.15:
                self.tags.add("vignette")
            rr = ((xx - FRAME_W / 2) ** 2 + (yy - FRAME_H / 2) ** 2) / (
                (FRAME_W / 2) ** 2 + (FRAME_H / 2) ** 2
            )
            field *= 1.0 - k * rr
        if chance(0.15):  # a shadow across the table (a person, a lamp arm)
            self.tags.add("shadow")
            a = u(0, 2 * math.pi)
            px, py = u(0, FRAME_W), u(0, FRAME_H)
            t = ((xx - px) * math.cos(a) + (yy - py) * math.sin(a)) / u(10, 60)
            field *= 1.0 - u(0.2, 0.45) / (1.0 + np.exp(-t))
        field *= u(0.75, 1.05)
        full = cv2.resize(field, (FRAME_W, FRAME_H), interpolation=cv2.INTER_LINEAR)
        wb = u(-1, 1) * (0.15 if chance(0.6) else 0.04)
        gains = np.array([1.0 - wb, 1.0 + u(-0.03, 0.03), 1.0 + wb], np.float32)
        if wb > 0.05:
            self.tags.add("wb:warm")
        elif wb < -0.05:
            self.tags.add("wb:cool")
        full3 = cv2.merge([full * gains[0], full * gains[1], full * gains[2]])
        img *= full3
        return img

    def _camera(self, img: np.ndarray) -> np.ndarray:
        """Defocus, motion blur, sensor noise, 8-bit quantisation and JPEG."""
        u, chance = self.u, self.chance
        if chance(0.35):
            sig = u(0.5, 1.4)
            img = cv2.GaussianBlur(img, (0, 0), sig)
            if sig > 0.9:
                self.tags.add("defocus")
        if chance(0.3):
            ln = u(0.5, MOTION_BLUR_MAX_PX)
            a = u(0, math.pi)
            size = 5
            k = np.zeros((size, size), np.float32)
            c = size // 2
            p0 = (_fp(c - math.cos(a) * ln / 2), _fp(c - math.sin(a) * ln / 2))
            p1 = (_fp(c + math.cos(a) * ln / 2), _fp(c + math.sin(a) * ln / 2))
            cv2.line(k, p0, p1, 1.0, 1, cv2.LINE_AA, SUBPIX_SHIFT)
            if k.sum() > 0:
                img = cv2.filter2D(img, -1, k / k.sum())
            if ln >= 1.0:
                self.tags.add("motion-blur")
        sigma_read = u(0.8, 4.0)
        sigma_shot = u(0.05, 0.35)
        if sigma_read > 3.0 or sigma_shot > 0.25:
            self.tags.add("noise:high")
        np.clip(img, 0, 255, out=img)
        noise = np.empty_like(img)
        cv2.setRNGSeed(int(self.rng.integers(1, 2**31 - 1)))  # cv2's thread-local RNG: fast, seeded per frame
        cv2.randn(noise, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
        img += noise * (sigma_read + sigma_shot * cv2.sqrt(img))
        out = cv2.convertScaleAbs(img)  # rounds and saturates to 0..255
        q = int(self.rng.integers(JPEG_RANGE[0], JPEG_RANGE[1] + 1))
        if q < JPEG_LOW:
            self.tags.add("jpeg:low")
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
        assert ok
        return cv2.imdecode(buf, cv2.IMREAD_COLOR)
