"""Recording benchmark: what `sanzi record` costs and what it survives, on the simulated stack.

Measures, on one machine, in one run:

- **a session**: the whole simulated stack playing contest tasks 4-6 over and over for ``--minutes``
  (default 10) with the camera at its configured rate (30 fps), recorded by ``sanzi record --camera``
  (a separate process, as in use): megabytes per minute of recording, and the recorder's CPU share
  (its user + system time over the wall time, from ``wait4``; 100% = one core).
- **a burst**: ``--burst`` small messages published as fast as the bus takes them, at least
  10,000 per second, recorded by ``sanzi record``: how many reached the file (by their sequence numbers:
  none may be missing) and the publishing rate achieved.
- **kill -9**: the recorder killed with SIGKILL ``--kills`` times at a random moment while the stack
  runs with the camera on: what ``sanzi info`` still reads (the complete chunks) and how many seconds
  before the kill are lost, at the writer's chunk settings (``CHUNK_BYTES``, ``FLUSH_INTERVAL_S``).

Usage: ``python bench/recording.py [--minutes M] [--burst N] [--kills K] [--speed F] [--seed S]``.
Prints a table; figures vary with the machine's load (this is a benchmark, not a test).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from launch import simrun  # noqa: E402
from launch import stack as stack_module  # noqa: E402
from launch.simrun import SimOptions, SimSession  # noqa: E402
from messages import Heartbeat  # noqa: E402
from services.bus.client import Publisher  # noqa: E402
from services.common import config as config_module  # noqa: E402
from services.common.config import Config  # noqa: E402
from services.common.recording import (  # noqa: E402
    CHUNK_BYTES,
    FLUSH_INTERVAL_S,
    Recording,
    RecordingError,
)

#: the issue's figure: a burst of at least this many small messages per second.
BURST_RATE = 10_000
#: the burst's messages are heartbeats of this made-up process, so they are told from the stack's.
BURST_SOURCE = "burst"
PROBE_SOURCE = "burst-probe"
#: how long the burst's publisher waits for its queue to reach the bus before it closes.
HANDOVER_S = 2.0
MB = 1_000_000


def start_recorder(config_file: Path, out: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "launch.cli",
            "--config",
            str(config_file),
            "record",
            str(out),
            "--quiet",
            *args,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def stop_recorder(proc: subprocess.Popen[bytes], sig: int = signal.SIGINT) -> tuple[int, float]:
    """Signal the recorder and reap it: (exit status, CPU seconds it used, user + system)."""
    proc.send_signal(sig)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def wait_for_records(path: Path, timeout: float = 30.0) -> None:
    """Until the recorder's file holds a complete chunk (it is connected and writing)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if path.exists() and any(True for _ in Recording(path, warn=False)):
                return
        except RecordingError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"the recorder wrote nothing to {path} in {timeout} s")


async def play_until(config: Config, deadline: float, seed: int, speed: float) -> int:
    """Play tasks 4, 5, 6 over and over until ``deadline`` (monotonic); returns the tasks played."""
    played = 0
    async with SimSession(config) as session:
        round_ = 0
        while time.monotonic() < deadline:
            plans = simrun.plan_tasks(SimOptions(tasks=(4, 5, 6), seed=seed + round_, speed=speed), config)
            for plan in plans:
                if time.monotonic() >= deadline:
                    break
                await simrun.run_task(session, plan)
                played += 1
            round_ += 1
        while time.monotonic() < deadline:
            await session.pump(min(1.0, deadline - time.monotonic()))
    return played


def session(config: Config, config_file: Path, folder: Path, minutes: float, seed: int, speed: float) -> dict:
    out = folder / "session.mcap"
    recorder = start_recorder(config_file, out, "--camera", "--force")
    wait_for_records(out)
    t0 = time.monotonic()
    played = asyncio.run(play_until(config, t0 + minutes * 60, seed, speed))
    code, cpu_s = stop_recorder(recorder)
    wall_s = time.monotonic() - t0
    rec = Recording(out, warn=False)
    counts = rec.channel_counts() or {}
    return {
        "minutes": wall_s / 60,
        "tasks": played,
        "exit": code,
        "bytes": out.stat().st_size,
        "mb_per_min": out.stat().st_size / MB / (wall_s / 60),
        "cpu_share": cpu_s / wall_s,
        "images": counts.get("/camera/image", 0),
        "fps": counts.get("/camera/image", 0) / wall_s,
        "records": sum(n for t, n in counts.items() if not t.startswith("/")),
    }


def _beats(path: Path, process: str) -> list[int]:
    """The sequence numbers of the heartbeats of ``process`` in the recording at ``path``."""
    try:
        messages = [r.envelope().message for r in Recording(path, warn=False) if r.topic == "sys.heartbeat"]
    except RecordingError:
        return []
    return [m.seq for m in messages if isinstance(m, Heartbeat) and m.process == process]


async def publish_burst(config: Config, count: int, rate: float, path: Path) -> tuple[float, float]:
    """Publish ``count`` heartbeats of :data:`BURST_SOURCE` at ``rate`` per second, once the recorder
    writing ``path`` has heard this publisher (a PUB socket drops what it sends before it learned the
    subscriptions); returns when the burst began (monotonic) and the rate achieved (a publisher that
    cannot keep up publishes as fast as it can). Waits until everything was handed to the bus."""
    import zmq.asyncio

    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, config.bus, BURST_SOURCE)
    pub.open()
    probe = 0
    try:
        deadline = time.monotonic() + 30
        while not _beats(path, PROBE_SOURCE):
            if time.monotonic() > deadline:
                raise TimeoutError("the recorder did not hear the burst's publisher")
            probe += 1
            await pub.publish("sys.heartbeat", Heartbeat(process=PROBE_SOURCE, pid=1, seq=probe))
            await asyncio.sleep(0.1)
        start = time.monotonic()
        batch = 100
        for i in range(0, count, batch):
            for j in range(i, min(count, i + batch)):
                await pub.publish("sys.heartbeat", Heartbeat(process=BURST_SOURCE, pid=1, seq=j + 1))
            due = start + (i + batch) / rate
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        elapsed = time.monotonic() - start
        await asyncio.sleep(HANDOVER_S)  # the publisher closes with linger 0: let its queue empty first
        return start, count / elapsed
    finally:
        pub.close()
        ctx.term()


