"""Recordings of the bus in MCAP: the file header, the writer and the reader.

docs/recording.md describes the file. In short, one MCAP file (zstd-compressed chunks, indexed, with a
summary) holds two views of the same traffic:

- **raw channels**, one per bus topic under its bus name (``vision.board``), message encoding
  :data:`FRAMES_ENCODING`: each message is the header and body frames exactly as received
  (``u32 header_len | header | body``), so a recording is published again byte for byte, decoded by a
  newer program, and keeps messages of types this program does not know. This is what sanzi reads.
- **viewer channels** (``/vision/board``), message encoding ``json`` with flat ``jsonschema`` schemas
  (:mod:`services.common.viewer`), plus the camera as ``foxglove.CompressedImage``, vision's reading as
  ``foxglove.ImageAnnotations`` and log lines as ``foxglove.Log``: what Foxglove and Lichtblick show.

The file header (schemas, versions, the topic table, the recorder's clocks) is an MCAP metadata record
named :data:`METADATA_NAME`, written before the first chunk. Message ``log_time`` is the wall-clock time
of reception; the receive time on the recorder's monotonic clock (:attr:`Record.recv_ns`, what replay
times by) is recovered exactly from it and the two clocks in the header.

A recorder that dies leaves a file without a summary; the reader streams the chunks, so every complete
chunk is read and :attr:`Recording.tail` says what was cut. The writer closes a chunk at least every
:data:`FLUSH_INTERVAL_S`, which bounds what a crash loses.

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
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgspec
import zstandard
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Channel, Chunk, DataEnd, Footer, Metadata, Schema
from mcap.records import Message as McapMessage
from mcap.stream_reader import StreamReader, breakup_chunk
from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter

import messages
from messages import TOPICS, BoardObservation, CameraFrame

from . import viewer

#: bumped when the layout of the file changes (not when messages change: they carry their own versions).
#: 1 was the hand-written ``.sanzilog`` container, which this program no longer reads.
FORMAT_VERSION: Final = 2
#: the usual file name suffix.
SUFFIX: Final = ".mcap"
#: the MCAP metadata record that holds the file header.
METADATA_NAME: Final = "sanzi"
#: the MCAP profile of a sanzi recording.
PROFILE: Final = "sanzi"
#: the message encoding of the raw channels: ``u32 header_len | header | body`` (the two msgpack frames).
FRAMES_ENCODING: Final = "sanzi-frames"
#: the schema name of the raw channels.
FRAMES_SCHEMA: Final = "sanzi.Frames"
#: the first bytes of an old ``.sanzilog`` (format 1), recognised to say what it is.
OLD_MAGIC: Final = b"SANZIREC"
MCAP_MAGIC: Final = b"\x89MCAP0\r\n"

_HEADER_LEN = struct.Struct("<I")
#: what a record costs beyond its frames, for size bounds (the MCAP message record's fixed fields).
RECORD_OVERHEAD: Final = 31
#: a record larger than this is refused (a 4K bgr8 frame is 25 MB).
MAX_RECORD_BYTES: Final = 256 * 1024 * 1024
#: a chunk is closed when this many uncompressed bytes are in it...
CHUNK_BYTES: Final = 4 * 1024 * 1024
#: ...or when it is this old: what a crash of the recorder loses at most (plus what the OS had not written).
FLUSH_INTERVAL_S: Final = 1.0


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

    def data(self) -> bytes:
        """The MCAP message data of this record on its raw channel (see :data:`FRAMES_ENCODING`)."""
        return _HEADER_LEN.pack(len(self.header_raw)) + self.header_raw + self.body

    @property
    def size(self) -> int:
        """Bytes this record takes uncompressed (its frames and the MCAP message record around them)."""
        return RECORD_OVERHEAD + len(self.topic.encode()) + len(self.header_raw) + len(self.body)

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


def _split(topic: str, data: bytes, recv_ns: int) -> Record:
    """The record in a raw channel's message. :raises RecordingError: when the lengths do not fit."""
    if len(data) < _HEADER_LEN.size:
        raise RecordingError(f"a {topic} message of {len(data)} bytes has no header length")
    (length,) = _HEADER_LEN.unpack_from(data)
    end = _HEADER_LEN.size + length
    if end > len(data):
        raise RecordingError(f"a {topic} message's header length {length} exceeds its {len(data)} bytes")
    return Record(recv_ns, topic, data[_HEADER_LEN.size : end], data[end:])


