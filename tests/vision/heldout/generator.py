"""A physically modelled renderer of 3x3 boards seen from above (see README.md in this folder).

The scene is built in millimetres: a table (plane z = 0), a square plate of thickness ``Tp`` on it, the grid
printed or engraved on the plate's top, pucks (short cylinders with a rounded top edge) standing on the
plate, spare pucks, tape and paper on the table, and sometimes a pen, a coin, a sheet or a hand. A pinhole
camera 300-600 mm above the table, tilted up to 12 degrees and with mild radial distortion, sees it; every
pixel is a ray cast into that scene (planes and cylinders are intersected analytically). Light is ambient
plus one point or area light (Lambert + Phong, soft cast shadows, contact occlusion). The camera then
blurs (defocus, motion), vignettes, exposes, mosaics (Bayer), adds shot and read noise, demosaics with
OpenCV, gamma-encodes and JPEG-compresses.

Speed: the board's box is rendered at twice the resolution and downsampled, the rest of the frame once;
all per-pixel work is vectorised numpy, and the smooth fields (irradiance, shadows of large occluders) are
computed on a coarse grid and upsampled.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import cv2
import numpy as np

W, H = 640, 480

# ----------------------------------------------------------------------------------------------- tags

PLATE_TAGS = (
    "plate:white",
    "plate:light-grey",
    "plate:mid-grey",
    "plate:wood",
    "plate:dark",
    "plate:saturated",
    "plate:pastel",
    "plate:paper",
)
SATURATED_TAGS = ("plate:blue", "plate:green", "plate:red", "plate:yellow")
OCCLUSION_TAGS = ("occ:hand", "occ:pen", "occ:coin", "occ:sheet")

TAG_FAMILIES: dict[str, tuple[str, ...]] = {
    "plate": (*PLATE_TAGS, *SATURATED_TAGS, "plate:darker-than-black"),
    "lines": ("lines:dark", "lines:light", "lines:printed", "lines:engraved", "lines:thin", "lines:thick"),
    "pieces": (
        "small-pieces",
        "large-pieces",
        "thin-pieces",
        "thick-pieces",
        "off-centre",
        "glossy",
        "matte",
        "white-near-plate",
        "black-near-plate",
    ),
    "board": ("empty-board", "full-board"),
    "light": (
        "light:point",
        "light:area",
        "gradient",
        "wb:warm",
        "wb:cool",
        "wb:neutral",
        "vignette",
        "exposure:low",
        "exposure:high",
    ),
    "camera": ("tilted", "distortion", "pitch:small", "pitch:large", "rotated"),
    "sensor": ("noise:high", "jpeg:low", "motion-blur", "defocus"),
    "table": ("table:wood", "table:white", "table:desk", "supply", "tape", "paper"),
    "occlusion": ("occluded", *OCCLUSION_TAGS),
}
TAGS: tuple[str, ...] = tuple(t for family in TAG_FAMILIES.values() for t in family)


@dataclass(frozen=True)
class Sample:
    image: np.ndarray  # 480x640x3 uint8 BGR
    board: str  # 9 chars row by row in the board's own frame: "X" black, "O" white, "." empty
    centre_px: tuple[float, float]  # image position of the board centre
    angle_deg: float  # board rotation in (-45, 45], counter-clockwise as seen (image y down)
    pitch_px: float  # distance between square centres at the board centre, px
    occluded: bool  # something other than pieces covers part of the grid
    tags: frozenset[str]  # e.g. {"plate:dark", "lines:light", "large-pieces", "glossy", ...}


# --------------------------------------------------------------------------------------------- colour


def _to_linear(bgr) -> np.ndarray:
    """8-bit sRGB (any shape) to linear float32."""
    x = np.asarray(bgr, dtype=np.float64) / 255.0
    return np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _encode_lut(levels: int) -> np.ndarray:
    x = np.arange(levels, dtype=np.float64) / (levels - 1)
    y = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    return np.clip(np.round(y * 255.0), 0, 255).astype(np.uint8)


RAW_MAX = 4095  # a 12-bit sensor
_LUT = _encode_lut(RAW_MAX + 1)
_BAYER = {  # position of the red site in the 2x2 cell -> OpenCV demosaic code
    (0, 0): cv2.COLOR_BayerBG2BGR,
    (0, 1): cv2.COLOR_BayerGB2BGR,
    (1, 0): cv2.COLOR_BayerGR2BGR,
    (1, 1): cv2.COLOR_BayerRG2BGR,
}


def _luma(bgr) -> float:
    b, g, r = (float(v) for v in bgr)
    return 0.114 * b + 0.587 * g + 0.299 * r


def _grey(rng: np.random.Generator, lo: float, hi: float, tint: float = 2.0) -> np.ndarray:
    v = rng.uniform(lo, hi)
    return np.clip(v + rng.uniform(-tint, tint, 3), 0, 255)


# --------------------------------------------------------------------------------------------- camera


@dataclass
class Camera:
    """Pinhole camera; world (u, v, z) in mm, u and v along the image's x and y when untilted, z up.

    A camera point is R @ (u - Cu, v - Cv, Cz - z); the lens maps a distorted normalised image point
    x_d to the ideal one as x_n = x_d * (1 + j * |x_d|^2) (j > 0: barrel)."""

    f: float
    cx: float
    cy: float
    j: float
    R: np.ndarray
    C: np.ndarray

    def rays(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For pixel columns xs and rows ys: (au, bv) with P(z) = C + (Cz - z) * (au, bv)."""
        xd = ((xs - self.cx) / self.f).astype(np.float32)[None, :]
        yd = ((ys - self.cy) / self.f).astype(np.float32)[:, None]
        fac = 1.0 + float(self.j) * (xd * xd + yd * yd)
        xn = xd * fac
        yn = yd * fac
        r = [[float(v) for v in row] for row in self.R]
        c = r[0][2] * xn + r[1][2] * yn + r[2][2]
        inv = 1.0 / c
        au = (r[0][0] * xn + r[1][0] * yn + r[2][0]) * inv
        bv = (r[0][1] * xn + r[1][1] * yn + r[2][1]) * inv
        return au, bv

    def project(self, pts) -> np.ndarray:
        """World points (N, 3) to pixels (N, 2)."""
        p = np.atleast_2d(np.asarray(pts, dtype=np.float64))
        d = np.stack([p[:, 0] - self.C[0], p[:, 1] - self.C[1], self.C[2] - p[:, 2]], axis=1)
        cam = d @ self.R.T
        xn = cam[:, 0] / cam[:, 2]
        yn = cam[:, 1] / cam[:, 2]
        xd, yd = xn.copy(), yn.copy()
        for _ in range(30):
            fac = 1.0 + self.j * (xd * xd + yd * yd)
            xd, yd = xn / fac, yn / fac
        return np.stack([self.f * xd + self.cx, self.f * yd + self.cy], axis=1)

    def backproject(self, px: float, py: float, z: float) -> np.ndarray:
        au, bv = self.rays(np.array([px]), np.array([py]))
        dz = self.C[2] - z
        return np.array([self.C[0] + dz * float(au[0, 0]), self.C[1] + dz * float(bv[0, 0])])


def _rotation(axis_angle: float, tilt: float) -> np.ndarray:
    k = np.array([math.cos(axis_angle), math.sin(axis_angle), 0.0])
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(tilt) * kx + (1 - math.cos(tilt)) * (kx @ kx)


# ---------------------------------------------------------------------------------------------- scene


@dataclass
class Puck:
    u: float
    v: float
    zb: float  # base height (mm)
    R: float
    h: float
    b: float  # radius of the rounded top edge
    alb: np.ndarray  # linear BGR
    ks: float
    shin: float
    spec: np.ndarray  # linear BGR colour of the highlight
    kind: str  # "X", "O", "spare", "coin"
    box: tuple = ()  # image box of the body (x min, x max, y min, y max), set when rendering
    shadow_box: tuple = ()  # ... of the body, its shadow and its contact darkening

    def __post_init__(self) -> None:  # python floats: numpy scalars would turn float32 arrays to float64
        for name in ("u", "v", "zb", "R", "h", "b", "ks", "shin"):
            setattr(self, name, float(getattr(self, name)))
        self.alb = np.asarray(self.alb, np.float32)
        self.spec = np.asarray(self.spec, np.float32)


@dataclass
class Scene:
    cam: Camera
    board: str
    Tp: float  # plate thickness
    B: np.ndarray  # board centre (u, v)
    theta: float  # board rotation on the table (rad)
    s: float  # pitch (mm)
    hp: float  # half plate size (mm)
    lw: float  # line width (mm)
    plate_tex: np.ndarray | None
    plate_base: np.ndarray  # linear colour of the plate's top
    plate_res: float
    side_alb: np.ndarray
    sheen: tuple[float, float]  # (ks, shininess) of the plate's top, ks 0 = matte
    line_alb: np.ndarray
    engraved: bool
    groove: float  # slope of an engraved line's walls
    pucks: list[Puck]
    L: np.ndarray  # light position (u, v, z)
    light_size: float
    amb: float
    grad_dir: np.ndarray
    grad_ratio: float
    table_tex: np.ndarray
    table_origin: tuple[float, float]
    table_res: float
    post: dict
    occluder: dict | None
    tags: set[str]
    truth: dict = field(default_factory=dict)

    @property
    def ex(self) -> np.ndarray:  # board x axis on the table
        return np.array([math.cos(self.theta), -math.sin(self.theta)])

    @property
    def ey(self) -> np.ndarray:
        return np.array([math.sin(self.theta), math.cos(self.theta)])

    def board_to_world(self, bx, by) -> np.ndarray:
        bx = np.asarray(bx, dtype=np.float64)
        by = np.asarray(by, dtype=np.float64)
        return self.B + bx[..., None] * self.ex + by[..., None] * self.ey

    def project_board(self, bx, by, dz: float = 0.0) -> np.ndarray:
        """Pixels of board-frame points (mm from the board centre) at height Tp + dz."""
        w = self.board_to_world(np.ravel(bx), np.ravel(by))
        pts = np.concatenate([w, np.full((len(w), 1), self.Tp + dz)], axis=1)
        return self.cam.project(pts)

    def square_centre(self, n: int) -> tuple[float, float]:
        r, c = divmod(n - 1, 3)
        return (c - 1) * self.s, (r - 1) * self.s


# -------------------------------------------------------------------------------------------- textures


def _noise(rng: np.random.Generator, small: tuple[int, int], out: tuple[int, int]) -> np.ndarray:
    """Smooth noise of about unit variance: normal noise of shape small (rows, cols) resized to out."""
    n = rng.standard_normal(small).astype(np.float32)
    return cv2.resize(n, (out[1], out[0]), interpolation=cv2.INTER_CUBIC)


