"""The game's vocabulary: every named word is one of its type's values, and the wire keeps plain strings."""

from __future__ import annotations

import doctest
from typing import get_args

import msgspec
import pytest

from messages import GameState
from messages import game as G

WORDS = {
    G.Phase: ("PHASES", G.PHASES),
    G.Result: ("RESULTS", G.RESULTS),
    G.Illegal: ("ILLEGAL_KINDS", G.ILLEGAL_KINDS),
    G.Activity: ("ACTIVITIES", G.ACTIVITIES),
}


def test_the_tuples_hold_every_value_but_the_empty_one() -> None:
    for kind, (_, words) in WORDS.items():
        assert set(words) == set(get_args(kind)) - {""}
        assert len(set(words)) == len(words)


def test_every_constant_is_a_word_of_the_vocabulary() -> None:
    values = {v for kind in WORDS for v in get_args(kind)}
    named = {getattr(G, name) for name in dir(G) if name.isupper()}
    named = {v for v in named if isinstance(v, str)}
    assert named == values


def test_the_wire_carries_the_same_strings() -> None:
    state = GameState(revision=7, phase=G.PAUSED, paused_phase=G.JUDGED, result=G.DRAW, activity=G.PLACING)
    raw = msgspec.json.decode(msgspec.json.encode(state))
    words = (raw["phase"], raw["paused_phase"], raw["result"], raw["activity"])
    assert words == ("paused", "judged", "draw", "placing")
    assert msgspec.json.decode(msgspec.json.encode(state), type=GameState) == state


def test_a_word_that_is_not_in_the_vocabulary_does_not_decode() -> None:
    with pytest.raises(msgspec.ValidationError, match="phase"):
        msgspec.json.decode(msgspec.json.encode(GameState(revision=1, phase="idel")), type=GameState)  # type: ignore[arg-type]


def test_doctests() -> None:
    assert doctest.testmod(G).failed == 0
