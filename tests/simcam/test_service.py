"""The simcam process: the frame clock skips instead of falling behind; frames flow over a real bus."""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
import zmq.asyncio

from messages import CameraFrame, WorldState
from services.bus.client import Publisher, Subscriber
from services.simcam import world_from_board
from services.simcam.core import FrameClock, FrameMaker, frame_to_image
from services.simcam.service import SimCamService
from tests.inprocess import bus_sockets, in_process_bus, running

REPO = Path(__file__).resolve().parents[2]
DEADLINE_S = 10.0
#: after a bus restart, with simcam heard again and nothing published on sim.world: this many frame
#: periods (at 20 fps) in which a camera that forgot the restart would publish pictures of the past.
QUIET_FRAMES = 10
#: the frame id of the test's own probe, sent through simcam's frame socket
PROBE_ID = 10**9


def test_clock_keeps_its_rate_when_on_time() -> None:
    clock = FrameClock(0.1, start_s=100.0)
    assert clock.next_delay(100.03) == pytest.approx(0.07)
    assert clock.next_delay(100.12) == pytest.approx(0.08)  # tick 2 at 100.2
    assert clock.skipped == 0 and clock.tick == 2


def test_clock_skips_ticks_it_overran() -> None:
    clock = FrameClock(0.1, start_s=0.0)
    # the frame of tick 0 took 0.35 s: ticks 1, 2 and 3 are gone, the next is tick 4 at 0.4
    assert clock.next_delay(0.35) == pytest.approx(0.05)
    assert clock.tick == 4 and clock.skipped == 3
    # exactly on a tick boundary: that tick is past too
    assert clock.next_delay(0.5) == pytest.approx(0.1)
    assert clock.tick == 6 and clock.skipped == 4
    with pytest.raises(ValueError):
        FrameClock(0.0, 0.0)


def test_frame_maker_is_reproducible(config: Any) -> None:
    w = world_from_board("X...O....", 12)
    a, b = FrameMaker.from_config(config), FrameMaker.from_config(config)
    fa = [a.frame(w, capture_ns=1) for _ in range(3)]
    fb = [b.frame(w, capture_ns=1) for _ in range(3)]
    assert [f.frame_id for f in fa] == [1, 2, 3]
    assert fa == fb
    assert fa[0].data != fa[1].data  # each frame its own noise
    img = frame_to_image(fa[0])
    assert img.shape == (480, 640, 3)
    with pytest.raises(ValueError):
        frame_to_image(msgspec.structs.replace(fa[0], data=b"short"))
    with pytest.raises(ValueError):
        frame_to_image(msgspec.structs.replace(fa[0], encoding="jpeg"))


async def _frames_while_publishing(
    pub: Publisher, sub: Subscriber, world: WorldState, count: int
) -> list[Any]:
    """Publish ``world`` on sim.world (10 Hz, like simworld) until ``count`` frames arrived."""
    got: list[Any] = []
    deadline = time.monotonic() + DEADLINE_S
    next_world = 0.0
    while len(got) < count and time.monotonic() < deadline:
        if time.monotonic() >= next_world:
            await pub.publish("sim.world", world)
            next_world = time.monotonic() + 0.1
        env = await sub.recv(timeout=0.05)
        if env is not None and env.topic == "camera.frame":
            got.append(env)
    assert len(got) == count, f"only {len(got)} frames arrived"
    return got


