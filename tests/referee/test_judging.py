"""Every judging case of SPEC 2.2 / issue 7 produces its documented reaction, on the pure judge and
through the state machine."""

from __future__ import annotations

import pytest

from messages import BoardObservation
from messages import game as G
from services.referee import judge as J
from services.referee import machine as M
from services.referee.events import Observation, SendCommand

from .drive import Drive

# The device plays white (task 5); the logical board before the person's second move:
#   X . .
#   . O .
#   . . .
LOGICAL = "X...O...."


@pytest.mark.parametrize(
    ("observed", "illegal", "move"),
    [
        ("X.X.O....", "", 3),  # one new black piece on an empty square: a move
        ("XX..O...X", J.TWO_PIECES, None),
        ("X.O.O....", J.WRONG_COLOUR, None),  # a white (the device's colour) piece appeared
        (".X..O....", J.PERSON_PIECE_MOVED, None),
        ("....O....", J.PERSON_PIECE_REMOVED, None),
        ("....O...X", J.PERSON_PIECE_MOVED, None),
        ("X...O....", J.NO_CHANGE, None),
        ("X...X....", J.OCCUPIED_SQUARE, None),  # the device's piece taken off, a black one in its place
    ],
)
def test_judge_cases(observed: str, illegal: str, move: int | None) -> None:
    verdict = J.judge(LOGICAL, observed, J.WHITE)
    assert verdict.illegal == illegal, verdict.reason
    assert verdict.move == move
    assert not verdict.restores
    assert verdict.reason


def test_cheat_moved_device_piece_is_moved_back() -> None:
    verdict = J.judge(LOGICAL, "X.......O", J.WHITE)
    assert verdict.illegal == "" and verdict.move is None
    (op,) = verdict.restores
    assert (op.kind, op.from_square, op.to_square, op.colour) == ("move", 9, 5, "white")
    assert op.expected == LOGICAL


def test_cheat_removed_device_piece_is_replaced_from_supply() -> None:
    verdict = J.judge(LOGICAL, "X........", J.WHITE)
    (op,) = verdict.restores
    assert (op.kind, op.from_square, op.to_square) == ("place", None, 5)
    assert op.expected == LOGICAL


def test_cheat_and_a_move_both_count() -> None:
    verdict = J.judge(LOGICAL, "X.X.....O", J.WHITE)
    assert verdict.move == 3
    (op,) = verdict.restores
    assert op.kind == "move" and op.from_square == 9 and op.to_square == 5
    assert op.expected == "X.X.O...."


def test_two_device_pieces_cheated_are_restored_one_by_one() -> None:
    logical = "XO..X.O.."  # device white on 2 and 7
    verdict = J.judge(logical, "X...X...O", J.WHITE)  # 2 -> 9, 7 removed
    assert [(op.kind, op.from_square, op.to_square) for op in verdict.restores] == [
        ("move", 9, 2),
        ("place", None, 7),
    ]
    assert verdict.restores[-1].expected == logical


def _at_second_turn() -> Drive:
    """Task 5: the person played 1, the device answered; the person's turn."""
    drive = Drive()
    drive.task(5)
    drive.person_move(1)
    square = drive.device_turn()
    assert drive.phase == M.WAITING_FOR_PERSON
    assert drive.state.board == J.put("X........", square, J.WHITE)
    return drive


@pytest.mark.parametrize(
    "kind",
    [J.TWO_PIECES, J.WRONG_COLOUR, J.PERSON_PIECE_MOVED, J.PERSON_PIECE_REMOVED, J.NO_CHANGE],
)
def test_illegal_waits_for_correction_and_the_next_press(kind: str) -> None:
    drive = _at_second_turn()
    board = drive.state.board
    empty = J.squares_where(board, J.EMPTY)
    observed = {
        J.TWO_PIECES: J.put(J.put(board, empty[0], J.BLACK), empty[1], J.BLACK),
        J.WRONG_COLOUR: J.put(board, empty[0], J.WHITE),
        J.PERSON_PIECE_MOVED: J.put(J.put(board, 1, J.EMPTY), empty[0], J.BLACK),
        J.PERSON_PIECE_REMOVED: J.put(board, 1, J.EMPTY),
        J.NO_CHANGE: board,
    }[kind]
    drive.press()
    assert drive.phase == M.WAITING_FOR_STABLE and not drive.public.lamp
    drive.observe(observed)
    gs = drive.public
    assert gs.illegal == kind and gs.phase == M.WAITING_FOR_PERSON and gs.lamp
    assert gs.illegal_moves == 1 and drive.state.board == board and not drive.has(SendCommand)
    assert "illegal" in drive.logs()
    # the person corrects and presses again: a legal move now
    drive.press()
    assert drive.public.illegal == ""
    drive.observe(J.put(board, empty[0], J.BLACK))
    assert drive.phase in (M.MOVE_REQUESTED, M.GAME_OVER)
    assert drive.state.moves[-1] == empty[0]


