"""Recording from and replaying onto the bus: the commands' side of recordings.

The file format (records, the file header, the writer and the reader) is
:mod:`services.common.recording`, below the services; docs/recording.md describes it.
:func:`record_bus` writes what a subscriber receives; :func:`replay_into` publishes a recording again,
with its timing scaled by a rate or in lockstep with a test. :data:`PUBLISHERS` says which topics each
process publishes, so that a recording can stand in for a process that is not started
(``sanzi play --instead-of vision``).
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

import messages
from launch.logview import Follower
from launch.processes import PROCESSES
from messages import TOPICS, Channel
from services.common.recording import Record, Recording, RecordingError, RecordingWriter

_header_encoder = msgspec.msgpack.Encoder()

#: Which topics each process publishes (besides its heartbeat on sys.heartbeat, which every process
#: publishes), read from the process registry (:mod:`launch.processes`): ``--instead-of PROCESS`` replays
#: these topics and PROCESS's own heartbeats, so that the recording stands in for a process that is not
#: started. Processes that publish nothing but their heartbeat (bus, blackbox) are not listed.
PUBLISHERS: Final[dict[str, tuple[str, ...]]] = {p.name: p.publishes for p in PROCESSES if p.publishes}

HEARTBEAT_TOPIC: Final = "sys.heartbeat"
#: the least pause between two passes of a looping replay.
LOOP_GAP_S: Final = 0.01


def topics_instead_of(processes: Iterable[str]) -> set[str]:
    """The topics published by ``processes`` (see :data:`PUBLISHERS`).

    :raises RecordingError: naming an unknown process and the known ones.
    """
    out: set[str] = set()
    for process in processes:
        if process not in PUBLISHERS:
            raise RecordingError(f"unknown process {process!r}; known: {', '.join(sorted(PUBLISHERS))}")
        out.update(PUBLISHERS[process])
    return out


TopicSelection = str | Collection[str] | None


def make_filter(topics: TopicSelection = None, instead_of: Iterable[str] = ()) -> Callable[[Record], bool]:
    """A predicate on records for :func:`replay_into`.

    ``topics``: a regular expression (``re.search`` on the topic), a collection of exact topic names,
    or None for every topic. ``instead_of``: process names; when given, only the topics those processes
    publish pass, plus their own heartbeats (sys.heartbeat whose header source is one of them), so that
    the stand-in also looks alive to the referee. Both conditions must hold.
    """
    stand_ins = set(instead_of)
    published = topics_instead_of(stand_ins) if stand_ins else set()
    if topics is None:
        by_topic: Callable[[str], bool] = lambda _topic: True  # noqa: E731
    elif isinstance(topics, str):
        try:
            pattern = re.compile(topics)
        except re.error as exc:
            raise RecordingError(f"topics {topics!r} is not a regular expression: {exc}") from None
        by_topic = lambda topic: pattern.search(topic) is not None  # noqa: E731
    else:
        names = set(topics)
        by_topic = names.__contains__

    def accept(record: Record) -> bool:
        if not by_topic(record.topic):
            return False
        if not stand_ins:
            return True
        if record.topic in published:
            return True
        if record.topic == HEARTBEAT_TOPIC:
            try:
                return record.header().source in stand_ins
            except messages.DecodeError:
                return False
        return False

    return accept


# --------------------------------------------------------------------------------------------------
# Recording from the bus


@dataclass
class RecordStats:
    counts: Counter[str] = field(default_factory=Counter)
    #: messages skipped because they were not three frames / had a non-UTF-8 topic / were not selected.
    skipped: int = 0
    seconds: float = 0.0
    #: messages written for the viewers only (camera frames with ``--camera``), by topic.
    viewed: Counter[str] = field(default_factory=Counter)
    #: log lines written to /log.
    log_lines: int = 0


#: how often the processes' log files are read for new lines while recording.
LOG_POLL_S: Final = 0.2
#: at the stop, what is already queued is still recorded for at most this long.
DRAIN_S: Final = 5.0
#: ...until nothing has come for this long.
DRAIN_QUIET_S: Final = 0.2


async def record_bus(
    subscriber: Any,
    writer: RecordingWriter,
    topics: Collection[str],
    stop: asyncio.Event,
    *,
    duration: float | None = None,
    on_record: Callable[[Record], None] | None = None,
    view_only: Collection[str] = (),
    logs: Follower | None = None,
) -> RecordStats:
    """Write what ``subscriber`` (a :class:`services.bus.client.Subscriber`) receives on ``topics``
    (exact names) to ``writer`` until ``stop`` is set or ``duration`` seconds pass. Frames are written
    as received. Topics in ``view_only`` (``camera.frame`` with ``--camera``) go only to the viewers'
    channels, not to the raw ones that replay reads. With ``logs``, the processes' new log lines are
    written as foxglove.Log every :data:`LOG_POLL_S`. Returns counts per topic."""
    stats = RecordStats()
    wanted = set(topics)
    seen_only = set(view_only) - wanted

    def take(frames: list[bytes]) -> None:
        try:
            record = Record.from_frames(frames, time.monotonic_ns())
        except RecordingError:
            stats.skipped += 1
            return
        if record.topic in seen_only:
            writer.write_record(record, raw=False)
            stats.viewed[record.topic] += 1
        elif record.topic not in wanted:
            stats.skipped += 1
        else:
            writer.write_record(record)
            stats.counts[record.topic] += 1
            if on_record is not None:
                on_record(record)

    start = time.monotonic()
    deadline = None if duration is None else start + duration
    next_logs = start
    while not stop.is_set():
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            break
        if logs is not None and now >= next_logs:
            next_logs = now + LOG_POLL_S
            stats.log_lines += write_logs(writer, logs)
        timeout = 0.1 if deadline is None else max(0.0, min(0.1, deadline - now))
        frames = await subscriber.recv_raw(timeout=timeout)
        if frames is not None:
            take(frames)
        else:
            writer.flush_if_due()
    # what has arrived by the stop is recorded too (a burst may still be queued), for a bounded time
    drain_until = time.monotonic() + DRAIN_S
    while time.monotonic() < drain_until:
        frames = await subscriber.recv_raw(timeout=DRAIN_QUIET_S)
        if frames is None:
            break
        take(frames)
    if logs is not None:
        stats.log_lines += write_logs(writer, logs)
    stats.seconds = time.monotonic() - start
    return stats


def write_logs(writer: RecordingWriter, logs: Follower) -> int:
    """Write the new lines ``logs`` has (JSON lines and raw ones alike) to ``writer``; returns how many."""
    lines = logs.poll()
    for line in lines:
        entry = {"event": line.event, "level": line.level, **line.fields}
        writer.write_log(entry, int(line.ts * 1e9), line.process)
    return len(lines)


# --------------------------------------------------------------------------------------------------
# Replaying onto the bus


@dataclass
class ReplayStats:
    published: Counter[str] = field(default_factory=Counter)
    #: records skipped because their header could not be decoded (nothing to restamp).
    bad_header: int = 0
    passes: int = 0
    #: how late the publications were against the schedule (seconds), the worst one.
    max_lag_s: float = 0.0
    #: how long ``hold`` kept the replay back (seconds), in all.
    held_s: float = 0.0


class Restamper:
    """Gives replayed messages fresh headers.

    Kept from the original header: type, version, source and pid (subscribers see the process that
    published it, and a crash and restart in the recording is still a pid change). New: ``seq`` is
    renumbered from 1 per (source, topic) in publication order, continuously across loops, so a topic
    filter, a start offset or a loop does not look like lost messages or a restart; ``mono_ns`` and
    ``wall_ns`` are the time of re-publication, so ages and latencies computed by subscribers are
    meaningful. The body is published byte for byte.
    """

    def __init__(self) -> None:
        self._seq: dict[tuple[str, str], int] = {}

    def frames(self, record: Record) -> list[bytes]:
        """:raises messages.DecodeError: when the record's header is malformed."""
        old = record.header()
        key = (old.source, record.topic)
        seq = self._seq.get(key, 0) + 1
        self._seq[key] = seq
        new = messages.Header(
            type=old.type,
            version=old.version,
            source=old.source,
            pid=old.pid,
            seq=seq,
            mono_ns=time.monotonic_ns(),
            wall_ns=time.time_ns(),
            envelope=old.envelope,
        )
        return [record.topic.encode(), _header_encoder.encode(new), record.body]


