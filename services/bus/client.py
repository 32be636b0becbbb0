"""The bus, as a service sees it: a publisher, a subscriber and the snapshot pattern.

Small wrappers in the spirit of pupil-labs' ``zmq_tools``: one class per socket role, a topic frame
plus a payload, dotted topics for prefix subscription. Every socket is a ``zmq.asyncio`` socket; an
instance belongs to one asyncio loop and is not thread-safe.

- :class:`Publisher` stamps each message with a per-topic sequence number and routes it to its channel
  (events, or frames with a tiny high-water mark) from the topic table in :mod:`messages.topics`.
- :class:`Subscriber` yields decoded :class:`messages.Envelope` objects. A malformed message or an
  unknown type is counted, logged (rate-limited) and dropped, never raised. Sequence gaps are counted
  per publisher and topic. For frames only the newest waiting one is returned. With
  ``watch_links`` it also notes when its link to the bus broke (``link_lost_ns``): whatever was
  published meanwhile is lost, and a process that mirrors a publisher's state (the simulated camera
  rendering the world) knows its copy may be stale until a message published since arrives.
- :class:`SnapshotServer` / :func:`request_snapshot` / :class:`Latched`: subscribe first, then ask for
  a snapshot, then drop updates not newer than it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Generic, TypeVar

import zmq
import zmq.asyncio
from zmq.utils.monitor import recv_monitor_message

import messages
from messages import TOPICS, Channel, Envelope, Message
from services.common.log import RateLimiter, get

from . import curve
from .config import BusConfig

M = TypeVar("M", bound=Message)

_log = get(component="bus")


def _wants_events(prefixes: list[str]) -> bool:
    """Whether a subscription to ``prefixes`` needs the event channel: some prefix matches an event
    topic, or matches no known topic at all (a topic of a newer process)."""
    for prefix in prefixes:
        matched = messages.topics_matching([prefix])
        if not matched or any(TOPICS[t].channel is Channel.EVENT for t in matched):
            return True
    return False


def _secure(socket: zmq.Socket, bus: BusConfig) -> None:
    if bus.curve_dir:
        curve.make_client(socket, bus.curve_dir, bus.curve_client)


class Publisher:
    """Publishes messages on the bus. ``source`` names this process in every header."""

    def __init__(self, ctx: zmq.asyncio.Context, bus: BusConfig, source: str) -> None:
        self.source = source
        self._ctx = ctx
        self._bus = bus
        self._seq: dict[str, int] = {}
        self._sockets: dict[Channel, zmq.asyncio.Socket] = {}

    def _socket(self, channel: Channel) -> zmq.asyncio.Socket:
        sock = self._sockets.get(channel)
        if sock is None:
            sock = self._ctx.socket(zmq.PUB)
            sock.linger = 0
            if channel is Channel.FRAME:
                sock.sndhwm = self._bus.frame_hwm
                endpoint = self._bus.frame_pub
            else:
                sock.sndhwm = self._bus.event_hwm
                endpoint = self._bus.pub
            _secure(sock, self._bus)
            sock.connect(endpoint)
            self._sockets[channel] = sock
        return sock

    def open(self, *channels: Channel) -> None:
        """Connect now rather than on first use, so the connection is up before the first message."""
        for channel in channels or (Channel.EVENT,):
            self._socket(channel)

    def next_seq(self, topic: str) -> int:
        seq = self._seq.get(topic, 0) + 1
        self._seq[topic] = seq
        return seq

    async def publish(self, topic: str, message: Message) -> messages.Header:
        """Publish ``message`` on ``topic``. :raises TypeError: if the topic table says another type."""
        info = messages.topic_info(topic)
        if not isinstance(message, info.type):
            raise TypeError(f"topic {topic!r} carries {info.type.__name__}, not {type(message).__name__}")
        header = messages.make_header(message, self.source, self.next_seq(topic))
        await self._socket(info.channel).send_multipart(messages.encode(topic, header, message))
        return header

    async def publish_raw(self, frames: list[bytes], channel: Channel = Channel.EVENT) -> None:
        """Publish frames as they are (replay of recordings, fuzzing). No checks, no stamping."""
        await self._socket(channel).send_multipart(frames)

    def close(self) -> None:
        for sock in self._sockets.values():
            sock.close(linger=0)
        self._sockets.clear()


class SubscriberStats:
    """What a subscriber counted: messages received, dropped by reason, sequence gaps."""

    def __init__(self) -> None:
        self.received = 0
        self.dropped: Counter[str] = Counter()
        self.gaps = 0
        self.restarts = 0
        #: times a link to the bus broke (counted only with ``watch_links``)
        self.link_losses = 0
        self._last_seq: dict[tuple[str, str], tuple[int, int]] = {}

    def track(self, env: Envelope) -> int:
        """Record ``env``'s sequence number; returns how many messages were missed before it."""
        key = (env.header.source, env.topic)
        last = self._last_seq.get(key)
        self._last_seq[key] = (env.header.pid, env.header.seq)
        if last is None:
            return 0
        last_pid, last_seq = last
        if env.header.pid != last_pid or env.header.seq <= last_seq:
            self.restarts += 1  # the publisher restarted: its numbering begins again
            return 0
        missed = env.header.seq - last_seq - 1
        self.gaps += missed
        return missed


