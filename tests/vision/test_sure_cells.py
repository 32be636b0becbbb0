"""The search of the line masks stops at a lattice of tight cells (cells.SURE_CELLS).

The cells are looked for in two masks, lines darker and lines lighter than their surroundings. A lattice
of five or more cells, each near its place, places the grid well enough for the lines to refine; the
other mask is then not searched (it cost a third of the cells' stage). A board of the other polarity
still has both masks searched, and is found.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.vision import detector as D
from services.vision.detector import cells

from .synth import Scene, draw


@pytest.fixture
def masks_searched(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The number of line masks searched for cells, per call of detect (appended by the test)."""
    calls = [0]
    plain = cells._cell_candidates

    def counted(*args: object, **kwargs: object) -> cells._Cells:
        calls[0] += 1
        return plain(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cells, "_cell_candidates", counted)
    yield calls


def test_tight_cells_of_dark_lines_end_the_search(masks_searched: list[int]) -> None:
    scene = Scene(board="X...O...X", angle_deg=12.0, noise=2.0, piece_frac=0.8)  # seven cells
    det = D.detect(draw(scene, seed=3))
    assert det.found and det.polarity == "dark-lines" and 5 <= det.cells < 9
    assert det.board == scene.board
    assert masks_searched[0] == 1


def test_a_board_of_light_lines_is_found_in_the_second_mask(masks_searched: list[int]) -> None:
    scene = Scene(board=".X..O....", angle_deg=-8.0, board_grey=50, line_grey=210, noise=2.0)
    det = D.detect(draw(scene, seed=4))
    assert det.found and det.polarity == "light-lines"
    assert det.board == scene.board
    assert masks_searched[0] >= 2
