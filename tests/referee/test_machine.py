"""The pure state machine: placement tasks, operator commands, the AI fallback, placement recovery,
timeouts, liveness and the re-issue of pending work after a restart."""

from __future__ import annotations

import pytest

from messages import ButtonPress, MoveReply
from messages import game as G
from services.ai import core as ai_core
from services.referee import judge as J
from services.referee import machine as M
from services.referee.events import (
    AiReply,
    Button,
    PeerHeartbeat,
    PublishState,
    QueryCommand,
    ReplyOperator,
    RequestMove,
    Restarted,
    Resync,
    SendCommand,
    UseLocalEngine,
)

from .drive import Drive


# ------------------------------------------------------------------------------------ placement tasks
def test_task1_places_black_on_5_and_is_done_when_vision_confirms() -> None:
    drive = Drive()
    drive.task(1)
    cmd = drive.find(SendCommand).command
    assert (cmd.kind, cmd.colour, cmd.to_square) == ("place", "black", 5)
    assert cmd.command_id == f"{drive.state.game_id}-1"
    assert drive.phase == M.COMMAND_SENT and not drive.public.lamp
    drive.report("done")
    assert drive.phase == M.COMMAND_SENT and drive.public.activity == "confirming"
    drive.observe(J.EMPTY_BOARD)  # vision has not caught up yet: keep waiting
    assert drive.phase == M.COMMAND_SENT
    drive.observe("....X....")
    gs = drive.public
    assert (gs.phase, gs.result, gs.board) == (M.GAME_OVER, M.DONE, "....X....")
    (record,) = gs.placements
    assert record.square == 5 and record.within_budget and record.duration_s > 0


@pytest.mark.parametrize(("colours", "expected"), [("", "bbww"), ("bwbw", "bwbw"), ("WWBB", "wwbb")])
def test_task2_places_four_pieces_in_order_with_the_colour_order(colours: str, expected: str) -> None:
    drive = Drive()
    drive.task(2, squares=[1, 5, 9, 3], colours=colours)
    board = J.EMPTY_BOARD
    sent = []
    for i, square in enumerate([1, 5, 9, 3]):
        cmd = drive.find(SendCommand).command
        colour = "black" if expected[i] == "b" else "white"
        assert (cmd.to_square, cmd.colour) == (square, colour)
        sent.append(cmd.command_id)
        drive.report("done")
        board = J.put(board, square, J.BLACK if colour == "black" else J.WHITE)
        assert drive.public.placed == i
        drive.observe(board)
    assert drive.public.result == M.DONE and drive.public.placed == 4
    assert len(set(sent)) == 4


def test_task3_is_task2_with_the_pose_left_to_the_actuator() -> None:
    drive = Drive()
    drive.task(3, squares=[7, 8, 9, 1])
    cmd = drive.find(SendCommand).command
    assert cmd.pose is None  # the actuator uses vision's latest pose of the (rotated) board
    assert drive.public.task == 3 and drive.public.squares == [7, 8, 9, 1]


def test_placement_task_waits_for_targets_to_be_clear() -> None:
    drive = Drive()
    drive.command(action="task", task=2, squares=[1, 2, 3, 4])
    drive.observe("X........")
    assert drive.phase == M.TASK_CHOSEN and drive.public.fault == "board-not-empty"
    assert not drive.has(SendCommand)
    drive.observe("........X")  # a leftover piece elsewhere is fine: it becomes part of the board
    assert drive.find(SendCommand).command.to_square == 1
    assert drive.state.board == "........X"


def test_game_waits_for_an_empty_board() -> None:
    drive = Drive()
    drive.command(action="task", task=5)
    drive.observe("X........")
    assert drive.phase == M.TASK_CHOSEN and "clear the board" in drive.public.message
    drive.observe(J.EMPTY_BOARD)
    assert drive.phase == M.WAITING_FOR_PERSON and drive.public.lamp


