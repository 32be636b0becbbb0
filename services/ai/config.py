"""Configuration of the AI process (section [ai])."""

from __future__ import annotations

from services.common.section import Section


class AiConfig(Section):
    #: seed of the engine's random choices; the request's own seed wins when it has one.
    seed: int = 0
