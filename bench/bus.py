"""Bus benchmark: one-way latency of small messages through the forwarder and directly (PUB -> SUB
without a forwarder), messages per second, and 640x480 BGR frames per second without backlog.

Run from the repository root: ``python bench/bus.py`` (or ``python -m bench.bus``). Everything runs in
one process on ipc:// sockets in a private temporary folder; the direct path is the baseline measured in
the same run, so the ratio says what the forwarder hop costs on this machine today.

Targets (issue 2): median hop through the forwarder under 0.3 ms, p99 under 2 ms, 640x480 frames at 60
per second or more without backlog.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import zmq

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import messages
from services.bus.forwarder import start_forwarders
from services.common import config as config_module

WARMUP = 200


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _connect_pair(
    ctx: zmq.Context, pub_endpoint: str, sub_endpoint: str, hwm: int
) -> tuple[zmq.Socket, zmq.Socket]:
    pub = ctx.socket(zmq.PUB)
    pub.sndhwm = hwm
    pub.connect(pub_endpoint) if pub_endpoint != sub_endpoint else pub.bind(pub_endpoint)
    sub = ctx.socket(zmq.SUB)
    sub.rcvhwm = hwm
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(sub_endpoint)
    # Connect: publish probes until one arrives.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pub.send_multipart([b"probe", b"", b""])
        if sub.poll(20):
            while sub.poll(20):
                sub.recv_multipart()
            return pub, sub
    raise TimeoutError("sockets never connected")


def latency(pub: zmq.Socket, sub: zmq.Socket, count: int) -> list[float]:
    """One-way latency in microseconds of a Heartbeat in its envelope, encode and decode included."""
    samples = []
    for i in range(count + WARMUP):
        message = messages.Heartbeat(process="bench", pid=1, seq=i)
        start = time.perf_counter_ns()
        pub.send_multipart(
            messages.encode("sys.heartbeat", messages.make_header(message, "bench", i), message)
        )
        messages.decode(sub.recv_multipart())
        if i >= WARMUP:
            samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


def throughput(pub: zmq.Socket, sub: zmq.Socket, count: int) -> float:
    """Messages per second, a sender thread and this thread receiving and decoding."""
    message = messages.Heartbeat(process="bench", pid=1, seq=0)
    frames = messages.encode("sys.heartbeat", messages.make_header(message, "bench", 0), message)

    def send() -> None:
        for _ in range(count):
            pub.send_multipart(frames)

    sender = threading.Thread(target=send)
    start = time.perf_counter()
    sender.start()
    for _ in range(count):
        messages.decode(sub.recv_multipart())
    elapsed = time.perf_counter() - start
    sender.join()
    return count / elapsed


def frames(pub: zmq.Socket, sub: zmq.Socket, seconds: float, fps: float) -> tuple[float, int, float]:
    """Publish 640x480 BGR frames at ``fps`` for ``seconds``; the reader decodes each and keeps the newest.
    Returns (frames per second received, largest frame-id lag seen, median latency ms)."""
    data = bytes(640 * 480 * 3)
    stop = threading.Event()
    sent = [0]

    def send() -> None:
        period = 1.0 / fps if fps > 0 else 0.0
        next_at = time.perf_counter()
        while not stop.is_set():
            sent[0] += 1
            msg = messages.CameraFrame(
                frame_id=sent[0], width=640, height=480, data=data, capture_ns=time.monotonic_ns()
            )
            pub.send_multipart(
                messages.encode("camera.frame", messages.make_header(msg, "bench", sent[0]), msg)
            )
            if period:
                next_at += period
                delay = next_at - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)

    sender = threading.Thread(target=send)
    received = 0
    max_lag = 0
    lat: list[float] = []
    sender.start()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if not sub.poll(100):
            continue
        raw = sub.recv_multipart()
        while sub.poll(0):  # newest only
            raw = sub.recv_multipart()
        env = messages.decode(raw)
        received += 1
        lat.append((time.monotonic_ns() - env.message.capture_ns) / 1e6)
        max_lag = max(max_lag, sent[0] - env.message.frame_id)
    elapsed = time.perf_counter() - start
    stop.set()
    sender.join()
    return received / elapsed, max_lag, statistics.median(lat) if lat else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=5000, help="latency samples per path")
    parser.add_argument("--seconds", type=float, default=2.0, help="duration of each frame test")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sanzi-bench-") as tmp:
        cfg = config_module.load(None, overrides={"runtime": {"dir": tmp}})
        ctx = zmq.Context()
        forwarders = start_forwarders(ctx, cfg.bus)
        try:
            via_pub, via_sub = _connect_pair(ctx, cfg.bus.pub, cfg.bus.sub, cfg.bus.event_hwm)
            direct = f"ipc://{tmp}/direct"
            dir_pub, dir_sub = _connect_pair(ctx, direct, direct, cfg.bus.event_hwm)
            lat_fwd = latency(via_pub, via_sub, args.count)
            lat_dir = latency(dir_pub, dir_sub, args.count)
            tput_fwd = throughput(via_pub, via_sub, args.count * 4)
            tput_dir = throughput(dir_pub, dir_sub, args.count * 4)
            fr_pub, fr_sub = _connect_pair(ctx, cfg.bus.frame_pub, cfg.bus.frame_sub, cfg.bus.frame_hwm)
            fps30, lag30, flat30 = frames(fr_pub, fr_sub, args.seconds, 30.0)
            fps60, lag60, flat60 = frames(fr_pub, fr_sub, args.seconds, 60.0)
            fps_max, lag_max, flat_max = frames(fr_pub, fr_sub, args.seconds, 0.0)
            for s in (via_pub, via_sub, dir_pub, dir_sub, fr_pub, fr_sub):
                s.close(linger=0)
        finally:
            for fwd in forwarders:
                fwd.stop()
            ctx.term()

    med_f, med_d = statistics.median(lat_fwd), statistics.median(lat_dir)
    p99_f, p99_d = percentile(lat_fwd, 0.99), percentile(lat_dir, 0.99)
    print("sanzi bus benchmark (one process, ipc://, Heartbeat in its envelope, encode+decode included)")
    print()
    print(f"{'measure':<44}{'forwarder':>12}{'direct':>12}{'ratio':>8}")
    print(
        f"{'one-way latency median (ms)':<44}{med_f / 1000:>12.4f}{med_d / 1000:>12.4f}{med_f / med_d:>8.2f}"
    )
    print(f"{'one-way latency p99 (ms)':<44}{p99_f / 1000:>12.4f}{p99_d / 1000:>12.4f}{p99_f / p99_d:>8.2f}")
    print(f"{'small messages per second':<44}{tput_fwd:>12.0f}{tput_dir:>12.0f}{tput_fwd / tput_dir:>8.2f}")
    print()
    print(
        f"{'640x480 BGR frames (frame forwarder, HWM 2)':<44}{'recv fps':>12}{'ids behind':>12}{'lat ms':>8}"
    )
    print(f"{'  offered at 30 fps':<44}{fps30:>12.1f}{lag30:>12d}{flat30:>8.2f}")
    print(f"{'  offered at 60 fps':<44}{fps60:>12.1f}{lag60:>12d}{flat60:>8.2f}")
    print(f"{'  offered as fast as possible':<44}{fps_max:>12.1f}{lag_max:>12d}{flat_max:>8.2f}")
    print()
    ok = med_f < 300 and p99_f < 2000 and fps60 >= 55 and lag60 <= 4
    print(f"targets (median < 0.3 ms, p99 < 2 ms, >= 60 fps without backlog): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
