"""What vision remembers of the board across a restart: where it is in the image, which way its squares
are numbered, and its lines' polarity and width (the way a localiser such as ROS's AMCL saves its last
pose to start from it, or openpilot keeps its camera calibration).

A vision process that crashes in the middle of a game starts again from nothing: a cold search of the
whole frame. A board full of large pieces hides most of its lines, and the cold search may not find it
where the tracker, following the board since it was empty, still did; a board standing near 45 degrees
may be found numbered a quarter turn the other way. Remembered, the restarted process confirms the board
on its lines at the remembered pose, numbered as before, on its first frame.

A remembered board is only a prior on probation (:meth:`services.vision.tracker.PoseTracker.resume`):
nothing is read at it until a frame confirms it, and a board found elsewhere replaces it under the
tracker's usual rule for a board that moved. It is kept in a small JSON file written atomically when a
stable board is announced (a new reading, or the board moved); a missing file is no memory, an
unreadable one is moved aside with a warning, one taken with a camera of another size is not used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec
import numpy as np

from messages import BoardPose
from services.common.durable import move_aside, write_atomically

from .detector import Polarity

MEMORY_VERSION: Final = 1
#: a remembered line as wide as a square is no line (half widths are a few hundredths of a pitch).
MAX_HALF_WIDTH: Final = 0.5
#: a homography (image pixels -> squares) this close to singular maps no board (a real one's
#: determinant is about 1 / pitch squared, 1e-4 at a 100 px pitch).
MIN_DETERMINANT: Final = 1e-12


class BoardMemory(msgspec.Struct, frozen=True, kw_only=True):
    """The board as the tracker last accepted it on a clear frame."""

    version: int = MEMORY_VERSION
    pose: BoardPose
    polarity: Polarity
    #: half the lines' width, in pitches (as the detector measured it).
    half_width: float
    #: the size of the frames it was seen in, (width, height) pixels: another camera mode, another image.
    frame_size: tuple[int, int]
    #: wall-clock seconds when it was written (for people and the log; nothing is decided on it).
    saved_at: float = 0.0

    def same_board(self, other: BoardMemory | None) -> bool:
        """Whether ``other`` remembers the same thing (whenever it was written)."""
        return other is not None and msgspec.structs.replace(other, saved_at=self.saved_at) == self


class UnreadableMemory(ValueError):
    """The file holds no memory that can be used (damaged, of another version, incomplete)."""


def decode_memory(raw: bytes) -> BoardMemory:
    """The memory in ``raw`` (the file's bytes). :raises UnreadableMemory: when it is not one."""
    try:
        memory = msgspec.json.decode(raw, type=BoardMemory)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise UnreadableMemory(str(exc)) from None
    if memory.version != MEMORY_VERSION:
        raise UnreadableMemory(f"version {memory.version}, expected {MEMORY_VERSION}")
    if len(memory.pose.homography) != 9 or not 0 < memory.half_width < MAX_HALF_WIDTH:
        raise UnreadableMemory("no homography or no line width")
    h = np.array(memory.pose.homography, dtype=float).reshape(3, 3)
    if not np.isfinite(h).all() or abs(np.linalg.det(h)) < MIN_DETERMINANT:
        raise UnreadableMemory("a homography that maps no board")
    if min(memory.frame_size) <= 0:
        raise UnreadableMemory(f"frame size {memory.frame_size}")
    return memory


def encode_memory(memory: BoardMemory) -> bytes:
    return msgspec.json.format(msgspec.json.encode(memory), indent=1)


def load_memory(path: Path, log: Any) -> BoardMemory | None:
    """The memory in the file at ``path``: None when there is none, or when it is unreadable (the file
    is then moved aside, :func:`services.common.durable.move_aside`, with a warning)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("cannot read the remembered board", path=str(path), error=exc.strerror or str(exc))
        return None
    try:
        return decode_memory(raw)
    except UnreadableMemory as exc:
        try:
            aside = str(move_aside(path))
        except OSError as move_error:
            aside = f"not moved: {move_error.strerror or move_error}"
        log.warning(
            "remembered board unreadable; starting afresh", path=str(path), aside=aside, error=str(exc)
        )
        return None


def save_memory(path: Path, memory: BoardMemory) -> None:
    """Write ``memory`` to ``path`` atomically. :raises OSError: when it cannot be written."""
    write_atomically(path, encode_memory(memory))


def memory_path(setting: str) -> Path | None:
    """The configured file (``vision.memory_file``), None when vision is to remember nothing ("")."""
    return Path(setting) if setting else None
