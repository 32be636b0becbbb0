"""Recording from and replaying onto a real bus (in-process forwarders): what is recorded reads back equal,
play republishes in order with rate, topic filter, start offset, loop and --instead-of, and the CLI
commands record/play/info work end to end."""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import zmq.asyncio

import messages
from launch.cli import main as sanzi
from launch.commands.info import summarise
from launch.logview import Follower
from launch.recording import make_filter, record_bus, replay_into
from messages import (
    BoardObservation,
    BoardPose,
    ButtonPress,
    CameraFrame,
    Channel,
    GameState,
    Heartbeat,
    MoveReply,
    Point,
)
from services.bus.client import Publisher, Subscriber
from services.common.recording import FileHeader, Record, Recording, RecordingError, RecordingWriter
from services.common.viewer import ANNOTATIONS_TOPIC, CAMERA_TOPIC, LOG_TOPIC

from .bushelp import WARM_TOPIC, collect, start_sanzi, wait_exit, warm_up
from .conftest import frames_for


@pytest.fixture
async def actx() -> AsyncIterator[zmq.asyncio.Context]:
    ctx = zmq.asyncio.Context()
    yield ctx
    ctx.destroy(linger=0)


def game_frames() -> list[list[bytes]]:
    """A small stream as several processes publish it."""
    out = []
    for i in range(1, 6):
        out.append(frames_for("vision.board", BoardObservation(frame_id=i, found=True), i, "vision", 100))
        out.append(frames_for("sys.heartbeat", Heartbeat(process="vision", pid=100, seq=i), i, "vision", 100))
        out.append(frames_for("referee.state", GameState(revision=i, phase="judged"), i, "referee", 200))
        out.append(
            frames_for("sys.heartbeat", Heartbeat(process="referee", pid=200, seq=i), i, "referee", 200)
        )
    out.append(
        frames_for("vision.stable", BoardObservation(frame_id=9, found=True, stable=True), 1, "vision", 100)
    )
    out.append(frames_for("panel.button", ButtonPress(press_id=1), 1, "led", 300))
    return out


def write_game(path: Path, step_ns: int = 20_000_000) -> list[Record]:
    with RecordingWriter(path, FileHeader.now(tool="test")) as writer:
        return [writer.write(f, recv_ns=10**12 + i * step_ns) for i, f in enumerate(game_frames())]


async def test_record_bus_writes_what_was_published(
    bus: Any, actx: zmq.asyncio.Context, tmp_path: Path
) -> None:
    topics = ["vision.board", "referee.state", "sys.heartbeat", "panel.button", "vision.stable", WARM_TOPIC]
    sub = Subscriber(actx, bus.bus, topics, name="rec")
    pub = Publisher(actx, bus.bus, "test")
    pub.open()
    path = tmp_path / "r.mcap"
    stop = asyncio.Event()
    seen: list[Record] = []
    with RecordingWriter(path) as writer:
        task = asyncio.create_task(record_bus(sub, writer, topics, stop, on_record=seen.append))
        deadline = time.monotonic() + 10
        while not seen:  # the slow joiner: publish until the recorder hears us
            assert time.monotonic() < deadline
            await pub.publish(WARM_TOPIC, messages.HumanSetup())
            await asyncio.sleep(0.02)
        warm = len(seen)
        sent = game_frames()
        for frames in sent:
            await pub.publish_raw(frames)
        await pub.publish(WARM_TOPIC, messages.HumanSetup(policy="last"))
        while not (seen and seen[-1].topic == WARM_TOPIC and seen[-1].envelope().message.policy == "last"):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        stop.set()
        stats = await task
    records = [r for r in Recording(path) if r.topic != WARM_TOPIC]
    assert [r.frames() for r in records] == sent
    assert all(a.recv_ns <= b.recv_ns for a, b in itertools.pairwise(records))
    assert stats.counts["vision.board"] == 5 and stats.counts["panel.button"] == 1
    assert stats.counts[WARM_TOPIC] >= warm
    sub.close()
    pub.close()


