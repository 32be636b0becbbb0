"""The envelope every message travels in, and the codecs, built once and reused.

On the wire a message is three ZeroMQ frames::

    [topic (utf-8)] [header (msgpack Header)] [body (msgpack, the tagged message)]

The header is always decodable; the body is decoded only when its type is known, so a process survives
a message type added by a newer process (it is counted and dropped, not fatal).
"""

from __future__ import annotations

import os
import time

import msgspec

from .base import Message
from .topics import MESSAGE_TYPES

#: bumped when the header's layout changes (never so far).
ENVELOPE_VERSION = 1


class Header(msgspec.Struct, frozen=True, array_like=True):
    """Fixed header: the body's type tag and schema version, the publisher, its per-topic sequence
    number and two timestamps (CLOCK_MONOTONIC for ordering and latency on one machine, wall clock for
    people)."""

    type: str
    version: int
    source: str
    pid: int
    seq: int
    mono_ns: int
    wall_ns: int
    envelope: int = ENVELOPE_VERSION


class DecodeError(ValueError):
    """A message could not be decoded; ``reason`` is a short word for counting ("malformed-header",
    "unknown-type", "malformed-body", "frame-count")."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


class Envelope(msgspec.Struct, frozen=True):
    topic: str
    header: Header
    message: Message


_header_encoder = msgspec.msgpack.Encoder()
_header_decoder = msgspec.msgpack.Decoder(Header)
_body_encoder = msgspec.msgpack.Encoder()
_body_decoders: dict[str, msgspec.msgpack.Decoder] = {
    tag: msgspec.msgpack.Decoder(cls) for tag, cls in MESSAGE_TYPES.items()
}


def type_tag(message: Message) -> str:
    return message.__struct_config__.tag  # type: ignore[return-value]


def make_header(message: Message, source: str, seq: int) -> Header:
    return Header(
        type=type_tag(message),
        version=type(message).VERSION,
        source=source,
        pid=os.getpid(),
        seq=seq,
        mono_ns=time.monotonic_ns(),
        wall_ns=time.time_ns(),
    )


def encode(topic: str, header: Header, message: Message) -> list[bytes]:
    """The three frames of ``message`` on ``topic``."""
    return [topic.encode(), _header_encoder.encode(header), _body_encoder.encode(message)]


def encode_body(message: Message) -> bytes:
    return _body_encoder.encode(message)


def decode_header(raw: bytes) -> Header:
    try:
        return _header_decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DecodeError("malformed-header", str(exc)) from None


def decode_body(type_name: str, raw: bytes) -> Message:
    decoder = _body_decoders.get(type_name)
    if decoder is None:
        raise DecodeError("unknown-type", f"message type {type_name!r} is not known to this process")
    try:
        return decoder.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise DecodeError("malformed-body", f"{type_name}: {exc}") from None


def decode(frames: list[bytes]) -> Envelope:
    """Decode the frames of one message. :raises DecodeError: with a reason, never anything else."""
    if len(frames) != 3:
        raise DecodeError("frame-count", f"expected 3 frames, got {len(frames)}")
    try:
        topic = frames[0].decode()
    except UnicodeDecodeError:
        raise DecodeError("malformed-topic", "topic is not UTF-8") from None
    header = decode_header(frames[1])
    return Envelope(topic, header, decode_body(header.type, frames[2]))


def to_json(message: Message) -> bytes:
    return msgspec.json.encode(message)


def to_builtins(message: Message) -> dict:
    """The message as plain Python data (bytes as base64), for JSON output and recordings' headers."""
    return msgspec.to_builtins(message)  # type: ignore[return-value]


def json_schema() -> dict:
    """The JSON schema of every message type, with the envelope's header and each type's version."""
    types = list(MESSAGE_TYPES.values())
    (_, components) = msgspec.json.schema_components([*types, Header])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "sanzi bus messages",
        "envelope": {"frames": ["topic", "header", "body"], "version": ENVELOPE_VERSION},
        "versions": {tag: cls.VERSION for tag, cls in MESSAGE_TYPES.items()},
        "$defs": components,
    }
