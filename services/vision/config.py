"""Configuration of the camera source and of vision (sections [camera] and [vision])."""

from __future__ import annotations

from services.common.section import Section


class CameraConfig(Section):
    #: "sim" (frames from the simulated camera on the bus), a device index ("0"), a video file or a URL.
    source: str = "sim"
    width: int = 640
    height: int = 480
    fps: float = 30.0
    #: manual exposure in the driver's units; a negative value keeps the camera's automatic exposure.
    exposure: float = -1.0


class VisionConfig(Section):
    #: consecutive agreeing, unoccluded frames before an observation is stable.
    stable_frames: int = 6
    #: a pose jump larger than this (pixels at the centre) is rejected unless it persists.
    jump_px: float = 25.0
    #: a change of the board's angle larger than this (degrees, modulo 90) is a jump too.
    jump_deg: float = 5.0
    #: clear (unoccluded) frames a jumped pose must persist in to be accepted.
    jump_frames: int = 5
    #: where the board is remembered across a restart (services.vision.memory); "" remembers nothing.
    memory_file: str = "{state}/vision-board.json"
    #: annotated frames saved on anomalies, at most this many files are kept.
    anomaly_dir: str = "{state}/anomalies"
    anomaly_max_files: int = 50
    #: the current stable reading is re-published on vision.stable this often (seconds).
    stable_repeat_s: float = 1.0
    #: frames in a row without a board (after one was seen) before it counts as lost (an anomaly).
    lost_frames: int = 30
    #: two anomaly frames of the same kind are saved at least this many seconds apart.
    anomaly_min_interval_s: float = 5.0
    #: lower the camera's exposure while the board's plate is clipped (services.vision.exposure); frames
    #: that show a square bare on a clipped plate wait for it. False: read every frame as it comes.
    meter_on_board: bool = True
