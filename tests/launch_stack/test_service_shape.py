"""Every process package has the one shape the README describes: ``config.py`` (its section),
``service.py`` with a shell class named ``<Name>Service``, and the same five lines of ``__main__.py``.

Read from the files (and the registry), so that a new process cannot start in another shape."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Final

import pytest

from launch.processes import PROCESSES
from services.common.section import Section
from services.common.shell import Service

SERVICES: Final = Path(__file__).resolve().parents[2] / "services"
#: every package under services/ but the shared one.
PACKAGES: Final = sorted(
    p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists() and p.name != "common"
)
#: the one form of ``__main__.py``.
MAIN: Final = re.compile(
    r'"""``python -m services\.(?P<package>\w+)``: [^\n]+\."""\n'
    r"\n"
    r"import sys\n"
    r"\n"
    r"from services\.common\.shell import run_service\n"
    r"\n"
    r"from \.service import (?P<shell>\w+Service)\n"
    r"\n"
    r'if __name__ == "__main__":\n'
    r"    sys\.exit\(run_service\((?P=shell)\)\)\n\Z"
)


def test_every_registered_service_module_is_a_package_here() -> None:
    modules = {p.module for p in PROCESSES if p.module.startswith("services.")}
    assert modules <= {f"services.{name}" for name in PACKAGES}


@pytest.mark.parametrize("package", PACKAGES)
def test_package_shape(package: str) -> None:
    folder = SERVICES / package
    match = MAIN.match((folder / "__main__.py").read_text())
    assert match is not None, f"services/{package}/__main__.py is not in the one form"
    assert match["package"] == package
    shell_name = match["shell"]
    assert shell_name.lower() == f"{package}service", f"{shell_name}: the rule is <Name>Service"
    shell = getattr(importlib.import_module(f"services.{package}.service"), shell_name)
    assert issubclass(shell, Service) and shell.name == package
    config = importlib.import_module(f"services.{package}.config")
    sections = [v for v in vars(config).values() if isinstance(v, type) and issubclass(v, Section)]
    assert any(s.__module__ == config.__name__ for s in sections), (
        f"services/{package}/config.py has no section"
    )
