"""A bus peer run as a child process by the tests: ``python -m tests.bus.peer publish SOURCE``
publishes heartbeats at about 500 Hz until killed."""

from __future__ import annotations

import asyncio
import sys

import messages
from services.bus.client import Publisher, context
from services.common import config as config_module


async def publish(source: str) -> None:
    cfg = config_module.load(None)
    ctx = context()
    pub = Publisher(ctx, cfg.bus, source)
    pub.open()
    seq = 0
    try:
        while True:
            seq += 1
            await pub.publish("sys.heartbeat", messages.Heartbeat(process=source, pid=0, seq=seq))
            await asyncio.sleep(0.002)
    finally:
        pub.close()
        ctx.term()


if __name__ == "__main__":
    if sys.argv[1:2] == ["publish"]:
        asyncio.run(publish(sys.argv[2]))
