"""The recording file format (``.sanzilog``): records, the file header, the writer and the reader.

The format is described in docs/recording-format.md. In short::

    b"SANZIREC"  u32 header_len  u32 crc32(header)  header (JSON: schemas, versions, topic table, ...)
    record*      u32 payload_len u32 crc32(payload) payload
    payload  =   u64 recv_mono_ns  u32 topic_len  u32 header_len  topic  header  body

All integers little-endian. A record holds the three frames of one message exactly as they were received
(topic, msgpack header, msgpack body), so a recording can be published again byte for byte and decoded
by a newer program. Decoding is lazy (:meth:`Record.envelope`). A truncated or corrupt tail (a crash of
the recorder, a full disk) is cut at the last good record with a warning, never an error: the records
before it are all returned and :attr:`Recording.tail` says what was cut.

This module knows files and messages, not the bus: it sits below the services, so that the blackbox
writes recordings without depending on the command-line layer. Recording from and replaying onto the bus
(``sanzi record``, ``sanzi play``) are in :mod:`launch.recording`, above it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import struct
import time
import warnings
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

import messages
from messages import TOPICS

#: the first bytes of every recording.
MAGIC: Final = b"SANZIREC"
#: bumped when the layout of the file changes (not when messages change: they carry their own versions).
FORMAT_VERSION: Final = 1
#: the usual file name suffix.
SUFFIX: Final = ".sanzilog"

_PREFIX = struct.Struct("<II")  # length, crc32 (of the file header or of one record's payload)
_RECORD_HEAD = struct.Struct("<QII")  # recv_mono_ns, topic length, header length
#: a record larger than this is taken for a corrupt length field (a 4K bgr8 frame is 25 MB).
MAX_RECORD_BYTES: Final = 256 * 1024 * 1024
#: a file header larger than this is taken for a corrupt file.
MAX_HEADER_BYTES: Final = 64 * 1024 * 1024
#: the writer flushes to the operating system at least this often...
FLUSH_INTERVAL_S: Final = 1.0
#: ...and whenever this many bytes are waiting.
FLUSH_BYTES: Final = 1024 * 1024


class RecordingError(ValueError):
    """A recording cannot be written or read: not a recording, an unreadable header, a bad argument."""


class DamagedTailWarning(UserWarning):
    """A recording's tail was truncated or corrupt and has been cut off (the records before it are good)."""


# --------------------------------------------------------------------------------------------------
# Records and the file header


class Record:
    """One message as received: the receive time on the recorder's monotonic clock and the raw frames.

    The header and the message are decoded on first use and cached; a record of a type unknown to this
    program can still be counted, filtered by topic and published again.
    """

    __slots__ = ("_envelope", "_header", "body", "header_raw", "recv_ns", "topic")

    def __init__(self, recv_ns: int, topic: str, header_raw: bytes, body: bytes) -> None:
        self.recv_ns = recv_ns
        self.topic = topic
        self.header_raw = header_raw
        self.body = body
        self._header: messages.Header | None = None
        self._envelope: messages.Envelope | None = None

    @classmethod
    def from_frames(cls, frames: Sequence[bytes], recv_ns: int) -> Record:
        """:raises RecordingError: unless there are three frames and the topic is UTF-8."""
        if len(frames) != 3:
            raise RecordingError(f"a message has 3 frames (topic, header, body), not {len(frames)}")
        try:
            topic = bytes(frames[0]).decode()
        except UnicodeDecodeError:
            raise RecordingError("topic frame is not UTF-8") from None
        return cls(recv_ns, topic, bytes(frames[1]), bytes(frames[2]))

    def frames(self) -> list[bytes]:
        return [self.topic.encode(), self.header_raw, self.body]

    def header(self) -> messages.Header:
        """The decoded envelope header. :raises messages.DecodeError: when it is malformed."""
        if self._header is None:
            self._header = messages.decode_header(self.header_raw)
        return self._header

    def envelope(self) -> messages.Envelope:
        """The decoded message. :raises messages.DecodeError: unknown type or malformed body."""
        if self._envelope is None:
            header = self.header()
            self._envelope = messages.Envelope(
                self.topic, header, messages.decode_body(header.type, self.body)
            )
        return self._envelope

    @property
    def size(self) -> int:
        """Bytes this record takes in a file."""
        return (
            _PREFIX.size
            + _RECORD_HEAD.size
            + len(self.topic.encode())
            + len(self.header_raw)
            + len(self.body)
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self.recv_ns, self.topic, self.header_raw, self.body) == (
            other.recv_ns,
            other.topic,
            other.header_raw,
            other.body,
        )

    __hash__ = None  # type: ignore[assignment]  (mutable cache; equality by value)

    def __repr__(self) -> str:
        sizes = f"header={len(self.header_raw)} B, body={len(self.body)} B"
        return f"Record(recv_ns={self.recv_ns}, topic={self.topic!r}, {sizes})"


