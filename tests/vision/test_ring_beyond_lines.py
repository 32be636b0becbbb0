"""A ring reading's "empty" is believed only where its disc is not beyond the lines' own tone.

The ring reader judges a square against the ring of board just inside its lines. A large black piece at
a small pitch covers that ring too (its blur reaches the lines), so the disc does not differ from the
ring and the ring reads "empty", while the disc is darker than the dark lines themselves: no bare square
is. The corners' reading of such a square saw the piece but flagged it (its blur reaches the square's far
corners), and the combined reading took the ring's "empty" (confidence 0.75). Now the ring flags it
("beyond-lines") and the square reads unknown: never a piece read as a bare square.

Frames from the flat renderer and the heldout set (tuning sets): flat seed 1 #218 (square 7) and heldout
seed 1 #72 (square 3), black pieces 0.4 pitch in radius.
"""

from __future__ import annotations

import pytest

from services.vision import detector as D
from tests.vision.flat import generator as flat
from tests.vision.heldout import generator as heldout

from .test_sweep import truth_as_read

FRAMES = (("flat", 218), ("heldout", 72))
GENERATORS = {"flat": flat.make_frame, "heldout": heldout.make_frame}


@pytest.mark.parametrize(("generator", "index"), FRAMES)
def test_no_black_piece_reads_as_a_bare_square(generator: str, index: int) -> None:
    sample = GENERATORS[generator](index, 1)
    det = D.detect(sample.image)
    truth = truth_as_read(det, sample.board, sample.angle_deg)
    for square, true in zip(det.squares, truth, strict=True):
        if true == "X":
            assert square.state in ("black", "unknown"), square
