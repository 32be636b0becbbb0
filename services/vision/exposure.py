"""Exposure metered on the board: keep the plate below the camera's ceiling.

A camera's own automatic exposure meters the whole image. A white board on a dark table under a lamp is
then clipped: the plate and a white piece on it both read 255, and only the piece's faint shadow is
left (the detector reads such a square bare, and says the frame is "overexposed"). Like openpilot's
camerad, which meters its exposure on the part of the image that matters, :class:`ExposureControl`
meters on the board the detector found: its plate's brightest level (``Detection.extra["plate_top"]``).

- While the plate is clipped (the detector's ``CLIPPED_PLATE_LEVEL`` or above), the exposure is lowered
  by ``STEP_DOWN`` a step, down to ``MIN_FACTOR`` of the configured one. A clipped plate does not say how
  far over it is, so the steps are fixed.
- When the plate has fallen below ``RAISE_BELOW`` (the light dimmed, or a step overshot) and the exposure
  is below the configured one, it is raised towards ``TARGET_LEVEL``, never above the configured one.
- After a change, ``SETTLE_FRAMES`` frames pass before the next: a driver applies a new exposure a frame
  or two late. Only clear (or clipped) boards are metered: under a hand the plate is the hand.

The factor is relative: 1.0 is the exposure the camera was configured with (or its own automatic one).
A source applies it as it can (:meth:`services.vision.sources.FrameSource.set_exposure`); one that
cannot, or a controller at its lowest, leaves an overexposed frame to be read as it is
(:attr:`ExposureControl.can_lower` is then false and the service stops waiting on it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .detector import Detection
from .detector.search import CLIPPED_PLATE_LEVEL

#: the factor each step down while the plate is clipped (two steps take a plate 1.5 times over below
#: the ceiling).
STEP_DOWN: Final = 0.8
#: the lowest factor: a third of the configured exposure (below, a dark plate's lines sink into noise).
MIN_FACTOR: Final = 0.3
#: below this level the exposure is raised again (while lowered) towards ``TARGET_LEVEL``...
RAISE_BELOW: Final = 190.0
TARGET_LEVEL: Final = 225.0
#: ...by at most this factor a step.
MAX_RAISE: Final = 1.25
#: frames between two changes.
SETTLE_FRAMES: Final = 3
#: the detections metered on: a clear board, or one clipped. (Not one covered or unsure: the plate
#: measured under a hand is the hand, and raising the exposure for it would clip the board again when
#: the hand leaves, after every move.)
METERED_ON: Final = ("", "overexposed")


@dataclass
class ExposureControl:
    """The exposure factor to ask of the camera, frame by frame (see the module's docstring)."""

    #: the factor asked for last (1.0: the configured exposure).
    factor: float = 1.0
    #: false once the source said it cannot change its exposure.
    controllable: bool = True
    _settling: int = 0

    @property
    def can_lower(self) -> bool:
        """Whether a clipped plate can still be helped by a lower exposure."""
        return self.controllable and self.factor > MIN_FACTOR * (1.0 + 1e-9)

    def update(self, det: Detection) -> float | None:
        """The new factor to apply after ``det`` (a frame's detection), or None to keep the current one.
        Frames without a board, whose plate was not measured, or with something over the board or a
        square unsure (``METERED_ON``), change nothing."""
        if self._settling > 0:
            self._settling -= 1
            return None
        top = det.extra.get("plate_top")
        if not self.controllable or not det.found or top is None or det.problem not in METERED_ON:
            return None
        if top >= CLIPPED_PLATE_LEVEL and self.can_lower:
            return self._set(max(MIN_FACTOR, self.factor * STEP_DOWN))
        if 0.0 < top < RAISE_BELOW and self.factor < 1.0:
            return self._set(min(1.0, self.factor * min(MAX_RAISE, TARGET_LEVEL / top)))
        return None

    def _set(self, factor: float) -> float:
        self.factor = factor
        self._settling = SETTLE_FRAMES
        return factor
