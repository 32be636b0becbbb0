"""The board's canonical frame and the maps into it: the canonical view is the grid from (0, 0) to
(3, 3), one unit a square, square 1 its top-left. Homographies from the image to it, the pose they
give (step 3 of the package's overview), the quarter turns that renumber the squares, and the canonical
view the squares and lines are read in (steps 4 and 5). And :func:`_read_only`, for the arrays the
cached geometry of the other modules hands out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import cv2
import numpy as np

from messages import BoardPose, Point

#: canonical coordinates of the outer grid corners, in the order of BoardPose.corners_px.
CANONICAL_CORNERS: Final = np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 3.0], [0.0, 3.0]], np.float32)
CANONICAL_CORNERS.flags.writeable = False
GRID_SQUARES: Final = 3
#: margin of the canonical view around the grid, in squares (so the outer lines are sampled whole).
CANON_MARGIN: Final = 0.35
#: canonical centres of squares 1..9.
SQUARE_CENTRES: Final = np.array([[(n % 3) + 0.5, (n // 3) + 0.5] for n in range(9)])
SQUARE_CENTRES.flags.writeable = False


# ----------------------------------------------------------------------------------------------------
# small geometry helpers


#: a grid whose lines go on beyond this many of its sides is a window of a larger grid (a cutting mat, a
#: tiled table), not the board: clutter, supply pieces or the image's edge may hide its other sides.
LARGER_GRID_SIDES: Final = 2


def goes_on_beyond(lines_seen: int, lines_on: int, middles_seen: int, middles_clear: int) -> bool:
    """Whether a grid's lines go on beyond one of its sides, as a larger grid's do: of the four lines
    that reach the side, those seen beyond it (``lines_seen``, in the image) go on (``lines_on``), all
    but one of them and two at least, and the cells' middles between them seen there (``middles_seen``,
    one at least) are clear of lines, all but one of them (a fine grid beyond a board fills both). A
    board's lines end at its outer lines, or a few of them go on into a frame of its design (a display's
    window above the grid, the outer lines drawn long): beyond them lie its plate's margin or the table."""
    return (
        lines_on >= max(2, lines_seen - 1) and middles_seen >= 1 and middles_clear >= max(1, middles_seen - 1)
    )


#: the camera sees the whole board (the README says so of where to put it), so a grid whose outer corners
#: lie beyond the image's edge by more than this share of its pitch is no board: a window of a cutting
#: mat's grid cut by the edge, whose other sides cannot show that its lines go on. (On the tuning sets
#: and the gridded set, 17 boards found reached that far out (0.023 to 0.66), 14 in clear frames: all
#: read wrong but one, flagged with four squares unknown; the gridded set's windows of a mat read bare at
#: 1.0 among them. Every board read right lay within the image, but for one reaching 0.001 out, its
#: corners being its outer lines extrapolated. A limit of 0.05 left two mats' windows read.)
OUT_OF_VIEW_MAX: Final = 0.02


def in_view(
    corners: Sequence[tuple[float, float]] | np.ndarray, pitch: float, view: tuple[float, float, float, float]
) -> bool:
    """Whether a grid's outer corners (four (x, y)) lie within ``view`` (x0, y0, x1, y1: the image's
    extent in the corners' pixels), but for ``OUT_OF_VIEW_MAX`` of its ``pitch``."""
    slack = OUT_OF_VIEW_MAX * pitch
    x0, y0, x1, y1 = view
    # (In plain floats: four points, checked once a frame.)
    return all(
        x0 - slack <= float(x) <= x1 + slack and y0 - slack <= float(y) <= y1 + slack for x, y in corners
    )


def _odd(n: float) -> int:
    k = max(3, round(n))
    return k if k % 2 else k + 1


def _wrap90(angle_deg: float) -> float:
    """An angle folded into (-45, 45] (the board looks the same every quarter turn)."""
    a = math.fmod(angle_deg + 45.0, 90.0)
    if a <= 0.0:
        a += 90.0
    return a - 45.0


