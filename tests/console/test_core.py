"""The console's pure core: the timeline from game states, health from heartbeats, request checks, the
frame pairing and one page's frame flow (dropped, never queued), and vision's own overlay on a bus reading."""

from __future__ import annotations

import numpy as np
import pytest

from messages import BoardObservation, BoardPose, CameraFrame, GameState, Header, Heartbeat, Point
from services.console import core

from .conftest import world_state


def _header(source: str = "referee", pid: int = 1, mono_ns: int = 0) -> Header:
    return Header(type="x", version=1, source=source, pid=pid, seq=1, mono_ns=mono_ns, wall_ns=0)


def test_the_timeline_tells_the_game() -> None:
    start = GameState(revision=1, game_id="g1", task=6, phase="waiting-for-person")
    moved = GameState(revision=2, game_id="g1", task=6, phase="device-to-move", moves=[5])
    cheat = GameState(
        revision=3,
        game_id="g1",
        task=6,
        phase="device-to-move",
        moves=[5, 1],
        cheats_restored=1,
        illegal="two-pieces",
        message="two new pieces",
        peers_down=["vision"],
    )
    over = GameState(
        revision=4, game_id="g1", task=6, phase="game-over", moves=[5, 1], result="draw", cheats_restored=1
    )
    assert core.game_events(None, start) == [("game", "game g1: task 6"), ("phase", "waiting-for-person")]
    assert core.game_events(start, moved) == [("phase", "device-to-move"), ("move", "move 1: square 5")]
    kinds = [k for k, _ in core.game_events(moved, cheat)]
    assert kinds == ["move", "illegal", "cheat", "peer"]
    assert ("result", "result: draw") in core.game_events(cheat, over)
    assert ("peer", "vision is back") in core.game_events(cheat, over)
    assert core.game_events(over, over) == []


def test_the_newest_referee_state_wins_and_restarts_are_counted() -> None:
    view = core.ConsoleCore(peer_timeout_s=3.0)
    assert view.take("referee.state", _header(), GameState(revision=5, phase="idle"), 0, 0.0) == {
        "game",
        "timeline",
    }
    assert view.take("referee.state", _header(), GameState(revision=4, phase="judged"), 0, 0.0) == set()
    assert view.state is not None and view.state.phase == "idle"
    # a restarted referee (a new pid) numbers afresh
    view.take("referee.state", _header(pid=2), GameState(revision=1, phase="judged"), 0, 0.0)
    assert view.state.phase == "judged"
    api = view.api_state()
    assert {"phase", "board", "task"} <= set(api) and len(api["board"]) == 9

    beat = Heartbeat(process="vision", pid=10, seq=1)
    view.take("sys.heartbeat", _header("vision", 10, mono_ns=1_000_000_000), beat, 1_000_000_000, 0.0)
    view.take(
        "sys.heartbeat",
        _header("vision", 11, mono_ns=2_000_000_000),
        Heartbeat(process="vision", pid=11, seq=1),
        0,
        0.0,
    )
    rows = {p["name"]: p for p in view.health_view(now_ns=2_500_000_000)["processes"]}
    assert rows["vision"]["restarts"] == 1 and rows["vision"]["alive"]
    assert not view.health_view(now_ns=9_000_000_000)["processes"][0]["alive"]
    topics = {t["topic"]: t for t in view.health_view(now_ns=2_500_000_000)["topics"]}
    assert topics["sys.heartbeat"]["expected_hz"] == 1.0


def test_requests_are_checked_before_anything_is_sent() -> None:
    cmd = core.parse_operator(core.OperatorRequest(action="task", task=2, squares=[1, 5, 9, 3]), "id1")
    assert (cmd.action, cmd.task, cmd.squares, cmd.command_id) == ("task", 2, [1, 5, 9, 3], "id1")
    assert core.parse_operator(core.OperatorRequest(action="level", level="easy"), "i").level == "easy"
    with pytest.raises(core.BadRequest, match=r"1\.\.6"):
        core.parse_operator(core.OperatorRequest(action="task", task=0), "i")
    with pytest.raises(core.BadRequest, match="unknown field"):
        core.decode_body(b'{"action": "stop", "x": 1}', core.OperatorRequest)
    world = world_state("X........", [], 1)
    state = GameState(revision=1, person_colour="white")
    assert core.parse_place(core.PlaceRequest(square=2), "a", world, state).colour == "white"
    with pytest.raises(core.Conflict, match="not empty"):
        core.parse_place(core.PlaceRequest(square=1), "a", world, state)
    with pytest.raises(core.Conflict, match="not been heard"):
        core.parse_place(core.PlaceRequest(square=1), "a", None, state)
    assert core.parse_move(core.MoveRequest(from_square=1, to_square=9), "a", world).to_square == 9
    assert core.parse_human(core.HumanRequest(policy="web")).policy == "web"


def _frame(i: int) -> tuple[CameraFrame, BoardObservation]:
    frame = CameraFrame(frame_id=i, width=2, height=1, data=b"\0" * 6, capture_ns=i * 1000)
    return frame, BoardObservation(frame_id=i, found=False, capture_ns=i * 1000)


