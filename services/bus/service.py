"""The bus process: both forwarders, plus this process's own heartbeat."""

from __future__ import annotations

import asyncio
from typing import Any

import zmq

from services.common.config import Config
from services.common.shell import Service

from . import curve
from .forwarder import Forwarder, start_forwarders


class BusService(Service):
    """XPUB/XSUB forwarders for events and camera frames."""

    name = "bus"
    config_errors = (curve.CurveError,)

    def __init__(self, config: Config, log: Any | None = None) -> None:
        # The forwarders must exist before our own publisher connects to them.
        self._sync_ctx = zmq.Context()
        self._auth = (
            curve.start_authenticator(self._sync_ctx, config.bus.curve_dir) if config.bus.curve_dir else None
        )
        self.forwarders: list[Forwarder] = start_forwarders(self._sync_ctx, config.bus)
        super().__init__(config, log)

    async def run(self) -> None:
        self.log.info(
            "forwarding",
            pub=self.config.bus.pub,
            sub=self.config.bus.sub,
            frame_pub=self.config.bus.frame_pub,
            frame_sub=self.config.bus.frame_sub,
            curve=bool(self.config.bus.curve_dir),
        )
        await asyncio.Event().wait()

    def close(self) -> None:
        super().close()
        for fwd in self.forwarders:
            fwd.stop()
        if self._auth is not None:
            self._auth.stop()
        self._sync_ctx.term()
