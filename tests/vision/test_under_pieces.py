"""Lines hidden between two large pieces are not "crossed"; anything else hiding a line is.

A square beside a line hidden over a finger's width reads unknown (something lies across the line).
Two large pieces side by side hide the line between them with their bodies, rims and shadows, and
that alone must not make both unknown, whether the pieces are of one kind or a black and a white one
(the black body hides a dark line on its side, the white piece's darker rim on the other): tested on
the rule itself (:func:`_under_pieces`) and on frames of the independent flat renderer
(tests/vision/flat, a tuning set) whose large pieces side by side read unknown before the rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.vision_frames import a_frame_ago
from services.vision import detector as D
from services.vision.detector import occlusion
from tests.vision.flat.generator import make_frame

from .test_sweep import rotate_board
from .tuning_frames import tuning_sample

#: (seed, index) of flat frames with large pieces side by side that hid the lines between them.
SIDE_BY_SIDE = (
    (1, 286),
    (2, 2),
    (2, 24),
    (2, 294),
    (3, 133),
    (3, 269),
    (1, 81),
    (4, 41),
    (4, 77),
    (5, 94),
    (6, 62),
)
TOLERANCE = 20.0  # grey levels by which two pieces' middles may differ and still be one kind
#: large pieces side by side whose rims alone do not reach over their lines (centred, they end
#: ``PIECE_OVER_LINE`` and 0.02 short of them): what explains the line between them is the pair.
PAIR_RADIUS = 0.48 - occlusion.PIECE_OVER_LINE


def _owners() -> np.ndarray:
    """The owners of every line sample, as the detector lays them out (any canonical size will do)."""
    return occlusion._line_sampling(40, 14, 2, 6)[2]


def _readings(states: str) -> list[tuple[str, float, float, float, str, float]]:
    names = {"X": "black", "O": "white", ".": "empty"}
    return [(names[c], 1.0, 1.0 if c != "." else 0.0, 0.5, "", 120.0) for c in states]


def _discs(states: str, radius: float, greys: dict[int, float] | None = None) -> np.ndarray:
    """Centred discs of ``radius`` for the pieces of ``states``, each middle at its colour's grey."""
    discs = np.zeros((9, 4))
    for n, c in enumerate(states):
        if c != ".":
            discs[n] = (0.0, 0.0, radius, 30.0 if c == "X" else 220.0)
    for n, grey in (greys or {}).items():
        discs[n, 3] = grey
    return discs


def _between(owners: np.ndarray, a: int, b: int) -> np.ndarray:
    return ((owners[:, 0] == a) & (owners[:, 1] == b)) | ((owners[:, 0] == b) & (owners[:, 1] == a))


def test_the_middle_of_the_line_between_two_large_pieces_of_one_kind_is_explained() -> None:
    owners = _owners()
    for states in ("XX.......", "OO......."):
        under = occlusion._under_pieces(
            owners, _readings(states), _discs(states, PAIR_RADIUS), TOLERANCE, True
        )
        between = _between(owners, 0, 1)
        at = occlusion._sample_positions()
        middle = between & (np.abs(at[:, 1] - 0.5) < 0.1)
        assert under[middle].all(), states
        assert not under[~between].any(), states  # nowhere else: not their outer lines, not elsewhere


def test_the_line_between_a_black_and_a_white_large_piece_is_explained() -> None:
    owners = _owners()
    for states in ("XO.......", "OX......."):
        under = occlusion._under_pieces(
            owners, _readings(states), _discs(states, PAIR_RADIUS), TOLERANCE, True
        )
        assert under[_between(owners, 0, 1)].any(), states
        assert not under[~_between(owners, 0, 1)].any(), states


def test_small_pieces_far_from_the_line_explain_nothing() -> None:
    states = "XX......."
    assert not occlusion._under_pieces(
        _owners(), _readings(states), _discs(states, 0.25), TOLERANCE, True
    ).any()


def test_beside_a_bare_square_or_the_board_edge_nothing_is_explained() -> None:
    """A large black piece inside its square (its disc and rim short of the lines)."""
    states = "X........"
    for dark_lines in (True, False):
        discs = _discs(states, 0.40)
        assert not occlusion._under_pieces(_owners(), _readings(states), discs, TOLERANCE, dark_lines).any()


def test_a_piece_reaching_over_a_line_hides_it() -> None:
    """A white piece whose disc reaches over light lines (flat seed 1 #81, seed 4 #41 and #77: large
    white pieces on green and blue plates), or over dark ones (seed 6 #62, on a pastel plate): the
    samples its disc and rim cover are explained, beside a bare square and at the board's edge too;
    none farther along the line."""
    owners, at = _owners(), occlusion._sample_positions()
    states = "O........"
    near = np.hypot(at[:, 0] - 0.5, at[:, 1] - 0.5) <= 0.46 + occlusion.PIECE_OVER_LINE
    assert near.any()
    readings = _readings(states)
    for dark_lines, tone in ((False, 1.0), (True, 1.5)):
        readings[0] = (*readings[0][:3], tone, *readings[0][4:])
        under = occlusion._under_pieces(owners, readings, _discs(states, 0.46), TOLERANCE, dark_lines)
        assert under[near & (owners == 0).any(axis=1)].all()
        assert not under[~near].any()


