"""The bus with real sockets: forwarder, publisher/subscriber wrappers, bad input, gaps, snapshots,
frames, shutdown and CURVE."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
import zmq
import zmq.asyncio

import messages
from services.bus import curve
from services.bus.client import Latched, Publisher, SnapshotServer, Subscriber, request_snapshot, wait_for
from services.bus.forwarder import start_forwarders
from services.common import config as config_module
from tests.inprocess import in_process_bus

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 10.0


def heartbeat(seq: int, process: str = "t") -> messages.Heartbeat:
    return messages.Heartbeat(process=process, pid=0, seq=seq)


async def connected(pub: Publisher, sub: Subscriber, topic: str = "sys.heartbeat") -> None:
    """Publish probes until the subscriber hears one (PUB/SUB connects asynchronously)."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        await pub.publish(topic, heartbeat(0, "probe"))
        env = await sub.recv(timeout=0.05)
        if env is not None:
            while await sub.recv(timeout=0.05) is not None:  # drain the other probes
                pass
            return
    raise TimeoutError("publisher and subscriber never connected")


@pytest.fixture
async def actx() -> Any:
    ctx = zmq.asyncio.Context()
    yield ctx
    ctx.destroy(linger=0)


def start_process(args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=5)
    if proc.stdout:
        proc.stdout.close()


async def test_pubsub_between_two_real_processes(
    config: Any, subprocess_env: dict[str, str], actx: Any
) -> None:
    forwarder = start_process(["-m", "services.bus"], subprocess_env)
    publisher = start_process(["-m", "tests.bus.peer", "publish", "peer"], subprocess_env)
    sub = Subscriber(actx, config.bus, ["sys.heartbeat"])
    try:
        seqs: list[int] = []
        deadline = time.monotonic() + DEADLINE_S
        while len(seqs) < 100 and time.monotonic() < deadline:
            env = await sub.recv(timeout=0.5)
            if env is not None and env.header.source == "peer":
                seqs.append(env.message.seq)
        assert len(seqs) == 100, "no traffic from the publisher process through the forwarder process"
        assert seqs == list(range(seqs[0], seqs[0] + 100)), "messages lost or reordered"
        assert sub.stats.gaps == 0
    finally:
        sub.close()
        stop(publisher)
        stop(forwarder)


async def test_malformed_and_unknown_messages_are_dropped_and_counted(bus: Any, actx: Any) -> None:
    pub = Publisher(actx, bus.bus, "good")
    pub.open()
    sub = Subscriber(actx, bus.bus, ["sys.", "future."])
    await connected(pub, sub)
    future_header = messages.Header("FutureThing", 1, "new", 1, 1, 0, 0)
    bad = [
        [b"sys.heartbeat", b"\x00not a header", b"x"],
        [b"sys.heartbeat"],
        [b"future.thing", msgspec.msgpack.encode(future_header), b"\x80"],
        [b"sys.heartbeat", msgspec.msgpack.encode(messages.make_header(heartbeat(1), "x", 1)), b"\xc1"],
    ]
    for frames in bad:
        await pub.publish_raw(frames)
    await pub.publish("sys.heartbeat", heartbeat(99, "after"))
    env = await wait_for(sub, lambda e: e.message.process == "after", DEADLINE_S)
    assert env.message.seq == 99
    assert sub.stats.dropped == {
        "malformed-header": 1,
        "frame-count": 1,
        "unknown-type": 1,
        "malformed-body": 1,
    }
    pub.close()
    sub.close()


async def test_sequence_gap_is_detected(bus: Any, actx: Any) -> None:
    pub = Publisher(actx, bus.bus, "gappy")
    pub.open()
    sub = Subscriber(actx, bus.bus, ["sys."])
    await connected(pub, sub)
    await pub.publish("sys.heartbeat", heartbeat(1, "gappy"))
    pub._seq["sys.heartbeat"] += 5  # five messages "lost" on the way
    await pub.publish("sys.heartbeat", heartbeat(2, "gappy"))
    await wait_for(sub, lambda e: e.message.seq == 2 and e.message.process == "gappy", DEADLINE_S)
    assert sub.stats.gaps == 5
    pub.close()
    sub.close()


