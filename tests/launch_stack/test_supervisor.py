"""The supervisord configuration: generated from the registry, committed, and valid for supervisord."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest
from supervisor.datatypes import RestartUnconditionally
from supervisor.options import ServerOptions

from launch import supervisor as sv
from launch.processes import PROCESSES, processes_for

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "supervisord.conf"


def test_committed_file_is_the_generated_one() -> None:
    assert COMMITTED.read_text() == sv.render_reference(), (
        "supervisord.conf is out of date with launch/processes.py; regenerate it with "
        "`python -m launch.supervisor > supervisord.conf`"
    )


def test_committed_file_lists_exactly_the_registry() -> None:
    text = COMMITTED.read_text()
    expected = [p.name for p in processes_for("sim")]
    assert sv.program_names(text) == expected
    assert sv.group_programs(text) == expected
    # The default configuration is the simulator, which runs every registered process.
    assert set(expected) == {p.name for p in PROCESSES}


def _parse_with_supervisord(path: Path, runtime: Path) -> ServerOptions:
    (runtime / "logs").mkdir(exist_ok=True)
    options = ServerOptions()
    options.environ_expansions["ENV_SANZI_RUNTIME_DIR"] = str(runtime)
    options.configfile = str(path)
    options.process_config(do_usage=False)
    return options


def test_supervisord_accepts_the_committed_file(tmp_path: Path) -> None:
    options = _parse_with_supervisord(COMMITTED, tmp_path)
    (group,) = options.process_group_configs
    assert group.name == sv.GROUP
    by_name = {pc.name: pc for pc in group.process_configs}
    assert list(by_name) == [p.name for p in sorted(processes_for("sim"), key=lambda p: p.priority)]
    for spec in processes_for("sim"):
        pc = by_name[spec.name]
        assert pc.command == f"python -m {spec.module}"
        assert pc.directory == str(REPO)
        assert pc.autorestart is RestartUnconditionally
        assert pc.startsecs == spec.startsecs
        assert pc.startretries == sv.START_RETRIES
        assert pc.stopasgroup and pc.killasgroup
        assert pc.environment == {"PYTHONUNBUFFERED": "1"}
        assert pc.redirect_stderr
        assert pc.stdout_logfile == str(tmp_path / "logs" / f"{spec.name}.log")
        assert 0 < pc.stdout_logfile_maxbytes <= 10 * 1024 * 1024
        assert pc.stdout_logfile_backups == sv.LOG_BACKUPS
    assert options.logfile == str(tmp_path / "logs" / sv.SUPERVISORD_LOG_NAME)


def test_unix_socket_is_private_and_supervisorctl_finds_it() -> None:
    parser = configparser.RawConfigParser()
    parser.read_string(sv.render_reference())
    assert parser["unix_http_server"]["chmod"] == "0700"
    assert parser["unix_http_server"]["file"] == f"{sv.REFERENCE_RUNTIME}/{sv.SOCKET_NAME}"
    assert parser["supervisorctl"]["serverurl"] == f"unix://{sv.REFERENCE_RUNTIME}/{sv.SOCKET_NAME}"
    assert "supervisor.rpcinterface_factory" in parser["rpcinterface:supervisor"]


def test_runtime_file_is_concrete(tmp_path: Path) -> None:
    odd = tmp_path / "run time"
    odd.mkdir()
    with pytest.raises(ValueError, match="%"):
        sv.runtime_paths(tmp_path / "a%b", tmp_path, "python", REPO, tmp_path / "c")
    paths = sv.runtime_paths(odd, odd / "logs", "/usr/bin/python3", REPO, odd / "sanzi.toml")
    programs = processes_for("hardware")
    text = sv.render_runtime(programs, paths, command="up")
    conf = odd / "supervisord.conf"
    conf.write_text(text)
    options = _parse_with_supervisord(conf, odd)
    commands = {pc.name: pc.command for pc in options.process_group_configs[0].process_configs}
    assert commands["vision"] == f"/usr/bin/python3 -m services.vision --config '{odd}/sanzi.toml'"
    assert "simworld" not in commands
    assert sv.program_names(text) == [p.name for p in programs]


def test_render_refuses_an_empty_stack() -> None:
    with pytest.raises(ValueError):
        sv.render([], sv.reference_paths())


MAIN_LOG = """\
2026-01-01 10:00:00,000 INFO supervisord started with pid 100
2026-01-01 10:00:01,000 INFO spawned: 'bus' with pid 101
2026-01-01 10:00:01,000 INFO spawned: 'vision' with pid 102
2026-01-01 10:00:05,000 WARN exited: vision (terminated by SIGKILL; not expected)
2026-01-01 10:00:05,000 INFO spawned: 'vision' with pid 103
2026-01-01 10:01:00,000 INFO supervisord started with pid 200
2026-01-01 10:01:01,000 INFO spawned: 'bus' with pid 201
2026-01-01 10:01:01,000 INFO spawned: 'vision' with pid 202
2026-01-01 10:01:03,000 INFO spawned: 'bus' with pid 203
2026-01-01 10:01:04,000 INFO spawned: 'bus' with pid 204
"""


def test_restarts_count_only_the_last_supervisord_run() -> None:
    assert sv.spawn_counts(MAIN_LOG) == {"bus": 3, "vision": 1}
    assert sv.restarts(MAIN_LOG, ["bus", "vision", "ai"]) == {"bus": 2, "vision": 0, "ai": 0}


def test_the_stacks_supervisord_loop_waits_at_most_a_tenth_of_a_second() -> None:
    from launch import supervisord as fast

    class FakePoller:
        def poll(self, timeout: float) -> float:
            return timeout

    fast.cap_poll(FakePoller)
    fast.cap_poll(FakePoller)  # idempotent
    assert FakePoller().poll(1.0) == fast.POLL_S
    assert FakePoller().poll(0.01) == 0.01