def _angle_diff90(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray | float:
    """Smallest difference between angles taken modulo 90 degrees (elementwise, broadcast)."""
    d = np.mod(np.asarray(a) - b + 45.0, 90.0) - 45.0
    return np.abs(d)


def _apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Apply a 3x3 homography to an (N, 2) array."""
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    q = p @ h[:, :2].T + h[:, 2]
    return q[:, :2] / q[:, 2:3]


def pose_from_homography(h_img_to_canon: np.ndarray) -> BoardPose:
    """The :class:`messages.BoardPose` of a homography from image pixels to the canonical view."""
    inv = np.linalg.inv(h_img_to_canon)
    corners = _apply_h(inv, CANONICAL_CORNERS)
    center = _apply_h(inv, np.array([[1.5, 1.5]]))[0]
    ends = _apply_h(inv, np.array([[0.0, 1.5], [3.0, 1.5], [1.5, 0.0], [1.5, 3.0]]))
    ux, uy = ends[1] - ends[0]
    vx, vy = ends[3] - ends[2]
    # The board's x axis lies along (cos a, -sin a) and its y axis along (sin a, cos a) in the image.
    a1 = math.atan2(-uy, ux)
    a2 = math.atan2(vx, vy)
    angle = math.degrees(math.atan2(math.sin(a1) + math.sin(a2), math.cos(a1) + math.cos(a2)))
    hn = h_img_to_canon / h_img_to_canon[2, 2]
    return BoardPose(
        center_px=Point(float(center[0]), float(center[1])),
        angle_deg=float(angle),
        corners_px=tuple(Point(x, y) for x, y in corners.tolist()),  # type: ignore[arg-type]
        homography=tuple(hn.ravel().tolist()),
    )


def _quarter_turn(k: int) -> np.ndarray:
    """Canonical-view rotation by ``k`` quarter turns about the grid's centre (1.5, 1.5)."""
    c, s = [(1, 0), (0, 1), (-1, 0), (0, -1)][k % 4]
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    shift = np.array([[1.0, 0.0, 1.5], [0.0, 1.0, 1.5], [0.0, 0.0, 1.0]])
    return shift @ rot @ np.linalg.inv(shift)


def _normalise_turn(h: np.ndarray) -> tuple[np.ndarray, BoardPose]:
    """Relabel the squares by quarter turns so that the reported angle lies in (-45, 45]: which corner
    is square 1 follows from the angle, not from the order the cells were found in."""
    pose = pose_from_homography(h)
    turn = round((pose.angle_deg - _wrap90(pose.angle_deg)) / 90.0)
    for k in (turn, -turn):
        if k % 4 == 0:
            break
        h2 = _quarter_turn(k) @ h
        pose2 = pose_from_homography(h2)
        if -45.0 < pose2.angle_deg <= 45.0 + 1e-9:
            return h2, pose2
    return h, pose


def homography_of(pose: BoardPose) -> np.ndarray:
    """The image-to-canonical homography of ``pose`` (from its corners when it carries none)."""
    if len(pose.homography) == 9:
        return np.array(pose.homography, np.float64).reshape(3, 3)
    src = np.array([[p.x, p.y] for p in pose.corners_px], np.float32)
    return cv2.getPerspectiveTransform(src, CANONICAL_CORNERS).astype(np.float64)


def pitch_of(pose: BoardPose) -> float:
    """Mean side of one square in image pixels."""
    # In plain floats, the same steps as ``np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1).mean()``
    # (each side's squares summed then rooted, the four sides summed in order, divided by four) without
    # numpy's overhead on four points: this runs several times a frame.
    c = pose.corners_px
    total = 0.0
    for a, b in zip(c, c[1:] + c[:1], strict=True):
        dx, dy = a.x - b.x, a.y - b.y
        total += math.sqrt(dx * dx + dy * dy)
    return total / len(c) / GRID_SQUARES


# ----------------------------------------------------------------------------------------------------
# stage 4 and 5: the canonical view the squares and the lines are read in


@dataclass
class _Canon:
    img: np.ndarray  # grey float32, the grid plus a margin on every side
    px: int  # pixels per square
    margin: int  # pixels of margin on each side
    colour: np.ndarray | None = None  # the same view in colour (float32, 3 channels), lightly smoothed
    #: grey levels each pixel may lie off the plate by and still be the plate (None: none): what an
    #: estimate taken out of the view (a lamp's glare) may have got wrong there.
    slack: np.ndarray | None = None


def _canonical(
    gray: np.ndarray,
    h: np.ndarray,
    pitch_px: float,
    px_bounds: tuple[int, int],
    bgr: np.ndarray | None = None,
) -> _Canon:
    """The grid warped by ``h`` (image to canonical) to a top view with as many pixels per square as
    the grid's pitch in the image (``pitch_px``), kept within ``px_bounds`` (fewest, most), and a margin
    around it (``CANON_MARGIN``)."""
    s = int(min(px_bounds[1], max(px_bounds[0], round(pitch_px))))
    m = max(2, round(CANON_MARGIN * s))
    to_canvas = np.array([[s, 0.0, m], [0.0, s, m], [0.0, 0.0, 1.0]])
    size = GRID_SQUARES * s + 2 * m
    warp = to_canvas @ h
    img = cv2.warpPerspective(
        gray, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    colour = None
    if bgr is not None:
        c = cv2.warpPerspective(
            bgr, warp, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        colour = cv2.GaussianBlur(c, (3, 3), 0).astype(np.float32)
    return _Canon(img.astype(np.float32), s, m, colour)


def _read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """``arrays``, marked read-only: a cached function hands the same arrays to every caller, so none
    may change them."""
    for a in arrays:
        a.flags.writeable = False
    return arrays
