"""A pinhole camera above the table: intrinsics, pose, and the exact table-to-image homography.

Frames (see docs/geometry.md): the table frame is x right, y down (as the camera sees the table), z up,
millimetres. Internally the camera works in ``P = (x, y, -z)`` so that a camera looking straight down
has OpenCV's camera axes (X right, Y down, Z forward) aligned with the table's x, y and -z, and every
rotation is a proper one. Image pixels follow OpenCV: pixel centres at integer coordinates.

For the flat table (z = 0) the mapping table mm -> image px is exactly the homography
``K [r1 r2 t]``; :meth:`CameraModel.table_to_image_homography` returns it, so tests and calibration
can check what they recover. There is no lens distortion in this model (a real lens has some; the
simulator's lens is ideal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final

import numpy as np

#: the camera looks at this point of the table by default, as a fraction of the table's size.
_CENTRE_FRACTION: Final = 0.5


class CameraError(ValueError):
    """A camera model that cannot see the table (behind it, or a degenerate pose or intrinsics)."""


def _rot_x(deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_y(deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _frozen(matrix: np.ndarray) -> np.ndarray:
    """A read-only float64 copy of ``matrix``."""
    out = np.array(matrix, dtype=np.float64)
    out.setflags(write=False)
    return out


def _rot_z(deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True, eq=False)
class CameraModel:
    """An ideal pinhole camera.

    ``K`` is the 3x3 intrinsic matrix; ``R`` (3x3) rotates internal world coordinates ``P = (x, y, -z)``
    into camera coordinates; ``centre`` is the camera's position in the table frame (x, y, z up, mm).
    Build one with :meth:`looking_at` or :meth:`from_config` rather than by hand.
    """

    K: np.ndarray
    R: np.ndarray
    centre: tuple[float, float, float]
    width: int = 640
    height: int = 480
    #: a hashable identity for caches (the constructor arguments that made this camera).
    key: tuple[float, ...] = field(default=())

    def __post_init__(self) -> None:
        # The camera is a cache key (its ``key`` is computed once, renderers are kept per camera): its
        # matrices are private read-only copies, so that changing the arrays it was made from cannot
        # make a cached renderer disagree with its key.
        object.__setattr__(self, "K", _frozen(self.K))
        object.__setattr__(self, "R", _frozen(self.R))
        if self.centre[2] <= 0:
            raise CameraError(f"the camera must be above the table (z > 0), got z={self.centre[2]}")
        if abs(float(np.linalg.det(self.R)) - 1.0) > 1e-6:
            raise CameraError("R must be a proper rotation matrix")
        if self.width <= 0 or self.height <= 0:
            raise CameraError(f"bad image size {self.width}x{self.height}")
        if not self.key:
            object.__setattr__(
                self, "key", tuple(np.concatenate([self.K.ravel(), self.R.ravel(), self.centre]).tolist())
            )

    def __hash__(self) -> int:
        return hash((self.key, self.width, self.height))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, CameraModel)
            and self.key == other.key
            and (self.width, self.height) == (other.width, other.height)
        )

    def __repr__(self) -> str:
        return (
            f"CameraModel(centre={tuple(round(c, 2) for c in self.centre)}, "
            f"f={self.K[0, 0]:.1f}, size={self.width}x{self.height})"
        )

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def looking_at(
        cls,
        target_mm: tuple[float, float],
        *,
        distance_mm: float = 650.0,
        tilt_deg: float = 7.0,
        roll_deg: float = 2.0,
        yaw_deg: float = 1.5,
        fit_mm: tuple[float, float, float, float] | None = None,
        focal_px: float | None = None,
        width: int = 640,
        height: int = 480,
        pad_px: float = 4.0,
    ) -> CameraModel:
        """A camera at ``distance_mm`` from ``target_mm`` (on the table), its optical axis through it.

        ``tilt_deg`` tips the camera about its image x axis (a positive tilt moves the camera towards
        -y, the top of the image, and it looks down-table), ``roll_deg`` about its image y axis,
        ``yaw_deg`` turns the image about the optical axis. The focal length is ``focal_px``, or the
        largest one that keeps the table rectangle ``fit_mm = (x0, y0, x1, y1)`` inside the image with
        ``pad_px`` to spare.

        :raises CameraError: when neither ``focal_px`` nor ``fit_mm`` is given, or the fit is impossible.
        """
        if distance_mm <= 0:
            raise CameraError(f"distance_mm must be positive, got {distance_mm}")
        r = _rot_z(yaw_deg) @ _rot_x(tilt_deg) @ _rot_y(roll_deg)
        axis = r.T @ np.array([0.0, 0.0, 1.0])  # the optical axis in internal world coordinates
        target = np.array([target_mm[0], target_mm[1], 0.0])
        c_int = target - distance_mm * axis
        centre = (float(c_int[0]), float(c_int[1]), float(-c_int[2]))
        if centre[2] <= 0:
            raise CameraError("the camera ends up below the table: reduce the tilt")
        cx, cy = (width - 1) / 2.0, (height - 1) / 2.0
        if focal_px is None:
            if fit_mm is None:
                raise CameraError("give focal_px or fit_mm")
            x0, y0, x1, y1 = fit_mm
            corners = np.array([[x0, y0, 0.0], [x1, y0, 0.0], [x1, y1, 0.0], [x0, y1, 0.0]])
            cam = (r @ (corners - c_int).T).T
            if np.any(cam[:, 2] <= 0):
                raise CameraError("part of the table to fit is behind the camera")
            xn = np.abs(cam[:, 0] / cam[:, 2])
            yn = np.abs(cam[:, 1] / cam[:, 2])
            focal_px = float(min(np.min((cx - pad_px) / xn), np.min((cy - pad_px) / yn)))
        if focal_px <= 0:
            raise CameraError(f"focal length must be positive, got {focal_px}")
        k = np.array([[focal_px, 0.0, cx], [0.0, focal_px, cy], [0.0, 0.0, 1.0]])
        key = (
            "looking_at",
            *target_mm,
            distance_mm,
            tilt_deg,
            roll_deg,
            yaw_deg,
            focal_px,
        )
        return cls(K=k, R=r, centre=centre, width=width, height=height, key=key)  # type: ignore[arg-type]

    @classmethod
    def from_config(cls, simcam: object, table: object) -> CameraModel:
        """The simulated camera of the configuration (``config.simcam``, ``config.table``): it looks at the
        table's centre and fits the table plus ``simcam.view_margin_mm`` into the image."""
        w, h = table.width_mm, table.height_mm  # type: ignore[attr-defined]
        m = simcam.view_margin_mm  # type: ignore[attr-defined]
        return cls.looking_at(
            (w * _CENTRE_FRACTION, h * _CENTRE_FRACTION),
            distance_mm=simcam.camera_distance_mm,  # type: ignore[attr-defined]
            tilt_deg=simcam.tilt_deg,  # type: ignore[attr-defined]
            roll_deg=simcam.roll_deg,  # type: ignore[attr-defined]
            yaw_deg=simcam.yaw_deg,  # type: ignore[attr-defined]
            fit_mm=(-m, -m, w + m, h + m),
            width=simcam.width,  # type: ignore[attr-defined]
            height=simcam.height,  # type: ignore[attr-defined]
        )

    # -- geometry -------------------------------------------------------------------------------

    @property
    def height_mm(self) -> float:
        """The camera's height above the table."""
        return self.centre[2]

    def _t(self) -> np.ndarray:
        c_int = np.array([self.centre[0], self.centre[1], -self.centre[2]])
        return -self.R @ c_int

    def table_to_image_homography(self) -> np.ndarray:
        """The exact 3x3 homography from table millimetres (z = 0) to image pixels, normalised so that
        ``H[2, 2] == 1``."""
        t = self._t()
        h = self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], t])
        return h / h[2, 2]

    def image_to_table_homography(self) -> np.ndarray:
        """The inverse: image pixels -> table millimetres (what ``calibration.homography`` stores)."""
        h = np.linalg.inv(self.table_to_image_homography())
        return h / h[2, 2]

    def project(self, points_mm: np.ndarray) -> np.ndarray:
        """Image pixels of table-frame points ``(N, 3)`` (x, y, z up) or ``(N, 2)`` (on the table).

        :raises CameraError: if a point is not in front of the camera.
        """
        pts = np.asarray(points_mm, dtype=np.float64)
        if pts.ndim == 1:
            pts = pts[None, :]
        if pts.shape[1] == 2:
            pts = np.column_stack([pts, np.zeros(len(pts))])
        p_int = pts * np.array([1.0, 1.0, -1.0])
        cam = (self.R @ p_int.T).T + self._t()
        if np.any(cam[:, 2] <= 0):
            raise CameraError("a point is behind the camera")
        uvw = (self.K @ cam.T).T
        return uvw[:, :2] / uvw[:, 2:3]

    def drop_to_table(self, xy_mm: np.ndarray, z_mm: float | np.ndarray) -> np.ndarray:
        """Where the camera ray through the point (x, y, z) meets the table: the table point that shows
        in the same pixel. For a horizontal shape at height z this is a scaling about the camera's foot
        point, so drawing the dropped shape on the table and imaging it is exact.

        :raises CameraError: for a point at or above the camera.
        """
        xy = np.asarray(xy_mm, dtype=np.float64)
        z = np.asarray(z_mm, dtype=np.float64)
        hc = self.centre[2]
        if np.any(z >= hc):
            raise CameraError("a point at or above the camera's height")
        scale = hc / (hc - z)
        foot = np.array(self.centre[:2])
        if scale.ndim:
            scale = scale[..., None]
        return foot + (xy - foot) * scale

    def px_per_mm_range(self, region_mm: tuple[float, float, float, float]) -> tuple[float, float]:
        """The smallest and largest image pixels-per-millimetre over the corners of a table region (for
        choosing a rendering resolution)."""
        x0, y0, x1, y1 = region_mm
        scales = []
        for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1), ((x0 + x1) / 2, (y0 + y1) / 2)):
            p = self.project(np.array([[x, y], [x + 1.0, y], [x, y + 1.0]]))
            scales.append(float(np.linalg.norm(p[1] - p[0])))
            scales.append(float(np.linalg.norm(p[2] - p[0])))
        return min(scales), max(scales)
