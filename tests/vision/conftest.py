"""Fixtures of the vision tests."""

from __future__ import annotations

import pytest

from services.vision.detector import doubt


@pytest.fixture
def rules_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The detector's rules without its learned second opinion (services/vision/detector/doubt.py): what
    a test of a rule's own effect reads, where taking the rule away leaves a wrong reading that the
    network would make unknown."""
    monkeypatch.setattr(doubt, "_weights", lambda: None)
