"""What happens across frames: the pose tracker (last good pose, sudden jumps rejected unless they
persist) and the stability filter (a reading is stable only after N agreeing, unoccluded frames).

Both are plain classes fed one frame at a time, with no clock and no I/O, so they are tested frame by
frame. :class:`VisionCore` joins them with the detector: one image in, one observation out.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

import cv2
import numpy as np

from messages import BoardObservation, BoardPose

from .detector import Detection, DetectorParams, Polarity, detect, keep_numbering, read_board, track
from .exposure import ExposureControl
from .memory import BoardMemory

#: a frame read at the prior pose that sees no grid line at all this many times in a row: the board is
#: gone (moved out of view or taken away), the prior is dropped.
LOST_AFTER_FRAMES: Final = 15
#: the problems a frame waits out rather than join a stability window with (a pose that jumped; a plate
#: clipped where a square was read bare, while the exposure is lowered).
WAITING: Final = ("jump", "overexposed")

#: a frame is the same picture as the one last read when, shrunk by ``THUMB_SHRINK`` each way (which
#: averages sensor noise down), at most ``UNCHANGED_MAX_PIXELS`` of its pixels differ from that one's by
#: more than ``UNCHANGED_LEVELS`` grey levels in any channel: then its reading is the last one. A piece
#: put down covers a few hundred such pixels, a fingertip dozens; noise and JPEG none.
THUMB_SHRINK: Final = 4
UNCHANGED_LEVELS: Final = 10
UNCHANGED_MAX_PIXELS: Final = 3
#: a reading is reused for at most this many frames in a row, then the frame is read afresh anyway.
REREAD_EVERY_FRAMES: Final = 15


def thumbnail(image: np.ndarray) -> np.ndarray:
    """``image`` shrunk by ``THUMB_SHRINK`` each way (pixel areas averaged), as a signed array."""
    h, w = image.shape[:2]
    size = (max(1, w // THUMB_SHRINK), max(1, h // THUMB_SHRINK))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA).astype(np.int16)


def same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two thumbnails show the same picture (see ``UNCHANGED_LEVELS``)."""
    if a.shape != b.shape:
        return False
    diff = np.abs(a - b)
    if diff.ndim == 3:
        diff = diff.max(axis=2)
    return int(np.count_nonzero(diff > UNCHANGED_LEVELS)) <= UNCHANGED_MAX_PIXELS


def _angle_gap(a: float, b: float) -> float:
    """Difference of two board angles modulo a quarter turn (the board looks the same every 90°)."""
    d = math.fmod(a - b + 45.0, 90.0)
    if d < 0:
        d += 90.0
    return abs(d - 45.0)


def pose_distance(a: BoardPose, b: BoardPose) -> tuple[float, float]:
    """(centre distance in pixels, angle difference in degrees modulo 90) between two poses."""
    return (
        math.hypot(a.center_px.x - b.center_px.x, a.center_px.y - b.center_px.y),
        _angle_gap(a.angle_deg, b.angle_deg),
    )


