"""``sanzi status``: the pure parts (rows from supervisord's and the bus's view, the table, log errors)."""

from __future__ import annotations

import json

from launch.commands import status
from messages import Heartbeat


def _info(name: str, state: str = "RUNNING", pid: int = 10, spawnerr: str = "") -> dict:
    return {"name": name, "statename": state, "pid": pid, "start": 1000, "now": 1075, "spawnerr": spawnerr}


def test_rows_combine_supervisord_heartbeats_and_logs() -> None:
    infos = [_info("bus"), _info("vision", pid=11), _info("ai", "BACKOFF", 0, "Exited too quickly")]
    beats = {
        "bus": (Heartbeat(process="bus", pid=10, seq=5), 9_000_000_000),
        "vision": (
            Heartbeat(process="vision", pid=11, seq=5, state="degraded", last_error="no board"),
            9_500_000_000,
        ),
    }
    rows = status.build_status(infos, {"vision": 2}, beats, 10_000_000_000, {"bus": "bad frame"})
    bus, vision, ai = rows
    assert (bus.state, bus.pid, bus.uptime_s, bus.heartbeat_age_s, bus.last_error) == (
        "RUNNING",
        10,
        75.0,
        1.0,
        "bad frame",
    )
    assert (vision.restarts, vision.health, vision.last_error, vision.heartbeat_age_s) == (
        2,
        "degraded",
        "no board",
        0.5,
    )
    assert (ai.pid, ai.uptime_s, ai.heartbeat_age_s, ai.last_error) == (0, 0.0, None, "Exited too quickly")
    assert not status.healthy(rows)
    assert status.healthy(rows[:2])


def test_table_shows_every_process_and_the_phase() -> None:
    rows = status.build_status([_info("bus"), _info("referee")], {}, {}, 0, {})
    text = status.format_status(
        rows,
        {
            "phase": "waiting-for-person",
            "task": 4,
            "game_id": "g1",
            "move_number": 3,
            "result": "",
            "message": "your turn",
        },
        "/rt",
    )
    lines = text.splitlines()
    assert lines[0].split() == [
        "process",
        "state",
        "pid",
        "uptime",
        "restarts",
        "heartbeat",
        "health",
        "last",
        "error",
    ]
    assert lines[1].startswith("bus ")
    assert "phase waiting-for-person task 4 game g1 move 3" in text
    assert "your turn" in text and "runtime: /rt" in text
    assert "no snapshot" in status.format_status(rows, None, "/rt")


def test_last_error_comes_from_the_last_error_line() -> None:
    lines = [
        json.dumps({"event": "started", "level": "info"}),
        json.dumps({"event": "serial timeout", "level": "error", "error": "no reply"}),
        "not json at all",
        json.dumps({"event": "recovered", "level": "warning"}),
        "{truncated",
    ]
    assert status.last_error_in_log("\n".join(lines)) == "serial timeout: no reply"
    traceback = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad thing\n'
    assert status.last_error_in_log(traceback) == "ValueError: bad thing"
    assert status.last_error_in_log("") == ""