# ---------------------------------------------------------------------------------------- operator
@pytest.mark.parametrize(
    ("kw", "error"),
    [
        ({"task": 2, "squares": [0, 1, 2, 3]}, "square 1..9"),
        ({"task": 2, "squares": [1, 2, 3, 10]}, "square 1..9"),
        ({"task": 2, "squares": [1, 2, 2, 3]}, "repeated"),
        ({"task": 3, "squares": [1, 2, 3]}, "needs 4 squares"),
        ({"task": 2, "squares": []}, "needs 4 squares"),
        ({"task": 2, "squares": [1, 2, 3, 4], "colours": "bbbw"}, "2 black and 2 white"),
        ({"task": 2, "squares": [1, 2, 3, 4], "colours": "bbw"}, "4 letters"),
        ({"task": 4, "first": 0}, "square 1..9"),
        ({"task": 4, "first": 10}, "square 1..9"),
        ({"task": 5, "first": 3}, "--first is for tasks 4 and 6"),
        ({"task": 6, "first": 0}, "square 1..9"),
        ({"task": 1, "squares": [3]}, "square 5"),
        ({"task": 7}, "tasks are 1 to 6"),
        ({"task": None}, "tasks are 1 to 6"),
        ({"task": 5, "squares": [1]}, "--squares is for tasks 2 and 3"),
    ],
)
def test_bad_task_arguments_are_refused_with_a_clear_error(kw: dict, error: str) -> None:
    drive = Drive()
    reply = drive.command(action="task", **kw)
    assert not reply.ok and error in reply.error, reply.error
    assert drive.phase == M.IDLE


def test_a_task_while_a_game_runs_is_refused_then_stop_ends_it() -> None:
    drive = Drive()
    drive.task(5)
    reply = drive.command(action="task", task=1)
    assert not reply.ok and "running" in reply.error and "sanzi stop" in reply.error
    assert drive.phase == M.WAITING_FOR_PERSON
    assert drive.command(action="stop").ok
    assert (drive.public.phase, drive.public.result, drive.public.lamp) == (M.GAME_OVER, M.STOPPED, False)
    first_game = drive.state.game_id
    assert drive.command(action="task", task=1).ok  # a new task after game over
    assert drive.state.game_id != first_game and drive.state.game_counter == 2


def test_a_repeated_command_id_is_answered_again_not_executed_twice() -> None:
    drive = Drive()
    first = drive.command(command_id="same", action="task", task=5)
    state = drive.state
    again = drive.command(command_id="same", action="task", task=5)
    assert again == first and again.ok
    assert drive.state is state  # nothing changed, nothing to journal
    assert drive.find(ReplyOperator).reply == first


def test_level_is_validated_and_used_in_the_next_request() -> None:
    drive = Drive()
    bad = drive.command(action="level", level="godlike")
    assert not bad.ok and "unknown level" in bad.error and "perfect" in bad.error
    assert drive.command(action="level", level="Easy").ok
    drive.task(4)
    assert drive.find(RequestMove).request.level == "easy"
    assert drive.public.level == "easy"


# ------------------------------------------------------------------------------------------------ AI
def test_ai_timeout_uses_the_engine_in_process_with_the_same_seed() -> None:
    drive = Drive()
    drive.task(5)
    drive.person_move(1)
    request = drive.find(RequestMove).request
    drive.tick(0.5)
    assert drive.phase == M.MOVE_REQUESTED
    drive.tick(1.0)  # ai_timeout_s (1 s) passed
    local = drive.find(UseLocalEngine)
    assert local.square == ai_core.answer(request).square  # the AI process would have said the same
    assert drive.find(SendCommand).command.to_square == local.square
    assert "using the engine in-process" in drive.logs()
    # the late AI reply is ignored
    drive.feed(AiReply(now=drive.now(), reply=ai_core.answer(request)))
    assert drive.phase == M.COMMAND_SENT and not drive.has(SendCommand)


