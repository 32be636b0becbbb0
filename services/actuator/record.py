"""The actuator's persistent record: which supply slots it has emptied, and what became of every command
id it has seen. Survives restarts, so that a command re-sent after a crash is not carried out twice.

Written atomically (:func:`services.common.durable.write_atomically`) *before* the step it records is
acted on, so a crash at any moment leaves either the old or the new record, never a torn one. An
unreadable record is moved aside (never deleted) and a fresh one started, with a warning: bad input
loses nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Literal

import msgspec

from services.common.durable import move_aside, write_atomically
from services.common.log import get as get_log

RECORD_VERSION: Final = 1
#: completed command ids kept; the oldest are forgotten beyond this (a game has a few dozen commands).
MAX_COMMANDS: Final = 2000

OutcomeStatus = Literal["started", "done", "failed"]


class RecordError(OSError):
    """The record cannot be written (disk full, permissions): the command must not run."""


class Outcome(msgspec.Struct, kw_only=True):
    """What became of one command id. ``started`` means it was begun and its end never recorded (the
    actuator stopped in the middle): it is not repeated blindly."""

    status: OutcomeStatus
    kind: str = ""
    reason: str = ""
    duration_s: float = 0.0
    #: wall-clock seconds (for people reading the file).
    time: float = 0.0


class RecordData(msgspec.Struct, kw_only=True):
    version: int = RECORD_VERSION
    #: colour -> emptied slot indices (sorted).
    empty: dict[str, list[int]] = {}
    #: command id -> outcome, oldest first.
    commands: dict[str, Outcome] = {}


class ActuatorRecord:
    """The record in memory and on disk. ``slots`` gives each colour's number of supply slots.

    Not thread-safe: the actuator's single command worker owns it.
    """

    def __init__(self, path: str | os.PathLike[str], slots: dict[str, int], log: object = None) -> None:
        self.path = Path(path)
        self.slots = dict(slots)
        self.log = log or get_log(component="record")
        self.data = RecordData(empty={c: [] for c in self.slots})

    # -- persistence -------------------------------------------------------------------------------

    def load(self) -> ActuatorRecord:
        """Read the file if it exists. A damaged file is renamed ``*.corrupt-<time>`` and replaced."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return self
        try:
            data = msgspec.json.decode(raw, type=RecordData)
            if data.version != RECORD_VERSION:
                raise ValueError(f"record version {data.version}, expected {RECORD_VERSION}")
        except (msgspec.DecodeError, ValueError) as exc:
            aside = move_aside(self.path)
            self.log.warning(
                "actuator record unreadable; moved aside, starting afresh",  # type: ignore[attr-defined]
                path=str(self.path),
                aside=str(aside),
                error=str(exc),
            )
            return self
        for colour in self.slots:
            data.empty.setdefault(colour, [])
        self.data = data
        return self

    def save(self) -> None:
        """Write the record atomically and durably. :raises RecordError:"""
        body = msgspec.json.format(msgspec.json.encode(self.data), indent=1)
        try:
            write_atomically(self.path, body)
        except OSError as exc:
            raise RecordError(
                f"cannot write the actuator record {self.path}: {exc.strerror or exc}"
            ) from None

    # -- supplies ----------------------------------------------------------------------------------

    def _check(self, colour: str, slot: int) -> None:
        if colour not in self.slots:
            raise ValueError(f"unknown supply colour {colour!r}")
        if not 0 <= slot < self.slots[colour]:
            raise ValueError(f"{colour} supply slot must be 0..{self.slots[colour] - 1}, got {slot}")

    def is_empty(self, colour: str, slot: int) -> bool:
        self._check(colour, slot)
        return slot in self.data.empty[colour]

    def next_full(self, colour: str) -> int | None:
        """The lowest slot the device has not emptied (the device takes from slot 0 upwards)."""
        empty = set(self.data.empty.get(colour, []))
        return next((s for s in range(self.slots.get(colour, 0)) if s not in empty), None)

    def last_emptied(self, colour: str) -> int | None:
        """The highest slot the device emptied: where a returned piece goes, so that the next placement
        takes it again first."""
        empty = self.data.empty.get(colour, [])
        return max(empty) if empty else None

    def remaining(self, colour: str) -> int:
        return self.slots.get(colour, 0) - len(self.data.empty.get(colour, []))

    def take(self, colour: str, slot: int) -> None:
        self._check(colour, slot)
        if slot not in self.data.empty[colour]:
            self.data.empty[colour] = sorted([*self.data.empty[colour], slot])

    def fill(self, colour: str, slot: int) -> None:
        self._check(colour, slot)
        self.data.empty[colour] = [s for s in self.data.empty[colour] if s != slot]

    def refill_all(self) -> None:
        """Every slot full again (the supplies were set up anew)."""
        self.data.empty = {c: [] for c in self.slots}

    # -- commands ----------------------------------------------------------------------------------

    def outcome(self, command_id: str) -> Outcome | None:
        return self.data.commands.get(command_id)

    def set_outcome(self, command_id: str, outcome: Outcome) -> None:
        commands = self.data.commands
        commands.pop(command_id, None)  # re-insert: newest last
        commands[command_id] = outcome
        while len(commands) > MAX_COMMANDS:
            del commands[next(iter(commands))]
