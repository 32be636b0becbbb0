"""Worlds from board strings and from WORLD.json files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from messages import HandState, WorldState
from services.common.config import TableConfig
from services.simcam import (
    WorldFormatError,
    board_of,
    square_at,
    square_centre,
    world_from_board,
    world_from_file_data,
)


def test_square_centres_follow_the_geometry_doc() -> None:
    # unrotated: square 1 top left, 9 bottom right
    assert square_centre(1, (200, 150), 0, 40) == pytest.approx((160, 110))
    assert square_centre(9, (200, 150), 0, 40) == pytest.approx((240, 190))
    # rotated 90 degrees counter-clockwise as seen from the camera (y down): the top-left square goes
    # to the bottom left
    assert square_centre(1, (200, 150), 90, 40) == pytest.approx((160, 190))
    a = math.radians(20)
    dx, dy = 40.0, -40.0  # square 3
    expected = (200 + dx * math.cos(a) + dy * math.sin(a), 150 - dx * math.sin(a) + dy * math.cos(a))
    assert square_centre(3, (200, 150), 20, 40) == pytest.approx(expected)


@pytest.mark.parametrize("angle", [-44.0, -10.0, 0.0, 30.0, 45.0])
def test_square_at_inverts_square_centre(angle: float) -> None:
    for n in range(1, 10):
        x, y = square_centre(n, (210, 140), angle, 38)
        assert square_at(x, y, (210, 140), angle, 38) == n
        assert square_at(x + 12, y - 12, (210, 140), angle, 38) == n  # within the square
    assert square_at(210 + 100, 140, (210, 140), angle, 38) is None


def test_world_from_board_places_every_piece(table: TableConfig) -> None:
    w = world_from_board("X.O.X..O.", 20, (200, 150))
    assert isinstance(w, WorldState)
    assert len(w.pieces) == 10
    assert sum(p.colour == "black" for p in w.pieces) == 5
    assert len({p.piece_id for p in w.pieces}) == 10
    on_board = {p.square: p.colour for p in w.pieces if p.where == "board"}
    assert on_board == {1: "black", 3: "white", 5: "black", 8: "white"}
    assert board_of(w) == w.board == "X.O.X..O."
    for p in w.pieces:
        if p.where == "board":
            assert (p.x_mm, p.y_mm) == pytest.approx(square_centre(p.square, (200, 150), 20, 40))
        else:
            col = table.black_supply if p.colour == "black" else table.white_supply
            assert (p.x_mm, p.y_mm) == pytest.approx(
                (col.x_mm + p.slot * col.dx_mm, col.y_mm + p.slot * col.dy_mm)
            )


def test_supply_slots_empty_the_way_players_take() -> None:
    w = world_from_board("XXO......", device_colour="black")
    slots = {
        c: sorted(p.slot for p in w.pieces if p.where == "supply" and p.colour == c)
        for c in ("black", "white")
    }
    assert slots["black"] == [2, 3, 4]  # the device takes from slot 0 upwards
    assert slots["white"] == [0, 1, 2, 3]  # the person from the last slot downwards
    w = world_from_board("XXO......")
    assert sorted(p.slot for p in w.pieces if p.where == "supply" and p.colour == "white") == [1, 2, 3, 4]


def test_jitter_moves_pieces_within_their_squares() -> None:
    w = world_from_board("XOXOXOXO.", 12, jitter_mm=8, rng=np.random.default_rng(3))
    exact = world_from_board("XOXOXOXO.", 12)
    moved = [(a.x_mm - b.x_mm, a.y_mm - b.y_mm) for a, b in zip(w.pieces, exact.pieces, strict=True)]
    assert any(abs(dx) > 0.5 for dx, _ in moved)
    assert all(abs(dx) <= 8 and abs(dy) <= 8 for dx, dy in moved)
    assert board_of(w) == "XOXOXOXO."
    with pytest.raises(WorldFormatError):
        world_from_board("X........", jitter_mm=3)  # jitter needs an rng


@pytest.mark.parametrize("board", ["", "X", "XOX.O..X.O", "XXXXXX...", "X?.......", "x........"])
def test_bad_boards_are_refused(board: str) -> None:
    with pytest.raises(WorldFormatError):
        world_from_board(board)


def test_minimal_world_file() -> None:
    data = json.dumps(
        {
            "board_center_mm": [200, 150],
            "board_angle_deg": 20,
            "pitch_mm": 40,
            "pieces": [
                {"colour": "black", "square": 5},
                {"colour": "white", "x_mm": 180, "y_mm": 120},
                {"colour": "white", "slot": 4},
                {"colour": "black", "x_mm": 330, "y_mm": 40},
            ],
        }
    ).encode()
    w = world_from_file_data(data)
    assert [p.where for p in w.pieces] == ["board", "board", "supply", "table"]
    assert w.board == board_of(w)
    assert w.board[4] == "X"
    assert w.hand == HandState()


def test_world_file_with_board_string_fills_supplies() -> None:
    w = world_from_file_data(b'{"board": "X.O......", "board_angle_deg": -30, "hand": {"present": true}}')
    assert len(w.pieces) == 10 and w.board == "X.O......" and w.hand.present
    w = world_from_file_data(b'{"board": "X.O......", "fill_supplies": false}')
    assert len(w.pieces) == 2


def test_world_file_round_trips_a_world_state() -> None:
    import msgspec

    original = world_from_board("XO.X.O...", 15, (190, 160), hand=HandState(present=True, x_mm=200, y_mm=150))
    back = world_from_file_data(msgspec.json.encode(original))
    assert back.pieces == original.pieces
    assert back.hand == original.hand and back.board == original.board


def test_piece_in_the_gripper_follows_the_gripper() -> None:
    data = (
        b'{"gripper": {"x_mm": 120, "y_mm": 90, "z_mm": 20},'
        b' "pieces": [{"colour": "white", "where": "gripper"}]}'
    )
    w = world_from_file_data(data)
    assert (w.pieces[0].x_mm, w.pieces[0].y_mm) == (120, 90)
    assert w.gripper.holding == w.pieces[0].piece_id


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"{", "not valid JSON"),
        (b"[]", "invalid world"),
        (b'{"board_angle": 3}', "board_angle"),
        (b'{"pieces": [{"colour": "red", "square": 1}]}', "colour"),
        (b'{"pieces": [{"colour": "black", "square": 10}]}', "square must be 1..9"),
        (b'{"pieces": [{"colour": "black"}]}', "give a square"),
        (b'{"pieces": [{"colour": "black", "x_mm": 3}]}', "both x_mm and y_mm"),
        (b'{"pieces": [{"colour": "black", "slot": 7}]}', "slots 0..4"),
        (b'{"board": "XXXXXXOOO"}', "only 5"),
        (b'{"board_colour": [1, 2, 300]}', "0..255"),
        (b'{"pitch_mm": 0}', "positive"),
        (
            b'{"pieces": [{"colour": "black", "square": 1, "piece_id": 1},'
            b' {"colour": "white", "square": 2, "piece_id": 1}]}',
            "distinct",
        ),
    ],
)
def test_bad_world_files_say_what_is_wrong(data: bytes, words: str) -> None:
    with pytest.raises(WorldFormatError, match=words):
        world_from_file_data(data, TableConfig())
