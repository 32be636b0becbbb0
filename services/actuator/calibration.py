"""The camera-to-table calibration: a homography from image pixels to table millimetres (pure).

From reference points (pixel, millimetres) given by a person, or found automatically: the table carries
ArUco markers at known places (``table.markers``: id and centre in mm, ``table.marker_size_mm`` the
side of the black square, ``table.marker_dictionary``), printed square to the table's axes with their
top edge towards -y. Each detected marker gives its four corners, whose table positions follow from its
centre and size, so four markers give sixteen points; the homography is the least-squares fit over all
of them (OpenCV's ``findHomography`` with method 0, refined by Levenberg-Marquardt), and the reprojection
error is the distance, in millimetres, between where each reference point is and where the fit puts it.

For a flat table and a pinhole camera the mapping is exactly a homography, whatever the camera's tilt
(docs/geometry.md); lens distortion is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import cv2
import numpy as np

if TYPE_CHECKING:
    from services.common.config import TableConfig

#: a calibration needs markers spread over the table: at least this many of them must be seen.
MIN_MARKERS: Final = 3
MIN_POINTS: Final = 4

#: corners of a marker in its own frame, in OpenCV's order (top-left, top-right, bottom-right,
#: bottom-left), as multiples of half its side.
_CORNER_SIGNS: Final = ((-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0))


class CalibrationError(ValueError):
    """No calibration can be computed: too few or degenerate points, markers not found."""


@dataclass(frozen=True)
class Calibration:
    """The result: ``homography`` image px -> table mm (row-major 9 floats, h[8] == 1), the RMS and the
    largest reprojection error over the reference points in mm, the number of points, and which marker
    ids were used (empty for hand-given points)."""

    homography: tuple[float, ...]
    error_mm: float
    max_error_mm: float
    points: int
    markers: tuple[int, ...] = ()
    #: marker ids of the table that were not found in the image.
    missing: tuple[int, ...] = ()
    residuals_mm: tuple[float, ...] = field(default=(), repr=False)

    def matrix(self) -> np.ndarray:
        return np.asarray(self.homography, dtype=float).reshape(3, 3)

    def to_table(self, u: float, v: float) -> tuple[float, float]:
        x, y, w = self.matrix() @ np.array([u, v, 1.0])
        return float(x / w), float(y / w)


def calibrate_from_points(
    pixels: Sequence[tuple[float, float]],
    table_mm: Sequence[tuple[float, float]],
    markers: tuple[int, ...] = (),
) -> Calibration:
    """The least-squares homography pixels -> mm and its reprojection error.

    :raises CalibrationError: with fewer than 4 pairs or points that do not determine a homography.
    """
    if len(pixels) != len(table_mm):
        raise CalibrationError(f"{len(pixels)} pixel points but {len(table_mm)} table points")
    if len(pixels) < MIN_POINTS:
        raise CalibrationError(
            f"a homography needs at least {MIN_POINTS} reference points, got {len(pixels)}"
        )
    src = np.asarray(pixels, dtype=np.float64).reshape(-1, 2)
    dst = np.asarray(table_mm, dtype=np.float64).reshape(-1, 2)
    if not (np.all(np.isfinite(src)) and np.all(np.isfinite(dst))):
        raise CalibrationError("reference points must be finite numbers")
    if _degenerate(src) or _degenerate(dst):
        raise CalibrationError(
            "the reference points are degenerate: at least 4 of them, no 3 on one line, needed"
        )
    h, _ = cv2.findHomography(src, dst, 0)
    if h is None or not np.all(np.isfinite(h)) or abs(h[2, 2]) < 1e-12:
        raise CalibrationError("the reference points do not determine a homography")
    h = h / h[2, 2]
    projected = cv2.perspectiveTransform(src.reshape(-1, 1, 2), h).reshape(-1, 2)
    residuals = np.linalg.norm(projected - dst, axis=1)
    return Calibration(
        homography=tuple(float(v) for v in h.ravel()),
        error_mm=float(np.sqrt(np.mean(residuals**2))),
        max_error_mm=float(residuals.max()),
        points=len(src),
        markers=markers,
        residuals_mm=tuple(float(r) for r in residuals),
    )


def _degenerate(points: np.ndarray) -> bool:
    """Whether the points fail to span the plane (all on one line, or fewer than 4 distinct)."""
    distinct = np.unique(np.round(points, 6), axis=0)
    if len(distinct) < MIN_POINTS:
        return True
    centred = distinct - distinct.mean(axis=0)
    s = np.linalg.svd(centred, compute_uv=False)
    return bool(s[-1] < 1e-6 * max(s[0], 1e-12))


def marker_dictionary(name: str) -> Any:
    """OpenCV's predefined ArUco dictionary ``name`` (e.g. "DICT_4X4_50").
    :raises CalibrationError: for an unknown name."""
    code = getattr(cv2.aruco, name, None)
    if not isinstance(code, int) or not name.startswith("DICT_"):
        raise CalibrationError(f"unknown ArUco dictionary {name!r} (e.g. DICT_4X4_50)")
    return cv2.aruco.getPredefinedDictionary(code)


def detect_markers(
    image: np.ndarray, dictionary_name: str, *, refine_edges: bool = True
) -> dict[int, np.ndarray]:
    """ArUco markers in ``image`` (BGR or grey): id -> 4x2 corner pixels (sub-pixel refined, then by
    :func:`refine_quad` unless ``refine_edges`` is false), in OpenCV's order. A marker id seen twice is
    dropped (ambiguous). :raises CalibrationError: on a bad image."""
    if image is None or image.size == 0:
        raise CalibrationError("empty image")
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image.ndim == 3 else image
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    params.cornerRefinementWinSize = 3
    params.cornerRefinementMaxIterations = 50
    params.cornerRefinementMinAccuracy = 0.01
    detector = cv2.aruco.ArucoDetector(marker_dictionary(dictionary_name), params)
    corners, ids, _ = detector.detectMarkers(grey)
    found: dict[int, np.ndarray] = {}
    seen: set[int] = set()
    for quad, marker_id in zip(corners, [] if ids is None else ids.ravel(), strict=False):
        mid = int(marker_id)
        if mid in seen:
            found.pop(mid, None)
            continue
        seen.add(mid)
        corners = np.asarray(quad, dtype=np.float64).reshape(4, 2)
        found[mid] = refine_quad(grey, corners) if refine_edges else corners
    return found


#: edge refinement: profiles across each marker side, from this fraction of the side to 1 minus it
#: (away from the corners), this many of them, this far (px) either side of the detected edge.
_EDGE_MARGIN: Final = 0.15
_EDGE_SAMPLES: Final = 15
_EDGE_REACH_PX: Final = 2.5
_EDGE_STEP_PX: Final = 0.125
#: a profile with less contrast than this (grey levels) is not an edge (glare, occlusion).
_EDGE_MIN_CONTRAST: Final = 40.0


def refine_quad(grey: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Sub-pixel corners of a dark square on a light surround: for each side, where the grey level
    crosses half-way between dark and light along profiles across it, a straight line fitted to those
    points; corners are where adjacent lines meet. Unbiased under symmetric blur, unlike corner
    detectors on an L-shaped corner. Returns ``quad`` unchanged if a side cannot be measured."""
    img = grey.astype(np.float32)
    lines: list[tuple[np.ndarray, np.ndarray]] = []
    offsets = np.arange(-_EDGE_REACH_PX, _EDGE_REACH_PX + 1e-9, _EDGE_STEP_PX)
    for i in range(4):
        p0, p1 = quad[i], quad[(i + 1) % 4]
        d = p1 - p0
        length = float(np.linalg.norm(d))
        if length < 4:
            return quad
        t = d / length
        n = np.array([-t[1], t[0]])
        points = []
        for s in np.linspace(_EDGE_MARGIN, 1 - _EDGE_MARGIN, _EDGE_SAMPLES):
            base = p0 + s * d
            xy = (base[None, :] + offsets[:, None] * n[None, :]).astype(np.float32)
            prof = cv2.remap(
                img, xy[:, 0:1], xy[:, 1:2], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
            ).ravel()
            lo, hi = float(prof.min()), float(prof.max())
            if hi - lo < _EDGE_MIN_CONTRAST:
                continue
            mid = (lo + hi) / 2.0
            sign = np.sign(prof - mid)
            crossings = np.nonzero(sign[:-1] * sign[1:] <= 0)[0]
            if len(crossings) == 0:
                continue
            k = crossings[np.argmin(np.abs(offsets[crossings]))]  # the crossing nearest the detected edge
            a, b = prof[k] - mid, prof[k + 1] - mid
            f = 0.0 if a == b else a / (a - b)
            points.append(base + (offsets[k] + f * _EDGE_STEP_PX) * n)
        if len(points) < 5:
            return quad
        pts = np.asarray(points)
        centre = pts.mean(axis=0)
        _, _, vt = np.linalg.svd(pts - centre)
        lines.append((centre, vt[0]))
    out = np.empty_like(quad)
    for i in range(4):
        (c1, d1), (c2, d2) = lines[(i - 1) % 4], lines[i]
        m = np.column_stack([d1, -d2])
        if abs(np.linalg.det(m)) < 1e-9:
            return quad
        s1, _ = np.linalg.solve(m, c2 - c1)
        out[i] = c1 + s1 * d1
    if np.max(np.linalg.norm(out - quad, axis=1)) > 2 * _EDGE_REACH_PX:
        return quad  # the lines went astray (a side partly hidden): keep the detector's corners
    return out


