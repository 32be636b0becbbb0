"""`sanzi echo` and `sanzi hz`: formatting and the rate meter as pure functions, then both commands on live
traffic from a real bus."""

from __future__ import annotations

import json
from typing import Any

import pytest

import messages
from launch.cli import main as sanzi
from launch.commands.echo import plain, to_json_line, to_line
from launch.commands.hz import RateMeter
from messages import BoardObservation, CameraFrame, GameState

from .bushelp import BackgroundPublisher

MS = 1_000_000


def envelope(topic: str, message: messages.Message, seq: int = 1, source: str = "src") -> messages.Envelope:
    return messages.Envelope(topic, messages.make_header(message, source, seq), message)


def test_readable_line_shows_changed_fields_and_byte_lengths() -> None:
    env = envelope(
        "camera.frame", CameraFrame(frame_id=7, width=640, height=480, data=bytes(921_600)), 3, "simcam"
    )
    line = to_line(env)
    assert " camera.frame simcam#3 CameraFrame frame_id=7 width=640 height=480 data=<921600 bytes>" in line
    assert "encoding" not in line  # at its default
    env = envelope(
        "referee.state", GameState(revision=4, message="waiting for the person", board="X...O....")
    )
    line = to_line(env)
    assert 'message="waiting for the person"' in line and "board=X...O...." in line and "revision=4" in line
    assert "phase=" not in line


def test_json_line_has_every_field_and_no_pixels() -> None:
    env = envelope("camera.frame", CameraFrame(frame_id=1, width=2, height=1, data=bytes(6)))
    data = json.loads(to_json_line(env))
    assert data["topic"] == "camera.frame"
    assert data["header"]["type"] == "CameraFrame" and data["header"]["seq"] == 1
    assert data["message"]["data"] == {"bytes": 6}
    assert data["message"]["encoding"] == "bgr8"
    obs = BoardObservation(frame_id=1, found=True)
    assert plain(obs) == {"frame_id": 1, "found": True}


def test_rate_meter_on_exact_stamps() -> None:
    meter = RateMeter("vision.board", expected_hz=30.0, window_s=1.0)
    for i in range(31):  # 30 Hz for one second
        meter.add(i * 33_333_333, i * 33_333_333 + 5 * MS)
    report = meter.report(now_ns=30 * 33_333_333 + 10 * MS)
    assert report.count == 31
    assert report.rate_hz == pytest.approx(30.0, rel=1e-6)
    assert report.std_s == pytest.approx(0.0, abs=1e-9)
    assert report.min_s == report.max_s == pytest.approx(1 / 30, rel=1e-6)
    assert report.alive and report.on_rate
    # silent for more than 10 periods: not alive, not on rate
    late = meter.report(now_ns=30 * 33_333_333 + 5 * MS + 334 * MS)
    assert late.alive is False and late.on_rate is False
    # the window slides: only the last second of a longer stream counts
    for i in range(31, 100):
        meter.add(i * 33_333_333, i * 33_333_333)
    assert meter.report(99 * 33_333_333).count == 31


def test_rate_meter_below_rate_jitter_and_events() -> None:
    meter = RateMeter("sys.heartbeat", expected_hz=1.0, window_s=10.0)
    stamps = [0, 1200, 2400, 3600]  # 0.83 Hz: alive but below 90 %
    for t in stamps:
        meter.add(t * MS, t * MS)
    report = meter.report(3700 * MS)
    assert report.rate_hz == pytest.approx(1 / 1.2)
    assert report.alive is True and report.on_rate is False
    jitter = RateMeter("vision.stable", expected_hz=0.0)
    for t in (0, 100, 300, 400):
        jitter.add(t * MS, t * MS)
    report = jitter.report(400 * MS)
    assert report.alive is None and report.on_rate is None
    assert (report.min_s, report.max_s) == pytest.approx((0.1, 0.2))
    assert report.std_s == pytest.approx(0.04714, rel=1e-3)
    # a publisher restarted on another clock (stamps go back): the window starts again
    jitter.add(50 * MS, 500 * MS)
    assert jitter.report(500 * MS).count == 1
    # one message of a periodic topic: alive, but its rate is not known yet
    single = RateMeter("sim.world", expected_hz=10.0)
    single.add(0, 0)
    report = single.report(100 * MS)
    assert report.alive is True and report.on_rate is None
    with pytest.raises(ValueError, match="window"):
        RateMeter("x", 1.0, window_s=0)


def test_echo_prints_live_messages(
    bus: Any, runtime_dir: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("SANZI_SET", f"runtime.dir='{runtime_dir}'")
    with BackgroundPublisher(bus.bus, "referee.state", lambda i: GameState(revision=i, phase="judged")):
        assert sanzi(["echo", "referee.", "--json", "-n", "3", "--duration", "20"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert len(lines) == 3
        revisions = [json.loads(line)["message"]["revision"] for line in lines]
        assert revisions == list(range(revisions[0], revisions[0] + 3))  # consecutive: nothing lost
        assert sanzi(["echo", "referee.state", "-n", "1", "--duration", "20"]) == 0
        line = capsys.readouterr().out.strip()
        assert " referee.state bg#" in line and "GameState" in line and "phase=judged" in line
    assert sanzi(["echo", "nosuch."]) == 2
    assert "no topic starts with 'nosuch.'" in capsys.readouterr().err


def test_hz_measures_the_publisher(
    bus: Any, runtime_dir: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("SANZI_SET", f"runtime.dir='{runtime_dir}'")
    args = ["hz", "vision.board", "--json", "--window", "100", "--period", "0.3", "--count", "3"]
    with BackgroundPublisher(
        bus.bus, "vision.board", lambda i: BoardObservation(frame_id=i, found=True), 0.01
    ) as bg:
        assert sanzi(args) == 0
    reports = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    last = reports[-1]
    assert last["topic"] == "vision.board (bg)" and last["expected_hz"] == 30.0
    # what we published between the first and last stamps hz saw, measured on our side
    ours = [h.mono_ns for h in bg.headers if last["first_ns"] <= h.mono_ns <= last["last_ns"]]
    assert last["count"] == len(ours) >= 2
    assert last["rate_hz"] == pytest.approx((len(ours) - 1) / ((ours[-1] - ours[0]) / 1e9), rel=1e-6)
    assert last["alive"] is True
    assert last["on_rate"] == (last["rate_hz"] >= 27.0)


def test_hz_without_traffic_says_so(
    bus: Any, runtime_dir: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv("SANZI_SET", f"runtime.dir='{runtime_dir}'")
    assert sanzi(["hz", "actuator.position", "--period", "0.05", "--count", "1"]) == 0
    assert "actuator.position" in (out := capsys.readouterr().out) and "no messages" in out
    assert sanzi(["hz", "vision.board", "--window", "0"]) == 2