async def test_snapshot_gives_a_late_subscriber_every_update_once(bus: Any, actx: Any) -> None:
    """The referee's pattern: subscribe first, then ask for a snapshot, then drop older updates."""
    state = {"value": messages.GameState(revision=0)}
    server = SnapshotServer(actx, bus.bus.snapshot, "referee", lambda topic: state["value"])
    serve_task = asyncio.create_task(server.serve())
    pub = Publisher(actx, bus.bus, "referee")
    pub.open()
    last_revision = 300

    async def referee() -> None:
        for revision in range(1, last_revision + 1):
            state["value"] = messages.GameState(revision=revision, board=f"{revision % 10}........")
            await pub.publish("referee.state", state["value"])
            await asyncio.sleep(0.001)

    producer = asyncio.create_task(referee())
    try:
        await asyncio.sleep(0.02)  # let the game run a little before the late subscriber arrives
        sub = Subscriber(actx, bus.bus, ["referee.state"])
        first = await sub.recv(timeout=DEADLINE_S)  # subscribed and connected
        assert first is not None
        snapshot = await request_snapshot(actx, bus.bus.snapshot, "referee.state", timeout=2.0)
        assert snapshot is not None and snapshot.message.revision >= first.message.revision
        latched: Latched[messages.GameState] = Latched(lambda s: s.revision)
        latched.offer(snapshot.message)
        applied = [snapshot.message.revision]
        while applied[-1] < last_revision:
            env = await sub.recv(timeout=DEADLINE_S)
            assert env is not None, "updates stopped arriving"
            if latched.offer(env.message):
                applied.append(env.message.revision)
        assert applied == list(range(applied[0], last_revision + 1)), "a duplicate or a missing update"
        sub.close()
    finally:
        producer.cancel()
        serve_task.cancel()
        await asyncio.gather(producer, serve_task, return_exceptions=True)
        server.close()
        pub.close()


async def test_snapshot_request_without_server_returns_none(config: Any, actx: Any) -> None:
    assert (
        await request_snapshot(actx, config.bus.snapshot, "referee.state", timeout=0.05, attempts=2) is None
    )


async def test_slow_frame_reader_gets_the_newest_frame(bus: Any, actx: Any) -> None:
    pub = Publisher(actx, bus.bus, "cam")
    pub.open(messages.Channel.FRAME)
    sub = Subscriber(actx, bus.bus, ["camera.frame"])
    data = bytes(640 * 480 * 3)
    deadline = time.monotonic() + DEADLINE_S
    frame_id = 0
    while time.monotonic() < deadline:  # connect: publish until one frame arrives
        frame_id += 1
        await pub.publish(
            "camera.frame", messages.CameraFrame(frame_id=frame_id, width=640, height=480, data=data)
        )
        if await sub.recv(timeout=0.05) is not None:
            break
    # The reader is slow: 200 frames are published while it does not read.
    for _ in range(200):
        frame_id += 1
        await pub.publish(
            "camera.frame", messages.CameraFrame(frame_id=frame_id, width=640, height=480, data=data)
        )
        await asyncio.sleep(0.001)
    before = sub.stats.received
    while await sub.recv(timeout=0.3) is not None:
        pass
    backlog = sub.stats.received - before
    # bounded by the small queues on the way (publisher, forwarder, reader), not by what was sent
    assert backlog <= 4 * bus.bus.frame_hwm, f"a slow reader got a backlog of {backlog} frames"
    # ZeroMQ drops at a full queue; what the queues held is gone after one read, and the next frame
    # published is the next one the reader gets.
    frame_id += 1
    await pub.publish(
        "camera.frame", messages.CameraFrame(frame_id=frame_id, width=640, height=480, data=data)
    )
    env = await sub.recv(timeout=DEADLINE_S)
    assert env is not None and env.message.frame_id == frame_id
    pub.close()
    sub.close()


async def test_frames_come_only_to_who_names_them(bus: Any, actx: Any) -> None:
    """A prefix ("vision.", "") brings the readings, never a frame topic's megabyte frames; the topic's
    full name does."""
    by_prefix = [Subscriber(actx, bus.bus, [prefix]) for prefix in ("vision.", "camera.", "")]
    by_name = Subscriber(actx, bus.bus, ["vision.frame", "vision.board"])
    try:
        assert all(sub._frame is None for sub in by_prefix)
        assert by_name._frame is not None and by_name._event is not None
    finally:
        for sub in (*by_prefix, by_name):
            sub.close()


def test_sigterm_stops_a_service_within_a_second(subprocess_env: dict[str, str], config: Any) -> None:
    proc = start_process(["-m", "services.bus", "--set", "log.format='json'"], subprocess_env)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + DEADLINE_S
        line = b""
        while b'"started"' not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()
        assert b'"started"' in line
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=1.0)
        assert code == 0
        rest = proc.stdout.read()
        assert b'"stopped"' in rest
    finally:
        stop(proc)


