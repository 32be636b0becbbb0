"""Every message type round-trips through the envelope, and bad frames give a DecodeError reason."""

from __future__ import annotations

import msgspec
import pytest

import messages
from messages import MESSAGE_TYPES, TOPICS

from .samples import SAMPLES


def test_every_type_has_a_sample() -> None:
    assert set(SAMPLES) == set(MESSAGE_TYPES)


@pytest.mark.parametrize("tag", sorted(MESSAGE_TYPES))
def test_roundtrip_msgpack(tag: str) -> None:
    message = SAMPLES[tag]
    topic = next(name for name, t in TOPICS.items() if t.type is type(message))
    header = messages.make_header(message, "test", 7)
    env = messages.decode(messages.encode(topic, header, message))
    assert env.topic == topic
    assert env.header == header
    assert env.message == message
    assert env.header.type == tag
    assert env.header.version == type(message).VERSION


@pytest.mark.parametrize("tag", sorted(MESSAGE_TYPES))
def test_roundtrip_json(tag: str) -> None:
    message = SAMPLES[tag]
    assert msgspec.json.decode(msgspec.json.encode(message), type=type(message)) == message


def test_defaults_let_a_new_field_be_absent() -> None:
    # An old publisher that does not send a field added later: the default fills it in.
    raw = msgspec.msgpack.encode({"type": "Heartbeat", "process": "x", "pid": 1, "seq": 2})
    assert messages.decode_body("Heartbeat", raw) == messages.Heartbeat(process="x", pid=1, seq=2)


def test_unknown_type_is_a_decode_error_not_a_crash() -> None:
    header = messages.Header("FutureThing", 1, "new", 1, 1, 0, 0)
    frames = [
        b"future.topic",
        msgspec.msgpack.encode(header),
        msgspec.msgpack.encode({"type": "FutureThing"}),
    ]
    with pytest.raises(messages.DecodeError) as info:
        messages.decode(frames)
    assert info.value.reason == "unknown-type"


@pytest.mark.parametrize(
    ("frames", "reason"),
    [
        ([b"a"], "frame-count"),
        ([b"\xff\xfe", b"", b""], "malformed-topic"),
        ([b"sys.heartbeat", b"\x00garbage", b""], "malformed-header"),
    ],
)
def test_malformed_frames(frames: list[bytes], reason: str) -> None:
    with pytest.raises(messages.DecodeError) as info:
        messages.decode(frames)
    assert info.value.reason == reason


def test_wrong_body_for_type() -> None:
    message = SAMPLES["Heartbeat"]
    header = messages.make_header(message, "t", 1)
    frames = messages.encode("sys.heartbeat", header, message)
    frames[2] = msgspec.msgpack.encode({"type": "Heartbeat", "process": 5})
    with pytest.raises(messages.DecodeError) as info:
        messages.decode(frames)
    assert info.value.reason == "malformed-body"


def test_json_schema_covers_every_type() -> None:
    schema = messages.json_schema()
    for tag in MESSAGE_TYPES:
        assert tag in schema["$defs"]
        assert schema["versions"][tag] >= 1


def test_topic_table_names_are_dotted_families() -> None:
    for name in TOPICS:
        family, _, rest = name.partition(".")
        assert family and rest, name
