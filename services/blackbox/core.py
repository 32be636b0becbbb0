"""The fault recorder's logic, without sockets: a ring buffer of recent records, the fault triggers, the
decision when to write, and the bounded folder of fault recordings.

Times are the recorder's CLOCK_MONOTONIC nanoseconds (each record's receive time), so the logic is
driven entirely by its inputs and tested with made-up times.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import messages
from messages import ActuatorEvent, GameState, Heartbeat
from services.common.recording import SUFFIX, FileHeader, Record, write_recording

NS: Final = 1_000_000_000
#: fault recordings are named fault-<UTC time>-<reason>.mcap (MCAP, like every recording).
FILE_PREFIX: Final = "fault-"


@dataclass(frozen=True)
class Fault:
    """Something went wrong. ``kind`` is one word for file names and counting; ``detail`` for people."""

    #: "illegal-move", "game-fault", "actuator-failed", "process-fault" or "process-restart".
    kind: str
    detail: str
    at_ns: int

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


class RingBuffer:
    """The newest records, at most ``seconds`` older than the newest one and ``max_bytes`` in all.
    Records are expected in receive order (a record older than the newest is kept, not reordered)."""

    def __init__(self, seconds: float, max_bytes: int) -> None:
        if seconds <= 0 or max_bytes <= 0:
            raise ValueError("a ring buffer needs a positive length and size")
        self.span_ns = int(seconds * NS)
        self.max_bytes = max_bytes
        self._records: deque[Record] = deque()
        self.bytes = 0
        #: records dropped for the byte bound before their time was up (the buffer was too small).
        self.dropped_early = 0

    def append(self, record: Record) -> None:
        self._records.append(record)
        self.bytes += record.size
        newest = record.recv_ns
        while self._records and newest - self._records[0].recv_ns > self.span_ns:
            self.bytes -= self._records.popleft().size
        while self.bytes > self.max_bytes and len(self._records) > 1:
            self.bytes -= self._records.popleft().size
            self.dropped_early += 1

    def since(self, start_ns: int) -> list[Record]:
        """A copy of the records received at or after ``start_ns``."""
        return [r for r in self._records if r.recv_ns >= start_ns]

    def __len__(self) -> int:
        return len(self._records)


class FaultDetector:
    """Turns records into faults. Edge-triggered: a state that stays bad (the referee re-publishes its
    state at 1 Hz, heartbeats come every second) is one fault, not one per message.

    - ``referee.state``: ``illegal`` becomes non-empty or changes (an illegal move), ``fault`` likewise;
    - ``actuator.event``: a command failed (once per command id; a repeated answer is not new);
    - ``sys.heartbeat``: a process's state becomes "fault", or its pid changes (it crashed and was
      restarted).

    For ``grace_ns`` after the first record, states seen for the first time are the baseline, not
    faults (the recorder has just started and missed what led to them); afterwards a process or game
    state seen for the first time already bad is a fault.
    """

    def __init__(self, grace_ns: int = 3 * NS) -> None:
        self.grace_ns = grace_ns
        self._start_ns: int | None = None
        self._illegal: str | None = None
        self._game_fault: str | None = None
        self._failed_commands: set[str] = set()
        self._pids: dict[str, int] = {}
        self._states: dict[str, str] = {}

    def check(self, record: Record) -> list[Fault]:
        if self._start_ns is None:
            self._start_ns = record.recv_ns
        if record.topic not in ("referee.state", "actuator.event", "sys.heartbeat"):
            return []
        try:
            message = record.envelope().message
        except messages.DecodeError:
            return []  # a bad message is the subscriber's business, not a fault of the game
        at = record.recv_ns
        baseline = at - self._start_ns < self.grace_ns
        match message:
            case GameState():
                return self._game(message, at, baseline)
            case ActuatorEvent(status="failed", repeat=False):
                if message.command_id in self._failed_commands:
                    return []
                self._failed_commands.add(message.command_id)
                reason = f" ({message.reason})" if message.reason else ""
                return [Fault("actuator-failed", f"command {message.command_id} failed{reason}", at)]
            case Heartbeat():
                return self._heartbeat(message, at, baseline)
        return []

    def _game(self, state: GameState, at: int, baseline: bool) -> list[Fault]:
        faults = []
        first = self._illegal is None
        if state.illegal and state.illegal != self._illegal and not (first and baseline):
            faults.append(Fault("illegal-move", f"{state.illegal} in game {state.game_id or '-'}", at))
        if state.fault and state.fault != self._game_fault and not (first and baseline):
            faults.append(Fault("game-fault", state.fault, at))
        self._illegal = state.illegal
        self._game_fault = state.fault
        return faults

    def _heartbeat(self, beat: Heartbeat, at: int, baseline: bool) -> list[Fault]:
        faults = []
        old_pid = self._pids.get(beat.process)
        old_state = self._states.get(beat.process)
        if old_pid is not None and beat.pid != old_pid:
            faults.append(
                Fault("process-restart", f"{beat.process} restarted: pid {old_pid} -> {beat.pid}", at)
            )
        if beat.state == "fault" and old_state != "fault" and not (old_state is None and baseline):
            why = beat.last_error or beat.detail or "no detail"
            faults.append(Fault("process-fault", f"{beat.process} in fault: {why}", at))
        self._pids[beat.process] = beat.pid
        self._states[beat.process] = beat.state
        return faults


@dataclass
class Dump:
    """What to write: the faults (the first one named the file) and the records around them."""

    faults: list[Fault]
    records: list[Record]
    #: the first fault's time; the records start ``seconds`` before it.
    first_ns: int = 0


@dataclass
class _Pending:
    faults: list[Fault]
    due_ns: int
    first_ns: int = field(init=False)

    def __post_init__(self) -> None:
        self.first_ns = self.faults[0].at_ns


class BlackBox:
    """The ring buffer plus the triggers: feed it every record (:meth:`offer`) and call :meth:`tick`
    when nothing arrives; each returns a :class:`Dump` when one is due.

    A fault opens a dump that is written ``post_seconds`` later (so it shows what the stack did about
    it) with the ``seconds`` before the fault. Faults in that window join the same dump.
    """

    def __init__(
        self,
        seconds: float = 30.0,
        post_seconds: float = 2.0,
        buffer_bytes: int = 64_000_000,
        grace_s: float = 3.0,
    ) -> None:
        self.pre_ns = int(seconds * NS)
        self.post_ns = int(post_seconds * NS)
        self.ring = RingBuffer(seconds + post_seconds, buffer_bytes)
        self.detector = FaultDetector(int(grace_s * NS))
        self._pending: _Pending | None = None
        #: every fault seen, in order.
        self.faults: list[Fault] = []

    def offer(self, record: Record) -> tuple[list[Fault], Dump | None]:
        """Take one record; returns the faults it raised and a dump if one is due."""
        self.ring.append(record)
        faults = self.detector.check(record)
        if faults:
            self.faults.extend(faults)
            if self._pending is None:
                self._pending = _Pending(list(faults), record.recv_ns + self.post_ns)
            else:
                self._pending.faults.extend(faults)
        return faults, self.tick(record.recv_ns)

    def tick(self, now_ns: int) -> Dump | None:
        """A dump if the pending one's post window has passed at ``now_ns``."""
        if self._pending is not None and now_ns >= self._pending.due_ns:
            return self.flush()
        return None

    def flush(self) -> Dump | None:
        """The pending dump now, whatever its window (at shutdown)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return None
        return Dump(pending.faults, self.ring.since(pending.first_ns - self.pre_ns), pending.first_ns)

    @property
    def pending(self) -> bool:
        return self._pending is not None


class FaultStore:
    """The folder of fault recordings, bounded: at most ``max_files`` files and ``max_bytes`` bytes; the
    oldest go first (never the one just written)."""

    def __init__(self, folder: str | Path, max_files: int = 20, max_bytes: int = 200_000_000) -> None:
        if max_files < 1 or max_bytes < 1:
            raise ValueError("a fault store keeps at least one file")
        self.folder = Path(folder)
        self.max_files = max_files
        self.max_bytes = max_bytes

    def files(self) -> list[Path]:
        """The fault recordings, oldest first (by name: it starts with the UTC time)."""
        if not self.folder.is_dir():
            return []
        return sorted(
            p for p in self.folder.iterdir() if p.name.startswith(FILE_PREFIX) and p.suffix == SUFFIX
        )

    def write(self, dump: Dump, header: FileHeader | None = None) -> Path:
        """Write ``dump`` (atomically) and prune; returns the new file's path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        first = dump.faults[0]
        header = header or FileHeader.now(
            tool="blackbox",
            reason=str(first),
            faults=[{"kind": f.kind, "detail": f.detail, "at_ns": f.at_ns} for f in dump.faults],
        )
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S.%f")[:-3] + "Z"
        slug = re.sub(r"[^a-z0-9]+", "-", f"{first.kind}-{first.detail}".lower()).strip("-")[:48]
        path = self.folder / f"{FILE_PREFIX}{stamp}-{slug}{SUFFIX}"
        n = 1
        while path.exists():  # two dumps in one millisecond
            n += 1
            path = self.folder / f"{FILE_PREFIX}{stamp}-{slug}-{n}{SUFFIX}"
        write_recording(path, dump.records, header)
        self.prune(keep=path)
        return path

    def prune(self, keep: Path | None = None) -> list[Path]:
        """Delete the oldest recordings until the bounds hold; returns what was deleted."""
        files = self.files()
        sizes = {p: _size(p) for p in files}
        total = sum(sizes.values())
        deleted = []
        for path in files:
            if len(files) - len(deleted) <= self.max_files and total <= self.max_bytes:
                break
            if path == keep:
                continue
            path.unlink(missing_ok=True)
            total -= sizes[path]
            deleted.append(path)
        return deleted


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
