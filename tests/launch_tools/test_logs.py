"""`sanzi logs`: merging the processes' JSON logs by time, filters, rendering, raw (non-JSON) lines, rotated
files, and following files that grow, rotate, get truncated or appear."""

from __future__ import annotations

import io
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from launch.cli import main as sanzi
from launch.logview import (
    Follower,
    LogFilter,
    LogViewError,
    as_json,
    discover,
    parse_since,
    read_all,
    render,
)
from services.common import log as log_module

BASE = 1_795_000_000.0  # an epoch second in 2026


def stamp(t: float) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(BASE + t, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def jline(process: str, t: float, event: str, level: str = "info", **fields: Any) -> str:
    data = {**fields, "event": event, "pid": 100, "process": process, "level": level, "timestamp": stamp(t)}
    return json.dumps(data)


def write(path: Path, *lines: str, mode: str = "a") -> None:
    with open(path, mode) as f:
        for line in lines:
            f.write(line + "\n")


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/x/vision/service.py", line 12, in run',
    "ZeroDivisionError: division by zero",
]


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    write(
        folder / "referee.log",
        jline("referee", 1.0, "started"),
        jline("referee", 3.0, "judged", game="g1", move=5, reason="legal move"),
        jline("referee", 5.0, "illegal move", level="warning", game="g1", kind="two-pieces"),
    )
    write(
        folder / "vision.log",
        jline("vision", 2.0, "started"),
        jline("vision", 4.0, "frame", level="debug", game="g1", ms=12.5),
        *TRACEBACK,
        jline("vision", 6.0, "started"),
    )
    write(folder / "vision.log.1", jline("vision", 0.5, "old run"))
    (folder / "notes.txt").write_text("not a log\n")
    return folder


def test_merge_orders_by_time_and_keeps_raw_lines_in_place(logdir: Path) -> None:
    assert list(discover(logdir)) == ["referee", "vision"]
    assert [p.name for p in discover(logdir)["vision"]] == ["vision.log.1", "vision.log"]
    lines = read_all(logdir)
    events = [(line.process, line.event) for line in lines]
    assert events == [
        ("vision", "old run"),
        ("referee", "started"),
        ("vision", "started"),
        ("referee", "judged"),
        ("vision", "frame"),
        *[("vision", text) for text in TRACEBACK],
        ("referee", "illegal move"),
        ("vision", "started"),
    ]
    raw = [line for line in lines if not line.is_json]
    assert all(line.ts == BASE + 4.0 and line.game == "g1" for line in raw)


def test_filters(logdir: Path) -> None:
    only_referee = read_all(logdir, LogFilter(processes=frozenset({"referee"})))
    assert {line.process for line in only_referee} == {"referee"} and len(only_referee) == 3
    warnings = read_all(logdir, LogFilter(level="warning"))
    # the crash output always passes the level filter
    assert [line.event for line in warnings] == [*TRACEBACK, "illegal move"]
    game = read_all(logdir, LogFilter(game="g1"))
    assert [line.event for line in game] == ["judged", "frame", *TRACEBACK, "illegal move"]
    recent = read_all(logdir, LogFilter(since=BASE + 4.5))
    assert [line.event for line in recent] == ["illegal move", "started"]
    with pytest.raises(LogViewError, match="unknown level"):
        LogFilter(level="loud")


def test_since_forms() -> None:
    assert parse_since("90s", now=1000.0) == 910.0
    assert parse_since("10m", now=1000.0) == 400.0
    assert parse_since("2h", now=10_000.0) == 2800.0
    assert parse_since("2026-11-29T19:30:00Z") == pytest.approx(1_795_980_600.0)
    with pytest.raises(LogViewError, match="duration"):
        parse_since("yesterday")


def test_rendering_and_json(logdir: Path) -> None:
    lines = read_all(logdir)
    judged = next(line for line in lines if line.event == "judged")
    text = render(judged)
    assert text.split()[1:4] == ["referee", "info", "judged"]
    assert "game=g1" in text and "move=5" in text and 'reason="legal move"' in text
    assert "pid=" not in text and "timestamp" not in text
    raw = next(line for line in lines if not line.is_json)
    assert render(raw).endswith(TRACEBACK[0]) and " vision " in render(raw)
    assert as_json(judged) == jline("referee", 3.0, "judged", game="g1", move=5, reason="legal move")
    wrapped = json.loads(as_json(raw))
    assert wrapped["raw"] is True and wrapped["process"] == "vision" and wrapped["event"] == TRACEBACK[0]


