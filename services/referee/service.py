"""The referee process: a thin asyncio shell around :func:`services.referee.machine.step`.

The loop: receive a bus message -> turn it into an event -> ``step`` -> append the event to the journal
(fsync'ed when the event causes anything beyond log lines) -> carry out the actions (publish, log).
A timer feeds :class:`Tick` events; the game state is re-published at ``referee.publish_period_s`` and
served to anyone who asks on ``bus.snapshot``.

At start the journal is read (a damaged tail is cut and logged), the state rebuilt by folding its events
through ``step`` with the actions dropped, and a :class:`Restarted` event re-issues what was pending
(the actuator is asked about a pending command before anything is sent again).

Events that change nothing (a heartbeat from a process nobody waits for, an observation while no one
looks) are not journaled: ``step`` is deterministic, so leaving out an event that left the state as it
was does not change what the replay rebuilds.

The shell keeps the last few stable views (:data:`.inputs.HELD_VIEWS`) even while the machine does not look:
the button's press reaches the referee after the panel's debounce, by which time the first frames
captured after the press may already have come. Right after a press they are fed to the machine,
oldest first, so the move is judged on the first frame after the press without waiting for another.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from messages import (
    BoardObservation,
    GameState,
    Message,
)
from services.bus.client import SnapshotServer
from services.common.config import Config
from services.common.shell import Service

from . import machine as M
from .events import (
    Action,
    Button,
    Event,
    Log,
    Observation,
    PublishState,
    QueryCommand,
    ReplyOperator,
    RequestMove,
    Restarted,
    Resync,
    SendCommand,
    Tick,
    UseLocalEngine,
)
from .inputs import HELD_VIEWS, TOPICS, slim, to_event, views_after_press
from .journal import open_journal


class RefereeService(Service):
    """The game: the state machine, the logical board, the journal."""

    name = "referee"
    config_errors = (M.SettingsError,)

    def __init__(self, config: Config, log: Any | None = None) -> None:
        super().__init__(config, log)
        self.settings = M.Settings.from_config(config)
        self.state = M.initial_state(self.settings)
        self.latest: GameState = M.game_state(self.state, time.monotonic())
        self.journal: Any = None
        self.snapshot = self.closing(
            SnapshotServer(self.ctx, config.bus.snapshot, self.name, self._provide, config.bus)
        )
        self.journaled = 0
        #: the last stable views, whatever the phase (see :func:`views_after_press`).
        self.held: deque[BoardObservation] = deque(maxlen=HELD_VIEWS)

    def _provide(self, topic: str) -> Message | None:
        return self.latest if topic == "referee.state" else None

    async def run(self) -> None:
        journal, events, recovery = open_journal(self.config.referee.journal)
        self.journal = self.closing(journal)
        if recovery.problem:
            self.log.warning(
                "journal tail cut",
                problem=recovery.problem,
                cut_bytes=recovery.cut_bytes,
                records=recovery.records,
                journal=str(journal.path),
            )
        started = time.monotonic()
        self.state = M.rebuild(events, M.initial_state(self.settings))
        self.log.info(
            "journal replayed",
            records=recovery.records,
            phase=self.state.phase,
            game=self.state.game_id,
            replay_ms=round((time.monotonic() - started) * 1000, 2),
        )
        sub = self.subscribe(TOPICS, include_frames=False)
        server = asyncio.create_task(self.snapshot.serve(), name="referee.snapshot")
        try:
            await self.handle(Restarted(now=time.monotonic()))
            await self._loop(sub)
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    async def _loop(self, sub: Any) -> None:
        tick_s = self.config.referee.tick_period_s
        publish_s = self.config.referee.publish_period_s
        next_tick = time.monotonic() + tick_s
        next_publish = time.monotonic() + publish_s
        losses = (sub.stats.gaps, sub.stats.restarts)
        while True:
            now = time.monotonic()
            env = await sub.recv(timeout=max(0.0, min(next_tick, next_publish) - now))
            now = time.monotonic()
            if env is not None:
                msg = env.message
                if isinstance(msg, BoardObservation) and msg.stable:
                    self.held.append(slim(msg))
                event = to_event(env, self.state, now, self.name)
                if event is not None:
                    await self.handle(event)
                    if isinstance(event, Button):
                        await self._judge_held()
                if (sub.stats.gaps, sub.stats.restarts) != losses:
                    # Something was missed (a gap) or a publisher began anew (its restart, or the bus's
                    # lost messages): ask again about what is pending.
                    source = env.header.source
                    reason = "sequence gap" if sub.stats.gaps != losses[0] else f"{source} restarted"
                    losses = (sub.stats.gaps, sub.stats.restarts)
                    await self.handle(Resync(now=now, reason=reason))
            if now >= next_tick:
                next_tick = now + tick_s
                await self.handle(Tick(now=now))
            if now >= next_publish:
                next_publish = now + publish_s
                self.latest = M.game_state(self.state, now)
                await self.pub.publish("referee.state", self.latest)

    async def _judge_held(self) -> None:
        """Feed the held views captured after the press, oldest first, until the machine stops looking."""
        for obs in views_after_press(self.held, self.state):
            if not M.wants_observation(self.state):
                break
            await self.handle(Observation(now=time.monotonic(), obs=obs))

    async def handle(self, event: Event) -> None:
        """Step, journal, act: the event is on disk before anything it caused happens."""
        old = self.state
        new, actions = M.step(old, event)
        acts = any(not isinstance(a, Log) for a in actions)
        if acts or new != old:
            # A record that only moves a heartbeat time needs no fsync of its own: nothing acted on it,
            # and the next record that does act syncs it too.
            self.journal.append(event, sync=acts)
            self.journaled += 1
        self.state = new
        if self.journal.records > self.config.referee.compact_records:
            self.journal.compact(M.checkpoint(new, event.now))
            self.log.info("journal compacted", phase=new.phase, game=new.game_id)
        self.health = "degraded" if new.fault or new.peers_down else "ok"
        self.detail = new.fault or (f"waiting for {', '.join(new.peers_down)}" if new.peers_down else "")
        for action in actions:
            await self.carry_out(action)

    async def carry_out(self, action: Action) -> None:
        match action:
            case Log():
                fields = {"game": self.state.game_id, **action.fields}
                getattr(self.log, action.severity, self.log.info)(action.reason, **fields)
            case PublishState():
                self.latest = action.state
                await self.pub.publish("referee.state", action.state)
            case RequestMove():
                await self.pub.publish("ai.request", action.request)
            case SendCommand() | QueryCommand():
                await self.pub.publish("actuator.command", action.command)
            case ReplyOperator():
                await self.pub.publish("operator.reply", action.reply)
            case UseLocalEngine():
                self.last_error = f"ai: {action.reason}"
