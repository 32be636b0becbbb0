"""The board remembered across a restart of vision (services/vision/memory.py): the file, the tracker's
probation, and the service that writes it and starts from it.

What it is for: a board full of large pieces that a cold search does not find (the sealed tuning set
holds such frames) is confirmed on its lines at the remembered pose by the restarted process, on its
first frame, numbered as before. What it must not do: read anything at a remembered pose that no frame
has confirmed, or hold back a board found elsewhere.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import msgspec
import numpy as np
import pytest

from messages import BoardObservation, BoardPose
from services.vision import detector as D
from services.vision.memory import (
    BoardMemory,
    UnreadableMemory,
    decode_memory,
    encode_memory,
    load_memory,
    save_memory,
)
from services.vision.service import VisionService
from services.vision.sources import Frame, FrameSource
from services.vision.tracker import PoseTracker, StabilityFilter, VisionCore
from tests.inprocess import bus_sockets, first_of, running

from .synth import Scene, draw
from .test_sweep import truth_as_read
from .tuning_frames import tuning_sample

DEADLINE_S = 30.0
SIZE = (640, 480)
EMPTY = Scene(center=(320.0, 240.0), angle_deg=12.0, board=".........")
GAME = Scene(center=(320.0, 240.0), angle_deg=12.0, board="X...O...X")


class _Log:
    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def warning(self, event: str, **kw: Any) -> None:
        self.lines.append(("warning", event, kw))

    def info(self, event: str, **kw: Any) -> None:
        self.lines.append(("info", event, kw))


def _memory_of(image: np.ndarray) -> BoardMemory:
    """What a tracker that read ``image`` on a clear frame remembers."""
    tracker = PoseTracker()
    det = tracker.process(image)
    assert det.found and not det.occluded
    memory = tracker.memory(SIZE, saved_at=1.0)
    assert memory is not None
    return memory


# -- the file ----------------------------------------------------------------------------------------


def test_a_memory_is_written_and_read_back_whole(tmp_path: Path) -> None:
    memory = _memory_of(draw(EMPTY, seed=1))
    path = tmp_path / "state" / "vision-board.json"
    save_memory(path, memory)
    assert load_memory(path, _Log()) == memory
    assert [p.name for p in path.parent.iterdir()] == ["vision-board.json"]  # no temporary left
    assert memory.same_board(msgspec.structs.replace(memory, saved_at=99.0))
    assert not memory.same_board(msgspec.structs.replace(memory, half_width=memory.half_width * 2))


def test_no_file_is_no_memory(tmp_path: Path) -> None:
    log = _Log()
    assert load_memory(tmp_path / "missing.json", log) is None
    assert log.lines == []


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{not json",
        b'{"version": 1}',
        b"[1, 2, 3]",
        b"\x00\xff" * 40,
    ],
)
def test_an_unreadable_memory_is_moved_aside_with_a_warning(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "vision-board.json"
    path.write_bytes(body)
    log = _Log()
    assert load_memory(path, log) is None
    assert not path.exists()
    aside = list(tmp_path.glob("vision-board.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == body  # kept for whoever wants to look
    assert [(level, event) for level, event, _ in log.lines] == [
        ("warning", "remembered board unreadable; starting afresh")
    ]


def test_a_memory_of_another_version_or_without_its_geometry_is_refused() -> None:
    memory = _memory_of(draw(EMPTY, seed=1))
    with pytest.raises(UnreadableMemory, match="version"):
        decode_memory(encode_memory(msgspec.structs.replace(memory, version=99)))
    flat = msgspec.structs.replace(memory, pose=msgspec.structs.replace(memory.pose, homography=()))
    with pytest.raises(UnreadableMemory, match="homography"):
        decode_memory(encode_memory(flat))
    with pytest.raises(UnreadableMemory, match="line width"):
        decode_memory(encode_memory(msgspec.structs.replace(memory, half_width=0.0)))
    singular = msgspec.structs.replace(
        memory, pose=msgspec.structs.replace(memory.pose, homography=(0.0,) * 9)
    )
    with pytest.raises(UnreadableMemory, match="maps no board"):
        decode_memory(encode_memory(singular))
    with pytest.raises(UnreadableMemory, match="frame size"):
        decode_memory(encode_memory(msgspec.structs.replace(memory, frame_size=(0, 480))))


def test_a_memory_that_cannot_be_written_raises_and_leaves_the_old_one(tmp_path: Path) -> None:
    memory = _memory_of(draw(EMPTY, seed=1))
    path = tmp_path / "vision-board.json"
    save_memory(path, memory)
    (tmp_path / ".vision-board.json.tmp").mkdir()  # the temporary file's place is taken
    with pytest.raises(OSError):
        save_memory(path, msgspec.structs.replace(memory, saved_at=2.0))
    assert load_memory(path, _Log()) == memory


# -- the tracker's probation -------------------------------------------------------------------------


def _sample_pose(sample: Any) -> BoardPose:
    """The pose the sample's own truth gives (centre, angle, pitch; no perspective): a board as a
    tracker following it since it was empty would have remembered it, to within a pixel or two."""
    a = math.radians(sample.angle_deg)
    ux = np.array([math.cos(a), -math.sin(a)]) * sample.pitch_px
    uy = np.array([math.sin(a), math.cos(a)]) * sample.pitch_px
    c = np.array(sample.centre_px, float)
    corners = np.array([c - 1.5 * (ux + uy), c + 1.5 * (ux - uy), c + 1.5 * (ux + uy), c - 1.5 * (ux - uy)])
    canonical = np.array([[0, 0], [3, 0], [3, 3], [0, 3]], np.float32)
    return D.pose_from_homography(cv2.getPerspectiveTransform(corners.astype(np.float32), canonical))


def test_a_full_board_the_cold_search_misses_is_read_on_the_first_frame_after_a_restart() -> None:
    """Sealed 3/162: a blue board full of large pieces, dark engraved lines: the cold search finds no
    board. Remembered (its pose, dark lines of the detector's default width), it is confirmed on its
    lines and read right on the restarted tracker's first frame."""
    sample = tuning_sample("sealed", 3, 162)
    assert not sample.occluded and "." not in sample.board
    assert not D.detect(sample.image).found
    memory = BoardMemory(
        pose=_sample_pose(sample),
        polarity="dark-lines",
        half_width=0.04,
        frame_size=(sample.image.shape[1], sample.image.shape[0]),
    )
    tracker = PoseTracker()
    tracker.resume(memory)
    assert tracker.on_probation and tracker.memory(memory.frame_size) is None  # nothing confirmed yet
    det = tracker.process(sample.image)
    assert det.pose_source == "detected" and det.extra.get("tracked") == 1.0
    assert not det.occluded and det.board == truth_as_read(det, sample.board, sample.angle_deg)
    assert not tracker.on_probation and tracker.memory(memory.frame_size) is not None


def test_a_board_standing_at_45_degrees_keeps_its_numbering_across_a_restart() -> None:
    """Numbered one way before the restart; a cold search numbers it the other way; the restarted
    tracker keeps the remembered numbering (the referee's squares stay the same squares)."""
    before = Scene(center=(320.0, 240.0), angle_deg=44.0, board="XO.......")
    tracker = PoseTracker()
    first = tracker.process(draw(before, seed=1))
    assert first.board == "XO......."
    memory = tracker.memory(SIZE)
    assert memory is not None
    after = draw(Scene(center=(320.0, 240.0), angle_deg=46.5, board="XO......."), seed=2)
    assert D.detect(after).board != "XO......."  # alone, the search numbers it from the other corner
    restarted = PoseTracker()
    restarted.resume(memory)
    det = restarted.process(after)
    assert det.board == "XO......." and det.pose is not None and det.pose.angle_deg > 45.0


def test_nothing_is_read_at_a_remembered_pose_no_frame_confirms() -> None:
    """The board was taken away while vision was down: every frame is searched afresh, none is read at
    the remembered pose, none can join a stability window; the memory stays on probation."""
    memory = _memory_of(draw(GAME, seed=1))
    tracker = PoseTracker()
    tracker.resume(memory)
    table = draw(Scene(center=(2000.0, 2000.0), board="........."), seed=3)  # the board out of view
    for _ in range(20):
        det = tracker.process(table)
        assert not det.found and det.pose_source == "none" and det.squares == ()
        assert not StabilityFilter.usable(det.found, det.board, det.occluded, det.problem)
    assert tracker.on_probation and tracker.pose == memory.pose


def test_a_board_found_elsewhere_replaces_the_remembered_one_as_a_moved_board_does() -> None:
    """The board was moved while vision was down: the frames that find it elsewhere wait as a jump (and
    show the board found, not the remembered pose), and after ``jump_frames`` clear frames it is taken."""
    memory = _memory_of(draw(GAME, seed=1))
    moved = Scene(center=(420.0, 200.0), angle_deg=-20.0, board="X...O...X")
    tracker = PoseTracker(jump_frames=3)
    tracker.resume(memory)
    for i in range(2):
        det = tracker.process(draw(moved, seed=10 + i))
        assert det.problem == "jump" and det.pose is not None
        assert abs(det.pose.center_px.x - 420.0) < 3.0  # the board found, not the remembered pose
        assert not StabilityFilter.usable(det.found, det.board, det.occluded, det.problem)
    det = tracker.process(draw(moved, seed=12))
    assert det.problem != "jump" and det.board == truth_as_read(det, moved.board, moved.angle_deg)
    assert not tracker.on_probation and tracker.pose == det.pose


def test_a_restarted_core_is_stable_on_the_remembered_board_after_a_window() -> None:
    memory = _memory_of(draw(GAME, seed=1))
    core = VisionCore(stable_frames=3)
    core.tracker.resume(memory)
    steps = [core.process(draw(GAME, seed=20 + i), i) for i in range(3)]
    assert [s.observation.stable for s in steps] == [False, False, True]
    assert steps[-1].changed and steps[-1].observation.board == "X...O...X"
    assert steps[0].detection.extra.get("tracked") == 1.0  # confirmed on its lines, no search


# -- the service ---------------------------------------------------------------------------------------


class _Frames(FrameSource):
    """A camera showing one picture (fresh noise each frame), at 30 frames a second of capture time."""

    name = "frames"

    def __init__(self, scene: Scene) -> None:
        self.scene, self.frame_id = scene, 0

    async def read(self) -> Frame | None:
        await asyncio.sleep(0.005)  # (a camera's wait: the service's other tasks run)
        self.frame_id += 1
        image = draw(self.scene, seed=self.frame_id % 7)
        return Frame(image, self.frame_id, self.frame_id * 33_000_000, self.name)


async def _until_stable(
    config: Any, source: FrameSource, written: int = 1
) -> tuple[VisionService, BoardObservation]:
    """Run a vision service on ``source`` until it published a stable board and wrote its memory
    ``written`` times (the write follows the publication); the service and the last stable board."""
    vision = VisionService(config, source=source)
    async with running(vision) as (task,), bus_sockets(config.bus) as sockets:
        sub = sockets.subscriber(["vision.stable"])
        deadline = time.monotonic() + DEADLINE_S
        stable = None
        while time.monotonic() < deadline:
            env = await sub.recv(timeout=0.1)
            if env is not None and isinstance(env.message, BoardObservation):
                stable = env.message
            if stable is not None and vision.memories_written >= written:
                assert not task.done()
                return vision, stable
        raise AssertionError(f"no stable board ({stable}) or no memory written ({vision.memories_written})")


def _fast(bus: Any) -> Any:
    return msgspec.structs.replace(bus, vision=msgspec.structs.replace(bus.vision, stable_frames=3))


async def test_the_service_remembers_the_board_and_a_restarted_one_starts_from_it(bus: Any) -> None:
    config = _fast(bus)
    path = Path(config.vision.memory_file)
    first, stable = await _until_stable(config, _Frames(GAME))
    assert stable.board == "X...O...X"
    assert first.resumed is None  # nothing to start from
    written = load_memory(path, _Log())
    assert written is not None and written.same_board(first.remembered)
    assert written.frame_size == SIZE

    again, stable = await _until_stable(config, _Frames(GAME), written=0)  # a new process, same state
    assert stable.board == "X...O...X"
    assert again.resumed == written


async def test_a_damaged_memory_does_not_stop_the_service(bus: Any) -> None:
    config = _fast(bus)
    path = Path(config.vision.memory_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"version": 1, "pose": ')  # torn by hand (the writer never leaves it so)
    vision, stable = await _until_stable(config, _Frames(GAME))
    assert stable.board == "X...O...X" and vision.resumed is None
    assert list(path.parent.glob("vision-board.json.corrupt-*"))
    assert load_memory(path, _Log()) == vision.remembered


async def test_a_memory_of_another_camera_size_is_not_used(bus: Any) -> None:
    config = _fast(bus)
    memory = _memory_of(draw(GAME, seed=1))
    save_memory(Path(config.vision.memory_file), msgspec.structs.replace(memory, frame_size=(1280, 720)))
    vision, stable = await _until_stable(config, _Frames(GAME))
    assert stable.board == "X...O...X"
    assert vision.resumed is None
    assert vision.remembered is not None and vision.remembered.frame_size == SIZE


async def test_an_unwritable_memory_is_reported_and_the_game_goes_on(bus: Any, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    vision_config = msgspec.structs.replace(
        bus.vision, stable_frames=3, memory_file=str(blocked / "vision-board.json")
    )
    config = msgspec.structs.replace(bus, vision=vision_config)
    vision = VisionService(config, source=_Frames(GAME))
    async with running(vision) as (task,), bus_sockets(config.bus) as sockets:
        sub = sockets.subscriber(["vision.stable"])
        stable = await first_of(sub, BoardObservation, DEADLINE_S)
        assert stable is not None and stable.board == "X...O...X"
        # The write is tried beside the frames after the publication: it fails, the service reads on.
        deadline = time.monotonic() + DEADLINE_S
        while vision.memory_errors == 0 and time.monotonic() < deadline:
            await sub.recv(timeout=0.05)
        processed = vision.processed
        while vision.processed < processed + 2 and time.monotonic() < deadline:
            await sub.recv(timeout=0.05)
        assert vision.memory_errors >= 1 and vision.processed >= processed + 2
        assert vision.remembered is None and not task.done()


async def test_a_remembered_board_not_yet_seen_is_shown_in_the_health_detail(bus: Any) -> None:
    """The board was taken away while vision was down: the service runs, says what it waits for, and
    publishes no stable board."""
    config = _fast(bus)
    save_memory(Path(config.vision.memory_file), _memory_of(draw(GAME, seed=1)))
    vision = VisionService(config, source=_Frames(Scene(center=(2000.0, 2000.0))))
    async with running(vision) as (task,), bus_sockets(config.bus) as sockets:
        sub = sockets.subscriber(["vision.stable"])
        deadline = time.monotonic() + DEADLINE_S
        while "remembered" not in vision.detail and time.monotonic() < deadline:
            assert await sub.recv(timeout=0.1) is None  # no stable board, ever
        assert "not yet seen" in vision.detail and vision.resumed is not None
        assert vision.core.tracker.on_probation and not task.done()


async def test_a_slow_write_does_not_hold_up_the_frames(bus: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An fsync on an SD card can take a tenth of a second: the frames after a new stable board (the
    ones a button press is judged on) are read while the memory is being written."""
    from services.vision import service as vision_service

    disk = threading.Event()

    def slow_save(path: Path, memory: BoardMemory) -> None:
        disk.wait(DEADLINE_S)
        save_memory(path, memory)

    monkeypatch.setattr(vision_service, "save_memory", slow_save)
    config = _fast(bus)
    vision = VisionService(config, source=_Frames(GAME))
    async with running(vision) as (task,), bus_sockets(config.bus) as sockets:
        sub = sockets.subscriber(["vision.stable"])
        assert await first_of(sub, BoardObservation, DEADLINE_S) is not None
        processed, deadline = vision.processed, time.monotonic() + DEADLINE_S
        while vision.processed < processed + 5 and time.monotonic() < deadline:
            await sub.recv(timeout=0.05)
        assert vision.processed >= processed + 5 and vision.memories_written == 0  # read on, not written
        disk.set()
        while vision.memories_written == 0 and time.monotonic() < deadline:
            await sub.recv(timeout=0.05)
        assert vision.memories_written == 1 and not task.done()
    assert load_memory(Path(config.vision.memory_file), _Log()) == vision.remembered
