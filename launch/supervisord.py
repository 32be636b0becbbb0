"""supervisord, as the stack runs it: its main loop turns at least every :data:`POLL_S` seconds.

supervisord notices a dead child when its output pipe closes, reaps it at the end of that turn of its
loop, and spawns the successor on the *next* turn, which waits in ``poll`` for up to 1 s (hard-coded)
unless some output or request arrives first. On a quiet stack that second turn made a kill -9 cost up
to a whole second before the restart even began. With the poll capped, the restart begins within
``POLL_S``; the cost is a few hundred microseconds of supervisord's time per turn.

Run as ``python -m launch.supervisord -n -c FILE`` (the same arguments as ``supervisord``);
:class:`launch.stack.Stack` does. The generated ``supervisord.conf`` works with either.
"""

from __future__ import annotations

from typing import Any, Final

from supervisor import poller, supervisord

#: the longest supervisord's loop waits for an event (seconds).
POLL_S: Final = 0.1


def cap_poll(cls: Any, most_s: float = POLL_S) -> None:
    """Make ``cls.poll(timeout)`` wait at most ``most_s`` (idempotent)."""
    if getattr(cls.poll, "_capped", False):
        return
    original = cls.poll

    def poll(self: Any, timeout: float) -> Any:
        return original(self, min(timeout, most_s))

    poll._capped = True  # type: ignore[attr-defined]
    cls.poll = poll


def main() -> None:
    cap_poll(poller.Poller)
    supervisord.main()


if __name__ == "__main__":
    main()
