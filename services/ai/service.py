"""The AI process: answers every :class:`messages.MoveRequest` on ``ai.request`` with a
:class:`messages.MoveReply` on ``ai.reply`` (the pure work is :func:`services.ai.core.answer`)."""

from __future__ import annotations

from typing import Any

from messages import MoveRequest
from services.common.shell import Service

from .core import answer


class AiService(Service):
    """The engine behind the bus."""

    name = "ai"

    async def run(self) -> None:
        sub = self.subscribe(["ai.request"], include_frames=False)
        while True:
            env = await sub.recv()
            if env is None or not isinstance(env.message, MoveRequest):
                continue
            await self.reply(env.message)

    async def reply(self, request: MoveRequest) -> Any:
        reply = answer(request, self.config.ai.seed)
        await self.pub.publish("ai.reply", reply)
        if reply.error:
            self.last_error = reply.error
            self.log.warning("bad move request", request_id=request.request_id, error=reply.error)
        else:
            self.log.info(
                "move",
                request_id=request.request_id,
                board=request.board,
                square=reply.square,
                value=reply.value,
                nodes=reply.nodes,
                elapsed_us=reply.elapsed_us,
            )
        return reply
