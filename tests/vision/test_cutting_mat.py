"""A board on a cutting mat: the mat's own printed grid surrounds the board with square cells in every
direction, and any 3x3 window of it looks like a board, often a better one than the board itself (whose
pieces dent its cells). Before cells._find_lattice set such patches aside, the reader read a window of
the mat as an empty board, sure of it (on our renderer's boards on mats, 80 frames each of seeds 11-14:
81-87% of squares right, 30-72 squares wrong at confidence >= 0.9, 15-18 frames a stability window
would have taken wrong).
"""

from __future__ import annotations

import math

import numpy as np

from services.vision.detector import detect
from services.vision.detector.cells import _Cells, _find_lattice
from services.vision.detector.model import DetectorParams

from .looks import contest_scene, on_cutting_mat
from .synth import draw
from .test_sweep import rotate_board

PARAMS = DetectorParams()


def _grid_cells(centre: tuple[float, float], pitch: float, angle_deg: float, n: int) -> list[tuple]:
    """(centre, side, angle) of an ``n`` x ``n`` lattice of square cells (a line's width apart)."""
    a = math.radians(angle_deg)
    ex = np.array([math.cos(a), -math.sin(a)])
    ey = np.array([math.sin(a), math.cos(a)])
    out = []
    for i in range(n):
        for j in range(n):
            c = np.array(centre) + (i - (n - 1) / 2) * pitch * ex + (j - (n - 1) / 2) * pitch * ey
            out.append((tuple(c), 0.9 * pitch, angle_deg))
    return out


def _cells(cells: list[tuple]) -> _Cells:
    return _Cells(
        center=np.array([c[0] for c in cells], dtype=np.float64),
        side=np.array([c[1] for c in cells], dtype=np.float64),
        angle=np.array([c[2] for c in cells], dtype=np.float64),
        solid=np.ones(len(cells)),
    )


def test_a_window_of_a_larger_grid_is_not_a_board() -> None:
    mat = _grid_cells((320.0, 240.0), 30.0, 12.0, 8)
    assert _find_lattice(_cells(mat), PARAMS) is None


def test_the_board_is_found_among_the_cells_of_a_mat() -> None:
    # The mat's cells round the board (none where the board lies), the board's own nine beside them.
    board = _grid_cells((420.0, 240.0), 50.0, -20.0, 3)
    mat = [c for c in _grid_cells((250.0, 240.0), 30.0, 12.0, 8) if math.dist(c[0], (420.0, 240.0)) > 90]
    lattice = _find_lattice(_cells(mat + board), PARAMS)
    assert lattice is not None
    assert len(lattice.centers) == 9
    assert abs(lattice.pitch - 50.0) < 1.0
    assert np.allclose(lattice.centers.mean(axis=0), (420.0, 240.0), atol=1.0)


def test_boards_on_cutting_mats_are_read() -> None:
    """Our renderer's contest looks on a cutting mat (fine and coarse grids, light and dark lines): no
    square read wrong with confidence >= 0.9, no frame read whole and wrong, and 95% of squares right
    (measured 98.75%-99.03% over 80 frames each of seeds 11 and 12; this set: 24 frames of seed 12)."""
    rng = np.random.default_rng(12)
    right = total = 0
    for i in range(24):
        scene = on_cutting_mat(contest_scene(rng), rng)
        det = detect(draw(scene, seed=i))
        assert det.found, f"frame {i}: no board"
        truth = rotate_board(scene.board, round((det.pose.angle_deg - scene.angle_deg) / 90))
        wrong = [k for k in range(9) if det.board[k] not in ("?", truth[k])]
        assert not [k for k in wrong if det.squares[k].confidence >= 0.9], (i, det.board, truth)
        assert not (wrong and not det.occluded and "?" not in det.board), (i, det.board, truth)
        right += 9 - len(wrong) - det.board.count("?")
        total += 9
    assert right / total >= 0.95