class Subscriber:
    """Receives messages whose topic starts with any of ``topics`` (prefixes; "" = everything).

    Frame topics (see the topic table) arrive on a separate socket with a tiny queue, and
    :meth:`recv` returns only the newest frame waiting. They come only when named in full: a prefix
    ("vision.") never brings 30 frames a second of a megabyte each to a process that wanted the readings
    (and a publisher with no subscriber of its frames sends none). ``include_frames=False`` ignores them
    even when named.

    ``watch_links=True`` watches each socket's connection to the bus (a ZeroMQ socket monitor, read
    within :meth:`recv`): :attr:`link_lost_ns` is the monotonic time at which this subscriber last saw
    a link break (0: never). Messages published before that instant and received after it are what
    was queued before the break; anything published while the link was down is lost.
    """

    def __init__(
        self,
        ctx: zmq.asyncio.Context,
        bus: BusConfig,
        topics: list[str] | tuple[str, ...],
        *,
        include_frames: bool = True,
        name: str = "",
        watch_links: bool = False,
    ) -> None:
        self.topics = list(topics)
        self.name = name
        self.stats = SubscriberStats()
        #: time.monotonic_ns() when a link to the bus was last seen broken (``watch_links``), 0: never
        self.link_lost_ns = 0
        self._monitors: list[tuple[zmq.asyncio.Socket, zmq.asyncio.Socket]] = []
        self._limiter = RateLimiter(5.0)
        self._poller = zmq.asyncio.Poller()
        self._event: zmq.asyncio.Socket | None = None
        self._frame: zmq.asyncio.Socket | None = None
        matched = messages.topics_matching(self.topics)
        frame_topics = [t for t in matched if TOPICS[t].channel is Channel.FRAME and t in self.topics]
        wants_events = _wants_events(self.topics)
        if wants_events:
            sock = ctx.socket(zmq.SUB)
            sock.linger = 0
            sock.rcvhwm = bus.event_hwm
            _secure(sock, bus)
            sock.connect(bus.sub)
            for prefix in self.topics:
                sock.setsockopt(zmq.SUBSCRIBE, prefix.encode())
            self._event = sock
            self._poller.register(sock, zmq.POLLIN)
        if include_frames and frame_topics:
            sock = ctx.socket(zmq.SUB)
            sock.linger = 0
            sock.rcvhwm = bus.frame_hwm
            _secure(sock, bus)
            sock.connect(bus.frame_sub)
            for topic in frame_topics:
                sock.setsockopt(zmq.SUBSCRIBE, topic.encode())
            self._frame = sock
            self._poller.register(sock, zmq.POLLIN)
        if watch_links:
            for sock in (self._event, self._frame):
                if sock is not None:
                    monitor = sock.get_monitor_socket(zmq.EVENT_DISCONNECTED)
                    self._monitors.append((sock, monitor))
                    self._poller.register(monitor, zmq.POLLIN)
        self._pending: list[list[bytes]] = []

    async def _take_link_events(self, ready: dict[zmq.asyncio.Socket, int]) -> None:
        """Note every link break the monitors in ``ready`` report."""
        for _, monitor in self._monitors:
            if monitor in ready:
                event = await recv_monitor_message(monitor)
                if event["event"] == zmq.EVENT_DISCONNECTED:
                    self.link_lost_ns = time.monotonic_ns()
                    self.stats.link_losses += 1

    async def recv(self, timeout: float | None = None) -> Envelope | None:
        """The next good message, or None when ``timeout`` seconds pass without one."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            while self._pending:
                env = self._decode(self._pending.pop(0))
                if env is not None:
                    return env
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            # timeout=0 still looks at what is already waiting (poll with 0 ms), then gives up.
            ready = dict(await self._poller.poll(None if remaining is None else int(remaining * 1000)))
            if not ready:
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            await self._take_link_events(ready)
            if self._event is not None and self._event in ready:
                self._pending.append(await self._event.recv_multipart())
            if self._frame is not None and self._frame in ready:
                self._pending.append(await self._latest_frame())

    async def recv_raw(self, timeout: float | None = None) -> list[bytes] | None:
        """The next message's frames, undecoded (for recording). Frames keep their newest-only rule."""
        ready = dict(await self._poller.poll(None if timeout is None else int(timeout * 1000)))
        await self._take_link_events(ready)
        if self._event is not None and self._event in ready:
            return await self._event.recv_multipart()
        if self._frame is not None and self._frame in ready:
            return await self._latest_frame()
        return None

    async def _latest_frame(self) -> list[bytes]:
        assert self._frame is not None
        frames = await self._frame.recv_multipart()
        while True:  # drain: only the newest frame matters
            try:
                frames = await self._frame.recv_multipart(flags=zmq.NOBLOCK)
                self.stats.dropped["superseded-frame"] += 1
            except zmq.Again:
                return frames

    def _decode(self, frames: list[bytes]) -> Envelope | None:
        try:
            env = messages.decode(frames)
        except messages.DecodeError as exc:
            self.stats.dropped[exc.reason] += 1
            allowed, held = self._limiter.allow(exc.reason)
            if allowed:
                topic = frames[0][:64].decode(errors="replace") if frames else ""
                _log.warning(
                    "dropped bad message",
                    reason=exc.reason,
                    detail=exc.detail[:200],
                    topic=topic,
                    subscriber=self.name,
                    held_back=held,
                )
            return None
        self.stats.received += 1
        missed = self.stats.track(env)
        if missed and TOPICS.get(env.topic, None) is not None and TOPICS[env.topic].channel is Channel.EVENT:
            allowed, held = self._limiter.allow("gap:" + env.topic)
            if allowed:
                _log.warning("sequence gap", topic=env.topic, source=env.header.source, missed=missed)
        return env

    def close(self) -> None:
        for sock, monitor in self._monitors:
            sock.disable_monitor()
            monitor.close(linger=0)
        self._monitors.clear()
        for sock in (self._event, self._frame):
            if sock is not None:
                sock.close(linger=0)


