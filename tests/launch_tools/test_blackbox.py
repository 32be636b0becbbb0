"""The fault recorder: ring buffer, triggers, dump timing and the bounded folder as pure logic with made-up
times; then the service on a real bus writing a readable recording, and `python -m services.blackbox`."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import zmq.asyncio

from launch.cli import main as sanzi
from messages import ActuatorEvent, BoardObservation, GameState, Heartbeat
from services.blackbox.config import BlackboxConfig
from services.blackbox.core import NS, BlackBox, Dump, Fault, FaultDetector, FaultStore, RingBuffer
from services.blackbox.service import BlackboxService, recorder_settings
from services.bus.client import Publisher, Subscriber, wait_for
from services.common import log as log_module
from services.common.recording import Record, Recording

from .bushelp import DEADLINE_S, sanzi_env, wait_exit
from .conftest import frames_for

T0 = 1_000 * NS


def rec(topic: str, message: Any, at_s: float, seq: int = 1, source: str = "p", pid: int = 1) -> Record:
    return Record.from_frames(frames_for(topic, message, seq, source, pid), T0 + int(at_s * NS))


def beat(process: str, at_s: float, pid: int = 10, state: str = "ok", seq: int = 1) -> Record:
    return rec(
        "sys.heartbeat", Heartbeat(process=process, pid=pid, seq=seq, state=state), at_s, seq, process, pid
    )


def board(at_s: float, i: int = 1) -> Record:
    return rec("vision.board", BoardObservation(frame_id=i, found=True), at_s, i, "vision")


def game(at_s: float, revision: int, illegal: str = "", fault: str = "") -> Record:
    state = GameState(revision=revision, game_id="g", illegal=illegal, fault=fault)
    return rec("referee.state", state, at_s, revision, "referee")


def test_ring_buffer_bounds_by_age_and_bytes() -> None:
    ring = RingBuffer(seconds=1.0, max_bytes=10_000_000)
    for i in range(30):
        ring.append(board(i * 0.1, i))
    assert len(ring) == 11  # 1.9 s .. 2.9 s
    assert ring.since(0)[0].recv_ns == T0 + int(1.9 * NS)
    assert len(ring.since(T0 + int(2.5 * NS))) == 5  # 2.5 .. 2.9
    one = board(0).size
    small = RingBuffer(seconds=100.0, max_bytes=one * 5)
    for i in range(12):
        small.append(board(i * 0.1, i))
    assert len(small) == 5 and small.bytes <= one * 5 and small.dropped_early == 7
    with pytest.raises(ValueError):
        RingBuffer(0, 1)


def test_detector_triggers_on_each_fault_kind_once() -> None:
    det = FaultDetector(grace_ns=0)
    kinds = []
    stream = [
        game(0, 1),
        game(1, 2, illegal="two-pieces"),
        game(2, 2, illegal="two-pieces"),  # the 1 Hz re-publication: same fault
        game(3, 3),
        game(4, 4, illegal="two-pieces"),  # again, after a correction: a new illegal move
        game(5, 5, illegal="wrong-colour"),
        game(6, 6, fault="gantry stuck"),
        rec("actuator.event", ActuatorEvent(command_id="c1", status="done"), 7),
        rec("actuator.event", ActuatorEvent(command_id="c2", status="failed", reason="alarm"), 8),
        rec("actuator.event", ActuatorEvent(command_id="c2", status="failed", repeat=True), 9),
        rec("actuator.event", ActuatorEvent(command_id="c2", status="failed"), 9.5),
        beat("vision", 10, pid=10),
        beat("vision", 11, pid=10, state="degraded"),
        beat("vision", 12, pid=10, state="fault"),
        beat("vision", 13, pid=10, state="fault"),
        beat("vision", 14, pid=11),  # crashed and restarted
        beat("ai", 15, pid=20, state="fault"),  # a process seen first in fault, after the grace
    ]
    for record in stream:
        kinds.extend((f.kind, f.at_ns) for f in det.check(record))
    at = lambda s: T0 + int(s * NS)  # noqa: E731
    assert kinds == [
        ("illegal-move", at(1)),
        ("illegal-move", at(4)),
        ("illegal-move", at(5)),
        ("game-fault", at(6)),
        ("actuator-failed", at(8)),
        ("process-fault", at(12)),
        ("process-restart", at(14)),
        ("process-fault", at(15)),
    ]


def test_detector_takes_the_state_at_start_as_baseline() -> None:
    det = FaultDetector(grace_ns=3 * NS)
    assert det.check(game(0, 5, illegal="two-pieces", fault="x")) == []
    assert det.check(beat("led", 0.5, state="fault")) == []
    assert det.check(board(1)) == []
    assert [f.kind for f in det.check(beat("led", 1.5, pid=99, state="fault"))] == ["process-restart"]
    # after the grace, a process seen first already in fault is a fault
    assert [f.kind for f in det.check(beat("actuator", 4, state="fault"))] == ["process-fault"]
    # undecodable messages are ignored
    bad = Record(T0, "referee.state", b"\x00junk", b"junk")
    assert det.check(bad) == []


def test_blackbox_dumps_the_seconds_before_and_after_a_fault() -> None:
    box = BlackBox(seconds=5.0, post_seconds=1.0, grace_s=0)
    dumps: list[Dump] = []
    t = 0.0
    box.offer(game(0, 1))
    while t < 20:  # vision at 10 Hz, an illegal move at 12 s, another fault at 12.5 s
        t = round(t + 0.1, 3)
        extra = []
        if t == 12.0:
            extra.append(game(t, 2, illegal="two-pieces"))
        if t == 12.5:
            extra.append(rec("actuator.event", ActuatorEvent(command_id="c9", status="failed"), t))
        for record in [board(t), *extra]:
            _, dump = box.offer(record)
            if dump is not None:
                dumps.append(dump)
    assert len(dumps) == 1  # the second fault joined the first dump
    dump = dumps[0]
    assert [f.kind for f in dump.faults] == ["illegal-move", "actuator-failed"]
    times = [(r.recv_ns - T0) / NS for r in dump.records]
    assert min(times) == pytest.approx(7.0) and max(times) == pytest.approx(13.0)
    assert not box.pending


def test_tick_writes_a_due_dump_without_traffic_and_flush_at_exit() -> None:
    box = BlackBox(seconds=5.0, post_seconds=2.0, grace_s=0)
    box.offer(game(0, 1))
    faults, dump = box.offer(game(1, 2, fault="lost piece"))
    assert [f.kind for f in faults] == ["game-fault"] and dump is None
    assert box.tick(T0 + int(2.9 * NS)) is None
    dump = box.tick(T0 + 3 * NS)
    assert dump is not None and len(dump.records) == 2
    assert box.flush() is None
    box.offer(game(4, 3, illegal="no-change"))
    dump = box.flush()
    assert dump is not None and dump.faults[0].kind == "illegal-move"


def test_fault_store_keeps_bounded_files(tmp_path: Path) -> None:
    records = [board(i * 0.1, i) for i in range(20)]
    fault = Fault("illegal-move", "two-pieces in game g", T0)
    store = FaultStore(tmp_path / "faults", max_files=3, max_bytes=10**9)
    paths = [store.write(Dump([fault], records, T0)) for _ in range(5)]
    assert store.files() == paths[2:]
    written = Recording(paths[-1])
    assert list(written) == records
    assert written.header.info["tool"] == "blackbox"
    assert written.header.info["reason"] == "illegal-move: two-pieces in game g"
    assert paths[-1].name.startswith("fault-") and "illegal-move-two-pieces-in-game-g" in paths[-1].name
    size = paths[-1].stat().st_size
    by_bytes = FaultStore(tmp_path / "faults", max_files=100, max_bytes=int(size * 1.5))
    newest = by_bytes.write(Dump([fault], records, T0))
    assert by_bytes.files() == [newest]
    tiny = FaultStore(tmp_path / "faults", max_files=1, max_bytes=1)  # never deletes what it just wrote
    kept = tiny.write(Dump([fault], records, T0))
    assert tiny.files() == [kept]


def test_settings_default_to_the_runtime_fault_folder(cfg: Any) -> None:
    settings = recorder_settings(cfg)
    assert settings.seconds == 30.0 and settings.max_files == 20 and settings.max_bytes == 200_000_000
    assert settings.dir == cfg.runtime.fault_dir


async def test_service_records_a_fault_from_the_bus(bus: Any, tmp_path: Path, capsys: Any) -> None:
    log_module.setup("blackbox-test", "warning", "json")
    settings = BlackboxConfig(seconds=5.0, post_seconds=0.2, startup_grace_s=0.0, dir=str(tmp_path / "f"))
    service = BlackboxService(bus, settings=settings)
    task = asyncio.create_task(service.run())
    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, bus.bus, "referee")
    try:
        deadline = time.monotonic() + DEADLINE_S
        i = 0
        while len(service.box.ring) == 0:  # until the recorder hears us (slow joiner)
            assert time.monotonic() < deadline
            i += 1
            await pub.publish("referee.state", GameState(revision=i))
            await asyncio.sleep(0.02)
        for _ in range(3):
            i += 1
            await pub.publish("referee.state", GameState(revision=i))
        await pub.publish("referee.state", GameState(revision=i + 1, illegal="two-pieces"))
        while not service.written:  # written after the post window, by the idle tick if need be
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        pub.close()
        ctx.destroy(linger=0)
        service.close()
    recording = Recording(service.written[0])
    revisions = [r.envelope().message.revision for r in recording]
    assert revisions == list(range(revisions[0], i + 2))
    assert recording.header.info["reason"].startswith("illegal-move: two-pieces")
    # `sanzi info` shows the faults of such a file
    assert sanzi(["info", service.written[0]]) == 0
    assert "fault      illegal-move: two-pieces in game -" in capsys.readouterr().out


async def test_service_writes_a_pending_dump_on_shutdown(cfg: Any, tmp_path: Path) -> None:
    settings = BlackboxConfig(seconds=5.0, post_seconds=60.0, startup_grace_s=0.0, dir=str(tmp_path / "f"))
    service = BlackboxService(cfg, settings=settings)
    try:
        service.box.offer(Record.from_frames(frames_for("referee.state", GameState(revision=1), 1), 1))
        fail = ActuatorEvent(command_id="c1", status="failed", reason="alarm")
        service.box.offer(Record.from_frames(frames_for("actuator.event", fail, 1), 2))
        assert service.box.pending
        await service.shutdown()
    finally:
        service.close()
    (path,) = service.written
    assert Recording(path).header.info["reason"] == "actuator-failed: command c1 failed (alarm)"
    assert len(list(Recording(path))) == 2


async def test_python_m_services_blackbox_runs_and_stops(bus: Any, runtime_dir: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.blackbox"],
        env=sanzi_env(runtime_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ctx = zmq.asyncio.Context()
    sub = Subscriber(ctx, bus.bus, ["sys.heartbeat"])
    try:
        env = await wait_for(sub, lambda e: e.message.process == "blackbox", timeout=DEADLINE_S)
        assert env.message.pid == proc.pid and env.message.state == "ok"
    finally:
        proc.send_signal(signal.SIGTERM)
        code, out, err = await wait_exit(proc)
        sub.close()
        ctx.destroy(linger=0)
    assert code == 0, err
    assert '"event": "watching"' in out
