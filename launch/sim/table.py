"""The results: one task's result as a row, the closing table and the JSON summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from services.referee.machine import GAME_TASKS

from .judge import Observed, Verdict
from .plan import SimOptions, TaskPlan

#: The closing table's columns.
HEADER: Final = ("task", "outcome", "placements", "s/placement", "max s", "illegal", "cheats", "verdict")


@dataclass
class TaskResult:
    plan: TaskPlan
    seen: Observed
    verdict: Verdict

    def row(self) -> dict[str, Any]:
        """The table's row as plain data (also the JSON summary's)."""
        state = self.seen.state
        placements = list(state.placements) if state else []
        durations = [p.duration_s for p in placements]
        return {
            "task": self.plan.task,
            "game": self.plan.game,
            "game_id": self.seen.game_id,
            "requirement": self.plan.requirement,
            "outcome": (state.result if state else "") or ("timeout" if self.seen.timed_out else "none"),
            "placements": len(placements),
            "placement_mean_s": round(sum(durations) / len(durations), 3) if durations else None,
            "placement_max_s": round(max(durations), 3) if durations else None,
            "illegal_moves": state.illegal_moves if state else 0,
            "cheats_restored": state.cheats_restored if state else 0,
            "moves": list(state.moves) if state else [],
            "referee_board": state.board if state else "",
            "world_board": self.seen.world.board if self.seen.world else "",
            "wall_s": round(self.seen.wall_s, 3),
            "policy": self.plan.policy if self.plan.task in GAME_TASKS else "",
            "misbehave": list(self.plan.misbehave),
            "ok": self.verdict.ok,
            "reasons": list(self.verdict.reasons),
            "notes": list(self.seen.notes),
        }


def _cells(result: TaskResult) -> tuple[str, ...]:
    """One line of the closing table, as text cells in :data:`HEADER`'s order."""
    row = result.row()
    mean = "-" if row["placement_mean_s"] is None else f"{row['placement_mean_s']:.2f}"
    worst = "-" if row["placement_max_s"] is None else f"{row['placement_max_s']:.2f}"
    return (
        result.plan.label,
        row["outcome"],
        str(row["placements"]),
        mean,
        worst,
        str(row["illegal_moves"]),
        str(row["cheats_restored"]),
        "PASS" if result.verdict.ok else "FAIL",
    )


def format_table(results: Sequence[TaskResult]) -> str:
    """The closing table: task, outcome, placements, time per placement, illegal moves, cheats, verdict;
    then the count of tasks that met their requirement and every failed task's reasons."""
    rows = [HEADER, *(_cells(r) for r in results)]
    reasons = [f"task {r.plan.label}: {reason}" for r in results for reason in r.verdict.reasons]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    passed = sum(r.verdict.ok for r in results)
    # The referee times a placement from its command to vision's confirmation on the wall clock and
    # checks the 15 s budget on it: exact at speed 1. On a faster simulator the motion shrinks with the
    # speed factor but vision's stability window and the software do not, so no single factor turns
    # these figures into device seconds; bench/actuator.py and `sanzi sim --speed 1` give those.
    lines.append("s/placement: wall seconds from the command to vision's confirmation")
    lines.append(f"{passed}/{len(results)} tasks met their contest requirement")
    return "\n".join(lines + reasons)


def summary(results: Sequence[TaskResult], options: SimOptions, wall_s: float) -> dict[str, Any]:
    """The run's results as plain data (``sanzi sim --summary``)."""
    return {
        "ok": bool(results) and all(r.verdict.ok for r in results),
        "speed": options.speed,
        "seed": options.seed,
        "wall_s": round(wall_s, 3),
        "tasks": [r.row() for r in results],
    }
