"""A large black piece on a contest board (a blue or green plate, black lines) merges with its lines'
blur, and what differs from the plate in its square is long: "elongated", which made it unknown. Its
body, the pixels off the plate as its middle is, is still round, and it is the far kind from the
plate: a piece (squares._read_squares, ROUND_BODY_FAR_TONE)."""

from __future__ import annotations

import pytest

from services.vision import detector as D
from services.vision.detector.squares import _far_from_the_plate
from tests.vision.contest_table.generator import render

from .test_sweep import truth_as_read


@pytest.mark.parametrize(("seed", "frame"), [(2, 242), (3, 42), (3, 84), (4, 262)])
def test_large_black_pieces_beside_black_lines_are_read(seed: int, frame: int) -> None:
    sample, _info = render(seed, frame)
    det = D.detect(sample.image)
    assert det.found and not det.occluded
    assert det.board == truth_as_read(det, sample.board, sample.angle_deg)


def test_far_from_the_plate_is_the_far_kind() -> None:
    # Dark lines (grey 20) on a plate of grey 120: a black middle is far, and a white one well beyond
    # the plate; one a little off the plate either way is not (a stain, a shadow).
    assert _far_from_the_plate(25.0, 20.0, 120.0)
    assert _far_from_the_plate(200.0, 20.0, 120.0)
    assert not _far_from_the_plate(80.0, 20.0, 120.0)
    assert not _far_from_the_plate(170.0, 20.0, 120.0)
    # Light lines (grey 200) on a dark plate (grey 40): a white middle is far, a black one is not.
    assert _far_from_the_plate(190.0, 200.0, 40.0)
    assert not _far_from_the_plate(35.0, 200.0, 40.0)
