"""The bus session: the orchestrator's connection to a running simulated stack.

:class:`SimSession` sends operator commands (resent with the same id until answered: the referee carries
out an id once), world actions and the person's setup (resent until the bus echoes them back), and
follows ``referee.state``, ``sim.world``, ``vision.*`` and the actuator's reports. Every wait is on a
condition with a deadline (:meth:`SimSession.until`).
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from messages import (
    ActuatorCommand,
    ActuatorEvent,
    ActuatorPosition,
    BoardObservation,
    Envelope,
    GameState,
    HumanSetup,
    Message,
    OperatorCommand,
    OperatorReply,
    WorldAction,
    WorldState,
)
from messages.game import RESTING_PHASES
from services.bus.client import Publisher, Subscriber, context, request_snapshot
from services.common.config import Config
from services.referee.judge import EMPTY_BOARD

from .config import angle_diff, image_angle
from .errors import SimError
from .judge import ANGLE_TOLERANCE_DEG
from .plan import TaskPlan

#: How long one look at the socket takes when draining what is already there.
DRAIN_POLL_S: Final = 0.001
#: The longest single wait for a message (then the deadline and the resend are looked at again).
PUMP_MAX_S: Final = 0.2
#: How often the orchestrator tries to home the machine after refilling the supplies.
REFILL_ATTEMPTS: Final = 5
#: How often unanswered commands and unechoed messages are sent again.
RESEND_S: Final = 1.0
#: Deadline (wall seconds) of each step of setting a task up.
SETUP_TIMEOUT_S: Final = 30.0
#: The board's pose counts as set when within this of the one asked for.
POSE_TOLERANCE_MM: Final = 0.5
POSE_TOLERANCE_DEG: Final = 0.1
#: The snapshot server is asked once, briefly: a lost answer is asked for again at the next resend.
SNAPSHOT_TIMEOUT_S: Final = 0.5

StateHook = Callable[[GameState], Awaitable[None]]


def world_is_reset(world: WorldState) -> bool:
    """Every piece in its supply column, the board empty, the gripper and the hand free."""
    return (
        world.board == EMPTY_BOARD
        and world.gripper.holding is None
        and not world.hand.present
        and all(p.where == "supply" for p in world.pieces)
    )


class SimSession:
    """The orchestrator's view of a running simulated stack (one asyncio loop; not thread-safe)."""

    SOURCE: Final = "sim-run"

    def __init__(self, config: Config, *, nonce: str | None = None) -> None:
        self.config = config
        self.ctx = context()
        self.pub = Publisher(self.ctx, config.bus, self.SOURCE)
        self.pub.open()
        self.sub = Subscriber(
            self.ctx,
            config.bus,
            ["referee.state", "operator.", "sim.", "vision.", "actuator.event", "actuator.position"],
            name=self.SOURCE,
        )
        self.nonce = nonce or f"{os.getpid():x}{time.time_ns() & 0xFFFFFF:06x}"
        self._ids = itertools.count(1)
        self.state: GameState | None = None
        self._state_pid = 0
        self.world: WorldState | None = None
        #: vision's last stable reading (vision.stable) and its last reading of any frame (vision.board).
        self.stable: BoardObservation | None = None
        self.seen: BoardObservation | None = None
        self.replies: dict[str, OperatorReply] = {}
        self.actuator_events: dict[str, ActuatorEvent] = {}
        #: the last position report and how many have come (a fresh one is proof of the present).
        self.position: ActuatorPosition | None = None
        self.positions = 0
        self._echoes: set[tuple[str, int]] = set()

    def close(self) -> None:
        self.sub.close()
        self.pub.close()
        # destroy, not term: a socket a caller made on this context and left open (a test that failed
        # half-way) must not hang the exit, which would leave the stack running.
        self.ctx.destroy(linger=0)

    async def __aenter__(self) -> SimSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    @property
    def state_pid(self) -> int:
        """The pid of the referee that published :attr:`state` (a restarted one numbers afresh)."""
        return self._state_pid

    def next_id(self, what: str) -> str:
        return f"sim-{self.nonce}-{what}{next(self._ids)}"

    def ours(self, command_id: str) -> bool:
        """Whether an id is one this session made (actuator events of the referee's are its business)."""
        return command_id.startswith(f"sim-{self.nonce}-")

    # -- receiving --------------------------------------------------------------------------------------

    def _take(self, env: Envelope) -> None:
        msg = env.message
        if env.header.source == self.SOURCE:
            self._echoes.add((env.topic, env.header.seq))
            return
        if isinstance(msg, GameState):
            # Keep the newest revision; a restarted referee (new pid) may number afresh.
            if self.state is None or env.header.pid != self._state_pid or msg.revision > self.state.revision:
                self.state = msg
                self._state_pid = env.header.pid
        elif isinstance(msg, WorldState):
            self.world = msg
        elif isinstance(msg, BoardObservation):
            if env.topic == "vision.stable":
                self.stable = msg
            else:
                self.seen = msg
        elif isinstance(msg, OperatorReply):
            self.replies[msg.command_id] = msg
        elif (
            isinstance(msg, ActuatorEvent) and msg.status in ("done", "failed") and self.ours(msg.command_id)
        ):
            self.actuator_events[msg.command_id] = msg
        elif isinstance(msg, ActuatorPosition):
            self.position = msg
            self.positions += 1

    async def pump(self, timeout: float) -> bool:
        """Take in what arrives within ``timeout``; returns whether anything did."""
        env = await self.sub.recv(timeout=timeout)
        if env is None:
            return False
        self._take(env)
        while True:  # drain what is already waiting (recv(timeout=0) would not look at the socket)
            env = await self.sub.recv(timeout=DRAIN_POLL_S)
            if env is None:
                return True
            self._take(env)

    async def until(
        self,
        condition: Callable[[], bool],
        timeout: float,
        what: str,
        resend: Callable[[], Awaitable[None]] | None = None,
        on_change: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Pump messages until ``condition()`` holds. ``resend`` is called every :data:`RESEND_S`;
        ``on_change`` after every batch of messages. :raises TimeoutError: naming ``what``."""
        deadline = time.monotonic() + timeout
        next_resend = time.monotonic() + RESEND_S
        while not condition():
            now = time.monotonic()
            if now >= deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f} s")
            if resend is not None and now >= next_resend:
                await resend()
                next_resend = now + RESEND_S
            got = await self.pump(min(PUMP_MAX_S, deadline - now, max(0.0, next_resend - now) or PUMP_MAX_S))
            if got and on_change is not None:
                await on_change()

    # -- sending ----------------------------------------------------------------------------------------

    async def publish_confirmed(self, topic: str, message: Message, timeout: float = SETUP_TIMEOUT_S) -> None:
        """Publish until the bus echoes our own message back: then the forwarder has it, and every
        subscriber that is connected gets it (the PUB/SUB slow-joiner and a restarting bus are handled by
        sending again)."""
        header = await self.pub.publish(topic, message)
        sent = {header.seq}

        async def again() -> None:
            h = await self.pub.publish(topic, message)
            sent.add(h.seq)

        await self.until(
            lambda: any((topic, seq) in self._echoes for seq in sent), timeout, f"publishing {topic}", again
        )

    async def command(self, cmd: OperatorCommand, timeout: float = SETUP_TIMEOUT_S) -> OperatorReply:
        """Send an operator command until the referee answers it (same id: carried out once)."""

        async def send() -> None:
            await self.pub.publish("operator.command", cmd)

        await send()
        await self.until(
            lambda: cmd.command_id in self.replies, timeout, f"referee's reply to {cmd.action}", send
        )
        return self.replies[cmd.command_id]

    async def world_action(self, action: WorldAction, done: Callable[[WorldState], bool], what: str) -> None:
        """Ask the world for ``action`` and wait until ``done(world)`` says it happened."""
        await self.publish_confirmed("sim.action", action)

        async def again() -> None:
            await self.pub.publish("sim.action", action)

        await self.until(lambda: self.world is not None and done(self.world), SETUP_TIMEOUT_S, what, again)

    async def reset_world(self) -> None:
        """Every piece back in its supply column, the board empty, the gripper free."""
        await self.world_action(
            WorldAction(action_id=self.next_id("reset"), kind="reset"), world_is_reset, "resetting the world"
        )

    async def refill_supplies(self) -> None:
        """Tell the actuator that the supply columns were set up anew (every slot full), as the operator
        does before each contest task: a ``home`` command (which also parks the gantry) with
        ``reset_supply``. Sent when the actuator reports the machine idle; resent with the same id until
        the actuator answers (it runs an id once); a refusal because the machine was still busy is tried
        again with a new id, up to :data:`REFILL_ATTEMPTS` times.

        :raises SimError: when the actuator keeps failing it."""
        reason = ""
        for _ in range(REFILL_ATTEMPTS):
            await self.wait_machine_idle()
            cmd = ActuatorCommand(command_id=self.next_id("refill"), kind="home", reset_supply=True)

            async def send(cmd: ActuatorCommand = cmd) -> None:
                await self.pub.publish("actuator.command", cmd)

            await send()
            await self.until(
                lambda c=cmd: c.command_id in self.actuator_events, SETUP_TIMEOUT_S, "refilling", send
            )
            event = self.actuator_events[cmd.command_id]
            if event.status == "done":
                return
            reason = event.reason
        raise SimError(f"the actuator could not home after the supplies were refilled: {reason}")

    async def wait_machine_idle(self, timeout: float = SETUP_TIMEOUT_S) -> None:
        """Wait for a position report, newer than now, that says the machine is idle."""
        after = self.positions

        def idle() -> bool:
            return self.positions > after and self.position is not None and self.position.state == "Idle"

        await self.until(idle, timeout, "waiting for the machine to be idle")

    async def set_board(self, x_mm: float, y_mm: float, angle_deg: float) -> None:
        """Put the board at a pose (the operator turning it for task 3)."""

        def placed(world: WorldState) -> bool:
            cx, cy = world.board_center_mm
            return (
                abs(cx - x_mm) <= POSE_TOLERANCE_MM
                and abs(cy - y_mm) <= POSE_TOLERANCE_MM
                and abs(world.board_angle_deg - angle_deg) <= POSE_TOLERANCE_DEG
            )

        if self.world is not None and placed(self.world):
            return
        action = WorldAction(
            action_id=self.next_id("board"), kind="board", x_mm=x_mm, y_mm=y_mm, angle_deg=angle_deg
        )
        await self.world_action(action, placed, "turning the board")

    async def set_human(self, policy: str, misbehave: Sequence[str], seed: int) -> None:
        await self.publish_confirmed(
            "sim.human", HumanSetup(policy=policy, misbehave=list(misbehave), seed=seed)
        )

    async def wait_ready(self, plan: TaskPlan, timeout: float = SETUP_TIMEOUT_S) -> None:
        """Wait until the referee takes tasks (resting, no peer down) and vision's stable view is the
        empty board, seen (on its latest frames, which carry the current pose) at the plan's angle."""
        expected = image_angle(self.config, plan)

        def ready() -> bool:
            s, stable, seen = self.state, self.stable, self.seen
            if s is None or s.phase not in RESTING_PHASES or s.peers_down:
                return False
            if stable is None or stable.board != EMPTY_BOARD:
                return False
            if seen is None or not seen.stable or seen.board != EMPTY_BOARD or seen.pose is None:
                return False
            return abs(angle_diff(seen.pose.angle_deg, expected)) <= ANGLE_TOLERANCE_DEG

        await self.until(ready, timeout, "waiting for the referee at rest and vision seeing the empty board")

    async def ask_snapshot(self) -> None:
        """Fetch the referee's state from its snapshot server (after a restart, or when updates were lost)."""
        env = await request_snapshot(
            self.ctx,
            self.config.bus.snapshot,
            "referee.state",
            timeout=SNAPSHOT_TIMEOUT_S,
            attempts=1,
            bus=self.config.bus,
        )
        if env is not None:
            self._take(env)
