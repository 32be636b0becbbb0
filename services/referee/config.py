"""Configuration of the referee (section [referee])."""

from __future__ import annotations

import msgspec

from services.common.section import Section


class RefereeConfig(Section):
    #: the append-only journal of every event the referee acted on (rebuilt from at start).
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
    #: processes the game cannot go on without: when one is silent for bus.peer_timeout_s the game
    #: pauses. The ai is not required: the referee falls back to the engine in-process.
    required_peers: list[str] = msgspec.field(default_factory=lambda: ["vision", "actuator", "led"])
    #: an actuator command with no report for this long is queried (and re-sent if the actuator never
    #: saw it).
    command_timeout_s: float = 30.0
    #: a pending command or move request with no news for this long is asked about again (a report
    #: lost with a restart of the bus or the actuator is then recovered within this).
    requery_s: float = 1.0
    #: default colour order of tasks 2 and 3 ("b"/"w" per placement); the operator can override it.
    colours: str = "bbww"
    #: default opening square of the device in task 4 (1..9).
    first_square: int = 5
    #: when the journal holds more records than this, it is replaced by one checkpoint of the state
    #: (atomically), so that a restart never has a long replay.
    compact_records: int = 5000
    #: period of the timer that checks timeouts and liveness.
    tick_period_s: float = 0.1
    #: the game state is re-published this often even when nothing changed.
    publish_period_s: float = 1.0