def _channel(topic: str) -> Channel:
    info = TOPICS.get(topic)
    return info.channel if info is not None else Channel.EVENT


async def replay_into(
    recording: Recording | str | os.PathLike[str] | Iterable[Record],
    publisher: Any,
    topics: TopicSelection = None,
    rate: float | None = None,
    *,
    start_s: float = 0.0,
    instead_of: Iterable[str] = (),
    loop: bool = False,
    step: Callable[[Record], Awaitable[None]] | None = None,
    stop: asyncio.Event | None = None,
    restamp: bool = True,
    hold: Callable[[Record], Awaitable[None]] | None = None,
) -> ReplayStats:
    """Publish the records of ``recording`` through ``publisher`` (a
    :class:`services.bus.client.Publisher`; its ``publish_raw`` is used, camera frames go to the frame
    channel) and return what was published.

    ``topics``/``instead_of``: see :func:`make_filter`. ``start_s``: skip the first seconds of the
    recording (counted from its first record). ``rate``: None publishes without waiting (lockstep: pass
    ``step``, awaited after each publication, e.g. to wait for the process under test to answer);
    otherwise the recorded intervals divided by ``rate`` (2.0 = twice as fast). ``loop``: start again
    at the end until ``stop`` is set (needs a rate). ``restamp``: see :class:`Restamper`; False publishes
    the recorded headers unchanged. ``hold``: awaited before each record is published; the time it
    takes moves the rest of the schedule back. A replay into live processes uses it to wait for the
    decision a recorded answer belongs to (the actuator's "done" for a command the process under test
    has not sent yet), so a slower process under test is not overtaken by its own recorded future.

    :raises RecordingError: for a rate that is not positive, or ``loop`` without a rate.
    """
    if rate is not None and not rate > 0:
        raise RecordingError(f"rate must be positive, not {rate}")
    if loop and rate is None:
        raise RecordingError("loop needs a rate (a lockstep replay that loops never ends)")
    source: Iterable[Record]
    if isinstance(recording, str | os.PathLike):
        source = Recording(recording)
    else:
        source = recording
    accept = make_filter(topics, instead_of)
    stats = ReplayStats()
    restamper = Restamper()
    stop = stop or asyncio.Event()
    base_wall = time.monotonic()  # when the current pass's first record is due
    while not stop.is_set():
        first_ns: int | None = None
        last_ns: int | None = None
        pass_origin = 0
        count = 0
        for record in source:
            if stop.is_set():
                break
            if first_ns is None:
                first_ns = record.recv_ns
            if (record.recv_ns - first_ns) / 1e9 < start_s or not accept(record):
                continue
            if last_ns is None:  # the schedule starts at the first record that is published
                pass_origin = record.recv_ns
            last_ns = record.recv_ns
            if rate is not None:
                due = base_wall + (record.recv_ns - pass_origin) / 1e9 / rate
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    stats.max_lag_s = max(stats.max_lag_s, -delay)
                    # behind schedule: still let the loop run (signal handlers, subscribers), since a
                    # send that completes at once does not yield
                    await asyncio.sleep(0)
            else:
                await asyncio.sleep(0)  # lockstep or flat out: still yield once per message
            if hold is not None:
                held_from = time.monotonic()
                await hold(record)
                held = time.monotonic() - held_from
                stats.held_s += held
                base_wall += held
            try:
                frames = restamper.frames(record) if restamp else record.frames()
            except messages.DecodeError:
                stats.bad_header += 1
                continue
            await publisher.publish_raw(frames, _channel(record.topic))
            stats.published[record.topic] += 1
            count += 1
            if step is not None:
                await step(record)
        stats.passes += 1
        if not loop or count == 0:
            break
        assert rate is not None and last_ns is not None
        # the next pass begins one mean interval after the last record, as if the recording went on
        # (at least LOOP_GAP_S, so that a selection of a few close messages does not become a flood)
        span = (last_ns - pass_origin) / 1e9 / rate
        gap = max(span / (count - 1) if count > 1 else 0.0, LOOP_GAP_S)
        base_wall = base_wall + span + gap
        delay = base_wall - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
    return stats


__all__ = [
    "PUBLISHERS",
    "RecordStats",
    "ReplayStats",
    "Restamper",
    "TopicSelection",
    "make_filter",
    "record_bus",
    "replay_into",
    "topics_instead_of",
]
