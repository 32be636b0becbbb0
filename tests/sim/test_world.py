"""The simulated world's physics, pure: picking, dropping, squares, the person's actions, conservation."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import pytest

from messages import WorldAction, WorldState
from services.simworld.world import PIECE_COUNT, ConservationError, World, WorldError


def make_world(config: Any, **sim: Any) -> World:
    cfg = msgspec.structs.replace(config.simworld, **sim) if sim else config.simworld
    return World(cfg, config.table)


def act(kind: str, **fields: Any) -> WorldAction:
    return WorldAction(action_id="t", kind=kind, **fields)  # type: ignore[arg-type]


def test_start_every_piece_in_its_supply_slot(config: Any) -> None:
    world = make_world(config)
    snap = world.snapshot()
    assert len(snap.pieces) == PIECE_COUNT
    assert [p.where for p in snap.pieces] == ["supply"] * 10
    assert [p.slot for p in snap.pieces] == [0, 1, 2, 3, 4] * 2
    assert [p.colour for p in snap.pieces] == ["black"] * 5 + ["white"] * 5
    assert (snap.pieces[0].x_mm, snap.pieces[0].y_mm) == (40.0, 80.0)
    assert snap.board == "." * 9


@pytest.mark.parametrize("angle", [0.0, 30.0, -45.0, 45.0])
def test_square_centres_follow_the_geometry_doc(config: Any, angle: float) -> None:
    world = make_world(config, board_angle_deg=angle)
    a = math.radians(angle)
    for n in range(1, 10):
        r, c = divmod(n - 1, 3)
        dx, dy = (c - 1) * 40.0, (r - 1) * 40.0
        want = (200 + dx * math.cos(a) + dy * math.sin(a), 150 - dx * math.sin(a) + dy * math.cos(a))
        got = world.square_center(n)
        assert got == pytest.approx(want)
        assert world.square_at(*got) == n


def test_positive_angle_turns_counter_clockwise_as_seen_from_above(config: Any) -> None:
    # Square 3 (top right) of a board turned 30 degrees CCW moves up in the image (y smaller).
    flat = make_world(config).square_center(3)
    turned = make_world(config, board_angle_deg=30.0).square_center(3)
    assert turned[1] < flat[1]


def test_magnet_picks_within_tolerance_and_nothing_beyond(config: Any) -> None:
    world = make_world(config)
    world.move_gripper(40.0 + 5.0, 80.0, 0.0)  # 5 mm off slot 0 (tolerance 6)
    world.set_magnet(True)
    assert world.gripper.holding == 0
    world.set_magnet(False)
    world2 = make_world(config)
    world2.move_gripper(40.0 + 7.0, 80.0, 0.0)
    world2.set_magnet(True)
    assert world2.gripper.holding is None


def test_magnet_high_above_picks_nothing(config: Any) -> None:
    world = make_world(config)
    world.move_gripper(40.0, 80.0, 10.0)
    world.set_magnet(True)
    assert world.gripper.holding is None
    world.move_gripper(40.0, 80.0, 0.0)
    world.try_pick()  # what the planner does after each block with the magnet on
    assert world.gripper.holding == 0


def test_drop_on_a_line_is_ambiguous_and_over_a_piece_stacks(config: Any) -> None:
    world = make_world(config)
    world.move_gripper(40.0, 80.0, 0.0)
    world.set_magnet(True)
    x5, y5 = world.square_center(5)
    world.move_gripper(x5 + 20.0, y5, 5.0)  # on the line between squares 5 and 6
    world.set_magnet(False)
    snap = world.snapshot()
    assert snap.pieces[0].where == "board"
    assert snap.board[4] == "?" or snap.board[5] == "?"
    # a white piece dropped on top of the black one
    world.move_gripper(360.0, 80.0, 0.0)
    world.set_magnet(True)
    world.move_gripper(x5 + 20.0, y5, 5.0)
    world.set_magnet(False)
    assert world.piece(5).layer > world.piece(0).layer
    assert world.pieces_on(world.square_at(x5 + 20.0, y5) or 0)[0].piece_id == 5
    world.check()


def test_person_takes_from_the_last_slot_and_places_squarely(config: Any) -> None:
    world = make_world(config, seed=3)
    world.apply(act("place", colour="white", to_square=1))
    snap = world.snapshot()
    assert snap.pieces[9].square == 1 and snap.pieces[9].where == "board"
    assert snap.board == "O........"
    world.apply(act("place", colour="white", to_square=9))
    assert world.snapshot().pieces[8].square == 9


def test_move_remove_and_replace(config: Any) -> None:
    world = make_world(config)
    world.apply(act("place", colour="black", to_square=5))
    world.apply(act("move", from_square=5, to_square=7))
    assert world.board_string() == "......X.."
    world.apply(act("remove", from_square=7))
    snap = world.snapshot()
    assert snap.board == "." * 9
    assert (snap.pieces[4].where, snap.pieces[4].slot) == ("supply", 4)  # back where it came from
    # a device piece (taken from slot 0) goes back into the highest free slot
    world.move_gripper(360.0, 80.0, 0.0)
    world.set_magnet(True)
    world.move_gripper(*world.square_center(3), 5.0)
    world.set_magnet(False)
    world.apply(act("remove", from_square=3))
    assert (world.snapshot().pieces[5].where, world.snapshot().pieces[5].slot) == ("supply", 0)
    world.apply(act("place", colour="white", to_square=1))
    world.apply(act("remove", from_square=1))
    assert world.snapshot().pieces[9].slot == 4
    world.check()


def test_bad_actions_are_clear_errors_and_change_nothing(config: Any) -> None:
    world = make_world(config)
    before = world.snapshot()
    with pytest.raises(WorldError, match="no piece on square 5"):
        world.apply(act("move", from_square=5, to_square=1))
    with pytest.raises(WorldError, match="square"):
        world.apply(act("place", colour="black", to_square=10))
    with pytest.raises(WorldError, match="colour"):
        world.apply(act("place", to_square=1))
    with pytest.raises(WorldError, match="45"):
        world.apply(act("board", angle_deg=60.0))
    assert world.snapshot() == before


def test_turning_the_board_carries_its_pieces(config: Any) -> None:
    world = make_world(config, place_jitter_mm=0.0)
    world.apply(act("place", colour="black", to_square=3))
    world.apply(act("board", x_mm=210.0, y_mm=140.0, angle_deg=25.0))
    assert world.board_string() == "..X......"
    assert (world.piece(4).x_mm, world.piece(4).y_mm) == pytest.approx(world.square_center(3))


def test_hand_and_reset(config: Any) -> None:
    world = make_world(config)
    world.apply(act("hand", to_square=5, present=True))
    assert world.snapshot().hand.present
    assert (world.hand.x_mm, world.hand.y_mm) == pytest.approx(world.square_center(5))
    world.apply(act("place", colour="black", to_square=5))
    world.apply(act("reset"))
    snap = world.snapshot()
    assert not snap.hand.present and [p.where for p in snap.pieces] == ["supply"] * 10


def test_conservation_is_checked(config: Any) -> None:
    world = make_world(config)
    world.pieces[3].held = True  # a piece in the gripper the gripper does not know about
    with pytest.raises(ConservationError):
        world.check()


def test_snapshot_round_trips_through_a_world_file(config: Any) -> None:
    world = make_world(config, seed=1)
    world.apply(act("place", colour="black", to_square=5))
    world.apply(act("board", angle_deg=-20.0))
    state = world.snapshot()
    data = msgspec.json.encode(state)
    other = make_world(config)
    other.load_state(msgspec.json.decode(data, type=WorldState))
    assert other.snapshot().pieces == state.pieces
    assert other.board_string() == state.board


def test_deterministic_for_a_seed(config: Any) -> None:
    def run() -> WorldState:
        world = make_world(config, seed=7)
        for sq in (1, 5, 9):
            world.apply(act("place", colour="white", to_square=sq))
        return world.snapshot()

    assert run() == run()