@dataclass(frozen=True)
class FileHeader:
    """The facts at the start of a recording (the MCAP metadata record :data:`METADATA_NAME`)."""

    #: layout of the file (see :data:`FORMAT_VERSION`).
    format_version: int
    #: when the recording began: wall clock (for people, and the MCAP log times) and the recorder's
    #: monotonic clock (to place records, whose times are monotonic, on the wall clock: :meth:`wall_ns`).
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

    def to_metadata(self) -> dict[str, str]:
        """The header as MCAP metadata (string values; the structured ones as JSON)."""
        return {
            "format": "sanzi-recording",
            "format_version": str(self.format_version),
            "created_wall_ns": str(self.created_wall_ns),
            "created_mono_ns": str(self.created_mono_ns),
            "versions": json.dumps(self.versions, separators=(",", ":")),
            "topics": json.dumps(self.topics, separators=(",", ":")),
            "schemas": json.dumps(self.schemas, separators=(",", ":")),
            "info": json.dumps(self.info, separators=(",", ":")),
        }

    @classmethod
    def from_metadata(cls, data: dict[str, str]) -> FileHeader:
        """:raises RecordingError: when the metadata is not what :meth:`to_metadata` writes."""
        try:
            if data.get("format") != "sanzi-recording":
                raise RecordingError("the sanzi metadata does not say format 'sanzi-recording'")
            return cls(
                format_version=int(data["format_version"]),
                created_wall_ns=int(data["created_wall_ns"]),
                created_mono_ns=int(data["created_mono_ns"]),
                versions={str(k): int(v) for k, v in json.loads(data["versions"]).items()},
                topics=dict(json.loads(data["topics"])),
                schemas=dict(json.loads(data["schemas"])),
                info=dict(json.loads(data.get("info", "{}"))),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            if isinstance(exc, RecordingError):
                raise
            raise RecordingError(f"unreadable recording header: {exc}") from None

    @property
    def offset_ns(self) -> int:
        """Wall clock minus the recorder's monotonic clock."""
        return self.created_wall_ns - self.created_mono_ns

    def wall_ns(self, recv_ns: int) -> int:
        """The wall-clock time of a record received at ``recv_ns`` (the recorder's monotonic clock)."""
        return recv_ns + self.offset_ns


# --------------------------------------------------------------------------------------------------
# Writing

_FRAMES_SCHEMA_JSON: Final = json.dumps(
    {
        "title": FRAMES_SCHEMA,
        "description": "u32 little-endian header length, the msgpack envelope header "
        "(messages.Header), the msgpack body (the tagged message named in the header)",
        "type": "string",
        "contentEncoding": "binary",
    }
).encode()


class RecordingWriter:
    """Streams records to an MCAP file. Not thread-safe; one writer per file.

    Each record goes to its raw channel (the bus topic) and, with ``viewers`` (the default), to its
    viewer channel as JSON. With ``jpeg_quality`` camera frames also become ``/camera/image``
    (foxglove.CompressedImage) and vision's readings ``/vision/annotations`` (foxglove.ImageAnnotations);
    pass ``raw=False`` to :meth:`write_record` for a frame that should only be seen, not replayed.
    A chunk is closed every :data:`FLUSH_INTERVAL_S` or :data:`CHUNK_BYTES`, so a crash loses at most
    that much and leaves a file the reader reads up to its last complete chunk. ``close()`` writes the
    summary and fsyncs.

    :raises RecordingError: when the file exists (unless ``overwrite``) or cannot be created.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        header: FileHeader | None = None,
        *,
        overwrite: bool = False,
        flush_interval_s: float = FLUSH_INTERVAL_S,
        chunk_bytes: int = CHUNK_BYTES,
        viewers: bool = True,
        jpeg_quality: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.header = header or FileHeader.now()
        self.flush_interval_s = flush_interval_s
        self.viewers = viewers
        self.jpeg_quality = jpeg_quality
        self.records = 0
        self.counts: Counter[str] = Counter()
        #: messages written to viewer channels, by viewer topic.
        self.viewer_counts: Counter[str] = Counter()
        #: records whose viewer form could not be made (undecodable, a bad frame), by topic.
        self.viewer_errors: Counter[str] = Counter()
        try:
            self._file: BinaryIO = open(self.path, "wb" if overwrite else "xb")  # noqa: SIM115
        except FileExistsError:
            raise RecordingError(f"{self.path} exists; choose another name or remove it") from None
        except OSError as exc:
            raise RecordingError(f"cannot create {self.path}: {exc.strerror}") from None
        self._size = 0
        self._mcap = McapWriter(self._file, chunk_size=chunk_bytes, compression=CompressionType.ZSTD)
        self._mcap.start(profile=PROFILE, library="sanzi")
        self._mcap.add_metadata(METADATA_NAME, self.header.to_metadata())
        self._offset = self.header.offset_ns
        self._channels: dict[str, int] = {}
        self._schemas: dict[str, int] = {}
        self._last_flush = time.monotonic()
        self.flush()

    # channels ---------------------------------------------------------------------------------
    def _schema(self, name: str, encoding: str, data: bytes) -> int:
        sid = self._schemas.get(name)
        if sid is None:
            sid = self._schemas[name] = self._mcap.register_schema(name, encoding, data)
        return sid

    def _raw_channel(self, topic: str) -> int:
        cid = self._channels.get(topic)
        if cid is None:
            sid = self._schema(FRAMES_SCHEMA, viewer.JSONSCHEMA_ENCODING, _FRAMES_SCHEMA_JSON)
            cid = self._channels[topic] = self._mcap.register_channel(topic, FRAMES_ENCODING, sid)
        return cid

    def _json_channel(self, topic: str, schema_name: str, schema: dict[str, Any]) -> int:
        cid = self._channels.get(topic)
        if cid is None:
            sid = self._schema(schema_name, viewer.JSONSCHEMA_ENCODING, json.dumps(schema).encode())
            cid = self._channels[topic] = self._mcap.register_channel(topic, viewer.JSON_ENCODING, sid)
        return cid

    def _add_json(
        self,
        topic: str,
        schema_name: str,
        schema: dict[str, Any],
        obj: Any,
        log_ns: int,
        publish_ns: int,
        seq: int = 0,
    ) -> None:
        cid = self._json_channel(topic, schema_name, schema)
        self._mcap.add_message(cid, log_ns, viewer.encode(obj), publish_ns, seq & 0xFFFFFFFF)
        self.viewer_counts[topic] += 1

    # writing ----------------------------------------------------------------------------------
    def write(self, frames: Sequence[bytes], recv_ns: int | None = None, *, raw: bool = True) -> Record:
        """Append one message (its three frames as received) with its receive time (now by default).

        :raises RecordingError: when ``frames`` is not three frames with a UTF-8 topic.
        """
        record = Record.from_frames(frames, time.monotonic_ns() if recv_ns is None else recv_ns)
        self.write_record(record, raw=raw)
        return record

    def write_record(self, record: Record, *, raw: bool = True) -> None:
        """Append ``record``: to its raw channel unless ``raw`` is False, and to its viewer channel(s).

        :raises RecordingError: for a record larger than :data:`MAX_RECORD_BYTES`."""
        if record.size > MAX_RECORD_BYTES:
            raise RecordingError(f"a record of {record.size} bytes is larger than {MAX_RECORD_BYTES}")
        log_ns = record.recv_ns + self._offset
        publish_ns, seq = log_ns, 0
        if self.viewers or raw:
            with contextlib.suppress(messages.DecodeError):
                h = record.header()
                publish_ns, seq = h.wall_ns, h.seq
        if raw:
            cid = self._raw_channel(record.topic)
            self._mcap.add_message(cid, log_ns, record.data(), publish_ns, seq & 0xFFFFFFFF)
            self.records += 1
            self.counts[record.topic] += 1
        if self.viewers:
            try:
                self._write_viewers(record, log_ns, publish_ns, seq)
            except Exception:  # the raw record is written; its viewer copy is best effort
                self.viewer_errors[record.topic] += 1
        self.flush_if_due()

    def _write_viewers(self, record: Record, log_ns: int, publish_ns: int, seq: int) -> None:
        message = record.envelope().message
        if isinstance(message, CameraFrame):
            if self.jpeg_quality is not None:
                taken = message.capture_ns + self._offset if message.capture_ns else log_ns
                image = viewer.compressed_image(message, taken, self.jpeg_quality)
                self._add_json(
                    viewer.CAMERA_TOPIC,
                    "foxglove.CompressedImage",
                    viewer.COMPRESSED_IMAGE_SCHEMA,
                    image,
                    log_ns,
                    publish_ns,
                    seq,
                )
            return  # a frame's pixels as JSON would help no viewer
        cls = type(message)
        topic = viewer.viewer_topic(record.topic)
        cid = self._json_channel(topic, f"sanzi.{cls.__name__}", _schema_of(cls))
        self._mcap.add_message(cid, log_ns, viewer.viewer_json(message), publish_ns, seq & 0xFFFFFFFF)
        self.viewer_counts[topic] += 1
        if (
            isinstance(message, BoardObservation)
            and self.jpeg_quality is not None
            and record.topic == "vision.board"
        ):
            taken = message.capture_ns + self._offset if message.capture_ns else log_ns
            self._add_json(
                viewer.ANNOTATIONS_TOPIC,
                "foxglove.ImageAnnotations",
                viewer.IMAGE_ANNOTATIONS_SCHEMA,
                viewer.image_annotations(message, taken),
                log_ns,
                publish_ns,
                seq,
            )

    def write_log(self, line: dict[str, Any], wall_ns: int, process: str) -> None:
        """Append one structlog JSON line of ``process``, logged at ``wall_ns``, as a foxglove.Log."""
        entry = viewer.log_entry(line, wall_ns, process)
        self._add_json(viewer.LOG_TOPIC, "foxglove.Log", viewer.LOG_SCHEMA, entry, wall_ns, wall_ns)
        self.flush_if_due()

    def flush_if_due(self) -> None:
        """:meth:`flush` if the chunk in progress is :data:`FLUSH_INTERVAL_S` old (call it when idle, so a
        quiet bus does not keep the last messages in memory)."""
        if time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def flush(self) -> None:
        """Close the chunk in progress and hand the file's data to the operating system."""
        self._mcap.flush()
        self._last_flush = time.monotonic()

    @property
    def bytes(self) -> int:
        """The file's size so far (what has been handed to the operating system)."""
        return self._size if self._file.closed else self._file.tell()

    def close(self) -> None:
        if self._file.closed:
            return
        self._mcap.finish()
        self._file.flush()
        # a filesystem without fsync: the data is flushed, that is what we can do
        with contextlib.suppress(OSError):
            os.fsync(self._file.fileno())
        self._size = self._file.tell()
        self._file.close()

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_SCHEMAS: dict[type, dict[str, Any]] = {}


def _schema_of(cls: type[msgspec.Struct]) -> dict[str, Any]:
    schema = _SCHEMAS.get(cls)
    if schema is None:
        schema = _SCHEMAS[cls] = viewer.schema_for(cls)
    return schema


def write_recording(
    path: str | os.PathLike[str], records: Iterable[Record], header: FileHeader | None = None, **kw: Any
) -> int:
    """Write ``records`` to a new file at ``path`` atomically (a temporary name, then a rename), so a
    reader never sees a half-written file. Returns the file's size."""
    final = Path(path)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    try:
        with RecordingWriter(tmp, header, overwrite=True, flush_interval_s=float("inf"), **kw) as writer:
            for record in records:
                writer.write_record(record)
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)
    return final.stat().st_size


