"""``sanzi sim``'s pure parts: planning the tasks, judging them against the world, the table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from launch import simrun
from launch.simrun import Observed, SimOptions, TaskPlan
from messages import GameState, GripperState, PieceState, PlacementRecord, WorldState


def _world(
    board: str, *, angle: float = 0.0, holding: int | None = None, table: tuple[int, ...] = ()
) -> WorldState:
    pieces = []
    ids = {"X": iter(range(0, 5)), "O": iter(range(5, 10))}
    for i, ch in enumerate(board):
        if ch in "XO":
            pieces.append(
                PieceState(
                    piece_id=next(ids[ch]),
                    colour="black" if ch == "X" else "white",
                    x_mm=0,
                    y_mm=0,
                    where="board",
                    square=i + 1,
                )
            )
    for ch in "XO":
        for pid in ids[ch]:
            where = "table" if pid in table else "supply"
            pieces.append(
                PieceState(
                    piece_id=pid, colour="black" if ch == "X" else "white", x_mm=0, y_mm=0, where=where
                )
            )
    return WorldState(
        board_center_mm=(200.0, 150.0),
        board_angle_deg=angle,
        pitch_mm=40.0,
        pieces=pieces,
        gripper=GripperState(x_mm=0, y_mm=0, z_mm=40, holding=holding),
        board=board,
    )


def _placement(square: int, colour: str = "black", *, n: int = 0, budget: bool = True) -> PlacementRecord:
    return PlacementRecord(
        command_id=f"c{n}", square=square, colour=colour, duration_s=2.0, within_budget=budget
    )


def _state(board: str, result: str, **kw: Any) -> GameState:
    return GameState(revision=9, game_id="g1", phase="game-over", board=board, result=result, **kw)


def test_plans_follow_the_contest_and_the_seed(config: Any) -> None:
    plans = simrun.plan_tasks(SimOptions(seed=3, speed=20), config)
    assert [p.task for p in plans] == [1, 2, 3, 4, 5, 6]
    one, two, three, four, five, six = plans
    assert one.squares == (5,) and one.colours == "b"
    assert len(set(two.squares)) == 4 and all(1 <= s <= 9 for s in two.squares)
    assert 15 <= abs(three.board_angle_deg) <= 40
    assert abs(three.board_x_mm - 200) <= 10 and abs(three.board_y_mm - 150) <= 10
    assert four.policy == "mistake:1" and four.first in (1, 3, 5, 7, 9) and four.expects_win
    assert five.policy == "perfect" and not five.misbehave
    assert six.misbehave == ("move-device-piece",) and six.expects_cheat
    assert plans == simrun.plan_tasks(SimOptions(seed=3, speed=20), config)
    assert plans != simrun.plan_tasks(SimOptions(seed=4, speed=20), config)
    assert one.timeout_s == simrun.task_timeout(20)


def test_options_override_the_person_and_multiply_games(config: Any) -> None:
    plans = simrun.plan_tasks(
        SimOptions(tasks=(4, 5), games=3, human="random", misbehave=("two-pieces",)), config
    )
    assert [(p.task, p.game) for p in plans] == [(4, 1), (4, 2), (4, 3), (5, 1), (5, 2), (5, 3)]
    assert {p.policy for p in plans} == {"random"}
    assert all(p.misbehave == ("two-pieces",) and p.expects_illegal for p in plans)
    assert not plans[0].expects_win  # no mistake promised: the device must only not lose
    assert len({p.human_seed for p in plans}) == 6
    assert plans[1].label == "4.2"
    with pytest.raises(simrun.SimError):
        simrun.plan_tasks(SimOptions(tasks=(7,)), config)
    with pytest.raises(simrun.SimError):
        simrun.plan_tasks(SimOptions(games=0), config)


def test_task1_passes_only_with_the_piece_in_the_world() -> None:
    plan = TaskPlan(task=1, squares=(5,), colours="b")
    good = _state("....X....", "done", squares=[5], colours="b", placements=[_placement(5)])
    assert simrun.judge(plan, Observed(state=good, world=_world("....X...."))).ok
    # the referee believes it, the world disagrees: fail
    verdict = simrun.judge(plan, Observed(state=good, world=_world(".........")))
    assert not verdict.ok and any("differs" in r for r in verdict.reasons)
    # a dropped piece on the table, a piece still in the gripper, a late placement
    late = _state("....X....", "done", squares=[5], colours="b", placements=[_placement(5, budget=False)])
    verdict = simrun.judge(plan, Observed(state=late, world=_world("....X....", holding=3, table=(4,))))
    assert len(verdict.reasons) == 3
    crash = simrun._replace(plan, budget_applies=False)
    assert simrun.judge(crash, Observed(state=late, world=_world("....X...."))).ok


def test_placement_tasks_check_colours_squares_and_the_turned_board() -> None:
    plan = TaskPlan(task=3, squares=(1, 9, 3, 7), colours="bbww", board_angle_deg=30.0)
    board = "X.O...O.X"
    state = _state(board, "done", squares=[1, 9, 3, 7], colours="bbww")
    assert simrun.judge(plan, Observed(state=state, world=_world(board, angle=30.0))).ok
    assert not simrun.judge(plan, Observed(state=state, world=_world(board, angle=0.0))).ok
    swapped = "O.X...X.O"
    verdict = simrun.judge(
        plan,
        Observed(
            state=_state(swapped, "done", squares=[1, 9, 3, 7], colours="bbww"),
            world=_world(swapped, angle=30.0),
        ),
    )
    assert not verdict.ok and any("expected" in r for r in verdict.reasons)


def test_games_are_judged_on_the_world_board() -> None:
    four = TaskPlan(task=4, policy="mistake:1", first=5)
    won = "XXXOO...."
    opened_elsewhere = _state(won, "device-won", device_colour="black", moves=[1, 4, 2, 5, 3])
    verdict = simrun.judge(four, Observed(state=opened_elsewhere, world=_world(won)))
    assert [r for r in verdict.reasons if "opened" in r] == verdict.reasons != []
    state = _state(won, "device-won", device_colour="black", moves=[5, 4, 1, 6, 3])
    assert simrun.judge(four, Observed(state=state, world=_world(won))).ok
    drawn = _state("XOXXOOOXX", "draw", device_colour="black", moves=[5])
    verdict = simrun.judge(four, Observed(state=drawn, world=_world("XOXXOOOXX")))
    assert not verdict.ok and any("win" in r for r in verdict.reasons)
    five = TaskPlan(task=5)
    assert simrun.judge(
        five, Observed(state=_state("XOXXOOOXX", "draw", device_colour="white"), world=_world("XOXXOOOXX"))
    ).ok
    lost = _state("XXXOO....", "person-won", device_colour="white")
    assert not simrun.judge(five, Observed(state=lost, world=_world("XXXOO...."))).ok
    fake_draw = _state("XO.......", "draw", device_colour="white")
    assert not simrun.judge(five, Observed(state=fake_draw, world=_world("XO......."))).ok


def test_task6_needs_a_restored_cheat_and_illegal_games_need_a_report() -> None:
    six = TaskPlan(task=6, misbehave=("move-device-piece",))
    board = "XOXXOOOXX"
    no_cheat = _state(board, "draw", device_colour="white")
    assert not simrun.judge(six, Observed(state=no_cheat, world=_world(board))).ok
    cheat = _state(board, "draw", device_colour="white", cheats_restored=1)
    assert simrun.judge(six, Observed(state=cheat, world=_world(board))).ok
    illegal = TaskPlan(task=5, misbehave=("two-pieces",))
    assert not simrun.judge(illegal, Observed(state=no_cheat, world=_world(board))).ok
    assert simrun.judge(
        illegal,
        Observed(state=_state(board, "draw", device_colour="white", illegal_moves=1), world=_world(board)),
    ).ok


def test_missing_pieces_of_evidence_fail() -> None:
    plan = TaskPlan(task=5)
    assert not simrun.judge(plan, Observed()).ok
    assert not simrun.judge(plan, Observed(state=_state(".........", ""), world=None)).ok
    verdict = simrun.judge(
        plan, Observed(state=_state(".........", ""), world=_world("........."), timed_out=True)
    )
    assert any("within" in r for r in verdict.reasons)


def test_table_and_summary() -> None:
    plan = TaskPlan(task=1, squares=(5,), colours="b")
    state = _state("....X....", "done", squares=[5], colours="b", placements=[_placement(5)])
    ok = simrun.TaskResult(
        plan, Observed(game_id="g1", state=state, world=_world("....X....")), simrun.Verdict(True, [])
    )
    bad = simrun.TaskResult(
        TaskPlan(task=5), Observed(timed_out=True), simrun.Verdict(False, ["did not finish"])
    )
    text = simrun.format_table([ok, bad])
    lines = text.splitlines()
    assert lines[0].split() == [
        "task",
        "outcome",
        "placements",
        "s/placement",
        "max",
        "s",
        "illegal",
        "cheats",
        "verdict",
    ]
    assert lines[2].split() == ["1", "done", "1", "2.00", "2.00", "0", "0", "PASS"]
    assert lines[3].split()[:2] == ["5", "timeout"] and lines[3].endswith("FAIL")
    assert "1/2 tasks" in text and "task 5: did not finish" in text
    data = simrun.summary([ok, bad], SimOptions(), 12.0)
    assert data["ok"] is False and data["tasks"][0]["world_board"] == "....X...."


def test_small_helpers() -> None:
    assert (
        simrun.winner("XXX......") == "X"
        and simrun.winner("O...O...O") == "O"
        and simrun.winner("XOXXOOOXX") == ""
    )
    assert simrun._angle_diff(44.0, -44.0) == pytest.approx(-2.0)
    assert simrun._angle_diff(30.0, 30.0) == 0.0
    assert simrun.world_is_reset(_world("........."))
    assert not simrun.world_is_reset(_world("....X...."))


def test_simulator_config_rebases_state_and_sets_seeds(config: Any) -> None:
    cfg = simrun.simulator_config(config, speed=20, seed=7, calibrate=False)
    state = Path(cfg.runtime.state_dir)
    assert state == Path(config.runtime.dir) / simrun.SIM_STATE_DIR
    assert cfg.referee.journal.startswith(str(state) + "/")
    assert cfg.actuator.state_file.startswith(str(state) + "/")
    assert cfg.simworld.speed == 20 and cfg.simhuman.seed == 7 and cfg.referee.seed == 7
    assert cfg.camera.source == "sim" and cfg.actuator.port == cfg.simworld.serial_link
    with pytest.raises(simrun.SimError):
        simrun.simulator_config(config, speed=0, seed=0, calibrate=False)
    (state / "junk").parent.mkdir(parents=True, exist_ok=True)
    (state / "junk").write_text("x")
    simrun.fresh_state(cfg)
    assert state.is_dir() and not (state / "junk").exists()


def test_simulator_calibration_matches_the_simulated_camera(config: Any) -> None:
    """The homography found from the rendered markers maps pixels to the table as the camera model does."""
    import numpy as np

    from services.simcam.camera import CameraModel

    homography, error_mm = simrun.calibrate_simulator(config)
    assert 0 <= error_mm < 1.0
    found = np.asarray(homography).reshape(3, 3)
    truth = CameraModel.from_config(config.simcam, config.table).image_to_table_homography()
    for u, v in [(320, 240), (100, 80), (540, 400)]:
        a = found @ (u, v, 1.0)
        b = truth @ (u, v, 1.0)
        assert np.allclose(a[:2] / a[2], b[:2] / b[2], atol=1.0)


def test_image_angle_follows_the_calibration(config: Any) -> None:
    plan = TaskPlan(task=3, board_angle_deg=30.0)
    assert simrun.image_angle(config, plan) == 30.0  # no calibration: the table's angle
    homography, _ = simrun.calibrate_simulator(config)
    calibrated = simrun.stack_module.merge(config, {"calibration": {"homography": homography}})
    seen = simrun.image_angle(calibrated, plan)
    assert abs(seen - 30.0) < 5.0  # the simulated camera is slightly turned and tilted
    assert abs(simrun.image_angle(calibrated, TaskPlan(task=3, board_angle_deg=-30.0)) + 30.0) < 5.0


async def test_session_closes_even_with_a_socket_left_open(config: Any) -> None:
    """A caller's socket left open on the session's context must not hang the exit (the stack would
    then never be stopped)."""
    from services.bus.client import Subscriber

    async with simrun.SimSession(config) as session:
        Subscriber(session.ctx, config.bus, ["vision."], name="left-open")
    assert session.ctx.closed


def test_the_tasks_are_the_referees_and_each_module_says_its_job() -> None:
    import ast
    import importlib
    import pkgutil

    from launch import sim
    from services.referee import machine

    assert set(simrun.ALL_TASKS) == machine.PLACEMENT_TASKS | machine.GAME_TASKS
    for info in pkgutil.iter_modules(sim.__path__):
        module = importlib.import_module(f"launch.sim.{info.name}")
        assert module.__doc__, f"launch.sim.{info.name} has no docstring"
        tree = ast.parse(Path(module.__file__ or "").read_text())
        guards = [
            h for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler) and "ImportError" in ast.dump(h)
        ]
        assert not guards, f"launch.sim.{info.name} guards an in-tree import"
    assert all(hasattr(simrun, name) for name in simrun.__all__)
