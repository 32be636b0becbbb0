"""A square read bare on a plate that could hide a piece of its own tone is never certain.

Confidence says how far a reading can be trusted: a black piece on a plate as dark as itself, or a white
one on a plate as light, may show nothing at all, so a bare reading there is at most
``HIDING_PLATE_CONFIDENCE``; on a plate of neither tone a bare square is certain.
"""

from __future__ import annotations

import pytest

from services.vision import detector as D
from services.vision.detector import squares

from .synth import Scene, draw


@pytest.mark.parametrize(
    ("plate", "lines", "hiding"),
    [(45, 200, True), (60, 220, True), (215, 40, True), (235, 30, True), (130, 30, False), (150, 240, False)],
)
def test_a_bare_square_is_certain_only_where_no_piece_could_hide(
    plate: float, lines: float, hiding: bool
) -> None:
    det = D.detect(draw(Scene(board="X...O....", board_grey=plate, line_grey=lines, noise=1.5), seed=3))
    assert det.found
    bare = [s for s, c in zip(det.squares, "X...O....", strict=True) if c == "." and s.state == "empty"]
    assert len(bare) >= 5
    top = max(s.confidence for s in bare)
    assert (top <= squares.HIDING_PLATE_CONFIDENCE) if hiding else (top == 1.0)


def test_a_black_piece_on_a_plate_as_dark_as_itself_is_not_read_bare_with_certainty() -> None:
    """The piece differs from the plate by 5 grey levels, under the plate's noise: nothing shows."""
    det = D.detect(
        draw(Scene(board="....X....", board_grey=45, line_grey=210, black_grey=40, noise=2.0), seed=1)
    )
    assert det.found
    centre = det.squares[4]
    assert centre.state in ("empty", "unknown", "black")
    if centre.state == "empty":
        assert centre.confidence <= squares.HIDING_PLATE_CONFIDENCE
