"""The bus, services run inside a test's own event loop, and the test's own sockets on the bus.

The bus (both forwarders, on threads of this process) is a ``with`` block; the others are ``async
with`` blocks that clean up whatever the test raised: the services' tasks are
cancelled and awaited and the services closed (their sockets, their hardware); the test's publishers
and subscribers are closed and their context destroyed. No task or socket outlives the test that
started it.

    async with running(VisionService(config)) as (vision,), bus_sockets(config.bus) as sockets:
        pub = sockets.publisher("simcam", Channel.FRAME)
        sub = sockets.subscriber(["vision."])
        ...
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import zmq
import zmq.asyncio

from services.bus.client import Channel, Publisher, Subscriber
from services.bus.forwarder import start_forwarders

M = TypeVar("M")


@contextmanager
def in_process_bus(bus: Any) -> Iterator[None]:
    """Both of the bus's forwarders (events and frames) running on ``bus``'s endpoints (a
    :class:`BusConfig`) for the block, on a context of their own, stopped at its end."""
    ctx = zmq.Context()
    forwarders = start_forwarders(ctx, bus)
    try:
        yield
    finally:
        for forwarder in forwarders:
            forwarder.stop()
        ctx.term()


@asynccontextmanager
async def running(*services: Any, shutdown: bool = False) -> AsyncIterator[list[asyncio.Task[Any]]]:
    """Each of ``services``' main loops (``run()``) as a task, in order, for the block (the tasks are
    what it gets, to check that none has ended). On the way out each task is cancelled and awaited, then
    (``shutdown``: after each service's own ``shutdown()``, as a signal would) each service is closed,
    the last started first."""
    tasks = [asyncio.create_task(service.run(), name=f"{type(service).__name__}.run") for service in services]
    try:
        yield tasks
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for service in reversed(services):
            if shutdown:
                await service.shutdown()
            service.close()


class BusSockets:
    """The sockets a test opens on the bus, on a context of their own, all closed together."""

    def __init__(self, bus: Any) -> None:
        self.bus = bus
        self.ctx = zmq.asyncio.Context()
        self._opened: list[Publisher | Subscriber] = []

    def publisher(self, source: str = "test", *channels: Channel) -> Publisher:
        """A publisher naming itself ``source``, connected now on ``channels`` (the event channel when
        none is given)."""
        pub = Publisher(self.ctx, self.bus, source)
        self._opened.append(pub)
        pub.open(*channels)
        return pub

    def subscriber(self, topics: list[str], name: str = "test") -> Subscriber:
        """A subscriber to ``topics`` (prefixes, as the bus matches them)."""
        sub = Subscriber(self.ctx, self.bus, topics, name=name)
        self._opened.append(sub)
        return sub

    def close(self) -> None:
        for sock in reversed(self._opened):
            sock.close()
        self._opened.clear()
        self.ctx.destroy(linger=0)


@asynccontextmanager
async def bus_sockets(bus: Any) -> AsyncIterator[BusSockets]:
    """Sockets on the bus ``bus`` (a :class:`BusConfig`) for the block, closed at its end."""
    sockets = BusSockets(bus)
    try:
        yield sockets
    finally:
        sockets.close()


async def first_of(sub: Subscriber, kind: type[M], within_s: float) -> M | None:
    """The first message of type ``kind`` that ``sub`` receives within ``within_s`` seconds (anything
    else is passed over), or None when none came."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        env = await sub.recv(timeout=0.1)
        if env is not None and isinstance(env.message, kind):
            return env.message
    return None