def test_binding_beyond_loopback_without_keys_is_refused(subprocess_env: dict[str, str]) -> None:
    with pytest.raises(curve.CurveError, match="beyond loopback without CURVE keys"):
        curve.require_keys_for(["tcp://0.0.0.0:5555", "ipc:///x"], "")
    curve.require_keys_for(["tcp://127.0.0.1:5555", "tcp://localhost:1", "ipc:///x"], "")
    assert curve.is_beyond_loopback("tcp://*:5555")
    assert curve.is_beyond_loopback("tcp://192.168.1.4:5555")
    assert not curve.is_beyond_loopback("tcp://[::1]:5555")
    result = subprocess.run(
        [sys.executable, "-m", "services.bus", "--set", "bus.pub='tcp://0.0.0.0:47001'"],
        cwd=REPO,
        env=subprocess_env,
        capture_output=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert b"beyond loopback without CURVE keys" in result.stderr


async def test_curve_lets_only_listed_clients_in(runtime_dir: Path, actx: Any) -> None:
    keys = runtime_dir / "keys"
    curve.make_keys(keys, ["device", "intruder"])
    (keys / "clients" / "intruder.key").unlink()  # generated, but not allowed in
    ports = _free_ports(4)
    endpoints = {
        name: f"tcp://127.0.0.1:{port}"
        for name, port in zip(("pub", "sub", "frame_pub", "frame_sub"), ports, strict=True)
    }
    base = {"runtime": {"dir": str(runtime_dir)}, "bus": {**endpoints, "curve_dir": str(keys)}}
    good = config_module.load(None, overrides={**base, "bus": {**base["bus"], "curve_client": "device"}})
    bad = config_module.load(None, overrides={**base, "bus": {**base["bus"], "curve_client": "intruder"}})
    sync_ctx = zmq.Context()
    auth = curve.start_authenticator(sync_ctx, str(keys))
    forwarders = start_forwarders(sync_ctx, good.bus)
    good_pub, good_sub = Publisher(actx, good.bus, "device"), Subscriber(actx, good.bus, ["sys."])
    bad_pub, bad_sub = Publisher(actx, bad.bus, "intruder"), Subscriber(actx, bad.bus, ["sys."])
    good_pub.open()
    bad_pub.open()
    try:
        await connected(good_pub, good_sub)  # the listed client gets through both ways
        for seq in range(1, 51):
            await bad_pub.publish("sys.heartbeat", heartbeat(seq, "intruder"))
            await good_pub.publish("sys.heartbeat", heartbeat(seq, "device"))
            await asyncio.sleep(0.005)
        seen = set()
        while (env := await good_sub.recv(timeout=0.3)) is not None:
            seen.add(env.message.process)
        assert "device" in seen
        assert "intruder" not in seen, "an unlisted key could publish"
        assert await bad_sub.recv(timeout=0.3) is None, "an unlisted key received traffic"
    finally:
        for thing in (good_pub, good_sub, bad_pub, bad_sub):
            thing.close()
        for fwd in forwarders:
            fwd.stop()
        auth.stop()
        sync_ctx.term()


def _free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


async def test_recv_with_zero_timeout_reads_what_is_waiting(bus: Any, actx: Any) -> None:
    pub = Publisher(actx, bus.bus, "t")
    pub.open()
    sub = Subscriber(actx, bus.bus, ["sys."])
    await connected(pub, sub)
    await pub.publish("sys.heartbeat", heartbeat(5, "waiting"))
    deadline = time.monotonic() + DEADLINE_S
    env = None
    while env is None and time.monotonic() < deadline:
        env = await sub.recv(timeout=0)
        await asyncio.sleep(0.001)
    assert env is not None and env.message.process == "waiting"
    assert await sub.recv(timeout=0) is None
    pub.close()
    sub.close()


async def test_a_watching_subscriber_notes_when_its_link_to_the_bus_breaks(config: Any, actx: Any) -> None:
    """A restarted bus loses what is published while it is down: a subscriber that watches its links
    says when it lost one (the simulated camera then waits for a world published since)."""
    pub = Publisher(actx, config.bus, "t")
    pub.open()
    sub = Subscriber(actx, config.bus, ["sys."], watch_links=True)
    unwatched = Subscriber(actx, config.bus, ["sys."])
    try:
        with in_process_bus(config.bus):
            await connected(pub, sub)
            await connected(pub, unwatched)
            assert sub.link_lost_ns == 0 and sub.stats.link_losses == 0
            before = time.monotonic_ns()
        # the bus is gone: the monitor reports the break within recv() (which still hands out what was
        # queued before it: the probes meant for the other subscriber)
        deadline = time.monotonic() + DEADLINE_S
        while sub.link_lost_ns == 0 and time.monotonic() < deadline:
            env = await sub.recv(timeout=0.05)
            assert env is None or env.header.mono_ns < before
        assert sub.link_lost_ns > before and sub.stats.link_losses >= 1
        lost = sub.link_lost_ns
        with in_process_bus(config.bus):  # back: the same subscriber hears again, without a new break
            await connected(pub, sub)
            assert sub.link_lost_ns == lost
        assert unwatched.link_lost_ns == 0  # watching is asked for, not imposed
    finally:
        pub.close()
        sub.close()
        unwatched.close()