@pytest.mark.parametrize(
    "reply",
    [
        MoveReply(request_id="?", square=1),  # occupied by the person's piece
        MoveReply(request_id="?", square=0, error="bad board"),
        MoveReply(request_id="?", square=12),
    ],
)
def test_a_bad_ai_reply_falls_back_to_the_local_engine(reply: MoveReply) -> None:
    drive = Drive()
    drive.task(5)
    drive.person_move(1)
    request = drive.find(RequestMove).request
    import msgspec

    drive.ai(msgspec.structs.replace(reply, request_id=request.request_id))
    assert drive.find(UseLocalEngine).square == ai_core.answer(request).square


def test_requests_are_seeded_by_game_and_move_so_a_replay_decides_the_same() -> None:
    drive = Drive(M.Settings(required_peers=(), seed=5))
    drive.task(4, first=1)
    r0 = drive.find(RequestMove).request
    assert r0.seed == ai_core.request_seed(5, 1, 0) and r0.first_square == 1
    drive.device_turn()
    drive.person_move(5)
    r2 = drive.find(RequestMove).request
    assert r2.seed == ai_core.request_seed(5, 1, 2) and r2.first_square is None
    assert r2.board == "X...O...." and r2.to_move == "X"


# ---------------------------------------------------------------------------------- placement recovery
def _device_move_sent() -> tuple[Drive, int, str]:
    drive = Drive()
    drive.task(5)
    drive.person_move(1)
    drive.ai()
    cmd = drive.find(SendCommand).command
    return drive, cmd.to_square, drive.state.pending.expected  # type: ignore[union-attr]


def test_dropped_piece_is_replaced_after_the_confirmation_timeout() -> None:
    drive, square, _expected = _device_move_sent()
    drive.report("done")
    drive.observe("X........")  # the piece is not there (vision might lag: wait)
    assert drive.phase == M.COMMAND_SENT and not drive.has(SendCommand)
    drive.tick(drive.state.settings.confirm_timeout_s + 0.5)
    cmd = drive.find(SendCommand).command
    assert (cmd.kind, cmd.to_square, cmd.colour) == ("place", square, "white")
    gs = drive.public
    assert gs.illegal == G.PLACEMENT_FAILED and gs.activity == "recovering" and gs.fault
    assert gs.pending_command == cmd.command_id and gs.placement_elapsed_s > 10
    drive.complete_placement()
    gs = drive.public
    assert gs.phase == M.WAITING_FOR_PERSON and gs.illegal == "" and gs.fault == ""
    record = gs.placements[-1]
    assert record.command_id == cmd.command_id and record.duration_s > 10


def test_piece_on_the_wrong_square_is_moved_to_the_right_one() -> None:
    drive, square, expected = _device_move_sent()
    wrong = next(s for s in J.squares_where(expected, J.EMPTY))
    drive.report("done")
    drive.observe(J.put(J.put(expected, square, J.EMPTY), wrong, J.WHITE))
    drive.tick(10.5)
    cmd = drive.find(SendCommand).command
    assert (cmd.kind, cmd.from_square, cmd.to_square) == ("move", wrong, square)


def test_failed_command_recovers_on_the_next_view_without_waiting() -> None:
    drive, _square, _expected = _device_move_sent()
    drive.report("failed", reason="alarm: hard limit")
    gs = drive.public
    assert gs.illegal == G.PLACEMENT_FAILED and "hard limit" in gs.fault
    drive.observe("X........")
    assert drive.find(SendCommand).command.kind == "place"


def test_recovery_gives_up_after_the_retries_and_waits_for_a_fixed_board() -> None:
    drive, _square, expected = _device_move_sent()
    retries = drive.state.settings.placement_retries
    for _ in range(retries):
        drive.report("done")
        drive.observe("X........")
        drive.tick(10.5)
        assert drive.has(SendCommand)
    drive.report("done")
    drive.observe("X........")
    drive.tick(10.5)
    assert not drive.has(SendCommand)
    gs = drive.public
    assert gs.phase == M.COMMAND_SENT and "fix it by hand" in gs.fault and gs.illegal == G.PLACEMENT_FAILED
    drive.observe("X........")
    assert not drive.has(SendCommand)
    drive.observe(expected)  # somebody put the piece there
    assert drive.phase == M.WAITING_FOR_PERSON and drive.public.fault == ""