class PoseTracker:
    """Keeps the last good pose and refuses sudden jumps.

    A detected pose within ``jump_px`` (centre) and ``jump_deg`` (angle) of the last good one is taken.
    A pose farther away is a *jump*: the frame is read at the last good pose instead (problem "jump")
    until the new pose has been seen, consistently and unoccluded, in ``jump_frames`` frames (occluded
    frames between them neither count nor break the run); then it is taken (the board really was
    moved). A frame where no grid is found is read at the last good pose
    by the detector itself.

    A board remembered from before a restart (:meth:`resume`) is a last good pose on probation: it is
    followed once a frame confirms it on its lines; until then nothing is read at it (a frame that does
    not confirm it is searched afresh, as if no board were known), and a board found elsewhere is taken
    under the rule for a jump.

    A frame that shows the same picture as the last one read (a board standing still: only sensor noise
    differs) is not read again: the last reading stands, with ``extra["unchanged"] == 1``, for at most
    ``REREAD_EVERY_FRAMES`` frames in a row (unless ``reuse_unchanged`` is false). Only readings taken at
    the last good pose, and confirmed by the fresh reading before them (same picture, same board and
    occlusion), are reused.
    """

    def __init__(
        self,
        params: DetectorParams | None = None,
        *,
        jump_px: float = 25.0,
        jump_deg: float = 5.0,
        jump_frames: int = 5,
        reuse_unchanged: bool = True,
        timer: Callable[[], float] = time.perf_counter,
    ) -> None:
        if jump_frames < 1:
            raise ValueError(f"jump_frames must be at least 1, got {jump_frames}")
        self.params = params
        self.jump_px = jump_px
        self.jump_deg = jump_deg
        self.jump_frames = jump_frames
        #: the last good pose (None until a board was found, and after it was lost).
        self.pose: BoardPose | None = None
        self._candidate: BoardPose | None = None
        self._candidate_frames = 0
        self._blind_frames = 0
        self._polarity: Polarity | None = None
        self._half_width = 0.0
        #: the last good pose was remembered from before a restart and no frame has confirmed it yet.
        self.on_probation = False
        #: the last reading taken at the last good pose, the thumbnail of its frame, and how many frames
        #: in a row have reused it since.
        self._last_read: Detection | None = None
        self._last_thumb: np.ndarray | None = None
        self._reused = 0
        #: the last fresh reading taken at the last good pose and its thumbnail (what confirms the next).
        self._fresh: Detection | None = None
        self._fresh_thumb: np.ndarray | None = None
        self.reuse_unchanged = reuse_unchanged
        #: seconds from an arbitrary start; only fills ``processing_ms``, never decides anything.
        self.timer = timer

    def _near(self, a: BoardPose, b: BoardPose) -> bool:
        dist, gap = pose_distance(a, b)
        return dist <= self.jump_px and gap <= self.jump_deg

    def process(self, image: np.ndarray) -> Detection:
        """Detect in ``image`` with the last good pose as prior and apply the jump rule."""
        t0 = self.timer()
        # The thumbnail is only ever compared when readings are reused (it costs a fraction of a ms).
        thumb = thumbnail(image) if self.reuse_unchanged else None
        last = self._last_read
        if (
            thumb is not None
            and last is not None
            and self._last_thumb is not None
            and self._reused < REREAD_EVERY_FRAMES
            and same_picture(thumb, self._last_thumb)
        ):
            self._reused += 1
            ms = (self.timer() - t0) * 1000.0
            # tracked: this frame needed no search (as a frame confirmed on its lines)
            return replace(last, processing_ms=ms, extra={**last.extra, "unchanged": 1.0, "tracked": 1.0})
        det = self._read(image)
        if (
            det.pose_source == "detected"
            and det.problem != "jump"
            and det.pose is not None
            and det.pose == self.pose
        ):
            # Reused only once two fresh readings of the same picture agree: a single misread frame
            # reused would fill a stability window on its own.
            fresh, fresh_thumb = self._fresh, self._fresh_thumb
            confirmed = (
                fresh is not None
                and fresh_thumb is not None
                and thumb is not None
                and (fresh.board, fresh.occluded) == (det.board, det.occluded)
                and same_picture(thumb, fresh_thumb)
            )
            self._fresh, self._fresh_thumb = det, thumb
            self._last_read, self._last_thumb = (det, thumb) if confirmed else (None, None)
            self._reused = 0
        else:
            self._fresh = self._fresh_thumb = None
            self._last_read, self._last_thumb = None, None
        return det

    def _read(self, image: np.ndarray) -> Detection:
        """Read ``image`` afresh: :meth:`process` without reusing the last reading."""
        if self.pose is None:
            det = detect(image, self.params)
        else:
            # A steady board is confirmed on its lines at the last pose; the full search runs only when
            # that fails (the board moved, something covers the lines).
            det = track(
                image,
                self.pose,
                self.params,
                polarity=self._polarity,
                half_width=self._half_width,
                search_with_prior=not self.on_probation,
            )
        if det.pose_source == "detected" and det.pose is not None:
            if self.pose is None or self._near(det.pose, self.pose):
                det = self._same_numbering(image, det)
                self._accept(det.pose, det)  # type: ignore[arg-type]
                return det
            # Only a clear view counts towards the move: a hand resting over the board shows the same
            # picture frame after frame, and a grid found through it (fingers among the lines) would be
            # taken for the board moved; once the hand went, the true pose would be a jump in turn.
            # An occluded frame neither counts nor breaks the run.
            clear = not det.occluded
            if self._candidate is not None and self._near(det.pose, self._candidate):
                self._candidate_frames += clear
            else:
                self._candidate_frames = int(clear)
            self._candidate = det.pose
            if self._candidate_frames >= self.jump_frames:
                self._accept(det.pose, det)
                return det
            if self.on_probation:
                return replace(det, problem="jump")  # (nothing is read at a pose on probation)
            held = read_board(image, self.pose, self.params)
            return replace(held, problem="jump", processing_ms=det.processing_ms + held.processing_ms)
        if det.pose_source == "prior":
            self._blind_frames = self._blind_frames + 1 if det.occlusion >= 1.0 else 0
            if self._blind_frames >= LOST_AFTER_FRAMES:
                self.pose = None
                self._polarity, self._half_width = None, 0.0
                return replace(det, found=False, pose=None, squares=(), problem="no-board")
        return det

    def resume(self, memory: BoardMemory) -> None:
        """Start from a board remembered from before a restart (:mod:`.memory`), on probation (see the
        class's description). Meant for a tracker that has not read a frame yet."""
        self.pose = memory.pose
        self._polarity, self._half_width = memory.polarity, memory.half_width
        self._candidate, self._candidate_frames, self._blind_frames = None, 0, 0
        self.on_probation = True

    def memory(self, frame_size: tuple[int, int], saved_at: float = 0.0) -> BoardMemory | None:
        """What to remember of the board now: the last good pose with the lines' polarity and width
        measured on a clear frame, confirmed in this process; None while there is nothing such."""
        if self.pose is None or self._polarity is None or self._half_width <= 0 or self.on_probation:
            return None
        return BoardMemory(
            pose=self.pose,
            polarity=self._polarity,
            half_width=self._half_width,
            frame_size=frame_size,
            saved_at=saved_at,
        )

    def _same_numbering(self, image: np.ndarray, det: Detection) -> Detection:
        """A searched pose of a board standing near 45 degrees may be numbered the other way than the
        last good pose: read it again numbered like the last one (tracked frames keep it anyway)."""
        if self.pose is None or det.pose is None or det.extra.get("tracked") == 1.0:
            return det
        turned = keep_numbering(det.pose, self.pose)
        if turned is None:
            return det
        again = read_board(image, turned, self.params)
        return replace(
            again,
            pose_source="detected",
            cells=det.cells,
            processing_ms=det.processing_ms + again.processing_ms,
            extra={**det.extra, "renumbered": 1.0},
        )

    def _accept(self, pose: BoardPose, det: Detection) -> None:
        self.pose = pose
        if not det.occluded or self._polarity is None:
            # The lines' width and polarity are the board's: measured on a frame with a hand or a
            # sheet over the board they come out anywhere from 3% to 7% of the pitch, and every frame
            # tracked after it would be read with that width (a bare square's edge then read as a
            # piece's rim). A clear frame's measure stands until the next clear frame.
            self._polarity = det.polarity
            self._half_width = det.extra.get("half_width", 0.0)
        self._candidate = None
        self._candidate_frames = 0
        self._blind_frames = 0
        self.on_probation = False


