"""The processes that need no image (bus, ai, referee, led) start without OpenCV and numpy: loading the
configuration, which names every service's section, must not import the detector or the renderer.
Each process is about 30 MB resident instead of about 60 MB (measured when written)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from services.common.config import load
load(None)
import services.{name}.service
heavy = sorted(m for m in ("cv2", "numpy") if m in sys.modules)
print(",".join(heavy))
"""


@pytest.mark.parametrize("name", ["bus", "ai", "referee", "led"])
def test_process_starts_without_opencv_or_numpy(name: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(name=name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "", f"{name} imported {out.stdout.strip()}"


def test_the_vision_package_still_offers_its_api() -> None:
    import services.simcam as simcam
    import services.vision as vision

    assert callable(vision.detect) and callable(vision.track)
    assert vision.VisionCore.__name__ == "VisionCore"
    assert callable(simcam.render) and callable(simcam.world_from_board)
    with pytest.raises(AttributeError):
        _ = vision.no_such_name


def test_package_names_survive_their_submodules_being_imported_first() -> None:
    """A submodule imported by its full name becomes an attribute of its package; none may be named
    like a function the package offers (``render`` once was both)."""
    import importlib
    import pkgutil

    for package_name in ("services.vision", "services.simcam"):
        package = importlib.import_module(package_name)
        submodules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        assert not submodules & set(package.__all__), package_name