def test_an_unexplained_board_is_never_played_on() -> None:
    drive, square, expected = _device_move_sent()
    drive.report("done")
    drive.observe(J.put(J.put(expected, 1, J.EMPTY), 9 if square != 9 else 8, J.BLACK))
    drive.tick(10.5)
    assert not drive.has(SendCommand) and drive.phase == M.COMMAND_SENT
    assert "fix it by hand" in drive.public.fault
    drive.observe(expected)
    assert drive.phase == M.WAITING_FOR_PERSON


def test_no_view_at_all_is_reported() -> None:
    drive, _, _ = _device_move_sent()
    drive.report("done")
    drive.tick(10.5)
    assert drive.public.illegal == G.PLACEMENT_FAILED and "not confirmed" in drive.public.fault


def test_an_actuator_restart_is_noticed_by_its_pid_and_the_command_queried_at_once() -> None:
    drive = Drive()
    drive.feed(PeerHeartbeat(now=drive.now(), process="actuator", pid=100))
    drive.task(1)
    cmd = drive.find(SendCommand).command
    drive.feed(PeerHeartbeat(now=drive.now(), process="actuator", pid=100))
    assert not drive.has(QueryCommand)  # the same process: nothing to ask
    drive.tick(0.5)
    drive.feed(PeerHeartbeat(now=drive.now(), process="actuator", pid=101))  # restarted within 3 s
    query = drive.find(QueryCommand).command
    assert (query.kind, query.command_id) == ("query", cmd.command_id)


def test_the_first_placement_of_a_task_says_the_supplies_are_full() -> None:
    drive = Drive()
    drive.task(2, squares=[1, 5, 9, 3])
    first = drive.find(SendCommand).command
    assert first.reset_supply
    drive.report("done")
    drive.observe("X........")
    assert not drive.find(SendCommand).command.reset_supply


def test_silent_actuator_is_queried_and_an_unknown_command_sent_again() -> None:
    drive, _, _ = _device_move_sent()
    cmd = drive.find(SendCommand).command
    drive.tick(drive.state.settings.command_timeout_s + 0.5)
    query = drive.find(QueryCommand).command
    assert (query.kind, query.command_id) == ("query", cmd.command_id)
    drive.report("unknown", command_id=cmd.command_id)
    assert drive.find(SendCommand).command == cmd  # the same id: carried out at most once


def test_over_budget_placement_is_recorded_as_such() -> None:
    drive, _, expected = _device_move_sent()
    drive.tick(16.0)
    assert "placement over its budget" in drive.logs()
    drive.tick(1.0)
    assert not drive.logs()  # said once
    drive.report("done")
    drive.observe(expected)
    assert not drive.public.placements[-1].within_budget


# -------------------------------------------------------------------------------------- liveness
def test_a_silent_required_peer_pauses_the_game_and_its_return_resumes_it() -> None:
    drive = Drive(M.Settings(ai_timeout_s=60.0))
    drive.feed(Restarted(now=drive.now()))  # every required peer gets a full timeout from here
    drive.task(5)
    drive.person_move(1)
    request = drive.find(RequestMove).request
    drive.tick(1.0)
    for name in ("vision", "led"):
        drive.feed(PeerHeartbeat(now=drive.now(), process=name))
    drive.tick(2.5)  # the actuator has not been heard since the start, > 3 s ago
    gs = drive.public
    assert gs.phase == M.PAUSED and gs.peers_down == ["actuator"] and gs.paused_phase == M.MOVE_REQUESTED
    assert not gs.lamp
    drive.feed(AiReply(now=drive.now(), reply=ai_core.answer(request)))  # ignored while paused
    assert drive.state.phase == M.MOVE_REQUESTED and not drive.has(SendCommand)
    drive.tick(5.0)  # no local fallback while paused; by now everybody is silent
    assert not drive.has(UseLocalEngine)
    assert drive.public.peers_down == ["actuator", "led", "vision"]
    refused = drive.command(action="task", task=1)
    assert not refused.ok
    for name in ("vision", "led"):
        drive.feed(PeerHeartbeat(now=drive.now(), process=name))
        assert not drive.has(RequestMove)
    drive.feed(PeerHeartbeat(now=drive.now(), process="actuator"))
    assert drive.find(RequestMove).request == request  # asked again, same id and seed
    assert drive.public.phase == M.MOVE_REQUESTED and drive.public.peers_down == []
    assert any(isinstance(a, PublishState) for a in drive.actions)


