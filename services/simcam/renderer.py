"""The simulated camera's renderer: a WorldState in, a BGR image out, as a camera above the table sees it.

How it works (and why it is fast): everything is drawn in a top view of the table plane (the *canvas*,
``s`` pixels per millimetre), then one precomputed remap turns the canvas into the camera image with the
camera's exact homography. Shapes above the table (a held piece, the gripper head, the hand) are drawn
where the camera ray through them meets the table (:meth:`CameraModel.drop_to_table`), which keeps their
perspective (higher is larger and pushed away from the camera). The table with its markers is drawn once
per style; the board plate once per board pose; only pieces, gripper and hand are drawn per frame. Image
effects (lighting gradient, vignette, exposure and tint) are one precomputed gain map; blur is one
Gaussian; sensor noise is a window into a precomputed noise bank, picked by the frame's seed.

Determinism: the output is a pure function of (world, camera, seed, style, table). The per-frame seed
only chooses the noise; textures come from ``style.texture_seed``.

The renderer's appearance constants (piece thickness, hand and gripper shapes) are documented in
docs/world-format.md. Nothing here is meant to help a detector.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

import cv2
import msgspec
import numpy as np

from messages import PieceState, WorldState
from services.common.config import TableConfig

from .camera import CameraModel
from .style import RenderStyle

#: how tall a piece is; the camera sees its top this high above the table.
PIECE_THICKNESS_MM: Final = 5.0
#: the board plate is a thin printed plate: drawn flush with the table (its lines lie on the table
#: plane that the homography describes), with the shadow of an edge this high.
BOARD_EDGE_MM: Final = 2.0
#: the gripper: magnet tube radius and length above the held piece, the carriage block (width along x,
#: depth along y), its offset towards +y from the tube, and its thickness above the tube's top.
GRIPPER_TUBE_RADIUS_MM: Final = 8.0
GRIPPER_TUBE_LENGTH_MM: Final = 55.0
GRIPPER_CARRIAGE_MM: Final = (56.0, 40.0)
GRIPPER_CARRIAGE_OFFSET_MM: Final = 34.0
GRIPPER_CARRIAGE_THICKNESS_MM: Final = 20.0
#: the hand's heights above the table: fingertips (just beyond HandState.x/y), palm, wrist, elbow.
HAND_FINGERTIP_HEIGHT_MM: Final = 30.0
HAND_PALM_HEIGHT_MM: Final = 55.0
HAND_WRIST_HEIGHT_MM: Final = 70.0
HAND_ELBOW_HEIGHT_MM: Final = 220.0
#: pieces' tops are gently domed (normal tilt at the rim, before the bevel) and glossy (Phong exponent):
#: the glare is a spot on the lit side.
_DOME: Final = 0.35
_SHININESS: Final = 250
#: the quiet zone around each ArUco marker, in marker cells.
MARKER_QUIET_CELLS: Final = 1
#: canvas resolution: this many canvas pixels per image pixel at the finest point of the view.
_CANVAS_OVERSAMPLE: Final = 1.3
#: fixed-point drawing: OpenCV's ``shift`` bits (1/16 pixel).
_SHIFT: Final = 4
_ONE: Final = 1 << _SHIFT
#: noise bank margin: a frame's noise is a window at a seeded offset of up to this many pixels.
_NOISE_MARGIN: Final = 64
_NOISE_BANK_SEED: Final = 0x5A17
#: supersampling of marker cells (crisp, anti-aliased edges at any sub-pixel position).
_MARKER_SUPERSAMPLE: Final = 8
#: piece sprites are cached at quarter-pixel positions and radii in 1/20 pixel, at most this many.
_SUBPIXEL: Final = 4
_RADIUS_STEPS: Final = 20
_SPRITE_CACHE_SIZE: Final = 512
_RENDERER_CACHE_SIZE: Final = 8
#: sizes beyond this are not a table-top world (and would make huge sprites).
_MAX_SIZE_MM: Final = 500.0
#: things this close to the camera's height cannot be drawn (the gripper's z).
_CAMERA_CLEARANCE: Final = 0.8
#: shadows blurred wider than this many pixels are computed at a reduced resolution.
_SOFT_SHADOW_PX: Final = 2.5


class RenderError(ValueError):
    """The world cannot be rendered (for example an unknown ArUco dictionary in the table)."""


def render(
    world: WorldState,
    camera: CameraModel,
    *,
    seed: int,
    style: RenderStyle | None = None,
    table: TableConfig,
) -> np.ndarray:
    """Render ``world`` as ``camera`` sees it: a ``(camera.height, camera.width, 3)`` BGR uint8 image.

    Pure: the same arguments give identical bytes. ``seed`` picks the sensor noise (frames of a stream
    should use different seeds). Renderers (and their caches) are kept per (camera, table, style).

    :raises RenderError: for a table the renderer cannot draw (unknown marker dictionary).
    """
    return renderer_for(camera, table, style or RenderStyle()).render(world, seed=seed)


def check_world(world: WorldState) -> None:
    """Refuse a world the renderer cannot draw. :raises RenderError: saying which number is bad."""
    numbers: list[tuple[str, float]] = [
        ("board_center_mm", world.board_center_mm[0]),
        ("board_center_mm", world.board_center_mm[1]),
        ("board_angle_deg", world.board_angle_deg),
        ("gripper", world.gripper.x_mm),
        ("gripper", world.gripper.y_mm),
        ("gripper", world.gripper.z_mm),
        ("hand", world.hand.x_mm),
        ("hand", world.hand.y_mm),
        ("hand", world.hand.angle_deg),
    ]
    numbers += [(f"piece {p.piece_id}", v) for p in world.pieces for v in (p.x_mm, p.y_mm)]
    for name, value in numbers:
        if not math.isfinite(value):
            raise RenderError(f"{name}: {value} is not a finite number")
    for name in ("pitch_mm", "line_width_mm", "piece_diameter_mm"):
        value = getattr(world, name)
        if not (math.isfinite(value) and 0 < value <= _MAX_SIZE_MM):
            raise RenderError(f"{name} must be within (0, {_MAX_SIZE_MM:g}] mm, got {value}")
    if not (math.isfinite(world.plate_margin_mm) and world.plate_margin_mm >= 0):
        raise RenderError(f"plate_margin_mm must not be negative, got {world.plate_margin_mm}")


def _readonly(array: np.ndarray) -> np.ndarray:
    """``array``, marked read-only: a cached array is shared by every later call, so writing into it
    must fail at once instead of changing every frame after it (copy it to draw on it)."""
    array.setflags(write=False)
    return array


_RENDERERS: OrderedDict[tuple[object, ...], Renderer] = OrderedDict()


def renderer_for(camera: CameraModel, table: TableConfig, style: RenderStyle) -> Renderer:
    """The cached :class:`Renderer` for these settings (a small LRU)."""
    key = (camera, msgspec.json.encode(table), style)
    r = _RENDERERS.get(key)
    if r is None:
        r = Renderer(camera, table, style)
        _RENDERERS[key] = r
        while len(_RENDERERS) > _RENDERER_CACHE_SIZE:
            _RENDERERS.popitem(last=False)
    else:
        _RENDERERS.move_to_end(key)
    return r


@dataclass(frozen=True)
class Canvas:
    """The top view: table mm -> canvas px is ``u = (x - x0) * scale``, ``v = (y - y0) * scale``."""

    x0: float
    y0: float
    scale: float
    width: int
    height: int

    def to_px(self, xy_mm: np.ndarray) -> np.ndarray:
        return (np.asarray(xy_mm, dtype=np.float64) - (self.x0, self.y0)) * self.scale

    def matrix(self) -> np.ndarray:
        s = self.scale
        return np.array([[s, 0.0, -s * self.x0], [0.0, s, -s * self.y0], [0.0, 0.0, 1.0]])


def _fixed(points_px: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(points_px) * _ONE).astype(np.int32)


def _disc_polygon(centre: np.ndarray, radius: float, n: int = 48) -> np.ndarray:
    t = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    return np.column_stack([centre[0] + radius * np.cos(t), centre[1] + radius * np.sin(t)])


def _capsule(a: np.ndarray, b: np.ndarray, ra: float, rb: float, n: int = 12) -> np.ndarray:
    """A polygon around segment a-b, radius ra at a and rb at b (rounded ends)."""
    d = b - a
    length = float(np.hypot(*d)) or 1e-9
    ux, uy = d / length
    base = math.atan2(uy, ux)
    arc_b = base + np.linspace(-math.pi / 2, math.pi / 2, n)
    arc_a = base + np.linspace(math.pi / 2, 3 * math.pi / 2, n)
    pb = np.column_stack([b[0] + rb * np.cos(arc_b), b[1] + rb * np.sin(arc_b)])
    pa = np.column_stack([a[0] + ra * np.cos(arc_a), a[1] + ra * np.sin(arc_a)])
    return np.vstack([pb, pa])


class _Roi:
    """An integer window of the canvas that holds some float-pixel bounding box (clipped)."""

    def __init__(self, bbox: tuple[float, float, float, float], pad: float, width: int, height: int) -> None:
        self.x0 = max(0, math.floor(bbox[0] - pad))
        self.y0 = max(0, math.floor(bbox[1] - pad))
        self.x1 = min(width, math.ceil(bbox[2] + pad) + 1)
        self.y1 = min(height, math.ceil(bbox[3] + pad) + 1)

    @property
    def empty(self) -> bool:
        return self.x1 <= self.x0 or self.y1 <= self.y0

    @property
    def shape(self) -> tuple[int, int]:
        return (self.y1 - self.y0, self.x1 - self.x0)

    def view(self, image: np.ndarray) -> np.ndarray:
        return image[self.y0 : self.y1, self.x0 : self.x1]

    def local(self, points_px: np.ndarray) -> np.ndarray:
        return np.asarray(points_px) - (self.x0, self.y0)

    @classmethod
    def around(cls, polys: list[np.ndarray], pad: float, width: int, height: int) -> _Roi:
        allp = np.vstack(polys)
        lo, hi = allp.min(axis=0), allp.max(axis=0)
        return cls((lo[0], lo[1], hi[0], hi[1]), pad, width, height)


def _darken(canvas: np.ndarray, polys: list[np.ndarray], sigma_px: float, strength: float) -> None:
    """Multiply the canvas under the union of the polygons (canvas px) by ``1 - strength``, with edges
    blurred by ``sigma_px``. Wide blurs are done at a reduced resolution (a soft shadow has no detail)."""
    if strength <= 0 or not polys:
        return
    pad = 3.0 * sigma_px + 2.0
    roi = _Roi.around(polys, pad, canvas.shape[1], canvas.shape[0])
    if roi.empty:
        return
    hh, ww = roi.shape
    f = max(1, int(sigma_px // _SOFT_SHADOW_PX))
    small_shape = (max(1, -(-hh // f)), max(1, -(-ww // f)))
    mask = np.zeros(small_shape, np.uint8)
    for p in polys:  # one by one: fillPoly of several polygons fills their overlaps even-odd
        cv2.fillPoly(mask, [_fixed(roi.local(p) / f)], 255, cv2.LINE_AA, _SHIFT)
    if sigma_px / f > 0.3:
        mask = cv2.GaussianBlur(mask, (0, 0), sigma_px / f)
    if f > 1:
        mask = cv2.resize(mask, (small_shape[1] * f, small_shape[0] * f), interpolation=cv2.INTER_LINEAR)
        mask = mask[:hh, :ww]
    keep = 1.0 - (strength / 255.0) * mask.astype(np.float32)
    view = roi.view(canvas)
    view[:] = cv2.multiply(view, cv2.merge([keep, keep, keep]), dtype=cv2.CV_8U)


def _blend(canvas: np.ndarray, roi: _Roi, colour: np.ndarray, alpha: np.ndarray) -> None:
    """Composite ``colour`` (roi-sized uint8 BGR) over the canvas with ``alpha`` (float32 0..1)."""
    view = roi.view(canvas)
    view[:] = cv2.blendLinear(colour, view, alpha, (1.0 - alpha).astype(np.float32))


class Renderer:
    """Renders worlds for one camera, table and style. Not thread-safe (it keeps caches)."""

    def __init__(self, camera: CameraModel, table: TableConfig, style: RenderStyle) -> None:
        self.camera = camera
        self.table = table
        self.style = style
        self.canvas = self._choose_canvas()
        self._maps = self._remap_tables()
        self._gain = self._gain_map()
        self._noise = _noise_bank(style.noise_sigma, camera.width, camera.height)
        self._base = _readonly(self._draw_base())
        self._board_key: tuple[object, ...] | None = None
        self._board_layer: np.ndarray | None = None
        self._sprites: dict[tuple[object, ...], tuple[np.ndarray, np.ndarray]] = {}
        #: the board with the lying pieces, and what it shows
        self._pieces_key: tuple[object, ...] | None = None
        self._pieces_layer: np.ndarray | None = None
        #: the previous world (clock and revision zeroed) and its image before noise
        self._last_look: WorldState | None = None
        self._last_image: np.ndarray = np.zeros((camera.height, camera.width, 3), np.uint8)

    # -- static set-up ------------------------------------------------------------------------------

    def _choose_canvas(self) -> Canvas:
        cam = self.camera
        w, h = cam.width, cam.height
        corners = np.array([[-0.5, -0.5, 1], [w - 0.5, -0.5, 1], [w - 0.5, h - 0.5, 1], [-0.5, h - 0.5, 1]]).T
        t = cam.image_to_table_homography() @ corners
        if np.any(t[2] <= 0):
            raise RenderError("the camera sees the horizon: the table plane does not fill the image")
        xy = (t[:2] / t[2]).T
        x0, y0 = xy.min(axis=0) - 4.0
        x1, y1 = xy.max(axis=0) + 4.0
        _, finest = cam.px_per_mm_range((x0, y0, x1, y1))
        scale = math.ceil(finest * _CANVAS_OVERSAMPLE * 4.0) / 4.0
        return Canvas(
            x0=float(x0),
            y0=float(y0),
            scale=scale,
            width=math.ceil((x1 - x0) * scale),
            height=math.ceil((y1 - y0) * scale),
        )

    def _remap_tables(self) -> tuple[np.ndarray, np.ndarray]:
        cam = self.camera
        m = self.canvas.matrix() @ cam.image_to_table_homography()
        u, v = np.meshgrid(np.arange(cam.width, dtype=np.float64), np.arange(cam.height, dtype=np.float64))
        den = m[2, 0] * u + m[2, 1] * v + m[2, 2]
        mx = ((m[0, 0] * u + m[0, 1] * v + m[0, 2]) / den).astype(np.float32)
        my = ((m[1, 0] * u + m[1, 1] * v + m[1, 2]) / den).astype(np.float32)
        return cv2.convertMaps(mx, my, cv2.CV_16SC2)

    def _gain_map(self) -> np.ndarray:
        """Exposure, tint, lighting gradient, lamp hotspot and vignette as one uint8 gain (x/128)."""
        st, cam = self.style, self.camera
        w, h = cam.width, cam.height
        u, v = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
        half = w / 2.0
        nu, nv = (u - (w - 1) / 2.0) / half, (v - (h - 1) / 2.0) / half
        lx, ly = st.light_direction()
        proj = nu * lx + nv * ly
        proj /= max(float(np.abs(proj).max()), 1e-6)
        g = 1.0 + 0.5 * st.light_gradient * proj
        g *= 1.0 - st.vignette * (nu**2 + nv**2) / float((nu**2 + nv**2).max())
        if st.hotspot > 0:
            hu, hv = 0.35 * lx, 0.35 * ly
            g *= 1.0 + st.hotspot * np.exp(-((nu - hu) ** 2 + (nv - hv) ** 2) / (2 * 0.22**2))
        g *= st.exposure
        gains = [np.clip(g * t * 128.0, 0, 255).astype(np.uint8) for t in st.tint]
        return cv2.merge(gains)

    def _draw_base(self) -> np.ndarray:
        """The table top with its markers."""
        st, cv = self.style, self.canvas
        rng = np.random.default_rng(st.texture_seed)
        base = np.empty((cv.height, cv.width, 3), np.uint8)
        base[:] = st.table_colour
        if st.table_texture > 0:
            coarse = rng.normal(0.0, 1.0, (max(2, cv.height // 48), max(2, cv.width // 48))).astype(
                np.float32
            )
            field = cv2.resize(coarse, (cv.width, cv.height), interpolation=cv2.INTER_CUBIC)
            # a faint grain along x, like a wood or laminate top
            grain = cv2.resize(
                rng.normal(0.0, 0.5, (cv.height, max(2, cv.width // 24))).astype(np.float32),
                (cv.width, cv.height),
                interpolation=cv2.INTER_LINEAR,
            )
            tex = (field + grain) * st.table_texture
            base = cv2.add(base.astype(np.float32), cv2.merge([tex, tex, tex]))
            base = np.clip(base, 0, 255).astype(np.uint8)
        self._draw_markers(base)
        return base

    def _draw_markers(self, canvas: np.ndarray) -> None:
        table, cv = self.table, self.canvas
        name = table.marker_dictionary
        code = getattr(cv2.aruco, name, None)
        if not isinstance(code, int):
            raise RenderError(f"unknown ArUco dictionary {name!r} in table.marker_dictionary")
        dictionary = cv2.aruco.getPredefinedDictionary(code)
        cells = dictionary.markerSize + 2  # bits plus the black border
        size = table.marker_size_mm
        cell_mm = size / cells
        paper_cells = cells + 2 * MARKER_QUIET_CELLS
        for entry in table.markers:
            marker_id, x, y = int(entry[0]), float(entry[1]), float(entry[2])
            bits = cv2.aruco.generateImageMarker(dictionary, marker_id, cells)  # one pixel per cell
            paper = np.full((paper_cells, paper_cells), 255, np.uint8)
            q = MARKER_QUIET_CELLS
            paper[q : q + cells, q : q + cells] = bits
            # the paper square in canvas px, drawn by supersampling its cells
            half = paper_cells * cell_mm / 2.0
            tl = cv.to_px(np.array([x - half, y - half]))
            side = paper_cells * cell_mm * cv.scale
            roi = _Roi((tl[0], tl[1], tl[0] + side, tl[1] + side), 1.0, cv.width, cv.height)
            if roi.empty:
                continue
            k = _MARKER_SUPERSAMPLE
            big = np.zeros((roi.shape[0] * k, roi.shape[1] * k), np.uint8)  # 255 where paper is white
            paper_mask = np.zeros_like(big)
            ox, oy = (tl[0] - roi.x0) * k, (tl[1] - roi.y0) * k
            step = cell_mm * cv.scale * k
            for r in range(paper_cells):
                for c in range(paper_cells):
                    quad = np.array(
                        [
                            [ox + c * step, oy + r * step],
                            [ox + (c + 1) * step, oy + r * step],
                            [ox + (c + 1) * step, oy + (r + 1) * step],
                            [ox + c * step, oy + (r + 1) * step],
                        ]
                    )
                    pts = np.round(quad).astype(np.int32)
                    cv2.fillConvexPoly(paper_mask, pts, 255)
                    if paper[r, c]:
                        cv2.fillConvexPoly(big, pts, 255)
            small = cv2.resize(big, (roi.shape[1], roi.shape[0]), interpolation=cv2.INTER_AREA)
            cover = cv2.resize(paper_mask, (roi.shape[1], roi.shape[0]), interpolation=cv2.INTER_AREA)
            alpha = cover.astype(np.float32) / 255.0
            # printed paper: off-white and near-black ink, not the pure extremes
            ink = 28.0 + (232.0 - 28.0) * (small.astype(np.float32) / 255.0)
            colour = cv2.merge([ink, ink, ink]).astype(np.uint8)
            _blend(canvas, roi, colour, alpha)

    # -- the board plate (cached per pose) ---------------------------------------------------------

    def _board(self, world: WorldState) -> np.ndarray:
        st = self.style
        board_colour = st.board_colour or world.board_colour
        line_colour = st.line_colour or world.line_colour
        key = (
            world.board_center_mm,
            world.board_angle_deg,
            world.pitch_mm,
            world.line_width_mm,
            world.plate_margin_mm,
            tuple(board_colour),
            tuple(line_colour),
        )
        if key != self._board_key or self._board_layer is None:
            self._board_layer = _readonly(self._draw_board(world, board_colour, line_colour))
            self._board_key = key
        return self._board_layer

    def _board_poly(self, world: WorldState, corners_board: np.ndarray) -> np.ndarray:
        a = math.radians(world.board_angle_deg)
        ca, sa = math.cos(a), math.sin(a)
        cx, cy = world.board_center_mm
        dx, dy = corners_board[:, 0], corners_board[:, 1]
        xy = np.column_stack([cx + dx * ca + dy * sa, cy - dx * sa + dy * ca])
        return self.canvas.to_px(xy)

    def _draw_board(
        self, world: WorldState, board_colour: tuple[int, int, int], line_colour: tuple[int, int, int]
    ) -> np.ndarray:
        st, cv = self.style, self.canvas
        layer = self._base.copy()
        p, w = world.pitch_mm, world.line_width_mm
        half = 1.5 * p + world.plate_margin_mm
        square = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
        plate = self._board_poly(world, square)
        # the plate edge's shadow on the table
        sx, sy = st.shadow_offset(BOARD_EDGE_MM)
        shadow = self._board_poly(world, square) + np.array([sx, sy]) * cv.scale
        _darken(layer, [shadow], st.shadow_softness_mm * cv.scale * 0.5, st.shadow_strength * 0.8)
        cv2.fillConvexPoly(layer, _fixed(plate), tuple(int(c) for c in board_colour), cv2.LINE_AA, _SHIFT)
        if st.board_texture > 0:
            roi = _Roi.around([plate], 2.0, cv.width, cv.height)
            if not roi.empty:
                rng = np.random.default_rng(st.texture_seed + 1)
                hh, ww = roi.shape
                coarse = rng.normal(0.0, st.board_texture, (max(2, hh // 24), max(2, ww // 24)))
                field = cv2.resize(coarse.astype(np.float32), (ww, hh), interpolation=cv2.INTER_CUBIC)
                mask = np.zeros(roi.shape, np.float32)
                cv2.fillConvexPoly(mask, _fixed(roi.local(plate)), 1.0, cv2.LINE_AA, _SHIFT)
                view = roi.view(layer)
                tex = field * mask
                view[:] = np.clip(view.astype(np.float32) + tex[..., None], 0, 255).astype(np.uint8)
        lines = []
        extent = 1.5 * p + w / 2.0
        for k in (-1.5, -0.5, 0.5, 1.5):
            off = k * p
            lines.append(
                np.array(
                    [
                        [off - w / 2, -extent],
                        [off + w / 2, -extent],
                        [off + w / 2, extent],
                        [off - w / 2, extent],
                    ]
                )
            )
            lines.append(
                np.array(
                    [
                        [-extent, off - w / 2],
                        [extent, off - w / 2],
                        [extent, off + w / 2],
                        [-extent, off + w / 2],
                    ]
                )
            )
        colour = tuple(int(c) for c in line_colour)
        for quad in lines:
            cv2.fillConvexPoly(layer, _fixed(self._board_poly(world, quad)), colour, cv2.LINE_AA, _SHIFT)
        return layer

    # -- pieces ------------------------------------------------------------------------------------

    def _piece_sprite(
        self, colour: tuple[int, int, int], radius_px: float, frac: tuple[int, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """A piece's top face: (BGR uint8, alpha float32), centred at (r+2 + frac/_SUBPIXEL) in x and y."""
        radius_px = round(radius_px * _RADIUS_STEPS) / _RADIUS_STEPS
        key = (colour, radius_px, frac)
        hit = self._sprites.get(key)
        if hit is not None:
            return hit
        if len(self._sprites) >= _SPRITE_CACHE_SIZE:  # a held piece moving in z makes new radii
            self._sprites.clear()
        st = self.style
        size = math.ceil(radius_px) + 2
        n = 2 * size + 1
        cx = size + frac[0] / _SUBPIXEL
        cy = size + frac[1] / _SUBPIXEL
        yy, xx = np.mgrid[0:n, 0:n].astype(np.float32)
        dx, dy = xx - cx, yy - cy
        d = np.sqrt(dx * dx + dy * dy)
        alpha = np.clip(radius_px - d + 0.5, 0.0, 1.0).astype(np.float32)
        rho = np.minimum(d / radius_px, 1.0)
        # a gently domed top with a rounded bevel near the rim: the normal tilts outwards
        bevel = 0.16
        tilt = _DOME * rho + np.where(rho > 1 - bevel, (rho - (1 - bevel)) / bevel * 1.2, 0.0)
        safe = np.maximum(d, 1e-6)
        nx, ny = tilt * dx / safe, tilt * dy / safe
        nz = np.ones_like(nx)
        norm = np.sqrt(nx * nx + ny * ny + nz * nz)
        nx, ny, nz = nx / norm, ny / norm, nz / norm
        lx, ly = st.light_direction()
        el = math.radians(st.light_elevation_deg)
        light = np.array([lx * math.cos(el), ly * math.cos(el), math.sin(el)])
        lambert = np.maximum(0.0, nx * light[0] + ny * light[1] + nz * light[2]) / math.sin(el)
        shade = 0.5 + 0.5 * lambert
        # the rim: a thin darker edge where the bevel turns away
        shade *= np.where(rho > 0.93, 0.78, 1.0)
        base = np.array(colour, np.float32)
        col = base[None, None, :] * shade[..., None]
        if st.glare > 0:
            half = light + np.array([0.0, 0.0, 1.0])
            half /= np.linalg.norm(half)
            spec = np.maximum(0.0, nx * half[0] + ny * half[1] + nz * half[2]) ** _SHININESS
            spec *= st.glare * 1.1
            col = col + spec[..., None] * (255.0 - col) + spec[..., None] * 40.0
        sprite = (_readonly(np.clip(col, 0, 255).astype(np.uint8)), _readonly(alpha))
        self._sprites[key] = sprite
        return sprite

    def _draw_piece_top(
        self, canvas: np.ndarray, centre_px: np.ndarray, radius_px: float, colour: tuple[int, int, int]
    ) -> None:
        fx = math.floor(centre_px[0] * _SUBPIXEL + 0.5)
        fy = math.floor(centre_px[1] * _SUBPIXEL + 0.5)
        ix, sub_x = divmod(fx, _SUBPIXEL)
        iy, sub_y = divmod(fy, _SUBPIXEL)
        colour_img, alpha = self._piece_sprite(colour, radius_px, (sub_x, sub_y))
        size = (colour_img.shape[0] - 1) // 2
        x0, y0 = ix - size, iy - size
        h, w = alpha.shape
        cx0, cy0 = max(0, x0), max(0, y0)
        cx1, cy1 = min(canvas.shape[1], x0 + w), min(canvas.shape[0], y0 + h)
        if cx1 <= cx0 or cy1 <= cy0:
            return
        sl = (slice(cy0 - y0, cy1 - y0), slice(cx0 - x0, cx1 - x0))
        roi = _Roi((cx0, cy0, cx1 - 1, cy1 - 1), 0.0, canvas.shape[1], canvas.shape[0])
        _blend(canvas, roi, np.ascontiguousarray(colour_img[sl]), np.ascontiguousarray(alpha[sl]))

    def _piece_colour(self, piece: PieceState) -> tuple[int, int, int]:
        return self.style.black_piece_colour if piece.colour == "black" else self.style.white_piece_colour

    def _draw_piece(
        self,
        canvas: np.ndarray,
        xy: tuple[float, float],
        bottom_mm: float,
        diameter_mm: float,
        colour: tuple[int, int, int],
    ) -> None:
        """A piece standing at ``xy`` with its bottom ``bottom_mm`` above the table: side wall, then top."""
        cam, cv = self.camera, self.canvas
        r_mm = diameter_mm / 2.0
        top = bottom_mm + PIECE_THICKNESS_MM
        side = tuple(int(c * 0.55) for c in colour)
        hc = cam.height_mm
        for h in (bottom_mm, (bottom_mm + top) / 2.0):
            c = cv.to_px(cam.drop_to_table(np.array(xy), h))
            rad = r_mm * hc / (hc - h) * cv.scale
            cv2.circle(
                canvas,
                tuple(int(v) for v in _fixed(c)),
                round(rad * _ONE),
                side,
                -1,
                cv2.LINE_AA,
                _SHIFT,
            )
        c = cv.to_px(cam.drop_to_table(np.array(xy), top))
        self._draw_piece_top(canvas, c, r_mm * hc / (hc - top) * cv.scale, colour)

    def _piece_shadow(
        self, xy: tuple[float, float], bottom_mm: float, diameter_mm: float
    ) -> tuple[np.ndarray, float]:
        st, cv = self.style, self.canvas
        mid = bottom_mm + PIECE_THICKNESS_MM / 2.0
        ox, oy = st.shadow_offset(mid)
        reach = math.hypot(ox, oy)
        centre = cv.to_px(np.array([xy[0] + ox, xy[1] + oy]))
        poly = _disc_polygon(centre, (diameter_mm / 2.0 + 0.5) * cv.scale)
        sigma = (st.shadow_softness_mm * 0.5 + 0.08 * reach) * cv.scale
        return poly, sigma

    # -- gripper and hand ----------------------------------------------------------------------------

    def _dropped(self, xy: np.ndarray, heights: np.ndarray | float) -> np.ndarray:
        return self.canvas.to_px(self.camera.drop_to_table(xy, heights))

    def _gripper_shapes(
        self, world: WorldState
    ) -> tuple[list[tuple[np.ndarray, tuple[int, int, int]]], list[tuple[np.ndarray, float]]]:
        """Polygons (canvas px, colour) of the gripper head from bottom to top, and their shadows."""
        g = world.gripper
        st, cv = self.style, self.canvas
        bottom = max(0.0, g.z_mm) + PIECE_THICKNESS_MM
        tube_top = bottom + GRIPPER_TUBE_LENGTH_MM
        if tube_top + GRIPPER_CARRIAGE_THICKNESS_MM > _CAMERA_CLEARANCE * self.camera.height_mm:
            raise RenderError(f"gripper z_mm={g.z_mm} reaches the camera")
        centre = np.array([g.x_mm, g.y_mm])
        ring = _disc_polygon(np.zeros(2), GRIPPER_TUBE_RADIUS_MM, 32) + centre
        tube = np.vstack([self._dropped(ring, bottom), self._dropped(ring, tube_top)])
        tube_hull = cv2.convexHull(tube.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        cw, cd = GRIPPER_CARRIAGE_MM
        cy = g.y_mm + GRIPPER_CARRIAGE_OFFSET_MM
        block = np.array(
            [
                [g.x_mm - cw / 2, cy - cd / 2],
                [g.x_mm + cw / 2, cy - cd / 2],
                [g.x_mm + cw / 2, cy + cd / 2],
                [g.x_mm - cw / 2, cy + cd / 2],
            ]
        )
        # the bracket from the carriage to the tube
        bracket = np.array([[g.x_mm - 7, cy], [g.x_mm + 7, cy], [g.x_mm + 7, g.y_mm], [g.x_mm - 7, g.y_mm]])
        carriage_bottom = tube_top
        carriage_top = tube_top + GRIPPER_CARRIAGE_THICKNESS_MM
        box = np.vstack([self._dropped(block, carriage_bottom), self._dropped(block, carriage_top)])
        box_hull = cv2.convexHull(box.astype(np.float32)).reshape(-1, 2).astype(np.float64)
        metal = (150, 150, 155)  # the tube's top face
        shapes = [
            (tube_hull, (95, 95, 100)),
            (self._dropped(centre + (ring - centre) * 0.85, tube_top), metal),
            (self._dropped(bracket, tube_top + 2.0), (120, 120, 125)),
            (box_hull, (52, 54, 60)),
            (self._dropped(block, carriage_top), (104, 106, 112)),
        ]
        shadows = []
        for poly_mm, h in ((ring, (bottom + tube_top) / 2), (block, carriage_top)):
            ox, oy = st.shadow_offset(h)
            sigma = (st.shadow_softness_mm + 0.04 * h) * cv.scale
            shadows.append((cv.to_px(poly_mm + np.array([ox, oy])), sigma))
        return shapes, shadows

    def _hand_geometry(
        self, world: WorldState
    ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray | None]:
        """The hand and forearm as table-mm polygons with a height per vertex: (polys, heights, sleeve)."""
        hand = world.hand
        a = math.radians(hand.angle_deg)
        along = np.array([math.sin(a), math.cos(a)])  # from the fingertips towards the elbow
        across = np.array([math.cos(a), -math.sin(a)])
        target = np.array([hand.x_mm, hand.y_mm])

        k = self.style.hand_scale
        side = -1.0 if self.style.left_hand else 1.0

        def pt(u: float, w: float) -> np.ndarray:
            return target + k * u * along + k * side * w * across

        polys: list[np.ndarray] = []
        # palm: an ellipse behind the hand point
        t = np.linspace(0, 2 * math.pi, 40, endpoint=False)
        palm = np.array([pt(45 + 42 * math.cos(x), 40 * math.sin(x)) for x in t])
        polys.append(palm)
        # four fingers together, reaching a little past the hand point
        for w, reach, width in ((-24, -12, 8.5), (-8, -22, 9.0), (8, -20, 9.0), (23, -8, 8.0)):
            polys.append(np.array(_capsule(pt(40, w), pt(reach, w * 1.05), width, width * 0.85)))
        # the thumb, on the side of the across axis
        polys.append(np.array(_capsule(pt(70, 36), pt(28, 52), 12.0, 9.5)))
        # the forearm, from the wrist far out of view
        forearm = np.vstack([_capsule(pt(85, 0), pt(620, 0), 34.0, 44.0)])
        polys.append(forearm)
        sleeve = np.array([pt(190, -52), pt(640, -60), pt(640, 60), pt(190, 52)])

        def height(points: np.ndarray) -> np.ndarray:
            u = (points - target) @ along / k
            return np.interp(
                u,
                [-30.0, 45.0, 110.0, 620.0],
                [HAND_FINGERTIP_HEIGHT_MM, HAND_PALM_HEIGHT_MM, HAND_WRIST_HEIGHT_MM, HAND_ELBOW_HEIGHT_MM],
            )

        heights = [height(p) for p in polys]
        return polys, heights, (sleeve if self.style.sleeve_colour is not None else None)

    def _draw_hand(self, canvas: np.ndarray, world: WorldState) -> None:
        st, cv = self.style, self.canvas
        polys_mm, heights, sleeve_mm = self._hand_geometry(world)
        polys = [self._dropped(p, h) for p, h in zip(polys_mm, heights, strict=True)]
        roi = _Roi.around(polys, 2.0, cv.width, cv.height)
        if roi.empty:
            return
        mask = np.zeros(roi.shape, np.uint8)
        for p in polys:  # one by one: fillPoly of several polygons fills their overlaps even-odd
            cv2.fillPoly(mask, [_fixed(roi.local(p))], 255, cv2.LINE_AA, _SHIFT)
        # rounded shading from a blurred copy of the silhouette (computed at a quarter of the size)
        hh, ww = roi.shape
        small = cv2.resize(mask, (max(1, ww // 4), max(1, hh // 4)), interpolation=cv2.INTER_AREA)
        sigma = 9.0 * cv.scale / 4.0
        small = cv2.GaussianBlur(small.astype(np.float32) / 255.0, (0, 0), sigma)
        gy, gx = np.gradient(small)
        lx, ly = st.light_direction()
        lit = small * 0.45 + (gx * lx + gy * ly) * sigma * 1.6
        lit = cv2.resize(lit, (ww, hh), interpolation=cv2.INTER_LINEAR)
        shade = np.clip(0.62 + lit, 0.35, 1.25).astype(np.float32)
        skin = cv2.merge([cv2.convertScaleAbs(shade, alpha=float(c)) for c in st.skin_colour])
        if sleeve_mm is not None and st.sleeve_colour is not None:
            sleeve_h = np.interp(
                np.arange(len(sleeve_mm)), [0, 3], [HAND_WRIST_HEIGHT_MM, HAND_ELBOW_HEIGHT_MM]
            )
            sleeve = roi.local(self._dropped(sleeve_mm, sleeve_h))
            cloth = cv2.merge([cv2.convertScaleAbs(shade, alpha=float(c)) for c in st.sleeve_colour])
            smask = np.zeros(roi.shape, np.uint8)
            cv2.fillConvexPoly(smask, _fixed(sleeve), 255, cv2.LINE_AA, _SHIFT)
            sm = smask.astype(np.float32) / 255.0
            skin = cv2.blendLinear(cloth, skin, sm, 1.0 - sm)
        _blend(canvas, roi, skin, mask.astype(np.float32) / 255.0)

    def _hand_shadow(self, world: WorldState) -> tuple[list[np.ndarray], float]:
        st, cv = self.style, self.canvas
        polys_mm, heights, _ = self._hand_geometry(world)
        lx, ly = st.light_direction()
        k = 1.0 / math.tan(math.radians(st.light_elevation_deg))
        out = [
            cv.to_px(p + np.column_stack([-lx * k * h, -ly * k * h]))
            for p, h in zip(polys_mm, heights, strict=True)
        ]
        return out, (st.shadow_softness_mm + 6.0) * cv.scale

    # -- a frame -----------------------------------------------------------------------------------

    def render_canvas(self, world: WorldState) -> np.ndarray:
        """The top view with everything drawn (no camera effects). For debugging and tests.

        :raises RenderError: for a world with non-finite numbers or non-positive sizes.
        """
        check_world(world)
        st = self.style
        board = self._board(world)
        d = world.piece_diameter_mm
        held_id = world.gripper.holding
        lying: list[tuple[PieceState, float]] = []
        held: PieceState | None = None
        # lower layers first (PieceState.layer); a piece overlapping one drawn before lies on top of it
        for piece in sorted(world.pieces, key=lambda p: p.layer):
            if piece.where == "gripper" or (held_id is not None and piece.piece_id == held_id):
                held = piece
                continue
            level = 0.0
            for other, other_level in lying:
                if math.hypot(other.x_mm - piece.x_mm, other.y_mm - piece.y_mm) < d * 0.8:
                    level = max(level, other_level + PIECE_THICKNESS_MM)
            lying.append((piece, level))
        lying.sort(key=lambda item: item[1])
        # the lying pieces change far less often than the hand or gripper move: keep them in a layer
        key = (self._board_key, d, tuple((p.x_mm, p.y_mm, p.colour, lvl) for p, lvl in lying))
        if key != self._pieces_key or self._pieces_layer is None:
            layer = board.copy()
            for p, lvl in lying:
                poly, sigma = self._piece_shadow((p.x_mm, p.y_mm), lvl, d)
                _darken(layer, [poly], sigma, st.shadow_strength)
            for p, lvl in lying:
                self._draw_piece(layer, (p.x_mm, p.y_mm), lvl, d, self._piece_colour(p))
            self._pieces_key, self._pieces_layer = key, _readonly(layer)
        canvas = self._pieces_layer.copy()
        # things above the table: shadows first (they fall on pieces), then the things, lowest first
        g = world.gripper
        gripper_shapes, gripper_shadows = self._gripper_shapes(world)
        for poly, sigma in gripper_shadows:
            _darken(canvas, [poly], sigma, st.shadow_strength * 0.8)
        held_bottom = max(0.0, g.z_mm)
        if held is not None:
            poly, sigma = self._piece_shadow((g.x_mm, g.y_mm), held_bottom, d)
            _darken(canvas, [poly], sigma, st.shadow_strength)
        if world.hand.present:
            hand_polys, sigma = self._hand_shadow(world)
            _darken(canvas, hand_polys, sigma, st.shadow_strength)
        # painter's order by height: the held piece (below the palm), the hand, the gripper's head (its
        # carriage rides above the palm)
        if held is not None:
            self._draw_piece(canvas, (g.x_mm, g.y_mm), held_bottom, d, self._piece_colour(held))
        if world.hand.present:
            self._draw_hand(canvas, world)
        for poly, colour in gripper_shapes:
            cv2.fillPoly(canvas, [_fixed(poly)], colour, cv2.LINE_AA, _SHIFT)
        return canvas

    def render(self, world: WorldState, *, seed: int, reuse: bool = True) -> np.ndarray:
        """The camera image of ``world`` (see :func:`render`). When the world looks the same as in the
        previous call (only its clock or revision differ) the noiseless image is reused (``reuse``)."""
        st = self.style
        look = msgspec.structs.replace(world, sim_time_s=0.0, revision=0)
        if reuse and self._last_look is not None and look == self._last_look:
            img = self._last_image
        else:
            canvas = self.render_canvas(world)
            img = cv2.remap(
                canvas, self._maps[0], self._maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            )
            if st.blur_sigma > 0.05:
                img = cv2.GaussianBlur(img, (0, 0), st.blur_sigma)
            img = cv2.multiply(img, self._gain, scale=1.0 / 128.0)
            self._last_look, self._last_image = look, _readonly(img)
        rng = np.random.default_rng(seed & 0xFFFFFFFFFFFFFFFF)
        oy, ox = (int(v) for v in rng.integers(0, _NOISE_MARGIN, 2))
        flip = bool(rng.integers(0, 2))
        if st.flicker > 0:
            # the light or the auto-exposure wavers from frame to frame
            img = cv2.convertScaleAbs(img, alpha=max(0.0, 1.0 + st.flicker * float(rng.normal())))
        if self._noise is None:
            return img.copy()  # the caller may draw on it; the cached image must stay as it is
        pos, neg = self._noise
        h, w = img.shape[:2]
        p = pos[oy : oy + h, ox : ox + w]
        n = neg[oy : oy + h, ox : ox + w]
        if flip:
            p, n = n, p
        return cv2.subtract(cv2.add(img, p), n)


_UNIT_NOISE: dict[tuple[int, int], np.ndarray] = {}


def _noise_bank(sigma: float, width: int, height: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Gaussian sensor noise for a window of (height, width) at any offset below ``_NOISE_MARGIN``, as
    positive and negative parts (uint8) so that applying it is two saturating adds. Every sigma scales
    the same unit noise (kept once per image size); each renderer keeps its own scaled copy."""
    if sigma <= 0:
        return None
    unit = _UNIT_NOISE.get((width, height))
    if unit is None:
        rng = np.random.default_rng(_NOISE_BANK_SEED)
        shape = (height + _NOISE_MARGIN, width + _NOISE_MARGIN, 3)
        unit = rng.standard_normal(shape, dtype=np.float32)
        _UNIT_NOISE[(width, height)] = _readonly(unit)
    noise = np.clip(np.round(unit * sigma), -255, 255).astype(np.int16)
    return np.clip(noise, 0, 255).astype(np.uint8), np.clip(-noise, 0, 255).astype(np.uint8)
