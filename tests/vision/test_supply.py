"""Supply pieces: simcam places the unused pieces in the supply columns of config.table; the
independent renderer puts them in columns beside the board. Count and colour per column."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from services.vision.detector import Detection, detect

from .looks import random_scene
from .synth import draw
from .test_sweep import CAMERA, PRESETS, TABLE, random_board, render_board, sweep_style

simcam = pytest.importorskip("services.simcam.renderer")
from services.simcam.world import supply_position  # noqa: E402

#: a found piece belongs to a slot when its centre is this close, in pitches.
SLOT_TOLERANCE = 0.4


def _column_counts(det: Detection, slots: dict[str, np.ndarray]) -> tuple[dict[str, int], int, int]:
    """Pieces found at each column's slots (right colour only), pieces of the wrong colour there, and
    pieces found anywhere else."""
    counts = dict.fromkeys(slots, 0)
    wrong_colour = elsewhere = 0
    for piece in det.supply:
        at = [
            colour
            for colour, pts in slots.items()
            if len(pts)
            and np.min(np.hypot(*(pts - np.array(piece.center_px)).T)) < SLOT_TOLERANCE * det.pitch_px
        ]
        if not at:
            elsewhere += 1
        elif piece.colour == at[0]:
            counts[at[0]] += 1
        else:
            wrong_colour += 1
    return counts, wrong_colour, elsewhere


def test_simcam_supply_columns_count_and_colour() -> None:
    rng = np.random.default_rng(61)
    all_slots = {
        colour: CAMERA.project(
            np.array([supply_position(TABLE, colour, i) for i in range(column.slots)])  # type: ignore[arg-type]
        )
        for colour, column in (("black", TABLE.black_supply), ("white", TABLE.white_supply))
    }
    columns = exact = 0
    for i in range(30):
        preset = PRESETS[i % len(PRESETS)]
        board = random_board(rng)
        angle = float(rng.uniform(-45, 45))
        centre = (200.0 + rng.uniform(-55, 55), 150.0 + rng.uniform(-40, 40))
        det = detect(render_board(board, angle, centre, sweep_style(preset, rng), seed=i))
        counts, wrong_colour, elsewhere = _column_counts(det, all_slots)
        assert wrong_colour == 0, f"frame {i}: a piece of the wrong colour in a column"
        assert elsewhere <= 1, f"frame {i}: {elsewhere} pieces away from the columns"
        for colour, symbol in (("black", "X"), ("white", "O")):
            expected = 5 - board.count(symbol)
            assert counts[colour] <= expected, f"frame {i}: {counts[colour]} {colour} for {expected}"
            columns += 1
            exact += counts[colour] == expected
    # Measured when written: 58/60 columns exact (the misses are pieces at the frame's edge in shadow).
    assert exact >= 0.9 * columns, f"{exact}/{columns} columns counted exactly"


def test_independent_renderer_supply_columns() -> None:
    """Discs with or without a rim beside the board on a bare table, in random looks (crosses and
    coloured trays are left out: see the report)."""
    rng = np.random.default_rng(62)
    columns = exact = 0
    for i in range(30):
        scene = replace(random_scene(rng), crosses=False, trays=())
        det = detect(draw(scene, seed=i))
        slots = {
            colour: np.array([(x, y) for c, x, y in scene.supply if c == colour]).reshape(-1, 2)
            for colour in ("black", "white")
        }
        counts, wrong_colour, _elsewhere = _column_counts(det, slots)
        assert wrong_colour == 0, f"look {i}: a piece of the wrong colour"
        for colour in ("black", "white"):
            assert counts[colour] <= len(slots[colour])
            columns += 1
            exact += counts[colour] == len(slots[colour])
    # Measured when written: 54/60 columns exact.
    assert exact >= 0.8 * columns, f"{exact}/{columns} columns counted exactly"
