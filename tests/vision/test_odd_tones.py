"""Pieces of one kind are alike: a body read white far dimmer than the white pieces beside it is
something else (a steel coin), and is flagged (:func:`_odd_tones_by_the_board`).

Before, a steel coin on a plate of the other tone read as a dim white piece, and a frame with one read
as a clear board: 13 of the 22 occluded frames read clear on the tuning sets were coins.
"""

from __future__ import annotations

from services.vision import detector as D
from services.vision.detector import squares
from tests.vision.flat.generator import make_frame

Reading = tuple[str, float, float, float, str, float]


def _board(tones: dict[int, tuple[str, float]], plate_tone: float) -> list[Reading]:
    out: list[Reading] = []
    for k in range(9):
        if k in tones:
            state, tone = tones[k]
            out.append((state, 1.0, 1.0, tone, "", 120.0))
        else:
            out.append(("empty", 1.0, 0.0, plate_tone, "", 120.0))
    return out


def _problems(readings: list[Reading]) -> list[str]:
    return [r[4] for r in readings]


def test_a_dim_white_among_bright_whites_is_odd() -> None:
    """Dark lines (the plate at 1): white pieces at 2.2, and a coin at 1.27."""
    board = _board({0: ("white", 2.2), 1: ("white", 2.25), 3: ("white", 2.15), 5: ("white", 1.27)}, 1.0)
    out = squares._odd_tones_by_the_board(board, dark_lines=True)
    assert _problems(out)[5] == "odd-tone"
    assert _problems(out).count("odd-tone") == 1


def test_whites_alike_are_not_odd() -> None:
    board = _board({0: ("white", 2.0), 1: ("white", 2.3), 3: ("white", 1.7), 5: ("white", 1.9)}, 1.0)
    assert "odd-tone" not in _problems(squares._odd_tones_by_the_board(board, dark_lines=True))


def test_two_pieces_of_a_colour_say_nothing() -> None:
    board = _board({0: ("white", 2.2), 5: ("white", 1.1), 6: ("black", -0.4)}, 1.0)
    assert "odd-tone" not in _problems(squares._odd_tones_by_the_board(board, dark_lines=True))


def test_white_pieces_near_a_white_plate_say_nothing() -> None:
    """White on a white plate: the group stands too near the plate to measure a share of its way."""
    board = _board({0: ("white", 1.2), 1: ("white", 1.25), 5: ("white", 1.02)}, 1.0)
    assert "odd-tone" not in _problems(squares._odd_tones_by_the_board(board, dark_lines=True))


def test_a_white_darker_than_the_plate_beside_whites_lighter_than_it_is_odd() -> None:
    """Dark lines (the plate at 1): white pieces at 1.3, and a steel coin at 0.75, darker than the plate
    yet above the scale's middle, so read white."""
    board = _board({0: ("white", 1.3), 1: ("white", 1.28), 5: ("white", 0.75)}, 1.0)
    out = squares._odd_tones_by_the_board(board, dark_lines=True)
    assert _problems(out)[5] == "odd-tone"
    assert _problems(out).count("odd-tone") == 1


def test_a_coin_a_little_darker_than_the_plate_beside_whites_a_little_lighter_is_odd() -> None:
    """contest_table frame 23 (a tuning set): a steel coin at 0.851 (0.149 below the plate), white pieces
    at 1.26 to 1.43."""
    board = _board({1: ("white", 1.43), 3: ("white", 1.27), 4: ("white", 1.26), 7: ("white", 0.851)}, 1.0)
    assert _problems(squares._odd_tones_by_the_board(board, dark_lines=True))[7] == "odd-tone"


def test_with_one_piece_of_a_colour_on_each_side_of_the_plate_both_are_odd() -> None:
    """Which of the two is not what it reads, the board cannot say: neither is read."""
    board = _board({0: ("white", 1.7), 5: ("white", 0.75), 6: ("black", -0.4)}, 1.0)
    assert _problems(squares._odd_tones_by_the_board(board, dark_lines=True)) == [
        "odd-tone",
        "",
        "",
        "",
        "",
        "odd-tone",
        "",
        "",
        "",
    ]


def test_pieces_beside_the_plate_on_both_sides_say_nothing() -> None:
    """White pieces on a white plate, one a little lighter and one a little darker than it (within
    ODD_SIDE_MIN of it)."""
    board = _board({0: ("white", 1.07), 5: ("white", 0.93)}, 1.0)
    assert "odd-tone" not in _problems(squares._odd_tones_by_the_board(board, dark_lines=True))


def test_a_pale_black_among_black_pieces_is_odd() -> None:
    """Dark lines (the plate at 1): black pieces at -0.45, and something at 0.7 read black."""
    board = _board({0: ("black", -0.45), 2: ("black", -0.43), 4: ("black", -0.46), 1: ("black", 0.7)}, 1.0)
    out = squares._odd_tones_by_the_board(board, dark_lines=True)
    assert _problems(out)[1] == "odd-tone"


def test_light_lines_put_the_plate_at_zero() -> None:
    """Light lines on a dark plate (the plate at 0): white pieces at 2.4, a coin at 0.5."""
    board = _board({0: ("white", 2.4), 1: ("white", 2.45), 2: ("white", 2.35), 7: ("white", 0.5)}, 0.0)
    out = squares._odd_tones_by_the_board(board, dark_lines=False)
    assert _problems(out)[7] == "odd-tone"


def test_a_coin_among_white_pieces_flags_the_frame() -> None:
    """flat frame 223 (seed 1, a tuning set): a steel coin in an empty square of a grey plate, beside
    white and black pieces; it read as a white piece and the frame as a clear board."""
    sample = make_frame(223, 1)
    assert sample.occluded
    det = D.detect(sample.image)
    assert det.found
    assert det.occluded
    assert det.extra.get("foreign_odd-tone", 0.0) >= 1.0
