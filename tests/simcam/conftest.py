"""Fixtures for the simulated camera's tests: the default table and camera."""

from __future__ import annotations

import pytest

from services.common.config import TableConfig, load
from services.simcam import CameraModel


@pytest.fixture(scope="session")
def table() -> TableConfig:
    return TableConfig()


@pytest.fixture(scope="session")
def camera() -> CameraModel:
    cfg = load(None)
    return CameraModel.from_config(cfg.simcam, cfg.table)