async def test_record_bus_with_the_camera_and_the_logs(
    bus: Any, actx: zmq.asyncio.Context, tmp_path: Path
) -> None:
    """--camera: frames become JPEG images for the viewers (not raw records), vision's reading their
    annotations; the processes' log lines become foxglove.Log."""
    logs_dir = tmp_path / "logs"
    logs_dir.mkdir()
    (logs_dir / "referee.log").write_text('{"event": "old line", "level": "info", "timestamp": 0}\n')
    follower = Follower(logs_dir, from_end=True)  # what was there before the recording is not taken
    topics = ["vision.board", WARM_TOPIC]
    sub = Subscriber(actx, bus.bus, [*topics, "camera.frame"], include_frames=True, name="rec")
    pub = Publisher(actx, bus.bus, "test")
    pub.open(Channel.EVENT, Channel.FRAME)
    path = tmp_path / "cam.mcap"
    stop = asyncio.Event()
    seen: list[Record] = []
    pixels = bytes(range(256)) * (64 * 48 * 3 // 256)
    with RecordingWriter(path, jpeg_quality=60) as writer:
        task = asyncio.create_task(
            record_bus(
                sub, writer, topics, stop, on_record=seen.append, view_only=["camera.frame"], logs=follower
            )
        )
        deadline = time.monotonic() + 10
        while not seen:
            assert time.monotonic() < deadline
            await pub.publish(WARM_TOPIC, messages.HumanSetup())
            await asyncio.sleep(0.02)
        line = {"event": "cheat detected", "level": "warning", "process": "referee", "square": 3}
        with open(logs_dir / "referee.log", "a") as f:
            f.write(json.dumps({**line, "timestamp": "2026-12-01T10:00:00Z"}) + "\n")
        frame = CameraFrame(frame_id=1, width=64, height=48, data=pixels, capture_ns=time.monotonic_ns())
        while writer.viewer_counts[CAMERA_TOPIC] == 0:  # frames are newest-only: send until one lands
            assert time.monotonic() < deadline
            await pub.publish("camera.frame", frame)
            await asyncio.sleep(0.02)
        pose = BoardPose(
            center_px=Point(32, 24),
            angle_deg=0.0,
            corners_px=(Point(2, 2), Point(62, 2), Point(62, 46), Point(2, 46)),
        )
        obs = BoardObservation(frame_id=1, found=True, pose=pose, capture_ns=frame.capture_ns)
        await pub.publish("vision.board", obs)
        while writer.viewer_counts[ANNOTATIONS_TOPIC] == 0 or writer.viewer_counts[LOG_TOPIC] == 0:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        stop.set()
        stats = await task
    follower.close()
    assert stats.viewed["camera.frame"] >= 1 and stats.log_lines == 1
    assert "camera.frame" not in {r.topic for r in Recording(path)}
    rec = Recording(path)
    images = [m for _, _, m in rec.viewer_messages([CAMERA_TOPIC])]
    (notes,) = [m for _, _, m in rec.viewer_messages([ANNOTATIONS_TOPIC])]
    (log,) = [m for _, _, m in rec.viewer_messages([LOG_TOPIC])]
    assert images[0]["format"] == "jpeg" and images[0]["timestamp"] == notes["points"][0]["timestamp"]
    assert log["level"] == 3 and log["name"] == "referee" and log["message"] == "cheat detected square=3"
    sub.close()
    pub.close()


async def test_replay_republishes_in_order_restamped(
    bus: Any, actx: zmq.asyncio.Context, tmp_path: Path
) -> None:
    path = tmp_path / "g.mcap"
    recorded = write_game(path, step_ns=20_000_000)
    sub = Subscriber(actx, bus.bus, ["vision.", "referee.", "sys.", "panel.", WARM_TOPIC], name="t")
    pub = Publisher(actx, bus.bus, "play")
    await warm_up(pub, sub)
    rate = 4.0
    started_ns = time.monotonic_ns()  # the player's schedule starts after this
    stats = await replay_into(Recording(path), pub, None, rate)
    got = await collect(sub, len(recorded))
    assert [(e.topic, messages.envelope.encode_body(e.message)) for e in got] == [
        (r.topic, r.body) for r in recorded
    ]
    assert sum(stats.published.values()) == len(recorded) and stats.passes == 1
    for env, rec in zip(got, recorded, strict=True):
        old = rec.header()
        assert (env.header.source, env.header.pid, env.header.type) == (old.source, old.pid, old.type)
    # sequence numbers are continuous per (source, topic), from 1
    by_key: dict[tuple[str, str], list[int]] = {}
    for env in got:
        by_key.setdefault((env.header.source, env.topic), []).append(env.header.seq)
    assert all(seqs == list(range(1, len(seqs) + 1)) for seqs in by_key.values())
    assert sub.stats.gaps == 0
    # the player never publishes early: each message at least its recorded offset / rate after the
    # replay began (it may be late, and then catches up with the schedule, which is anchored where the
    # replay began, not at the first message: a first message published late on a loaded machine is
    # followed by messages that are closer to it than their recorded intervals, and rightly so)
    slack_ns = 2_000_000
    for env, rec in zip(got, recorded, strict=True):
        due = (rec.recv_ns - recorded[0].recv_ns) / rate
        assert env.header.mono_ns - started_ns >= due - slack_ns
    sub.close()
    pub.close()


async def test_replay_topic_filter_start_and_instead_of(
    bus: Any, actx: zmq.asyncio.Context, tmp_path: Path
) -> None:
    path = tmp_path / "g.mcap"
    recorded = write_game(path, step_ns=1_000_000)
    sub = Subscriber(actx, bus.bus, ["", WARM_TOPIC], include_frames=False, name="t")
    pub = Publisher(actx, bus.bus, "play")
    await warm_up(pub, sub)

    async def replay_and_collect(expected: list[Record], **kw: Any) -> list[messages.Envelope]:
        await replay_into(Recording(path), pub, rate=None, **kw)
        # a marker after the replay tells us when everything before it has arrived
        await pub.publish("ai.reply", MoveReply(request_id="end", square=1))
        got = await collect(sub, len(expected) + 1)
        assert got[-1].topic == "ai.reply"
        return got[:-1]

    only_referee = [r for r in recorded if r.topic == "referee.state"]
    got = await replay_and_collect(only_referee, topics=r"^referee\.")
    assert [e.message.revision for e in got] == [1, 2, 3, 4, 5]

    # --instead-of vision: vision's topics and vision's own heartbeats, nothing of the referee or led
    vision = [r for r in recorded if r.header().source == "vision"]
    got = await replay_and_collect(vision, instead_of=["vision"])
    assert [e.topic for e in got] == [r.topic for r in vision]
    assert {e.header.source for e in got} == {"vision"}

    # --start: the records at least 10 ms after the first one
    late = [r for r in recorded if r.recv_ns - recorded[0].recv_ns >= 10_000_000]
    got = await replay_and_collect(late, start_s=0.010)
    assert [e.topic for e in got] == [r.topic for r in late]

    # restamp=False (--keep-headers): the recorded headers, byte for byte
    await replay_into(Recording(path), pub, topics=["panel.button"], restamp=False)
    (env,) = await collect(sub, 1)
    button = next(r for r in recorded if r.topic == "panel.button")
    assert env.header == button.header()

    # topic filter and instead-of together
    beats = [r for r in vision if r.topic == "sys.heartbeat"]
    got = await replay_and_collect(beats, topics=["sys.heartbeat"], instead_of=["vision"])
    assert [e.message.process for e in got] == ["vision"] * 5
    sub.close()
    pub.close()


async def test_replay_hold_moves_the_schedule_back(
    bus: Any, actx: zmq.asyncio.Context, tmp_path: Path
) -> None:
    """A record held back (waiting for the process under test) delays itself and everything after it,
    which keep their recorded intervals: no burst to catch up with a schedule the hold overran."""
    path = tmp_path / "g.mcap"
    write_game(path, step_ns=20_000_000)
    states = [r for r in Recording(path) if r.topic == "referee.state"]
    sub = Subscriber(actx, bus.bus, ["referee.", WARM_TOPIC], name="t")
    pub = Publisher(actx, bus.bus, "play")
    await warm_up(pub, sub)
    released = asyncio.Event()

    async def hold(record: Record) -> None:
        if record.envelope().message.revision == 3:
            await released.wait()

    started_ns = time.monotonic_ns()
    replay = asyncio.create_task(replay_into(Recording(path), pub, "referee.state", 1.0, hold=hold))
    first = await collect(sub, 2)
    # release the third only once the last one is overdue: without moving the schedule back, the
    # fourth and fifth would follow the third at once
    overdue_ns = started_ns + states[-1].recv_ns - states[0].recv_ns + 20_000_000
    while time.monotonic_ns() < overdue_ns:
        await asyncio.sleep(0.005)
    released_ns = time.monotonic_ns()
    released.set()
    rest = await collect(sub, 3)
    stats = await replay
    assert [e.message.revision for e in first + rest] == [1, 2, 3, 4, 5]
    assert all(e.header.mono_ns >= released_ns for e in rest) and stats.held_s > 0
    for env, record in zip(rest, states[2:], strict=True):
        due_after_release = record.recv_ns - states[2].recv_ns
        assert env.header.mono_ns - released_ns >= due_after_release - 2_000_000
    sub.close()
    pub.close()


async def test_replay_lockstep_and_loop(bus: Any, actx: zmq.asyncio.Context, tmp_path: Path) -> None:
    path = tmp_path / "g.mcap"
    write_game(path, step_ns=1_000_000)
    sub = Subscriber(actx, bus.bus, ["referee.", WARM_TOPIC], name="t")
    pub = Publisher(actx, bus.bus, "play")
    await warm_up(pub, sub)

    # lockstep: the step callback waits for each message to arrive before the next is published
    arrived: list[int] = []

    async def step(record: Record) -> None:
        (env,) = await collect(sub, 1)
        arrived.append(env.message.revision)

    await replay_into(Recording(path), pub, "referee.state", step=step)
    assert arrived == [1, 2, 3, 4, 5]

    # loop: passes follow each other with continuous sequence numbers until stopped
    stop = asyncio.Event()
    seen: list[messages.Envelope] = []

    async def watch() -> None:
        while len(seen) < 12:
            seen.extend(await collect(sub, 1))
        stop.set()

    watcher = asyncio.create_task(watch())
    stats = await replay_into(Recording(path), pub, "referee.state", rate=50.0, loop=True, stop=stop)
    await watcher
    assert stats.passes >= 3
    assert [e.message.revision for e in seen[:12]] == [1, 2, 3, 4, 5] * 2 + [1, 2]
    assert [e.header.seq for e in seen[:12]] == list(range(1, 13))
    with pytest.raises(RecordingError, match="loop needs a rate"):
        await replay_into(Recording(path), pub, loop=True)
    with pytest.raises(RecordingError, match="positive"):
        await replay_into(Recording(path), pub, rate=0)
    sub.close()
    pub.close()


def test_filter_rejects_unknown_process_and_bad_regex() -> None:
    with pytest.raises(RecordingError, match="unknown process 'visoin'"):
        make_filter(None, ["visoin"])
    with pytest.raises(RecordingError, match="regular expression"):
        make_filter("vision.(", ())


def test_info_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "i.mcap"
    header = FileHeader.now(tool="test")
    versions = dict(header.versions)
    versions["GameState"] = messages.GameState.VERSION + 1  # as if recorded by a newer program
    versions["retiredtype"] = 3
    header = FileHeader(**{**header.__dict__, "versions": versions})
    with RecordingWriter(path, header) as writer:
        base = header.created_mono_ns
        # vision.board at 10 Hz for 2 s (21 messages), seq 4 missing -> 1 gap
        seqs = [s for s in range(1, 23) if s != 4]
        for i, seq in enumerate(seqs):
            frames = frames_for(
                "vision.board", BoardObservation(frame_id=seq, found=True), seq, "vision", 100
            )
            writer.write(frames, recv_ns=base + i * 100_000_000)
        # heartbeats of the referee: a restart (pid change) in the middle
        for i in range(4):
            pid = 200 if i < 2 else 201
            seq = i + 1 if i < 2 else i - 1
            frames = frames_for(
                "sys.heartbeat", Heartbeat(process="referee", pid=pid, seq=seq), seq, "referee", pid
            )
            writer.write(frames, recv_ns=base + i * 500_000_000)
        # what a recorder killed now leaves: its chunks, no summary, and a record begun
        writer.flush()
        torn = path.read_bytes()
    good_size = len(torn)
    path.write_bytes(torn + b"\x06\x10\x00\x00")
    summary = summarise(Recording(path, warn=False))
    board = summary["topics"]["vision.board"]
    assert board["count"] == 21
    assert board["rate_hz"] == pytest.approx(10.0)
    assert board["gaps"] == 1 and board["restarts"] == 0
    assert board["sources"] == {"vision": 21}
    beat = summary["topics"]["sys.heartbeat"]
    assert beat["count"] == 4 and beat["restarts"] == 1 and beat["gaps"] == 0
    assert beat["rate_hz"] == pytest.approx(2.0)
    assert summary["duration_s"] == pytest.approx(2.0)
    assert summary["records"] == 25
    assert summary["bytes"] == good_size
    assert summary["tail"]["reason"] == "truncated" and summary["tail"]["offset"] == good_size
    assert summary["tail"]["dropped_bytes"] == 4
    now = messages.GameState.VERSION
    assert summary["versions"]["GameState"] == {"recorded": now + 1, "now": now}
    assert summary["versions"]["retiredtype"] == {"recorded": 3, "now": None}
    # the command prints the same, readable or as JSON
    assert sanzi(["info", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["topics"]["vision.board"]["count"] == 21
    assert sanzi(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "vision.board" in out and "truncated tail" in out and "retiredtype: recorded v3" in out
    assert sanzi(["info", str(tmp_path / "missing.mcap")]) == 2
    assert "cannot read" in capsys.readouterr().err


async def test_record_and_play_commands(
    bus: Any, actx: zmq.asyncio.Context, runtime_dir: str, tmp_path: Path
) -> None:
    out = tmp_path / "cli.mcap"
    recorder = start_sanzi(runtime_dir, "record", str(out), "--topics", r"^(referee|sys)\.")
    pub = Publisher(actx, bus.bus, "test")
    pub.open()
    try:
        deadline = time.monotonic() + 10
        seq = 0
        # heartbeats until the recorder's file holds one (it subscribes asynchronously, flushes each second)
        while not (out.exists() and _count(out, "sys.heartbeat") > 0):
            assert time.monotonic() < deadline, recorder.stderr.read() if recorder.poll() is not None else ""
            seq += 1
            await pub.publish("sys.heartbeat", Heartbeat(process="test", pid=1, seq=seq))
            await asyncio.sleep(0.05)
        for revision in range(1, 4):
            await pub.publish("referee.state", GameState(revision=revision))
        await pub.publish("vision.board", BoardObservation(frame_id=1, found=True))  # not selected
        while _count(out, "referee.state") < 3:  # keep heartbeats coming so the writer flushes
            assert time.monotonic() < deadline
            seq += 1
            await pub.publish("sys.heartbeat", Heartbeat(process="test", pid=1, seq=seq))
            await asyncio.sleep(0.05)
    finally:
        recorder.send_signal(signal.SIGINT)
        code, stdout, stderr = await wait_exit(recorder)
    assert code == 0, stderr
    assert "referee.state" in stdout and "3" in stdout
    records = list(Recording(out))
    assert [r.envelope().message.revision for r in records if r.topic == "referee.state"] == [1, 2, 3]
    assert {r.topic for r in records} == {"referee.state", "sys.heartbeat"}
    assert Recording(out).header.info["selection"] == r"^(referee|sys)\."

    # play it back instead of "referee": only referee.state (the test's heartbeats are not the referee's)
    sub = Subscriber(actx, bus.bus, ["referee.", "sys."], name="t")
    player = start_sanzi(runtime_dir, "play", str(out), "--rate", "20", "--instead-of", "referee", "--loop")
    try:
        revisions: list[int] = []
        while revisions[-3:] != [1, 2, 3] or len(revisions) < 3:  # one whole pass, whatever the join time
            (env,) = await collect(sub, 1)
            assert env.topic == "referee.state"
            revisions.append(env.message.revision)
    finally:
        player.send_signal(signal.SIGINT)
        code, stdout, stderr = await wait_exit(player)
    assert code == 0, stderr
    assert "referee.state" in stdout and "sys.heartbeat" not in stdout
    sub.close()
    pub.close()


def _count(path: Path, topic: str) -> int:
    try:
        return sum(1 for r in Recording(path, warn=False) if r.topic == topic)
    except RecordingError:
        return 0  # the header is not written yet


def test_commands_reject_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "g.mcap"
    write_game(path)
    assert sanzi(["record", str(path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert sanzi(["record", str(tmp_path / "x.mcap"), "--topics", "nosuchtopic"]) == 2
    assert "selects no topic" in capsys.readouterr().err
    assert sanzi(["play", str(path), "--instead-of", "nobody"]) == 2
    assert "unknown process" in capsys.readouterr().err
    assert sanzi(["play", str(path), "--rate", "0"]) == 2
    assert sanzi(["play", str(tmp_path / "missing.mcap")]) == 2
    assert sanzi(["record", str(tmp_path / "y.mcap"), "--camera", "--jpeg-quality", "0"]) == 2
    assert "--jpeg-quality" in capsys.readouterr().err
    assert not (tmp_path / "y.mcap").exists()


async def test_a_recorder_killed_with_sigkill_leaves_a_readable_file(
    bus: Any, actx: zmq.asyncio.Context, runtime_dir: str, tmp_path: Path, capsys: Any
) -> None:
    out = tmp_path / "killed.mcap"
    recorder = start_sanzi(runtime_dir, "record", str(out), "--topics", r"^sys\.", "--no-logs")
    pub = Publisher(actx, bus.bus, "test")
    pub.open()
    try:
        deadline = time.monotonic() + 10
        seq = 0
        while _count(out, "sys.heartbeat") < 20:  # complete chunks on disk (one a second)
            assert time.monotonic() < deadline, recorder.stderr.read() if recorder.poll() is not None else ""
            seq += 1
            await pub.publish("sys.heartbeat", Heartbeat(process="test", pid=1, seq=seq))
            await asyncio.sleep(0.02)
    finally:
        recorder.send_signal(signal.SIGKILL)
        code, _, _ = await wait_exit(recorder)
        pub.close()
    assert code == -signal.SIGKILL
    assert sanzi(["info", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    beats = summary["topics"]["sys.heartbeat"]
    assert 20 <= beats["count"] <= seq and beats["gaps"] == 0
    assert summary["tail"]["reason"] == "truncated"  # no summary: the recorder never closed the file


def test_frame_topics_go_to_the_frame_channel() -> None:
    from launch.recording import _channel

    assert _channel("camera.frame") is Channel.FRAME
    assert _channel("vision.board") is Channel.EVENT
    assert _channel("from.the.future") is Channel.EVENT
