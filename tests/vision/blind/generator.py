"""Blind evaluation-frame generator for the tic-tac-toe board reader.

Renders 640x480 BGR webcam frames of a 3x3 board on a table, with ground truth. The world model was
written only from ``REQUIREMENTS.md`` in this folder (see README.md, "Independence").

Construction in short: a pinhole camera above the table (z = 0, metres) looks down at a plate of
thickness ``t`` whose centre is the world origin.  Flat things (table, clutter on the table, the plate
with its lines) are painted into textures and warped into the image with plane homographies; things
with height (pieces, cups, occluders) are shaded per pixel or drawn as projected polygons; then light
(shadows, gradient, glare, white balance) and the camera (blur, barrel distortion, chromatic
aberration, exposure, noise, flicker, sharpening, YUYV, upscaling, JPEG) are applied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

cv2.setNumThreads(1)

W, H = 640, 480
_DIST_NORM = 400.0  # radius (px) that normalises the barrel model
_GY, _GX = np.mgrid[0:H, 0:W].astype(np.float32)
_DX = _GX - W / 2.0
_DY = _GY - H / 2.0
_R2 = (_DX * _DX + _DY * _DY) / (_DIST_NORM**2)

PLATE_KINDS = (
    "white",
    "grey",
    "cream",
    "wood",
    "painted",
    "pastel",
    "dark",
    "paper",
    "acrylic",
    "printed3d",
    "cloth",
)
LINE_KINDS = ("printed", "marker", "tape", "engraved")
PIECE_KINDS = ("flat", "go", "domed", "foam", "printed3d", "washer")
TABLE_KINDS = ("wood", "laminate", "cloth", "paper", "cutting_mat", "dark")
CLUTTER_KINDS = (
    "paper",
    "tape",
    "phone",
    "ruler",
    "cable",
    "breadboard",
    "cup",
    "gantry_frame",
    "parked_gantry",
)
OCCLUDER_KINDS = ("hand", "hand_edge", "pen", "coin", "gantry", "paper", "held_piece", "sleeve")
SUPPLY_KINDS = ("rows", "tray", "scattered")
BOARD_KINDS = ("empty", "full", "game", "random")

ALL_TAGS: frozenset[str] = frozenset(
    [f"board:{k}" for k in BOARD_KINDS]
    + [f"plate:{k}" for k in PLATE_KINDS]
    + ["plate:glossy", "plate:margin", "plate:no_margin"]
    + [f"lines:{k}" for k in LINE_KINDS]
    + ["lines:dark", "lines:light", "lines:thin", "lines:thick"]
    + [f"pieces:{k}" for k in PIECE_KINDS]
    + ["pieces:matte", "pieces:glossy", "pieces:large", "pieces:offset", "pieces:white_on_white"]
    + ["pieces:black_on_dark", "pieces:tinted"]
    + ["light:warm", "light:cool", "light:gradient", "light:vignette", "light:glare", "light:two_lamps"]
    + ["light:shadow_band", "light:flicker", "light:dim", "light:hard_shadow", "light:cast"]
    + ["cam:tilt", "cam:barrel", "cam:chroma", "cam:motion_blur", "cam:defocus", "cam:jpeg", "cam:sharpened"]
    + ["cam:yuyv", "cam:upscaled", "cam:smudge", "cam:clipped", "cam:crushed", "cam:pitch_small"]
    + ["cam:pitch_large", "geom:diagonal"]
    + [f"table:{k}" for k in TABLE_KINDS]
    + [f"clutter:{k}" for k in CLUTTER_KINDS]
    + [f"occluded:{k}" for k in OCCLUDER_KINDS]
    + [f"supply:{k}" for k in SUPPLY_KINDS]
)

OCCLUDED_PER_BLOCK = 3
BLOCK = 25


@dataclass(frozen=True)
class Sample:
    image: np.ndarray
    board: str
    centre_px: tuple[float, float]
    angle_deg: float
    pitch_px: float
    occluded: bool
    tags: frozenset[str]
    plate_px: np.ndarray
    coin_squares: tuple[int, ...]


@dataclass
class Plan:
    """Every choice that names a condition; pixel-level randomness comes from keyed streams."""

    seed: int
    i: int
    rot_deg: float
    o: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------- helpers


def _rng(seed: int, i: int, k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, i, k]))


def _lum(c: Any) -> float:
    c = np.asarray(c, np.float64)
    return float(0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2])


def _with_lum(c: Any, lum: float) -> np.ndarray:
    c = np.asarray(c, np.float64)
    c = c * (lum / max(_lum(c), 1e-3))
    for _ in range(4):  # pull saturated channels back under 1 keeping the luminance
        if c.max() <= 1.0:
            break
        c = np.minimum(c, 1.0)
        c = c + (lum - _lum(c)) / max(1e-3, 1.0 - _lum(c)) * (1.0 - c)
    return np.clip(c, 0.0, 1.0)


def _choice(rng: np.random.Generator, items: tuple | list, p: list[float] | None = None) -> Any:
    if p is not None:
        p_arr = np.asarray(p, np.float64)
        return items[int(rng.choice(len(items), p=p_arr / p_arr.sum()))]
    return items[int(rng.integers(len(items)))]


def _jit(rng: np.random.Generator, c: Any, s: float = 0.04) -> np.ndarray:
    return np.clip(np.asarray(c, np.float64) * (1.0 + rng.uniform(-s, s, 3)), 0.0, 1.0)


def _lowfreq(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    cy = max(2, round(cells * h / max(h, w)) + 1)
    cx = max(2, round(cells * w / max(h, w)) + 1)
    small = rng.standard_normal((cy, cx)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _streaks(rng: np.random.Generator, h: int, w: int, along_x: bool, n: int) -> np.ndarray:
    if along_x:
        small = rng.standard_normal((h, max(2, n))).astype(np.float32)
    else:
        small = rng.standard_normal((max(2, n), w)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _make_banks() -> tuple[np.ndarray, np.ndarray]:
    """Fixed banks of white and slightly blurred Gaussian noise; frames take random crops of them."""
    r = np.random.default_rng(20240805)
    raw = r.standard_normal((1024 + 16, 1024 + 16), dtype=np.float32)
    soft = cv2.GaussianBlur(raw, (0, 0), 0.7)
    soft /= float(soft.std())
    return raw, soft


_BANK_RAW, _BANK_SOFT = _make_banks()
_BANK3 = np.random.default_rng(19700101).standard_normal((H + 64, W + 64, 3), dtype=np.float32)


def _crop(bank: np.ndarray, rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A random crop (with random flips) of a noise bank; tiles it when the request is larger."""
    bh, bw = bank.shape[:2]
    if h > bh or w > bw:
        reps = (math.ceil(h / bh), math.ceil(w / bw)) + (1,) * (bank.ndim - 2)
        bank = np.tile(bank, reps)
        bh, bw = bank.shape[:2]
    y = int(rng.integers(0, bh - h + 1))
    x = int(rng.integers(0, bw - w + 1))
    out = bank[y : y + h, x : x + w]
    if rng.random() < 0.5:
        out = out[::-1]
    if rng.random() < 0.5:
        out = out[:, ::-1]
    return out


