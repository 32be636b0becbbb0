"""Configuration of the simulated person (section [simhuman])."""

from __future__ import annotations

from services.common.section import Section


class SimHumanConfig(Section):
    #: "perfect", "random", "greedy", "mistake:N", "you" (a real person at the terminal)
    #: or "web" (a real person clicking in the browser console; the simulated person does nothing).
    policy: str = "perfect"
    #: misbehaviours to commit, e.g. ["two-pieces"]; names as in the simulator's docs.
    misbehave: list[str] = []
    seed: int = 0
    #: seconds the person thinks before acting (divided by the speed factor).
    think_s: float = 1.5
    #: seconds the hand hovers over a square before putting a piece down (divided by the speed factor).
    reach_s: float = 0.4
    #: seconds the button is held down (divided by the speed factor).
    press_s: float = 0.15
    #: hand-in-view: seconds the hand stays over the board after the button press (divided by speed).
    hand_linger_s: float = 3.0
    #: contact bounces at each button edge (extra short level changes), 0 = a clean switch.
    bounce: int = 0
    #: real seconds (a person's patience, not scaled by the speed factor): when the lamp still asks for
    #: this long after a press, the person presses again (a press lost with a restart of the panel).
    repress_s: float = 2.0
