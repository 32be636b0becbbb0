"""Fault injection: counters of the misbehaviours the emulated controller still has to commit.

Kinds (``simworld.faults`` entries like ``"drop:1"``, or a ``sim.fault`` message):

- ``drop``: the next move across the table (x-y) made while holding a piece drops it half-way (the
  piece lands there);
- ``lose-reply``: the next command reply (``ok``/``error:N``, or a reply frame) is not sent, although the
  command was carried out (a frame retry then gets the stored reply);
- ``garbage``: random bytes come before the next command reply (GRBL: one line of junk);
- ``stall``: from the next byte received, the controller neither reads nor answers for
  ``simworld.stall_s`` real seconds; what arrived meanwhile is processed afterwards (a UART FIFO);
- ``alarm``: the next move in progress is stopped by a hard-limit alarm (GRBL ``ALARM:1``; frame alarm 1).
"""

from __future__ import annotations

from collections import Counter
from typing import Final

KINDS: Final = ("drop", "lose-reply", "garbage", "stall", "alarm")


class FaultSpecError(ValueError):
    """A fault specification that is not ``KIND`` or ``KIND:COUNT`` with a known kind."""


def parse_fault(spec: str) -> tuple[str, int]:
    """``"drop:2"`` -> ``("drop", 2)``; ``"garbage"`` -> ``("garbage", 1)``.

    :raises FaultSpecError: for an unknown kind or a count that is not a positive integer.
    """
    kind, _, count_text = spec.strip().partition(":")
    if kind not in KINDS:
        raise FaultSpecError(f"unknown fault {kind!r} in {spec!r}; known: {', '.join(KINDS)}")
    try:
        count = int(count_text) if count_text else 1
    except ValueError:
        raise FaultSpecError(f"fault count must be an integer in {spec!r}") from None
    if count < 1:
        raise FaultSpecError(f"fault count must be at least 1 in {spec!r}")
    return kind, count


class Faults:
    """Pending faults by kind. Not thread-safe (the controller's lock covers it)."""

    def __init__(self, specs: list[str] | tuple[str, ...] = ()) -> None:
        self._pending: Counter[str] = Counter()
        #: how many of each kind were committed so far.
        self.committed: Counter[str] = Counter()
        for spec in specs:
            self.add(*parse_fault(spec))

    def add(self, kind: str, count: int = 1) -> None:
        """Arm ``count`` more faults of ``kind``. :raises FaultSpecError: for an unknown kind."""
        if kind not in KINDS:
            raise FaultSpecError(f"unknown fault {kind!r}; known: {', '.join(KINDS)}")
        self._pending[kind] += max(0, int(count))

    def pending(self, kind: str) -> int:
        return self._pending[kind]

    def take(self, kind: str) -> bool:
        """Use up one fault of ``kind`` if one is armed; returns whether to commit it now."""
        if self._pending[kind] <= 0:
            return False
        self._pending[kind] -= 1
        self.committed[kind] += 1
        return True
