"""Malformed bus messages for the bad-input test: truncated, mutated, misframed, of unknown or mismatched
type, on every topic of the table. Every message produced is one that :func:`messages.decode` rejects, so
no fuzzed message can carry a meaning (a mutated integer that still decodes would be a real command)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Final

import msgspec

import messages
from messages import TOPICS, Channel, Message
from tests.messages.samples import SAMPLES

#: The ways a message is broken, each with a short name (counted by the test).
KINDS: Final = (
    "truncated-body",
    "mutated-body",
    "random-body",
    "random-header",
    "truncated-header",
    "unknown-type",
    "mismatched-type",
    "frame-count",
    "bad-topic",
)


def sample_for(topic: str) -> Message:
    """A filled-in message of ``topic``'s type."""
    return SAMPLES[TOPICS[topic].type.__name__]


def _frames(topic: str, message: Message, seq: int, source: str) -> list[bytes]:
    return messages.encode(topic, messages.make_header(message, source, seq), message)


def _rejected(frames: list[bytes]) -> bool:
    try:
        messages.decode(frames)
    except messages.DecodeError:
        return True
    return False


def _break(kind: str, rng: random.Random, topic: str, good: list[bytes]) -> list[bytes]:
    t, h, b = good
    if kind == "truncated-body":
        return [t, h, b[: rng.randrange(0, max(1, len(b) - 1))]]
    if kind == "mutated-body":
        body = bytearray(b)
        for _ in range(rng.randint(1, 4)):
            body[rng.randrange(len(body))] = rng.randrange(256)
        return [t, h, bytes(body)]
    if kind == "random-body":
        return [t, h, rng.randbytes(rng.randint(0, 64))]
    if kind == "random-header":
        return [t, rng.randbytes(rng.randint(0, 40)), b]
    if kind == "truncated-header":
        return [t, h[: rng.randrange(0, len(h))], b]
    if kind == "unknown-type":
        header = msgspec.structs.replace(messages.decode_header(h), type="nosuchtype")
        return messages.encode(topic, header, sample_for(topic))
    if kind == "mismatched-type":
        wrong = rng.choice([name for name in TOPICS if TOPICS[name].type is not TOPICS[topic].type])
        return [t, h, _frames(wrong, sample_for(wrong), 1, "fuzz")[2]]
    if kind == "frame-count":
        return rng.choice([[t], [t, h], [t, h, b, b], [t, h, b, rng.randbytes(8)]])
    if kind == "bad-topic":
        return [b"\xff\xfe" + t, h, rng.randbytes(16)]
    raise ValueError(f"unknown kind {kind!r}")


def malformed(count: int, seed: int, source: str = "fuzz") -> Iterator[tuple[str, Channel, list[bytes]]]:
    """``count`` broken messages (kind, channel to send it on, frames), cycling over topics and kinds,
    deterministic for ``seed``."""
    rng = random.Random(seed)
    topics = list(TOPICS)
    made = 0
    seq = 0
    while made < count:
        topic = topics[made % len(topics)]
        kind = KINDS[(made // len(topics)) % len(KINDS)]
        seq += 1
        good = _frames(topic, sample_for(topic), seq, source)
        for _ in range(20):  # a mutation may happen to decode: try again
            frames = _break(kind, rng, topic, good)
            if _rejected(frames):
                break
        else:
            continue
        made += 1
        yield kind, TOPICS[topic].channel, frames
