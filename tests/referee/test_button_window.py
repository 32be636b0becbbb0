"""Issue 11: the person's move is judged on the first frame captured after the button press when that
frame ends a clear, agreeing window (which may have begun before the press); a hand still in view at the
press means a fresh window after it; nothing captured only before the press is ever judged.

The pure machine, and the shell's choice of held views (:func:`services.referee.service.views_after_press`)
folded through it as the shell does right after a press.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any

from messages import BoardObservation
from services.referee import judge as J
from services.referee import machine as M
from services.referee.events import Log, Observation, RequestMove
from services.referee.inputs import HELD_VIEWS, views_after_press

from .drive import Drive

#: 30 fps.
FRAME_S = 1 / 30
STABLE_FRAMES = 6


def _at_second_turn() -> Drive:
    """Task 5: the person played 1, the device answered; the person's turn."""
    drive = Drive()
    drive.task(5)
    drive.person_move(1)
    drive.device_turn()
    assert drive.phase == M.WAITING_FOR_PERSON
    return drive


def _frame(board: str, capture_s: float, window_s: float, agreeing: int, **kw: Any) -> BoardObservation:
    """A frame as vision publishes it: stable once ``agreeing`` reaches the window's length."""
    fields: dict[str, Any] = {
        "found": True,
        "occluded": False,
        "stable": agreeing >= STABLE_FRAMES,
        "agreeing_frames": agreeing,
        "capture_ns": int(capture_s * 1e9),
        "window_start_ns": int(window_s * 1e9) if agreeing else 0,
    }
    fields.update(kw)
    return BoardObservation(frame_id=round(capture_s * 30), board=board, **fields)


def _see(drive: Drive, obs: BoardObservation, arrival_s: float = 0.01) -> None:
    """``obs`` reaches the machine a little after its capture (the shell forwards stable views only)."""
    if obs.stable and M.wants_observation(drive.state):
        drive.feed(Observation(now=obs.capture_ns / 1e9 + arrival_s, obs=obs))


def _view_log(drive: Drive) -> dict[str, Any]:
    (entry,) = [a for a in drive.actions if isinstance(a, Log) and a.reason == "view after the press"]
    return entry.fields


def test_hand_gone_before_the_press_is_judged_on_the_first_frame_after_it() -> None:
    drive = _at_second_turn()
    moved = J.put(drive.state.board, 9, J.BLACK)
    hand_gone = drive.t + 0.5
    # the board, clear and unchanged since the hand left: a full window before the press already
    before = [_frame(moved, hand_gone + i * FRAME_S, hand_gone, i + 1) for i in range(10)]
    press_t = before[-1].capture_ns / 1e9 + 0.01
    drive.t = press_t
    drive.press(press_ns=int(press_t * 1e9))
    for obs in before:  # late arrivals of frames taken before the press decide nothing
        _see(drive, obs, arrival_s=0.05)
    assert drive.phase == M.WAITING_FOR_STABLE
    first_after = _frame(moved, before[-1].capture_ns / 1e9 + FRAME_S, hand_gone, 11)
    _see(drive, first_after)
    assert drive.phase == M.MOVE_REQUESTED and drive.state.moves[-1] == 9
    assert drive.has(RequestMove)
    fields = _view_log(drive)
    assert fields["frame"] == first_after.frame_id
    assert fields["window_from_press_ms"] < 0 < fields["captured_after_press_ms"]


def test_hand_in_view_at_the_press_waits_for_a_fresh_window() -> None:
    drive = _at_second_turn()
    moved = J.put(drive.state.board, 9, J.BLACK)
    press_t = drive.t + 0.5
    drive.t = press_t
    drive.press(press_ns=int(press_t * 1e9))
    # the hand over the board at the press and for a while after it: occluded, never stable
    t = press_t - 3 * FRAME_S
    for _ in range(12):
        _see(drive, _frame(moved, t, 0.0, 0, occluded=True, stable=False))
        t += FRAME_S
    assert drive.phase == M.WAITING_FOR_STABLE
    # the hand leaves: a window starting after the press, stable only once it is full
    hand_gone = t
    for i in range(STABLE_FRAMES - 1):
        _see(drive, _frame(moved, hand_gone + i * FRAME_S, hand_gone, i + 1))
        assert drive.phase == M.WAITING_FOR_STABLE
    _see(drive, _frame(moved, hand_gone + (STABLE_FRAMES - 1) * FRAME_S, hand_gone, STABLE_FRAMES))
    assert drive.phase == M.MOVE_REQUESTED and drive.state.moves[-1] == 9
    assert _view_log(drive)["window_from_press_ms"] > 0


def test_views_taken_only_before_the_press_are_never_judged_however_stable() -> None:
    drive = _at_second_turn()
    moved = J.put(drive.state.board, 9, J.BLACK)
    start = drive.t + 0.1
    frames = [_frame(moved, start + i * FRAME_S, start, i + 1) for i in range(20)]
    press_t = frames[-1].capture_ns / 1e9 + 0.001
    drive.t = press_t
    drive.press(press_ns=int(press_t * 1e9))
    for obs in frames:
        _see(drive, obs, arrival_s=0.2)
    assert drive.phase == M.WAITING_FOR_STABLE and drive.state.moves[-1] != 9
    held: deque[BoardObservation] = deque(frames, maxlen=HELD_VIEWS)
    assert views_after_press(held, drive.state) == []


def test_held_views_feed_the_first_frame_after_the_press_oldest_first() -> None:
    """The press reaches the referee after the panel's debounce: frames captured after the press that
    arrived before it are held by the shell and judged at once, the first of them deciding."""
    drive = _at_second_turn()
    moved = J.put(drive.state.board, 9, J.BLACK)
    start = drive.t + 0.1
    frames = [_frame(moved, start + i * FRAME_S, start, i + 1) for i in range(12)]
    press_t = frames[9].capture_ns / 1e9 + 0.002  # frames 10 and 11 were captured after the press
    held: deque[BoardObservation] = deque(maxlen=HELD_VIEWS)
    held.extend(frames)
    held.append(_frame(moved, frames[-1].capture_ns / 1e9 + 0.001, 0.0, 0, capture_ns=0, stable=True))
    assert views_after_press(held, drive.state) == [], "not waiting for a view: nothing to feed"
    drive.t = press_t + 0.03
    drive.press(press_ns=int(press_t * 1e9))
    views = views_after_press(held, drive.state)
    assert views == frames[10:], "after the press only, oldest first, never one without a capture time"
    for obs in views:  # as the shell does
        if not M.wants_observation(drive.state):
            break
        drive.feed(Observation(now=drive.now(0.001), obs=obs))
        if obs is views[0]:
            assert drive.phase == M.MOVE_REQUESTED
            assert _view_log(drive)["frame"] == frames[10].frame_id
    assert drive.phase == M.MOVE_REQUESTED and drive.state.moves[-1] == 9


def test_held_views_change_nothing_while_paused_or_outside_the_wait() -> None:
    drive = _at_second_turn()
    obs = _frame(J.put(drive.state.board, 9, J.BLACK), drive.t + 1.0, drive.t, STABLE_FRAMES)
    assert views_after_press([obs], drive.state) == []
    paused = dataclasses.replace(
        drive.state, phase=M.WAITING_FOR_STABLE, press_t=drive.t, peers_down=("vision",)
    )
    assert paused.paused
    assert views_after_press([obs], paused) == []