def _randn(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal float32 noise of a 2D shape (a crop of the white bank)."""
    return _crop(_BANK_RAW, rng, shape[0], shape[1])


def _fine(rng: np.random.Generator, h: int, w: int, sigma: float) -> np.ndarray:
    return _crop(_BANK_SOFT if sigma > 0 else _BANK_RAW, rng, h, w)


# ------------------------------------------------------------------------------------ drawing core


def _poly_mask(polys: list[np.ndarray], shape: tuple[int, int]) -> tuple[np.ndarray, int, int] | None:
    """Antialiased coverage (0..1 float32) of the polygons, cropped to their bounding box."""
    pts = np.concatenate([np.asarray(p, np.float64).reshape(-1, 2) for p in polys])
    if not np.all(np.isfinite(pts)):
        return None
    x0 = max(0, math.floor(pts[:, 0].min()) - 2)
    y0 = max(0, math.floor(pts[:, 1].min()) - 2)
    x1 = min(shape[1], math.ceil(pts[:, 0].max()) + 3)
    y1 = min(shape[0], math.ceil(pts[:, 1].max()) + 3)
    if x1 <= x0 or y1 <= y0:
        return None
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    ip = [
        np.round((np.asarray(p, np.float64).reshape(-1, 2) - (x0, y0)) * 16).astype(np.int32) for p in polys
    ]
    ip = [np.clip(p, -(1 << 20), 1 << 20) for p in ip]
    cv2.fillPoly(m, ip, 255, cv2.LINE_AA, shift=4)
    return m.astype(np.float32) * (1.0 / 255.0), x0, y0


def _paint(
    img: np.ndarray,
    polys: list[np.ndarray],
    colour: Any,
    alpha: float = 1.0,
    cover: np.ndarray | None = None,
) -> None:
    r = _poly_mask(polys, img.shape[:2])
    if r is None:
        return
    m, x0, y0 = r
    h, w = m.shape
    a = m * alpha
    roi = img[y0 : y0 + h, x0 : x0 + w]
    col = np.asarray(colour, np.float32)
    if img.ndim == 3:
        roi += (col - roi) * a[..., None]
    else:
        roi += (float(col) - roi) * a
    if cover is not None:
        c = cover[y0 : y0 + h, x0 : x0 + w]
        np.maximum(c, a, out=c)


def _circle(c: Any, r: float, n: int = 40) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([c[0] + r * np.cos(t), c[1] + r * np.sin(t)], 1)


def _capsule(p0: Any, p1: Any, w0: float, w1: float | None = None, n: int = 10) -> np.ndarray:
    """Polygon of a stroke from p0 to p1 with round ends, width w0 at p0 and w1 at p1."""
    w1 = w0 if w1 is None else w1
    p0 = np.asarray(p0, np.float64)
    p1 = np.asarray(p1, np.float64)
    d = p1 - p0
    ln = float(np.hypot(*d))
    d = d / ln if ln > 1e-9 else np.array([1.0, 0.0])
    nrm = np.array([-d[1], d[0]])
    a = math.atan2(nrm[1], nrm[0])
    t1 = np.linspace(a, a - np.pi, n)
    t0 = np.linspace(a + np.pi, a, n)
    cap1 = p1 + (w1 / 2) * np.stack([np.cos(t1), np.sin(t1)], 1)
    cap0 = p0 + (w0 / 2) * np.stack([np.cos(t0), np.sin(t0)], 1)
    return np.concatenate([cap1, cap0])


def _rect(c: Any, length: float, width: float, ang: float) -> np.ndarray:
    d = np.array([math.cos(ang), math.sin(ang)])
    n = np.array([-d[1], d[0]])
    c = np.asarray(c, np.float64)
    return np.array(
        [
            c - d * length / 2 - n * width / 2,
            c + d * length / 2 - n * width / 2,
            c + d * length / 2 + n * width / 2,
            c - d * length / 2 + n * width / 2,
        ]
    )


# ------------------------------------------------------------------------------------------ camera


class _Cam:
    def __init__(self, tilt_deg: float, az: float, height: float, f: float, k: float) -> None:
        t = math.radians(tilt_deg)
        d = np.array([math.sin(t) * math.cos(az), math.sin(t) * math.sin(az), -math.cos(t)])
        x = np.array([1.0, 0.0, 0.0]) - d * d[0]
        x /= np.linalg.norm(x)
        y = np.cross(d, x)
        self.R = np.stack([x, y, d])
        self.C = -d * (height / math.cos(t))
        self.f = f
        self.cx = W / 2.0
        self.cy = H / 2.0
        self.k = k
        self.dist = height / math.cos(t)

    def proj(self, P: np.ndarray) -> np.ndarray:
        Q = (np.asarray(P, np.float64).reshape(-1, 3) - self.C) @ self.R.T
        return np.stack([self.f * Q[:, 0] / Q[:, 2] + self.cx, self.f * Q[:, 1] / Q[:, 2] + self.cy], 1)

    def hom(self, z: float) -> np.ndarray:
        K = np.array([[self.f, 0, self.cx], [0, self.f, self.cy], [0, 0, 1.0]])
        t = -self.R @ self.C
        M = np.column_stack([self.R[:, 0], self.R[:, 1], z * self.R[:, 2] + t])
        return K @ M

    def distort(self, uv: np.ndarray) -> np.ndarray:
        """Undistorted pixel -> distorted pixel (inverse of x_u = c + (x_d - c)(1 + k r_d^2))."""
        uv = np.asarray(uv, np.float64).reshape(-1, 2)
        if self.k == 0:
            return uv.copy()
        c = np.array([W / 2.0, H / 2.0])
        v = uv - c
        ru = np.hypot(v[:, 0], v[:, 1]) / _DIST_NORM
        rd = ru.copy()
        for _ in range(6):
            g = rd * (1 + self.k * rd * rd) - ru
            rd = rd - g / (1 + 3 * self.k * rd * rd)
        s = np.where(ru > 1e-9, rd / np.maximum(ru, 1e-9), 1.0)
        return c + v * s[:, None]

    def scale_at(self, P: np.ndarray) -> float:
        """Image pixels per metre at world point P (plane-parallel, approx)."""
        Q = (np.asarray(P, np.float64).reshape(3) - self.C) @ self.R.T
        return self.f / Q[2]


def _board_to_world(rot_deg: float, p_m: float) -> np.ndarray:
    """2x2 matrix from board coordinates (pitch units, y down the rows) to world metres."""
    a = math.radians(rot_deg)
    Rm = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return p_m * Rm @ np.diag([1.0, -1.0])


# ------------------------------------------------------------------------------------------ planning

_SAT = {
    "blue": (0.62, 0.32, 0.10),
    "green": (0.22, 0.55, 0.15),
    "red": (0.15, 0.14, 0.70),
    "yellow": (0.10, 0.78, 0.92),
    "orange": (0.08, 0.45, 0.92),
    "purple": (0.50, 0.18, 0.40),
}
_DARK = {
    "black": (0.08, 0.08, 0.08),
    "navy": (0.28, 0.13, 0.07),
    "dark_green": (0.11, 0.22, 0.09),
    "dark_brown": (0.08, 0.13, 0.21),
}
_WOOD = [(0.58, 0.74, 0.86), (0.46, 0.66, 0.84), (0.36, 0.53, 0.70), (0.20, 0.30, 0.42), (0.45, 0.58, 0.68)]


def _occluder_for(seed: int, i: int) -> str | None:
    b, j = divmod(i, BLOCK)
    r = np.random.default_rng(np.random.SeedSequence([seed, b, 7919]))
    slots = sorted(int(s) for s in r.permutation(BLOCK)[:OCCLUDED_PER_BLOCK])
    if j not in slots:
        return None
    return OCCLUDER_KINDS[(OCCLUDED_PER_BLOCK * b + slots.index(j) + seed) % len(OCCLUDER_KINDS)]


def _make_board(rng: np.random.Generator, kind: str) -> list[str]:
    cells = ["."] * 9
    if kind == "full":
        xs = 5 if rng.random() < 0.5 else 4
        order = rng.permutation(9)
        for n, s in enumerate(order):
            cells[int(s)] = "X" if n < xs else "O"
    elif kind == "game":
        n = int(rng.integers(1, 9))
        order = rng.permutation(9)
        for m in range(n):
            cells[int(order[m])] = "X" if m % 2 == 0 else "O"
    elif kind == "random":
        while True:
            cells = [_choice(rng, (".", "X", "O"), [0.4, 0.3, 0.3]) for _ in range(9)]
            if cells.count("X") <= 5 and cells.count("O") <= 5:
                break
    return cells


def _plate_colour(rng: np.random.Generator, kind: str) -> tuple[np.ndarray, str]:
    if kind == "white":
        return _with_lum(_jit(rng, (1, 1, 1), 0.02), rng.uniform(0.86, 0.96)), "white"
    if kind == "grey":
        return _with_lum(_jit(rng, (1, 1, 1), 0.03), rng.uniform(0.35, 0.72)), "grey"
    if kind == "cream":
        return _with_lum(_jit(rng, (0.76, 0.92, 1.0), 0.03), rng.uniform(0.84, 0.93)), "cream"
    if kind == "wood":
        return _jit(rng, _WOOD[int(rng.integers(len(_WOOD)))], 0.05), "wood"
    if kind == "painted":
        name = _choice(rng, tuple(_SAT))
        return _jit(rng, _SAT[name], 0.06), name
    if kind == "pastel":
        name = _choice(rng, tuple(_SAT))
        m = rng.uniform(0.45, 0.62)
        return _jit(rng, np.asarray(_SAT[name]) * (1 - m) + m, 0.03), name
    if kind == "dark":
        name = _choice(rng, tuple(_DARK))
        return _jit(rng, _DARK[name], 0.1), name
    if kind == "paper":
        return _with_lum(_jit(rng, (0.93, 0.97, 1.0), 0.02), rng.uniform(0.88, 0.96)), "paper"
    if kind == "acrylic":
        name = _choice(rng, ("white", "black", "red", "blue", "green", "yellow", "orange", "grey"))
        col = {"white": (0.93, 0.93, 0.93), "black": (0.07, 0.07, 0.07), "grey": (0.45, 0.45, 0.45)}
        return _jit(rng, col.get(name, _SAT.get(name, (0.5, 0.5, 0.5))), 0.04), name
    if kind == "printed3d":
        name = _choice(rng, ("white", "grey", "black", "red", "blue", "orange", "green", "yellow"))
        col = {"white": (0.9, 0.9, 0.9), "black": (0.1, 0.1, 0.1), "grey": (0.5, 0.5, 0.52)}
        return _jit(rng, col.get(name, _SAT.get(name, (0.5, 0.5, 0.5))), 0.05), name
    name = _choice(rng, ("green", "grey", "beige", "red", "blue", "black"))
    col = {
        "green": (0.22, 0.42, 0.14),
        "grey": (0.45, 0.45, 0.45),
        "beige": (0.60, 0.72, 0.80),
        "red": (0.16, 0.16, 0.58),
        "blue": (0.52, 0.26, 0.10),
        "black": (0.12, 0.12, 0.12),
    }
    return _jit(rng, col[name], 0.05), name


_BLACK_TINTS = {"charcoal": (1.0, 1.0, 1.0), "blue_grey": (1.25, 1.0, 0.85), "brown": (0.7, 0.95, 1.3)}
_WHITE_TINTS = {"neutral": (1.0, 1.0, 1.0), "ivory": (0.88, 0.98, 1.02), "cream": (0.8, 0.95, 1.03)}
_WHITE_TINTS["bluish"] = (1.04, 1.0, 0.94)


def _plan(seed: int, i: int) -> Plan:
    rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
    o: dict[str, Any] = {}
    occ = _occluder_for(seed, i)
    o["occluder"] = occ

    bk = _choice(rng, BOARD_KINDS, [0.12, 0.12, 0.48, 0.28])
    if occ == "coin" and bk == "full":
        bk = "game"
    cells = _make_board(rng, bk)
    while occ == "coin" and "." not in cells:
        cells = _make_board(rng, bk)
    o["board_kind"] = bk
    o["cells"] = cells

    # --- special contrast modes
    mode = _choice(rng, ("normal", "white_on_white", "black_on_dark"), [0.78, 0.11, 0.11])

    # --- pieces
    pk = _choice(rng, PIECE_KINDS)
    gloss_p = {"flat": 0.4, "go": 0.8, "domed": 0.5, "foam": 0.0, "printed3d": 0.2, "washer": 0.3}[pk]
    pieces: dict[str, Any] = {"kind": pk, "glossy": bool(rng.random() < gloss_p)}
    pieces["radius"] = float(rng.uniform(0.2, 0.45))
    pieces["offset"] = bool(rng.random() < 0.3)
    lim = 0.1 if pieces["offset"] else 0.03
    offs = []
    for _ in range(9):
        a = rng.uniform(0, 2 * np.pi)
        m = rng.uniform(0.6 * lim if pieces["offset"] else 0.0, lim)
        offs.append((m * math.cos(a), m * math.sin(a)))
    pieces["offsets"] = offs
    bt = _choice(rng, tuple(_BLACK_TINTS), [0.55, 0.25, 0.2])
    wt = _choice(rng, tuple(_WHITE_TINTS), [0.55, 0.15, 0.15, 0.15])
    pieces["black_tint"], pieces["white_tint"] = bt, wt
    pieces["ridged"] = bool(pk == "flat" and rng.random() < 0.5)
    pieces["ring"] = bool(pk == "flat" and rng.random() < 0.5)
    heights = {"flat": (0.004, 0.007), "go": (0.006, 0.009), "domed": (0.006, 0.011)}
    heights.update({"foam": (0.0015, 0.003), "printed3d": (0.003, 0.005), "washer": (0.004, 0.006)})
    pieces["height"] = float(rng.uniform(*heights[pk]))

    # --- plate
    for _attempt in range(40):
        if mode == "white_on_white":
            pkind = _choice(rng, ("white", "cream"))
        elif mode == "black_on_dark":
            pkind = "dark"
        else:
            pkind = _choice(rng, PLATE_KINDS)
        pcol, pname = _plate_colour(rng, pkind)
        lp = _lum(pcol) * 255
        if mode == "white_on_white":
            lo, hi = max(205.0, lp - 20), min(245.0, lp + 20)
            cand = [(lo, lp - 12), (lp + 12, hi)]
            cand = [c for c in cand if c[1] > c[0]]
            if not cand:
                continue
            a, b = cand[int(rng.integers(len(cand)))]
            lw = rng.uniform(a, b)
            lb = rng.uniform(15, 55)
        elif mode == "black_on_dark":
            cand = [(max(15.0, lp - 34), lp - 16), (lp + 16, min(55.0, lp + 34))]
            cand = [c for c in cand if c[1] > c[0]]
            if not cand:
                continue
            a, b = cand[int(rng.integers(len(cand)))]
            lb = rng.uniform(a, b)
            lw = rng.uniform(205, 245)
        else:  # keep both colours at least 22 grey levels from the plate
            cb = [(15.0, min(55.0, lp - 22)), (max(15.0, lp + 22), 55.0)]
            cw = [(205.0, min(245.0, lp - 22)), (max(205.0, lp + 22), 245.0)]
            cb = [c for c in cb if c[1] > c[0]]
            cw = [c for c in cw if c[1] > c[0]]
            if not cb or not cw:
                continue
            a, b = cb[int(rng.integers(len(cb)))]
            lb = rng.uniform(a, b)
            a, b = cw[int(rng.integers(len(cw)))]
            lw = rng.uniform(a, b)
        break
    else:  # pragma: no cover - fallback
        pkind, pname, pcol = "grey", "grey", np.array([0.5, 0.5, 0.5])
        lp, lb, lw = 127.0, rng.uniform(15, 55), rng.uniform(205, 245)
    pieces["black"] = _with_lum(_BLACK_TINTS[bt], lb / 255)
    pieces["white"] = _with_lum(_WHITE_TINTS[wt], lw / 255)
    pieces["mode"] = mode
    o["pieces"] = pieces

    glossy_p = {"acrylic": 1.0, "painted": 0.5, "cloth": 0.0, "paper": 0.0, "wood": 0.25, "printed3d": 0.2}
    plate = {"kind": pkind, "name": pname, "colour": pcol}
    plate["glossy"] = bool(rng.random() < glossy_p.get(pkind, 0.2))
    plate["margin"] = 0.0 if rng.random() < 0.3 else float(rng.uniform(0.1, 0.7))
    plate["thickness"] = float(rng.uniform(0.002, 0.009))
    o["plate"] = plate

    # --- lines
    lk_opts = {
        "paper": ("printed", "marker"),
        "cloth": ("printed", "tape"),
        "wood": ("printed", "marker", "tape", "engraved"),
        "acrylic": ("printed", "tape", "engraved"),
        "printed3d": ("printed", "engraved"),
        "dark": ("printed", "marker", "tape", "engraved"),
    }
    lk = _choice(rng, lk_opts.get(pkind, LINE_KINDS))
    if lk == "tape":
        lwid = rng.uniform(0.06, 0.12)
    elif lk == "marker":
        lwid = rng.uniform(0.03, 0.09)
    elif lk == "engraved":
        lwid = rng.uniform(0.03, 0.10)
    else:
        lwid = rng.uniform(0.02, 0.12)
    lpf = lp / 255
    for _attempt in range(30):
        if lk == "engraved":
            if pkind in ("dark", "painted") or (pkind == "acrylic" and lpf < 0.4):
                lcol = _jit(rng, (0.62, 0.78, 0.88), 0.05)  # routed through the paint: bare wood
            else:
                lcol = np.asarray(pcol) * rng.uniform(0.35, 0.55)
        else:
            want_dark = lpf > 0.55 or (lpf >= 0.3 and rng.random() < 0.6)
            if want_dark:
                base = _choice(rng, ((1, 1, 1), (1.5, 1, 0.8), (0.8, 0.9, 1.4), (1, 1.3, 0.9)))
                lcol = _with_lum(base, rng.uniform(0.04, 0.2))
            else:
                base = _choice(rng, ((1, 1, 1), (0.7, 0.95, 1.0), (1.0, 0.97, 0.9)))
                lcol = _with_lum(base, rng.uniform(0.82, 0.97))
        if abs(_lum(lcol) - lpf) >= 0.18:
            break
    else:
        lcol = np.array([0.05, 0.05, 0.05]) if lpf > 0.5 else np.array([0.95, 0.95, 0.95])
    o["lines"] = {"kind": lk, "width": float(lwid), "colour": np.asarray(lcol), "dark": _lum(lcol) < lpf}

    # --- geometry
    o["p_m"] = float(rng.uniform(0.04, 0.07))
    o["cam_h"] = float(rng.uniform(0.45, 0.70))
    o["tilt"] = float(rng.uniform(0, 15))
    o["tilt_az"] = float(rng.uniform(0, 2 * np.pi))
    o["pitch"] = float(rng.uniform(37, 88))
    o["place"] = (float(rng.uniform(0, 1)), float(rng.uniform(0, 1)))
    rot = float(rng.uniform(0, 360))
    if abs(rot % 90.0 - 45.0) < 4.0:  # keep the fold unambiguous under perspective (see _truth)
        rot += 8.0 if rot % 90.0 < 45.0 else -8.0

    # --- surroundings
    o["supply"] = _choice(rng, SUPPLY_KINDS)
    o["table"] = _choice(rng, TABLE_KINDS)
    o["clutter"] = [k for k in CLUTTER_KINDS if rng.random() < 0.22]

    # --- light
    light: dict[str, Any] = {}
    wb = _choice(rng, ("warm", "cool", None), [0.35, 0.3, 0.35])
    light["wb"] = wb
    light["cast"] = bool(rng.random() < 0.15)
    light["gradient"] = bool(rng.random() < 0.4)
    light["vignette"] = bool(rng.random() < 0.5)
    light["two_lamps"] = bool(rng.random() < 0.35)
    light["hard_shadow"] = bool(rng.random() < 0.35)
    light["glare"] = bool(plate["glossy"] and rng.random() < 0.7 and mode != "white_on_white")
    light["shadow_band"] = bool(rng.random() < 0.18)
    light["flicker"] = bool(rng.random() < 0.12)
    light["dim"] = bool(rng.random() < 0.1 and mode != "black_on_dark")
    o["light"] = light

    cam: dict[str, Any] = {}
    cam["barrel"] = float(rng.uniform(0.015, 0.05)) if rng.random() < 0.6 else 0.0
    cam["chroma"] = float(rng.uniform(0.5, 1.0)) if rng.random() < 0.4 else 0.0
    cam["motion_blur"] = float(rng.uniform(1.0, 2.0)) if rng.random() < 0.15 else 0.0
    cam["defocus"] = float(rng.uniform(0.7, 1.5)) if rng.random() < 0.15 else 0.0
    cam["jpeg"] = int(rng.integers(50, 96)) if rng.random() < 0.75 else 0
    cam["sharpened"] = float(rng.uniform(0.6, 1.6)) if rng.random() < 0.25 else 0.0
    cam["yuyv"] = bool(rng.random() < 0.35)
    cam["upscaled"] = bool(rng.random() < 0.1)
    cam["smudge"] = bool(rng.random() < 0.1)
    bright_ok = lpf > 0.6 and mode != "white_on_white"
    cam["clipped"] = bool(bright_ok and rng.random() < 0.4 and not light["dim"])
    cam["crushed"] = bool(lpf < 0.25 and rng.random() < 0.4 and not light["dim"])
    o["cam"] = cam
    return Plan(seed=seed, i=i, rot_deg=rot, o=o)


# ----------------------------------------------------------------------------------- geometry fit


@dataclass
class _Geo:
    cam: _Cam
    M: np.ndarray  # board (pitch units) -> world metres, 2x2
    t: float  # plate thickness
    E: float  # plate half extent, pitch units
    rot: float


def _fit_camera(plan: Plan, rot: float) -> _Geo:
    o = plan.o
    p_m, t = o["p_m"], o["plate"]["thickness"]
    E = 1.5 + max(o["plate"]["margin"], o["lines"]["width"] / 2)
    M = _board_to_world(rot, p_m)
    dist = o["cam_h"] / math.cos(math.radians(o["tilt"]))
    f = o["pitch"] * dist / p_m
    cam = _Cam(o["tilt"], o["tilt_az"], o["cam_h"], f, o["cam"]["barrel"])
    corners = np.array([[-E, -E], [E, -E], [E, E], [-E, E]]) @ M.T
    corners3 = np.column_stack([corners, np.full(4, t)])
    sq = np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]], np.float64) @ M.T
    sq3 = np.column_stack([sq, np.full(5, t)])
    for _ in range(3):
        q = cam.proj(sq3)
        meas = float(np.mean(np.hypot(*(q[1:] - q[0]).T)))
        cam.f *= o["pitch"] / meas
        pc = cam.proj(corners3)
        bw, bh = np.ptp(pc[:, 0]), np.ptp(pc[:, 1])
        s = min(1.0, (W - 20) / bw, (H - 20) / bh)
        cam.f *= s
    pc = cam.proj(corners3)
    x0, x1, y0, y1 = pc[:, 0].min(), pc[:, 0].max(), pc[:, 1].min(), pc[:, 1].max()
    m = 10.0
    u, v = o["place"]
    nx0 = m + u * (W - 2 * m - (x1 - x0))
    ny0 = m + v * (H - 2 * m - (y1 - y0))
    cam.cx += nx0 - x0
    cam.cy += ny0 - y0
    return _Geo(cam=cam, M=M, t=t, E=E, rot=rot)


def _truth(plan: Plan) -> tuple[_Geo, dict[str, Any]]:
    rot = plan.rot_deg
    for _ in range(8):
        g = _fit_camera(plan, rot)
        cells = np.array([[(c - 1.0), (r - 1.0)] for r in range(3) for c in range(3)])
        P = np.column_stack([cells @ g.M.T, np.full(9, g.t)])
        q = g.cam.distort(g.cam.proj(P))
        # the grid's rotation: mean of the x axis and the (y axis turned back a quarter), so that the
        # angle does not depend on which of the plate's axes is called x (they differ under tilt)
        v = q[5] - q[3]
        wv = q[7] - q[1]
        ax = math.degrees(math.atan2(-v[1], v[0]))
        ay = math.degrees(math.atan2(-wv[1], wv[0])) + 90.0
        ang = ax + (((ay - ax) + 180.0) % 360.0 - 180.0) / 2.0
        a = (ang + 45.0) % 90.0 - 45.0
        if a <= -45.0 + 1e-9:
            a += 90.0
        if abs(a) <= 43.8:
            break
        rot += 2.5 if (rot % 90.0) < 45.0 else -2.5
    centre = q[4]
    pitch = float(np.mean(np.hypot(*(q[[1, 3, 5, 7]] - centre).T)))
    ar = math.radians(a)
    xf = np.array([math.cos(ar), -math.sin(ar)])
    yf = np.array([math.sin(ar), math.cos(ar)])
    rel = q - centre
    col = np.round(rel @ xf / pitch).astype(int) + 1
    row = np.round(rel @ yf / pitch).astype(int) + 1
    folded = row * 3 + col
    if sorted(folded.tolist()) != list(range(9)):
        raise AssertionError("fold relabelling failed")
    E = g.E
    tt = np.linspace(-E, E, 9)[:-1]
    outline = np.concatenate(
        [
            np.column_stack([tt, np.full(8, -E)]),
            np.column_stack([np.full(8, E), tt]),
            np.column_stack([-tt, np.full(8, E)]),
            np.column_stack([np.full(8, -E), -tt]),
        ]
    )
    Pout = np.column_stack([outline @ g.M.T, np.full(len(outline), g.t)])
    plate_px = g.cam.distort(g.cam.proj(Pout))
    return g, {
        "folded": folded,
        "angle": a,
        "centre": (float(centre[0]), float(centre[1])),
        "pitch": pitch,
        "plate_px": plate_px,
        "sq_px": q,
    }


# ---------------------------------------------------------------------------------------- textures


def _plate_texture(plan: Plan, rng: np.random.Generator, n: int, spp: float) -> np.ndarray:
    o = plan.o
    pl = o["plate"]
    kind = pl["kind"]
    base = np.asarray(pl["colour"], np.float32)
    mod = np.ones((n, n), np.float32)
    mod += 0.025 * _lowfreq(rng, n, n, 4)
    if kind == "wood":
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        along_x = rng.random() < 0.5
        v = yy if along_x else xx
        u = xx if along_x else yy
        warp = _lowfreq(rng, n, n, 3) * spp * 0.07
        for _ in range(int(rng.integers(0, 3))):
            kx, ky = rng.uniform(0.1, 0.9, 2) * n
            rad = spp * rng.uniform(0.08, 0.2)
            du = (u - (kx if along_x else ky)) / 2.5
            dv = v - (ky if along_x else kx)
            d2 = (du * du + dv * dv) / (rad * rad)
            warp += rad * 2.0 * np.exp(-d2) * np.sign(dv)
            mod -= 0.25 * np.exp(-d2 * 4)
        period = spp * rng.uniform(0.06, 0.16)
        ring = 0.5 + 0.5 * np.sin(2 * np.pi * (v + warp) / period)
        mod += 0.07 * (ring**3 - 0.3) + 0.06 * _streaks(rng, n, n, along_x, max(2, n // 40))
    elif kind == "printed3d":
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        a = rng.uniform(0, np.pi)
        period = max(2.2, spp * rng.uniform(0.025, 0.05))
        mod += 0.05 * np.sin(2 * np.pi * (xx * math.cos(a) + yy * math.sin(a)) / period)
    elif kind == "cloth":
        mod += 0.06 * _fine(rng, n, n, 0.8) + 0.03 * _lowfreq(rng, n, n, 10)
    elif kind == "paper":
        mod += 0.02 * _lowfreq(rng, n, n, 3)
    elif kind in ("grey", "white", "cream", "painted", "pastel", "dark", "acrylic"):
        mod += 0.012 * _fine(rng, n, n, 0.6)
    img = mod[..., None] * base[None, None, :]
    if kind == "paper":  # waviness (shading) and a crease
        wav = _lowfreq(rng, n, n, 3)
        img *= (1.0 + 0.03 * wav)[..., None]
        if rng.random() < 0.8:
            p0 = rng.uniform(0, n, 2)
            a = rng.uniform(0, np.pi)
            d = np.array([math.cos(a), math.sin(a)]) * n * 2
            nrm = np.array([-math.sin(a), math.cos(a)])
            thick = max(1.0, spp * 0.02)
            cv2.line(img, tuple((p0 - d).astype(int)), tuple((p0 + d).astype(int)), (0, 0, 0), 1)
            img_l = np.zeros((n, n), np.float32)
            q0 = p0 + nrm * thick
            cv2.line(img_l, tuple((q0 - d).astype(int)), tuple((q0 + d).astype(int)), 1.0, int(thick) + 1)
            img *= (1 - 0.07 * img_l)[..., None]
            img_l[:] = 0
            q0 = p0 - nrm * thick
            cv2.line(img_l, tuple((q0 - d).astype(int)), tuple((q0 + d).astype(int)), 1.0, int(thick) + 1)
            img += 0.05 * img_l[..., None]
            # the 1-px line drawn black above gets blended back to paper colour (a faint fold)
            img = cv2.max(img, base[None, None, :] * 0.8)
    return img


def _draw_lines(plan: Plan, rng: np.random.Generator, img: np.ndarray, spp: float, E: float) -> None:
    """Draws the grid onto the plate texture; coordinates: canvas px = (board + E) * spp."""
    o = plan.o
    ln = o["lines"]
    kind = ln["kind"]
    w = ln["width"] * spp
    col = ln["colour"].astype(np.float32)
    n = img.shape[0]
    pos = [(-1.5 + k) for k in range(4)]

    def c2(x: float, y: float) -> tuple[float, float]:
        return ((x + E) * spp, (y + E) * spp)

    over = min(o["plate"]["margin"], 0.15)
    if kind == "printed":
        polys = []
        for p in pos:
            a = np.array([c2(-1.5 - ln["width"] / 2, p), c2(1.5 + ln["width"] / 2, p)])
            polys.append(_rect(a.mean(0), np.hypot(*(a[1] - a[0])), w, 0.0))
            b = np.array([c2(p, -1.5 - ln["width"] / 2), c2(p, 1.5 + ln["width"] / 2)])
            polys.append(_rect(b.mean(0), np.hypot(*(b[1] - b[0])), w, np.pi / 2))
        _paint(img, polys, col)
    elif kind == "marker":
        polys = []
        for horiz in (True, False):
            for p in pos:
                e0 = -1.5 - rng.uniform(0, over) - ln["width"] / 2
                e1 = 1.5 + rng.uniform(0, over) + ln["width"] / 2
                t = np.linspace(e0, e1, 40)
                wob = (
                    0.012 * np.sin(t * rng.uniform(1, 3) + rng.uniform(0, 6))
                ) + 0.004 * rng.standard_normal(40).cumsum() / 6
                hw = 0.5 * ln["width"] * (1 + 0.25 * np.sin(t * rng.uniform(2, 5) + rng.uniform(0, 6)))
                if horiz:
                    top = [c2(x, p + dw - h) for x, dw, h in zip(t, wob, hw, strict=True)]
                    bot = [c2(x, p + dw + h) for x, dw, h in zip(t, wob, hw, strict=True)]
                else:
                    top = [c2(p + dw - h, y) for y, dw, h in zip(t, wob, hw, strict=True)]
                    bot = [c2(p + dw + h, y) for y, dw, h in zip(t, wob, hw, strict=True)]
                polys.append(np.array(top + bot[::-1]))
        for pgon in polys:  # overlapping strokes darken a little, like ink
            _paint(img, [pgon], col, alpha=0.93)
    elif kind == "tape":
        shine = np.clip(col + 0.18, 0, 1)
        order = [True, False] if rng.random() < 0.5 else [False, True]
        for horiz in order:
            for p in pos:
                e0 = -1.5 - ln["width"] / 2 - rng.uniform(0, over)
                e1 = 1.5 + ln["width"] / 2 + rng.uniform(0, over)
                if horiz:
                    a = np.array([c2(e0, p), c2(e1, p)])
                    ang = 0.0
                else:
                    a = np.array([c2(p, e0), c2(p, e1)])
                    ang = np.pi / 2
                cen = a.mean(0)
                length = np.hypot(*(a[1] - a[0]))
                _paint(img, [_rect(cen, length + 2, w + 2, ang)], col * 0.6, alpha=0.5)  # edge shadow
                _paint(img, [_rect(cen, length, w, ang)], col)
                d = np.array([-math.sin(ang), math.cos(ang)]) * w * 0.18
                _paint(img, [_rect(cen - d, length, w * 0.22, ang)], shine, alpha=0.6)
    else:  # engraved: groove, a lit wall and a shaded wall
        lit = np.clip(np.asarray(o["plate"]["colour"], np.float32) * 1.35 + 0.08, 0, 1)
        shade = np.asarray(o["plate"]["colour"], np.float32) * 0.3
        wall = max(1.0, w * 0.22)
        for horiz in (True, False):
            for p in pos:
                if horiz:
                    a = np.array([c2(-1.5 - ln["width"] / 2, p), c2(1.5 + ln["width"] / 2, p)])
                    ang = 0.0
                else:
                    a = np.array([c2(p, -1.5 - ln["width"] / 2), c2(p, 1.5 + ln["width"] / 2)])
                    ang = np.pi / 2
                cen = a.mean(0)
                length = np.hypot(*(a[1] - a[0]))
                _paint(img, [_rect(cen, length, w, ang)], col)
                d = np.array([-math.sin(ang), math.cos(ang)]) * (w / 2 - wall / 2)
                _paint(img, [_rect(cen - d, length, wall, ang)], shade, alpha=0.8)
                _paint(img, [_rect(cen + d, length, wall, ang)], lit, alpha=0.8)
    del n


def _table_texture(kind: str, rng: np.random.Generator, h: int, w: int, s: float) -> np.ndarray:
    """Table texture; s = canvas px per metre."""
    if kind == "wood":
        base = np.asarray(_WOOD[int(rng.integers(len(_WOOD)))], np.float32)
        yy = np.arange(h, dtype=np.float32)[:, None]
        plank = s * rng.uniform(0.09, 0.2)
        idx = np.floor(yy / plank)
        warp = _lowfreq(rng, h, w, 3) * s * 0.004
        ring = 0.5 + 0.5 * np.sin(2 * np.pi * (yy + warp + idx * 37.0) / (s * rng.uniform(0.006, 0.015)))
        mod = 0.93 + 0.06 * ring**2 + 0.07 * _streaks(rng, h, w, True, max(2, w // 50))
        mod = mod * (1 + 0.08 * np.sin(idx * 12.9898) % 1.0)
        seam = (np.abs((yy % plank) - 0.5) < 1.0).astype(np.float32)
        mod = mod * (1 - 0.35 * seam)
        return mod[..., None] * base
    if kind == "laminate":
        base = np.asarray(
            _choice(rng, ((0.85, 0.85, 0.85), (0.7, 0.78, 0.82), (0.55, 0.6, 0.62), (0.8, 0.86, 0.9))),
            np.float32,
        )
        mod = 1 + 0.015 * _fine(rng, h, w, 0.5) + 0.02 * _lowfreq(rng, h, w, 3)
        return mod[..., None] * base
    if kind == "cloth":
        base = np.asarray(
            _choice(rng, ((0.2, 0.45, 0.2), (0.55, 0.35, 0.2), (0.2, 0.2, 0.5), (0.5, 0.55, 0.6))),
            np.float32,
        )
        mod = 1 + 0.07 * _fine(rng, h, w, 0.7) + 0.05 * _lowfreq(rng, h, w, 8)
        return mod[..., None] * base
    if kind == "paper":
        base = np.asarray(_choice(rng, ((0.92, 0.95, 0.96), (0.45, 0.6, 0.72))), np.float32)
        mod = 1 + 0.04 * _lowfreq(rng, h, w, 5) + 0.01 * _fine(rng, h, w, 0.5)
        return mod[..., None] * base
    if kind == "cutting_mat":
        base = np.asarray(_choice(rng, ((0.25, 0.45, 0.15), (0.45, 0.25, 0.1), (0.3, 0.3, 0.3))), np.float32)
        img = (1 + 0.02 * _fine(rng, h, w, 0.6))[..., None] * base
        lc = np.clip(base * 1.3 + 0.1, 0, 1)
        step = s * 0.01
        off = rng.uniform(0, step, 2)
        thin = max(1, round(s * 0.0006))
        for k in range(int(w / step) + 2):
            x = off[0] + k * step
            wid = thin * (2 if k % 5 == 0 else 1)
            cv2.line(img, (int(x), 0), (int(x), h), (lc if k % 5 == 0 else (lc + base) / 2).tolist(), wid)
        for k in range(int(h / step) + 2):
            y = off[1] + k * step
            wid = thin * (2 if k % 5 == 0 else 1)
            cv2.line(img, (0, int(y)), (w, int(y)), (lc if k % 5 == 0 else (lc + base) / 2).tolist(), wid)
        return img
    base = np.asarray(_choice(rng, ((0.08, 0.08, 0.08), (0.15, 0.14, 0.13), (0.1, 0.12, 0.16))), np.float32)
    mod = 1 + 0.05 * _fine(rng, h, w, 0.6)
    return mod[..., None] * base


# ------------------------------------------------------------------------------------------ pieces


@dataclass
class _Disc:
    pos: np.ndarray  # world (x, y, z_base)
    r: float  # metres
    h: float  # side wall height (metres)
    dome: float  # dome height above the wall
    albedo: np.ndarray
    gloss: float
    shin: float
    kind: str
    ring: bool = False
    ridged: bool = False
    washer: bool = False
    layers: bool = False
    bevel: float = 0.12
    metal: bool = False
    tex_seed: int = 0


def _disc_for(plan: Plan, colour: str, pos: np.ndarray, tex_seed: int) -> _Disc:
    pc = plan.o["pieces"]
    r = pc["radius"] * plan.o["p_m"]
    kind = pc["kind"]
    hh = pc["height"]
    alb = np.asarray(pc["black"] if colour == "X" else pc["white"], np.float32)
    gloss = (0.55 if kind == "go" else 0.4) if pc["glossy"] else 0.04
    shin = 60.0 if pc["glossy"] else 6.0
    if kind == "go":
        return _Disc(pos, r, hh * 0.3, hh * 0.7 * 0.5, alb, gloss, shin, kind, bevel=0.0, tex_seed=tex_seed)
    if kind == "domed":
        return _Disc(pos, r, hh * 0.35, hh * 0.65, alb, gloss, shin, kind, bevel=0.0, tex_seed=tex_seed)
    if kind == "foam":
        return _Disc(pos, r, hh, 0.0, alb, gloss, shin, kind, bevel=0.05, tex_seed=tex_seed)
    d = _Disc(pos, r, hh, 0.0, alb, gloss, shin, kind, tex_seed=tex_seed)
    d.ring = pc["ring"]
    d.ridged = pc["ridged"]
    d.washer = kind == "washer"
    d.layers = kind == "printed3d"
    return d


def _render_disc(
    img: np.ndarray,
    cover: np.ndarray | None,
    cam: _Cam,
    d: _Disc,
    lamps: list[tuple[np.ndarray, float]],
    clean: bool = False,
) -> tuple[np.ndarray, int, int] | None:
    """Shades a round piece (or coin) per pixel into img; returns its coverage mask and offset."""
    x, y, z0 = (float(v) for v in d.pos)
    n = 40
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ring = np.stack([x + d.r * np.cos(t), y + d.r * np.sin(t)], 1)
    bot = cam.proj(np.column_stack([ring, np.full(n, z0)]))
    top = cam.proj(np.column_stack([ring, np.full(n, z0 + d.h)]))
    allp = np.concatenate([bot, top])
    hull = cv2.convexHull(allp.astype(np.float32)).reshape(-1, 2)
    r = _poly_mask([hull], img.shape[:2])
    if r is None:
        return None
    side_a, x0, y0 = r
    hh, ww = side_a.shape
    if hh < 2 or ww < 2:
        return None
    # top surface: exact inverse homography of the plane at the wall's top (plus half the dome)
    zt = z0 + d.h + 0.5 * d.dome
    Hi = np.linalg.inv(cam.hom(zt))
    vv, uu = np.mgrid[y0 : y0 + hh, x0 : x0 + ww].astype(np.float32)
    den = Hi[2, 0] * uu + Hi[2, 1] * vv + Hi[2, 2]
    lx = (Hi[0, 0] * uu + Hi[0, 1] * vv + Hi[0, 2]) / den - x
    ly = (Hi[1, 0] * uu + Hi[1, 1] * vv + Hi[1, 2]) / den - y
    rho = np.sqrt(lx * lx + ly * ly) + 1e-9
    pix_m = 1.0 / cam.scale_at(np.array([x, y, zt]))
    a_top = np.clip((d.r - rho) / pix_m + 0.5, 0.0, 1.0)
    q = rho / d.r
    # normals
    if d.dome > 0:
        s = 2.0 * d.dome * np.minimum(q, 1.0) / d.r  # paraboloid cap slope
    else:
        s = np.zeros_like(rho)
    if d.bevel > 0:
        b0 = 1.0 - d.bevel
        s = s + np.where(q > b0, (q - b0) / d.bevel * 1.6, 0.0)
    if d.ring:
        rr = (q - 0.66) / 0.12
        s = s + np.where((rr > 0) & (rr < 1), 0.9 * np.sin(2 * np.pi * rr), 0.0)
    nx = s * lx / rho
    ny = s * ly / rho
    nz = np.ones_like(rho)
    nn = np.sqrt(nx * nx + ny * ny + 1.0)
    nx, ny, nz = nx / nn, ny / nn, nz / nn
    P = np.array([x, y, zt])
    V = cam.C - P
    V /= np.linalg.norm(V)
    alb = np.broadcast_to(d.albedo, (hh, ww, 3)).copy()
    gloss = np.full((hh, ww), d.gloss, np.float32)
    if d.washer:
        wm = np.clip((0.33 - q) * d.r / pix_m + 0.5, 0, 1)
        hole = np.clip((q - 0.1) * d.r / pix_m + 0.5, 0, 1)
        steel = np.array([0.56, 0.56, 0.54], np.float32)
        inner = d.albedo * 0.5
        wcol = steel[None, None, :] * hole[..., None] + inner[None, None, :] * (1 - hole[..., None])
        alb = alb * (1 - wm[..., None]) + wcol * wm[..., None]
        gloss = gloss * (1 - wm) + 0.7 * wm
    if d.layers:
        trng = np.random.default_rng(d.tex_seed)
        a = trng.uniform(0, np.pi)
        per = d.r / trng.uniform(4, 6)
        alb = alb * (1 + 0.07 * np.sin(2 * np.pi * (lx * math.cos(a) + ly * math.sin(a)) / per))[..., None]
    if d.kind == "foam":
        trng = np.random.default_rng(d.tex_seed)
        alb = alb * (1 + 0.04 * _randn(trng, (hh, ww)))[..., None]
    if d.metal:
        trng = np.random.default_rng(d.tex_seed)
        emb = cv2.GaussianBlur(_randn(trng, (hh, ww)), (0, 0), 1.2)
        alb = alb * (1 + 0.25 * emb * (q < 0.8))[..., None]
    wsum = sum(w for _, w in lamps)
    amb = 0.5
    lz = 0.0
    diff = np.zeros((hh, ww), np.float32)
    spec = np.zeros((hh, ww), np.float32)
    for lp, w in lamps:
        L = lp - P
        L /= np.linalg.norm(L)
        lz += w * L[2]
        ndl = np.maximum(nx * L[0] + ny * L[1] + nz * L[2], 0.0)
        diff += w * ndl
        Hv = L + V
        Hv /= np.linalg.norm(Hv)
        ndh = np.maximum(nx * Hv[0] + ny * Hv[1] + nz * Hv[2], 0.0)
        if not clean:
            spec += (w / wsum) * ndh**d.shin
    kd = (1.0 - amb) / max(lz, 1e-3)
    shade = amb + kd * diff
    col = alb * shade[..., None] + (gloss * spec)[..., None]
    # side wall: darker, lit by the lamps' horizontal component
    side_col = d.albedo * (0.55 if not d.metal else 0.7)
    roi = img[y0 : y0 + hh, x0 : x0 + ww]
    roi += (side_col[None, None, :] - roi) * side_a[..., None]
    if d.ridged:
        for k in range(0, n, 2):
            seg = np.array([bot[k], top[k]]) - (x0, y0)
            m = np.zeros((hh, ww), np.uint8)
            cv2.line(
                m,
                tuple(np.round(seg[0] * 16).astype(int)),
                tuple(np.round(seg[1] * 16).astype(int)),
                255,
                1,
                cv2.LINE_AA,
                4,
            )
            a = m.astype(np.float32) / 255 * side_a * 0.6
            roi *= (1 - a * 0.5)[..., None]
    if d.layers:
        for frac in (0.33, 0.66):
            mid = cam.proj(np.column_stack([ring, np.full(n, z0 + d.h * frac)])) - (x0, y0)
            m = np.zeros((hh, ww), np.uint8)
            cv2.polylines(m, [np.round(mid * 16).astype(np.int32)], True, 255, 1, cv2.LINE_AA, 4)
            roi *= (1 - m.astype(np.float32) / 255 * side_a * 0.25)[..., None]
    roi += (col - roi) * a_top[..., None]
    cov = np.maximum(side_a, a_top)
    if cover is not None:
        c = cover[y0 : y0 + hh, x0 : x0 + ww]
        np.maximum(c, cov, out=c)
    return cov, x0, y0


def _shadow_capsules(
    sm: np.ndarray,
    cam: _Cam,
    items: list[tuple[np.ndarray, float, float]],
    lamp: np.ndarray,
    dark: float,
    scale: float,
) -> None:
    """Shadows of round things (pos, radius, height) cast by one lamp onto the surface below them."""
    for pos, r, h in items:
        L = lamp - pos
        off = -L[:2] / max(L[2], 1e-3) * h
        base = np.array([pos[0], pos[1], pos[2]])
        tip = np.array([pos[0] + off[0], pos[1] + off[1], pos[2]])
        q = cam.proj(np.stack([base, tip])) * scale
        rp = r * cam.scale_at(base) * scale
        _paint(sm, [_capsule(q[0], q[1], 2 * rp * 1.02)], 1.0 - dark)


# ------------------------------------------------------------------------------------- main render


def _lamps(plan: Plan, rng: np.random.Generator) -> list[tuple[np.ndarray, float]]:
    out = []
    n = 2 if plan.o["light"]["two_lamps"] else 1
    az0 = rng.uniform(0, 2 * np.pi)
    for k in range(n):
        az = az0 + (k * rng.uniform(1.6, 4.6))
        elev = rng.uniform(math.radians(40), math.radians(75))
        dist = rng.uniform(0.6, 1.2)
        p = np.array(
            [
                dist * math.cos(elev) * math.cos(az),
                dist * math.cos(elev) * math.sin(az),
                dist * math.sin(elev),
            ]
        )
        out.append((p, 1.0 if k == 0 else rng.uniform(0.5, 0.9)))
    return out


def _supply_positions(plan: Plan, rng: np.random.Generator, E: float, cols: list[str]) -> list[np.ndarray]:
    """Positions (board pitch units) for the supply pieces, off the plate."""
    kind = plan.o["supply"]
    rad = plan.o["pieces"]["radius"]
    gap = 2 * rad + 0.12
    out: list[np.ndarray] = []
    if kind in ("rows", "tray"):
        sides = [(0, 1), (0, -1), (1, 0), (-1, 0)]
        order = rng.permutation(4)
        groups = [[c for c in cols if c == "X"], [c for c in cols if c == "O"]]
        one_side = kind == "tray" or rng.random() < 0.4
        dist = E + rad + rng.uniform(0.25, 0.6) + (0.15 if kind == "tray" else 0)
        if one_side:
            s = sides[int(order[0])]
            rows = [g for g in groups if g]
            for ri, g in enumerate(rows):
                dd = dist + ri * gap
                for k in range(len(g)):
                    a = (k - (len(g) - 1) / 2) * gap
                    out.append(np.array([a if s[0] == 0 else s[0] * dd, s[1] * dd if s[0] == 0 else a]))
        else:
            for gi, g in enumerate(groups):
                s = sides[int(order[gi])]
                for k in range(len(g)):
                    a = (k - (len(g) - 1) / 2) * gap
                    out.append(np.array([a if s[0] == 0 else s[0] * dist, s[1] * dist if s[0] == 0 else a]))
        return out
    for _c in cols:  # scattered
        for _try in range(60):
            ang = rng.uniform(0, 2 * np.pi)
            rr = rng.uniform(E + rad + 0.3, E + 2.6)
            p = np.array([rr * math.cos(ang), rr * math.sin(ang)])
            if max(abs(p[0]), abs(p[1])) < E + rad + 0.15:
                continue
            if all(np.hypot(*(p - q)) > gap for q in out):
                break
        out.append(p)
    return out


def _render(plan: Plan, clean: bool = False, empty_board: bool = False) -> Sample:
    o = plan.o
    seed, idx = plan.seed, plan.i
    g, tr = _truth(plan)
    cam = g.cam
    occ = None if clean else o["occluder"]
    tags: set[str] = set()
    lt = o["light"]
    cf = o["cam"]
    if clean:
        lt = {k: (False if isinstance(v, bool) else v) for k, v in lt.items()}
        lt["wb"] = None
        lt["two_lamps"] = o["light"]["two_lamps"]
        cf = {k: (0 if not isinstance(v, bool) else False) for k, v in cf.items()}
        cf["barrel"] = o["cam"]["barrel"]
    lamps = _lamps(plan, _rng(seed, idx, 1))
    pitch = tr["pitch"]

    # ---------------- table (world-aligned canvas warped into the image)
    trng = _rng(seed, idx, 2)
    Hi0 = np.linalg.inv(cam.hom(0.0))
    grow = 1.0 + cam.k + 0.08
    corners = np.array([[0, 0], [W, 0], [W, H], [0, H]], np.float64)
    corners = (corners - (W / 2, H / 2)) * grow + (W / 2, H / 2)
    wc = np.column_stack([corners, np.ones(4)]) @ Hi0.T
    wc = wc[:, :2] / wc[:, 2:3]
    X0, Y0 = wc.min(0)
    X1, Y1 = wc.max(0)
    s_t = 0.7 * cam.f / cam.dist
    s_t = min(s_t, 640.0 / max(X1 - X0, Y1 - Y0))
    tw, th = int((X1 - X0) * s_t) + 2, int((Y1 - Y0) * s_t) + 2
    table = _table_texture(o["table"], trng, th, tw, s_t).astype(np.float32)
    tags.add(f"table:{o['table']}")

    def w2t(P: np.ndarray) -> np.ndarray:
        P = np.asarray(P, np.float64).reshape(-1, 2)
        return np.column_stack([(P[:, 0] - X0) * s_t, (P[:, 1] - Y0) * s_t])

    R_circ = g.E * math.sqrt(2) * o["p_m"] + 0.01
    crng = _rng(seed, idx, 3)
    clutter3d: list[str] = []
    plate_img = cam.distort(
        cam.proj(
            np.column_stack(
                [np.array([[-g.E, -g.E], [g.E, -g.E], [g.E, g.E], [-g.E, g.E]]) @ g.M.T, np.full(4, g.t)]
            )
        )
    )
    in_view = (wc[:, 0].min(), wc[:, 1].min(), wc[:, 0].max(), wc[:, 1].max())

    def free_spot(rad: float, tries: int = 30) -> np.ndarray | None:
        for _ in range(tries):
            p = np.array([crng.uniform(in_view[0], in_view[2]), crng.uniform(in_view[1], in_view[3])])
            if np.hypot(*p) > R_circ + rad + 0.01:
                return p
        return None

    def clear_of_plate(poly_w: np.ndarray) -> bool:
        c = poly_w.astype(np.float32).reshape(-1, 1, 2)
        dd = cv2.pointPolygonTest(c, (0.0, 0.0), True)
        return dd < -(R_circ + 0.005)

    drawn_clutter: list[str] = []
    for ck in o["clutter"]:
        if ck in ("cup", "gantry_frame", "parked_gantry"):
            clutter3d.append(ck)
            continue
        for _try in range(12):
            ang = crng.uniform(0, np.pi)
            if ck == "paper":
                c = free_spot(0.12)
                if c is None:
                    continue
                poly = _rect(c, 0.297, 0.21, ang)
            elif ck == "tape":
                c = free_spot(0.04)
                if c is None:
                    continue
                poly = _rect(c, crng.uniform(0.04, 0.1), 0.019, ang)
            elif ck == "phone":
                c = free_spot(0.08)
                if c is None:
                    continue
                poly = _rect(c, 0.15, 0.072, ang)
            elif ck == "ruler":
                c = free_spot(0.15)
                if c is None:
                    continue
                poly = _rect(c, 0.3, 0.032, ang)
            elif ck == "breadboard":
                c = free_spot(0.09)
                if c is None:
                    continue
                poly = _rect(c, 0.165, 0.055, ang)
            else:  # cable
                c = free_spot(0.05)
                if c is None:
                    continue
                pts = [c]
                a = ang * 2
                for _k in range(30):
                    a += crng.normal(0, 0.25)
                    pts.append(pts[-1] + 0.012 * np.array([math.cos(a), math.sin(a)]))
                poly = np.array(pts)
            if not clear_of_plate(poly):
                continue
            q = w2t(poly)
            if ck == "paper":
                _paint(table, [q + 2], (0.0, 0.0, 0.0), alpha=0.15)
                _paint(table, [q], _jit(crng, (0.93, 0.95, 0.96), 0.03))
                cc = q.mean(0)
                d = (q[1] - q[0]) / np.hypot(*(q[1] - q[0]))
                nrm = (q[3] - q[0]) / np.hypot(*(q[3] - q[0]))
                L = np.hypot(*(q[1] - q[0]))
                Wd = np.hypot(*(q[3] - q[0]))
                for k in range(int(crng.integers(5, 14))):  # printed text lines
                    y = -Wd * 0.38 + k * Wd * 0.06
                    ll = L * crng.uniform(0.4, 0.8)
                    p0 = cc - d * L * 0.4 + nrm * y
                    _paint(
                        table,
                        [_rect(p0 + d * ll / 2, ll, max(1.0, Wd * 0.012), math.atan2(d[1], d[0]))],
                        (0.35, 0.35, 0.35),
                        alpha=0.7,
                    )
            elif ck == "tape":
                _paint(table, [q], _jit(crng, (0.55, 0.78, 0.88), 0.05), alpha=0.85)
            elif ck == "phone":
                _paint(table, [q + 3], (0.0, 0.0, 0.0), alpha=0.25)
                _paint(table, [q], (0.12, 0.12, 0.13))
                inner = q.mean(0) + (q - q.mean(0)) * 0.88
                _paint(table, [inner], _jit(crng, (0.18, 0.16, 0.14), 0.1))
            elif ck == "ruler":
                rc = _choice(crng, ((0.65, 0.66, 0.67), (0.2, 0.75, 0.9), (0.85, 0.85, 0.8)))
                _paint(table, [q], rc, alpha=0.9)
                d = (q[1] - q[0]) / 30.0
                nrm = (q[3] - q[0]) / np.hypot(*(q[3] - q[0]))
                for k in range(31):
                    tl = 0.35 if k % 5 == 0 else 0.18
                    p0 = q[0] + d * k
                    cv2.line(
                        table,
                        tuple(p0.astype(int)),
                        tuple((p0 + nrm * tl * np.hypot(*(q[3] - q[0]))).astype(int)),
                        (0.1, 0.1, 0.1),
                        1,
                        cv2.LINE_8,
                    )
            elif ck == "breadboard":
                _paint(table, [q + 2], (0.0, 0.0, 0.0), alpha=0.2)
                _paint(table, [q], (0.9, 0.92, 0.93))
                d = (q[1] - q[0]) / 30.0
                nrm = (q[3] - q[0]) / 10.0
                for a in range(1, 30):
                    for b in (1, 2, 3, 4, 6, 7, 8, 9):
                        p = q[0] + d * a + nrm * b
                        cv2.circle(
                            table, (int(p[0]), int(p[1])), max(1, int(s_t * 0.0005)), (0.3, 0.3, 0.3), -1
                        )
                for b, colr in ((0.4, (0.7, 0.2, 0.1)), (9.6, (0.1, 0.1, 0.8))):
                    p0, p1 = q[0] + nrm * b, q[1] + nrm * b
                    cv2.line(table, tuple(p0.astype(int)), tuple(p1.astype(int)), colr, 1)
            else:
                ccol = _choice(crng, ((0.08, 0.08, 0.08), (0.9, 0.9, 0.9), (0.1, 0.1, 0.7), (0.6, 0.3, 0.1)))
                qq = [np.round(q * 16).astype(np.int32)]
                th_ = max(2, int(s_t * 0.004))
                cv2.polylines(table, qq, False, (0.0, 0.0, 0.0), th_ + 2, cv2.LINE_8, 4)
                cv2.polylines(table, qq, False, ccol, th_, cv2.LINE_8, 4)
            drawn_clutter.append(ck)
            break

    # supply pieces (board frame), in the layout the plan names
    board_cells = ["."] * 9 if empty_board else list(o["cells"])
    n_x = 5 - min(5, board_cells.count("X"))
    n_o = 5 - min(5, board_cells.count("O"))
    srng = _rng(seed, idx, 4)
    scols = ["X"] * n_x + ["O"] * n_o
    spos = _supply_positions(plan, srng, g.E, scols)
    tags.add(f"supply:{o['supply']}")
    if o["supply"] == "tray" and spos:
        pts = np.array(spos)
        rad = o["pieces"]["radius"]
        lo, hi = pts.min(0) - rad - 0.15, pts.max(0) + rad + 0.15
        box = np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]]) @ g.M.T
        tq = w2t(box)
        tcol = _choice(srng, ((0.2, 0.2, 0.2), (0.8, 0.8, 0.8), (0.3, 0.5, 0.7), (0.6, 0.3, 0.2)))
        _paint(table, [tq + 3], (0, 0, 0), alpha=0.3)
        _paint(table, [tq], tcol)
        inner = tq.mean(0) + (tq - tq.mean(0)) * 0.93
        _paint(table, [inner], np.asarray(tcol) * 0.8)

    # the plate's own shadow on the table (main lamp), painted into the table canvas
    lamp0 = lamps[0][0]
    soff = -lamp0[:2] / max(lamp0[2], 1e-3) * o["plate"]["thickness"]
    pw = np.array([[-g.E, -g.E], [g.E, -g.E], [g.E, g.E], [-g.E, g.E]]) @ g.M.T
    spoly = w2t(pw * 1.01 + soff)
    smk = _poly_mask([spoly], table.shape[:2])
    if smk is not None:
        m, x0, y0 = smk
        pad = 6
        m = cv2.copyMakeBorder(m, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        m = cv2.GaussianBlur(m, (0, 0), 0.004 * s_t + 0.8)
        ya, xa = y0 - pad, x0 - pad
        yb, xb = ya + m.shape[0], xa + m.shape[1]
        cy0, cx0 = max(0, ya), max(0, xa)
        cy1, cx1 = min(table.shape[0], yb), min(table.shape[1], xb)
        if cy1 > cy0 and cx1 > cx0:
            mm = m[cy0 - ya : cy1 - ya, cx0 - xa : cx1 - xa]
            table[cy0:cy1, cx0:cx1] *= (1.0 - 0.45 * mm)[..., None]

    Mt = cam.hom(0.0) @ np.array([[1 / s_t, 0, X0], [0, 1 / s_t, Y0], [0, 0, 1]])
    img = cv2.warpPerspective(table, Mt, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    # ---------------- plate: sides, then the textured top with its lines
    prng = _rng(seed, idx, 5)
    spp = float(np.clip(1.2 * pitch, 52, 100))
    E = g.E
    n = math.ceil(2 * E * spp)
    ptex = _plate_texture(plan, prng, n, spp)
    _draw_lines(plan, prng, ptex, spp, E)
    sig = 0.45 * spp / pitch
    ptex = cv2.GaussianBlur(ptex, (0, 0), sig)
    Sx = np.array([[1 / spp, 0, 0.5 / spp - E], [0, 1 / spp, 0.5 / spp - E], [0, 0, 1]])
    Bw = np.eye(3)
    Bw[:2, :2] = g.M
    Hp = cam.hom(g.t) @ Bw @ Sx
    pc2 = np.array([[-E, -E], [E, -E], [E, E], [-E, E]]) @ g.M.T
    top4 = cam.proj(np.column_stack([pc2, np.full(4, g.t)]))
    bot4 = cam.proj(np.column_stack([pc2, np.zeros(4)]))
    side_col = np.asarray(o["plate"]["colour"], np.float32) * 0.6
    for k in range(4):
        j = (k + 1) % 4
        _paint(img, [np.array([bot4[k], bot4[j], top4[j], top4[k]])], side_col * (0.8 + 0.1 * k))
    warped = cv2.warpPerspective(ptex, Hp, (W, H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    pm = _poly_mask([top4], (H, W))
    plate_mask = np.zeros((H, W), np.float32)
    if pm is not None:
        m, x0, y0 = pm
        sl = (slice(y0, y0 + m.shape[0]), slice(x0, x0 + m.shape[1]))
        plate_mask[sl] = m
        img[sl] += (warped[sl] - img[sl]) * m[..., None]
    tags.add(f"plate:{o['plate']['kind']}")
    if o["plate"]["glossy"]:
        tags.add("plate:glossy")
    tags.add("plate:margin" if o["plate"]["margin"] > 0 else "plate:no_margin")
    ln = o["lines"]
    tags.add(f"lines:{ln['kind']}")
    tags.add("lines:dark" if ln["dark"] else "lines:light")
    if ln["width"] < 0.05:
        tags.add("lines:thin")
    if ln["width"] > 0.08:
        tags.add("lines:thick")

    # ---------------- pieces: contact shadows first, then the shaded discs
    pcs = o["pieces"]
    discs: list[_Disc] = []
    for k in range(9):
        ch = board_cells[k]
        if ch == ".":
            continue
        r_, c_ = divmod(k, 3)
        bp = np.array([c_ - 1.0, r_ - 1.0]) + np.asarray(pcs["offsets"][k])
        wp = g.M @ bp
        discs.append(_disc_for(plan, ch, np.array([wp[0], wp[1], g.t]), seed * 1000 + idx * 10 + k))
    for k, (col, sp) in enumerate(zip(scols, spos, strict=True)):
        wp = g.M @ sp
        discs.append(_disc_for(plan, col, np.array([wp[0], wp[1], 0.0]), seed * 1000 + idx * 10 + 50 + k))
    cup = None
    if "cup" in clutter3d:
        c = free_spot(0.06)
        if c is not None and np.hypot(*c) > R_circ + 0.06:
            cup = _Disc(
                np.array([c[0], c[1], 0.0]),
                0.04,
                0.09,
                0.0,
                _jit(crng, _choice(crng, ((0.9, 0.9, 0.9), (0.2, 0.2, 0.6), (0.5, 0.3, 0.1))), 0.05),
                0.3,
                30.0,
                "cup",
                bevel=0.06,
            )
            drawn_clutter.append("cup")

    hard = bool(lt["hard_shadow"])
    half = 0.5
    sm_total = np.ones((H // 2, W // 2), np.float32)
    wsum = sum(w for _, w in lamps)
    for lp, w in lamps:
        sm = np.ones((H // 2, W // 2), np.float32)
        items = [(d.pos, d.r, d.h + d.dome) for d in discs]
        if cup is not None:
            items.append((cup.pos, cup.r, cup.h))
        dark = (0.55 if hard else 0.45) * (w / wsum) * (1.0 if len(lamps) == 1 else 1.2)
        _shadow_capsules(sm, cam, items, lp, dark, half)
        soft = (0.012 if hard else 0.08) * pitch * half + 0.6
        sm = cv2.GaussianBlur(sm, (0, 0), soft)
        sm_total *= sm
    # a little ambient occlusion right around each base
    ao = np.ones((H // 2, W // 2), np.float32)
    for d in discs:
        q = cam.proj(d.pos[None]) * half
        _paint(ao, [_circle(q[0], d.r * cam.scale_at(d.pos) * half * 1.08)], 0.75)
    ao = cv2.GaussianBlur(ao, (0, 0), 0.04 * pitch * half + 0.5)
    sm_total *= ao
    if not clean:
        ys, xs = np.nonzero(sm_total < 0.998)
        if len(ys):
            ya, yb = max(0, 2 * int(ys.min()) - 4), min(H, 2 * int(ys.max()) + 6)
            xa, xb = max(0, 2 * int(xs.min()) - 4), min(W, 2 * int(xs.max()) + 6)
            full_sm = cv2.resize(sm_total, (W, H), interpolation=cv2.INTER_LINEAR)
            img[ya:yb, xa:xb] *= full_sm[ya:yb, xa:xb, None]
    if hard:
        tags.add("light:hard_shadow")
    if len(lamps) == 2:
        tags.add("light:two_lamps")

    cover = np.zeros((H, W), np.float32)
    # far pieces first (painter's order by distance from the camera)
    order = sorted(range(len(discs)), key=lambda j: -float(np.linalg.norm(discs[j].pos - cam.C)))
    for j in order:
        _render_disc(img, cover, cam, discs[j], lamps, clean)
    if cup is not None:
        _render_disc(img, None, cam, cup, lamps, clean)
        rim = cam.proj(np.column_stack([_circle(cup.pos[:2], cup.r * 0.86), np.full(40, cup.h)]))
        _paint(img, [rim], _choice(crng, ((0.1, 0.2, 0.3), (0.2, 0.35, 0.5), (0.6, 0.6, 0.6))))

    on_board = [c for c in board_cells if c != "."]
    tags.add(f"board:{o['board_kind']}" if not empty_board else "board:empty")
    tags.add(f"pieces:{pcs['kind']}")
    tags.add("pieces:glossy" if pcs["glossy"] else "pieces:matte")
    if pcs["radius"] > 0.38:
        tags.add("pieces:large")
    if pcs["offset"] and on_board:
        tags.add("pieces:offset")
    lp_ = _lum(o["plate"]["colour"]) * 255
    pcol_ = np.asarray(o["plate"]["colour"])
    whitish = lp_ > 200 and float(pcol_.max() - pcol_.min()) < 0.12
    if "O" in on_board and whitish and abs(_lum(pcs["white"]) * 255 - lp_) <= 20:
        tags.add("pieces:white_on_white")
    if "X" in on_board and lp_ < 60:
        tags.add("pieces:black_on_dark")
    if (pcs["black_tint"] != "charcoal" and "X" in on_board) or (
        pcs["white_tint"] != "neutral" and "O" in on_board
    ):
        tags.add("pieces:tinted")

    # ---------------- 3D clutter at the image edges (gantry frame, parked gantry)
    urng = _rng(seed, idx, 6)
    px0, py0 = plate_img.min(0)
    px1, py1 = plate_img.max(0)
    room = {"top": py0, "bottom": H - py1, "left": px0, "right": W - px1}
    for ck in clutter3d:
        if ck == "cup":
            continue
        sides = [s for s, v in room.items() if v > 40]
        if not sides:
            continue
        side = sides[int(urng.integers(len(sides)))]
        wbar = float(urng.uniform(18, min(38, room[side] - 12)))
        alu = _jit(urng, _choice(urng, ((0.72, 0.72, 0.73), (0.15, 0.15, 0.15))), 0.05)
        if ck == "gantry_frame":
            if side in ("top", "bottom"):
                y = 0 if side == "top" else H - wbar
                poly = np.array([[-5, y], [W + 5, y], [W + 5, y + wbar], [-5, y + wbar]])
                slot = np.array(
                    [
                        [-5, y + wbar * 0.45],
                        [W + 5, y + wbar * 0.45],
                        [W + 5, y + wbar * 0.55],
                        [-5, y + wbar * 0.55],
                    ]
                )
            else:
                x = 0 if side == "left" else W - wbar
                poly = np.array([[x, -5], [x + wbar, -5], [x + wbar, H + 5], [x, H + 5]])
                slot = np.array(
                    [
                        [x + wbar * 0.45, -5],
                        [x + wbar * 0.55, -5],
                        [x + wbar * 0.55, H + 5],
                        [x + wbar * 0.45, H + 5],
                    ]
                )
            _paint(img, [poly + 4], (0, 0, 0), alpha=0.3)
            _paint(img, [poly], alu)
            _paint(img, [slot], alu * 0.35)
            room[side] = 0
        else:  # parked gantry: a carriage block in a corner-ish spot on that side, with its arm stub
            bw_ = float(urng.uniform(40, 70))
            if side in ("top", "bottom"):
                x = float(urng.uniform(0, W - bw_))
                y = 0 if side == "top" else H - wbar * 1.4
                poly = np.array([[x, y], [x + bw_, y], [x + bw_, y + wbar * 1.4], [x, y + wbar * 1.4]])
            else:
                y = float(urng.uniform(0, H - bw_))
                x = 0 if side == "left" else W - wbar * 1.4
                poly = np.array([[x, y], [x + wbar * 1.4, y], [x + wbar * 1.4, y + bw_], [x, y + bw_]])
            _paint(img, [poly + 6], (0, 0, 0), alpha=0.35)
            _paint(img, [poly], (0.12, 0.12, 0.13))
            cen = poly.mean(0)
            for dx in (-0.3, 0.3):
                for dy in (-0.3, 0.3):
                    pp = cen + (poly[2] - poly[0]) * np.array([dx, dy])
                    _paint(img, [_circle(pp, 2.5, 12)], (0.6, 0.6, 0.6))
            _paint(img, [_circle(cen, min(bw_, wbar) * 0.35)], (0.25, 0.25, 0.27))
            room[side] = 0
        drawn_clutter.append(ck)
    for ck in drawn_clutter:
        tags.add(f"clutter:{ck}")

    # ---------------- light on the scene (before the occluders come in)
    lrng = _rng(seed, idx, 7)
    if lt["shadow_band"]:
        band = np.zeros((H // 2, W // 2), np.float32)
        c = np.asarray(tr["centre"]) * half + lrng.uniform(-1, 1, 2) * pitch * half
        ang = lrng.uniform(0, np.pi)
        wid = lrng.uniform(1.0, 2.5) * pitch * half
        _paint(band, [_rect(c, 2000, wid, ang)], 1.0)
        sig = lrng.uniform(0.5, 2.0) if lrng.random() < 0.4 else lrng.uniform(4, 12)
        band = cv2.GaussianBlur(band, (0, 0), sig)
        dark = lrng.uniform(0.25, 0.5)
        img *= cv2.resize(1 - dark * band, (W, H))[..., None]
        tags.add("light:shadow_band")

    # ---------------- occluders
    coin_sq: tuple[int, ...] = ()
    if occ is not None:
        coin_sq = _draw_occluder(plan, occ, img, cover, cam, g, tr, lamps, board_cells, _rng(seed, idx, 8))
        tags.add(f"occluded:{occ}")

    # ---------------- illumination field: window gradient, vignette, white balance, casts
    fh, fw = H // 8, W // 8
    yy, xx = np.mgrid[0:fh, 0:fw].astype(np.float32)
    xx = (xx + 0.5) * 8
    yy = (yy + 0.5) * 8
    field_ = np.ones((fh, fw), np.float32)
    span = float(np.ptp(tr["plate_px"][:, 0]) + np.ptp(tr["plate_px"][:, 1])) / 2
    ga = lrng.uniform(0, 2 * np.pi)
    ratio = lrng.uniform(1.5, 2.0) if lt["gradient"] else lrng.uniform(1.0, 1.15)
    proj = ((xx - tr["centre"][0]) * math.cos(ga) + (yy - tr["centre"][1]) * math.sin(ga)) / max(span, 1)
    field_ *= np.exp(np.log(ratio) * np.clip(proj, -0.75, 0.75)).astype(np.float32)
    if lt["gradient"]:
        tags.add("light:gradient")
    if lt["vignette"]:
        v = lrng.uniform(0.25, 0.5)
        rr = ((xx - W / 2) ** 2 + (yy - H / 2) ** 2) / (400.0**2)
        field_ *= 1 - v * rr
        tags.add("light:vignette")
    field_ = field_ / max(1e-3, float(cv2.resize(field_, (W, H))[int(tr["centre"][1]), int(tr["centre"][0])]))
    gains = np.ones(3, np.float32)
    if lt["wb"] == "warm":
        gains = np.array(
            [lrng.uniform(0.74, 0.86), lrng.uniform(0.93, 0.98), lrng.uniform(1.05, 1.12)], np.float32
        )
        tags.add("light:warm")
    elif lt["wb"] == "cool":
        gains = np.array([lrng.uniform(1.08, 1.18), 1.0, lrng.uniform(0.82, 0.9)], np.float32)
        tags.add("light:cool")
    if lt["cast"]:
        gains *= (1 + lrng.uniform(-0.07, 0.07, 3)).astype(np.float32)
        tags.add("light:cast")
    field3 = field_[..., None] * gains[None, None, :]
    img *= cv2.resize(field3, (W, H), interpolation=cv2.INTER_LINEAR)

    # glare of a lamp on the glossy plate (not on what covers it)
    if lt["glare"]:
        gx, gy = tr["centre"] + lrng.uniform(-1.2, 1.2, 2) * pitch
        sx = lrng.uniform(0.4, 1.4) * pitch
        sy = sx * (lrng.uniform(0.25, 0.5) if lrng.random() < 0.4 else lrng.uniform(0.8, 1.0))
        ang = lrng.uniform(0, np.pi)
        ca, sa = math.cos(ang), math.sin(ang)
        u = ((xx - gx) * ca + (yy - gy) * sa) / sx
        v = (-(xx - gx) * sa + (yy - gy) * ca) / sy
        gl = np.exp(-((u * u + v * v) ** 1.5) / 2)
        amp = lrng.uniform(0.25, 0.6) if lp_ < 150 else lrng.uniform(0.1, 0.3)
        glf = cv2.resize(gl.astype(np.float32), (W, H), interpolation=cv2.INTER_LINEAR)
        if pm is not None:
            glr = amp * glf[sl] * plate_mask[sl] * (1 - cover[sl])
            img[sl] += glr[..., None]
        tags.add("light:glare")

    # ---------------- camera
    kr = _rng(seed, idx, 9)
    if cf["defocus"]:
        img = cv2.GaussianBlur(img, (0, 0), cf["defocus"])
        tags.add("cam:defocus")
    if cf["motion_blur"]:
        L = cf["motion_blur"]
        ks = 5
        kern = np.zeros((ks, ks), np.float32)
        a = kr.uniform(0, np.pi)
        c = ks // 2
        for tt in np.linspace(-L / 2, L / 2, 9):
            x, y = c + tt * math.cos(a), c + tt * math.sin(a)
            x0i, y0i = math.floor(x), math.floor(y)
            fx, fy = x - x0i, y - y0i
            kern[y0i, x0i] += (1 - fx) * (1 - fy)
            kern[y0i, x0i + 1] += fx * (1 - fy)
            kern[y0i + 1, x0i] += (1 - fx) * fy
            kern[y0i + 1, x0i + 1] += fx * fy
        kern /= kern.sum()
        img = cv2.filter2D(img, -1, kern)
        tags.add("cam:motion_blur")
    if cam.k > 0 or cf["chroma"]:
        dx, dy = _DX, _DY
        fac = 1 + cam.k * _R2
        if cf["chroma"]:
            rmax = math.hypot(W / 2, H / 2)
            e = cf["chroma"] / rmax
            chans = []
            for ci, sgn in ((0, -1.0), (1, 0.0), (2, 1.0)):
                ff = fac * (1 + sgn * e)
                chans.append(
                    cv2.remap(
                        img[:, :, ci],
                        W / 2 + dx * ff,
                        H / 2 + dy * ff,
                        cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE,
                    )
                )
            img = cv2.merge(chans)
            tags.add("cam:chroma")
        else:
            img = cv2.remap(
                img, W / 2 + dx * fac, H / 2 + dy * fac, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
        if cam.k > 0:
            tags.add("cam:barrel")
    if cf["smudge"]:
        sc = np.array([kr.uniform(0.2, 0.8) * W, kr.uniform(0.2, 0.8) * H])
        srad = kr.uniform(60, 160)
        small = cv2.resize(img, (W // 8, H // 8), interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (0, 0), 2.0)
        haze = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
        mm = np.exp(-(((xx - sc[0]) ** 2 + (yy - sc[1]) ** 2) / (2 * srad**2))).astype(np.float32)
        mm = cv2.resize(mm, (W, H)) * kr.uniform(0.35, 0.6)
        img = img * (1 - mm[..., None]) + (haze * 0.85 + 0.12) * mm[..., None]
        tags.add("cam:smudge")
    # exposure
    expo = kr.uniform(0.92, 1.08)
    if lt["dim"]:
        expo *= kr.uniform(0.4, 0.6)
        tags.add("light:dim")
    if cf["clipped"]:
        lw_ = _lum(pcs["white"]) if "O" in on_board else 0.0
        gmax = 0.92 * (lp_ / 255) / max(lw_, 1e-3) if lw_ > 0 else 1.3
        gsel = min(kr.uniform(1.05, 1.2), gmax)
        if gsel >= 1.03:
            plate_lit = float(
                np.median(img[plate_mask > 0.5].reshape(-1, 3) @ np.array([0.114, 0.587, 0.299]))
            )
            expo = gsel / max(plate_lit, 1e-3)
            tags.add("cam:clipped")
    img *= expo
    if cf["crushed"]:
        plate_lit = float(np.median(img[plate_mask > 0.5].reshape(-1, 3) @ np.array([0.114, 0.587, 0.299])))
        bp = plate_lit * kr.uniform(0.6, 0.9)
        img = (img - bp) / (1 - bp)
        tags.add("cam:crushed")
    if not clean:
        read = kr.uniform(1.0, 3.0) / 255
        shot = kr.uniform(0.5, 2.0) / 255
        if lt["dim"]:
            read = kr.uniform(5.0, 9.0) / 255
            shot = kr.uniform(2.5, 4.0) / 255
        np.clip(img, 0, 1.2, out=img)
        noise = _crop(_BANK3, kr, H, W)
        sig = img * (2 * shot)
        sig += read
        sig *= noise
        img += sig
    if lt["flicker"]:
        amp = kr.uniform(0.05, 0.12)
        per = kr.uniform(50, 160)
        ph = kr.uniform(0, 2 * np.pi)
        rows = 1 + amp * np.sin(2 * np.pi * np.arange(H, dtype=np.float32) / per + ph)
        img *= rows[:, None, None]
        tags.add("light:flicker")
    np.clip(img, 0.0, 1.0, out=img)
    out = cv2.convertScaleAbs(img, alpha=255.0)
    if cf["sharpened"]:
        bl = cv2.GaussianBlur(out, (0, 0), kr.uniform(1.0, 1.6))
        out = cv2.addWeighted(out, 1 + cf["sharpened"], bl, -cf["sharpened"], 0)
        tags.add("cam:sharpened")
    if cf["yuyv"]:
        yuv = cv2.cvtColor(out, cv2.COLOR_BGR2YCrCb)
        ch = yuv[:, :, 1:].astype(np.uint16)
        ch = ((ch[:, 0::2] + ch[:, 1::2] + 1) // 2).astype(np.uint8)
        yuv[:, :, 1:] = np.repeat(ch, 2, axis=1)
        out = cv2.cvtColor(yuv, cv2.COLOR_YCrCb2BGR)
        tags.add("cam:yuyv")
    if cf["upscaled"]:
        small = cv2.resize(out, (W // 2, H // 2), interpolation=cv2.INTER_AREA)
        out = cv2.resize(small, (W, H), interpolation=cv2.INTER_LINEAR)
        tags.add("cam:upscaled")
    if cf["jpeg"]:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(cf["jpeg"])])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        tags.add("cam:jpeg")

    # ---------------- geometry tags and truth
    if o["tilt"] >= 5:
        tags.add("cam:tilt")
    if tr["pitch"] < 50:
        tags.add("cam:pitch_small")
    if tr["pitch"] > 75:
        tags.add("cam:pitch_large")
    if abs(tr["angle"]) >= 30:
        tags.add("geom:diagonal")
    folded = tr["folded"]
    board = ["."] * 9
    for k in range(9):
        board[int(folded[k])] = board_cells[k]
    coin_f = tuple(sorted(int(folded[k]) for k in coin_sq))
    unknown = tags - ALL_TAGS
    if unknown:
        raise AssertionError(f"unknown tags {unknown}")
    return Sample(
        image=out,
        board="".join(board),
        centre_px=tr["centre"],
        angle_deg=float(tr["angle"]),
        pitch_px=float(tr["pitch"]),
        occluded=occ is not None,
        tags=frozenset(tags),
        plate_px=np.asarray(tr["plate_px"], np.float64),
        coin_squares=coin_f,
    )


# --------------------------------------------------------------------------------------- occluders


def _draw_occluder(
    plan: Plan,
    kind: str,
    img: np.ndarray,
    cover: np.ndarray,
    cam: _Cam,
    g: _Geo,
    tr: dict[str, Any],
    lamps: list[tuple[np.ndarray, float]],
    cells: list[str],
    rng: np.random.Generator,
) -> tuple[int, ...]:
    """Draws one occluder over the board (in the undistorted image). Returns coin squares (board frame)."""
    o = plan.o
    pitch = tr["pitch"]
    # undistorted image positions of the square centres
    sq = np.array([[(c - 1.0), (r - 1.0)] for r in range(3) for c in range(3)])
    sqp = cam.proj(np.column_stack([sq @ g.M.T, np.full(9, g.t)]))
    centre = sqp[4]
    ppm = pitch / o["p_m"]  # image px per metre at the board
    lamp = lamps[0][0]
    L = lamp / np.linalg.norm(lamp)
    sdir = -np.array([L[0], L[1]]) / max(L[2], 0.2)  # shadow direction (world xy per metre of height)
    sdir_img = (
        cam.proj(np.array([[sdir[0] * 0.01, sdir[1] * 0.01, g.t]]))[0] - cam.proj(np.array([[0, 0, g.t]]))[0]
    )
    sdir_img = sdir_img / 0.01  # px per metre of height

    def shadow(polys: list[np.ndarray], height: float, dark: float, blur: float) -> None:
        sm = np.zeros((H // 2, W // 2), np.float32)
        off = sdir_img * height
        _paint(sm, [(p + off) * 0.5 for p in polys], 1.0)
        sm = cv2.GaussianBlur(sm, (0, 0), max(0.5, blur * 0.5))
        img[:] *= (1 - dark * cv2.resize(sm, (W, H)))[..., None]

    def edge_point(direction: np.ndarray, start: np.ndarray) -> np.ndarray:
        return start + direction * 1500.0

    if kind in ("hand", "hand_edge"):
        skin = _jit(
            rng,
            _choice(
                rng,
                (
                    (0.55, 0.66, 0.86),
                    (0.45, 0.56, 0.78),
                    (0.32, 0.43, 0.62),
                    (0.22, 0.3, 0.45),
                    (0.62, 0.72, 0.9),
                ),
            ),
            0.04,
        )
        s = ppm * rng.uniform(1.05, 1.2)  # a little closer to the camera than the board
        if kind == "hand":
            tip = sqp[int(rng.integers(9))] + rng.uniform(-0.3, 0.3, 2) * pitch
            ang = rng.uniform(0, 2 * np.pi)
        else:
            side = int(rng.integers(4))
            along = rng.uniform(-1.2, 1.2)
            into = rng.uniform(0.1, 0.3)
            bx = [
                np.array([along, -1.5 + into]),
                np.array([1.5 - into, along]),
                np.array([along, 1.5 - into]),
                np.array([-1.5 + into, along]),
            ][side]
            out_ = [np.array([0, -1.0]), np.array([1.0, 0]), np.array([0, 1.0]), np.array([-1.0, 0])][side]
            tip = cam.proj(np.array([[*(g.M @ bx), g.t]]))[0]
            ob = cam.proj(np.array([[*(g.M @ (bx + out_)), g.t]]))[0] - tip
            ang = math.atan2(ob[1], ob[0]) + rng.uniform(-0.5, 0.5)
        back = np.array([math.cos(ang), math.sin(ang)])  # from fingertips towards the wrist
        nrm = np.array([-back[1], back[0]])
        flen = 0.075 * s
        palm_l, palm_w = 0.09 * s, 0.085 * s
        fw = 0.018 * s
        knuckle = tip + back * flen
        polys = []
        fingers = []
        for k, (dl, sp) in enumerate(((-0.012, -1.5), (0.0, -0.5), (-0.006, 0.5), (-0.022, 1.5))):
            kn = knuckle + nrm * sp * fw * 1.05
            spread = rng.uniform(-0.1, 0.1) + sp * 0.06
            dirf = -(back * math.cos(spread) + nrm * math.sin(spread))
            ft = kn + dirf * (flen + dl * s) * rng.uniform(0.85, 1.0)
            fingers.append(_capsule(kn, ft, fw * (1.05 if k else 1.0), fw * 0.9))
        wrist = knuckle + back * palm_l
        palm = np.array(
            [
                knuckle - nrm * palm_w / 2,
                knuckle + nrm * palm_w / 2,
                wrist + nrm * palm_w * 0.42,
                wrist - nrm * palm_w * 0.42,
            ]
        )
        thumb_base = knuckle + back * palm_l * 0.6 - nrm * palm_w * 0.45
        thumb_tip = thumb_base - back * 0.05 * s - nrm * 0.035 * s
        thumb = _capsule(thumb_base, thumb_tip, fw * 1.25, fw * 1.05)
        arm = _capsule(wrist, edge_point(back, wrist), palm_w * 0.75, palm_w * 0.9)
        polys = [arm, palm, thumb, *fingers]
        shadow(polys, 0.06, 0.45, 0.1 * pitch)
        _paint(img, [arm], skin * 0.92, cover=cover)
        sleeve_from = wrist + back * rng.uniform(0.05, 0.12) * s
        sc = _jit(
            rng, _choice(rng, ((0.5, 0.2, 0.1), (0.2, 0.2, 0.2), (0.7, 0.7, 0.7), (0.2, 0.3, 0.6))), 0.1
        )
        _paint(
            img,
            [_capsule(sleeve_from, edge_point(back, sleeve_from), palm_w * 1.05, palm_w * 1.2)],
            sc,
            cover=cover,
        )
        _paint(img, [palm], skin, cover=cover)
        _paint(img, [thumb], skin * 0.97, cover=cover)
        for f in fingers:
            _paint(img, [f], skin * 0.82, cover=cover)
            inner = f.mean(0) + (f - f.mean(0)) * 0.8
            _paint(img, [inner], skin, cover=cover)
            nail = f[: len(f) // 2].mean(0)
            _paint(
                img,
                [_circle(nail - (f.mean(0) - nail) * 0.05, fw * 0.28, 16)],
                np.clip(skin * 1.1 + 0.05, 0, 1),
                alpha=0.6,
            )
        return ()
    if kind == "pen":
        c = centre + rng.uniform(-1.0, 1.0, 2) * pitch
        ang = rng.uniform(0, np.pi)
        d = np.array([math.cos(ang), math.sin(ang)])
        length = rng.uniform(0.13, 0.15) * ppm
        wid = rng.uniform(0.008, 0.011) * ppm * 1.02
        body = _capsule(c - d * length * 0.42, c + d * length * 0.4, wid)
        shadow([body], 0.012, 0.4, 0.03 * pitch)
        col = _jit(
            rng,
            _choice(
                rng, ((0.6, 0.25, 0.05), (0.1, 0.1, 0.1), (0.1, 0.1, 0.7), (0.1, 0.75, 0.9), (0.9, 0.9, 0.9))
            ),
            0.05,
        )
        _paint(img, [body], col, cover=cover)
        _paint(
            img,
            [_capsule(c - d * length * 0.42, c + d * length * 0.4, wid * 0.25)],
            np.clip(col * 1.3 + 0.2, 0, 1),
            alpha=0.5,
        )
        tip0 = c + d * length * 0.4
        cone = np.array(
            [
                tip0 + np.array([-d[1], d[0]]) * wid / 2,
                tip0 + d * length * 0.1,
                tip0 - np.array([-d[1], d[0]]) * wid / 2,
            ]
        )
        _paint(img, [cone], (0.45, 0.65, 0.8), cover=cover)
        _paint(img, [_circle(tip0 + d * length * 0.095, wid * 0.15, 12)], (0.15, 0.15, 0.15))
        return ()
    if kind == "coin":
        empties = [k for k in range(9) if cells[k] == "."]
        k = empties[int(rng.integers(len(empties)))]
        r_, c_ = divmod(k, 3)
        bp = np.array([c_ - 1.0, r_ - 1.0]) + rng.uniform(-0.06, 0.06, 2)
        wp = g.M @ bp
        metal = _choice(rng, ("steel", "brass", "copper"))
        alb = {"steel": (0.66, 0.66, 0.64), "brass": (0.25, 0.6, 0.75), "copper": (0.25, 0.42, 0.72)}[metal]
        rad = min(0.012 * rng.uniform(0.8, 1.15), 0.36 * o["p_m"])
        d = _Disc(
            np.array([wp[0], wp[1], g.t]),
            rad,
            0.0018,
            0.0,
            _jit(rng, alb, 0.05),
            0.8,
            25.0,
            "coin",
            bevel=0.1,
            metal=True,
            ring=True,
            tex_seed=int(rng.integers(1 << 30)),
        )
        sm = np.ones((H // 2, W // 2), np.float32)
        _shadow_capsules(sm, cam, [(d.pos, d.r, d.h)], lamp, 0.4, 0.5)
        img[:] *= cv2.resize(cv2.GaussianBlur(sm, (0, 0), 1.0), (W, H))[..., None]
        _render_disc(img, cover, cam, d, lamps)
        return (k,)
    if kind in ("gantry", "held_piece"):
        tgt = sqp[int(rng.integers(9))] + rng.uniform(-0.25, 0.25, 2) * pitch
        ang = rng.uniform(0, 2 * np.pi)
        d = np.array([math.cos(ang), math.sin(ang)])
        hz = rng.uniform(0.05, 0.12)  # height of the head above the board
        zoom = cam.dist / (cam.dist - hz)
        alu = _jit(rng, _choice(rng, ((0.7, 0.7, 0.72), (0.15, 0.15, 0.16))), 0.05)
        arm_w = rng.uniform(0.35, 0.6) * pitch * zoom
        head_r = rng.uniform(0.25, 0.5) * pitch * zoom
        arm = np.array(
            [
                tgt - np.array([-d[1], d[0]]) * arm_w / 2,
                tgt + np.array([-d[1], d[0]]) * arm_w / 2,
                tgt + np.array([-d[1], d[0]]) * arm_w / 2 + d * 1500,
                tgt - np.array([-d[1], d[0]]) * arm_w / 2 + d * 1500,
            ]
        )
        head = _circle(tgt, head_r)
        blur = 0.0
        layer = np.zeros_like(img)
        alpha = np.zeros((H, W), np.float32)
        if kind == "held_piece":
            # the piece hangs under the magnet: closer to the camera, hence larger and out of focus
            colour = _choice(rng, ("X", "O"))
            tw = np.linalg.inv(cam.hom(g.t))
            tq = tw @ np.array([tgt[0], tgt[1], 1.0])
            wxy = tq[:2] / tq[2]
            pz = g.t + hz - 0.012
            dsc = _disc_for(plan, colour, np.array([wxy[0], wxy[1], pz]), int(rng.integers(1 << 30)))
            head_r = max(head_r, 0.6 * dsc.r * cam.scale_at(dsc.pos))
            head = _circle(tgt, head_r * 0.6)
            blur = rng.uniform(1.2, 2.5)
            shadow(
                [_circle(cam.proj(np.array([[wxy[0], wxy[1], g.t]]))[0], dsc.r * ppm)],
                pz - g.t,
                0.4,
                0.15 * pitch,
            )
        shadow([arm, head], hz + 0.03, 0.45, 0.12 * pitch)
        _paint(layer, [arm], alu, cover=alpha)
        _paint(layer, [_rect(tgt + d * 700, 1400, arm_w * 0.15, ang)], alu * 0.5)
        if kind == "held_piece":
            _render_disc(layer, alpha, cam, dsc, lamps)
        hc = _jit(rng, _choice(rng, ((0.12, 0.12, 0.12), (0.6, 0.6, 0.62), (0.3, 0.3, 0.32))), 0.05)
        _paint(layer, [head], hc, cover=alpha)
        _paint(
            layer,
            [_circle(tgt - np.array([0.2, 0.2]) * head_r, head_r * 0.35)],
            np.clip(hc * 1.5 + 0.1, 0, 1),
            alpha=0.5,
        )
        if blur > 0:
            layer = cv2.GaussianBlur(layer * alpha[..., None], (0, 0), blur)
            alpha = cv2.GaussianBlur(alpha, (0, 0), blur)
            img[:] = img * (1 - alpha[..., None]) + layer
        else:
            img[:] = img * (1 - alpha[..., None]) + layer * alpha[..., None]
        np.maximum(cover, alpha, out=cover)
        return ()
    if kind == "paper":
        side = int(rng.integers(4))
        depth = rng.uniform(0.3, 1.4)
        edge_b = 1.5 - depth
        ang = rng.uniform(-0.35, 0.35)
        a, b = 3.0, 12.0
        base = np.array([[-a, edge_b], [a, edge_b], [a, edge_b + b], [-a, edge_b + b]])
        rr = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
        base = base @ rr.T
        rot = [np.eye(2), np.array([[0, -1], [1, 0]]), -np.eye(2), np.array([[0, 1], [-1, 0]])][side]
        poly_b = base @ rot.T
        poly = cam.proj(np.column_stack([poly_b @ g.M.T, np.full(4, g.t + 0.004)]))
        shadow([poly], 0.004, 0.3, 0.03 * pitch)
        pc = _jit(rng, _choice(rng, ((0.93, 0.95, 0.96), (0.6, 0.93, 0.97), (0.88, 0.9, 0.92))), 0.03)
        _paint(img, [poly], pc, cover=cover)
        return ()
    # sleeve / forearm across a corner
    k = int(rng.choice([0, 2, 6, 8]))
    r_, c_ = divmod(k, 3)
    corner_b = np.array([c_ - 1.0, r_ - 1.0]) * rng.uniform(1.0, 1.5)
    cp = cam.proj(np.array([[*(g.M @ corner_b), g.t]]))[0]
    outw = cp - centre
    ang = math.atan2(outw[1], outw[0]) + rng.uniform(-0.6, 0.6)
    d = np.array([math.cos(ang), math.sin(ang)])
    wid = rng.uniform(0.09, 0.12) * ppm
    end = cp - d * rng.uniform(0.0, 0.3) * pitch
    arm = _capsule(end, end + d * 1500, wid, wid * 1.1)
    shadow([arm], 0.05, 0.45, 0.15 * pitch)
    sc = _jit(
        rng,
        _choice(
            rng, ((0.45, 0.2, 0.1), (0.2, 0.2, 0.2), (0.7, 0.7, 0.7), (0.15, 0.35, 0.6), (0.3, 0.45, 0.3))
        ),
        0.1,
    )
    _paint(img, [arm], sc, cover=cover)
    nrm = np.array([-d[1], d[0]])
    for _ in range(4):  # folds of the cloth
        off = rng.uniform(-0.35, 0.35) * wid
        p0 = end + d * rng.uniform(0.1, 0.5) * wid + nrm * off
        _paint(img, [_capsule(p0, p0 + d * wid * rng.uniform(0.8, 2.0), wid * 0.06)], sc * 0.7, alpha=0.7)
    cuff = _capsule(end + d * wid * 0.1, end + d * wid * 0.25, wid * 0.95)
    _paint(img, [cuff], sc * 0.8, alpha=0.8)
    if rng.random() < 0.5:  # a hand sticking out of the cuff
        skin = _jit(rng, (0.5, 0.62, 0.82), 0.08)
        _paint(img, [_capsule(end, end - d * wid * 0.7, wid * 0.75, wid * 0.6)], skin, cover=cover)
    return ()


# -------------------------------------------------------------------------------------------- API


def render_sample(seed: int, i: int) -> Sample:
    """Sample i of the set with this seed; depends only on (seed, i)."""
    return _render(_plan(seed, i))


def make_set(n: int, seed: int) -> list[Sample]:
    return [render_sample(seed, i) for i in range(n)]
