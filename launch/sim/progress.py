"""Progress: one live line per task (task, move, phase) while the run goes on."""

from __future__ import annotations

import shutil
from typing import Final, TextIO

from messages import GameState

from .plan import TaskPlan
from .table import TaskResult

#: The terminal's size when it cannot be asked (columns, lines).
FALLBACK_TERMINAL: Final = (100, 20)
#: Back to the line's start and clear it: the live line is redrawn in place.
CLEAR_LINE: Final = "\r\x1b[K"


class Progress:
    """One live line (task, move, phase), redrawn in place on a terminal; on anything else a line is
    printed when the phase changes. ``stream=None`` shows nothing."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self.tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())
        self._last = ""

    def show(self, plan: TaskPlan, state: GameState | None, note: str = "") -> None:
        """Show where ``plan`` stands: ``state`` (the referee's) if any, and ``note``."""
        if self.stream is None:
            return
        if state is None:
            text = f"task {plan.label}: {note}"
        else:
            board = state.board
            text = (
                f"task {plan.label} {state.game_id} move {state.move_number} {state.phase}"
                f"{' (' + state.activity + ')' if state.activity else ''} board {board}"
                f"{' ' + state.result if state.result else ''}"
            )
            if note:
                text += f" {note}"
        if text == self._last:
            return
        self._last = text
        if self.tty:
            width = shutil.get_terminal_size(FALLBACK_TERMINAL).columns - 1
            self.stream.write(CLEAR_LINE + text[:width])
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, result: TaskResult) -> None:
        """Close the task's line with its outcome and verdict."""
        if self.stream is None:
            return
        row = result.row()
        text = f"task {result.plan.label}: {row['outcome']} -> {'PASS' if result.verdict.ok else 'FAIL'}"
        if self.tty:
            self.stream.write(CLEAR_LINE)
        self.stream.write(text + "\n")
        self.stream.flush()
        self._last = ""
