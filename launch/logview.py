"""Merging the processes' JSON logs into one timeline: parsing, filtering, rendering and following.

Each process under supervisord writes JSON lines (see services/common/log.py) to ``<log_dir>/<name>.log``;
rotated files are ``<name>.log.1`` (newest) ... ``<name>.log.N`` (oldest). A line looks like::

    {"game": "g1", "event": "judged", "pid": 4711, "process": "referee", "level": "info",
     "timestamp": "2026-11-29T19:44:07.641532Z", "mono": 1158.74, "move": 3}

Lines that are not JSON (a traceback Python printed on a crash, a print) are kept, attributed to the
file's process and placed right after the line before them in their file (they take its time and its
game). The merge orders by timestamp; lines with equal times keep their file order.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

#: severity order of structlog's levels; a filter keeps lines at or above its level.
LEVELS: Final[dict[str, int]] = {
    "debug": 10,
    "info": 20,
    "warning": 30,
    "warn": 30,
    "error": 40,
    "exception": 40,
    "critical": 50,
}
#: keys shown in a line's head rather than as key=value.
HEAD_KEYS: Final = frozenset({"event", "level", "timestamp", "process", "pid", "mono", "exception"})
#: keys that name the game a line belongs to.
GAME_KEYS: Final = ("game", "game_id")
#: the level shown for lines that are not JSON.
RAW_LEVEL: Final = "raw"
LOG_SUFFIX: Final = ".log"
#: a file whose first bytes changed was truncated and rewritten; this many are compared.
HEAD_BYTES: Final = 256
_ROTATED = re.compile(r"^(?P<name>.+)\.log\.(?P<n>\d+)$")


class LogViewError(ValueError):
    """A bad filter argument (an unknown level, an unreadable --since)."""


@dataclass
class LogLine:
    """One line of one process's log."""

    #: seconds since the epoch (UTC).
    ts: float
    process: str
    #: the structlog level, or :data:`RAW_LEVEL` for a line that is not JSON.
    level: str
    event: str
    #: the other keys of a JSON line (bound fields like game, key=value pairs).
    fields: dict[str, Any]
    #: the line as it was in the file (without the newline).
    text: str
    game: str = ""
    #: (file number, line number) for a stable order among equal times.
    order: tuple[int, int] = (0, 0)

    @property
    def is_json(self) -> bool:
        return self.level != RAW_LEVEL


