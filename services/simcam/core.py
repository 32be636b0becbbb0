"""The simulated camera's logic without sockets: the frame clock and the frame maker.

- :class:`FrameClock` schedules frames at a fixed real-time rate and never falls behind: when a frame
  took longer than a period, the ticks it overran are skipped (counted), not queued.
- :class:`FrameMaker` turns the latest WorldState into CameraFrame messages with increasing ids and
  per-frame seeds derived from the configured seed, so a stream is reproducible.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import numpy as np

from messages import CameraFrame, WorldState

from .camera import CameraModel
from .config import SimCamConfig
from .renderer import Renderer, renderer_for
from .style import RenderStyle

if TYPE_CHECKING:
    from services.common.config import Config, TableConfig

#: frame k of a stream with configured seed s is rendered with seed s * _SEED_STRIDE + k.
_SEED_STRIDE: Final = 1_000_003
SOURCE: Final = "sim"
#: the most a camera control may raise the exposure (the renderer's gain tops out at twice).
MAX_EXPOSURE_FACTOR: Final = 4.0


class FrameClock:
    """Ticks at ``start + k * period``. :meth:`next_delay` says how long to wait for the next tick after
    the current one's work ended at ``now``; ticks already past are skipped and counted."""

    def __init__(self, period_s: float, start_s: float) -> None:
        if period_s <= 0:
            raise ValueError(f"period must be positive, got {period_s}")
        self.period = period_s
        self.start = start_s
        self.tick = 0
        self.skipped = 0

    def due(self) -> float:
        """The time of the current tick."""
        return self.start + self.tick * self.period

    def next_delay(self, now: float) -> float:
        """Advance to the next tick not yet past at ``now``; return the seconds until it (>= 0)."""
        wanted = self.tick + 1
        # the first tick whose time is still ahead of now
        ahead = math.floor((now - self.start) / self.period) + 1
        if ahead > wanted:
            self.skipped += ahead - wanted
            wanted = ahead
        self.tick = wanted
        return max(0.0, self.due() - now)


def style_from_config(simcam: SimCamConfig) -> RenderStyle:
    """The configured look: the preset ``simcam.style`` with ``simcam.noise_sigma``."""
    return RenderStyle.preset(simcam.style).replace(noise_sigma=float(simcam.noise_sigma))


class FrameMaker:
    """Makes CameraFrame messages from worlds. Holds the renderer (and its caches). ``clock`` stamps a
    frame whose capture time is not given (monotonic nanoseconds, the bus's clock)."""

    def __init__(
        self,
        camera: CameraModel,
        table: TableConfig,
        style: RenderStyle,
        seed: int,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        self.camera = camera
        self.clock = clock
        self.table = table
        #: the configured look; :meth:`set_exposure` scales its exposure.
        self.style = style
        self.renderer: Renderer = renderer_for(camera, table, style)
        self.seed = seed
        self.frame_id = 0

    @classmethod
    def from_config(cls, config: Config) -> FrameMaker:
        camera = CameraModel.from_config(config.simcam, config.table)
        return cls(camera, config.table, style_from_config(config.simcam), config.simcam.seed)

    def set_exposure(self, factor: float) -> None:
        """Render from now on at ``factor`` times the configured exposure (a camera's exposure control).

        :raises ValueError: for a factor that is not positive and finite, or above ``MAX_EXPOSURE_FACTOR``.
        """
        if not (math.isfinite(factor) and 0.0 < factor <= MAX_EXPOSURE_FACTOR):
            raise ValueError(f"exposure factor {factor!r}: expected a number in (0, {MAX_EXPOSURE_FACTOR}]")
        style = self.style.replace(exposure=self.style.exposure * factor)
        self.renderer = renderer_for(self.camera, self.table, style)

    def seed_of(self, frame_id: int) -> int:
        return self.seed * _SEED_STRIDE + frame_id

    def image(self, world: WorldState) -> np.ndarray:
        """Render the next frame's image (advances the frame id when it succeeds).

        :raises RenderError: for a world that cannot be drawn.
        """
        image = self.renderer.render(world, seed=self.seed_of(self.frame_id + 1))
        self.frame_id += 1
        return image

    def frame(self, world: WorldState, capture_ns: int | None = None) -> CameraFrame:
        """The next frame as a bus message (bgr8)."""
        t = self.clock() if capture_ns is None else capture_ns
        img = self.image(world)
        return CameraFrame(
            frame_id=self.frame_id,
            width=img.shape[1],
            height=img.shape[0],
            data=img.tobytes(),
            encoding="bgr8",
            capture_ns=t,
            source=SOURCE,
        )


def frame_to_image(frame: CameraFrame) -> np.ndarray:
    """A bgr8 CameraFrame's pixels as an (height, width, 3) uint8 array (a read-only view).

    :raises ValueError: for another encoding or a size that does not match the data.
    """
    if frame.encoding != "bgr8":
        raise ValueError(f"expected a bgr8 frame, got {frame.encoding!r}")
    expected = frame.width * frame.height * 3
    if len(frame.data) != expected:
        raise ValueError(f"frame {frame.frame_id}: {len(frame.data)} bytes, expected {expected}")
    return np.frombuffer(frame.data, np.uint8).reshape(frame.height, frame.width, 3)