def test_heartbeats_of_processes_nobody_waits_for_change_nothing() -> None:
    drive = Drive(M.Settings())
    state = drive.state
    drive.feed(PeerHeartbeat(now=drive.now(), process="simcam"))
    assert drive.state is state


def test_restart_queries_a_pending_command_and_resends_a_pending_request() -> None:
    drive, _, _ = _device_move_sent()
    cmd = drive.find(SendCommand).command
    drive.feed(Restarted(now=drive.now()))
    assert drive.find(QueryCommand).command.command_id == cmd.command_id
    assert not drive.has(SendCommand)
    drive.report("done", repeat=True)  # it had been carried out
    assert drive.public.activity == "confirming"

    drive2 = Drive()
    drive2.task(4)
    request = drive2.find(RequestMove).request
    drive2.feed(Restarted(now=drive2.now()))
    assert drive2.find(RequestMove).request == request


def test_revision_grows_by_one_per_published_change_only() -> None:
    drive = Drive()
    revisions = []
    drive.task(5)
    revisions.append(drive.state.revision)
    drive.press()
    revisions.append(drive.state.revision)
    drive.observe("X........")
    revisions.append(drive.state.revision)
    assert revisions == sorted(revisions) and len(set(revisions)) == 3
    state = drive.state
    drive.tick(0.1)
    assert drive.state is state and not drive.actions
    published = [a.state for a in drive.actions if isinstance(a, PublishState)]
    assert all(p.revision == drive.state.revision for p in published)


def test_task6_with_first_has_the_device_open_as_black() -> None:
    drive = Drive()
    drive.task(6, first=7)
    assert drive.public.device_colour == "black"
    assert drive.device_turn() == 7


def test_a_task_is_refused_while_a_required_peer_is_down() -> None:
    drive = Drive(M.Settings())
    drive.feed(Restarted(now=drive.now()))
    drive.tick(3.5)
    reply = drive.command(action="task", task=1)
    assert not reply.ok and "not running" in reply.error and "vision" in reply.error
    assert drive.public.phase == M.PAUSED and drive.public.paused_phase == M.IDLE


def test_button_outside_the_persons_turn_is_ignored() -> None:
    drive = Drive()
    drive.task(4)
    state = drive.state
    drive.press()
    assert "button ignored: not the person's turn" in drive.logs()
    # ignored, but acknowledged (the panel stops announcing it): nothing else changed
    assert drive.state == M._replace(state, press_ack=1, revision=state.revision + 1)
    assert drive.public.press_ack == 1


# ------------------------------------------------------------- delivery that survives restarts (#12)
def test_a_report_lost_on_the_way_is_asked_for_again_while_waiting() -> None:
    drive, _, expected = _device_move_sent()
    cmd = drive.find(SendCommand).command
    drive.report("accepted")
    drive.tick(drive.state.settings.requery_s / 2)
    assert not drive.has(QueryCommand)  # news is recent
    drive.tick(drive.state.settings.requery_s)  # the "done" was lost (say, with the bus)
    query = drive.find(QueryCommand).command
    assert (query.kind, query.command_id) == ("query", cmd.command_id)
    drive.report("done", repeat=True)  # answered from the actuator's record
    assert drive.state.pending.status == M.DONE_STATUS  # type: ignore[union-attr]
    drive.observe(expected)
    assert drive.phase == M.WAITING_FOR_PERSON
    assert [p.square for p in drive.public.placements] == [cmd.to_square]


