"""The pinhole camera model: its homography is exact, raised points drop onto the table consistently."""

from __future__ import annotations

import numpy as np
import pytest

from services.common.config import TableConfig
from services.simcam import CameraError, CameraModel


def _apply(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.column_stack([pts, np.ones(len(pts))]) @ h.T
    return p[:, :2] / p[:, 2:3]


TABLE_POINTS = np.array([[x, y] for x in np.linspace(0, 400, 9) for y in np.linspace(0, 300, 7)])


def test_homography_matches_projection(camera: CameraModel) -> None:
    h = camera.table_to_image_homography()
    assert h[2, 2] == pytest.approx(1.0)
    np.testing.assert_allclose(_apply(h, TABLE_POINTS), camera.project(TABLE_POINTS), atol=1e-9)


def test_inverse_homography_round_trips(camera: CameraModel) -> None:
    img = camera.project(TABLE_POINTS)
    back = _apply(camera.image_to_table_homography(), img)
    np.testing.assert_allclose(back, TABLE_POINTS, atol=1e-9)


def test_table_with_margin_fits_in_image(camera: CameraModel, table: TableConfig) -> None:
    corners = np.array([[-15, -15], [415, -15], [415, 315], [-15, 315]], float)
    img = camera.project(corners)
    assert (
        np.all(img >= 0) and np.all(img[:, 0] <= camera.width - 1) and np.all(img[:, 1] <= camera.height - 1)
    )
    # the fit is tight: some corner is within a few pixels of the image edge
    slack = np.minimum.reduce(
        [img[:, 0], img[:, 1], camera.width - 1 - img[:, 0], camera.height - 1 - img[:, 1]]
    )
    assert slack.min() < 6.0


def test_perspective_is_mild_but_present(camera: CameraModel) -> None:
    lo, hi = camera.px_per_mm_range((0, 0, 400, 300))
    assert 1.0 < lo < hi < 1.3 * lo
    assert hi > lo * 1.02  # a tilted camera: not an affine view


def test_raised_point_drops_onto_the_same_pixel(camera: CameraModel) -> None:
    rng = np.random.default_rng(1)
    xy = rng.uniform([0, 0], [400, 300], (20, 2))
    z = rng.uniform(0, 200, 20)
    direct = camera.project(np.column_stack([xy, z]))
    dropped = camera.project(camera.drop_to_table(xy, z))
    np.testing.assert_allclose(dropped, direct, atol=1e-9)


def test_bad_cameras_are_refused() -> None:
    with pytest.raises(CameraError):
        CameraModel.looking_at((200, 150), distance_mm=-1, fit_mm=(0, 0, 400, 300))
    with pytest.raises(CameraError):
        CameraModel.looking_at((200, 150))  # neither focal length nor a region to fit
    with pytest.raises(CameraError):
        CameraModel.looking_at((200, 150), tilt_deg=95, focal_px=800)


def test_equal_cameras_hash_alike() -> None:
    a = CameraModel.looking_at((200, 150), fit_mm=(0, 0, 400, 300))
    b = CameraModel.looking_at((200, 150), fit_mm=(0, 0, 400, 300))
    c = CameraModel.looking_at((200, 150), fit_mm=(0, 0, 400, 300), tilt_deg=3)
    assert a == b and hash(a) == hash(b)
    assert a != c


def test_the_matrices_are_the_cameras_own_and_read_only(camera: CameraModel) -> None:
    """A camera is a cache key: changing the arrays it was made from does not change it."""
    k = camera.K.copy()
    copy = CameraModel(K=k, R=camera.R, centre=camera.centre, width=camera.width, height=camera.height)
    same = CameraModel(K=k.copy(), R=camera.R, centre=camera.centre, width=camera.width, height=camera.height)
    k[0, 0] += 100.0
    assert copy == same and copy.K[0, 0] == camera.K[0, 0]
    with pytest.raises(ValueError):
        copy.K[0, 0] = 1.0
