"""The journal survives anything: truncation at every byte offset, a damaged record, and a crash of the
referee after every journaled event (before or after its actions were carried out) in a game with
cheating, an illegal move and failed placements, which then ends exactly as it would have."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from services.referee import machine as M
from services.referee.journal import HEADER_SIZE, Journal, encode_record, open_journal, read_records

from .harness import World, cheat_move, cheat_remove, first_free_person, scripted, two_pieces


def _world() -> World:
    """Task 6 with a cheat (device piece moved plus a move), two pieces at once, a removed device piece,
    a restore that drops its piece, and a device move that lands on the wrong square."""
    person = scripted(first_free_person(), cheat_move, two_pieces, cheat_remove)
    return World(person=person, faults={2: "drop", 4: "elsewhere:9"})


@pytest.fixture(scope="module")
def recorded() -> World:
    world = _world()
    world.start(6)
    world.run()
    assert world.state.result == M.DEVICE_WON
    assert world.state.cheats_restored == 1 and world.state.illegal_moves == 1
    return world


def test_the_game_journal_rebuilds_the_final_state(recorded: World, tmp_path: Path) -> None:
    path = tmp_path / "referee.journal"
    with Journal(path) as journal:
        for event in recorded.journal:
            journal.append(event)
    journal, events, recovery = open_journal(path)
    journal.close()
    assert recovery.problem == "" and recovery.records == len(recorded.journal)
    assert events == recorded.journal
    assert M.rebuild(events, M.initial_state(recorded.settings)) == recorded.state


def test_truncation_at_every_byte_offset_recovers(recorded: World, tmp_path: Path) -> None:
    records = [encode_record(e) for e in recorded.journal]
    data = b"".join(records)
    ends = []
    pos = 0
    for r in records:
        pos += len(r)
        ends.append(pos)
    # the state after each prefix of k records
    prefix_states = [M.initial_state(recorded.settings)]
    for event in recorded.journal:
        prefix_states.append(M.step(prefix_states[-1], event)[0])
    # A file per offset, cut by open_journal itself. On a busy disk creating thousands of files is slow,
    # so the files live in shared memory when there is some (same file system semantics for this).
    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path
    path = folder / "cut.journal"
    try:
        for offset in range(len(data) + 1):
            path.write_bytes(data[:offset])
            journal, events, recovery = open_journal(path)
            journal.close()
            k = sum(1 for end in ends if end <= offset)
            good = ends[k - 1] if k else 0
            assert len(events) == k and events == recorded.journal[:k], offset
            assert recovery.good_bytes == good and os.path.getsize(path) == good, offset
            assert bool(recovery.problem) == (offset != good), offset
    finally:
        if folder != tmp_path:
            shutil.rmtree(folder, ignore_errors=True)
    # each distinct prefix rebuilds the state the referee had after that many events
    for k in range(len(records) + 1):
        assert M.rebuild(recorded.journal[:k], M.initial_state(recorded.settings)) == prefix_states[k]


def test_a_damaged_record_cuts_the_tail_and_appending_goes_on(recorded: World, tmp_path: Path) -> None:
    records = [encode_record(e) for e in recorded.journal]
    data = bytearray(b"".join(records))
    victim = len(records) // 2
    start = sum(len(r) for r in records[:victim])
    for where, what in [
        (start + HEADER_SIZE + 1, "checksum"),
        (start + 2, "length"),
        (start + 5, "checksum"),
    ]:
        damaged = bytearray(data)
        damaged[where] ^= 0xFF
        path = tmp_path / f"damaged-{where}.journal"
        path.write_bytes(bytes(damaged))
        journal, events, recovery = open_journal(path)
        assert events == recorded.journal[:victim]
        assert what in recovery.problem or "length" in recovery.problem or "torn" in recovery.problem
        journal.append(recorded.journal[victim])  # the referee goes on writing after the cut
        journal.close()
        again, _ = read_records(path.read_bytes())
        assert again == recorded.journal[: victim + 1]


def test_garbage_with_a_good_checksum_is_not_an_event(tmp_path: Path) -> None:
    import struct
    import zlib

    payload = b"\x93\x01\x02\x03"
    path = tmp_path / "j"
    path.write_bytes(struct.pack("<II", len(payload), zlib.crc32(payload)) + payload)
    journal, events, recovery = open_journal(path)
    journal.close()
    assert events == [] and "not an event" in recovery.problem and path.stat().st_size == 0


def test_a_missing_journal_is_an_empty_one(tmp_path: Path) -> None:
    journal, events, recovery = open_journal(tmp_path / "sub" / "new.journal")
    journal.close()
    assert events == [] and recovery.records == 0 and recovery.problem == ""


@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_restart_after_every_journaled_event_ends_the_game_the_same(recorded: World, mode: str) -> None:
    reference = recorded.state
    phases: set[str] = set()
    for k in range(1, len(recorded.journal) + 1):
        world = _world()
        world.crash_record, world.crash_mode = k, mode
        world.start(6)
        world.run()
        assert world.crashes == 1, k
        phases.add(world._crashed_state.phase)  # type: ignore[union-attr]
        state = world.state
        assert (state.result, state.board, state.moves) == (
            reference.result,
            reference.board,
            reference.moves,
        ), k
        assert state.cheats_restored == reference.cheats_restored, k
        # no piece placed twice: each command id was carried out once, and the board is what it should be
        assert len(world.placed_ids) == len(set(world.placed_ids)), k
        assert world.physical == state.board, k
    assert {
        M.TASK_CHOSEN,
        M.MOVE_REQUESTED,
        M.COMMAND_SENT,
        M.WAITING_FOR_PERSON,
        M.WAITING_FOR_STABLE,
        M.GAME_OVER,
    } <= phases


def test_a_restart_in_every_phase_of_a_placement_task_ends_the_same() -> None:
    def world() -> World:
        return World(faults={3: "fail"})

    ref = world()
    ref.start(2, squares=[2, 4, 6, 8], colours="bwbw")
    ref.run()
    assert ref.state.result == M.DONE
    for k in range(1, len(ref.journal) + 1):
        for mode in ("before", "after"):
            w = world()
            w.crash_record, w.crash_mode = k, mode
            w.start(2, squares=[2, 4, 6, 8], colours="bwbw")
            w.run()
            assert (w.state.result, w.state.board) == (ref.state.result, ref.state.board), (k, mode)
            assert len(w.placed_ids) == len(set(w.placed_ids)) and w.physical == ref.physical, (k, mode)


def test_compaction_replaces_the_journal_by_a_checkpoint_anywhere_in_the_game(
    recorded: World, tmp_path: Path
) -> None:
    path = tmp_path / "compact.journal"
    settings = recorded.settings
    for k in range(0, len(recorded.journal) + 1, 3):
        path.unlink(missing_ok=True)
        journal = Journal(path)
        state = M.initial_state(settings)
        for event in recorded.journal[:k]:
            journal.append(event, sync=False)  # (fsync is the kernel's business; it costs time here)
            state = M.step(state, event)[0]
        journal.compact(M.checkpoint(state, 0.0))
        for event in recorded.journal[k:]:
            journal.append(event, sync=False)
        journal.close()
        reopened, events, recovery = open_journal(path)
        reopened.close()
        assert recovery.records == 1 + len(recorded.journal) - k and recovery.problem == ""
        assert M.rebuild(events, M.initial_state(settings)) == recorded.state, k
    assert [p.name for p in tmp_path.iterdir()] == ["compact.journal"]  # no temporary file left


def test_an_unreadable_checkpoint_starts_afresh_instead_of_failing() -> None:
    from services.referee.events import Checkpoint

    state, actions = M.step(M.initial_state(), Checkpoint(now=1.0, state=b"\xc1garbage"))
    assert state == M.initial_state() and "unreadable" in actions[0].reason