class SnapshotServer:
    """Answers snapshot requests on a ROUTER socket: the request names a topic, the reply is that topic's
    latest message in its envelope (three frames), or a single empty frame when there is none yet.
    Run :meth:`serve` as a task."""

    def __init__(
        self,
        ctx: zmq.asyncio.Context,
        endpoint: str,
        source: str,
        provider: Callable[[str], Message | None],
        bus: BusConfig | None = None,
    ) -> None:
        self.source = source
        self.provider = provider
        self.sock = ctx.socket(zmq.ROUTER)
        self.sock.linger = 0
        if bus is not None and bus.curve_dir:
            curve.make_server(self.sock, bus.curve_dir)
        self.sock.bind(endpoint)
        self._seq = 0

    async def serve(self) -> None:
        while True:
            frames = await self.sock.recv_multipart()
            if len(frames) < 3:
                continue  # not our request shape: ignore
            identity, _, topic = frames[0], frames[1], frames[2]
            message = self.provider(topic.decode(errors="replace"))
            if message is None:
                await self.sock.send_multipart([identity, b"", b""])
                continue
            self._seq += 1
            header = messages.make_header(message, self.source, self._seq)
            await self.sock.send_multipart([identity, b"", *messages.encode(topic.decode(), header, message)])

    def close(self) -> None:
        self.sock.close(linger=0)


async def request_snapshot(
    ctx: zmq.asyncio.Context,
    endpoint: str,
    topic: str,
    *,
    timeout: float = 1.0,
    attempts: int = 3,
    bus: BusConfig | None = None,
) -> Envelope | None:
    """Ask a :class:`SnapshotServer` for ``topic``'s latest message. Each attempt uses a fresh DEALER
    (the "lazy pirate" pattern: a lost request leaves no stale state). Returns None when the server has
    nothing yet or does not answer after ``attempts``."""
    for _ in range(attempts):
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        if bus is not None:
            _secure(sock, bus)
        try:
            sock.connect(endpoint)
            await sock.send_multipart([b"", topic.encode()])
            if await sock.poll(int(timeout * 1000)) & zmq.POLLIN:
                frames = await sock.recv_multipart()
                if len(frames) == 4:
                    try:
                        return messages.decode(frames[1:])
                    except messages.DecodeError as exc:
                        _log.warning("bad snapshot reply", reason=exc.reason)
                        return None
                return None
        finally:
            sock.close(linger=0)
    return None


class Latched(Generic[M]):
    """Holds the newest version of a piece of state, by a monotonically growing ``version`` key.
    Feed it the snapshot and every update; it keeps only strictly newer ones."""

    def __init__(self, version: Callable[[M], int]) -> None:
        self._version = version
        self.value: M | None = None
        self.dropped = 0

    def offer(self, message: M) -> bool:
        """Keep ``message`` if it is newer than what is held; returns whether it was kept."""
        if self.value is not None and self._version(message) <= self._version(self.value):
            self.dropped += 1
            return False
        self.value = message
        return True


async def wait_for(sub: Subscriber, predicate: Callable[[Envelope], bool], timeout: float) -> Envelope:
    """Receive until a message satisfies ``predicate``. :raises TimeoutError: after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"no matching message on {sub.topics} within {timeout} s")
        env = await sub.recv(timeout=remaining)
        if env is not None and predicate(env):
            return env


def context() -> zmq.asyncio.Context:
    """A fresh asyncio context (one per process is enough)."""
    return zmq.asyncio.Context()


__all__ = [
    "Latched",
    "Publisher",
    "SnapshotServer",
    "Subscriber",
    "SubscriberStats",
    "context",
    "request_snapshot",
    "wait_for",
]