@dataclass(frozen=True)
class FileHeader:
    """The JSON header at the start of a recording."""

    #: layout of the file (see :data:`FORMAT_VERSION`).
    format_version: int
    #: when the recording began: wall clock (for people) and the recorder's monotonic clock (to place
    #: records, whose times are monotonic, on the wall clock: see :meth:`wall_ns`).
    created_wall_ns: int
    created_mono_ns: int
    #: the message type tag -> its schema version when recorded.
    versions: dict[str, int]
    #: the topic table when recorded: topic -> {"type", "rate_hz", "channel", "logged"}.
    topics: dict[str, dict[str, Any]]
    #: the JSON schema of every message type (messages.json_schema()).
    schemas: dict[str, Any]
    #: free-form facts: host, pid, tool, the topic selection, a fault's reason...
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def now(cls, **info: Any) -> FileHeader:
        """A header for a recording that starts now, describing this program's messages."""
        return cls(
            format_version=FORMAT_VERSION,
            created_wall_ns=time.time_ns(),
            created_mono_ns=time.monotonic_ns(),
            versions={tag: cls_.VERSION for tag, cls_ in messages.MESSAGE_TYPES.items()},
            topics={
                name: {
                    "type": t.type.__struct_config__.tag,
                    "rate_hz": t.rate_hz,
                    "channel": t.channel.value,
                    "logged": t.logged,
                }
                for name, t in TOPICS.items()
            },
            schemas=messages.json_schema(),
            info={"host": socket.gethostname(), "pid": os.getpid(), **info},
        )

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "format": "sanzi-recording",
                "format_version": self.format_version,
                "created_wall_ns": self.created_wall_ns,
                "created_mono_ns": self.created_mono_ns,
                "versions": self.versions,
                "topics": self.topics,
                "schemas": self.schemas,
                "info": self.info,
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> FileHeader:
        """:raises RecordingError: when the header is not the JSON object this module writes."""
        try:
            data = json.loads(raw)
            if data.get("format") != "sanzi-recording":
                raise RecordingError("header does not say format 'sanzi-recording'")
            return cls(
                format_version=int(data["format_version"]),
                created_wall_ns=int(data["created_wall_ns"]),
                created_mono_ns=int(data["created_mono_ns"]),
                versions={str(k): int(v) for k, v in data["versions"].items()},
                topics=dict(data["topics"]),
                schemas=dict(data["schemas"]),
                info=dict(data.get("info", {})),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if isinstance(exc, RecordingError):
                raise
            raise RecordingError(f"unreadable recording header: {exc}") from None

    def wall_ns(self, recv_ns: int) -> int:
        """The wall-clock time of a record received at ``recv_ns`` (the recorder's monotonic clock)."""
        return self.created_wall_ns + (recv_ns - self.created_mono_ns)


# --------------------------------------------------------------------------------------------------
# Writing


class RecordingWriter:
    """Streams records to a file. Not thread-safe; one writer per file.

    The header is written on creation. Records are buffered and flushed to the operating system every
    :data:`FLUSH_INTERVAL_S` seconds or :data:`FLUSH_BYTES` bytes, so a crash loses at most that much and
    leaves a file whose tail the reader cuts. ``close()`` flushes and fsyncs.

    :raises RecordingError: when the file exists (unless ``overwrite``) or cannot be created.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: FileHeader | None = None,
        *,
        overwrite: bool = False,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        flush_bytes: int = FLUSH_BYTES,
    ) -> None:
        self.path = Path(path)
        self.header = header or FileHeader.now()
        self.flush_interval_s = flush_interval_s
        self.flush_bytes = flush_bytes
        self.records = 0
        self.counts: Counter[str] = Counter()
        try:
            self._file: BinaryIO = open(self.path, "wb" if overwrite else "xb")  # noqa: SIM115
        except FileExistsError:
            raise RecordingError(f"{self.path} exists; choose another name or remove it") from None
        except OSError as exc:
            raise RecordingError(f"cannot create {self.path}: {exc.strerror}") from None
        raw = self.header.to_json()
        self._file.write(MAGIC + _PREFIX.pack(len(raw), zlib.crc32(raw)) + raw)
        self.bytes = len(MAGIC) + _PREFIX.size + len(raw)
        self._pending = 0
        self._last_flush = time.monotonic()
        self.flush()

    def write(self, frames: Sequence[bytes], recv_ns: int | None = None) -> Record:
        """Append one message (its three frames as received) with its receive time (now by default).

        :raises RecordingError: when ``frames`` is not three frames with a UTF-8 topic.
        """
        record = Record.from_frames(frames, time.monotonic_ns() if recv_ns is None else recv_ns)
        self.write_record(record)
        return record

    def write_record(self, record: Record) -> None:
        topic = record.topic.encode()
        payload = b"".join(
            (
                _RECORD_HEAD.pack(record.recv_ns, len(topic), len(record.header_raw)),
                topic,
                record.header_raw,
                record.body,
            )
        )
        if len(payload) > MAX_RECORD_BYTES:
            raise RecordingError(f"a record of {len(payload)} bytes is larger than {MAX_RECORD_BYTES}")
        self._file.write(_PREFIX.pack(len(payload), zlib.crc32(payload)))
        self._file.write(payload)
        self.records += 1
        self.counts[record.topic] += 1
        size = _PREFIX.size + len(payload)
        self.bytes += size
        self._pending += size
        if self._pending >= self.flush_bytes or time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def flush(self) -> None:
        self._file.flush()
        self._pending = 0
        self._last_flush = time.monotonic()

    def close(self) -> None:
        if self._file.closed:
            return
        self.flush()
        # a filesystem without fsync: the data is flushed, that is what we can do
        with contextlib.suppress(OSError):
            os.fsync(self._file.fileno())
        self._file.close()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_recording(
    path: str | os.PathLike[str], records: Iterable[Record], header: FileHeader | None = None, **kw: Any
) -> int:
    """Write ``records`` to a new file at ``path`` atomically (a temporary name, then a rename), so a
    reader never sees a half-written file. Returns the file's size."""
    final = Path(path)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    try:
        with RecordingWriter(tmp, header, overwrite=True, flush_bytes=FLUSH_BYTES * 8, **kw) as writer:
            for record in records:
                writer.write_record(record)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return writer.bytes


# --------------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class Tail:
    """What was cut off the end of a recording: from byte ``offset`` on, ``dropped_bytes`` bytes."""

    offset: int
    dropped_bytes: int
    #: "truncated" (the file ends inside a record) or "corrupt" (a bad length or checksum).
    reason: str
    detail: str

    def __str__(self) -> str:
        where = f"at byte {self.offset} ({self.dropped_bytes} bytes dropped)"
        return f"{self.reason} tail cut {where}: {self.detail}"


class Recording:
    """A recording opened for reading. Iterate it for its records (each pass reads the file again, so a
    recording of any size streams). After a full pass :attr:`tail` says what was cut off the end, if
    anything, and :attr:`good_bytes` how much of the file was good. With ``warn`` (the default) a damaged
    tail also raises one :class:`DamagedTailWarning` (a warning, on stderr: tools that print JSON on
    stdout stay clean); pass ``warn=False`` when the caller reports :attr:`tail` itself.

    :raises RecordingError: when the file cannot be opened, does not start with the magic, or its header
        is damaged (then nothing in it can be trusted).
    """

    def __init__(self, path: str | os.PathLike[str], *, warn: bool = True) -> None:
        self.path = Path(path)
        self.warn = warn
        try:
            with open(self.path, "rb") as f:
                start = f.read(len(MAGIC) + _PREFIX.size)
                if len(start) < len(MAGIC) or start[: len(MAGIC)] != MAGIC:
                    raise RecordingError(f"{self.path} is not a sanzi recording (no {MAGIC.decode()} magic)")
                if len(start) < len(MAGIC) + _PREFIX.size:
                    raise RecordingError(f"{self.path}: the file ends inside its header")
                length, crc = _PREFIX.unpack_from(start, len(MAGIC))
                if length > MAX_HEADER_BYTES:
                    raise RecordingError(f"{self.path}: header length {length} is not plausible")
                raw = f.read(length)
        except OSError as exc:
            raise RecordingError(f"cannot read {self.path}: {exc.strerror}") from None
        if len(raw) < length:
            raise RecordingError(f"{self.path}: the file ends inside its header")
        if zlib.crc32(raw) != crc:
            raise RecordingError(f"{self.path}: the header's checksum is wrong (damaged file)")
        self.header = FileHeader.from_json(raw)
        if self.header.format_version > FORMAT_VERSION:
            raise RecordingError(
                f"{self.path} has format version {self.header.format_version}; this program reads up to "
                f"{FORMAT_VERSION}: update sanzi"
            )
        self.data_offset = len(MAGIC) + _PREFIX.size + length
        self.tail: Tail | None = None
        self.good_bytes = self.data_offset
        self._warned = False

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def records(self) -> Iterator[Record]:
        """The records in file order. A damaged tail ends the iteration (with one warning per reader)."""
        try:
            f = open(self.path, "rb")  # noqa: SIM115  (closed in the finally below, also on early exit)
        except OSError as exc:
            raise RecordingError(f"cannot read {self.path}: {exc.strerror}") from None
        try:
            size = os.fstat(f.fileno()).st_size
            f.seek(self.data_offset)
            offset = self.data_offset
            while True:
                prefix = f.read(_PREFIX.size)
                if not prefix:
                    self._finish(None)
                    return
                problem, record, used = _parse_record(f, prefix)
                if problem is not None:
                    reason, detail = problem
                    self._finish(Tail(offset, size - offset, reason, detail))
                    return
                assert record is not None
                offset += used
                self.good_bytes = offset
                yield record
        finally:
            f.close()

    def _finish(self, tail: Tail | None) -> None:
        self.tail = tail
        if tail is not None and self.warn and not self._warned:
            self._warned = True
            warnings.warn(f"{self.path}: {tail}", DamagedTailWarning, stacklevel=3)

    def __len__(self) -> int:
        return sum(1 for _ in self.records())

    def wall_ns(self, record: Record) -> int:
        return self.header.wall_ns(record.recv_ns)


def _parse_record(f: BinaryIO, prefix: bytes) -> tuple[tuple[str, str] | None, Record | None, int]:
    """Parse one record whose 8-byte prefix has been read. Returns (problem, record, bytes used)."""
    if len(prefix) < _PREFIX.size:
        return ("truncated", f"{len(prefix)} bytes of a record prefix"), None, 0
    length, crc = _PREFIX.unpack(prefix)
    if length < _RECORD_HEAD.size or length > MAX_RECORD_BYTES:
        return ("corrupt", f"implausible record length {length}"), None, 0
    payload = f.read(length)
    if len(payload) < length:
        return ("truncated", f"record of {length} bytes, {len(payload)} present"), None, 0
    if zlib.crc32(payload) != crc:
        return ("corrupt", "record checksum mismatch"), None, 0
    recv_ns, topic_len, header_len = _RECORD_HEAD.unpack_from(payload)
    start = _RECORD_HEAD.size
    if start + topic_len + header_len > length:
        return ("corrupt", "frame lengths exceed the record"), None, 0
    try:
        topic = payload[start : start + topic_len].decode()
    except UnicodeDecodeError:
        return ("corrupt", "topic is not UTF-8"), None, 0
    header_raw = payload[start + topic_len : start + topic_len + header_len]
    body = payload[start + topic_len + header_len :]
    return None, Record(recv_ns, topic, header_raw, body), _PREFIX.size + length


# --------------------------------------------------------------------------------------------------
# Choosing topics


def match_topics(regex: str | None, available: Iterable[str] | None = None) -> list[str]:
    """Topics of ``available`` (default: the topic table) that ``regex`` finds (``re.search``, so
    ``vision`` matches both vision topics; anchor with ^ and $ for one). ``None`` or "" selects the
    logged topics of the table (all but camera frames).

    :raises RecordingError: when the expression is not valid or selects nothing.
    """
    names = list(TOPICS) if available is None else list(available)
    if not regex:
        # a topic unknown to the table (a newer process) counts as logged
        chosen = [n for n in names if n not in TOPICS or TOPICS[n].logged]
    else:
        try:
            pattern = re.compile(regex)
        except re.error as exc:
            raise RecordingError(f"--topics {regex!r} is not a regular expression: {exc}") from None
        chosen = [n for n in names if pattern.search(n)]
    if not chosen:
        raise RecordingError(f"--topics {regex!r} selects no topic; topics: {', '.join(sorted(names))}")
    return chosen