@dataclass(frozen=True)
class FilterStep:
    """What the stability filter says about one frame."""

    #: this frame's reading agrees with the stable one and is backed by enough frames.
    stable: bool
    #: consecutive agreeing, usable frames behind this frame's reading (0 for an unusable frame).
    agreeing: int
    #: the stable board changed with this frame (publish it): true exactly once per change.
    changed: bool
    #: the current stable board ("" before the first one).
    stable_board: str
    #: capture time (ns) of the first frame of the agreeing run behind this frame's reading: the window
    #: ends with this frame and begins here (0 for an unusable frame, or when no capture time was given).
    since_ns: int = 0


class StabilityFilter:
    """A board reading becomes stable after ``stable_frames`` consecutive agreeing, usable frames.

    Usable: the board was found, nothing covers the grid, no square is unknown, the pose did not jump.
    Anything else breaks the run, so a hand over the board, a half-placed piece or a moving board never
    produce a stable reading. The whole 9-square reading is compared, so a piece taken away is noticed
    exactly like a piece put down.

    With each frame's capture time the filter also says when the agreeing run behind a reading began
    (:attr:`FilterStep.since_ns`): a stable frame stands for the window from there to itself, which may
    begin long before the frame (the board has been clear and unchanged all that time).
    """

    def __init__(self, stable_frames: int) -> None:
        if stable_frames < 1:
            raise ValueError(f"stable_frames must be at least 1, got {stable_frames}")
        self.stable_frames = stable_frames
        self.stable_board = ""
        self._candidate = ""
        self._count = 0
        self._since_ns = 0

    @staticmethod
    def usable(found: bool, board: str, occluded: bool, problem: str = "") -> bool:
        """A frame that may join a window: found, uncovered, every square read, the pose not jumped and
        the plate not clipped where a square was read bare (a white piece may hide there: the exposure
        is being lowered, :mod:`.exposure`)."""
        return found and not occluded and "?" not in board and len(board) == 9 and problem not in WAITING

    def update(
        self, found: bool, board: str, occluded: bool, problem: str = "", capture_ns: int = 0
    ) -> FilterStep:
        """Feed one frame's reading (frames in capture order; ``capture_ns`` its capture time, 0 when
        unknown); returns whether it is stable, whether the stable board changed, and when the agreeing
        run behind it began."""
        if not self.usable(found, board, occluded, problem):
            self._candidate, self._count, self._since_ns = "", 0, 0
            return FilterStep(False, 0, False, self.stable_board)
        if board == self._candidate:
            self._count += 1
        else:
            self._candidate, self._count, self._since_ns = board, 1, capture_ns
        changed = False
        if self._count >= self.stable_frames and board != self.stable_board:
            self.stable_board = board
            changed = True
        stable = self._count >= self.stable_frames and board == self.stable_board
        return FilterStep(stable, self._count, changed, self.stable_board, self._since_ns)

    def reset(self) -> None:
        """Forget everything (a new camera, a new board)."""
        self.stable_board, self._candidate, self._count, self._since_ns = "", "", 0, 0


