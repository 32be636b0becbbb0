"""A tiny, deliberately different drawing of a board: a second renderer for the detector's tests.

It is not the simulator's camera (services/simcam): it draws straight in pixels with an affine board
(no perspective), its own colours, line widths and pitches, round or cross-shaped black pieces, flat
discs with or without a rim, wood-grain boards, coloured supply trays, clutter on the table and objects
that are not pieces (a fingertip, a pen, a sheet of paper), so that the detector is checked against two
independent looks. Truth is exact: the board's centre and angle are the drawing's own parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

SUPERSAMPLE = 4
#: clutter keeps this many pitches from the board's centre (clear of the board and its supply trays).
CLUTTER_CLEARANCE = 4.2
CLUTTER_ATTEMPTS = 20
#: a colour: one grey level or a (B, G, R) triple.
Colour = float | tuple[float, float, float]


@dataclass(frozen=True)
class Scene:
    center: tuple[float, float] = (320.0, 240.0)
    angle_deg: float = 0.0
    pitch_px: float = 60.0
    line_px: float = 4.0
    board: str = "........."
    board_grey: Colour = 205
    line_grey: Colour = 40
    table_grey: Colour = 110
    white_grey: Colour = 240
    black_grey: Colour = 35
    piece_frac: float = 0.5
    #: pieces off the grid: (colour, x, y)
    supply: tuple[tuple[str, float, float], ...] = ()
    gradient: float = 0.0
    noise: float = 0.0
    blur: float = 0.0
    glare: bool = False
    shadow: bool = False
    crosses: bool = False
    #: a hand: (x, y) of the fingertips and the direction the arm comes from (degrees, 0 = bottom).
    hand: tuple[float, float, float] | None = None
    #: offset of each piece from its square centre, in pitches (same for all, for "piece on a line").
    piece_offset: tuple[float, float] = (0.0, 0.0)
    #: pieces drawn as flat discs with a rim this fraction of their radius wide (0: no rim).
    rim: float = 0.0
    #: wood grain on the board plate: stripe amplitude in grey levels (0: plain).
    grain: float = 0.0
    #: a 3D-printed plate's top layer: ridges every ``period`` px at ``angle`` degrees to the board's x
    #: axis, ``depth`` grey levels from ridge to groove, or none.
    striations: tuple[float, float, float] | None = None
    #: trays under the supply: (x, y, width, height, colour) turned with the board, drawn before the
    #: supply pieces.
    trays: tuple[tuple[float, float, float, float, Colour], ...] = ()
    #: random shapes on the table off the board (seeded by ``draw``'s seed).
    clutter: int = 0
    #: things that are not pieces, drawn last: (kind, x, y, size px, angle deg, colour); kind is
    #: "finger" (an elongated ellipse), "pen" (a thin bar), "coin" (a metal disc of radius size)
    #: or "sheet" (a square).
    objects: tuple[tuple[str, float, float, float, float, Colour], ...] = ()
    #: a soft drop shadow under every piece: (dx, dy) offset in pitches and strength (0: none).
    soft_shadow: float = 0.0
    #: vignetting: the corners of the frame this much darker than its centre (0: none).
    vignette: float = 0.0
    #: per-channel gains (B, G, R) for a warm or cool white balance.
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0)
    #: horizontal motion blur, pixels (0: none).
    motion_blur: float = 0.0
    #: JPEG quality the frame is passed through (0: none).
    jpeg_quality: int = 0
    #: each piece on the board off its square's centre by up to this much, in pitches (seeded by draw).
    piece_jitter: float = 0.0
    #: a camera a little off vertical: the projective terms (1/px) of a homography about the board's
    #: centre, which stays where it is.
    tilt: tuple[float, float] = (0.0, 0.0)
    #: the plate beyond the outer lines' axes, in pitches (0: a board that ends at its outer lines).
    margin: float = 0.25
    #: the soft shadow of the gantry's arm across the board, or none: (angle of the band from the board's
    #: x axis in degrees, its middle's offset from the board's centre and its width, in pitches, the
    #: light it takes away (0..1), the softness of its edges in pitches).
    arm_shadow: tuple[float, float, float, float, float] | None = None
    #: a steel washer or magnet glued on every piece for the electromagnet: its outer radius as a share
    #: of the piece's, its colour, and its hole's radius as a share of its own (0: a magnet), or None.
    washer: tuple[float, Colour, float] | None = None
    #: a cutting mat under the board: its own printed grid over the whole table (spacing px, angle deg,
    #: line width px, line colour, every how many lines a heavier one), drawn before everything else.
    table_grid: tuple[float, float, float, Colour, int] | None = None
    #: engraved lines: the colour of the groove's lit wall, drawn over the second half of each line across
    #: it (the first half keeps ``line_grey``, the wall in shade); None for printed lines.
    groove: Colour | None = None
    #: stretches where a line's ink runs thin (a marker running dry): (line 0..3 from the board's top or
    #: left, horizontal, from, to: along the line in pitches from its start, 0..3); over each, the line's
    #: colour goes toward the plate's and back, ``line_fade`` of the way in the stretch's middle.
    faded_lines: tuple[tuple[int, bool, float, float], ...] = ()
    line_fade: float = 0.85
    #: hand-drawn (marker) lines: each wanders across its axis by up to this many px, over waves this
    #: many pitches long, and its width varies by a third either way (0: ruled lines).
    wavy: tuple[float, float] = (0.0, 1.0)


def board_point(scene: Scene, dx: float, dy: float) -> tuple[float, float]:
    """Image point of board-frame offset (dx, dy) pixels from the centre (docs/geometry.md)."""
    a = math.radians(scene.angle_deg)
    cx, cy = scene.center
    return (cx + dx * math.cos(a) + dy * math.sin(a), cy - dx * math.sin(a) + dy * math.cos(a))


def square_centre(scene: Scene, n: int) -> tuple[float, float]:
    r, c = divmod(n - 1, 3)
    return board_point(scene, (c - 1) * scene.pitch_px, (r - 1) * scene.pitch_px)


def _bgr(c: Colour) -> tuple[float, float, float]:
    if isinstance(c, tuple):
        return (float(c[0]), float(c[1]), float(c[2]))
    return (float(c), float(c), float(c))


def _scale(c: Colour, k: float) -> tuple[float, float, float]:
    b, g, r = _bgr(c)
    return (b * k, g * k, r * k)


def _cutting_mat(img: np.ndarray, grid: tuple[float, float, float, Colour, int], ss: int) -> None:
    """A cutting mat's printed grid over the whole (supersampled) table image: thin lines ``spacing`` px
    apart at ``angle``, every ``major``-th twice as wide."""
    spacing, angle, width, colour, major = grid
    h, w = img.shape[:2]
    a = math.radians(angle)
    ux, uy = math.cos(a), -math.sin(a)  # along the mat's x axis
    vx, vy = math.sin(a), math.cos(a)  # along its y axis
    reach = math.hypot(w, h) / ss
    n = int(reach / spacing) + 2
    cx, cy = w / ss / 2, h / ss / 2
    for k in range(-n, n + 1):
        thick = width * (2.0 if k % major == 0 else 1.0)
        for (dx, dy), (ex, ey) in (((ux, uy), (vx, vy)), ((vx, vy), (ux, uy))):
            ox, oy = cx + k * spacing * dx, cy + k * spacing * dy
            p0 = (int((ox - reach * ex) * ss * 16), int((oy - reach * ey) * ss * 16))
            p1 = (int((ox + reach * ex) * ss * 16), int((oy + reach * ey) * ss * 16))
            cv2.line(img, p0, p1, _bgr(colour), max(1, round(thick * ss)), cv2.LINE_AA, 4)


#: points per pitch along a wavy line's outline.
WAVY_STEPS = 12


def _wavy_line(scene: Scene, off: float, horizontal: bool, k: int) -> list[tuple[float, float]]:
    """The outline of grid line ``k`` (at ``off`` px from the board's centre across it) drawn by hand:
    its middle wandering by up to ``scene.wavy[0]`` px in two sines of a phase fixed per line (the longer
    ``scene.wavy[1]`` pitches), its width a third more or less along it; board-frame px."""
    p = scene.pitch_px
    amplitude, wave = scene.wavy
    phases = np.random.default_rng(k * 2 + horizontal).uniform(0, 2 * math.pi, 3)
    t = np.linspace(-1.5 * p - scene.line_px / 2, 1.5 * p + scene.line_px / 2, int(3 * WAVY_STEPS) + 2)
    u = t / (wave * p) * 2 * math.pi
    middle = off + amplitude * (0.7 * np.sin(u + phases[0]) + 0.3 * np.sin(2.7 * u + phases[1]))
    half = scene.line_px / 2 * (1 + np.sin(0.8 * u + phases[2]) / 3)
    left = list(zip(t.tolist(), (middle - half).tolist(), strict=True))
    right = list(zip(t.tolist(), (middle + half).tolist(), strict=True))[::-1]
    outline = left + right
    return outline if horizontal else [(y, x) for x, y in outline]


#: steps a faded stretch of line is drawn in (the frame's blur smooths them).
FADE_STEPS = 16


def _fade_lines(
    img: np.ndarray, scene: Scene, pts: Callable[[list[tuple[float, float]]], np.ndarray]
) -> None:
    """Paint ``scene.faded_lines`` over the drawn lines: each stretch in ``FADE_STEPS`` short pieces of
    line, blended toward the plate along a half sine (none at the stretch's ends, ``line_fade`` in its
    middle). Painted along the line's axis: where a wavy line wanders beyond it, its ink is kept."""
    p, lw = scene.pitch_px, scene.line_px / 2 + 0.5
    line, plate = np.array(_bgr(scene.line_grey)), np.array(_bgr(scene.board_grey))
    for k, horizontal, start, end in scene.faded_lines:
        off = (k - 1.5) * p
        for i in range(FADE_STEPS):
            a, b = start + (end - start) * i / FADE_STEPS, start + (end - start) * (i + 1) / FADE_STEPS
            t = scene.line_fade * math.sin(math.pi * (i + 0.5) / FADE_STEPS)
            colour = tuple(float(v) for v in line + t * (plate - line))
            a, b = (a - 1.5) * p, (b - 1.5) * p
            quad = (
                [(a, off - lw), (b, off - lw), (b, off + lw), (a, off + lw)]
                if horizontal
                else [(off - lw, a), (off + lw, a), (off + lw, b), (off - lw, b)]
            )
            cv2.fillPoly(img, [pts([board_point(scene, x, y) for x, y in quad])], colour, cv2.LINE_AA, 4)


def draw(scene: Scene, seed: int = 0) -> np.ndarray:
    """The scene as a 640x480 BGR image."""
    rng = np.random.default_rng(seed)
    w, h = 640, 480
    ss = SUPERSAMPLE
    img = np.empty((h * ss, w * ss, 3), np.float32)
    img[:] = _bgr(scene.table_grey)

    def pts(points: list[tuple[float, float]]) -> np.ndarray:
        return (np.array(points) * ss * 16).round().astype(np.int32).reshape(-1, 1, 2)

    def ipt(x: float, y: float) -> tuple[int, int]:
        return (int(x * ss), int(y * ss))

    if scene.table_grid is not None:
        _cutting_mat(img, scene.table_grid, ss)
    for _ in range(scene.clutter):
        # Table clutter: boxes and blobs of random colours, kept off the board's area.
        for _attempt in range(CLUTTER_ATTEMPTS):
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            if math.hypot(x - scene.center[0], y - scene.center[1]) > CLUTTER_CLEARANCE * scene.pitch_px:
                break
        else:
            continue  # no free place on this table: no clutter here
        col = tuple(float(v) for v in rng.uniform(0, 255, 3))
        size = rng.uniform(0.3, 1.2) * scene.pitch_px
        if rng.random() < 0.5:
            cv2.circle(img, ipt(x, y), int(size / 2 * ss), col, -1, cv2.LINE_AA)
        else:
            box = cv2.boxPoints(((x, y), (size, size * rng.uniform(0.3, 1.0)), rng.uniform(0, 180)))
            cv2.fillPoly(img, [pts([tuple(p) for p in box])], col, cv2.LINE_AA, 4)

    p = scene.pitch_px
    margin = scene.margin * p
    half = 1.5 * p + margin
    plate = [board_point(scene, sx * half, sy * half) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    cv2.fillPoly(img, [pts(plate)], _bgr(scene.board_grey), cv2.LINE_AA, 4)
    if scene.grain or scene.striations is not None:
        # Textures of the plate, inside it only: each along a direction turned from the board's x axis.
        mask = np.zeros(img.shape[:2], np.uint8)
        cv2.fillPoly(mask, [pts(plate)], 255, cv2.LINE_AA, 4)
        inside = (mask / 255.0)[..., None]
        yy, xx = np.mgrid[0 : h * ss, 0 : w * ss].astype(np.float32) / ss
        dx, dy = xx - scene.center[0], yy - scene.center[1]

        def across(turn_deg: float) -> tuple[np.ndarray, np.ndarray]:
            """Each pixel's offset from the board's centre across and along that direction (px)."""
            t = math.radians(scene.angle_deg + turn_deg)
            return dx * math.sin(t) + dy * math.cos(t), dx * math.cos(t) - dy * math.sin(t)

        if scene.grain:
            # Wood grain along the board's x axis: low-frequency stripes.
            v, _ = across(0.0)
            img += (scene.grain * np.sin(v / (0.09 * p) + 2.0 * np.sin(v / (0.7 * p))))[..., None] * inside
        if scene.striations is not None:
            # The nozzle's paths side by side: a rounded ridge each, a dark groove between, wandering a
            # little as the extrusion does.
            period, angle, depth = scene.striations
            v, along = across(angle)
            phase = (
                2 * math.pi * v / period + 0.6 * np.sin(along / (1.7 * p)) + 0.3 * np.sin(along / (0.23 * p))
            )
            img += (depth * (np.abs(np.cos(phase / 2)) ** 0.5 - 0.5))[..., None] * inside
    lw = scene.line_px / 2
    for k in range(4):
        off = (k - 1.5) * p
        for horizontal in (False, True):
            if horizontal:
                quad = [
                    (-1.5 * p - lw, off - lw),
                    (1.5 * p + lw, off - lw),
                    (1.5 * p + lw, off + lw),
                    (-1.5 * p - lw, off + lw),
                ]
            else:
                quad = [
                    (off - lw, -1.5 * p - lw),
                    (off + lw, -1.5 * p - lw),
                    (off + lw, 1.5 * p + lw),
                    (off - lw, 1.5 * p + lw),
                ]
            if scene.wavy[0] > 0:
                quad = _wavy_line(scene, off, horizontal, k)
            cv2.fillPoly(
                img, [pts([board_point(scene, x, y) for x, y in quad])], _bgr(scene.line_grey), cv2.LINE_AA, 4
            )
            if scene.groove is not None:
                # An engraved line: the groove's far wall catches the light (its second half, across it).
                lit = list(quad)
                if horizontal:
                    lit[0], lit[1] = (lit[0][0], off), (lit[1][0], off)
                else:
                    lit[0], lit[3] = (off, lit[0][1]), (off, lit[3][1])
                cv2.fillPoly(
                    img, [pts([board_point(scene, x, y) for x, y in lit])], _bgr(scene.groove), cv2.LINE_AA, 4
                )
    _fade_lines(img, scene, pts)
    for tx, ty, tw, th, tcol in scene.trays:
        # A tray lies square to the board: width along the board's x axis, height along its y axis.
        box = cv2.boxPoints(((tx, ty), (tw, th), -scene.angle_deg))
        cv2.fillPoly(img, [pts([tuple(q) for q in box])], _bgr(tcol), cv2.LINE_AA, 4)
    pieces: list[tuple[str, float, float]] = []
    for n, ch in enumerate(scene.board, start=1):
        if ch in "XO":
            r, c = divmod(n - 1, 3)
            jx, jy = rng.uniform(-scene.piece_jitter, scene.piece_jitter, 2) if scene.piece_jitter else (0, 0)
            x, y = board_point(
                scene, (c - 1 + scene.piece_offset[0] + jx) * p, (r - 1 + scene.piece_offset[1] + jy) * p
            )
            pieces.append(("black" if ch == "X" else "white", x, y))
    pieces += list(scene.supply)
    rad = scene.piece_frac * p / 2
    if scene.shadow:
        for _colour, x, y in pieces:
            shade = _scale(scene.board_grey, 0.6)
            cv2.circle(img, ipt(x + 3, y + 4), int(rad * ss), shade, -1, cv2.LINE_AA)
    if scene.soft_shadow:
        # A soft drop shadow: a blurred, offset disc that darkens what lies under it.
        shade = np.zeros(img.shape[:2], np.float32)
        off = 0.04 * p
        for _colour, x, y in pieces:
            cv2.circle(shade, ipt(x + off, y + off), int(rad * 1.02 * ss), 1.0, -1, cv2.LINE_AA)
        shade = cv2.GaussianBlur(shade, (0, 0), 0.05 * p * ss)
        img *= (1.0 - scene.soft_shadow * shade)[..., None]
    for colour, x, y in pieces:
        col = scene.black_grey if colour == "black" else scene.white_grey
        if colour == "black" and scene.crosses:
            arm = rad * 0.9
            t = rad * 0.35
            for ang in (45.0, -45.0):
                a = math.radians(ang)
                dx, dy = math.cos(a) * arm, math.sin(a) * arm
                cv2.line(img, ipt(x - dx, y - dy), ipt(x + dx, y + dy), _bgr(col), int(2 * t * ss))
        else:
            cv2.circle(img, ipt(x, y), int(rad * ss), _bgr(col), -1, cv2.LINE_AA)
            if scene.rim:
                # A raised rim: a ring a little darker than the disc's face (lighter on a black disc).
                k = 0.8 if colour == "white" else 1.6
                rim_col = tuple(min(255.0, v * k + (25 if colour == "black" else 0)) for v in _bgr(col))
                cv2.circle(
                    img,
                    ipt(x, y),
                    int(rad * (1 - scene.rim / 2) * ss),
                    rim_col,
                    max(1, int(rad * scene.rim * ss)),
                    cv2.LINE_AA,
                )
        if scene.washer is not None:
            share, metal, hole = scene.washer
            cv2.circle(img, ipt(x, y), int(rad * share * ss), _bgr(metal), -1, cv2.LINE_AA)
            if hole > 0.0:
                cv2.circle(img, ipt(x, y), int(rad * share * hole * ss), _bgr(col), -1, cv2.LINE_AA)
        if scene.glare:
            cv2.circle(
                img, ipt(x - rad * 0.35, y - rad * 0.35), int(rad * 0.28 * ss), _bgr(255), -1, cv2.LINE_AA
            )
    for kind, ox, oy, size, ang, ocol in scene.objects:
        if kind == "finger":
            cv2.ellipse(
                img,
                ipt(ox, oy),
                (int(size / 2 * ss), int(size / 5 * ss)),
                -ang,
                0,
                360,
                _bgr(ocol),
                -1,
                cv2.LINE_AA,
            )
        elif kind == "pen":
            box = cv2.boxPoints(((ox, oy), (size, max(2.0, size / 10)), -ang))
            cv2.fillPoly(img, [pts([tuple(q) for q in box])], _bgr(ocol), cv2.LINE_AA, 4)
        elif kind == "coin":  # a metal disc: a face of the object's colour, a brighter rim, a dark edge
            centre, r = ipt(ox, oy), int(size * ss)
            cv2.circle(img, centre, r, _bgr(_scale(ocol, 0.55)), -1, cv2.LINE_AA)
            cv2.circle(img, centre, int(r * 0.93), _bgr(_scale(ocol, 1.15)), -1, cv2.LINE_AA)
            cv2.circle(img, centre, int(r * 0.8), _bgr(ocol), -1, cv2.LINE_AA)
        elif kind == "sheet":
            box = cv2.boxPoints(((ox, oy), (size, size), -ang))
            cv2.fillPoly(img, [pts([tuple(q) for q in box])], _bgr(ocol), cv2.LINE_AA, 4)
        else:
            raise ValueError(f"unknown object kind {kind!r}")
    if scene.hand is not None:
        hx, hy, from_deg = scene.hand
        a = math.radians(from_deg)
        # direction from the fingertips towards where the arm comes from (0 = the bottom edge)
        ux, uy = -math.sin(a), math.cos(a)
        vx, vy = uy, -ux
        width = 1.3 * p
        far = 900.0
        arm = [
            (hx + vx * width / 2, hy + vy * width / 2),
            (hx - vx * width / 2, hy - vy * width / 2),
            (hx - vx * width / 2 + ux * far, hy - vy * width / 2 + uy * far),
            (hx + vx * width / 2 + ux * far, hy + vy * width / 2 + uy * far),
        ]
        cv2.fillPoly(img, [pts(arm)], _bgr(170.0), cv2.LINE_AA, 4)
        cv2.ellipse(img, ipt(hx, hy), (int(width / 2 * ss), int(width / 2 * ss)), 0, 0, 360, _bgr(170.0), -1)
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    if scene.arm_shadow is not None:
        # A band across the frame, darker in its middle, its edges blurred by the light's size.
        band_deg, offset, width, depth, soft = scene.arm_shadow
        # (the band runs along (cos a, -sin a) as seen, image y down; (sin a, cos a) is across it)
        a = math.radians(scene.angle_deg + band_deg)
        nx, ny = math.sin(a), math.cos(a)
        ox, oy = scene.center[0] + offset * p * nx, scene.center[1] + offset * p * ny
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        across = np.abs((xx - ox) * nx + (yy - oy) * ny)
        inside = np.clip((width * p / 2 - across) / max(soft * p, 1.0) + 0.5, 0.0, 1.0)
        img = img * (1.0 - depth * inside)[..., None]
    if scene.gradient:
        ramp = np.linspace(1.0 - scene.gradient, 1.0, w, dtype=np.float32)[None, :, None]
        img = img * ramp
    if scene.vignette:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
        img = img * (1.0 - scene.vignette * r2)[..., None]
    if scene.white_balance != (1.0, 1.0, 1.0):
        img = img * np.array(scene.white_balance, np.float32)[None, None, :]
    if scene.motion_blur:
        k = max(1, round(scene.motion_blur))
        img = cv2.blur(img, (2 * k + 1, 1))
    if scene.blur:
        img = cv2.GaussianBlur(img, (0, 0), scene.blur)
    if scene.noise:
        img = img + rng.normal(0.0, scene.noise, img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if scene.tilt != (0.0, 0.0):
        cx, cy = scene.center
        move = np.array([[1.0, 0.0, -cx], [0.0, 1.0, -cy], [0.0, 0.0, 1.0]])
        persp = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [scene.tilt[0], scene.tilt[1], 1.0]])
        tilt = np.linalg.inv(move) @ persp @ move
        out = cv2.warpPerspective(out, tilt, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if scene.jpeg_quality:
        _ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg_quality])
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out
