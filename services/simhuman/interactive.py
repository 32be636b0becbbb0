"""Policy "you": a real person at the terminal plays through the simulator.

On the person's turn the board is printed and a line is read:

- ``N`` (1..9): put a piece of your colour on square N; then Enter presses the button;
- ``m A B``: move the piece on square A to square B (cheating, or correcting);
- ``r A``: take the piece on square A off the board;
- an empty line: press the button now (with or without having moved).

Several commands may come before the final Enter: after each one the prompt asks again. The streams are
injected, so tests drive it with ``io.StringIO``; the service reads stdin from a worker thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Callable
from typing import Any, Final, TypeVar

from messages import GameState, WorldAction

from .person import COLOUR_OF, Act, Person, Press, Say, Step

T = TypeVar("T")


PROMPT: Final = "your move: square 1-9, 'm A B' move, 'r A' remove, Enter = press the button > "
_ids = itertools.count()


class InputClosed(EOFError):
    """The terminal closed (end of input): the person left."""


def render_board(board: str) -> str:
    """The board as three rows with square numbers in the empty squares."""
    cells = [c if c != "." else str(i + 1) for i, c in enumerate(board)]
    return "\n".join(" " + " | ".join(cells[r * 3 : r * 3 + 3]) for r in range(3))


def parse_command(line: str) -> tuple[str, list[int]] | None:
    """``"5"`` -> ("place", [5]); ``"m 1 2"`` -> ("move", [1, 2]); ``"r 3"`` -> ("remove", [3]);
    ``""`` -> ("press", []); None when the line makes no sense."""
    parts = line.strip().lower().split()
    try:
        numbers = [int(p) for p in parts[1:]] if parts and parts[0] in ("m", "r") else [int(p) for p in parts]
    except ValueError:
        return None
    if any(not 1 <= n <= 9 for n in numbers):
        return None
    if not parts:
        return "press", []
    if parts[0] == "m" and len(numbers) == 2:
        return "move", numbers
    if parts[0] == "r" and len(numbers) == 1:
        return "remove", numbers
    if parts[0] not in ("m", "r") and len(numbers) == 1:
        return "place", numbers
    return None


def interactive_turn(
    person: Person, state: GameState, read_line: Callable[[], str], write: Callable[[str], None]
) -> list[Step]:
    """Ask the person at the terminal for this turn. Blocks on ``read_line`` (which returns "" at end of
    input, like ``TextIO.readline``). Returns the steps, ending with the button press.

    :raises InputClosed: when the input ends before the button is pressed.
    """
    me, _ = person.colours(state)
    colour = COLOUR_OF[me]
    if state.illegal:
        write(f"\nthe referee says: {state.illegal} ({state.message})\n")
    write(f"\nyou play {colour} ({me}); move {len(state.moves) + 1}\n{render_board(state.board)}\n")
    steps: list[Step] = []
    while True:
        write(PROMPT)
        line = read_line()
        if line == "":
            raise InputClosed("the terminal closed")
        command = parse_command(line)
        if command is None:
            write("? type a square 1-9, 'm A B', 'r A', or just Enter\n")
            continue
        kind, numbers = command
        if kind == "press":
            steps.append(Press(person.config.press_s))
            return steps
        action_id = f"you-{next(_ids)}"
        if kind == "place":
            action = WorldAction(action_id=action_id, kind="place", colour=colour, to_square=numbers[0])
        elif kind == "move":
            action = WorldAction(
                action_id=action_id, kind="move", from_square=numbers[0], to_square=numbers[1]
            )
        else:
            action = WorldAction(action_id=action_id, kind="remove", from_square=numbers[0])
        steps += [Say(f"you: {line.strip()}"), Act(action)]
        write("done; Enter presses the button (or type another command)\n")


def in_daemon_thread(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run a blocking ``fn`` (a terminal read) in a daemon thread. Unlike the default executor, a
    thread stuck in ``readline`` then does not keep the process alive after SIGTERM."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def work() -> None:
        try:
            result = fn(*args)
        except BaseException as exc:  # handed over to the awaiting coroutine
            outcome: tuple[Any, BaseException | None] = (None, exc)
        else:
            outcome = (result, None)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody is waiting
            loop.call_soon_threadsafe(settle, *outcome)

    threading.Thread(target=work, name="simhuman-terminal", daemon=True).start()
    return future
