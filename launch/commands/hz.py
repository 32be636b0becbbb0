"""``sanzi hz TOPIC [--window S]``: the rate of a topic (or of each topic of a family) live.

Every period it prints, per topic: the rate over the last ``--window`` seconds, the intervals between
messages (min, max, mean, standard deviation), and how the rate compares with the topic table's
expected rate, judged like openpilot's SubMaster: *alive* when the last message arrived within 10
expected periods, *on rate* when the rate is at least 90 % of the expected one. Event topics (no
expected rate) are only measured.

Intervals come from the publishers' monotonic stamps (the header), so they measure the publisher, not
the bus; liveness uses the arrival time here. Each publisher of a topic is measured on its own (a line
per ``topic (source)``), so ``sanzi hz sys.heartbeat`` shows every process's heartbeat rate.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import signal
import sys
import time
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

import zmq.asyncio

import messages
from services.bus.client import Subscriber
from services.common import config as config_module
from services.common import log as log_module
from services.common.shell import load_config

#: alive: the last message arrived within this many expected periods (openpilot: 10).
ALIVE_PERIODS = 10.0
#: on rate: at least this fraction of the expected rate (openpilot: 90 %).
ON_RATE_FRACTION = 0.9
DEFAULT_WINDOW_S = 10.0


@dataclass(frozen=True)
class RateReport:
    """What :class:`RateMeter` measured for one topic."""

    topic: str
    #: messages in the window.
    count: int
    #: (count - 1) / (last stamp - first stamp) in Hz; 0 with fewer than two messages.
    rate_hz: float
    #: intervals between consecutive stamps in the window, seconds (0 when fewer than two messages).
    min_s: float
    max_s: float
    mean_s: float
    std_s: float
    #: the topic table's rate, 0 for event topics.
    expected_hz: float
    #: None for event topics; ``on_rate`` is also None while a live topic has only one message.
    alive: bool | None
    on_rate: bool | None
    #: seconds since the last message arrived (None before the first).
    age_s: float | None
    #: publisher stamps (CLOCK_MONOTONIC ns) of the window's first and last messages.
    first_ns: int
    last_ns: int


class RateMeter:
    """Rate and interval statistics of one topic over a sliding window. Pure: the caller gives the
    times (publisher stamp and arrival, both monotonic ns), so it is tested without a bus."""

    def __init__(self, topic: str, expected_hz: float, window_s: float = DEFAULT_WINDOW_S) -> None:
        if not window_s > 0:
            raise ValueError(f"window must be positive, not {window_s}")
        self.topic = topic
        self.expected_hz = expected_hz
        self.window_ns = int(window_s * 1e9)
        self._stamps: deque[int] = deque()
        self._last_arrival: int | None = None

    def add(self, stamp_ns: int, arrival_ns: int) -> None:
        # a stamp older than the newest (a restarted publisher on another clock, a replay) starts afresh
        if self._stamps and stamp_ns < self._stamps[-1]:
            self._stamps.clear()
        self._stamps.append(stamp_ns)
        self._last_arrival = arrival_ns
        while self._stamps[-1] - self._stamps[0] > self.window_ns:
            self._stamps.popleft()

    def report(self, now_ns: int) -> RateReport:
        stamps = list(self._stamps)
        intervals = [(b - a) / 1e9 for a, b in itertools.pairwise(stamps)]
        if intervals:
            span = (stamps[-1] - stamps[0]) / 1e9
            rate = (len(stamps) - 1) / span if span > 0 else math.inf
            mean = sum(intervals) / len(intervals)
            std = math.sqrt(sum((i - mean) ** 2 for i in intervals) / len(intervals))
            lo, hi = min(intervals), max(intervals)
        else:
            rate = mean = std = lo = hi = 0.0
        age = None if self._last_arrival is None else (now_ns - self._last_arrival) / 1e9
        alive: bool | None = None
        on_rate: bool | None = None
        if self.expected_hz > 0:
            alive = age is not None and age <= ALIVE_PERIODS / self.expected_hz
            # one message says nothing about a rate: unknown unless it is not alive at all
            on_rate = (
                (alive and rate >= ON_RATE_FRACTION * self.expected_hz) if intervals or not alive else None
            )
        return RateReport(
            topic=self.topic,
            count=len(stamps),
            rate_hz=rate,
            min_s=lo,
            max_s=hi,
            mean_s=mean,
            std_s=std,
            expected_hz=self.expected_hz,
            alive=alive,
            on_rate=on_rate,
            age_s=age,
            first_ns=stamps[0] if stamps else 0,
            last_ns=stamps[-1] if stamps else 0,
        )


def render(report: RateReport) -> str:
    """One readable line."""
    if report.count == 0:
        return f"{report.topic:<30} no messages"
    verdict = ""
    if report.expected_hz > 0:
        state = "alive" if report.alive else "NOT ALIVE"
        rate = {True: "on rate", False: "BELOW RATE", None: "rate not known yet"}[report.on_rate]
        verdict = f"  expected {report.expected_hz:g} Hz: {state}, {rate}"
    return (
        f"{report.topic:<30} {report.rate_hz:8.2f} Hz  n={report.count:<5} "
        f"min {report.min_s * 1000:7.1f} ms  max {report.max_s * 1000:7.1f} ms  "
        f"mean {report.mean_s * 1000:7.1f} ms  std {report.std_s * 1000:6.1f} ms{verdict}"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("topic", metavar="TOPIC", help="a topic or a prefix (vision. = every vision topic)")
    parser.add_argument("--window", type=float, default=DEFAULT_WINDOW_S, metavar="S", help="window (s)")
    parser.add_argument("--period", type=float, default=1.0, metavar="S", help="print every S seconds")
    parser.add_argument("--count", type=int, default=0, metavar="N", help="stop after N reports")
    parser.add_argument("--json", action="store_true", help="one JSON object per topic and report")


def run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args)
    except config_module.ConfigError as exc:
        print(f"sanzi hz: {exc}", file=sys.stderr)
        return 2
    topics = messages.topics_matching([args.topic])
    if not topics:
        known = ", ".join(sorted(messages.TOPICS))
        print(f"sanzi hz: no topic starts with {args.topic!r}; topics: {known}", file=sys.stderr)
        return 2
    if not (args.window > 0 and args.period > 0):
        print("sanzi hz: --window and --period must be positive", file=sys.stderr)
        return 2
    log_module.setup("hz", "warning", "console", stream=sys.stderr)
    return asyncio.run(_hz(config, topics, args))


async def _hz(config: Any, topics: list[str], args: argparse.Namespace) -> int:
    meters: dict[tuple[str, str], RateMeter] = {}
    ctx = zmq.asyncio.Context()
    sub = Subscriber(ctx, config.bus, topics, name="hz")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    reports = 0
    next_report = time.monotonic() + args.period
    try:
        while not stop.is_set():
            env = await sub.recv(timeout=max(0.0, next_report - time.monotonic()))
            if env is not None and env.topic in messages.TOPICS:
                key = (env.topic, env.header.source)
                meter = meters.get(key)
                if meter is None:
                    name = f"{env.topic} ({env.header.source})"
                    meter = meters[key] = RateMeter(name, messages.TOPICS[env.topic].rate_hz, args.window)
                meter.add(env.header.mono_ns, time.monotonic_ns())
            if time.monotonic() < next_report:
                continue
            next_report += args.period
            print_reports(meters, topics, args.json)
            reports += 1
            if args.count and reports >= args.count:
                break
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        sub.close()
        ctx.term()
    return 0


def print_reports(meters: dict[tuple[str, str], RateMeter], topics: list[str], as_json: bool) -> None:
    now = time.monotonic_ns()
    reports = [meters[key].report(now) for key in sorted(meters)]
    heard = {topic for topic, _ in meters}
    if len(topics) == 1 and not heard:  # one topic asked for and nothing heard: say so
        reports.append(RateMeter(topics[0], messages.TOPICS[topics[0]].rate_hz).report(now))
    for report in reports:
        print(json.dumps(asdict(report)) if as_json else render(report), flush=True)
    if not as_json and len(reports) > 1:
        print(flush=True)