def test_frames_wait_for_vision_and_go_bare_when_it_is_silent() -> None:
    pairer = core.FramePairer()
    f1, o1 = _frame(1)
    f2, o2 = _frame(2)
    assert pairer.on_observation(o1, now_ns=10**9) is None  # no frame of it held
    assert pairer.on_frame(f1, now_ns=10**9) is None  # vision spoke just now: wait for its reading
    assert pairer.on_frame(f2, now_ns=10**9) is None
    pair = pairer.on_observation(o2, now_ns=10**9)
    assert pair is not None and pair.frame is f2 and pair.obs is o2
    assert pairer.on_observation(o1, now_ns=10**9) is None  # older than what was shown: dropped with it
    f3, _ = _frame(3)
    silent = pairer.on_frame(f3, now_ns=10**9 + core.VISION_SILENT_NS + 1)
    assert silent is not None and silent.obs is None and pairer.seq == 2


def test_a_slow_page_gets_the_newest_frame_never_a_queue() -> None:
    flow = core.ClientFlow(ack_timeout_ns=1_000_000_000, min_interval_ns=50_000_000)
    flow.offer(1, 100, b"one")
    assert flow.take(now_ns=10**9) == (1, b"one")
    for seq in range(2, 10):  # the page has not shown frame 1 yet: each new frame replaces the last
        flow.offer(seq, seq * 100, b"f%d" % seq)
        assert flow.take(now_ns=10**9 + seq) is None
    assert flow.dropped == 7 and flow.waiting is not None and flow.waiting[0] == 9
    assert flow.acked(1, now_ns=10**9 + 10**8)
    assert not flow.acked(1, now_ns=10**9 + 10**8)  # once only
    assert flow.take(now_ns=10**9 + 10**8) == (9, b"f9")
    # an acknowledgement that never comes holds the page back only for ack_timeout
    flow.offer(10, 1000, b"ten")
    assert flow.take(now_ns=10**9 + 10**8 + 10) is None
    assert flow.take(now_ns=10**9 + 10**8 + 1_000_000_000) == (10, b"ten")
    stats = flow.stats(now_ns=2 * 10**9)
    assert (stats["sent"], stats["shown"], stats["dropped"]) == (3, 1, 7)


def test_a_page_says_how_long_until_it_may_take_a_frame() -> None:
    """None while a frame flies (its acknowledgement says when), else the wait the frame-rate limit
    imposes: the frame loop looks again then, so an acknowledgement that comes early still gets the
    newest frame."""
    flow = core.ClientFlow(ack_timeout_ns=10**9, min_interval_ns=50_000_000)
    assert flow.wait_ns(0) == 0
    flow.offer(1, 0, b"one")
    assert flow.take(now_ns=10**6) == (1, b"one")
    assert flow.wait_ns(2 * 10**6) is None
    assert flow.acked(1, now_ns=3 * 10**6)
    assert flow.wait_ns(3 * 10**6) == 47 * 10**6  # the next is due one interval (50 ms) on
    assert flow.wait_ns(60 * 10**6) == 0
    assert flow.wait_ns(10**6 + 10**9) == 0


def test_the_overlay_is_visions_own_drawing_of_the_bus_reading() -> None:
    from services.console import overlay
    from services.vision.annotate import annotate
    from services.vision.detector import Detection

    pose = BoardPose(
        center_px=Point(320, 240),
        angle_deg=0.0,
        corners_px=(Point(230, 150), Point(410, 150), Point(410, 330), Point(230, 330)),
    )
    obs = BoardObservation(frame_id=1, found=True, board="X...O....", pose=pose, capture_ns=5)
    image = np.full((480, 640, 3), 120, np.uint8)
    frame = CameraFrame(frame_id=1, width=640, height=480, data=image.tobytes(), capture_ns=5)
    drawn = overlay.render(core.Pair(frame, obs))
    assert np.array_equal(drawn, annotate(image, Detection.from_observation(obs)))
    assert not np.array_equal(drawn, image)  # the grid is drawn
    bare = overlay.render(core.Pair(frame, None))
    assert not np.array_equal(bare, image)  # the "no reading" banner
    assert overlay.to_jpeg(core.Pair(frame, obs), 70)[:2] == b"\xff\xd8"


def test_the_frame_rate_limit_keeps_the_rate_when_frames_come_on_the_cameras_beat() -> None:
    """Frames every 33 ms, at most 12 a second: about 12 go (waiting a whole interval after each late
    frame would give 10)."""
    flow = core.ClientFlow(ack_timeout_ns=10**9, min_interval_ns=10**9 // 12)
    sent = 0
    for i in range(300):  # 10 s of a 30 fps camera, each frame shown at once
        now = i * 33_333_333
        flow.offer(i + 1, now, b"f")
        item = flow.take(now)
        if item is not None:
            sent += 1
            flow.acked(item[0], now)
    assert 118 <= sent <= 121