def parse_time(value: Any) -> float | None:
    """An ISO-8601 timestamp (structlog's, with "Z") as epoch seconds; None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        stamp = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.UTC)  # structlog writes UTC
    return stamp.timestamp()


def parse_line(text: str, process: str, previous: LogLine | None, fallback_ts: float = 0.0) -> LogLine:
    """Parse one line of ``process``'s log. A line that is not a JSON object with a timestamp is a raw
    line: it takes the time and game of ``previous`` (or ``fallback_ts``)."""
    data: Any = None
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
    ts = parse_time(data.get("timestamp")) if isinstance(data, dict) else None
    if not isinstance(data, dict) or ts is None:
        return LogLine(
            ts=previous.ts if previous is not None else fallback_ts,
            process=process,
            level=RAW_LEVEL,
            event=text,
            fields={},
            text=text,
            game=previous.game if previous is not None else "",
        )
    game = next((str(data[k]) for k in GAME_KEYS if data.get(k) not in (None, "")), "")
    return LogLine(
        ts=ts,
        process=str(data.get("process") or process),
        level=str(data.get("level", "info")).lower(),
        event=str(data.get("event", "")),
        fields={k: v for k, v in data.items() if k not in HEAD_KEYS or k == "exception"},
        text=text,
        game=game,
    )


@dataclass
class LogFilter:
    """Which lines to show. Empty fields select everything."""

    processes: frozenset[str] = frozenset()
    #: the least level shown; raw lines (crash output) always pass it.
    level: str = ""
    game: str = ""
    since: float | None = None
    _min: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        if self.level:
            if self.level.lower() not in LEVELS:
                raise LogViewError(f"unknown level {self.level!r}; choose one of debug, info, warning, error")
            self._min = LEVELS[self.level.lower()]

    def __call__(self, line: LogLine) -> bool:
        if self.processes and line.process not in self.processes:
            return False
        if self._min and line.is_json and LEVELS.get(line.level, 20) < self._min:
            return False
        if self.game and line.game != self.game:
            return False
        return not (self.since is not None and line.ts < self.since)


_SINCE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>s|m|h|d)$")
_UNITS: Final = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_since(text: str, now: float | None = None) -> float:
    """``--since``: a duration back from now ("90s", "10m", "2h", "1d") or an ISO time ("2026-11-29T19:30",
    local time unless it says otherwise). Returns epoch seconds. :raises LogViewError: otherwise."""
    now = time.time() if now is None else now
    match = _SINCE.match(text.strip())
    if match:
        return now - float(match["n"]) * _UNITS[match["unit"]]
    try:
        stamp = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise LogViewError(
            f"--since {text!r}: give a duration like 90s, 10m, 2h, 1d or an ISO time"
        ) from None
    if stamp.tzinfo is None:
        stamp = stamp.astimezone()  # a time without a zone is the user's local time
    return stamp.timestamp()


# --------------------------------------------------------------------------------------------------
# Files


def process_of(path: Path) -> str | None:
    """The process a log file belongs to (``referee.log``, ``referee.log.2`` -> "referee"), or None."""
    if path.name.endswith(LOG_SUFFIX):
        return path.name[: -len(LOG_SUFFIX)]
    match = _ROTATED.match(path.name)
    return match["name"] if match else None


def discover(log_dir: str | Path) -> dict[str, list[Path]]:
    """The log files in ``log_dir`` per process, oldest first (``name.log.N`` ... ``name.log.1``,
    ``name.log``)."""
    folder = Path(log_dir)
    out: dict[str, list[tuple[int, Path]]] = {}
    if not folder.is_dir():
        return {}
    for path in folder.iterdir():
        if not path.is_file():
            continue
        name = process_of(path)
        if name is None:
            continue
        match = _ROTATED.match(path.name)
        age = int(match["n"]) if match else 0
        out.setdefault(name, []).append((age, path))
    return {name: [p for _, p in sorted(files, key=lambda x: -x[0])] for name, files in sorted(out.items())}


class LogFile:
    """One log file, read incrementally: :meth:`read` returns the complete lines added since the last
    call. Survives rotation (the file is renamed and a new one created: the rest of the old one is read
    first) and truncation (read again from the start). A partial last line waits for its newline."""

    def __init__(self, path: Path, process: str, number: int, from_end: bool = False) -> None:
        self.path = path
        self.process = process
        self.number = number
        self._file: Any = None
        self._inode: int | None = None
        self._buffer = b""
        self._head = b""
        self._previous: LogLine | None = None
        self._lineno = 0
        self._open(from_end)

    def _open(self, from_end: bool = False) -> None:
        try:
            self._file = open(self.path, "rb")  # noqa: SIM115  (kept open across polls, closed in close())
        except OSError:
            self._file = None
            self._inode = None
            return
        self._inode = os.fstat(self._file.fileno()).st_ino
        self._head = b""
        if from_end:
            self._file.seek(0, os.SEEK_END)

    def read(self) -> list[LogLine]:
        lines: list[LogLine] = []
        if self._file is None:
            self._open()
            if self._file is None:
                return lines
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        if st is not None and st.st_ino != self._inode:
            lines += self._drain()  # rotated: finish the old file, then start on the new one
            self._file.close()
            self._buffer = b""
            self._open()
            if self._file is None:
                return lines
        elif st is not None and self._rewritten(st.st_size):
            self._file.seek(0)  # truncated (copytruncate rotation or a fresh start): read it again
            self._buffer = b""
        lines += self._drain()
        self._head = os.pread(self._file.fileno(), min(HEAD_BYTES, self._file.tell()), 0)
        return lines

    def _rewritten(self, size: int) -> bool:
        """Whether the file was truncated since the last read: it is shorter than what was read, or
        its first bytes changed (truncated and written again past the old length, between two polls)."""
        if size < self._file.tell():
            return True
        return bool(self._head) and os.pread(self._file.fileno(), len(self._head), 0) != self._head

    def _drain(self) -> list[LogLine]:
        data = self._buffer + self._file.read()
        *complete, self._buffer = data.split(b"\n")
        at_start = self._previous is None
        out = []
        for raw in complete:
            text = raw.decode("utf-8", errors="replace").rstrip("\r")
            if not text.strip():
                continue
            self._lineno += 1
            line = parse_line(text, self.process, self._previous, fallback_ts=_mtime(self.path))
            line.order = (self.number, self._lineno)
            self._previous = line
            out.append(line)
        if at_start:
            _backfill(out)
        return out

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return time.time()


def _backfill(lines: list[LogLine]) -> None:
    """Raw lines at the start of a file (no JSON line before them) take the time of the next JSON line."""
    for i, line in enumerate(lines):
        if line.is_json:
            for raw in lines[:i]:
                raw.ts = line.ts
            return


def read_all(log_dir: str | Path, keep: LogFilter | None = None, *, current: bool = True) -> list[LogLine]:
    """Every line of every log file in ``log_dir`` (rotated ones too; without ``current``, only those),
    merged by time and filtered."""
    keep = keep or LogFilter()
    merged: list[LogLine] = []
    number = 0
    for process, paths in discover(log_dir).items():
        for path in paths:
            number += 1
            if not current and path.name.endswith(LOG_SUFFIX):
                continue
            log = LogFile(path, process, number)
            merged.extend(log.read())
            log.close()
    merged.sort(key=lambda line: (line.ts, line.order))
    return [line for line in merged if keep(line)]


class Follower:
    """Follows the current log file of every process in ``log_dir`` (new processes' files are picked up
    as they appear). :meth:`poll` returns the new lines of all files, merged by time and filtered; the
    first poll returns the files' whole contents unless ``from_end``."""

    def __init__(self, log_dir: str | Path, keep: LogFilter | None = None, from_end: bool = False) -> None:
        self.log_dir = Path(log_dir)
        self.keep = keep or LogFilter()
        self._files: dict[str, LogFile] = {}
        self._number = 10_000  # after the numbers read_all used, so order stays stable
        self._scan(from_end)

    def _scan(self, from_end: bool) -> None:
        if not self.log_dir.is_dir():
            return
        for path in sorted(self.log_dir.glob(f"*{LOG_SUFFIX}")):
            name = path.name[: -len(LOG_SUFFIX)]
            if name not in self._files:
                self._number += 1
                self._files[name] = LogFile(path, name, self._number, from_end=from_end)

    def poll(self) -> list[LogLine]:
        self._scan(from_end=False)  # a file that appears now is read from its start
        lines: list[LogLine] = []
        for log in self._files.values():
            lines.extend(log.read())
        lines.sort(key=lambda line: (line.ts, line.order))
        return [line for line in lines if self.keep(line)]

    def close(self) -> None:
        for log in self._files.values():
            log.close()
        self._files.clear()


