"""The simworld process: the emulated controller on its pty, the world on the bus.

Publishes ``sim.world`` (WorldState) every ``simworld.publish_period_s`` and as soon as the world's
revision changes (checked every few milliseconds); applies ``sim.action`` (WorldAction) and ``sim.fault``
(FaultInjection). A bad action is logged and ignored: the world is unchanged. An action id is taken
once, and the last ids taken are published in ``WorldState.actions_seen`` (senders publish an action
again until its id shows there).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, Final

import msgspec

from messages import FaultInjection, WorldAction, WorldState
from services.common.config import Config
from services.common.shell import Service

from .controller import ControllerError, EmulatedController
from .faults import FaultSpecError
from .world import World, WorldError

#: how often the service looks for a changed world (seconds).
CHANGE_POLL_S: Final = 0.01
#: how many recent action ids are remembered to apply each once, and how many are published.
APPLIED_IDS: Final = 1024
PUBLISHED_IDS: Final = 32


class WorldFileError(ValueError):
    """The world file cannot be read or does not describe a valid world."""


def load_world_file(path: str | Path) -> WorldState:
    """A WorldState from a JSON file (the ``sim.world`` message's fields; ``"type"`` may be omitted).

    :raises WorldFileError: naming the file and what is wrong.
    """
    try:
        raw = msgspec.json.decode(Path(path).read_bytes())
    except OSError as exc:
        raise WorldFileError(f"cannot read world file {path}: {exc.strerror}") from None
    except msgspec.DecodeError as exc:
        raise WorldFileError(f"{path}: not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise WorldFileError(f"{path}: a world is a JSON object")
    raw.setdefault("type", "WorldState")
    try:
        return msgspec.convert(raw, WorldState)
    except msgspec.ValidationError as exc:
        raise WorldFileError(f"{path}: {exc}") from None


def make_world(config: Config) -> World:
    """The world from ``config``: every piece in its supply, or the state in ``simworld.world_file``."""
    world = World(config.simworld, config.table)
    if config.simworld.world_file:
        try:
            world.load_state(load_world_file(config.simworld.world_file))
        except WorldError as exc:
            raise WorldFileError(f"{config.simworld.world_file}: {exc}") from None
    return world


class SimWorldService(Service):
    """The simulated table and its motion controller."""

    name = "simworld"
    config_errors = (WorldFileError, FaultSpecError, ControllerError)

    def __init__(self, config: Config, log: Any | None = None) -> None:
        super().__init__(config, log)
        self.controller = EmulatedController(make_world(config), config)
        self.closing(self.controller)
        self.actions_applied = 0
        self.actions_rejected = 0
        self._applied: dict[str, None] = {}

    async def run(self) -> None:
        port = self.controller.start_pty(self.config.simworld.serial_link)
        self.log.info(
            "controller ready",
            port=port,
            pty=self.controller.slave_path,
            protocol=self.controller.protocol,
            speed=self.controller.sim.speed,
        )
        sub = self.subscribe(["sim.action", "sim.fault"])
        period = self.config.simworld.publish_period_s
        last_revision = -1
        last_seen = 0
        last_publish = 0.0
        while True:
            env = await sub.recv(timeout=CHANGE_POLL_S)
            if env is not None:
                self.handle(env.message)
            with self.controller.lock:
                revision = self.controller.world.revision
            now = time.monotonic()
            seen = len(self._applied)
            if revision != last_revision or seen != last_seen or now - last_publish >= period:
                snapshot = self.controller.snapshot()
                ids = list(self._applied)[-PUBLISHED_IDS:]
                await self.pub.publish("sim.world", msgspec.structs.replace(snapshot, actions_seen=ids))
                last_revision, last_publish, last_seen = revision, now, seen

    def handle(self, message: Any) -> None:
        """Apply one bus message; bad ones are logged and ignored."""
        match message:
            case WorldAction():
                if message.action_id in self._applied:
                    self.log.debug("action repeated: applied once", id=message.action_id)
                    return
                self._applied[message.action_id] = None
                while len(self._applied) > APPLIED_IDS:
                    del self._applied[next(iter(self._applied))]
                try:
                    self.controller.apply(message)
                    self.actions_applied += 1
                    self.log.info(
                        "action",
                        id=message.action_id,
                        kind=message.kind,
                        square=message.to_square or message.from_square,
                    )
                except WorldError as exc:
                    self.actions_rejected += 1
                    self.last_error = str(exc)
                    self.log.warning("action rejected", id=message.action_id, error=str(exc))
            case FaultInjection():
                try:
                    self.controller.inject(message.kind, message.count)
                    self.log.info("fault armed", kind=message.kind, count=message.count)
                except FaultSpecError as exc:
                    self.log.warning("fault rejected", error=str(exc))
            case _:
                pass

    async def shutdown(self) -> None:
        await asyncio.sleep(0)
