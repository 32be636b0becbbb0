"""The fault recorder's shell: subscribe to the logged topics, feed :class:`.core.BlackBox`, write dumps."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec

from messages import TOPICS, Channel
from services.common.config import Config
from services.common.recording import Record, RecordingError, match_topics
from services.common.shell import Service

from .config import BlackboxConfig
from .core import BlackBox, Dump, FaultStore

#: how long to wait for traffic before checking whether a pending dump is due.
IDLE_TICK_S = 0.25


def recorder_settings(config: Config, settings: BlackboxConfig | None = None) -> BlackboxConfig:
    """``settings`` (by default the ``[blackbox]`` section) with ``dir`` resolved to a folder:
    ``runtime.fault_dir`` when it is empty, ``{runtime}`` and ``{state}`` expanded."""
    chosen = config.blackbox if settings is None else settings
    folder = chosen.dir or config.runtime.fault_dir
    folder = folder.replace("{runtime}", config.runtime.dir).replace("{state}", config.runtime.state_dir)
    return msgspec.structs.replace(chosen, dir=folder)


class BlackboxService(Service):
    """Keeps the last seconds of bus traffic and writes them to a recording on a fault."""

    name = "blackbox"

    def __init__(
        self, config: Config, log: Any | None = None, settings: BlackboxConfig | None = None
    ) -> None:
        super().__init__(config, log)
        self.settings = recorder_settings(config, settings)
        s = self.settings
        self.box = BlackBox(s.seconds, s.post_seconds, s.buffer_bytes, s.startup_grace_s)
        self.store = FaultStore(s.dir, s.max_files, s.max_bytes)
        #: paths written so far (newest last).
        self.written: list[str] = []

    async def run(self) -> None:
        topics = match_topics(self.settings.topics or None)
        wanted = set(topics)
        frames = any(TOPICS[t].channel is Channel.FRAME for t in topics if t in TOPICS)
        sub = self.subscribe(topics, include_frames=frames)
        self.log.info("watching", topics=len(topics), seconds=self.settings.seconds, dir=self.settings.dir)
        while True:
            raw = await sub.recv_raw(timeout=IDLE_TICK_S)
            now = time.monotonic_ns()
            if raw is None:
                dump = self.box.tick(now)
            else:
                try:
                    record = Record.from_frames(raw, now)
                except RecordingError:
                    continue
                if record.topic not in wanted:
                    continue
                faults, dump = self.box.offer(record)
                for fault in faults:
                    self.log.warning("fault seen", kind=fault.kind, detail=fault.detail)
            if dump is not None:
                await self._write(dump)

    async def _write(self, dump: Dump) -> None:
        try:
            path = await asyncio.to_thread(self.store.write, dump)
        except OSError as exc:  # a full disk must not stop the recorder
            self.last_error = f"cannot write fault recording: {exc}"
            self.health = "degraded"
            self.log.error("fault recording failed", error=str(exc), dir=self.settings.dir)
            return
        self.written.append(str(path))
        self.log.warning(
            "fault recorded",
            reason=str(dump.faults[0]),
            faults=len(dump.faults),
            records=len(dump.records),
            path=str(path),
        )

    async def shutdown(self) -> None:
        dump = self.box.flush()
        if dump is not None:
            await self._write(dump)
