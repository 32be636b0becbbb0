"""The simhuman process: follows ``referee.state``, acts on the world (``sim.action``) and presses the
button (``sim.button``), per :mod:`.person` (or the terminal, policy "you").

One plan runs at a time. States arriving meanwhile are kept (the newest only) and looked at when the
plan has finished: the referee holds ``waiting-for-person`` until the button, so nothing is lost.
``sim.human`` (HumanSetup) replaces the policy and misbehaviours between games; the pauses follow the
speed factor ``sim.world`` reports.

Like a person, it presses again when the lamp still asks ``simhuman.repress_s`` after a press (one lost
with a restart of the panel). Its hand is never lost: a world action is published again (same id; the
world applies an id once) until the world lists its id in ``sim.world`` (``actions_seen``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any, Final

import msgspec

from messages import ButtonLevel, GameState, HumanSetup, WorldAction, WorldState
from services.bus.client import request_snapshot
from services.common.config import Config
from services.common.shell import Service

from .config import SimHumanConfig
from .interactive import InputClosed, in_daemon_thread, interactive_turn
from .person import Act, MisbehaviourError, Person, Press, Say, Step, Wait, button_levels
from .policy import INTERACTIVE_POLICY, WEB_POLICY, PolicyError

#: a contact bounce lasts this long (real seconds, not scaled: it is electrical).
BOUNCE_S: Final = 0.002
#: a world action the world has not taken within this is published again; given up after ACTION_GIVE_UP_S.
ACTION_RESEND_S: Final = 0.25
ACTION_GIVE_UP_S: Final = 10.0
#: the main loop looks at the lamp at least this often (to press again).
LOOK_S: Final = 0.25


class SimHumanService(Service):
    """The simulated person (or the real one at the terminal)."""

    name = "simhuman"
    config_errors = (PolicyError, MisbehaviourError)

    def __init__(self, config: Config, log: Any | None = None, stdin: Any = None, stdout: Any = None) -> None:
        super().__init__(config, log)
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        #: the simulator's speed factor: the configuration's, then the world's (``sim.world``'s ``speed``).
        self.speed = config.simworld.speed
        self.person = self._make_person(config.simhuman)
        self.latest: GameState | None = None
        self.presses = 0
        self.pressed_at = 0.0
        self.sub: Any = None

    def _make_person(self, cfg: SimHumanConfig) -> Person:
        return Person(cfg, speed=self.speed)

    @property
    def interactive(self) -> bool:
        return self.person.config.policy == INTERACTIVE_POLICY

    async def run(self) -> None:
        sub = self.sub = self.subscribe(["referee.state", "sim.human", "sim.world"])
        snap = await request_snapshot(
            self.ctx, self.config.bus.snapshot, "referee.state", timeout=0.5, attempts=1, bus=self.config.bus
        )
        if snap is not None and isinstance(snap.message, GameState):
            self.offer(snap.message)
        while True:
            if self.latest is not None:
                steps = await self.plan(self.latest)
                if steps:
                    await self.execute(steps)
                    continue  # look at the newest state again
                again = self.person.press_again(self.latest, time.monotonic() - self.pressed_at)
                if again:
                    await self.execute(again)
                    continue
            env = await sub.recv(timeout=LOOK_S)
            if env is None:
                continue
            await self.on_message(env.message)
            # drain what else is waiting, keeping the newest state
            while (more := await sub.recv(timeout=0.001)) is not None:
                await self.on_message(more.message)

    def offer(self, state: GameState) -> None:
        """Keep ``state`` if it is newer than what we hold (revisions only grow; a new game resets)."""
        if (
            self.latest is None
            or state.revision > self.latest.revision
            or state.game_id != self.latest.game_id
        ):
            self.latest = state

    async def on_message(self, message: Any) -> None:
        match message:
            case GameState():
                self.offer(message)
            case WorldState(speed=speed) if speed > 0 and speed != self.speed:
                # the simulator was sped up or slowed down (the console's speed control)
                self.speed = self.person.speed = speed
                self.log.info("new speed", speed=speed)
            case HumanSetup():
                cfg = msgspec.structs.replace(
                    self.person.config,
                    policy=message.policy,
                    misbehave=list(message.misbehave),
                    seed=self.person.config.seed if message.seed is None else message.seed,
                )
                try:
                    self.person = self._make_person(cfg)
                    self.log.info("new behaviour", policy=cfg.policy, misbehave=cfg.misbehave, seed=cfg.seed)
                except (PolicyError, MisbehaviourError) as exc:
                    self.last_error = str(exc)
                    self.log.warning("behaviour rejected", error=str(exc))

    async def plan(self, state: GameState) -> list[Step]:
        if self.person.config.policy == WEB_POLICY:
            return []  # the person plays in the browser console: nothing to do here
        if not self.interactive:
            return self.person.on_state(state)
        if not self.person.claim_turn(state):
            return []

        def write(text: str) -> None:
            self.stdout.write(text)
            self.stdout.flush()

        try:
            return await in_daemon_thread(interactive_turn, self.person, state, self.stdin.readline, write)
        except InputClosed:
            self.log.info("the terminal closed; the person left")
            await asyncio.Event().wait()
            return []

    async def execute(self, steps: list[Step]) -> None:
        for step in steps:
            match step:
                case Wait(seconds=s):
                    await asyncio.sleep(s)
                case Act(action=action):
                    await self.act(action)
                case Press(hold_s=hold):
                    await self.press(hold)
                case Say(text=text):
                    self.log.info(text)

    async def act(self, action: WorldAction) -> None:
        """Publish ``action`` until the world says it took it (``sim.world``'s ``actions_seen``): a
        restarting bus loses what it is sent, and its echo would not prove that the world, which may
        not have reconnected yet, got it. Messages arriving meanwhile are taken as usual."""
        if self.sub is None:  # not running (tests of the steps alone)
            await self.pub.publish("sim.action", action)
            return
        give_up = time.monotonic() + ACTION_GIVE_UP_S
        while time.monotonic() < give_up:
            await self.pub.publish("sim.action", action)
            resend = time.monotonic() + ACTION_RESEND_S
            while (left := resend - time.monotonic()) > 0:
                env = await self.sub.recv(timeout=left)
                if env is None:
                    break
                if isinstance(env.message, WorldState):
                    if action.action_id in env.message.actions_seen:
                        return
                    continue
                await self.on_message(env.message)
        self.log.warning("world action not taken by the world: given up", id=action.action_id)

    async def press(self, hold_s: float) -> None:
        bounce = self.person.config.bounce
        self.presses += 1
        self.pressed_at = time.monotonic()
        self.log.info("button", press=self.presses)
        for level in button_levels(True, bounce):
            await self.pub.publish("sim.button", ButtonLevel(pressed=level))
            if bounce:
                await asyncio.sleep(BOUNCE_S)
        await asyncio.sleep(hold_s)
        for level in button_levels(False, bounce):
            await self.pub.publish("sim.button", ButtonLevel(pressed=level))
            if bounce:
                await asyncio.sleep(BOUNCE_S)
