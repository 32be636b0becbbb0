"""Anomalies worth a picture: a stable reading that disagrees with the referee's board while the
referee waits for the board to hold still, and a board that was seen and is now lost.

:class:`AnomalyWatch` decides (pure, fed one frame at a time); :class:`AnomalyStore` writes the
annotated frame and keeps at most ``max_files`` of them (the oldest go first).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import cv2
import numpy as np

from messages import GameState
from messages.game import PLACEMENT_CONFIRMED, WAITING_FOR_PERSON, Phase

from .annotate import annotate
from .detector import Detection

#: referee phases in which the board should hold still and match the referee's own board.
WAITING_PHASES: Final[frozenset[Phase]] = frozenset({WAITING_FOR_PERSON, PLACEMENT_CONFIRMED})


@dataclass(frozen=True)
class Anomaly:
    kind: str  # "disagree" or "lost"
    detail: str


def unexplained_difference(seen: str, referee: str, phase: str) -> list[int]:
    """Squares (1..9) where the stable reading ``seen`` disagrees with the referee's ``referee`` board
    in a way the phase does not explain. While the person is to move, one new piece on a square the
    referee has empty is their move, not an anomaly; any other difference is."""
    diff = [i + 1 for i, (a, b) in enumerate(zip(seen, referee, strict=True)) if a != b]
    if phase == WAITING_FOR_PERSON and len(diff) == 1:
        i = diff[0] - 1
        if referee[i] == "." and seen[i] in "XO":
            return []
    return diff


class AnomalyWatch:
    """Decides, frame by frame, when something is worth saving. Each disagreement (the board seen, the
    referee's board) is reported at most once per ``min_interval_s`` (monotonic seconds given by the
    caller), a lost board once per loss and at most once per interval."""

    def __init__(self, *, lost_frames: int = 30, min_interval_s: float = 5.0) -> None:
        self.lost_frames = lost_frames
        self.min_interval_s = min_interval_s
        self.referee: GameState | None = None
        self._missing = 0
        self._seen_board = False
        self._lost_reported = False
        self._last: dict[str, float] = {}

    def _allowed(self, key: str, now: float) -> bool:
        last = self._last.get(key)
        if last is not None and now - last < self.min_interval_s:
            return False
        # (keys whose interval has passed are forgotten: the table stays as small as the interval)
        self._last = {k: t for k, t in self._last.items() if now - t < self.min_interval_s}
        self._last[key] = now
        return True

    def check(self, found: bool, stable: bool, board: str, now: float) -> Anomaly | None:
        """One processed frame: was the board found, is the reading stable, what does it say."""
        if found:
            self._seen_board = True
            self._missing = 0
            self._lost_reported = False
        else:
            self._missing += 1
            if (
                self._seen_board
                and not self._lost_reported
                and self._missing >= self.lost_frames
                and self._allowed("lost", now)
            ):
                self._lost_reported = True
                return Anomaly("lost", f"no board for {self._missing} frames")
            return None
        ref = self.referee
        if not stable or ref is None or ref.phase not in WAITING_PHASES or len(ref.board) != 9:
            return None
        diff = unexplained_difference(board, ref.board, ref.phase)
        # Rate limited per disagreement, not per kind: a lasting one is saved once per interval, and a
        # new one (another misread a second after a legal rejection) gets its own picture.
        if diff and self._allowed(f"disagree {board} {ref.board}", now):
            return Anomaly(
                "disagree", f"seen {board} but the referee has {ref.board} ({ref.phase}); squares {diff}"
            )
        return None


class AnomalyStore:
    """Writes annotated anomaly frames into ``directory``, keeping at most ``max_files``."""

    def __init__(self, directory: str | Path, max_files: int) -> None:
        self.directory = Path(directory)
        self.max_files = max(1, max_files)

    def save(self, image: np.ndarray, det: Detection, anomaly: Anomaly, frame_id: int) -> Path:
        """Write the frame with the detection drawn on it; returns the file. :raises OSError: when the
        folder cannot be written."""
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = self.directory / f"{stamp}-{time.time_ns() % 1_000_000_000:09d}-{anomaly.kind}-{frame_id}.png"
        out = annotate(image, det)
        cv2.putText(
            out, anomaly.detail[:90], (8, out.shape[0] - 10), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 255), 1
        )
        if not cv2.imwrite(str(path), out):
            raise OSError(f"cannot write {path}")
        self._prune()
        return path

    def _prune(self) -> None:
        files = sorted(self.directory.glob("*.png"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        for old in files[: max(0, len(files) - self.max_files)]:
            old.unlink(missing_ok=True)
