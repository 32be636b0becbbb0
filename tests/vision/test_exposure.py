"""Exposure metered on the board: a plate at the camera's ceiling hides white pieces; the detector says
so ("overexposed"), the stability filter waits, vision lowers the exposure until the plate shows its
pieces again. Rendered by the simulated camera; the loop closed in process and over a real bus."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
import numpy as np
import pytest

from messages import BoardObservation, CameraControl, WorldState
from services.common.config import load
from services.simcam.camera import CameraModel
from services.simcam.core import FrameMaker
from services.simcam.service import SimCamService
from services.simcam.style import RenderStyle
from services.simcam.world import world_from_board
from services.vision.detector import Detection, detect
from services.vision.exposure import MIN_FACTOR, SETTLE_FRAMES, STEP_DOWN, ExposureControl
from services.vision.service import VisionService
from services.vision.sources import BusSource, Frame, FrameSource, OpenCVSource, SourceError, VideoFileSource
from services.vision.tracker import StabilityFilter, VisionCore
from tests.inprocess import bus_sockets, first_of, running

#: a white plate with dark lines on a dark table: the look a camera metering the whole image clips.
WHITE_PLATE = (225, 228, 230)
DARK_LINES = (40, 40, 40)
#: white pieces and black ones, some squares bare.
BOARD = "O.X.O.XO."
#: the exposure at which the simulator's white plate and white pieces both clip (64 of 81 white pieces
#: read bare over 40 frames at this exposure; none at 1.4).
OVEREXPOSED = 1.7
DEADLINE_S = 20.0


def _style(exposure: float) -> RenderStyle:
    return RenderStyle.preset("default").replace(
        board_colour=WHITE_PLATE, line_colour=DARK_LINES, table_colour=(50, 55, 60), exposure=exposure
    )


def _world(board: str = BOARD) -> WorldState:
    return world_from_board(board, 12.0, board_colour=WHITE_PLATE, line_colour=DARK_LINES)


def _maker(exposure: float) -> FrameMaker:
    config = load(None)
    camera = CameraModel.from_config(config.simcam, config.table)
    return FrameMaker(camera, config.table, _style(exposure), seed=7)


def _count(board: str, piece: str) -> int:
    return board.count(piece)


def test_a_clipped_plate_is_said_overexposed_and_a_normal_one_is_not() -> None:
    world = _world()
    bright = detect(_maker(OVEREXPOSED).image(world))
    assert bright.found
    assert bright.extra["plate_top"] >= 250.0 and bright.extra["clipped_bare"] > 0
    assert bright.problem == "overexposed"
    normal = detect(_maker(1.0).image(world))
    assert normal.found and normal.problem == "" and normal.extra["clipped_bare"] == 0
    assert normal.extra["plate_top"] < 250.0
    assert sorted(normal.board) == sorted(BOARD)


def test_the_stability_filter_waits_out_overexposed_frames() -> None:
    f = StabilityFilter(2)
    assert not f.usable(True, BOARD, False, "overexposed")
    assert f.usable(True, BOARD, False, "")
    for _ in range(5):
        assert not f.update(True, BOARD, False, "overexposed").stable
    f.update(True, BOARD, False)
    assert f.update(True, BOARD, False).stable


def _det(top: float | None, found: bool = True, problem: str = "") -> Detection:
    return Detection(found=found, extra={} if top is None else {"plate_top": top}, problem=problem)


def test_the_exposure_steps_down_while_clipped_settles_between_and_stops_at_its_floor() -> None:
    control = ExposureControl()
    asked = [control.update(_det(255.0)) for _ in range(40)]
    factors = [a for a in asked if a is not None]
    # one step, then SETTLE_FRAMES frames without a change, and so on down to the floor
    assert asked[0] == pytest.approx(STEP_DOWN)
    assert asked[1 : 1 + SETTLE_FRAMES] == [None] * SETTLE_FRAMES
    assert factors == sorted(factors, reverse=True) and factors[-1] == pytest.approx(MIN_FACTOR)
    assert not control.can_lower
    # no board, or no plate measured: nothing changes
    idle = ExposureControl()
    assert idle.update(_det(255.0, found=False)) is None and idle.update(_det(None)) is None
    assert idle.factor == 1.0 and idle.can_lower


def test_the_exposure_rises_again_when_the_plate_darkens_but_never_above_the_configured() -> None:
    control = ExposureControl(factor=0.5)
    raised = control.update(_det(120.0))
    assert raised is not None and 0.5 < raised <= 0.5 * 1.25
    for _ in range(60):
        control.update(_det(120.0))
    assert control.factor == 1.0
    assert ExposureControl().update(_det(100.0)) is None  # at the configured exposure already
    # a hand over the board is no plate: lowered for a clipped plate, the exposure is not raised for it
    # (it would clip the plate again when the hand leaves)
    for problem in ("occluded", "low-confidence", "prior"):
        assert ExposureControl(factor=0.5).update(_det(120.0, problem=problem)) is None
    assert ExposureControl(factor=0.6).update(_det(220.0)) is None  # within the band: held


def test_a_source_that_cannot_change_its_exposure_stops_the_waiting() -> None:
    control = ExposureControl(controllable=False)
    assert control.update(_det(255.0)) is None and not control.can_lower


def _closed_loop(core: VisionCore, maker: FrameMaker, world: WorldState, frames: int) -> list[Any]:
    """``frames`` frames of ``world`` through ``core``, each exposure it asks for applied at once."""
    results = []
    for i in range(frames):
        result = core.process(maker.image(world), i + 1, capture_ns=(i + 1) * 33_000_000)
        if result.exposure is not None:
            maker.set_exposure(result.exposure)
        results.append(result)
    return results


def _truth_as_read(result: Any, board: str, angle_deg: float) -> str:
    from tests.vision.test_sweep import truth_as_read

    return truth_as_read(result.detection, board, angle_deg)


def test_the_closed_loop_lowers_the_exposure_and_reads_every_white_piece() -> None:
    world = _world()
    maker = _maker(OVEREXPOSED)
    results = _closed_loop(VisionCore(stable_frames=3), maker, world, 30)
    stable = [r for r in results if r.observation.stable]
    assert stable, "the board never became stable"
    truth = _truth_as_read(stable[0], BOARD, world.board_angle_deg)
    # no stable reading ever lacked a white piece: the clipped frames were waited out
    assert all(r.observation.board == truth for r in stable)
    first_stable = results.index(stable[0])
    assert results[0].detection.problem == "overexposed"
    assert maker.renderer.style.exposure < OVEREXPOSED * 0.85  # lowered
    assert first_stable < 20


def test_a_hand_over_the_metered_board_does_not_undo_the_exposure() -> None:
    """Lowered for a clipped plate, the exposure stays down while a hand covers the board (its plate
    level is the hand's), so the board is stable again as soon as the hand leaves, without a new descent."""
    from messages import HandState

    world = _world()
    maker = _maker(OVEREXPOSED)
    core = VisionCore(stable_frames=3)
    settled = _closed_loop(core, maker, world, 20)
    assert settled[-1].observation.stable
    factor = core.exposure.factor
    hand = msgspec.structs.replace(world, hand=HandState(present=True, x_mm=200.0, y_mm=150.0))
    covered = _closed_loop(core, maker, hand, 12)
    assert not any(r.observation.stable for r in covered)
    assert core.exposure.factor == factor and all(r.exposure is None for r in covered)
    after = _closed_loop(core, maker, world, 6)
    assert all(r.exposure is None for r in after)
    assert any(r.observation.stable for r in after[:4])


def test_without_metering_the_clipped_board_is_taken_without_its_white_pieces(rules_alone: None) -> None:
    # The failure the control is for (and the switch that turns it off): the same frames, read as they
    # come by the rules, become stable with white pieces missing.
    world = _world()
    results = _closed_loop(VisionCore(stable_frames=3, meter_on_board=False), _maker(OVEREXPOSED), world, 8)
    stable = [r for r in results if r.observation.stable]
    assert stable
    assert _count(stable[-1].observation.board, "O") < _count(BOARD, "O")


def test_without_metering_the_second_opinion_doubts_this_boards_missing_white_pieces() -> None:
    # The same frames read with the learned second opinion: here it doubts the white pieces the clipped
    # plate leaves bare, so no board without them is stable (the device waits, saying the frames are
    # overexposed). Not on every such board: in bench/vision.py's fixed-exposure runs most boards are
    # still taken with white pieces missing; metering on the board is what reads them.
    world = _world()
    results = _closed_loop(VisionCore(stable_frames=3, meter_on_board=False), _maker(OVEREXPOSED), world, 8)
    assert not any(r.observation.stable for r in results)
    assert all(r.observation.problem == "overexposed" for r in results)


class _FakeCapture:
    """What cannot run here: a camera driver. Records what is set; reports ``exposure``."""

    def __init__(self, exposure: float) -> None:
        self.props: dict[int, float] = {}
        self.sets: list[tuple[int, float]] = []
        self.exposure = exposure

    def isOpened(self) -> bool:
        return True

    def set(self, prop: int, value: float) -> bool:
        self.sets.append((prop, value))
        self.props[prop] = value
        return True

    def get(self, prop: int) -> float:
        import cv2

        return self.exposure if prop == cv2.CAP_PROP_EXPOSURE else self.props.get(prop, 0.0)

    def release(self) -> None:
        pass


async def test_a_camera_is_set_through_its_driver_in_its_own_units() -> None:
    import cv2

    manual = _FakeCapture(0.0)
    source = OpenCVSource("0", exposure=300.0, capture=manual)
    assert await source.set_exposure(0.5)
    assert manual.sets[-1] == (cv2.CAP_PROP_EXPOSURE, 150.0)
    # the camera's own automatic exposure: the value it settled on is the base, then it is held manually
    auto = _FakeCapture(156.0)
    source = OpenCVSource("0", capture=auto)
    assert await source.set_exposure(0.8)
    assert (cv2.CAP_PROP_AUTO_EXPOSURE, 1) in auto.sets
    assert auto.sets[-1] == (cv2.CAP_PROP_EXPOSURE, pytest.approx(124.8))
    source.close()  # ...and handed back on its own automatic exposure
    assert auto.sets[-1] == (cv2.CAP_PROP_AUTO_EXPOSURE, 3)
    OpenCVSource("0", exposure=300.0, capture=manual).close()  # a manual one stays as configured
    assert manual.sets[-1] != (cv2.CAP_PROP_AUTO_EXPOSURE, 3)
    # DirectShow counts log2 seconds: a factor of 0.5 is one less
    log2 = _FakeCapture(-6.0)
    assert await OpenCVSource("0", capture=log2).set_exposure(0.5)
    assert log2.sets[-1] == (cv2.CAP_PROP_EXPOSURE, pytest.approx(-7.0))
    # a driver that reports no exposure cannot be scaled
    assert not await OpenCVSource("0", capture=_FakeCapture(0.0)).set_exposure(0.8)


async def test_a_video_file_keeps_its_exposure(tmp_path: Any) -> None:
    import cv2

    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    writer.write(np.zeros((48, 64, 3), np.uint8))
    writer.release()
    try:
        source = VideoFileSource(str(path), realtime=False)
    except SourceError:
        pytest.skip("this OpenCV cannot read back MJPG")
    try:
        assert not await source.set_exposure(0.5)
    finally:
        source.close()


def test_the_simulated_camera_refuses_a_nonsense_exposure() -> None:
    maker = _maker(1.0)
    for bad in (0.0, -1.0, float("nan"), float("inf"), 100.0):
        with pytest.raises(ValueError):
            maker.set_exposure(bad)
    maker.set_exposure(0.5)
    assert maker.renderer.style.exposure == pytest.approx(0.5)


async def test_over_the_bus_vision_asks_simcam_for_less_light_and_then_reads_the_board(bus: Any) -> None:
    """Real sockets, both services in this process: simcam renders an overexposed white plate; vision
    publishes ``camera.control``; simcam applies it; the stable reading has every white piece."""
    config = msgspec.structs.replace(
        bus,
        simcam=msgspec.structs.replace(bus.simcam, fps=15.0),
        vision=msgspec.structs.replace(bus.vision, stable_frames=3, stable_repeat_s=60.0),
    )
    simcam = SimCamService(config)
    simcam.maker = _maker(OVEREXPOSED)
    simcam.maker.set_exposure(0.5)  # as an earlier vision, since restarted, had asked
    vision = VisionService(config)
    world = _world()
    controls: list[float] = []
    stable: list[BoardObservation] = []
    async with running(simcam, vision) as tasks, bus_sockets(config.bus) as sockets:
        pub = sockets.publisher()
        sub = sockets.subscriber(["vision.stable", "camera.control"])
        deadline = time.monotonic() + DEADLINE_S
        next_world = 0.0
        while time.monotonic() < deadline and not stable:
            if time.monotonic() >= next_world:
                await pub.publish("sim.world", world)
                next_world = time.monotonic() + 0.1
            env = await sub.recv(timeout=0.05)
            if env is None:
                continue
            if isinstance(env.message, CameraControl):
                controls.append(env.message.exposure)
            elif isinstance(env.message, BoardObservation):
                stable.append(env.message)
        assert stable, "no stable reading arrived"
        assert _count(stable[0].board, "O") == _count(BOARD, "O")
        assert _count(stable[0].board, "X") == _count(BOARD, "X")
        assert simcam.maker.renderer.style.exposure < OVEREXPOSED
        # the first request undid what an earlier vision had asked: the configured exposure
        assert controls[0] == 1.0 and controls[1] == pytest.approx(STEP_DOWN)
        assert isinstance(vision.source, BusSource)
        # the heartbeat's detail says the exposure is metered (what `sanzi status` and the console show)
        while "exposure x" not in vision.detail and time.monotonic() < deadline + DEADLINE_S:
            await sub.recv(timeout=0.1)
        assert "metered on the board" in vision.detail
        # a request out of range is dropped, simcam stays up
        while simcam.bad_controls == 0 and time.monotonic() < deadline + DEADLINE_S:
            await pub.publish("camera.control", CameraControl(exposure=-3.0))
            await sub.recv(timeout=0.1)
        assert simcam.bad_controls > 0
        assert not any(t.done() for t in tasks)


class _FixedCamera(FrameSource):
    """A camera whose exposure cannot be changed (a video file, a driver without the control): the
    simulator's frames of ``world`` at a fixed exposure, at 30 frames a second of capture time."""

    name = "fixed"

    def __init__(self, maker: FrameMaker, world: WorldState) -> None:
        self.maker, self.world, self.asked = maker, world, 0

    async def read(self) -> Frame | None:
        await asyncio.sleep(0)  # (yields to the service's other tasks, as a camera's wait would)
        image = self.maker.image(self.world)
        return Frame(image, self.maker.frame_id, self.maker.frame_id * 33_000_000, self.name)

    async def set_exposure(self, factor: float) -> bool:
        self.asked += 1
        return False


async def test_a_camera_that_cannot_change_its_exposure_does_not_stall_the_game(
    bus: Any, rules_alone: None
) -> None:
    """The service asks once, hears it cannot, stops waiting on overexposed frames: the board becomes
    stable (as the rules read it: white pieces on a clipped plate may be missing, which the referee then
    refuses; where the learned second opinion doubts such squares, the board is not taken at all: the
    test above)."""
    config = msgspec.structs.replace(bus, vision=msgspec.structs.replace(bus.vision, stable_frames=3))
    camera = _FixedCamera(_maker(OVEREXPOSED), _world())
    vision = VisionService(config, source=camera)
    async with running(vision) as (task,), bus_sockets(config.bus) as sockets:
        sub = sockets.subscriber(["vision.stable"])
        stable = await first_of(sub, BoardObservation, DEADLINE_S)
        assert stable is not None, "the board never became stable"
        assert camera.asked == 1 and not vision.core.exposure.controllable
        assert stable.problem == "overexposed"  # read as it is, and said so
        assert not task.done()