def _wood(rng: np.random.Generator, size: tuple[int, int], res: float, along_x: bool) -> np.ndarray:
    """A multiplicative wood-grain map (around 1) on a texture of size (rows, cols) of res mm a texel."""
    h, w = size
    across = (
        np.arange(h, dtype=np.float32)[:, None] if along_x else np.arange(w, dtype=np.float32)[None, :]
    ) * res
    warp = _noise(rng, (6, 6), size) * rng.uniform(2.0, 6.0)
    period = rng.uniform(2.5, 7.0)
    rings = np.sin((across + warp) * (2 * math.pi / period))
    shape = (max(3, h // 40), 4) if along_x else (4, max(3, w // 40))
    streaks = _noise(rng, shape, size)
    fine = _noise(
        rng, (max(4, h // 2), max(4, w // 40)) if along_x else (max(4, h // 40), max(4, w // 2)), size
    )
    amp = rng.uniform(0.08, 0.2)
    return 1.0 + amp * rings + 0.05 * streaks + 0.04 * fine


def _plate_texture(rng: np.random.Generator, kind: str, base: np.ndarray, size_mm: float, L_b: np.ndarray):
    """The plate top's albedo map, a factor around 1 of its colour (rows = board y), and its resolution
    (mm per texel)."""
    n = 320
    res = size_mm / n
    if kind == "wood":
        m = np.maximum(_wood(rng, (n, n), res, bool(rng.random() < 0.5)), 0.3) ** 1.2
    elif kind == "paper":
        m = 1.0 + 0.025 * _noise(rng, (8, 8), (n, n)) + 0.012 * _noise(rng, (n // 2, n // 2), (n, n))
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        xx = (xx - n / 2) * res
        yy = (yy - n / 2) * res
        for _ in range(int(rng.integers(1, 4))):  # creases: a fold is a ridge lit on one side
            a = rng.uniform(0, math.pi)
            off = rng.uniform(-0.35, 0.35) * size_mm
            d = xx * math.cos(a) + yy * math.sin(a) - off
            side = float(np.clip(L_b[0] * math.cos(a) + L_b[1] * math.sin(a), -1, 1))
            width = rng.uniform(1.5, 5.0)
            m += np.sign(d) * side * rng.uniform(0.03, 0.08) * np.exp(-np.abs(d) / width)
            m -= rng.uniform(0.03, 0.08) * np.exp(-np.abs(d) / 0.35)
    else:
        amp = 0.03 if kind == "dark" else 0.012
        m = 1.0 + amp * _noise(rng, (10, 10), (n, n)) + amp * 0.7 * _noise(rng, (n // 3, n // 3), (n, n))
    return np.ascontiguousarray(m, dtype=np.float32), res


def _rect_poly(centre, half_w, half_h, angle) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    ax = np.array([c, s]) * half_w
    ay = np.array([-s, c]) * half_h
    centre = np.asarray(centre, dtype=np.float64)
    return np.array([centre - ax - ay, centre + ax - ay, centre + ax + ay, centre - ax + ay])


# ----------------------------------------------------------------------------------------- sampling


def _choose(rng: np.random.Generator, options, probs=None):
    options = list(options)
    if probs is None:
        return options[int(rng.integers(len(options)))]
    p = np.asarray(probs, dtype=np.float64)
    return options[int(rng.choice(len(options), p=p / p.sum()))]


PASTELS = [
    (200, 185, 245),
    (200, 235, 190),
    (245, 215, 180),
    (235, 200, 210),
    (185, 210, 250),
    (170, 240, 250),
]
SKIN = [(160, 185, 230), (130, 160, 215), (105, 135, 190), (80, 105, 160), (55, 75, 120), (40, 55, 85)]


def _make_scene(rng: np.random.Generator, want: set[str], random_occlusion: bool = True) -> Scene:
    unknown = want - set(TAGS)
    if unknown:
        raise ValueError(f"unknown tags: {sorted(unknown)}")
    U = rng.uniform
    tags: set[str] = set()

    # ---- occlusion
    occ_forced = [t for t in OCCLUSION_TAGS if t in want]
    if len(occ_forced) > 1:
        raise ValueError(f"one occluder a frame: {occ_forced}")
    if occ_forced:
        occ = occ_forced[0]
    elif "occluded" in want or (random_occlusion and rng.random() < 0.1):
        occ = _choose(rng, OCCLUSION_TAGS)
    else:
        occ = None

    # ---- board content
    if "empty-board" in want:
        board = ["."] * 9
    elif "full-board" in want:
        board = list(rng.choice(["X", "O"], 9))
    else:
        r = rng.random()
        if r < 0.08:
            board = ["."] * 9
        elif r < 0.16:
            board = list(rng.choice(["X", "O"], 9))
        else:
            p_empty = U(0.2, 0.8)
            board = [str(rng.choice(["X", "O"])) if rng.random() > p_empty else "." for _ in range(9)]

    def ensure(ch: str) -> None:
        if ch in board or "empty-board" in want:
            return  # (with an empty board forced, the final check reports the conflict)
        free = [i for i in range(9) if board[i] == "."]
        if not free or "full-board" in want:
            free = [i for i in range(9) if board[i] != ch]
        board[int(_choose(rng, free))] = ch

    if "white-near-plate" in want:
        ensure("O")
    if "black-near-plate" in want:
        ensure("X")
    if occ == "occ:coin" and "." not in board:
        if "full-board" in want:
            raise ValueError("a coin needs an empty square: not with full-board")
        board[int(rng.integers(9))] = "."

    # ---- plate kind and colour
    plate_forced = [t for t in PLATE_TAGS if t in want]
    sat_forced = [t for t in SATURATED_TAGS if t in want]
    if sat_forced:
        plate_forced.append("plate:saturated")
    kinds = [t.split(":")[1] for t in PLATE_TAGS]
    if plate_forced:
        kind = plate_forced[0].split(":")[1]
    elif "plate:darker-than-black" in want or "black-near-plate" in want:
        kind = "dark"
    elif "white-near-plate" in want:
        kind = _choose(rng, ["white", "light-grey", "pastel", "paper"])
    elif "lines:light" in want:
        kind = _choose(rng, ["dark", "mid-grey", "saturated", "wood"], [3, 2, 2, 1])
    elif "lines:dark" in want:
        kind = _choose(rng, [k for k in kinds if k != "dark"])
    elif "lines:engraved" in want:
        kind = _choose(rng, [k for k in kinds if k != "paper"])
    else:
        kind = _choose(rng, kinds, [14, 10, 8, 14, 14, 14, 10, 16])
    tags.add(f"plate:{kind}")

    black = _grey(rng, 15, 55, 2.0)
    white = _grey(rng, 205, 245, 3.0)
    if kind == "white":
        plate = _grey(rng, 228, 250, 3.0)
    elif kind == "light-grey":
        plate = _grey(rng, 195, 215, 2.0) if "white-near-plate" in want else _grey(rng, 170, 215, 2.0)
    elif kind == "mid-grey":
        plate = _grey(rng, 100, 160, 3.0)
    elif kind == "dark":
        if "plate:darker-than-black" in want:
            plate = _grey(rng, 20, 38, 2.0)
            black = _grey(rng, min(55.0, _luma(plate) + 4), 55, 1.0)
        elif "black-near-plate" in want:
            plate = _grey(rng, 20, 74, 2.0)
        elif "lines:dark" in want:
            plate = _grey(rng, 60, 90, 3.0)
        else:
            plate = _grey(rng, 20, 90, 3.0)
    elif kind == "wood":
        woods = [(140, 185, 215), (95, 145, 190), (60, 95, 140), (45, 70, 105)]
        wi = 3 if "lines:light" in want else int(rng.integers(4))
        plate = np.clip(np.array(woods[wi], float) * U(0.9, 1.08), 0, 255)
    elif kind == "saturated":
        colour = (
            sat_forced[0].split(":")[1]
            if sat_forced
            else _choose(rng, ["blue", "green", "red"] + ([] if "lines:light" in want else ["yellow"]))
        )
        tags.add(f"plate:{colour}")
        plate = {
            "blue": lambda: (U(140, 200), U(60, 110), U(10, 50)),
            "green": lambda: (U(30, 80), U(120, 170), U(20, 70)),
            "red": lambda: (U(20, 60), U(20, 60), U(150, 210)),
            "yellow": lambda: (U(10, 60), U(180, 220), U(200, 240)),
        }[colour]()
        plate = np.array(plate, float)
    elif kind == "pastel":
        plate = np.clip(np.array(_choose(rng, PASTELS), float) + U(-8, 8, 3), 0, 255)
    else:  # paper
        plate = np.clip(np.array([U(225, 245)] * 3) + np.array([U(-6, 0), U(-2, 2), U(0, 4)]), 0, 255)
    lp = _luma(plate)
    if "white-near-plate" in want:
        white = np.full(3, float(np.clip(lp + U(-18, 18), 205, 245))) + U(-1.5, 1.5, 3)
        if abs(_luma(white) - lp) > 19.5:
            white = np.full(3, float(np.clip(lp, 206, 244)))
    if "black-near-plate" in want and kind == "dark":
        lo, hi = max(15.0, lp - 23), min(55.0, lp + 23)
        if lo <= hi:
            black = np.full(3, U(lo, hi)) + U(-1, 1, 3)
    if kind == "dark" and _luma(plate) < _luma(black):
        tags.add("plate:darker-than-black")

    # ---- camera, pitch and placement
    Hc = U(300, 600)
    Tp = 0.15 if kind == "paper" else (U(2, 5) if rng.random() < 0.4 else U(5, 16))
    if "tilted" in want:
        tilt = U(8, 12)
    else:
        tilt = U(0, 12)
    if tilt >= 8:
        tags.add("tilted")
    R = _rotation(U(0, 2 * math.pi), math.radians(tilt))
    if "pitch:small" in want:
        pitch_t = U(35, 47)
    elif "pitch:large" in want:
        pitch_t = U(77, 90)
    else:
        pitch_t = U(35, 90)
    s_guess = U(25, 60)
    f = float(np.clip(pitch_t * (Hc - Tp) / s_guess, 340, 1300))
    if "distortion" in want:
        delta = U(8.5, 15) * (1 if rng.random() < 0.8 else -1)
    else:
        delta = U(-5, 12)
    if abs(delta) >= 8:
        tags.add("distortion")
    j = delta * f * f / 400.0**3
    cam = Camera(f=f, cx=320 + U(-12, 12), cy=240 + U(-10, 10), j=j, R=R, C=np.array([0.0, 0.0, Hc]))

    # line width and pieces, in pitch units
    if "lines:thin" in want:
        lw_f = U(0.02, 0.038)
    elif "lines:thick" in want:
        lw_f = U(0.082, 0.12)
    else:
        lw_f = U(0.02, 0.12)
    if "small-pieces" in want:
        r_f = U(0.20, 0.28)
    elif "large-pieces" in want:
        r_f = U(0.385, 0.45)
    else:
        r_f = U(0.20, 0.45)
    if r_f > 0.49 - lw_f / 2:
        if "lines:thick" in want or "lines:thin" in want:
            r_f = 0.49 - lw_f / 2
        else:
            lw_f = max(0.02, 2 * (0.49 - r_f))
    if "off-centre" in want and r_f > 0.49 - lw_f / 2 - 0.046:
        r_f = 0.49 - lw_f / 2 - 0.046
    max_off = max(0.0, min(0.06, 0.49 - lw_f / 2 - r_f))
    if "rotated" in want:
        angle_t = U(25.5, 44.9) * (1 if rng.random() < 0.5 else -1)
    elif rng.random() < 0.3:
        angle_t = U(-4, 4)
    else:
        angle_t = U(-44.9, 44.9)
    if "thick-pieces" in want:
        ph = U(6, 8)
    elif "thin-pieces" in want:
        ph = U(3, 4)
    else:
        ph = U(3, 8)
    margin_f = U(0.15, 0.6)

    # place: centre pixel -> board centre on the plate's top; angle and pitch solved through the camera
    for attempt in range(60):
        shrink = 0.97 ** (attempt // 6)
        shrink = max(shrink, 35.2 / pitch_t)  # the pitch stays in 35-90 px
        if "pitch:large" in want:
            shrink = max(shrink, 76.5 / pitch_t)
        ext = (
            1.5
            * pitch_t
            * shrink
            * (abs(math.cos(math.radians(angle_t))) + abs(math.sin(math.radians(angle_t))))
        )
        ext = ext * 1.05 + 10
        mx, my = min(ext, W / 2 - 1), min(ext, H / 2 - 1)
        cpx, cpy = U(mx, W - mx), U(my, H - my)
        Bw = cam.backproject(cpx, cpy, Tp)
        s = s_guess
        theta = math.radians(angle_t)
        for _ in range(4):
            sc_tmp = _geometry(cam, Bw, theta, s, Tp)
            theta += math.radians(angle_t - sc_tmp["angle"])
            s *= pitch_t * shrink / sc_tmp["pitch"]
        geo = _geometry(cam, Bw, theta, s, Tp)
        half = 1.5 * s + lw_f * s / 2
        ex = np.array([math.cos(theta), -math.sin(theta)])
        ey = np.array([math.sin(theta), math.cos(theta)])
        corners = [Bw + a * half * ex + b * half * ey for a in (-1, 1) for b in (-1, 1)]
        pts = [(*c, z) for c in corners for z in (Tp, Tp + ph)]
        px = cam.project(pts)
        if (
            px[:, 0].min() >= 5
            and px[:, 0].max() <= W - 6
            and px[:, 1].min() >= 5
            and px[:, 1].max() <= H - 6
        ):
            break
    truth = geo
    if truth["pitch"] < 48:
        tags.add("pitch:small")
    elif truth["pitch"] > 75:
        tags.add("pitch:large")
    if abs(truth["angle"]) > 25:
        tags.add("rotated")
    lw = lw_f * s
    if lw_f < 0.04:
        tags.add("lines:thin")
    elif lw_f > 0.08:
        tags.add("lines:thick")
    hp = 1.5 * s + lw / 2 + margin_f * s

    # ---- lines
    if "lines:light" in want:
        light_lines = True
    elif "lines:dark" in want:
        light_lines = False
    elif kind == "dark":
        light_lines = True
    elif kind == "mid-grey" or (kind == "saturated" and _luma(plate) < 140):
        light_lines = bool(rng.random() < 0.45)
    elif kind == "wood":
        light_lines = bool(rng.random() < 0.15) and _luma(plate) < 110
    else:
        light_lines = False
    if light_lines:
        line = _grey(rng, 190, 250, 3.0)
    elif kind == "dark":
        line = _grey(rng, 0, 12, 1.0)
    else:
        line = _grey(rng, 8, 70, 2.0)
        if rng.random() < 0.15:  # a coloured marker or ink
            line = np.clip(line * np.array(_choose(rng, [(1.8, 0.8, 0.6), (0.6, 0.9, 1.5)])), 0, 255)
    tags.add("lines:light" if light_lines else "lines:dark")
    if "lines:engraved" in want:
        engraved = True
    elif "lines:printed" in want or kind == "paper":
        engraved = False
    else:
        engraved = bool(rng.random() < 0.35)
    tags.add("lines:engraved" if engraved else "lines:printed")

    # ---- light
    if "light:area" in want:
        area = True
    elif "light:point" in want:
        area = False
    else:
        area = bool(rng.random() < 0.5)
    tags.add("light:area" if area else "light:point")
    if rng.random() < 0.12:  # a lamp beside the camera
        L = np.array([U(-150, 150), U(-150, 150), Hc + U(30, 200)])
    else:
        az, dist = U(0, 2 * math.pi), U(0, 1000)
        L = np.array([Bw[0] + dist * math.cos(az), Bw[1] + dist * math.sin(az), U(700, 2000)])
    light_size = U(150, 600) if area else U(3, 20)
    amb = U(0.25, 0.5)
    if "gradient" in want or ("gradient" not in want and rng.random() < 0.3):
        ratio = U(1.9, 2.1)
    else:
        ratio = U(1.0, 1.25)
    if ratio >= 1.5:
        tags.add("gradient")
    gdir = U(0, 2 * math.pi)
    grad_dir = np.array([math.cos(gdir), math.sin(gdir)]) / (3 * s)

    # ---- pieces
    if "glossy" in want:
        glossy = True
    elif "matte" in want:
        glossy = False
    else:
        glossy = bool(rng.random() < 0.5)
    tags.add("glossy" if glossy else "matte")
    ks = U(0.25, 0.6) if glossy else 0.0
    shin = U(60, 300)  # a small light in a smooth top: a tight highlight
    if area:
        ks, shin = ks * 0.2, U(12, 40)  # a broad, dim highlight
    Rp = r_f * s
    bev = min(ph * U(0.3, 0.6), Rp * 0.3)
    pucks: list[Puck] = []
    offs = []
    for i, ch in enumerate(board):
        if ch == ".":
            continue
        a = U(0, 2 * math.pi)
        mag = U(0, max_off)
        offs.append((i, mag, a))
    if "off-centre" in want and offs:
        k = int(rng.integers(len(offs)))
        offs[k] = (offs[k][0], max(0.045, max_off * U(0.8, 1.0)), offs[k][2])
    if offs and max(o[1] for o in offs) > 0.04:
        tags.add("off-centre")
    white_l, black_l = _to_linear(white), _to_linear(black)
    for i, mag, a in offs:
        r, c = divmod(i, 3)
        bx = ((c - 1) + mag * math.cos(a)) * s
        by = ((r - 1) + mag * math.sin(a)) * s
        w = (
            Bw
            + bx * np.array([math.cos(theta), -math.sin(theta)])
            + by * np.array([math.sin(theta), math.cos(theta)])
        )
        alb = (black_l if board[i] == "X" else white_l) * np.float32(U(0.97, 1.03))
        pucks.append(Puck(w[0], w[1], Tp, Rp, ph, bev, alb, ks, shin, np.ones(3, np.float32), board[i]))
    if r_f < 0.28:
        tags.add("small-pieces")
    elif r_f > 0.38:
        tags.add("large-pieces")
    if ph <= 4:
        tags.add("thin-pieces")
    elif ph >= 6:
        tags.add("thick-pieces")
    if "O" in board and abs(_luma(white) - lp) <= 20:
        tags.add("white-near-plate")
    if "X" in board and kind == "dark" and abs(_luma(black) - lp) <= 25:
        tags.add("black-near-plate")
    if "X" not in board and "O" not in board:
        tags.add("empty-board")
    if "." not in board:
        tags.add("full-board")

    # ---- table and things on it
    table_kind = next(
        (t.split(":")[1] for t in ("table:wood", "table:white", "table:desk") if t in want), None
    )
    table_kind = table_kind or _choose(rng, ["wood", "white", "desk"])
    tags.add(f"table:{table_kind}")
    ex = np.array([math.cos(theta), -math.sin(theta)])
    ey = np.array([math.sin(theta), math.cos(theta)])
    sides = [ex, -ex, ey, -ey]
    side_order = list(rng.permutation(4))
    supply = "supply" in want or rng.random() < 0.3
    if supply:
        tags.add("supply")
        sd = sides[side_order[0]]
        along = np.array([-sd[1], sd[0]])
        gap, sp = U(8, 35), U(1, 6)
        for col, alb_c in enumerate([black_l, white_l]):
            d = hp + gap + Rp + col * (2 * Rp + U(3, 12))
            for k in range(5):
                pos = Bw + sd * d + along * ((k - 2) * (2 * Rp + sp) + U(-1, 1))
                pucks.append(
                    Puck(
                        pos[0],
                        pos[1],
                        0.0,
                        Rp,
                        ph,
                        bev,
                        alb_c * np.float32(U(0.97, 1.03)),
                        ks,
                        shin,
                        np.ones(3, np.float32),
                        "spare",
                    )
                )

    # the table's texture covers what the camera sees of it
    corner_px = [(x, y) for x in (-40, W / 2, W + 40) for y in (-40, H / 2, H + 40)]
    cw = np.array([cam.backproject(x, y, 0.0) for x, y in corner_px])
    u0, v0 = cw.min(axis=0) - 20
    u1, v1 = cw.max(axis=0) + 20
    tres = max(0.5, max(u1 - u0, v1 - v0) / 400)
    tw, th = math.ceil((u1 - u0) / tres), math.ceil((v1 - v0) / tres)
    if table_kind == "wood":
        tb = np.array(_choose(rng, [(70, 110, 160), (90, 140, 190), (40, 65, 100), (110, 160, 200)]), float)
        tb = np.clip(tb * U(0.9, 1.1), 0, 255)
        m = _wood(rng, (th, tw), tres, bool(rng.random() < 0.5))
    elif table_kind == "white":
        tb = _grey(rng, 215, 245, 3.0)
        m = 1.0 + 0.015 * _noise(rng, (8, 8), (th, tw)) + 0.01 * _noise(rng, (th // 2, tw // 2), (th, tw))
    else:
        tb = _choose(
            rng,
            [
                lambda: _grey(rng, 60, 140, 3),
                lambda: _grey(rng, 25, 45, 2),
                lambda: np.array([U(60, 90), U(90, 120), U(120, 150)]),
            ],
        )()
        m = 1.0 + 0.02 * _noise(rng, (6, 6), (th, tw)) + 0.05 * _noise(rng, (th, tw), (th, tw))
    m = m.astype(np.float32)
    table = cv2.merge([m * float(c) for c in _to_linear(tb)])

    def to_tex(poly_world: np.ndarray) -> np.ndarray:
        return np.round(((poly_world - [u0, v0]) / tres - 0.5) * 16).astype(np.int32)

    def paint(poly_world: np.ndarray, colour_lin: np.ndarray) -> None:
        pts = to_tex(poly_world)
        xa, ya = np.clip(pts.min(axis=0) // 16 - 2, 0, [tw, th])
        xb, yb = np.clip(pts.max(axis=0) // 16 + 3, 0, [tw, th])
        if xa >= xb or ya >= yb:
            return
        mask = np.zeros((yb - ya, xb - xa), np.uint8)
        cv2.fillPoly(mask, [pts - np.array([xa, ya]) * 16], 255, cv2.LINE_AA, shift=4)
        a = (mask.astype(np.float32) / 255.0)[..., None]
        sub = table[ya:yb, xa:xb]
        sub[:] = sub * (1 - a) + colour_lin[None, None, :] * a

    if "tape" in want or rng.random() < 0.3:
        tags.add("tape")
        red = _to_linear(np.array([U(20, 50), U(20, 50), U(160, 210)]))
        for _ in range(int(rng.integers(1, 4))):
            sd = sides[int(rng.integers(4))]
            centre = Bw + sd * (hp + U(5, 60)) + np.array([-sd[1], sd[0]]) * U(-hp, hp)
            ang = math.atan2(sd[1], sd[0]) + math.pi / 2 + U(-0.15, 0.15)
            paint(_rect_poly(centre, U(40, 130), U(8, 13), ang), red)
    if "paper" in want or rng.random() < 0.25:
        tags.add("paper")
        sd = sides[side_order[1]]
        a5 = rng.random() < 0.5
        pw, ph_ = (74.0, 105.0) if a5 else (105.0, 148.5)
        ang = math.atan2(sd[1], sd[0]) + U(-0.3, 0.3)
        plate_poly = np.array(
            [Bw + a * hp * ex + b * hp * ey for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        )
        for k in range(12):
            centre = Bw + sd * (hp + ph_ * U(0.4, 1.2) + 4 * k)
            poly = _rect_poly(centre, ph_, pw, ang)
            area, _ = cv2.intersectConvexConvex(poly.astype(np.float32), plate_poly.astype(np.float32))
            if area <= 0:
                break
        paint(poly, _to_linear(_grey(rng, 228, 250, 2.0)))
        ink = _to_linear(_grey(rng, 150, 190, 3.0))  # text rows, grey at this scale
        axis_w, axis_h = np.array([math.cos(ang), math.sin(ang)]), np.array([-math.sin(ang), math.cos(ang)])
        spacing = U(6, 9)
        for row in range(int(rng.integers(6, 16))):
            y = -pw + 15 + row * spacing
            if y > pw - 10:
                break
            x1 = -ph_ + 15 + U(0.3, 1.0) * (2 * ph_ - 30)
            cc = centre + axis_h * y + axis_w * ((-ph_ + 15 + x1) / 2)
            paint(_rect_poly(cc, (x1 + ph_ - 15) / 2, 0.7, ang), ink)

    # ---- occluders
    occluder = None
    if occ is not None:
        tags.add("occluded")
        tags.add(occ)
        occluder = {"kind": occ}
        if occ == "occ:coin":
            empties = [i for i in range(9) if board[i] == "."] or list(range(9))
            i = int(_choose(rng, empties))
            r, c = divmod(i, 3)
            Rc = min(U(9, 13.5), (0.5 - lw_f / 2 - 0.04) * s)
            off = max(0.0, (0.5 - lw_f / 2 - 0.02) * s - Rc) * U(0, 0.8)
            a = U(0, 2 * math.pi)
            pos = Bw + ((c - 1) * s + off * math.cos(a)) * ex + ((r - 1) * s + off * math.sin(a)) * ey
            metal = _to_linear(np.array(_choose(rng, [(80, 120, 190), (60, 170, 210), (185, 185, 180)])))
            pucks.append(
                Puck(
                    pos[0],
                    pos[1],
                    Tp,
                    Rc,
                    U(1.4, 2.2),
                    0.5,
                    metal * 0.35,
                    U(0.6, 0.9),
                    U(15, 40),
                    metal,
                    "coin",
                )
            )
            occluder["square"] = i + 1
        elif occ == "occ:pen":
            i = int(rng.integers(9))
            r, c = divmod(i, 3)
            centre = Bw + ((c - 1) * s + U(-0.2, 0.2) * s) * ex + ((r - 1) * s + U(-0.2, 0.2) * s) * ey
            a = U(0, math.pi)
            half = U(60, 75)
            d = np.array([math.cos(a), math.sin(a)])
            p0, p1 = centre - d * half * U(0.3, 1.7), None
            p1 = p0 + d * 2 * half
            rp = U(3.8, 5.5)
            # resting on the plate, or on the pucks when it crosses one
            z = Tp + rp
            for pk in pucks:
                if pk.kind in ("X", "O"):
                    q = np.array([pk.u, pk.v]) - p0
                    t = float(np.clip(q @ (p1 - p0) / ((p1 - p0) @ (p1 - p0)), 0, 1))
                    if np.linalg.norm(q - t * (p1 - p0)) < pk.R + rp:
                        z = Tp + ph + rp
            body = _choose(
                rng, [(150, 60, 20), (30, 30, 30), (40, 40, 170), (235, 235, 235), (170, 170, 165)]
            )
            occluder.update(
                p0=p0,
                p1=p1,
                r=rp,
                z=z,
                alb=_to_linear(body),
                tip=U(0.08, 0.15),
                tip_alb=_to_linear(np.array(_choose(rng, [(190, 190, 185), (30, 30, 30)]))),
                ks=U(0.3, 0.7),
                shin=U(20, 60),
                square=i + 1,
            )
        elif occ == "occ:sheet":
            sd = sides[int(rng.integers(4))]
            e = U(-0.9, 0.9) * s
            a5 = rng.random() < 0.5
            half_n, half_t = (74.0, 105.0) if a5 else (105.0, 148.5)
            if rng.random() < 0.5:
                half_n, half_t = half_t, half_n
            ang = math.atan2(sd[1], sd[0]) + U(-0.25, 0.25)
            n_ax = np.array([math.cos(ang), math.sin(ang)])
            centre = Bw + sd * e + n_ax * half_n + np.array([-n_ax[1], n_ax[0]]) * U(-0.6, 0.6) * s
            occluder.update(
                centre=centre,
                half=(half_n, half_t),
                angle=ang,
                z=Tp + ph + U(2, 25),
                alb=_to_linear(_grey(rng, 228, 250, 2.0)),
                ink=_to_linear(_grey(rng, 60, 120, 3.0)),
                rows=U(5.5, 8.0),
            )
        else:  # hand
            i = int(rng.integers(9))
            r, c = divmod(i, 3)
            T = Bw + ((c - 1) * s + U(-0.3, 0.3) * s) * ex + ((r - 1) * s + U(-0.3, 0.3) * s) * ey
            zh = Tp + ph + U(15, 70)
            edge = int(rng.integers(4))
            ep = [
                (U(80, W - 80), -90),
                (U(80, W - 80), H + 90),
                (-90, U(60, H - 60)),
                (W + 90, U(60, H - 60)),
            ][edge]
            E = cam.backproject(ep[0], ep[1], zh)
            d = T - E
            d = d / np.linalg.norm(d)
            perp = np.array([-d[1], d[0]])
            lf, lpalm, pwid = U(65, 85), U(88, 105), U(78, 92)
            rf, ra = U(8, 10), U(30, 38)
            rw = 0.75 * ra
            K = T - d * lf
            Wr = K - d * lpalm
            skin = np.clip(np.array(_choose(rng, SKIN), float) * U(0.92, 1.08), 0, 255)
            caps = []  # (p0, p1, r0, r1, flatten, material)
            for o in (-0.27, 0.0, 0.27):
                caps.append((Wr + perp * o * pwid, K + perp * o * pwid, pwid * 0.27, pwid * 0.27, 0.55, 0))
            thumb_side = 1 if rng.random() < 0.5 else -1
            fans = (-10, -3, 3, 10)
            lens = (0.95, 1.0, 0.95, 0.78)
            for k, o in enumerate((-0.375, -0.125, 0.125, 0.375)):
                idx = k if thumb_side > 0 else 3 - k  # 0 the index finger ... 3 the little one
                base = K + perp * o * pwid * 0.95
                a = math.radians(fans[k] + U(-4, 4))
                dk = np.array(
                    [d[0] * math.cos(a) - d[1] * math.sin(a), d[0] * math.sin(a) + d[1] * math.cos(a)]
                )
                ln = lf * lens[idx] * U(0.6, 1.0)  # a bent finger looks shorter from above
                rr = rf * (0.88 if idx == 3 else 1.0)
                caps.append((base, base + dk * ln, rr, rr * 0.85, 0.9, 0))
            a = math.radians(thumb_side * -1 * U(35, 60))
            dt = np.array([d[0] * math.cos(a) - d[1] * math.sin(a), d[0] * math.sin(a) + d[1] * math.cos(a)])
            tb0 = Wr + perp * (-thumb_side) * 0.38 * pwid + d * 20
            caps.append((tb0, tb0 + dt * U(50, 65), 11.0, 9.5, 0.9, 0))
            far = E - d * 300
            sleeve = rng.random() < 0.5
            if sleeve:
                cut = Wr - d * U(30, 90)
                caps.append((Wr, cut, rw, rw + (ra - rw) * 0.2, 0.8, 0))
                caps.append((cut, far, ra + 4, ra + 8, 0.8, 1))
            else:
                caps.append((Wr, far, rw, ra, 0.8, 0))
            sleeve_col = np.array(
                _choose(rng, [(90, 50, 30), (60, 60, 60), (40, 40, 150), (60, 110, 60), (220, 220, 215)]),
                float,
            )
            occluder.update(z=zh, caps=caps, alb=(_to_linear(skin), _to_linear(sleeve_col)), square=i + 1)
    occluded = occluder is not None

    # ---- camera pipeline
    post: dict = {}
    if "exposure:low" in want:
        exposure = U(0.5, 0.7)
    elif "exposure:high" in want:
        exposure = U(1.35, 1.6)
    else:
        rr = rng.random()
        exposure = U(0.5, 0.7) if rr < 0.2 else (U(1.35, 1.6) if rr < 0.4 else U(0.8, 1.25))
    if exposure < 0.75:
        tags.add("exposure:low")
    elif exposure > 1.3:
        tags.add("exposure:high")
    wb = next((t.split(":")[1] for t in ("wb:warm", "wb:cool", "wb:neutral") if t in want), None)
    wb = wb or _choose(rng, ["warm", "cool", "neutral"])
    tags.add(f"wb:{wb}")
    if wb == "warm":
        gains = np.array([U(0.7, 0.85), 1.0, U(1.08, 1.2)])
    elif wb == "cool":
        gains = np.array([U(1.08, 1.2), 1.0, U(0.78, 0.9)])
    else:
        gains = np.array([U(0.97, 1.03), 1.0, U(0.97, 1.03)])
    vig = U(0.3, 0.5) if ("vignette" in want or rng.random() < 0.3) else U(0.0, 0.15)
    if vig >= 0.3:
        tags.add("vignette")
    if "noise:high" in want or rng.random() < 0.25:
        shot, read = U(0.004, 0.01), U(0.006, 0.012)
        tags.add("noise:high")
    else:
        shot, read = U(0.0005, 0.003), U(0.001, 0.004)
    q = int(rng.integers(50, 65)) if "jpeg:low" in want else int(rng.integers(50, 96))
    if q < 65:
        tags.add("jpeg:low")
    blur = U(1.0, 2.0) if ("motion-blur" in want or rng.random() < 0.25) else U(0.0, 0.6)
    if blur >= 1.0:
        tags.add("motion-blur")
    sigma = U(0.9, 1.6) if ("defocus" in want or rng.random() < 0.2) else U(0.0, 0.5)
    if sigma >= 0.9:
        tags.add("defocus")
    post.update(
        exposure=exposure,
        gains=gains.astype(np.float32),
        vignette=vig,
        shot=shot,
        read=read,
        jpeg=q,
        blur=blur,
        blur_angle=U(0, math.pi),
        sigma=sigma,
        bayer=(int(rng.integers(2)), int(rng.integers(2))),
    )

    # ---- plate texture, now that the light is known
    Lb = np.array([(L[:2] - Bw) @ ex, (L[:2] - Bw) @ ey, L[2] - Tp])
    Lb = Lb / np.linalg.norm(Lb)
    plate_tex, plate_res = _plate_texture(rng, kind, plate, 2 * hp, Lb)
    if kind not in ("wood", "paper", "dark"):
        plate_tex = None  # its mottling is below the noise: a plain plate renders faster
    side = _to_linear(plate) * (0.85 if kind != "wood" else 0.7)
    sheen = (
        (U(0.02, 0.08), U(5, 30))
        if kind in ("white", "saturated", "pastel", "mid-grey", "light-grey") and (rng.random() < 0.5)
        else (0.0, 1.0)
    )

    scene = Scene(
        cam=cam,
        board="".join(board),
        Tp=Tp,
        B=Bw,
        theta=theta,
        s=s,
        hp=hp,
        lw=lw,
        plate_tex=plate_tex,
        plate_base=_to_linear(plate),
        plate_res=plate_res,
        side_alb=side,
        sheen=sheen,
        line_alb=_to_linear(line),
        engraved=engraved,
        groove=U(0.6, 1.5),
        pucks=pucks,
        L=L,
        light_size=light_size,
        amb=amb,
        grad_dir=grad_dir,
        grad_ratio=ratio,
        table_tex=table,
        table_origin=(float(u0), float(v0)),
        table_res=float(tres),
        post=post,
        occluder=occluder,
        tags=tags,
    )
    scene.truth = {
        "centre": truth["centre"],
        "angle": truth["angle"],
        "pitch": truth["pitch"],
        "occluded": occluded,
        "plate_luma": lp,
        "white_luma": _luma(white),
        "black_luma": _luma(black),
    }
    missing = want - tags
    if missing:
        raise ValueError(f"cannot honour {sorted(missing)} together with {sorted(want - missing)}")
    return scene


def _geometry(cam: Camera, B: np.ndarray, theta: float, s: float, Tp: float) -> dict:
    """Centre, apparent angle and pitch (px) of a board at B, rotation theta, pitch s on a plate Tp thick."""
    ex = np.array([math.cos(theta), -math.sin(theta)])
    ey = np.array([math.sin(theta), math.cos(theta)])
    pts = [B, B + s * ex, B - s * ex, B + s * ey, B - s * ey]
    p = cam.project([(q[0], q[1], Tp) for q in pts])
    c = p[0]
    vx = (p[1] - p[2]) / 2
    vy = (p[3] - p[4]) / 2
    ax = math.atan2(-vx[1], vx[0])
    ay = math.atan2(vy[0], vy[1])  # the y axis (sin a, cos a) rotated back onto x
    a = math.degrees(math.atan2(math.sin(ax) + math.sin(ay), math.cos(ax) + math.cos(ay)))
    pitch = float(np.mean([np.linalg.norm(p[k] - c) for k in range(1, 5)]))
    return {"centre": (float(c[0]), float(c[1])), "angle": a, "pitch": pitch}


# ------------------------------------------------------------------------------------------ rendering


def _coarse(xs: np.ndarray, step: int) -> np.ndarray:
    """Pixel centres of a grid step times coarser than xs whose upsampling (cv2.resize) lines up with xs."""
    dx = float(xs[1] - xs[0]) if len(xs) > 1 else 1.0
    return xs[0] + (np.arange(math.ceil(len(xs) / step)) * step + (step - 1) / 2) * dx


def _upsample(a: np.ndarray, step: int, shape: tuple[int, int]) -> np.ndarray:
    big = cv2.resize(
        a.astype(np.float32), (a.shape[1] * step, a.shape[0] * step), interpolation=cv2.INTER_LINEAR
    )
    return big[: shape[0], : shape[1]]


def _fields(sc: Scene, xs: np.ndarray, ys: np.ndarray, step: int = 8):
    """Ambient and direct irradiance (relative to a horizontal surface at the board centre, the light's
    gradient included) and the plate's sheen, computed at every step-th pixel and upsampled."""
    cam = sc.cam
    shape = (len(ys), len(xs))
    au, bv = cam.rays(_coarse(xs, step), _coarse(ys, step))
    au, bv = au.astype(np.float64), bv.astype(np.float64)
    dz = cam.C[2] - sc.Tp
    Pu = cam.C[0] + dz * au
    Pv = cam.C[1] + dz * bv
    lu, lv, lz = sc.L[0] - Pu, sc.L[1] - Pv, sc.L[2] - sc.Tp
    d = np.sqrt(lu * lu + lv * lv + lz * lz)
    D = lz / d**3
    c0 = np.array([sc.L[0] - sc.B[0], sc.L[1] - sc.B[1], sc.L[2] - sc.Tp])
    D0 = c0[2] / np.linalg.norm(c0) ** 3
    t = np.clip((Pu - sc.B[0]) * sc.grad_dir[0] + (Pv - sc.B[1]) * sc.grad_dir[1], -0.9, 0.9)
    g = np.exp(math.log(sc.grad_ratio) * t)
    Fa = sc.amb * g
    Fd = (1 - sc.amb) * (D / D0) * g
    out = [_upsample(Fa, step, shape), _upsample(Fd, step, shape)]
    ks, n = sc.sheen
    if ks > 0:
        vu, vv, vz = cam.C[0] - Pu, cam.C[1] - Pv, cam.C[2] - sc.Tp
        vn = np.sqrt(vu * vu + vv * vv + vz * vz)
        rv = np.clip((-lu * vu - lv * vv + lz * vz) / (d * vn), 0, 1)
        out.append(_upsample(ks * Fd / (lz / d) * rv**n, step, shape))
    return out


def _shadow_vec(sc: Scene, pk: Puck):
    lzr = sc.L[2] - pk.zb
    k = lzr / max(lzr - pk.h, 1.0)
    sv = (np.array([pk.u, pk.v]) - sc.L[:2]) * (k - 1)
    return float(k), sv


def _image_boxes(sc: Scene) -> None:
    """Each puck's image box, of its body and of its body with its shadow and contact darkening."""
    if not sc.pucks:
        return
    ang = np.arange(12) * (math.pi / 6)
    ring = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    pts = []
    for pk in sc.pucks:
        k, sv = _shadow_vec(sc, pk)
        c = np.array([pk.u, pk.v])
        for centre, r, z in (
            (c, pk.R, pk.zb),
            (c, pk.R, pk.zb + pk.h),
            (c + sv, pk.R * k + 2, pk.zb),
            (c, pk.R * 1.6 + 3, pk.zb),
        ):
            pts.append(np.concatenate([centre + r * ring, np.full((12, 1), z)], axis=1))
    p = sc.cam.project(np.concatenate(pts)).reshape(len(sc.pucks), 4 * 12, 2)
    for pk, q in zip(sc.pucks, p, strict=True):
        body = q[:24]
        pk.box = (body[:, 0].min(), body[:, 0].max(), body[:, 1].min(), body[:, 1].max())
        pk.shadow_box = (q[:, 0].min(), q[:, 0].max(), q[:, 1].min(), q[:, 1].max())


def _region_box(box, x0: int, y0: int, scale: int, shape):
    """An image box (x min, x max, y min, y max) as slices of a region starting at (x0, y0)."""
    xa = max(math.floor((box[0] - x0 + 0.5) * scale - 0.5) - 2, 0)
    xb = min(math.ceil((box[1] - x0 + 0.5) * scale - 0.5) + 3, shape[1])
    ya = max(math.floor((box[2] - y0 + 0.5) * scale - 0.5) - 2, 0)
    yb = min(math.ceil((box[3] - y0 + 0.5) * scale - 0.5) + 3, shape[0])
    if xa >= xb or ya >= yb:
        return None
    return slice(ya, yb), slice(xa, xb)


class _Rays:
    """The rays (au, bv) of a pixel grid, computed box by box when asked."""

    def __init__(self, cam: Camera, xs: np.ndarray, ys: np.ndarray) -> None:
        self.cam, self.xs, self.ys = cam, xs, ys
        self.shape = (len(ys), len(xs))

    def __getitem__(self, box) -> tuple[np.ndarray, np.ndarray]:
        return self.cam.rays(self.xs[box[1]], self.ys[box[0]])


def _puck_shadows(sc, pucks, rays: _Rays, x0, y0, scale, ao, sh, pm) -> None:
    """Multiply each puck's cast shadow (into sh) and contact darkening (into ao) on its base plane."""
    Cu, Cv, Hc = (float(v) for v in sc.cam.C)
    for pk in pucks:
        box = _region_box(pk.shadow_box, x0, y0, scale, ao.shape)
        if box is None:
            continue
        A_u, A_v = rays[box]
        dzb = Hc - pk.zb
        Eu = (Cu - pk.u) + dzb * A_u
        Ev = (Cv - pk.v) + dzb * A_v
        rho = np.sqrt(Eu * Eu + Ev * Ev)
        k, sv = _shadow_vec(sc, pk)
        s0, s1 = float(sv[0]), float(sv[1])
        svl2 = s0 * s0 + s1 * s1
        if svl2 > 1e-6:
            t = np.clip((Eu * s0 + Ev * s1) * (1.0 / svl2), 0, 1)
            qu = Eu - t * s0
            qv = Ev - t * s1
            dist = np.sqrt(qu * qu + qv * qv) - pk.R * (1 + t * (k - 1))
        else:
            t = 0.0
            dist = rho - pk.R
        lzr = float(sc.L[2]) - pk.zb
        pw = pm * 0.7 + t * (sc.light_size * pk.h / max(lzr - pk.h, 1.0))
        sh[box] *= np.clip(0.5 + dist / pw, 0, 1)
        ao[box] *= 1 - 0.45 * np.exp(np.minimum(pk.R - rho, 0) * (1.0 / (0.12 * pk.R + 0.3 * pk.h)))


def _draw_pucks(sc, pucks, rad, rays: _Rays, Fa, Fd, x0, y0, scale, floor=None) -> None:
    Cu, Cv, Hc = (float(v) for v in sc.cam.C)
    order = sorted(pucks, key=lambda p: -((p.u - Cu) ** 2 + (p.v - Cv) ** 2 + (Hc - p.zb) ** 2))
    for pk in order:  # far ones first
        box = _region_box(pk.box, x0, y0, scale, rays.shape)
        if box is not None:
            fl = None if floor is None else floor(box)
            _draw_puck(sc, pk, [r[box] for r in rad], *rays[box], Fa[box], Fd[box], fl)


def _render_table(sc: Scene) -> np.ndarray:
    """The whole frame at 1x as if there were no plate: the table, what lies on it, the spare pucks.
    Planar linear radiance (3, H, W)."""
    cam = sc.cam
    Cu, Cv, Hc = (float(v) for v in cam.C)
    xs, ys = np.arange(W, dtype=np.float64), np.arange(H, dtype=np.float64)
    rays = _Rays(cam, xs, ys)
    Fa, Fd = _fields(sc, xs, ys)[:2]
    u0, v0 = sc.table_origin
    inv = 1.0 / sc.table_res
    cau, cbv = cam.rays(_coarse(xs, 4), _coarse(ys, 4))  # the table's texture coordinates are smooth
    tex = cv2.remap(
        sc.table_tex,
        _upsample((Cu - u0 + Hc * cau) * inv - 0.5, 4, (H, W)),
        _upsample((Cv - v0 + Hc * cbv) * inv - 0.5, 4, (H, W)),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REFLECT,
    )
    spares = [pk for pk in sc.pucks if pk.zb == 0.0]
    if spares:
        ao = np.ones((H, W), np.float32)
        sh = np.ones((H, W), np.float32)
        _puck_shadows(sc, spares, rays, 0, 0, 1, ao, sh, Hc / cam.f)
        light = Fa * ao + Fd * sh
    else:
        light = Fa + Fd
    rad = [tex[..., c] * light for c in range(3)]
    if spares:
        _draw_pucks(sc, spares, rad, rays, Fa, Fd, 0, 0, 1)
    return np.stack(rad)


TILE = 16384  # pixels a tile: the per-pixel arrays of one tile stay in the cache


def _render_board(sc: Scene, bg: np.ndarray, x0: int, y0: int, w: int, h: int, scale: int) -> np.ndarray:
    """The board's box at scale x: the plate, its grid, the pucks on it and their shadows, over the
    table's radiance bg (the 1x frame). Planar linear radiance (3, h * scale, w * scale), tile by tile."""
    xs = x0 + (np.arange(w * scale) + 0.5) / scale - 0.5
    ys = y0 + (np.arange(h * scale) + 0.5) / scale - 0.5
    fields = _fields(sc, xs, ys)
    shape = (len(ys), len(xs))
    # smooth maps, computed on coarser grids and upsampled: the rays, the board-frame coordinates of
    # their points on the table and on the plate's top, the plate's shadow and contact darkening
    cam = sc.cam
    Cu, Cv, Hc = (float(v) for v in cam.C)
    Tp = float(sc.Tp)
    ex, ey = sc.ex, sc.ey
    exu, exv, eyu, eyv = float(ex[0]), float(ex[1]), float(ey[0]), float(ey[1])

    def board_coords(step):
        au, bv = cam.rays(_coarse(xs, step), _coarse(ys, step))
        du = (Cu - float(sc.B[0])) + Hc * au
        dv = (Cv - float(sc.B[1])) + Hc * bv
        bx0 = du * exu + dv * exv
        by0 = du * eyu + dv * eyv
        return au, bv, bx0, by0, bx0 - Tp * (au * exu + bv * exv), by0 - Tp * (au * eyu + bv * eyv)

    geo = [_upsample(a, 4, shape) for a in board_coords(4)[2:]]
    if Tp > 0.5:
        _, _, bx0, by0, _, _ = board_coords(2)
        hp = float(sc.hp)
        out0 = np.maximum(np.abs(bx0), np.abs(by0)) - hp  # > 0 off the plate's footprint
        Lrel = sc.L[:2] - sc.B
        Lbx, Lby = float(Lrel @ ex), float(Lrel @ ey)
        q = Tp / float(sc.L[2])
        dout = np.maximum(np.abs(bx0 + q * (Lbx - bx0)), np.abs(by0 + q * (Lby - by0))) - hp
        pen = max((Hc - Tp) / cam.f, sc.light_size * Tp / float(sc.L[2]))
        sh = np.clip(0.5 + dout * (1.0 / pen), 0, 1)
        ao = 1.0 - 0.45 * np.exp(np.minimum(-out0, 0) * (1.0 / (0.7 * Tp + 0.5)))
        geo += [_upsample(ao, 2, shape), _upsample(sh, 2, shape)]
    pucks = [pk for pk in sc.pucks if pk.zb > 0.0]
    rays = _Rays(cam, xs, ys)
    if pucks:
        shadow = np.ones(shape, np.float32)
        occl = np.ones(shape, np.float32)
        _puck_shadows(sc, pucks, rays, x0, y0, scale, occl, shadow, (Hc - Tp) / (cam.f * scale))
        if len(geo) == 4:
            geo += [np.ones(shape, np.float32), np.ones(shape, np.float32)]
        geo += [shadow, occl]
    bg_up = [
        cv2.resize(bg[c, y0 : y0 + h, x0 : x0 + w], (w * scale, h * scale), interpolation=cv2.INTER_LINEAR)
        for c in range(3)
    ]
    rad = np.empty((3, len(ys), len(xs)), np.float32)
    # only the columns near the plate's footprint are rendered; the rest is the table as it is
    hull = _board_points(sc)
    mask = np.zeros((h, w), np.uint8)
    hull = cv2.convexHull(np.round((hull - [x0, y0]) * 16).astype(np.int32))
    cv2.fillConvexPoly(mask, hull, 1, lineType=cv2.LINE_8, shift=4)
    mask = cv2.dilate(mask, np.ones((7, 7), np.uint8))
    any_col = mask.any(axis=1)
    first = np.where(any_col, mask.argmax(axis=1), w)
    last = np.where(any_col, w - mask[:, ::-1].argmax(axis=1), 0)
    n = len(ys)
    r0 = 0
    while r0 < n:
        i = r0 // scale
        width = (last[i] - first[i] if last[i] > first[i] else w) * scale
        r1 = min(n, r0 + max(scale, (TILE // max(width, 32)) // scale * scale))
        ca, cb = (
            int(first[r0 // scale : (r1 + scale - 1) // scale].min()),
            int(last[r0 // scale : (r1 + scale - 1) // scale].max()),
        )
        ca, cb = ca * scale, cb * scale
        if ca >= cb:
            for c in range(3):
                rad[c, r0:r1] = bg_up[c][r0:r1]
        else:
            for c in range(3):
                rad[c, r0:r1, :ca] = bg_up[c][r0:r1, :ca]
                rad[c, r0:r1, cb:] = bg_up[c][r0:r1, cb:]
            _board_tile(
                sc,
                [g[r0:r1, ca:cb] for g in geo],
                [f[r0:r1, ca:cb] for f in fields],
                [b[r0:r1, ca:cb] for b in bg_up],
                rad[:, r0:r1, ca:cb],
                x0 + ca / scale,
                y0 + r0 / scale,
                scale,
            )
        r0 = r1
    _draw_pucks(sc, pucks, list(rad), rays, fields[0], fields[1], x0, y0, scale)
    # spare pucks beside a thick plate can stand in front of it: drawn again where above the plate
    spares = [pk for pk in sc.pucks if pk.zb == 0.0]
    if spares and Tp > 0.5:

        def floor(box):
            on = (np.abs(geo[2][box]) <= sc.hp) & (np.abs(geo[3][box]) <= sc.hp)
            return np.where(on, np.float32(Tp), np.float32(0))

        _draw_pucks(sc, spares, list(rad), rays, fields[0], fields[1], x0, y0, scale, floor)
    return rad


def _board_points(sc: Scene) -> np.ndarray:
    """Image points whose hull holds the plate, its pucks and its shadow and contact darkening."""
    hp = sc.hp + (1.5 * sc.Tp + 1.5 if sc.Tp > 0.5 else 0.0)
    hmax = max([pk.h for pk in sc.pucks if pk.zb > 0] + [0.0])
    pts = []
    for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        w = sc.B + a * hp * sc.ex + b * hp * sc.ey
        pts += [(w[0], w[1], 0.0), (w[0], w[1], sc.Tp + hmax)]
        q = sc.Tp / sc.L[2]
        pts.append((w[0] + q * (sc.L[0] - w[0]), w[1] + q * (sc.L[1] - w[1]), 0.0))
    return sc.cam.project(pts)


def _board_tile(sc: Scene, geo, fields, bg, out, x0: float, y0: float, scale: int) -> None:
    cam = sc.cam
    Hc = float(cam.C[2])
    bx0, by0, bx, by = geo[:4]
    shape = bx.shape
    Fa, Fd = fields[0], fields[1]
    pm = (Hc - sc.Tp) / (cam.f * scale)  # mm per pixel on the plate, near the axis
    ex, ey = sc.ex, sc.ey
    Tp, hp = float(sc.Tp), float(sc.hp)
    abx, aby = np.abs(bx), np.abs(by)
    top = (abx <= hp) & (aby <= hp)
    Lrel = sc.L[:2] - sc.B
    lvec = np.array([float(Lrel @ ex), float(Lrel @ ey), sc.L[2] - Tp])
    l0, l1, l2 = (float(v) for v in lvec / np.linalg.norm(lvec))

    dirf = np.ones(shape, np.float32)
    if Tp > 0.5:
        onplate = (np.abs(bx0) <= hp) & (np.abs(by0) <= hp)
        side = onplate & ~top
        ao, sh = geo[4].copy(), geo[5].copy()
        np.copyto(sh, 1.0, where=onplate)
        np.copyto(ao, 1.0, where=top)
        if side.any():
            xface = (abx - hp) > (aby - hp)
            fx = np.where(bx < 0, np.float32(max(-l0, 0) / l2), np.float32(max(l0, 0) / l2))
            fy = np.where(by < 0, np.float32(max(-l1, 0) / l2), np.float32(max(l1, 0) / l2))
            np.copyto(dirf, np.where(xface, fx, fy), where=side)
            np.copyto(ao, 0.55, where=side)
    else:
        onplate = top
        side = None
        sh = np.ones(shape, np.float32)
        ao = np.ones(shape, np.float32)

    # the plate's top: texture and grid lines (analytic, anti-aliased)
    if sc.plate_tex is None:  # a plain plate
        ptex = None
    else:
        n = sc.plate_tex.shape[0]
        ptex = cv2.remap(
            sc.plate_tex,
            bx * (1.0 / sc.plate_res) + (n / 2 - 0.5),
            by * (1.0 / sc.plate_res) + (n / 2 - 0.5),
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT,
        )
    s = float(sc.s)
    half_lw = float(sc.lw) / 2
    ext = 1.5 * s + half_lw
    inv_pm = 1.0 / pm
    tx = bx * (1.0 / s) + 1.5
    ox = (tx - np.clip(np.rint(tx), 0, 3)) * s
    ty = by * (1.0 / s) + 1.5
    oy = (ty - np.clip(np.rint(ty), 0, 3)) * s
    # coverage of a pixel by a line, linear across the line's edges; a line's ends lie under the outer
    # frame's lines, so they need no smoothing
    edge = half_lw * inv_pm + 0.5
    cx = np.clip(edge - np.abs(ox) * inv_pm, 0, 1)
    cx *= aby <= ext
    cy = np.clip(edge - np.abs(oy) * inv_pm, 0, 1)
    cy *= abx <= ext
    cov = np.maximum(cx, cy)
    if sc.engraved:
        g = sc.groove
        norm = l2 * math.sqrt(1 + g * g)
        a_pos, a_neg = max(l2 - g * l0, 0) / norm, max(l2 + g * l0, 0) / norm
        fvx = np.where(ox > 0, np.float32(a_pos), np.float32(a_neg))
        a_pos, a_neg = max(l2 - g * l1, 0) / norm, max(l2 + g * l1, 0) / norm
        fvy = np.where(oy > 0, np.float32(a_pos), np.float32(a_neg))
        fg = np.where(cx >= cy, fvx, fvy)
        np.copyto(dirf, 1.0 + cov * (fg - 1.0), where=top)
        np.copyto(ao, ao * (1.0 - 0.35 * cov), where=top)

    # pucks: shadows and contact darkening on the plate (and the table near it)
    if len(geo) > 6:  # the pucks' shadows and contact darkening
        sh *= geo[6]
        ao *= geo[7]

    light = Fa * ao + Fd * dirf * sh
    inv_bg = 1.0 / (Fa + Fd)
    sheen = fields[2] * sh if len(fields) > 2 else None
    rad = []
    for c in range(3):
        bgc = bg[c] * inv_bg  # the table's albedo, more or less: lit again below with the board's shadows
        if ptex is None:
            alb = (float(sc.line_alb[c]) - float(sc.plate_base[c])) * cov
            alb += float(sc.plate_base[c])
        else:
            alb = ptex * float(sc.plate_base[c])
            alb += (float(sc.line_alb[c]) - alb) * cov
        if side is not None:
            np.copyto(alb, float(sc.side_alb[c]), where=side)
        np.copyto(bgc, alb, where=onplate)
        np.multiply(bgc, light, out=out[c])
        if sheen is not None:
            out[c] += sheen * top
        rad.append(out[c])


_FILLET = [(math.sin(p), math.cos(p)) for p in (1.25, 0.85, 0.45)]


def _draw_puck(sc: Scene, pk: Puck, rad: list[np.ndarray], A_u, A_v, Fa, Fd, floor=None) -> None:
    """Ray-cast one puck into rad; where floor (a surface height under each pixel) is given, only the
    puck's points above it are drawn."""
    Cu, Cv, Hc = (float(v) for v in sc.cam.C)
    R, h, b = float(pk.R), float(pk.h), float(pk.b)
    dzb = Hc - pk.zb
    Eu = (Cu - pk.u) + dzb * A_u
    Ev = (Cv - pk.v) + dzb * A_v
    # flat top
    ru = Eu - h * A_u
    rv = Ev - h * A_v
    hit = ru * ru + rv * rv <= (R - b) ** 2
    cph = np.zeros(A_u.shape, np.float32)  # cosine of the normal's elevation: 0 on top, 1 on the wall
    zeta = np.full(A_u.shape, h, np.float32)
    # the rounded edge, sampled at three heights
    for sphi, cphi in _FILLET:
        zk = h - b + b * sphi
        rk = R - b + b * cphi
        fu = Eu - zk * A_u
        fv = Ev - zk * A_v
        f2 = fu * fu + fv * fv
        m = (f2 <= rk * rk) & ~hit
        if m.any():
            ru[m], rv[m], zeta[m] = fu[m], fv[m], zk
            cph[m] = np.clip((np.sqrt(f2[m]) - (R - b)) / b, 0, 1)
            hit |= m
    # the side wall: where the ray enters the cylinder of radius R below the edge
    a2 = A_u * A_u + A_v * A_v
    eb = Eu * A_u + Ev * A_v
    disc = eb * eb - a2 * (Eu * Eu + Ev * Ev - R * R)
    zw = (eb + np.sqrt(np.maximum(disc, 0))) / np.maximum(a2, 1e-9)
    m = ~hit & (disc >= 0) & (zw >= 0) & (zw <= h - b)
    if m.any():
        ru[m] = Eu[m] - zw[m] * A_u[m]
        rv[m] = Ev[m] - zw[m] * A_v[m]
        zeta[m] = zw[m]
        cph[m] = 1.0
        hit |= m
    if floor is not None:
        hit &= (zeta + pk.zb) > floor
    if not hit.any():
        return
    ru, rv, cp, zh = ru[hit], rv[hit], cph[hit], zeta[hit]
    rn = np.sqrt(ru * ru + rv * rv) + 1e-6
    nu = ru * cp / rn
    nv = rv * cp / rn
    nz = np.sqrt(np.maximum(1 - cp * cp, 0))
    lv = sc.L - np.array([pk.u, pk.v, pk.zb + h])
    lu_, lv_, lz_ = (float(v) for v in lv / np.linalg.norm(lv))
    ndl = nu * lu_ + nv * lv_ + nz * lz_
    fa, fd = Fa[hit], Fd[hit]
    shade = fa * ((0.55 + 0.45 * nz) * (0.6 + 0.4 * zh / h)) + fd * (np.maximum(ndl, 0) / lz_)
    spec = None
    if pk.ks > 0:
        au_h, av_h = A_u[hit], A_v[hit]
        inv = 1.0 / np.sqrt(au_h * au_h + av_h * av_h + 1)
        vx, vy, vz = -au_h * inv, -av_h * inv, inv
        ndv = nu * vx + nv * vy + nz * vz
        ldv = lu_ * vx + lv_ * vy + lz_ * vz
        rdv = np.maximum(2 * ndl * ndv - ldv, 1e-6)
        spec = pk.ks * np.exp(pk.shin * np.log(rdv)) * (ndl > 0) * fd / lz_
    for c in range(3):
        col = shade * float(pk.alb[c])
        if spec is not None:
            col += spec * float(pk.spec[c])
        rad[c][hit] = col


# ------------------------------------------------------------------------------------------ occluders


def _composite_occluders(sc: Scene, lin: np.ndarray) -> None:
    """Pen, sheet or hand over the rendered frame (planar linear (3, H, W)), with their soft shadows."""
    occ = sc.occluder
    if occ is None or occ["kind"] == "occ:coin":
        return
    cam = sc.cam
    Cu, Cv, Hc = (float(v) for v in cam.C)
    xs, ys = np.arange(W, dtype=np.float64), np.arange(H, dtype=np.float64)
    au, bv = cam.rays(xs, ys)
    Fa, Fd = _fields(sc, xs, ys)[:2]
    Lu, Lv, Lz = (float(v) for v in sc.L)
    Tp = float(sc.Tp)
    z = float(occ["z"])
    pm = (Hc - z) / cam.f
    # the shadow on the board, on a grid 4 times coarser
    step = 4
    cau, cbv = cam.rays(_coarse(xs, step), _coarse(ys, step))
    Su = Cu + (Hc - Tp) * cau
    Sv = Cv + (Hc - Tp) * cbv
    q = (z - Tp) / (Lz - Tp)
    Qu = Su + q * (Lu - Su)
    Qv = Sv + q * (Lv - Sv)
    pw = 0.8 + sc.light_size * (z - Tp) / max(Lz - z, 1.0)
    ratio = cv2.resize(Fd / (Fa + Fd), (cau.shape[1], cau.shape[0]), interpolation=cv2.INTER_AREA)
    Pu = Cu + (Hc - z) * au
    Pv = Cv + (Hc - z) * bv
    kind = occ["kind"]
    if kind == "occ:pen":
        p0, p1, r = occ["p0"], occ["p1"], float(occ["r"])
        dist, _, _, _ = _seg_dist(Qu, Qv, p0, p1)
        _apply_shadow(lin, np.clip(0.5 - (dist - r) / pw, 0, 1) * ratio, step)
        box = _seg_box(cam, p0, p1, r, z)
        if box is None:
            return
        ya, yb, xa, xb = box
        dist, t, cu, cv = _seg_dist(Pu[ya:yb, xa:xb], Pv[ya:yb, xa:xb], p0, p1)
        alpha = np.clip((r - dist) / pm + 0.5, 0, 1)
        m = alpha > 0
        if not m.any():
            return
        nu, nv = cu[m] / r, cv[m] / r
        nz = np.sqrt(np.maximum(1 - nu * nu - nv * nv, 0))
        tip = (t[m] > 1 - occ["tip"])[:, None]
        alb = np.where(tip, occ["tip_alb"][None, :], occ["alb"][None, :])
        col = _shade(
            sc,
            alb,
            nu,
            nv,
            nz,
            au[ya:yb, xa:xb][m],
            bv[ya:yb, xa:xb][m],
            Fa[ya:yb, xa:xb][m],
            Fd[ya:yb, xa:xb][m],
            (Pu[ya:yb, xa:xb][m], Pv[ya:yb, xa:xb][m], z),
            occ["ks"],
            occ["shin"],
        )
        _blend(lin, (slice(ya, yb), slice(xa, xb)), m, alpha[m], col)
    elif kind == "occ:sheet":
        c, (hn, ht), ang = occ["centre"], occ["half"], float(occ["angle"])
        ca, sa = math.cos(ang), math.sin(ang)

        def inside(u, v, soft):
            du, dv = u - float(c[0]), v - float(c[1])
            x = du * ca + dv * sa
            y = -du * sa + dv * ca
            return np.clip(np.minimum(hn - np.abs(x), ht - np.abs(y)) / soft + 0.5, 0, 1), x, y

        cover, _, _ = inside(Qu, Qv, pw)
        _apply_shadow(lin, cover * ratio, step)
        alpha, x, y = inside(Pu, Pv, pm)
        m = alpha > 0
        if not m.any():
            return
        row = occ["rows"]
        xm, ym = x[m], y[m]
        frac = np.mod(np.floor((xm + hn) / row) * 0.618, 1.0)  # text rows of uneven length
        ink = (
            (np.mod(xm + hn, row) < 1.2)
            & (np.abs(xm) < hn - 12)
            & (ym > -ht + 15)
            & (ym < ht - 15 - frac * ht)
        )
        alb = np.where(ink[:, None], occ["ink"][None, :], occ["alb"][None, :])
        col = alb * ((Fa[m] + Fd[m]) * (1.0 + 0.05 * xm / hn))[:, None]
        _blend(lin, (slice(None), slice(None)), m, alpha[m], col)
    else:  # hand
        caps = occ["caps"]
        cover = np.zeros(Qu.shape, np.float32)
        for p0, p1, r0, r1, _, _ in caps:
            dist, t, _, _ = _seg_dist(Qu, Qv, p0, p1)
            cover = np.maximum(cover, np.clip(0.5 - (dist - (r0 + t * (r1 - r0))) / pw, 0, 1))
        _apply_shadow(lin, cover * ratio, step)
        height = np.zeros((H, W), np.float32)
        alpha = np.zeros((H, W), np.float32)
        mat = np.zeros((H, W), np.uint8)
        box_all = [H, W, 0, 0]
        for p0, p1, r0, r1, flat, material in caps:
            box = _seg_box(cam, p0, p1, max(r0, r1), z)
            if box is None:
                continue
            ya, yb, xa, xb = box
            box_all = [min(box_all[0], ya), min(box_all[1], xa), max(box_all[2], yb), max(box_all[3], xb)]
            dist, t, _, _ = _seg_dist(Pu[ya:yb, xa:xb], Pv[ya:yb, xa:xb], p0, p1)
            rr = r0 + t * (r1 - r0)
            hgt = flat * np.sqrt(np.maximum(rr * rr - dist * dist, 0))
            hs = height[ya:yb, xa:xb]
            np.copyto(mat[ya:yb, xa:xb], material, where=hgt > hs)
            np.maximum(hs, hgt, out=hs)
            np.maximum(alpha[ya:yb, xa:xb], np.clip((rr - dist) / pm + 0.5, 0, 1), out=alpha[ya:yb, xa:xb])
        ya, xa, yb, xb = box_all
        if ya >= yb or xa >= xb:
            return
        sl = (slice(ya, yb), slice(xa, xb))
        hh = height[sl]
        gx = cv2.Sobel(hh, cv2.CV_32F, 1, 0, ksize=3) / (8 * pm)
        gy = cv2.Sobel(hh, cv2.CV_32F, 0, 1, ksize=3) / (8 * pm)
        m = alpha[sl] > 0
        nrm = 1.0 / np.sqrt(gx[m] ** 2 + gy[m] ** 2 + 1)
        nu, nv, nz = -gx[m] * nrm, -gy[m] * nrm, nrm
        alb = np.where((mat[sl][m] == 1)[:, None], occ["alb"][1][None, :], occ["alb"][0][None, :])
        col = _shade(
            sc,
            alb,
            nu,
            nv,
            nz,
            au[sl][m],
            bv[sl][m],
            Fa[sl][m],
            Fd[sl][m],
            (Pu[sl][m], Pv[sl][m], z + hh[m]),
            0.06,
            10.0,
            wrap=0.35,
        )
        _blend(lin, sl, m, alpha[sl][m], col)


def _blend(lin: np.ndarray, sl, m: np.ndarray, a: np.ndarray, col: np.ndarray) -> None:
    for c in range(3):
        sub = lin[c][sl]
        sub[m] = sub[m] * (1 - a) + col[:, c] * a


def _seg_dist(u, v, p0, p1):
    d0, d1 = float(p1[0] - p0[0]), float(p1[1] - p0[1])
    wu, wv = u - float(p0[0]), v - float(p0[1])
    t = np.clip((wu * d0 + wv * d1) / (d0 * d0 + d1 * d1), 0, 1)
    cu, cv = wu - t * d0, wv - t * d1
    return np.sqrt(cu * cu + cv * cv), t, cu, cv


def _seg_box(cam: Camera, p0, p1, r, z):
    pts = [(p[0] + dx, p[1] + dy, z) for p in (p0, p1) for dx in (-r, r) for dy in (-r, r)]
    p = cam.project(pts)
    xa, xb = int(max(0, math.floor(p[:, 0].min()) - 2)), int(min(W, math.ceil(p[:, 0].max()) + 3))
    ya, yb = int(max(0, math.floor(p[:, 1].min()) - 2)), int(min(H, math.ceil(p[:, 1].max()) + 3))
    if xa >= xb or ya >= yb:
        return None
    return ya, yb, xa, xb


def _apply_shadow(lin: np.ndarray, cover: np.ndarray, step: int) -> None:
    keep = 1.0 - _upsample(cover, step, (H, W))
    lin *= keep[None, :, :]


def _shade(sc, alb, nu, nv, nz, A_u, A_v, Fa, Fd, pos, ks, shin, wrap=0.0):
    pu, pv, pz = pos
    lu, lv, lz = sc.L[0] - pu, sc.L[1] - pv, sc.L[2] - pz
    ln = 1.0 / np.sqrt(lu * lu + lv * lv + lz * lz)
    lu, lv, lz = lu * ln, lv * ln, lz * ln
    ndl = nu * lu + nv * lv + nz * lz
    diff = np.maximum((ndl + wrap) / (1 + wrap), 0) / lz
    col = alb * (Fa * (0.6 + 0.4 * nz) + Fd * diff)[:, None]
    inv = 1.0 / np.sqrt(A_u * A_u + A_v * A_v + 1)
    vx, vy, vz = -A_u * inv, -A_v * inv, inv
    rdv = np.maximum(2 * ndl * (nu * vx + nv * vy + nz * vz) - (lu * vx + lv * vy + lz * vz), 1e-6)
    spec = ks * np.exp(shin * np.log(rdv)) * (ndl > 0) * Fd / lz
    return col + spec[:, None]


# ---------------------------------------------------------------------------------------------- camera


def _board_box(sc: Scene) -> tuple[int, int, int, int]:
    """The image box of the plate, its pucks and its shadow and contact darkening on the table."""
    p = _board_points(sc)
    x0 = int(np.clip(math.floor(p[:, 0].min()) - 3, 0, W))
    x1 = int(np.clip(math.ceil(p[:, 0].max()) + 4, 0, W))
    y0 = int(np.clip(math.floor(p[:, 1].min()) - 3, 0, H))
    y1 = int(np.clip(math.ceil(p[:, 1].max()) + 4, 0, H))
    return x0, y0, x1, y1


def _kernel(sigma: float, blur: float, angle: float) -> np.ndarray:
    n = 7
    c = n // 2
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float64) - c
    k = np.zeros((n, n))
    samples = 9
    for i in range(samples):  # a short line (motion) convolved with a gaussian (defocus)
        t = (i / (samples - 1) - 0.5) * blur
        ox, oy = t * math.cos(angle), t * math.sin(angle)
        s2 = max(sigma, 0.35) ** 2
        k += np.exp(-((xx - ox) ** 2 + (yy - oy) ** 2) / (2 * s2))
    return (k / k.sum()).astype(np.float32)


def _render(sc: Scene, rng: np.random.Generator) -> np.ndarray:
    _image_boxes(sc)
    lin = _render_table(sc)
    x0, y0, x1, y1 = _board_box(sc)
    if x1 > x0 and y1 > y0:
        hi = _render_board(sc, lin, x0, y0, x1 - x0, y1 - y0, 2)
        for c in range(3):
            lin[c, y0:y1, x0:x1] = cv2.resize(hi[c], (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
    _composite_occluders(sc, lin)
    p = sc.post
    # optics: defocus and motion blur, vignetting; the sensor: exposure, the light's colour
    k = _kernel(p["sigma"], p["blur"], p["blur_angle"])
    xx = ((np.arange(W, dtype=np.float32) - sc.cam.cx) / (W / 2)) ** 2
    yy = ((np.arange(H, dtype=np.float32) - sc.cam.cy) / (W / 2)) ** 2
    vig = 1.0 - float(p["vignette"]) * (xx[None, :] + yy[:, None]) / 1.5625
    gains = p["gains"] * np.float32(p["exposure"])
    # the Bayer mosaic of the exposed image, shot and read noise, 12 bits
    ry, rx = p["bayer"]
    chan = np.empty((2, 2), int)
    chan[ry, rx], chan[1 - ry, 1 - rx], chan[ry, 1 - rx], chan[1 - ry, rx] = 2, 0, 1, 1
    raw = np.empty((H, W), np.float32)
    for c in range(3):
        blurred = cv2.filter2D(lin[c], -1, k, borderType=cv2.BORDER_REFLECT)
        for i in range(2):
            for j in range(2):
                if chan[i, j] == c:
                    raw[i::2, j::2] = blurred[i::2, j::2] * (vig[i::2, j::2] * float(gains[c]))
    sd = np.sqrt(np.maximum(raw, 0) * np.float32(p["shot"]) + np.float32(p["read"]) ** 2)
    noise = np.empty((H, W), np.float32)
    cv2.setRNGSeed(int(rng.integers(2**31)))  # OpenCV's generator is faster; seeded from ours
    cv2.randn(noise, 0.0, 1.0)
    raw += sd * noise
    raw16 = np.clip(raw * RAW_MAX + 0.5, 0, RAW_MAX).astype(np.uint16)
    # the camera's processing: gamma-encoded 8-bit mosaic, demosaiced by OpenCV
    out = cv2.cvtColor(_LUT[raw16], _BAYER[(ry, rx)])
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(p["jpeg"])])
    assert ok
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


# ------------------------------------------------------------------------------------------------ API


def make_scene_and_sample(
    rng: np.random.Generator, tags: set[str] | None = None, random_occlusion: bool = True
) -> tuple[Scene, Sample]:
    """The scene (for tests that need its geometry) and the sample make_sample would give."""
    sc = _make_scene(rng, set(tags or ()), random_occlusion)
    img = _render(sc, rng)
    t = sc.truth
    sample = Sample(
        image=img,
        board=sc.board,
        centre_px=t["centre"],
        angle_deg=float(t["angle"]),
        pitch_px=float(t["pitch"]),
        occluded=bool(t["occluded"]),
        tags=frozenset(sc.tags),
    )
    return sc, sample


def make_sample(rng: np.random.Generator, tags: set[str] | None = None) -> Sample:
    """One frame; every tag in ``tags`` is honoured (ValueError if they cannot all be)."""
    return make_scene_and_sample(rng, tags)[1]


def _cycle() -> list[str]:
    families = [f for name, f in TAG_FAMILIES.items() if name != "occlusion"]
    out: list[str] = []
    for i in range(max(len(f) for f in families)):
        out += [f[i] for f in families if i < len(f)]
    return out


TAG_CYCLE = _cycle()


def make_set(n: int, seed: int) -> list[Sample]:
    """n frames; frame i forces the i-th tag of a round robin over the tag families, and every tenth
    frame is occluded (the occluders in turn)."""
    out = []
    k = 0
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        if i % 10 == 9:
            want = {OCCLUSION_TAGS[(i // 10) % len(OCCLUSION_TAGS)]}
        else:
            want = {TAG_CYCLE[k % len(TAG_CYCLE)]}
            k += 1
        out.append(make_scene_and_sample(rng, want, random_occlusion=False)[1])
    return out


def make_frame(index: int, seed: int) -> Sample:
    """Frame ``index`` of ``make_set(n, seed)`` for any ``n`` above it, rendered alone."""
    rng = np.random.default_rng([seed, index])
    if index % 10 == 9:
        want = {OCCLUSION_TAGS[(index // 10) % len(OCCLUSION_TAGS)]}
    else:
        # the frames before it that were not occluded each took one tag of the cycle
        want = {TAG_CYCLE[(index - (index + 1) // 10) % len(TAG_CYCLE)]}
    return make_scene_and_sample(rng, want, random_occlusion=False)[1]


def make_condition(tag: str, n: int, seed: int) -> list[Sample]:
    """n frames that all carry ``tag``."""
    if tag not in TAGS:
        raise ValueError(f"unknown tag {tag!r}")
    key = zlib.crc32(tag.encode())  # frames of different conditions differ even for one seed
    return [make_sample(np.random.default_rng([seed, key, i]), {tag}) for i in range(n)]
