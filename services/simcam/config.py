"""Configuration of the simulated camera (section [simcam])."""

from __future__ import annotations

from services.common.config import Section


class SimCamConfig(Section):
    fps: float = 30.0
    seed: int = 0
    width: int = 640
    height: int = 480
    noise_sigma: float = 3.0