def test_moved_device_piece_restored_then_play_goes_on_with_the_persons_move() -> None:
    drive = _at_second_turn()
    board = drive.state.board
    device_sq = J.squares_where(board, J.WHITE)[0]
    empty = J.squares_where(board, J.EMPTY)
    cheat_to, move = empty[-1], empty[0]
    observed = J.put(J.put(J.put(board, device_sq, J.EMPTY), cheat_to, J.WHITE), move, J.BLACK)
    drive.press()
    drive.observe(observed)
    cmd = drive.find(SendCommand).command
    assert (cmd.kind, cmd.from_square, cmd.to_square) == ("move", cheat_to, device_sq)
    assert drive.phase == M.COMMAND_SENT and drive.public.activity == "restoring"
    assert drive.state.moves[-1] == move  # the person's move counts
    drive.complete_placement()
    assert drive.state.cheats_restored == 1
    assert drive.phase == M.MOVE_REQUESTED  # the device's turn now


def test_removed_device_piece_replaced_then_still_the_persons_turn() -> None:
    drive = _at_second_turn()
    board = drive.state.board
    device_sq = J.squares_where(board, J.WHITE)[0]
    drive.press()
    drive.observe(J.put(board, device_sq, J.EMPTY))
    cmd = drive.find(SendCommand).command
    assert (cmd.kind, cmd.to_square, cmd.colour) == ("place", device_sq, "white")
    drive.complete_placement()
    assert drive.phase == M.WAITING_FOR_PERSON and drive.public.lamp
    assert drive.state.board == board and drive.state.cheats_restored == 1


def test_occluded_unstable_or_stale_views_wait_then_time_out() -> None:
    drive = _at_second_turn()
    board = drive.state.board
    moved = J.put(board, J.squares_where(board, J.EMPTY)[0], J.BLACK)
    drive.press()
    press_t = drive.t
    drive.observe(moved, occluded=True)
    drive.observe(moved, stable=False)
    drive.observe(moved, found=False)
    drive.observe(J.put(moved, 9, "?") if moved[8] == "." else moved.replace(".", "?", 1))
    drive.observe(moved, after=-1.0)  # captured before the press
    assert drive.phase == M.WAITING_FOR_STABLE and drive.state.moves == (1, drive.state.moves[1])
    drive.tick(drive.state.settings.stable_timeout_s - (drive.t - press_t) - 0.5)
    assert drive.public.illegal == ""
    drive.tick(1.0)
    gs = drive.public
    assert gs.illegal == G.STABLE_TIMEOUT and gs.phase == M.WAITING_FOR_STABLE and not gs.lamp
    drive.tick(1.0)
    assert not drive.published()  # said once
    drive.observe(moved)  # the hand went away
    assert drive.public.illegal == "" and drive.phase in (M.MOVE_REQUESTED, M.GAME_OVER)


def test_press_ns_zero_uses_arrival_time() -> None:
    drive = _at_second_turn()
    board = drive.state.board
    drive.press(press_ns=0)
    moved = J.put(board, J.squares_where(board, J.EMPTY)[0], J.BLACK)
    # capture_ns 0 too: the observation's arrival after the press counts
    obs = BoardObservation(frame_id=1, found=True, board=moved, stable=True)
    drive.feed(Observation(now=drive.now(), obs=obs))
    assert drive.phase in (M.MOVE_REQUESTED, M.GAME_OVER)
