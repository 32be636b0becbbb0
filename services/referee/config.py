"""Configuration of the referee (section [referee])."""

from __future__ import annotations

from services.common.config import Section


class RefereeConfig(Section):
    journal: str = "{state}/referee.journal"
    #: how long to wait for a stable observation after the button before telling the person.
    stable_timeout_s: float = 20.0
    #: the contest's budget per placement, from command to confirmation.
    placement_budget_s: float = 15.0
    #: how long vision gets to confirm a finished placement before the referee recovers.
    confirm_timeout_s: float = 10.0
    #: the AI process must answer within this; otherwise the referee asks the engine in-process.
    ai_timeout_s: float = 1.0
    #: the engine's level and the seed of its random choices among equally good moves.
    level: str = "perfect"
    seed: int = 0
    #: retries of a placement that vision did not confirm before the referee reports a fault.
    placement_retries: int = 2
