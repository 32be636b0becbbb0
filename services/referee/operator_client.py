"""Sending an operator command to the referee and waiting for its answer (used by `sanzi task`,
`sanzi stop`, `sanzi level`, and by tests).

The command is published on ``operator.command`` and re-published with the *same* id until the reply with
that id arrives on ``operator.reply`` or the attempts run out: the first message from a fresh publisher
may be lost while its connection comes up (PUB/SUB's slow joiner), and the referee answers a repeated id
again without carrying it out twice.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING, Any

import zmq.asyncio

from messages import OperatorCommand, OperatorReply
from services.bus.client import Publisher, Subscriber

if TYPE_CHECKING:
    from services.bus.config import BusConfig

#: exit codes of the operator commands.
EXIT_OK = 0
EXIT_REFUSED = 1
EXIT_NO_REFEREE = 3

#: waits per attempt: short first (the slow joiner), then longer.
DEFAULT_WAITS = (0.3, 0.6, 1.2, 2.4)


def new_command_id() -> str:
    return f"op-{uuid.uuid4().hex[:12]}"


async def send(
    bus: BusConfig,
    command: OperatorCommand,
    waits: tuple[float, ...] = DEFAULT_WAITS,
    source: str = "operator",
) -> OperatorReply | None:
    """Publish ``command`` until the referee answers; the reply, or None when nobody answered."""
    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, bus, source)
    sub = Subscriber(ctx, bus, ["operator.reply"], include_frames=False, name=source)
    try:
        pub.open()
        for wait in waits:
            await pub.publish("operator.command", command)
            deadline = time.monotonic() + wait
            while (remaining := deadline - time.monotonic()) > 0:
                env = await sub.recv(timeout=remaining)
                if (
                    env is not None
                    and isinstance(env.message, OperatorReply)
                    and env.message.command_id == command.command_id
                ):
                    return env.message
        return None
    finally:
        pub.close()
        sub.close()
        ctx.term()


def send_blocking(
    bus: BusConfig, command: OperatorCommand, waits: tuple[float, ...] = DEFAULT_WAITS
) -> OperatorReply | None:
    """:func:`send` for a command line."""
    return asyncio.run(send(bus, command, waits))


def report(reply: OperatorReply | None, what: str, out: Any, err: Any) -> int:
    """Print the outcome of ``what`` and return the exit code (0 done, 1 refused, 3 no referee)."""
    if reply is None:
        print(f"{what}: no answer from the referee (is the stack running? `sanzi status`)", file=err)
        return EXIT_NO_REFEREE
    if not reply.ok:
        print(f"{what}: refused: {reply.error}", file=err)
        return EXIT_REFUSED
    game = f" (game {reply.game_id})" if reply.game_id else ""
    print(f"{what}: ok{game}", file=out)
    return EXIT_OK
