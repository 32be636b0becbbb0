"""The persistent record: atomic writes, reload, a damaged file moved aside, bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.actuator.record import MAX_COMMANDS, ActuatorRecord, Outcome, RecordError

SLOTS = {"black": 5, "white": 5}


def test_round_trip(tmp_path: Path) -> None:
    rec = ActuatorRecord(tmp_path / "state" / "a.json", SLOTS)
    rec.take("black", 0)
    rec.take("black", 1)
    rec.take("white", 4)
    rec.set_outcome("c1", Outcome(status="done", kind="place", duration_s=8.5))
    rec.save()
    again = ActuatorRecord(tmp_path / "state" / "a.json", SLOTS).load()
    assert again.next_full("black") == 2 and again.remaining("black") == 3
    assert again.last_emptied("white") == 4 and again.next_full("white") == 0
    assert again.outcome("c1") == Outcome(status="done", kind="place", duration_s=8.5)
    assert not list((tmp_path / "state").glob(".*tmp"))  # no temporary left behind


def test_fill_and_refill(tmp_path: Path) -> None:
    rec = ActuatorRecord(tmp_path / "a.json", SLOTS)
    for s in range(5):
        rec.take("black", s)
    assert rec.next_full("black") is None and rec.remaining("black") == 0
    rec.fill("black", 4)
    assert rec.next_full("black") == 4
    rec.refill_all()
    assert rec.remaining("black") == 5 and rec.remaining("white") == 5
    with pytest.raises(ValueError, match="slot must be"):
        rec.take("black", 5)
    with pytest.raises(ValueError, match="colour"):
        rec.take("red", 0)


def test_damaged_file_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b'{"version": 1, "empty": {"black": [0')
    rec = ActuatorRecord(path, SLOTS).load()
    assert rec.remaining("black") == 5
    aside = list(tmp_path.glob("a.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b'{"version"')


def test_old_commands_are_forgotten_beyond_the_limit(tmp_path: Path) -> None:
    rec = ActuatorRecord(tmp_path / "a.json", SLOTS)
    for i in range(MAX_COMMANDS + 10):
        rec.set_outcome(f"c{i}", Outcome(status="done"))
    assert rec.outcome("c0") is None and rec.outcome(f"c{MAX_COMMANDS + 9}") is not None
    assert len(rec.data.commands) == MAX_COMMANDS


def test_unwritable_record_is_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(RecordError, match="cannot write"):
        ActuatorRecord(blocker / "a.json", SLOTS).save()