def test_real_structlog_output_with_an_exception(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    with open(folder / "ai.log", "w") as stream:
        log = log_module.setup("ai", "info", "json", stream=stream).bind(game="g7")
        log.info("reply", square=5)
        try:
            raise ValueError("bad board")
        except ValueError:
            log.error("request failed", exc_info=True)
    log_module.setup("test", "warning", "console", stream=sys.stderr)
    lines = read_all(folder)
    assert [(line.process, line.level, line.event, line.game) for line in lines] == [
        ("ai", "info", "reply", "g7"),
        ("ai", "error", "request failed", "g7"),
    ]
    text = render(lines[1])
    assert "\n    Traceback (most recent call last):" in text and "ValueError: bad board" in text
    # structlog's dict tracebacks render too
    lines[1].fields["exception"] = [
        {
            "exc_type": "ValueError",
            "exc_value": "bad",
            "frames": [{"filename": "a.py", "lineno": 3, "name": "f"}],
        }
    ]
    assert 'File "a.py", line 3, in f' in render(lines[1]) and "ValueError: bad" in render(lines[1])


def test_follower_growth_partial_lines_rotation_truncation_new_files(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    ref = folder / "referee.log"
    write(ref, jline("referee", 1, "a"))
    follower = Follower(folder)
    assert [line.event for line in follower.poll()] == ["a"]
    assert follower.poll() == []
    # a line written in two pieces appears once complete
    with open(ref, "a") as f:
        f.write(jline("referee", 2, "b")[:20])
    assert follower.poll() == []
    with open(ref, "a") as f:
        f.write(jline("referee", 2, "b")[20:] + "\n")
    assert [line.event for line in follower.poll()] == ["b"]
    # rotation: the old file gets a last line, is renamed, and a new file begins
    write(ref, jline("referee", 3, "c"))
    os.rename(ref, folder / "referee.log.1")
    write(ref, jline("referee", 4, "d"))
    assert [line.event for line in follower.poll()] == ["c", "d"]
    # truncation: read again from the start
    write(ref, jline("referee", 5, "e"), mode="w")
    assert [line.event for line in follower.poll()] == ["e"]
    # a process that starts later, and a crash's raw output, merged by time
    write(folder / "led.log", jline("led", 6, "started"), "Segmentation fault")
    write(ref, jline("referee", 5.5, "f"))
    polled = follower.poll()
    assert [(line.process, line.event) for line in polled] == [
        ("referee", "f"),
        ("led", "started"),
        ("led", "Segmentation fault"),
    ]
    follower.close()


def test_logs_command(logdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert sanzi(["logs", "--dir", str(logdir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 10 and "old run" in out[0] and out[-1].split()[1:4] == ["vision", "info", "started"]
    assert sanzi(["logs", "--dir", str(logdir), "--json", "--proc", "referee", "--level", "warning"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["event"] for line in out] == ["illegal move"]
    assert sanzi(["logs", "--dir", str(logdir), "--game", "g1", "-n", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "illegal move" in out[-1]
    assert sanzi(["logs", "--dir", str(logdir), "--proc", "referee,vision", "--since", stamp(4.5)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[3] for line in out] == ["illegal", "started"]
    assert sanzi(["logs", "--dir", str(logdir), "--level", "loud"]) == 2
    assert "unknown level" in capsys.readouterr().err
    assert sanzi(["logs", "--dir", str(logdir / "nothing")]) == 1
    assert "no log files" in capsys.readouterr().err


def _ignoring_sigint() -> None:
    # (as a shell without job control starts a background command: `sanzi logs -f &` in a script)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    ("stop", "started_ignoring_sigint"),
    [(signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGTERM, False)],
)
def test_logs_follow_command(tmp_path: Path, stop: signal.Signals, started_ignoring_sigint: bool) -> None:
    """``logs -f`` prints the lines there and those written later, and ends with 0 on Ctrl-C or
    SIGTERM, also when it was started with SIGINT ignored (it followed for ever so, once)."""
    folder = tmp_path / "logs"
    folder.mkdir()
    write(folder / "referee.log", jline("referee", 1, "before"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "launch.cli", "logs", "-f", "--json", "--dir", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=_ignoring_sigint if started_ignoring_sigint else None,
    )
    assert proc.stdout is not None
    reader = io.TextIOWrapper(proc.stdout)
    seen: list[str] = []

    def read_until(event: str) -> None:
        deadline = time.monotonic() + 10
        while event not in [json.loads(s)["event"] for s in seen]:
            assert time.monotonic() < deadline, seen
            ready, _, _ = select.select([proc.stdout], [], [], 0.1)
            if ready:
                seen.append(reader.readline())

    try:
        read_until("before")
        write(folder / "vision.log", jline("vision", 2, "later"))
        read_until("later")
    finally:
        proc.send_signal(stop)
        try:
            code = proc.wait(timeout=10)
        finally:
            if proc.poll() is None:  # (never left behind, whatever the test found)
                proc.kill()
                proc.wait()
            reader.close()
            if proc.stderr is not None:
                proc.stderr.close()
    assert code == 0
    assert [json.loads(s)["event"] for s in seen] == ["before", "later"]