@dataclass(frozen=True)
class CoreResult:
    """One processed frame: the observation to publish, whether the stable board changed, the detection."""

    observation: BoardObservation
    changed: bool
    detection: Detection
    #: the board is stable and unchanged, but it was moved or turned since the last stable reading that
    #: was published (task 3: the operator turns the board): publish the stable reading again.
    moved: bool = False
    #: the exposure factor to ask of the camera from now on (:class:`.exposure.ExposureControl`), or None.
    exposure: float | None = None


class VisionCore:
    """The vision process's pure core: frames in, observations out (tracker + filter + detector)."""

    def __init__(
        self,
        params: DetectorParams | None = None,
        *,
        stable_frames: int = 6,
        jump_px: float = 25.0,
        jump_deg: float = 5.0,
        jump_frames: int = 5,
        timer: Callable[[], float] = time.perf_counter,
        meter_on_board: bool = True,
    ) -> None:
        self.tracker = PoseTracker(
            params, jump_px=jump_px, jump_deg=jump_deg, jump_frames=jump_frames, timer=timer
        )
        self.filter = StabilityFilter(stable_frames)
        #: the exposure metered on the board (the service applies what it asks, or says it cannot).
        self.exposure = ExposureControl(controllable=meter_on_board)
        #: the last stable observation (re-published at 1 Hz), None before the first.
        self.stable_observation: BoardObservation | None = None
        #: the pose of the last stable reading announced (published on change or after a move).
        self._announced_pose: BoardPose | None = None

    @classmethod
    def from_config(cls, vision: object) -> VisionCore:
        return cls(
            stable_frames=vision.stable_frames,  # type: ignore[attr-defined]
            jump_px=vision.jump_px,  # type: ignore[attr-defined]
            jump_deg=vision.jump_deg,  # type: ignore[attr-defined]
            jump_frames=vision.jump_frames,  # type: ignore[attr-defined]
            meter_on_board=vision.meter_on_board,  # type: ignore[attr-defined]
        )

    def process(self, image: np.ndarray, frame_id: int, capture_ns: int = 0) -> CoreResult:
        """Read one frame (frames in capture order). The observation is ``stable`` when this frame agrees
        with the stable board and ends a window of at least ``stable_frames`` usable, agreeing frames;
        ``window_start_ns`` says when that window's first frame was captured (``capture_ns`` is its
        last), so a consumer can accept the first frame after some moment without a new window."""
        det = self.tracker.process(image)
        exposure = self.exposure.update(det)
        # An overexposed frame waits while a lower exposure can still help; then it is read as it is.
        problem = "" if det.problem == "overexposed" and not self.exposure.can_lower else det.problem
        step = self.filter.update(det.found, det.board, det.occluded, problem, capture_ns)
        obs = det.to_observation(frame_id, capture_ns=capture_ns)
        obs = _with(obs, stable=step.stable, agreeing_frames=step.agreeing, window_start_ns=step.since_ns)
        moved = False
        if step.stable:
            # Keep the newest stable frame (its pose and capture time), not the one that first made it
            # stable: the 1 Hz repeat and anyone placing pieces need where the board is now.
            moved = not step.changed and _pose_moved(self._announced_pose, obs.pose)
            if step.changed or moved:
                self._announced_pose = obs.pose
            self.stable_observation = obs
        return CoreResult(obs, step.changed, det, moved=moved, exposure=exposure)


#: a stable board whose centre moved more than this (pixels) or turned more than this (degrees) since the
#: last published stable reading is published again.
MOVED_PX: float = 3.0
MOVED_DEG: float = 1.0


def _pose_moved(before: BoardPose | None, after: BoardPose | None) -> bool:
    if before is None or after is None:
        return before is not after
    shift, turn = pose_distance(before, after)
    return shift > MOVED_PX or turn > MOVED_DEG


def _with(obs: BoardObservation, **changes: object) -> BoardObservation:
    import msgspec

    return msgspec.structs.replace(obs, **changes)
