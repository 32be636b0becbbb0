"""End-to-end benchmark: the whole simulated stack under supervisord.

Measures, on one machine, in one run:

- **button -> first motion command**: from the person's button press (``ButtonPress.press_ns`` on
  ``panel.button``, CLOCK_MONOTONIC, the clock of the camera's ``capture_ns``) to the referee's next
  ``actuator.command`` (its header ``mono_ns``), at the simulated camera's frame rate (30 fps). The
  referee judges on the first frame captured after the press whose clear, agreeing window ends with it
  (issue 11), so it is split: press -> the capture of the first stable frame after it (waiting for the
  camera, and for a fresh window when the view was not clear at the press); that frame's capture -> its
  arrival on ``vision.board`` (render, transport, vision); press -> the press on ``panel.button`` (the
  panel's debounce: the referee cannot know of the press before); and the later of those two arrivals ->
  the command (the referee, the AI, the journal). The count of presses whose very first frame after them
  was already stable says how often no new window was needed.
- **the person**: a real person takes the hand away and then presses the button, a few hundred ms
  later; the simulated one does everything ``speed`` times faster, which would leave vision's window
  (real time) no chance to fill before the press. ``--settle-s`` sets that last pause in real time
  (``simhuman.reach_s`` is scaled for it, so the person's reaching is at real speed too and a game
  takes longer than with the simulator's defaults); ``--settle-s 0`` keeps the simulator's defaults.
- **a whole game** at the benchmark's speed factor (task 5: the person opens, perfect play both sides).
- **baseline**: a bus round trip (publish -> forwarder -> subscriber) of a small message, measured in the
  same run on the same machine, so the figures above can be read as multiples of it.

Usage: ``python bench/e2e.py [--games N] [--speed F] [--seed S] [--settle-s S]``. Prints a table;
figures vary with the machine's load (this is a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import deque
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
#: stable frames remembered for a press that comes after them (a quarter of a second at 30 fps).
RECENT_FRAMES = 8
#: real seconds between the simulated person's hand leaving the view and the press (``--settle-s``).
SETTLE_S = 0.4


@dataclass
class Latencies:
    total_ms: list[float] = field(default_factory=list)
    #: press -> capture of the first stable frame captured after it
    to_capture_ms: list[float] = field(default_factory=list)
    #: that capture -> its arrival on vision.board
    vision_ms: list[float] = field(default_factory=list)
    #: press -> the press on panel.button (the panel's debounce)
    press_ms: list[float] = field(default_factory=list)
    #: the later of the press message and the judged frame -> the motion command (referee, AI)
    software_ms: list[float] = field(default_factory=list)
    #: presses whose first frame captured after them was already stable (no new window awaited)
    on_first_frame: int = 0
    #: why the others waited
    waited: list[str] = field(default_factory=list)


def person_overrides(settle_s: float, speed: float) -> dict[str, Any]:
    """Configuration that makes the simulated person press ``settle_s`` real seconds (on average, with
    the person's jitter) after taking the hand away; {} for 0 (the simulator's defaults)."""
    if settle_s <= 0:
        return {}
    # the person waits reach_s / 2 / speed after withdrawing the hand, then presses
    return {"simhuman": {"reach_s": 2.0 * settle_s * speed}}


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
            session.ctx, config.bus, ["panel.button", "vision.board", "actuator.command"], name="bench"
        )
        press_ns: int | None = None
        #: when the press was published on panel.button
        press_sent_ns = 0
        #: a frame: its capture time, its arrival on vision.board, whether it was stable, why not
        Seen = tuple[int, int, bool, str]
        #: the first frame, and the first stable frame, captured after the press
        first: Seen | None = None
        view: Seen | None = None
        #: the last frames: the press is published after the debounce, so the first frames captured
        #: after it may come before it
        recent: deque[Seen] = deque(maxlen=RECENT_FRAMES)

        def after_press(frame: Seen) -> None:
            nonlocal first, view
            if press_ns is None or view is not None or frame[0] <= press_ns:
                return
            first = first or frame
            if frame[2]:
                view = frame

        async def drain() -> None:
            nonlocal press_ns, press_sent_ns, first, view
            while (env := await watch.recv(timeout=POLL_S)) is not None:
                msg = env.message
                if isinstance(msg, ButtonPress) and msg.source != "bench":
                    press_ns, press_sent_ns = msg.press_ns or env.header.mono_ns, env.header.mono_ns
                    first = view = None
                    for frame in recent:
                        after_press(frame)
                elif isinstance(msg, BoardObservation) and msg.capture_ns:
                    why = msg.problem or ("occluded" if msg.occluded else f"{msg.agreeing_frames} agreeing")
                    frame = (msg.capture_ns, env.header.mono_ns, msg.stable, "" if msg.stable else why)
                    recent.append(frame)
                    after_press(frame)
                elif (
                    isinstance(msg, ActuatorCommand)
                    and press_ns is not None
                    and msg.kind in ("place", "move")
                ):
                    t = env.header.mono_ns
                    lat.total_ms.append((t - press_ns) / 1e6)
                    if view is not None:
                        captured, arrived, _, _ = view
                        lat.to_capture_ms.append((captured - press_ns) / 1e6)
                        lat.vision_ms.append((arrived - captured) / 1e6)
                        lat.press_ms.append((press_sent_ns - press_ns) / 1e6)
                        lat.software_ms.append((t - max(arrived, press_sent_ns)) / 1e6)
                        lat.on_first_frame += view == first
                        if first is not None and view != first:
                            lat.waited.append(
                                f"first frame after the press not stable ({first[3]}); judged a frame"
                                f" captured {(captured - press_ns) / 1e6:.0f} ms after the press"
                            )
                    press_ns = first = view = None

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
    parser.add_argument(
        "--settle-s",
        type=float,
        default=SETTLE_S,
        help="real seconds from the hand leaving the view to the press (0: the simulator's defaults)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sanzi-bench-") as runtime:
        base = config_module.load(None, overrides={"runtime": {"dir": runtime}})
        config = simrun.simulator_config(
            base, speed=args.speed, seed=args.seed, extra=person_overrides(args.settle_s, args.speed)
        )
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
    settle = f"{args.settle_s:g} s" if args.settle_s > 0 else "the simulator's default"
    led = config.led
    debounce_ms = led.sim_debounce_ms if led.sim_debounce_ms >= 0 else led.debounce_ms
    print(f"sanzi e2e benchmark: speed {args.speed:g}, {args.games} game(s) of task 5, seed {args.seed}")
    print(
        f"camera {config.simcam.fps:g} fps, stable after {config.vision.stable_frames} frames, "
        f"debounce {debounce_ms:g} ms; hand gone -> press: {settle}"
    )
    print(f"stack start (supervisord to every heartbeat): {startup_s:.1f} s")
    print()
    print(f"{'measure':44} {'n':>4} {'median ms':>10} {'p99 ms':>9} {'x baseline':>11}")
    rows = [
        ("baseline: bus round trip (1 hop)", hop),
        (f"button -> first motion command @ {config.simcam.fps:g} fps", lat.total_ms),
        ("  button -> capture of the judged frame", lat.to_capture_ms),
        ("  capture -> on vision.board (render+vision)", lat.vision_ms),
        ("  button -> on panel.button (debounce)", lat.press_ms),
        ("  both in -> motion command (referee, AI)", lat.software_ms),
    ]
    for name, values in rows:
        med = percentile(values, 0.5)
        p99 = percentile(values, 0.99)
        print(f"{name:44} {len(values):4d} {med:10.2f} {p99:9.2f} {med / base_ms:11.1f}")
    print(
        f"presses whose first frame after them was stable (no new window): {lat.on_first_frame}"
        f" of {len(lat.to_capture_ms)}"
    )
    for note in lat.waited:
        print(f"  {note}")
    print()
    for i, (secs, outcome) in enumerate(zip(game_s, outcomes, strict=True), 1):
        print(f"game {i}: {secs:.1f} s wall at speed {args.speed:g} ({outcome})")
    if game_s:
        print(f"whole game: median {statistics.median(game_s):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