async def test_frames_flow_over_the_bus(bus: Any) -> None:
    config = msgspec.structs.replace(bus, simcam=msgspec.structs.replace(bus.simcam, fps=20.0))
    service = SimCamService(config)
    async with running(service) as (task,), bus_sockets(config.bus) as sockets:
        pub = sockets.publisher()
        sub = sockets.subscriber(["camera.frame"])
        first = world_from_board("X........", 10)
        got = await _frames_while_publishing(pub, sub, first, 3)
        frames: list[CameraFrame] = [e.message for e in got]
        assert all(f.encoding == "bgr8" and (f.width, f.height) == (640, 640 * 3 // 4) for f in frames)
        assert all(len(f.data) == 640 * 480 * 3 for f in frames)
        ids = [f.frame_id for f in frames]
        assert ids == sorted(ids) and len(set(ids)) == 3
        assert all(b.capture_ns > a.capture_ns for a, b in itertools.pairwise(frames))
        # the camera follows the world: a new board shows on later frames
        second = world_from_board("X...O...O", 10)
        later = await _frames_while_publishing(pub, sub, second, 8)
        last = frame_to_image(later[-1].message).astype(int)
        assert np.abs(last - frame_to_image(frames[-1]).astype(int)).max() > 100
        # a world that cannot be drawn: the camera keeps showing the last good one and says why
        bad = msgspec.structs.replace(second, board_angle_deg=float("nan"))
        kept = await _frames_while_publishing(pub, sub, bad, 3)
        diff = frame_to_image(kept[-1].message).astype(int) - last
        assert np.abs(diff).mean() < 4.5 and np.abs(diff).max() < 60  # the same picture, its own noise
        assert "board_angle_deg" in service.last_error
        ids = [e.message.frame_id for e in later + kept]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert not task.done()


def _nearer(image: np.ndarray, a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``image`` looks more like ``a`` than like ``b`` (mean absolute difference)."""
    return float(np.abs(image - a).mean()) < float(np.abs(image - b).mean())


async def test_after_a_bus_restart_no_frame_shows_the_world_from_before_it(config: Any) -> None:
    """A restarted bus loses what the world published while it was down (the person's piece put down):
    the camera publishes nothing until a world published after the break arrives, so no frame stamped
    after the restart shows the board from before it."""
    config = msgspec.structs.replace(config, simcam=msgspec.structs.replace(config.simcam, fps=20.0))
    service = SimCamService(config)
    before, after = world_from_board("X........", 10), world_from_board("X...O...O", 10)
    maker = FrameMaker.from_config(config)
    drawn_before = frame_to_image(maker.frame(before, capture_ns=1)).astype(int)
    drawn_after = frame_to_image(maker.frame(after, capture_ns=1)).astype(int)
    async with running(service) as (task,), bus_sockets(config.bus) as sockets:
        pub = sockets.publisher()
        frames = sockets.subscriber(["camera.frame"])
        with in_process_bus(config.bus):
            shown = await _frames_while_publishing(pub, frames, before, 3)
        with in_process_bus(config.bus):
            # simcam's frame socket is connected again once a probe sent through it arrives
            probe = msgspec.structs.replace(shown[-1].message, frame_id=PROBE_ID)
            deadline = time.monotonic() + DEADLINE_S
            while time.monotonic() < deadline:
                await service.pub.publish("camera.frame", probe)
                env = await frames.recv(timeout=0.05)
                if env is not None:
                    assert env.message.frame_id == PROBE_ID, "a frame of the world before the break"
                    break
            else:
                raise TimeoutError("simcam never reconnected")
            quiet_until = time.monotonic() + QUIET_FRAMES / config.simcam.fps
            while (left := quiet_until - time.monotonic()) > 0:
                env = await frames.recv(timeout=left)
                assert env is None or env.message.frame_id == PROBE_ID, (
                    "a frame of the world before the break"
                )
            assert service.held > 0
            got = await _frames_while_publishing(pub, frames, after, 3)
            images = [frame_to_image(e.message).astype(int) for e in got]
            assert all(_nearer(image, drawn_after, drawn_before) for image in images)
            assert not service.world_may_be_stale()
        assert not task.done()


async def test_process_publishes_frames_and_stops_on_sigterm(
    bus: Any, subprocess_env: dict[str, str]
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.simcam", "--set", "simcam.fps=15"],
        cwd=REPO,
        env=subprocess_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    ctx = zmq.asyncio.Context()
    pub = Publisher(ctx, bus.bus, "test")
    pub.open()
    sub = Subscriber(ctx, bus.bus, ["camera.frame"])
    try:
        got = await _frames_while_publishing(pub, sub, world_from_board("XO.......", -20), 2)
        assert got[0].header.source == "simcam"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stderr:
            proc.stderr.close()
        pub.close()
        sub.close()
        ctx.destroy(linger=0)