def marker_corners_mm(x_mm: float, y_mm: float, size_mm: float) -> list[tuple[float, float]]:
    """A marker's four corners on the table, in OpenCV's corner order."""
    half = size_mm / 2.0
    return [(x_mm + sx * half, y_mm + sy * half) for sx, sy in _CORNER_SIGNS]


def calibrate_from_image(
    image: np.ndarray, table_cfg: TableConfig, *, refine_edges: bool = True
) -> Calibration:
    """The calibration from the table's ArUco markers seen in ``image``.

    ``table_cfg`` is the ``[table]`` section (markers, marker_size_mm, marker_dictionary).
    :raises CalibrationError: naming the markers missing when fewer than 3 of the table's are seen.
    """
    wanted = {int(m[0]): (float(m[1]), float(m[2])) for m in table_cfg.markers}
    if len(wanted) < MIN_MARKERS:
        raise CalibrationError(
            f"table.markers lists {len(wanted)} markers; at least {MIN_MARKERS} are needed"
        )
    found = detect_markers(image, table_cfg.marker_dictionary, refine_edges=refine_edges)
    used = sorted(set(found) & set(wanted))
    missing = tuple(sorted(set(wanted) - set(found)))
    if len(used) < MIN_MARKERS:
        raise CalibrationError(
            f"found {len(used)} of the table's markers ({', '.join(map(str, used)) or 'none'}); at least "
            f"{MIN_MARKERS} needed. Missing: {', '.join(map(str, missing))}. Check that the camera sees the "
            "table's corners, the lighting, and table.marker_dictionary"
        )
    pixels: list[tuple[float, float]] = []
    table_mm: list[tuple[float, float]] = []
    for mid in used:
        pixels += [(float(u), float(v)) for u, v in found[mid]]
        table_mm += marker_corners_mm(*wanted[mid], table_cfg.marker_size_mm)
    cal = calibrate_from_points(pixels, table_mm, markers=tuple(used))
    return Calibration(**{**cal.__dict__, "missing": missing})


def frame_to_image(frame: Any) -> np.ndarray:
    """A :class:`messages.CameraFrame` as a BGR image. :raises CalibrationError: on a bad frame."""
    if frame.encoding == "bgr8":
        data = np.frombuffer(frame.data, dtype=np.uint8)
        if data.size != frame.width * frame.height * 3:
            raise CalibrationError(f"frame of {data.size} bytes is not {frame.width}x{frame.height} bgr8")
        return data.reshape(frame.height, frame.width, 3)
    if frame.encoding == "jpeg":
        image = cv2.imdecode(np.frombuffer(frame.data, dtype=np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise CalibrationError("cannot decode the JPEG frame")
        return image
    raise CalibrationError(f"unknown frame encoding {frame.encoding!r}")