def burst(config: Config, config_file: Path, folder: Path, count: int) -> dict:
    out = folder / "burst.mcap"
    recorder = start_recorder(config_file, out, "--topics", r"^sys\.heartbeat$", "--no-logs", "--force")
    wait_for_records(out)  # the stack's own heartbeats show it is connected
    start, rate = asyncio.run(publish_burst(config, count, BURST_RATE * 1.2, out))
    busy_s = wait_idle(recorder.pid) - start  # the recorder has written what was queued for it
    code, _ = stop_recorder(recorder)
    seqs = _beats(out, BURST_SOURCE)
    missing = sorted(set(range(1, count + 1)) - set(seqs))
    return {
        "sent": count,
        "rate": rate,
        "recorded": len(seqs),
        "missing": len(missing),
        "missing_range": (missing[0], missing[-1]) if missing else None,
        "busy_s": busy_s,
        "exit": code,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (/proc/PID/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(pid: int, window_s: float = 0.5, busy_share: float = 0.1, timeout: float = 120.0) -> float:
    """Until process ``pid`` uses less than ``busy_share`` of a core over ``window_s``; returns when it
    was last busy (monotonic)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = cpu_seconds(pid)
        time.sleep(window_s)
        if cpu_seconds(pid) - before < busy_share * window_s:
            return time.monotonic() - window_s
    raise TimeoutError(f"the recorder was still busy after {timeout} s")


def kills(config_file: Path, folder: Path, n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        path = folder / f"killed-{i}.mcap"
        recorder = start_recorder(config_file, path, "--camera", "--force")
        wait_for_records(path)
        time.sleep(rng.uniform(3.0, 8.0))
        killed_at = time.monotonic_ns()
        stop_recorder(recorder, signal.SIGKILL)
        rec = Recording(path, warn=False)
        last = max((r.recv_ns for r in rec), default=None)
        lost_s = (killed_at - last) / 1e9 if last is not None else float("nan")
        tail = rec.tail
        out.append({"lost_s": lost_s, "good": rec.good_bytes, "tail": str(tail) if tail else "none"})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the recorded session")
    parser.add_argument("--burst", type=int, default=50_000, help="messages in the burst")
    parser.add_argument("--kills", type=int, default=5, help="recorders killed with SIGKILL")
    parser.add_argument("--speed", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--parts", default="session,burst,kill", help="which measurements, comma-separated (default: all)"
    )
    args = parser.parse_args(argv)
    parts = set(args.parts.split(","))
    with tempfile.TemporaryDirectory(prefix="sanzi-bench-") as runtime:
        base = config_module.load(None, overrides={"runtime": {"dir": runtime}})
        config = simrun.simulator_config(base, speed=args.speed, seed=args.seed)
        simrun.fresh_state(config)
        files = stack_module.prepare(config, command="bench")
        folder = Path(runtime) / "recordings"
        folder.mkdir()
        with stack_module.Stack(files) as stack:
            stack.wait_running(timeout=60)
            stack.wait_heartbeats(config, timeout=60)
            s = (
                session(config, files.config_file, folder, args.minutes, args.seed, args.speed)
                if "session" in parts
                else None
            )
            b = burst(config, files.config_file, folder, args.burst) if "burst" in parts else None
            k = kills(files.config_file, folder, args.kills, args.seed) if "kill" in parts else []
    print(
        f"sanzi recording benchmark: speed {args.speed:g}, camera {config.simcam.fps:g} fps, seed {args.seed}"
    )
    print(f"chunks: zstd, closed at {CHUNK_BYTES / 2**20:g} MiB or {FLUSH_INTERVAL_S:g} s")
    print()
    if s is not None:
        print_session(s)
    if b is not None:
        print_burst(b)
    print_kills(k)
    return 0


def print_session(s: dict) -> None:
    print(
        f"session   {s['minutes']:.1f} min, {s['tasks']} tasks played, {s['records']} bus messages, "
        f"{s['images']} camera images ({s['fps']:.1f}/s)"
    )
    print(f"          {s['bytes'] / MB:.1f} MB: {s['mb_per_min']:.1f} MB per minute")
    print(f"          recorder CPU {s['cpu_share'] * 100:.1f}% of one core (exit {s['exit']})")


def print_burst(b: dict) -> None:
    print(f"burst     {b['sent']} messages published at {b['rate']:.0f}/s")
    print(
        f"          {b['recorded']} recorded, {b['missing']} missing {b['missing_range'] or ''}; done after "
        f"{b['busy_s']:.1f} s ({b['recorded'] / b['busy_s']:.0f} messages/s written)"
    )


def print_kills(k: list[dict]) -> None:
    lost = [x["lost_s"] for x in k]
    for i, x in enumerate(k):
        print(f"kill -9 {i + 1}: {x['lost_s']:.2f} s lost; read {x['good']} bytes; tail: {x['tail']}")
    if lost:
        print(f"kill -9   median {statistics.median(lost):.2f} s lost, worst {max(lost):.2f} s")


if __name__ == "__main__":
    sys.exit(main())
