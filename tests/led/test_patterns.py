"""The panel as a pure function of the referee's game state: every phase, result and illegal kind."""

from __future__ import annotations

import itertools

import pytest

from messages import GameState
from messages.game import ACTIVITIES, ILLEGAL_KINDS, PHASES, RESULTS
from services.led.patterns import (
    ACTIVITY_PATTERN,
    ILLEGAL,
    LOOKS,
    OTHER_ILLEGAL_FLASHES,
    PHASE_PATTERN,
    RESULT_PATTERN,
    UnknownMode,
    led_level,
    no_referee_panel,
    panel_for,
)

#: what the panel should show in each phase (the test runs over the vocabulary's phases, not this table's
#: keys, so a phase added to messages.game without a pattern fails here).
EXPECTED_PHASE = {
    "idle": "idle",
    "task-chosen": "ready",
    "device-to-move": "thinking",
    "move-requested": "thinking",
    "command-sent": "moving",
    "placement-confirmed": "moving",
    "waiting-for-person": "your-turn",
    "button-pressed": "checking",
    "waiting-for-stable": "checking",
    "judged": "checking",
    "game-over": "idle",
    "paused": "paused",
}


def state(**fields: object) -> GameState:
    return GameState(revision=1, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize("phase", PHASES)
def test_every_phase(phase: str) -> None:
    panel = panel_for(state(phase=phase))
    assert panel.pattern == EXPECTED_PHASE[phase]
    # the lamp: on exactly while the device's move is finished and confirmed, i.e. waiting for the person
    assert panel.lamp is (phase == "waiting-for-person")
    assert panel.leds["lamp"] == ("on" if panel.lamp else "off")
    assert panel.text


def test_every_word_of_the_vocabulary_has_a_pattern() -> None:
    assert set(PHASE_PATTERN) == set(PHASES) == set(EXPECTED_PHASE)
    assert set(RESULT_PATTERN) == set(RESULTS)
    assert set(ACTIVITY_PATTERN) == set(ACTIVITIES)
    assert set(ILLEGAL) == set(ILLEGAL_KINDS)
    for name in [*PHASE_PATTERN.values(), *RESULT_PATTERN.values(), *ACTIVITY_PATTERN.values()]:
        assert name in LOOKS, name


def test_lamp_goes_out_when_the_button_is_pressed() -> None:
    assert panel_for(state(phase="waiting-for-person", lamp=True)).lamp
    assert not panel_for(state(phase="button-pressed", lamp=True)).lamp


#: what the panel should show at the end of a game, by result.
EXPECTED_RESULT = {
    "device-won": "device-won",
    "person-won": "person-won",
    "draw": "draw",
    "done": "done",
    "stopped": "idle",
}


@pytest.mark.parametrize("result", RESULTS)
def test_results(result: str) -> None:
    panel = panel_for(state(phase="game-over", result=result))
    assert panel.pattern == EXPECTED_RESULT[result] and not panel.lamp


@pytest.mark.parametrize("kind", [*ILLEGAL, "something-new"])
@pytest.mark.parametrize("phase", ["waiting-for-person", "judged", "waiting-for-stable", "button-pressed"])
def test_illegal_kinds_have_their_own_blink_code(kind: str, phase: str) -> None:
    panel = panel_for(state(phase=phase, illegal=kind))
    assert panel.pattern == f"illegal-{kind}"
    flashes = ILLEGAL.get(kind, (OTHER_ILLEGAL_FLASHES, ""))[0]
    assert panel.leds["error"] == f"flash-{flashes}"
    assert panel.lamp is (phase == "waiting-for-person")


def test_illegal_codes_are_distinct() -> None:
    codes = [code for code, _ in ILLEGAL.values()]
    assert len(set(codes)) == len(codes) and OTHER_ILLEGAL_FLASHES not in codes
    # every kind the referee documents has its own code
    documented = ILLEGAL_KINDS
    assert set(documented) <= set(ILLEGAL)


def test_illegal_is_not_shown_once_the_device_plays_on() -> None:
    assert panel_for(state(phase="device-to-move", illegal="two-pieces")).pattern == "thinking"


@pytest.mark.parametrize("phase", ["command-sent", "placement-confirmed", "device-to-move"])
def test_restoring_a_cheated_piece(phase: str) -> None:
    panel = panel_for(state(phase=phase, activity="restoring"))
    assert panel.pattern == "restoring" and not panel.lamp


def test_activity_refines_the_phase() -> None:
    assert panel_for(state(phase="task-chosen", activity="placing")).pattern == "moving"
    assert panel_for(state(phase="judged", activity="judging")).pattern == "checking"
    # the person's turn wins over any stale activity: the lamp state must be unambiguous
    assert panel_for(state(phase="waiting-for-person", activity="placing")).pattern == "your-turn"


def test_process_down_and_fault_take_priority() -> None:
    down = panel_for(state(phase="waiting-for-person", peers_down=["vision"]))
    assert down.pattern == "process-down" and "vision" in down.text
    assert down.lamp  # the lamp still follows the phase
    mine = panel_for(state(phase="device-to-move"), ["referee"])
    assert mine.pattern == "process-down" and "referee" in mine.text
    fault = panel_for(state(phase="paused", fault="actuator failed 3 times", peers_down=["ai"]))
    assert fault.pattern == "fault" and "actuator failed" in fault.text
    assert panel_for(state(phase="paused", paused_phase="device-to-move")).pattern == "paused"


def test_all_patterns_look_different() -> None:
    looks = {(False, look.status, look.error) for name, look in LOOKS.items() if name != "your-turn"}
    looks.add((True, LOOKS["your-turn"].status, LOOKS["your-turn"].error))
    assert len(looks) == len(LOOKS)
    illegal = {(False, "off", f"flash-{code}") for code, _ in ILLEGAL.values()}
    assert not illegal & looks


def test_message_is_shown() -> None:
    assert "square 5" in panel_for(state(phase="command-sent", message="placing on square 5")).text


def test_before_the_referee_is_seen() -> None:
    assert no_referee_panel(0.0).pattern == "idle"
    late = no_referee_panel(1.0)
    assert late.pattern == "process-down" and "referee" in late.text


def test_led_levels() -> None:
    ts = [i * 0.01 for i in range(400)]
    assert not any(led_level("off", t) for t in ts) and all(led_level("on", t) for t in ts)
    assert sum(led_level("blink-slow", t) for t in ts) == pytest.approx(200, abs=2)
    assert sum(led_level("heartbeat", t) for t in ts) == pytest.approx(20, abs=2)
    # flash-3: three separate lit runs per cycle
    cycle = [led_level("flash-3", i * 0.01) for i in range(205)]
    runs = sum(1 for a, b in itertools.pairwise([False, *cycle]) if b and not a)
    assert runs == 3
    with pytest.raises(UnknownMode):
        led_level("disco", 0.0)
