"""The shell every long-running process lives in.

A service is a small class around pure logic::

    class AiService(Service):
        name = "ai"

        async def run(self) -> None:
            sub = self.subscribe(["ai.request"])
            while True:
                env = await sub.recv()
                ...
                await self.pub.publish("ai.reply", reply)

    if __name__ == "__main__":
        sys.exit(run_service(AiService))

The shell loads the configuration, sets up logging, opens the bus, publishes a heartbeat every
``bus.heartbeat_period_s``, and on SIGTERM or SIGINT cancels the service, closes every socket with
linger 0 and exits with code 0. An exception escaping ``run`` is logged and exits with code 1 (so
supervisord restarts the process). A configuration the process cannot run with (a file that cannot be
read, or one of the service's :attr:`Service.config_errors` raised while it is made) is printed and
exits with code 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import msgspec
import zmq
import zmq.asyncio

from messages import Heartbeat

from . import config as config_module
from . import log as log_module

#: the pauses after the first heartbeats of a process (then ``bus.heartbeat_period_s``).
EARLY_HEARTBEATS_S = (0.05, 0.1, 0.2, 0.4)


class Service(ABC):
    """Base class of a long-running process. Subclasses set ``name`` and implement :meth:`run`."""

    name: ClassVar[str]
    #: the errors the constructor raises for a configuration it cannot run with (a value out of range,
    #: a missing key file): :func:`run_service` prints them and exits with code 2, not a traceback.
    config_errors: ClassVar[tuple[type[Exception], ...]] = ()

    def __init__(self, config: config_module.Config, log: Any | None = None) -> None:
        # Imported on first use, not for a cycle (the bus client imports only messages and services.common):
        # a tool that only reads the shell's names does not load the bus client and its CURVE support.
        from services.bus.client import Publisher

        self.config = config
        self.log = log or log_module.get()
        self.ctx = zmq.asyncio.Context()
        self.pub = Publisher(self.ctx, config.bus, self.name)
        self.pub.open()
        self.started = time.monotonic()
        #: what the heartbeat says: "ok", "degraded" or "fault", with a detail and the last error.
        self.health = "ok"
        self.detail = ""
        self.last_error = ""
        self._heartbeat_seq = 0
        self._closables: list[Any] = [self.pub]

    def subscribe(self, topics: list[str], **kwargs: Any) -> Any:
        """A :class:`services.bus.client.Subscriber` that the shell closes on exit."""
        from services.bus.client import Subscriber

        sub = Subscriber(self.ctx, self.config.bus, topics, name=self.name, **kwargs)
        self._closables.append(sub)
        return sub

    def closing(self, thing: Any) -> Any:
        """Register anything with a ``close()`` for the shell to close on exit; returns it."""
        self._closables.append(thing)
        return thing

    def heartbeat(self) -> Heartbeat:
        self._heartbeat_seq += 1
        return Heartbeat(
            process=self.name,
            pid=os.getpid(),
            seq=self._heartbeat_seq,
            state=self.health,
            uptime_s=round(time.monotonic() - self.started, 3),
            detail=self.detail,
            last_error=self.last_error,
        )

    async def heartbeat_loop(self) -> None:
        """A heartbeat every ``bus.heartbeat_period_s``; the first few come faster (see
        :data:`EARLY_HEARTBEATS_S`) so that peers notice a restart well within one period, even when the
        very first one is lost while the connection to the bus is still being made."""
        period = self.config.bus.heartbeat_period_s
        early = [d for d in EARLY_HEARTBEATS_S if d < period]
        while True:
            await self.pub.publish("sys.heartbeat", self.heartbeat())
            await asyncio.sleep(early.pop(0) if early else period)

    @abstractmethod
    async def run(self) -> None:
        """The service's main loop; runs until cancelled."""

    async def shutdown(self) -> None:
        """Called once on the way out, before sockets close (save state, release hardware)."""
        return None

    def close(self) -> None:
        for thing in reversed(self._closables):
            try:
                thing.close()
            except Exception as exc:  # closing must not hide the exit status
                self.log.warning("error while closing", what=type(thing).__name__, error=str(exc))
        self.ctx.term()


async def serve(service: Service) -> int:
    """Run ``service`` until it returns, fails or a SIGTERM/SIGINT arrives. Returns the exit code."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    main = asyncio.create_task(service.run(), name=f"{service.name}.run")
    beat = asyncio.create_task(service.heartbeat_loop(), name=f"{service.name}.heartbeat")
    stopper = asyncio.create_task(stop.wait(), name="stop")
    service.log.info("started", pid=os.getpid())
    code = 0
    try:
        done, _ = await asyncio.wait({main, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if main in done and not main.cancelled() and main.exception() is not None:
            exc = main.exception()
            service.log.error("service failed", error=repr(exc), exc_info=exc)
            code = 1
        elif stopper in done:
            service.log.info("stopping on signal")
    finally:
        for task in (main, beat, stopper):
            task.cancel()
        await asyncio.gather(main, beat, stopper, return_exceptions=True)
        try:
            await asyncio.wait_for(service.shutdown(), timeout=2.0)
        except Exception as exc:
            service.log.warning("shutdown incomplete", error=repr(exc))
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        service.close()
        service.log.info("stopped", code=code)
    return code


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["simworld.speed=10", "led.driver='console'"]`` -> nested dict. Values are TOML values; a bare
    word that is not valid TOML is taken as a string."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise config_module.ConfigError(f"--set wants KEY=VALUE, got {item!r}")
        try:
            value = msgspec.toml.decode(f"v = {raw}")["v"]
        except msgspec.DecodeError:
            value = raw
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="FILE", help="configuration file (TOML)")
    parser.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="override one configuration value, e.g. --set simworld.speed=10 (repeatable)",
    )


def load_config(args: argparse.Namespace) -> config_module.Config:
    """The configuration from ``--config`` and ``--set`` (also honours ``$SANZI_SET``: ``;``-separated)."""
    sets = list(getattr(args, "set", []) or [])
    env_sets = os.environ.get("SANZI_SET", "")
    sets = [s for s in env_sets.split(";") if s.strip()] + sets
    return config_module.load(getattr(args, "config", None), overrides=parse_overrides(sets))


def run_service(cls: type[Service], argv: list[str] | None = None, **kwargs: Any) -> int:
    """Entry point of ``python -m services.NAME``: parse arguments, configure, run, return the exit code."""
    parser = argparse.ArgumentParser(prog=f"python -m services.{cls.name}", description=cls.__doc__)
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    try:
        config = load_config(args)
    except config_module.ConfigError as exc:
        print(f"{cls.name}: {exc}", file=sys.stderr)
        return 2
    log = log_module.setup(cls.name, config.log.level, config.log.format)
    config_module.ensure_private_dir(config.runtime.dir)
    try:
        service = cls(config, log, **kwargs)
    except cls.config_errors as exc:
        print(f"{cls.name}: {exc}", file=sys.stderr)
        return 2
    return asyncio.run(serve(service))
