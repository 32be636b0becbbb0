"""Packages whose public names are imported on first use.

A package that offers, say, a detector built on OpenCV would otherwise load OpenCV in every process that
merely imports the package's configuration module (importing ``pkg.config`` runs ``pkg/__init__.py``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package`` that imports ``name`` from its submodule
    ``where[name]`` on first use and keeps it in the package's namespace.

    A submodule must not be named like a name it offers: importing the submodule by its full name
    makes it an attribute of the package, which would then hide the name.

    :raises AttributeError: for a name the package does not offer.
    """

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{where[name]}", package), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
