"""sanzi replay-check: a recording's referee inputs fed to a fresh machine in lockstep, its outputs diffed.

The recording here is made by a referee run in lockstep over a scripted contest task 1 (an operator, a
vision, an actuator and peers answering what it does), written as a recorder writes it: the inputs, the
referee's publications and its log lines. The e2e replay test runs replay-check on a recording of the
real stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

import messages
from launch.cli import main as sanzi
from launch.replaycheck import Lockstep, check
from messages import ActuatorEvent, BoardObservation, GameState, Heartbeat, OperatorCommand
from services.common.recording import FileHeader, Recording, RecordingWriter
from services.referee import machine as M
from services.referee.events import Action, Log, PublishState, ReplyOperator, RequestMove, SendCommand

from .conftest import frames_for

TICK_S = 0.1
STEP_S = 0.05
T0_S = 1000.0
DURATION_S = 12.0
PEERS = ("vision", "actuator", "led", "ai")
REFEREE_PID = 50


def _outputs(actions: list[Action]) -> list[tuple[str, msgspec.Struct]]:
    """The messages the referee's shell publishes for ``actions``."""
    out: list[tuple[str, msgspec.Struct]] = []
    for action in actions:
        match action:
            case PublishState():
                out.append(("referee.state", action.state))
            case RequestMove():
                out.append(("ai.request", action.request))
            case SendCommand():
                out.append(("actuator.command", action.command))
            case ReplyOperator():
                out.append(("operator.reply", action.reply))
    return out


class Scripted:
    """Writes a recording of a referee in lockstep: :meth:`give` records an input, feeds it, and records
    what the referee published and logged because of it."""

    def __init__(self, writer: RecordingWriter, header: FileHeader) -> None:
        self.writer = writer
        self.header = header
        self.referee = Lockstep(M.Settings(), TICK_S)
        self.seqs: dict[tuple[str, str], int] = {}

    def _write(self, topic: str, message: Any, source: str, pid: int, now: float) -> list[bytes]:
        key = (topic, source)
        self.seqs[key] = self.seqs.get(key, 0) + 1
        frames = frames_for(topic, message, self.seqs[key], source, pid)
        self.writer.write(frames, recv_ns=round(now * 1e9))
        return frames

    def give(self, topic: str, message: Any, source: str, now: float) -> None:
        frames = self._write(topic, message, source, 60, now)
        before = len(self.referee.actions)
        self.referee.feed(messages.decode(frames), now)
        new = self.referee.actions[before:]
        for out_topic, out in _outputs(new):
            self._write(out_topic, out, "referee", REFEREE_PID, now)
        for action in new:
            if isinstance(action, Log) and action.severity != "debug":
                entry = {"event": action.reason, "level": action.severity, **action.fields}
                self.writer.write_log(entry, self.header.wall_ns(round(now * 1e9)), "referee")


def record_task1(path: Path) -> None:
    """Contest task 1 (a black piece to square 5): the operator chooses it, the actuator carries out the
    placement a second after it is sent, vision then sees the piece."""
    header = FileHeader(**{**FileHeader.now(tool="test").__dict__, "created_mono_ns": int(T0_S * 1e9)})
    board = "........."
    done_at: float | None = None
    with RecordingWriter(header=header, path=path) as writer:
        s = Scripted(writer, header)
        for i in range(int(DURATION_S / STEP_S)):
            now = T0_S + i * STEP_S
            if i % 20 == 0:
                for peer in PEERS:
                    s.give("sys.heartbeat", Heartbeat(process=peer, pid=60, seq=i), peer, now)
            if i == 5:
                s.give(
                    "operator.command", OperatorCommand(command_id="op1", action="task", task=1), "op", now
                )
            sent = [a.command for a in s.referee.actions if isinstance(a, SendCommand)]
            if sent and done_at is None:
                accepted = ActuatorEvent(command_id=sent[0].command_id, status="accepted")
                s.give("actuator.event", accepted, "actuator", now)
                done_at = now + 1.0
            if done_at is not None and now >= done_at and board == ".........":
                done = ActuatorEvent(command_id=sent[0].command_id, status="done", kind="place")
                s.give("actuator.event", done, "actuator", now)
                board = "....X...."
            capture = round((now - 0.01) * 1e9)
            obs = BoardObservation(
                frame_id=i,
                found=True,
                board=board,
                stable=True,
                agreeing_frames=5,
                capture_ns=capture,
                window_start_ns=capture - 150_000_000,
            )
            s.give("vision.board", obs, "vision", now)
    final = [m for t, m in _outputs(s.referee.actions) if t == "referee.state"][-1]
    assert isinstance(final, GameState) and final.result == "done", final  # the script did the task


@pytest.fixture(scope="module")
def task1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rc") / "task1.mcap"
    record_task1(path)
    return path


def test_a_faithful_recording_replays_the_same(task1: Path) -> None:
    result = check(Recording(task1), M.Settings(), TICK_S)
    assert result.same, result
    commands, states, journal = result.streams
    assert [c[2] for c in commands.recorded if c[0] == "command"] == ["place"]
    assert ("reply", "op1", True, "") in commands.recorded
    assert any(s[1] == "game-over" for s in states.recorded)
    assert journal.checked and len(journal.recorded) >= 3


def _tampered(source: Path, out: Path, change: Any) -> None:
    """A copy of ``source`` whose referee messages went through ``change`` (message -> message)."""
    rec = Recording(source)
    with RecordingWriter(out, rec.header) as writer:
        for record in rec:
            if record.header().source == "referee":
                env = record.envelope()
                frames = messages.encode(record.topic, env.header, change(env.message))
                writer.write(frames, recv_ns=record.recv_ns)
            else:
                writer.write_record(record)
        for _topic, log_ns, entry in rec.viewer_messages(["/log"]):
            writer.write_log({"event": entry["message"], "level": "info"}, log_ns, entry["name"])


def test_a_different_decision_is_found_and_shown(task1: Path, tmp_path: Path, capsys: Any) -> None:
    other = tmp_path / "other.mcap"

    def elsewhere(message: Any) -> Any:
        if isinstance(message, messages.ActuatorCommand) and message.kind == "place":
            return msgspec.structs.replace(message, to_square=9)
        return message

    _tampered(task1, other, elsewhere)
    result = check(Recording(other), M.Settings(), TICK_S)
    commands, states, _journal = result.streams
    assert not commands.same and states.same
    assert commands.first_difference() == 1  # the operator's reply comes first, and is the same
    assert sanzi(["replay-check", str(other)]) == 1
    out = capsys.readouterr().out
    assert "commands  DIFFERENT" in out and "to_square" not in out and "9)" in out
    assert sanzi(["replay-check", str(task1), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["same"] is True and [s["name"] for s in doc["streams"]] == ["commands", "states", "journal"]


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: Any) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a recording")
    assert sanzi(["replay-check", str(notes)]) == 2
    assert "not a sanzi recording" in capsys.readouterr().err
    assert sanzi(["replay-check", str(tmp_path / "missing.mcap")]) == 2
    assert "cannot read" in capsys.readouterr().err
