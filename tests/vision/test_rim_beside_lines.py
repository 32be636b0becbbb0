"""A piece of the plate's tone whose rim merges with a dark line's blur on one side.

A large white piece on a light plate, a little off its square's centre, shows its darker rim all round
but where it nears a line: there the rim and the line's blur make one dark band reaching the line, and
the rim look (pieces._rim_pieces) took no circle with dark lines at the lines (a bare square's dark
band along its lines would be one). Before, such squares read bare (contest_table 1/195, 4/261 and
4/265, apart 1/248, 2/211, 4/212 and 4/265: eight white pieces in clear frames). Now the circle
through the other sectors counts when each of them stands a tenth of the grid's contrast off the face
(``RIM_BESIDE_LINES_SHARE``): the faint circles bare squares show there stand 0.07 of it at most.
"""

from __future__ import annotations

import numpy as np
import pytest

from services.vision.detector import pieces
from services.vision.detector.pieces import _rim_piece

from .test_rim_pieces import GEO, TEXTURE, THRESHOLD
from .tuning_frames import read_tuning_frame

#: the sectors' directions around the square's centre (as pieces._circle_through takes them).
ANGLES = (np.arange(pieces.EDGE_SECTORS) + 0.5) * (2 * np.pi / pieces.EDGE_SECTORS) - np.pi


def _peaks(
    centre: tuple[float, float], radius: float, at_lines: list[int], strength: float = 20.0
) -> pieces._OutlinePeaks:
    """A rim's peaks around the square's centre: where each sector's ray meets a circle of ``radius``
    at ``centre``, ``strength`` off the face; the sectors ``at_lines`` at the square's lines instead."""
    c = np.array(centre)
    u = np.stack([np.cos(ANGLES), np.sin(ANGLES)], axis=1)
    along = u @ c
    reach = along + np.sqrt(along**2 - c @ c + radius**2)
    at = np.isin(np.arange(pieces.EDGE_SECTORS), at_lines)
    return pieces._OutlinePeaks(
        np.zeros(2), np.full(pieces.EDGE_SECTORS, strength), np.where(at, 0.55, reach), at
    )


def test_the_circle_through_the_sectors_clear_of_the_lines_is_the_piece() -> None:
    circle = pieces._circle_beside_lines(_peaks((0.06, 0.0), 0.42, [3, 4]), THRESHOLD)
    assert circle is not None
    centre, edge = circle
    assert np.allclose(centre, (0.06, 0.0), atol=0.01) and abs(edge - 0.42) < 0.01


def test_sectors_clear_of_the_lines_that_make_no_circle_are_no_piece() -> None:
    peaks = _peaks((0.06, 0.0), 0.42, [3, 4])
    square_band = peaks._replace(
        radius=np.where(peaks.at_lines, 0.55, [0.45, 0.6, 0.45, 0, 0, 0.45, 0.6, 0.45])
    )
    assert pieces._circle_beside_lines(square_band, THRESHOLD) is None


@pytest.mark.parametrize("seed", range(10))
def test_a_bare_square_beside_a_blurred_line_shows_no_rim(seed: int) -> None:
    """The plate's texture with a dark line's blur along one side: nothing stands a tenth of the
    contrast off the face round a circle."""
    dev = np.random.default_rng(seed).normal(0.0, TEXTURE, GEO.dx.size)
    dev -= 30.0 * np.exp(-(0.5 - GEO.dx) / 0.03)
    assert _rim_piece(dev, GEO, THRESHOLD, True, CONTRAST) is None


CONTRAST = 100.0  # the grid's lines against the plate, grey levels


#: tuning frames with white pieces read bare before, and those squares (as each detection numbers them).
FRAMES = [
    ("contest_table", 1, 195, [4]),
    ("contest_table", 4, 261, [2]),
    ("contest_table", 4, 265, [7]),  # (this one's rim reaches the line around the piece's own centre)
    ("apart", 1, 248, [6]),  # (and this one's)
    ("apart", 4, 265, [0, 4]),
    ("apart", 4, 212, [5]),  # (three sectors at the lines)
    ("apart", 1, 194, [2]),
    ("apart", 4, 130, [3, 6]),
    ("unseen", 1, 68, [4, 7]),
    ("unseen", 3, 55, [5, 8]),
]
#: ...those whose squares read bare without the rule. Since the line fit leaves out the profiles that
#: run to their window's end (session 43), apart 1/248, 4/265 and 4/212 are read without it (4/265's
#: first square reads unknown). apart 2/211 was one of them before; since that change it is flagged,
#: with two of its white pieces read bare and two squares unknown (a loss of that change, not of this
#: rule).
READ_WITHOUT_IT = {("apart", 1, 248), ("apart", 4, 265), ("apart", 4, 212)}
BARE_WITHOUT_IT = [frame for frame in FRAMES if frame[:3] not in READ_WITHOUT_IT]


@pytest.mark.parametrize(("generator", "seed", "index", "squares"), FRAMES)
def test_the_white_pieces_read_bare_are_found(
    generator: str, seed: int, index: int, squares: list[int]
) -> None:
    det, truth = read_tuning_frame(generator, seed, index)
    assert not det.occluded
    assert [det.board[k] for k in squares] == [truth[k] for k in squares] == ["O"] * len(squares)


def test_without_the_rule_they_read_bare(monkeypatch: pytest.MonkeyPatch, rules_alone: None) -> None:
    monkeypatch.setattr(pieces, "RIM_BESIDE_LINES_SHARE", np.inf)
    for generator, seed, index, squares in BARE_WITHOUT_IT:
        det, _truth = read_tuning_frame(generator, seed, index)
        assert [det.board[k] for k in squares] == ["."] * len(squares)
