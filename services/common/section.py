"""The base of every configuration section: a leaf module, so that a service's ``config.py`` needs nothing
else from :mod:`services.common`, and :mod:`services.common.config`, which assembles the sections, can
import them without a circle."""

from __future__ import annotations

import msgspec


class Section(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every configuration section: unknown keys are errors."""