def test_a_bus_restart_asks_again_at_once() -> None:
    drive, _, _ = _device_move_sent()
    drive.feed(PeerHeartbeat(now=drive.now(), process="bus", pid=10))
    assert not drive.has(QueryCommand)  # the first bus heard: nothing to ask
    drive.feed(PeerHeartbeat(now=drive.now(), process="bus", pid=11))
    assert drive.find(QueryCommand).command.command_id == drive.state.pending.command.command_id  # type: ignore[union-attr]


def test_a_sequence_gap_asks_again_but_not_in_a_burst() -> None:
    drive, _, _ = _device_move_sent()
    drive.tick(drive.state.settings.requery_s / 2)
    drive.feed(Resync(now=drive.now(), reason="sequence gap"))
    assert drive.has(QueryCommand)
    drive.feed(Resync(now=drive.now(0.01), reason="sequence gap"))
    assert not drive.has(QueryCommand)  # just asked
    # a move request is asked for again too
    drive2 = Drive()
    drive2.task(4)
    request = drive2.find(RequestMove).request
    drive2.feed(Resync(now=drive2.now(0.5), reason="ai restarted"))
    assert drive2.find(RequestMove).request == request
    # nothing pending: nothing to do, nothing journaled
    drive3 = Drive()
    before = drive3.state
    drive3.feed(Resync(now=drive3.now(), reason="sequence gap"))
    assert drive3.state is before and not drive3.actions


def test_a_press_announced_again_is_taken_once_and_acknowledged() -> None:
    drive = Drive()
    drive.task(5)
    assert drive.phase == M.WAITING_FOR_PERSON
    press = ButtonPress(press_id=1_700_000_000_001, press_ns=int(drive.now() * 1e9))
    drive.feed(Button(now=drive.now(), press=press))
    assert drive.phase == M.WAITING_FOR_STABLE and drive.public.press_ack == press.press_id
    drive.observe("X........")
    assert drive.phase == M.MOVE_REQUESTED
    state = drive.state
    drive.feed(Button(now=drive.now(), press=press))  # the panel had not seen the ack yet
    assert drive.state is state and "button press repeated: already taken" in drive.logs()
    # an older id (announced late) is a repeat too; an id <= 0 is a tool's press, never acknowledged
    drive.feed(Button(now=drive.now(), press=ButtonPress(press_id=press.press_id - 5)))
    assert drive.state is state
    drive.feed(Button(now=drive.now(), press=ButtonPress(press_id=-1)))
    assert drive.public.press_ack == press.press_id


def test_a_press_while_paused_is_not_acknowledged_so_it_comes_again_after_the_pause() -> None:
    drive = Drive(M.Settings(required_peers=("vision",)))
    drive.feed(Restarted(now=drive.now()))
    drive.feed(PeerHeartbeat(now=drive.now(), process="vision", pid=5))
    drive.task(5)
    drive.tick(3.5)  # vision silent: paused
    assert drive.state.paused
    press = ButtonPress(press_id=42, press_ns=int(drive.now() * 1e9))
    drive.feed(Button(now=drive.now(), press=press))
    assert drive.public.press_ack == 0
    drive.feed(PeerHeartbeat(now=drive.now(), process="vision", pid=5))
    drive.feed(Button(now=drive.now(), press=press))  # announced again by the panel
    assert drive.phase == M.WAITING_FOR_STABLE and drive.public.press_ack == 42


def test_settings_default_to_the_configuration_defaults() -> None:
    """The settings repeat no default: each comes from the configuration section it is read from."""
    from services.common import config as config_module

    assert M.Settings() == M.Settings.from_config(config_module.load(None))
    changed = config_module.load(
        None, overrides={"referee": {"seed": 7, "required_peers": ["vision"]}, "bus": {"peer_timeout_s": 5.0}}
    )
    settings = M.Settings.from_config(changed)
    assert (settings.seed, settings.required_peers, settings.peer_timeout_s) == (7, ("vision",), 5.0)
