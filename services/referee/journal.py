"""The referee's journal: an append-only file of the events it acted on.

Each record is::

    [length: uint32 little-endian] [crc32 of the payload: uint32 little-endian] [payload: msgpack event]

An event is appended, and the file fsync'ed, *before* the actions it caused are carried out, so after a
crash the journal holds at least every event whose consequences anyone may have seen. At start the
referee reads the journal and folds the events through the state machine (:func:`open_journal`).

A torn write or a damaged tail (a length that runs past the end, a CRC that does not match, a payload that
is not an event) ends the good part: the file is truncated to the last good record, the loss is reported
in a :class:`Recovery`, and the referee goes on. A damaged journal is never fatal.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import msgspec

from services.common.durable import sync_folder, write_atomically

from .events import Event, decode_event, encode_event

_HEAD: Final = struct.Struct("<II")
HEADER_SIZE: Final = _HEAD.size
#: no event comes near this; a larger length is damage, not a record.
MAX_RECORD: Final = 1 << 20


class JournalError(OSError):
    """The journal file cannot be opened or written (permissions, disk full)."""


def encode_record(event: Event) -> bytes:
    """One record: header and payload."""
    payload = encode_event(event)
    return _HEAD.pack(len(payload), zlib.crc32(payload)) + payload


@dataclass(frozen=True, slots=True)
class Recovery:
    """What reading the journal found: ``records`` good events in ``good_bytes``; ``problem`` is "" for
    a clean journal, else why the tail was cut; ``cut_bytes`` how much was cut."""

    records: int
    good_bytes: int
    cut_bytes: int = 0
    problem: str = ""


def read_records(data: bytes) -> tuple[list[Event], Recovery]:
    """The events of a journal's bytes, up to the first damaged record."""
    events: list[Event] = []
    pos = 0
    end = len(data)
    problem = ""
    while pos < end:
        if end - pos < HEADER_SIZE:
            problem = f"torn record header at byte {pos}"
            break
        length, crc = _HEAD.unpack_from(data, pos)
        if length > MAX_RECORD:
            problem = f"impossible record length {length} at byte {pos}"
            break
        start = pos + HEADER_SIZE
        if start + length > end:
            problem = f"torn record at byte {pos} ({end - start} of {length} bytes)"
            break
        payload = data[start : start + length]
        if zlib.crc32(payload) != crc:
            problem = f"checksum mismatch in the record at byte {pos}"
            break
        try:
            events.append(decode_event(payload))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            problem = f"record at byte {pos} is not an event: {exc}"
            break
        pos = start + length
    return events, Recovery(records=len(events), good_bytes=pos, cut_bytes=end - pos, problem=problem)


class Journal:
    """An open journal, positioned at its end. Not thread-safe; one writer (the referee)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if created:  # the new name must survive a power cut too
                sync_folder(self.path.parent)
        except OSError as exc:
            raise JournalError(f"cannot open the journal {self.path}: {exc.strerror}") from None
        self.records = 0
        self._dirty = False

    def append(self, event: Event, sync: bool = True) -> None:
        """Write ``event``; with ``sync`` (the default) it is on disk when this returns. An unsynced
        record is synced with the next synced one (or :meth:`sync`)."""
        record = encode_record(event)
        try:
            written = os.write(self._fd, record)
            if written != len(record):  # a short write on a regular file means the disk is full
                raise OSError(28, f"short write ({written} of {len(record)} bytes)")
            self.records += 1
            self._dirty = True
            if sync:
                self.sync()
        except OSError as exc:
            raise JournalError(f"cannot write the journal {self.path}: {exc.strerror or exc}") from None

    def compact(self, first: Event) -> None:
        """Replace the whole journal by the single record ``first`` (a checkpoint of the state), atomically:
        the new file is written and synced beside the old one, then renamed over it. A crash at any
        moment leaves either the old journal or the new one."""
        record = encode_record(first)
        try:
            self.sync()
            write_atomically(self.path, record)
            os.close(self._fd)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise JournalError(f"cannot compact the journal {self.path}: {exc.strerror or exc}") from None
        self.records = 1
        self._dirty = False

    def sync(self) -> None:
        if self._dirty:
            os.fsync(self._fd)
            self._dirty = False

    def close(self) -> None:
        if self._fd >= 0:
            try:
                self.sync()
            finally:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_journal(path: str | os.PathLike[str]) -> tuple[Journal, list[Event], Recovery]:
    """Read the journal at ``path`` (a missing file is an empty journal), cut a damaged tail off the file,
    and open it for appending. Returns the journal, its good events, and what was found.

    :raises JournalError: when the file cannot be read or written at all.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise JournalError(f"cannot read the journal {p}: {exc.strerror}") from None
    events, recovery = read_records(data)
    if recovery.cut_bytes:
        try:
            os.truncate(p, recovery.good_bytes)
        except OSError as exc:
            raise JournalError(f"cannot cut the damaged tail of {p}: {exc.strerror}") from None
    journal = Journal(p)
    journal.records = recovery.records
    return journal, events, recovery
