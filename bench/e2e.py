"""End-to-end benchmark: the whole simulated stack under supervisord.

Measures, on one machine, in one run:

- **button -> first motion command**: from the person's button press (``ButtonPress.press_ns`` on
  ``panel.button``, CLOCK_MONOTONIC) to the referee's next ``actuator.command`` (its header ``mono_ns``).
  This includes vision's stability window (the referee must see a stable board after the press), so it is
  split: press -> the first stable observation after it (``vision.stable``), and that observation ->
  the command (the software's own share: judging, asking the AI, issuing the command).
- **a whole game** at the benchmark's speed factor (task 5: the person opens, perfect play both sides).
- **baseline**: a bus round trip (publish -> forwarder -> subscriber) of a small message, measured in the
  same run on the same machine, so the figures above can be read as multiples of it.

Usage: ``python bench/e2e.py [--games N] [--speed F] [--seed S]``. Prints a table; figures vary with the
machine's load (this is a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from launch import simrun  # noqa: E402
from launch import stack as stack_module  # noqa: E402
from launch.simrun import SimOptions, SimSession  # noqa: E402
from messages import ActuatorCommand, BoardObservation, ButtonPress, GameState  # noqa: E402
from services.bus.client import Publisher, Subscriber  # noqa: E402
from services.common import config as config_module  # noqa: E402

ROUND_TRIPS = 300
#: Subscriber.recv(timeout=0) returns only what it already buffered: poll the socket for this long.
POLL_S = 0.001


@dataclass
class Latencies:
    total_ms: list[float] = field(default_factory=list)
    to_stable_ms: list[float] = field(default_factory=list)
    after_stable_ms: list[float] = field(default_factory=list)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


async def bus_round_trip(config: Any, n: int = ROUND_TRIPS) -> list[float]:
    """Milliseconds for one small message through the running bus (publish -> forwarder -> subscriber)."""
    from services.bus.client import context

    ctx = context()
    pub = Publisher(ctx, config.bus, "bench")
    pub.open()
    sub = Subscriber(ctx, config.bus, ["panel.button"], name="bench")
    out: list[float] = []
    try:
        # slow joiner: publish until the subscription is through
        deadline = time.monotonic() + 10
        while await sub.recv(timeout=0.05) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the bus did not deliver within 10 s")
            await pub.publish("panel.button", ButtonPress(press_id=-1, source="bench"))
        while await sub.recv(timeout=0.05) is not None:
            pass
        for i in range(n):
            t0 = time.monotonic_ns()
            await pub.publish("panel.button", ButtonPress(press_id=-2 - i, source="bench", press_ns=t0))
            while True:
                env = await sub.recv(timeout=2.0)
                if env is None:
                    raise RuntimeError("a round trip was lost")
                if isinstance(env.message, ButtonPress) and env.message.press_id == -2 - i:
                    break
            out.append((time.monotonic_ns() - t0) / 1e6)
    finally:
        sub.close()
        pub.close()
        ctx.destroy(linger=0)
    return out


async def measure_games(
    config: Any, games: int, seed: int, speed: float
) -> tuple[Latencies, list[float], list[str]]:
    """Play ``games`` games of task 5 and time every press -> command."""
    lat = Latencies()
    game_s: list[float] = []
    outcomes: list[str] = []
    plans = simrun.plan_tasks(SimOptions(tasks=(5,), games=games, seed=seed, speed=speed), config)
    async with SimSession(config) as session:
        watch = Subscriber(
            session.ctx, config.bus, ["panel.button", "vision.stable", "actuator.command"], name="bench"
        )
        press_ns: int | None = None
        stable_ns: int | None = None
        #: the stable board before the press: vision re-publishes it at 1 Hz, which is not news.
        board_before = ""

        async def drain() -> None:
            nonlocal press_ns, stable_ns, board_before
            while (env := await watch.recv(timeout=POLL_S)) is not None:
                msg = env.message
                if isinstance(msg, ButtonPress) and msg.source != "bench":
                    press_ns, stable_ns = msg.press_ns or env.header.mono_ns, None
                elif isinstance(msg, BoardObservation):
                    if press_ns is None:
                        board_before = msg.board
                    elif stable_ns is None and env.header.mono_ns > press_ns and msg.board != board_before:
                        stable_ns = env.header.mono_ns
                elif (
                    isinstance(msg, ActuatorCommand)
                    and press_ns is not None
                    and msg.kind in ("place", "move")
                ):
                    t = env.header.mono_ns
                    lat.total_ms.append((t - press_ns) / 1e6)
                    if stable_ns is not None:
                        lat.to_stable_ms.append((stable_ns - press_ns) / 1e6)
                        lat.after_stable_ms.append((t - stable_ns) / 1e6)
                    press_ns = stable_ns = None
                    board_before = ""

        async def hook(_state: GameState) -> None:
            await drain()

        try:
            for plan in plans:
                result = await simrun.run_task(session, plan, None, hook)
                await drain()
                game_s.append(result.seen.wall_s)
                outcomes.append(("PASS " if result.verdict.ok else "FAIL ") + (result.row()["outcome"]))
        finally:
            watch.close()
    return lat, game_s, outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--speed", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sanzi-bench-") as runtime:
        base = config_module.load(None, overrides={"runtime": {"dir": runtime}})
        config = simrun.simulator_config(base, speed=args.speed, seed=args.seed)
        simrun.fresh_state(config)
        files = stack_module.prepare(config, command="bench")
        with stack_module.Stack(files) as stack:
            t0 = time.monotonic()
            stack.wait_running(timeout=60)
            stack.wait_heartbeats(config, timeout=60)
            startup_s = time.monotonic() - t0
            hop = asyncio.run(bus_round_trip(config))
            lat, game_s, outcomes = asyncio.run(measure_games(config, args.games, args.seed, args.speed))
    base_ms = statistics.median(hop)
    print(f"sanzi e2e benchmark: speed {args.speed:g}, {args.games} game(s) of task 5, seed {args.seed}")
    print(f"stack start (supervisord to every heartbeat): {startup_s:.1f} s")
    print()
    print(f"{'measure':42} {'n':>4} {'median ms':>10} {'p99 ms':>9} {'x baseline':>11}")
    rows = [
        ("baseline: bus round trip (1 hop)", hop),
        ("button -> first motion command", lat.total_ms),
        ("  button -> stable view after it", lat.to_stable_ms),
        ("  stable view -> motion command (software)", lat.after_stable_ms),
    ]
    for name, values in rows:
        med = percentile(values, 0.5)
        p99 = percentile(values, 0.99)
        print(f"{name:42} {len(values):4d} {med:10.2f} {p99:9.2f} {med / base_ms:11.1f}")
    print()
    for i, (secs, outcome) in enumerate(zip(game_s, outcomes, strict=True), 1):
        print(f"game {i}: {secs:.1f} s wall at speed {args.speed:g} ({outcome})")
    if game_s:
        print(f"whole game: median {statistics.median(game_s):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
