"""The examples in the gomoku engine's docstrings run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["engine.gomoku", "engine.gomoku.patterns", "engine.gomoku.board"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