def test_a_body_of_the_plates_tone_over_a_line_explains_nothing() -> None:
    """A "white piece" whose middle is the white plate's own tone (heldout #1: a phantom beside a faint
    dark line)."""
    states = "O........"
    readings = _readings(states)
    readings[0] = (*readings[0][:3], 1.02, *readings[0][4:])
    assert not occlusion._under_pieces(_owners(), readings, _discs(states, 0.46), TOLERANCE, True).any()


def test_two_pieces_unlike_in_grey_are_not_one_kind() -> None:
    # A grey coin read as a black piece beside a real black piece: the line between stays crossed.
    states = "XX......."
    discs = _discs(states, PAIR_RADIUS, greys={1: 30.0 + 3 * TOLERANCE})
    assert not occlusion._under_pieces(_owners(), _readings(states), discs, TOLERANCE, True).any()


def test_a_square_with_something_foreign_explains_nothing() -> None:
    states = "XX......."
    readings = _readings(states)
    readings[1] = (*readings[1][:4], "elongated", readings[1][5])
    assert not occlusion._under_pieces(
        _owners(), readings, _discs(states, PAIR_RADIUS), TOLERANCE, True
    ).any()


@pytest.mark.parametrize(("seed", "index"), SIDE_BY_SIDE)
def test_rows_of_large_pieces_are_read_not_crossed(seed: int, index: int) -> None:
    sample = make_frame(index, seed)
    det = D.detect(sample.image)
    assert det.found
    turns = round((det.pose.angle_deg - sample.angle_deg) / 90)
    assert det.extra["crossed"] == 0
    assert "?" not in det.board
    assert det.board == rotate_board(sample.board, turns)


def test_a_piece_whose_corners_took_its_level_hides_the_lines_beside_it() -> None:
    """flat seed 5 #48 (a tuning set): large black pieces whose bodies and shadows reach their squares'
    corners read by their middles alone (nothing differs from the corners), with no disc measured; as
    large as a piece can be, their lines between them are explained. Four squares read unknown before,
    two now (a bare square flagged "background" and a piece "elongated", for their own reasons)."""
    sample = make_frame(48, 5)
    det = D.detect(sample.image)
    truth = rotate_board(sample.board, round((det.pose.angle_deg - sample.angle_deg) / 90))
    assert all(a in ("?", b) for a, b in zip(det.board, truth, strict=True))
    assert det.board.count("?") <= 2


def _top_line_beside(square: int, owners: np.ndarray) -> np.ndarray:
    """The samples of the board's top outer line along ``square`` (0, 1 or 2), in order along it."""
    return np.flatnonzero(
        (owners[:, 0] == -1) & (owners[:, 1] == square) & (occlusion._sample_positions()[:, 1] == 0)
    )


def test_a_stretch_mostly_beyond_a_piece_is_not_explained_by_it() -> None:
    """A white piece reaching over the top outer line explains a hidden stretch that lies mostly under
    its rim, not one that runs on mostly beyond it (apart 3 #85: a bead against a white piece's edge,
    over the outer line): its reach must not nibble that stretch below a finger's width."""
    owners, at = _owners(), occlusion._sample_positions()
    states = ".O......."
    readings = _readings(states)
    readings[1] = (*readings[1][:3], 1.0, *readings[1][4:])
    discs = _discs(states, 0.46)
    top = _top_line_beside(1, owners)
    reach = occlusion._under_pieces(owners, readings, discs, TOLERANCE, False)[top]
    assert 0 < reach.sum() < len(top)  # the piece's rim reaches the middle of the line only
    first = int(np.flatnonzero(reach)[0])
    for hidden_at, explained in (
        (top[first : first + 3], True),  # wholly within the reach
        (top[max(first - 1, 0) : first + 3], True),  # mostly within it
        (top[max(first - 4, 0) : first + 1], False),  # one sample within, four beyond
    ):
        hidden = np.zeros(len(owners), bool)
        hidden[hidden_at] = True
        under = occlusion._under_pieces(owners, readings, discs, TOLERANCE, False, hidden=hidden)
        assert under[hidden_at].any() == explained, (hidden_at, at[hidden_at])
        # Nothing else changes: the reach elsewhere, seen or not, is as without the stretches.
        rest = np.ones(len(owners), bool)
        rest[top] = False
        assert (under[rest] == occlusion._under_pieces(owners, readings, discs, TOLERANCE, False)[rest]).all()


def test_a_piece_held_over_the_board_is_not_taken_as_one_placed() -> None:
    """sealed 3 #127 (a tuning set), read as the tracker reads a board it follows: the gantry's head
    holds a white piece over a black one, its arm over the outer line. With a piece's rim taken a ring
    farther over its line (``PIECE_OVER_LINE`` 0.10), that held piece explained the line its arm hides,
    and the frame was read clear with a white piece in the square: it must stay covered."""
    sample = tuning_sample("sealed", 3, 127)
    assert sample.occluded
    cold = D.detect(sample.image)
    tracked = D.track(
        sample.image, a_frame_ago(cold.pose), polarity=cold.polarity, half_width=cold.extra["half_width"]
    )
    assert tracked.found and (tracked.occluded or "?" in tracked.board), tracked.board