# --------------------------------------------------------------------------------------------------
# Reading


@dataclass(frozen=True)
class Tail:
    """What was cut off the end of a recording: from byte ``offset`` on, ``dropped_bytes`` bytes."""

    offset: int
    dropped_bytes: int
    #: "truncated" (the file ends before its summary: the recorder did not close it) or "corrupt"
    #: (a chunk that does not decompress or fails its checksum, a record that does not parse).
    reason: str
    detail: str

    def __str__(self) -> str:
        where = f"at byte {self.offset} ({self.dropped_bytes} bytes dropped)"
        return f"{self.reason} tail cut {where}: {self.detail}"


#: what the mcap reader raises on a damaged file: its own errors, short reads, bad compression, and a
#: corrupt length too large for a C size (zstandard's OverflowError).
_DAMAGE = (
    McapError,
    struct.error,
    ValueError,
    KeyError,
    IndexError,
    EOFError,
    MemoryError,
    OverflowError,
    zstandard.ZstdError,
)


class Recording:
    """A recording opened for reading. Iterate it for its records (each pass reads the file again, so a
    recording of any size streams). After a full pass :attr:`tail` says what was cut off the end, if
    anything, and :attr:`good_bytes` how much of the file was good. With ``warn`` (the default) a damaged
    tail also raises one :class:`DamagedTailWarning` (a warning, on stderr: tools that print JSON on
    stdout stay clean); pass ``warn=False`` when the caller reports :attr:`tail` itself.

    :raises RecordingError: when the file cannot be opened, is not MCAP (an old ``.sanzilog`` says so),
        or has no sanzi header before its first chunk (then nothing in it can be trusted).
    """

    def __init__(self, path: str | os.PathLike[str], *, warn: bool = True) -> None:
        self.path = Path(path)
        self.warn = warn
        try:
            with open(self.path, "rb") as f:
                start = f.read(len(MCAP_MAGIC))
                if start == OLD_MAGIC:
                    raise RecordingError(
                        f"{self.path} is an old .sanzilog recording (format 1); this sanzi reads MCAP "
                        "recordings only: record it again"
                    )
                if start != MCAP_MAGIC:
                    raise RecordingError(f"{self.path} is not a sanzi recording (not an MCAP file)")
                f.seek(0)
                self.header = self._read_header(f)
        except OSError as exc:
            raise RecordingError(f"cannot read {self.path}: {exc.strerror}") from None
        if self.header.format_version > FORMAT_VERSION:
            raise RecordingError(
                f"{self.path} has format version {self.header.format_version}; this program reads up to "
                f"{FORMAT_VERSION}: update sanzi"
            )
        self.tail: Tail | None = None
        self.good_bytes = 0
        self._warned = False

    def _read_header(self, f: BinaryIO) -> FileHeader:
        reader = StreamReader(f, emit_chunks=True)
        try:
            for record in reader.records:
                if isinstance(record, Metadata) and record.name == METADATA_NAME:
                    return FileHeader.from_metadata(record.metadata)
                if isinstance(record, Chunk | McapMessage | DataEnd | Footer):
                    break
        except _DAMAGE as exc:
            raise RecordingError(
                f"{self.path}: the file ends or is damaged inside its header ({exc})"
            ) from None
        raise RecordingError(f"{self.path} is an MCAP file but not a sanzi recording (no sanzi metadata)")

    def __iter__(self) -> Iterator[Record]:
        return self.records()

    def records(self) -> Iterator[Record]:
        """The records (raw channels) in file order. A damaged tail ends the iteration (with one warning
        per reader)."""
        return (r for r in self._messages(raw=True) if isinstance(r, Record))

    def viewer_messages(self, topics: Iterable[str] | None = None) -> Iterator[tuple[str, int, Any]]:
        """(viewer topic, log time ns, decoded JSON) of the viewer channels, in file order."""
        wanted = None if topics is None else set(topics)
        for item in self._messages(raw=False):
            if isinstance(item, tuple) and (wanted is None or item[0] in wanted):
                yield item

    def _messages(self, raw: bool) -> Iterator[Record | tuple[str, int, Any]]:
        try:
            f = open(self.path, "rb")  # noqa: SIM115  (closed in the finally below, also on early exit)
        except OSError as exc:
            raise RecordingError(f"cannot read {self.path}: {exc.strerror}") from None
        channels: dict[int, Channel] = {}
        offset = self.header.offset_ns
        try:
            size = os.fstat(f.fileno()).st_size
            reader = StreamReader(f, emit_chunks=True)
            records = reader.records
            good = 0
            while True:
                try:
                    record = next(records)
                    inner = (
                        breakup_chunk(record, validate_crc=True) if isinstance(record, Chunk) else [record]
                    )
                except StopIteration:
                    self._finish(None, size)
                    return
                except _DAMAGE as exc:
                    # a short read at the very end is a file the recorder did not close
                    at_end = f.tell() >= size
                    reason = "truncated" if at_end else "corrupt"
                    detail = "the file ends inside a record" if at_end else f"{type(exc).__name__}: {exc}"
                    if at_end and good == size:
                        detail = "the file ends before its summary"
                    self._finish(Tail(good, size - good, reason, detail), size)
                    return
                good = f.tell()
                self.good_bytes = good
                if isinstance(record, Footer):
                    self._finish(None, size)
                    return
                for item in inner:
                    if isinstance(item, Channel):
                        channels[item.id] = item
                    elif isinstance(item, McapMessage):
                        channel = channels.get(item.channel_id)
                        if channel is None:
                            continue
                        if raw and channel.message_encoding == FRAMES_ENCODING:
                            try:
                                yield _split(channel.topic, item.data, item.log_time - offset)
                            except RecordingError:
                                continue
                        elif not raw and channel.message_encoding == viewer.JSON_ENCODING:
                            with contextlib.suppress(ValueError):
                                yield channel.topic, item.log_time, json.loads(item.data)
                    elif isinstance(item, Schema | Metadata):
                        continue
        finally:
            f.close()

    def _finish(self, tail: Tail | None, size: int) -> None:
        self.tail = tail
        if tail is None:
            self.good_bytes = size
        if tail is not None and self.warn and not self._warned:
            self._warned = True
            warnings.warn(f"{self.path}: {tail}", DamagedTailWarning, stacklevel=4)

    def channel_counts(self) -> dict[str, int] | None:
        """Messages per channel (raw and viewer ones) from the file's summary; None for a file without
        one (a recorder that did not close it)."""
        try:
            with open(self.path, "rb") as f:
                summary = make_reader(f).get_summary()
        except (*_DAMAGE, OSError):
            return None
        if summary is None or summary.statistics is None:
            return None
        counts = summary.statistics.channel_message_counts
        return {c.topic: counts.get(c.id, 0) for c in summary.channels.values()}

    def __len__(self) -> int:
        return sum(1 for _ in self.records())

    def wall_ns(self, record: Record) -> int:
        return self.header.wall_ns(record.recv_ns)


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
