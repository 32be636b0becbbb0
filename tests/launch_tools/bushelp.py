"""Helpers for tests on a real bus: warming up a publisher (the slow joiner), collecting messages, running a
`sanzi` subcommand as a subprocess on the test's runtime folder."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from typing import Any

import messages
from messages import HumanSetup
from services.bus.client import Publisher, Subscriber

#: the topic used to find out that a publisher's connection is up; tests do not use it otherwise.
WARM_TOPIC = "sim.human"
DEADLINE_S = 10.0


async def warm_up(pub: Publisher, sub: Subscriber, timeout: float = DEADLINE_S) -> None:
    """Publish on :data:`WARM_TOPIC` until ``sub`` (subscribed to it) receives one, then drain ``sub``:
    after this, what ``pub`` publishes reaches ``sub``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pub.publish(WARM_TOPIC, HumanSetup(policy="warm-up"))
        env = await sub.recv(timeout=0.05)
        if env is not None and env.topic == WARM_TOPIC:
            while await sub.recv(timeout=0.05) is not None:
                pass
            return
    raise TimeoutError("publisher never reached the subscriber")


async def collect(
    sub: Subscriber, count: int, timeout: float = DEADLINE_S, skip: str = WARM_TOPIC
) -> list[Any]:
    """Receive ``count`` envelopes (ignoring the warm-up topic) or fail after ``timeout``."""
    out: list[messages.Envelope] = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"received {len(out)} of {count} messages")
        env = await sub.recv(timeout=remaining)
        if env is not None and env.topic != skip:
            out.append(env)
    return out


def sanzi_env(runtime_dir: str) -> dict[str, str]:
    env = dict(os.environ)
    env["SANZI_SET"] = f"runtime.dir='{runtime_dir}'"
    env.pop("SANZI_CONFIG", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_sanzi(runtime_dir: str, *args: str) -> subprocess.Popen[str]:
    """``sanzi ARGS`` as a subprocess on ``runtime_dir``'s bus (stdout and stderr captured)."""
    return subprocess.Popen(
        [sys.executable, "-m", "launch.cli", *args],
        env=sanzi_env(runtime_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def wait_exit(proc: subprocess.Popen[str], timeout: float = DEADLINE_S) -> tuple[int, str, str]:
    """Wait (without blocking the loop) for ``proc`` to end; kill it after ``timeout``."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            raise TimeoutError(f"process did not end: {err}")
        await asyncio.sleep(0.02)
    out, err = proc.communicate()
    return proc.returncode, out, err


class BackgroundPublisher:
    """Publishes ``make(i)`` on ``topic`` every ``period_s`` from a thread with its own loop and context,
    until stopped; keeps every published header. For tests that run a blocking `sanzi` command in the
    main thread (signal handlers need it) while traffic flows."""

    def __init__(self, bus: Any, topic: str, make: Any, period_s: float = 0.01, source: str = "bg") -> None:
        import threading

        self.bus = bus
        self.topic = topic
        self.make = make
        self.period_s = period_s
        self.source = source
        self.headers: list[messages.Header] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    async def _run(self) -> None:
        import zmq.asyncio

        ctx = zmq.asyncio.Context()
        pub = Publisher(ctx, self.bus, self.source)
        pub.open()
        i = 0
        try:
            while not self._stop.is_set():
                i += 1
                self.headers.append(await pub.publish(self.topic, self.make(i)))
                await asyncio.sleep(self.period_s)
        finally:
            pub.close()
            ctx.destroy(linger=0)

    def __enter__(self) -> BackgroundPublisher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
