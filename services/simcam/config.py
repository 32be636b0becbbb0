"""Configuration of the simulated camera (section [simcam])."""

from __future__ import annotations

from services.common.section import Section


class SimCamConfig(Section):
    #: frames per second, in real time (not scaled by simworld.speed).
    fps: float = 30.0
    #: frame k is rendered with seed (seed, k): the whole stream is reproducible.
    seed: int = 0
    width: int = 640
    height: int = 480
    #: sensor noise, standard deviation in grey levels (overrides the style preset's value).
    noise_sigma: float = 3.0
    #: the look of the frames: a preset of services.simcam.style ("default", "clean", "dark", "harsh",
    #: "dim", "contest-blue", "contest-green") or "random:N" (RenderStyle.random with seed N).
    style: str = "default"
    #: the camera's distance from the table's centre along its optical axis, millimetres.
    camera_distance_mm: float = 650.0
    #: the camera's tilt about the image x axis, degrees (positive: it sits towards the image top, -y).
    tilt_deg: float = 7.0
    #: tilt about the image y axis, degrees.
    roll_deg: float = 2.0
    #: rotation of the image about the optical axis, degrees.
    yaw_deg: float = 1.5
    #: the focal length is chosen so the table plus this margin on every side fills the image.
    view_margin_mm: float = 15.0
