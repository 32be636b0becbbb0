"""Button debounce: bounces, short glitches, a long press, seeded random bounce bursts."""

from __future__ import annotations

import random

import pytest

from services.led.debounce import Debouncer

HOLD = 0.030


def feed(d: Debouncer, edges: list[tuple[float, bool]], until: float) -> list[float]:
    """Feed raw edges, poll at every deadline up to ``until``; return the times presses were counted."""
    presses: list[float] = []
    for t, level in edges:
        while (dl := d.deadline()) is not None and dl <= t:
            if d.poll(dl):
                presses.append(dl)
        if d.update(level, t):
            presses.append(t)
    while (dl := d.deadline()) is not None and dl <= until:
        if d.poll(dl):
            presses.append(dl)
    return presses


def test_clean_press_and_release() -> None:
    d = Debouncer(HOLD)
    presses = feed(d, [(1.0, True), (1.2, False)], until=2.0)
    assert presses == [pytest.approx(1.0 + HOLD)]
    assert d.last_press_at == 1.0 and not d.stable


def test_bounces_make_one_press() -> None:
    d = Debouncer(HOLD)
    edges = [(1.0, True), (1.001, False), (1.002, True), (1.004, False), (1.005, True)]
    edges += [(1.3, False), (1.3005, True), (1.301, False)]
    assert len(feed(d, edges, until=2.0)) == 1
    assert d.presses == 1 and d.edges == 8


def test_short_glitches_are_ignored() -> None:
    d = Debouncer(HOLD)
    edges = [(t, lvl) for k in range(20) for t, lvl in ((1.0 + k * 0.1, True), (1.0 + k * 0.1 + 0.02, False))]
    assert feed(d, edges, until=5.0) == []
    assert d.presses == 0


def test_long_press_is_one_press_and_the_next_needs_a_release() -> None:
    d = Debouncer(HOLD)
    assert len(feed(d, [(0.0, True)], until=60.0)) == 1
    # a glitch of the release while held down is no release
    assert feed(d, [(61.0, False), (61.01, True)], until=62.0) == []
    assert len(feed(d, [(70.0, False), (70.5, True), (70.6, False)], until=71.0)) == 2 - 1
    assert d.presses == 2


def test_poll_is_needed_without_further_edges() -> None:
    d = Debouncer(HOLD)
    assert not d.update(True, 0.0)
    assert d.deadline() == pytest.approx(HOLD)
    assert not d.poll(0.029)
    assert d.poll(0.031) and not d.poll(0.5)
    assert d.deadline() is None


def test_zero_hold_counts_every_press_and_negative_is_refused() -> None:
    d = Debouncer(0.0)
    assert len(feed(d, [(0.0, True), (0.001, False), (0.002, True), (0.003, False)], until=1.0)) == 2
    with pytest.raises(ValueError):
        Debouncer(-1.0)


@pytest.mark.parametrize("seed", range(20))
def test_random_bounce_bursts(seed: int) -> None:
    """Presses with seeded random bounce bursts (each bounce shorter than the hold) always count once."""
    rng = random.Random(seed)
    d = Debouncer(HOLD)
    edges: list[tuple[float, bool]] = []
    t = 1.0
    presses = rng.randint(1, 6)
    for _ in range(presses):
        for level in (True, False):
            for _ in range(rng.randint(0, 5)):  # bounce: the opposite level briefly, then back
                edges.append((t, level))
                t += rng.uniform(0.0002, 0.004)
                edges.append((t, not level))
                t += rng.uniform(0.0002, 0.004)
            edges.append((t, level))
            t += rng.uniform(HOLD + 0.01, 0.5)  # then the level holds
    assert len(feed(d, edges, until=t + 1)) == presses
