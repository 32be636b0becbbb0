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

- **with a browser** (``--browser``): the console's page open in headless chromium the whole time (it
  shows every frame it can), so that the button -> motion figures can be compared with a run without;
  the page's frame rate, the capture -> shown latency and the console's CPU time are printed too.

Usage: ``python bench/e2e.py [--games N] [--speed F] [--seed S] [--settle-s S] [--browser]``. Prints a
table; figures vary with the machine's load (this is a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import threading
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
from services.common.config import Config  # noqa: E402

ROUND_TRIPS = 300
#: Debian's chromium, driven by playwright for ``--browser``.
CHROMIUM = os.environ.get("SANZI_CHROMIUM", "/usr/bin/chromium")
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


async def bus_round_trip(config: Config, n: int = ROUND_TRIPS) -> list[float]:
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
    config: Config, games: int, seed: int, speed: float
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


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def chromium_seconds() -> float:
    """CPU seconds of every chromium process on this machine so far (the benchmark's own browser)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.find("(") + 1 : text.rfind(")")]
        if "chrom" in name:
            fields = text.rsplit(") ", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


class ConsoleInBrowser(threading.Thread):
    """The console's page open in headless chromium, in a thread of its own (playwright's sync API runs
    an event loop of its own, which the benchmark's ``asyncio.run`` must not find in its thread)."""

    def __init__(self, url: str, nice: int, folder: str) -> None:
        super().__init__(name="browser", daemon=True)
        self.url = url
        self.executable = CHROMIUM
        if nice:
            # chromium and every thread and child of it at a lower priority, as a kiosk browser on the
            # device should run (`nice -n 10 chromium --kiosk URL`)
            wrapper = Path(folder) / "chromium-nice"
            wrapper.write_text(f'#!/bin/sh\nexec nice -n {int(nice)} {CHROMIUM} "$@"\n')
            wrapper.chmod(0o700)
            self.executable = str(wrapper)
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.report = ""
        self.error: BaseException | None = None

    def run(self) -> None:
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=self.executable, headless=True, args=["--no-sandbox"]
                )
                try:
                    page = browser.new_page(viewport={"width": 1280, "height": 800})
                    page.goto(self.url)
                    page.wait_for_function("() => (window.sanziFramesShown || 0) > 3", timeout=30_000)
                    self.ready.set()
                    while not self.stop.is_set():
                        page.wait_for_timeout(200)  # lets playwright take the page's events meanwhile
                    self.report = page_report(page, self.url)
                finally:
                    browser.close()
        except BaseException as exc:
            self.error = exc
        finally:
            self.ready.set()

    def __enter__(self) -> ConsoleInBrowser:
        if not self.url:
            raise SystemExit("bench: the console did not say where it listens")
        self.start()
        self.ready.wait(timeout=60)
        if self.error is not None:
            raise SystemExit(f"bench: the browser failed: {self.error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.join(timeout=30)


def page_report(page: Any, url: str) -> str:
    """What the page showed: its frame rate now, and the console's account of capture -> shown."""
    import json
    import urllib.request

    fps = page.evaluate("() => window.sanziFps")
    shown = page.evaluate("() => window.sanziFramesShown")
    with urllib.request.urlopen(url + "api/stats", timeout=5) as res:
        stats = json.loads(res.read())
    client = stats["clients"][0]
    return (
        f"browser (chromium, headless): {fps:.1f} fps shown at the end, {shown} frames shown; capture -> "
        f"shown p50 {client['latency_ms_p50']} ms, p95 {client['latency_ms_p95']} ms; JPEG encode "
        f"{stats['encode_ms']} ms; frames skipped while the page was busy {stats['skipped']}"
    )


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
    parser.add_argument(
        "--browser",
        action="store_true",
        help="keep the console open in headless chromium (playwright) during the games",
    )
    parser.add_argument(
        "--browser-nice",
        type=int,
        default=10,
        metavar="N",
        help="run chromium at this nice level (default %(default)s; 0: as is)",
    )
    parser.add_argument(
        "--console-nice", type=int, default=10, metavar="N", help="console.nice (default %(default)s)"
    )
    parser.add_argument(
        "--console-fps", type=float, default=0.0, metavar="F", help="console.max_fps (default: its default)"
    )
    args = parser.parse_args(argv)
    browser_report = ""
    with tempfile.TemporaryDirectory(prefix="sanzi-bench-") as runtime, contextlib.ExitStack() as held:
        base = config_module.load(None, overrides={"runtime": {"dir": runtime}})
        # the console on a free port (another stack may hold 8080)
        console: dict[str, Any] = {"console": {"port": 0, "nice": args.console_nice}}
        if args.console_fps > 0:
            console["console"]["max_fps"] = args.console_fps
        extra = config_module.merge_dicts(person_overrides(args.settle_s, args.speed), console)
        config = simrun.simulator_config(base, speed=args.speed, seed=args.seed, extra=extra)
        simrun.fresh_state(config)
        files = stack_module.prepare(config, command="bench")
        with stack_module.Stack(files) as stack:
            t0 = time.monotonic()
            stack.wait_running(timeout=60)
            stack.wait_heartbeats(config, timeout=60)
            startup_s = time.monotonic() - t0
            hop = asyncio.run(bus_round_trip(config))
            browser = None
            if args.browser:
                url = stack_module.console_url(config, files)
                browser = held.enter_context(ConsoleInBrowser(url, args.browser_nice, runtime))
            console_cpu, chromium_cpu = cpu_seconds(stack.pids().get("console", 0)), chromium_seconds()
            t1 = time.monotonic()
            lat, game_s, outcomes = asyncio.run(measure_games(config, args.games, args.seed, args.speed))
            took = time.monotonic() - t1
            cpu_share = (cpu_seconds(stack.pids().get("console", 0)) - console_cpu) / took
            browser_report = (
                f"console process (nice {args.console_nice}): {cpu_share:.1%} of one core during the games"
            )
            if browser is not None:
                share = (chromium_seconds() - chromium_cpu) / took
                browser_report += f"; chromium (nice {args.browser_nice}): {share:.1%} of one core"
            if browser is not None:
                browser.__exit__(None, None, None)
                browser_report += "\n" + (browser.report or f"browser: no report ({browser.error!r})")
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
    print(browser_report if args.browser else f"no browser open; {browser_report}")
    print()
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
