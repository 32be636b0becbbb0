"""Configuration of the simulated person (section [simhuman])."""

from __future__ import annotations

from services.common.config import Section


class SimHumanConfig(Section):
    #: "perfect", "random", "greedy", "mistake:N", or "you" (a real person at the terminal).
    policy: str = "perfect"
    #: misbehaviours to commit, e.g. ["two-pieces"]; names as in the simulator's docs.
    misbehave: list[str] = []
    seed: int = 0
    #: seconds the person thinks before acting (divided by the speed factor).
    think_s: float = 1.5