# --------------------------------------------------------------------------------------------------
# Rendering

_COLOURS: Final = {
    "debug": "\033[2m",
    "info": "\033[32m",
    "warning": "\033[33m",
    "warn": "\033[33m",
    "error": "\033[31;1m",
    "exception": "\033[31;1m",
    "critical": "\033[41;1m",
    RAW_LEVEL: "\033[35m",
}
_RESET: Final = "\033[0m"


def _value(value: Any) -> str:
    if isinstance(value, str):
        return value if value and not any(c in value for c in " =\"'\n") else json.dumps(value)
    return json.dumps(value, separators=(",", ":"), default=str)


def clock(ts: float) -> str:
    """Local date-less time of day with milliseconds."""
    return dt.datetime.fromtimestamp(ts).strftime("%H:%M:%S.%f")[:-3]


def render(line: LogLine, width: int = 9, colour: bool = False) -> str:
    """``HH:MM:SS.mmm process  level    event  key=value ...``; an exception's traceback follows on
    indented lines; a raw line shows its text as it was."""
    level = line.level
    shown = f"{_COLOURS.get(level, '')}{level:<7}{_RESET}" if colour else f"{level:<7}"
    head = f"{clock(line.ts)} {line.process:<{width}} {shown}"
    if not line.is_json:
        return f"{head} {line.text}"
    extras = {k: v for k, v in line.fields.items() if k != "exception"}
    body = " ".join(f"{k}={_value(v)}" for k, v in extras.items())
    text = f"{head} {line.event}" + (f"  {body}" if body else "")
    exception = line.fields.get("exception")
    if exception:
        text += "\n" + "\n".join("    " + row for row in _exception_lines(exception))
    return text


def _exception_lines(exception: Any) -> list[str]:
    if isinstance(exception, str):
        return exception.rstrip("\n").splitlines()
    rows: list[str] = []
    if isinstance(exception, list):  # structlog's dict_tracebacks
        for item in exception:
            if not isinstance(item, dict):
                rows.append(str(item))
                continue
            for frame in item.get("frames", []):
                rows.append(
                    f'File "{frame.get("filename")}", line {frame.get("lineno")}, in {frame.get("name")}'
                )
                if frame.get("line"):
                    rows.append(f"  {frame['line']}")
            rows.append(f"{item.get('exc_type', 'Exception')}: {item.get('exc_value', '')}")
        return rows
    return [json.dumps(exception, default=str)]


def as_json(line: LogLine) -> str:
    """The line for ``--json``: JSON lines as they were; a raw line wrapped as a JSON object with its
    process, time and ``"raw": true``."""
    if line.is_json:
        return line.text
    stamp = dt.datetime.fromtimestamp(line.ts, tz=dt.UTC).isoformat().replace("+00:00", "Z")
    obj = {"event": line.text, "process": line.process, "level": RAW_LEVEL, "timestamp": stamp, "raw": True}
    if line.game:
        obj["game"] = line.game
    return json.dumps(obj)


def write_lines(lines: Iterable[LogLine], out: TextIO, *, json_out: bool, width: int, colour: bool) -> None:
    for line in lines:
        out.write((as_json(line) if json_out else render(line, width, colour)) + "\n")
    out.flush()
