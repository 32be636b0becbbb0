"""The stack helpers against a real supervisord, with the one process that always exists (the bus)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from launch import stack as stack_module
from launch import supervisor as sv
from launch.processes import PROCESSES
from services.common import config as config_module

ALL_BUT_BUS = {p.name for p in PROCESSES if p.name != "bus"}
REPO = Path(__file__).resolve().parents[2]


def test_runtime_configuration_loads_back_unchanged(config: Any, tmp_path: Path) -> None:
    changed = stack_module.merge(
        config, {"simworld": {"speed": 7.5}, "calibration": {"homography": [1.0] * 9}}
    )
    path = tmp_path / "c.toml"
    path.write_text(stack_module.config_toml(changed))
    assert config_module.load(path) == changed


def test_simulator_overrides_point_the_actuator_at_the_emulated_controller(config: Any) -> None:
    hardware = stack_module.merge(
        config, {"camera": {"source": "0"}, "led": {"driver": "gpio"}, "actuator": {"port": "/dev/ttyUSB0"}}
    )
    sim = stack_module.merge(hardware, stack_module.simulator_overrides(hardware))
    assert sim.camera.source == "sim" and sim.led.driver == "sim"
    assert sim.actuator.port == sim.simworld.serial_link
    with pytest.raises(config_module.ConfigError):
        stack_module.merge(config, {"simworld": {"speed": "fast"}})


def test_prepare_writes_private_files_for_the_configured_mode(config: Any) -> None:
    hardware = stack_module.merge(config, {"camera": {"source": "0"}})
    files = stack_module.prepare(hardware, exclude={"blackbox"})
    assert files.mode == "hardware"
    names = sv.program_names(files.supervisord_conf.read_text())
    assert names == [p.name for p in files.programs]
    assert "simworld" not in names and "blackbox" not in names
    assert config_module.load(files.config_file) == hardware
    assert files.runtime_dir.stat().st_mode & 0o077 == 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"


def test_real_supervisord_restarts_a_killed_process_and_stops_cleanly(config: Any) -> None:
    files = stack_module.prepare(config, exclude=ALL_BUT_BUS)
    stack = stack_module.Stack(files)
    try:
        stack.start()
        stack.wait_running(timeout=30)
        stack.wait_heartbeats(config, timeout=30)
        with pytest.raises(stack_module.StackError, match="already running"):
            stack_module.Stack(files).start()
        old = stack.kill("bus")
        new = stack.wait_restarted("bus", old, timeout=30)
        assert new != old
        assert stack.restarts() == {"bus": 1}
        stack.wait_heartbeats(config, timeout=30)  # the restarted bus forwards again
        socket_mode = files.socket.stat().st_mode & 0o777
        assert socket_mode == 0o700
        supervisord = stack.proc
    finally:
        stack.stop()
    assert supervisord is not None and supervisord.returncode == 0
    assert not _alive(new)
    assert not sv.Supervisor(files.socket).reachable()
    stack.stop()  # twice is harmless


def _exit_code(up: subprocess.Popen[str], runtime_dir: Path, timeout: float = 30.0) -> int:
    """`sanzi up`'s exit code once it has stopped. When it has not stopped within ``timeout``, a failure
    that says where it waits: its threads' stacks (SIGUSR1, see launch/cli.py), its output and the
    stack's logs."""
    try:
        return up.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        up.send_signal(signal.SIGUSR1)
        with contextlib.suppress(subprocess.TimeoutExpired):
            up.wait(timeout=2)
        up.kill()
        out, err = up.communicate()
        logs = "\n".join(
            f"--- {path}\n{path.read_text(errors='replace')[-4000:]}"
            for path in sorted(runtime_dir.rglob("*.log"))
        )
        pytest.fail(f"sanzi up did not stop within {timeout:.0f} s\nstdout:\n{out}\nstderr:\n{err}\n{logs}")


def _sanzi(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "launch.cli", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_up_status_down_commands(runtime_dir: Path, subprocess_env: dict[str, str]) -> None:
    """`sanzi up` in the foreground, `sanzi status --json` and `sanzi down` from elsewhere, then again
    with Ctrl-C (SIGINT) stopping `sanzi up`; no process is left either way."""
    without = [arg for name in sorted(ALL_BUT_BUS) for arg in ("--without", name)]
    for stop_with in ("down", "sigint"):
        up = subprocess.Popen(
            [sys.executable, "-m", "launch.cli", "up", *without],
            env=subprocess_env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            client = sv.Supervisor.for_runtime(runtime_dir)
            deadline = time.monotonic() + 30
            while not (client.reachable() and client.processes()[0]["statename"] == "RUNNING"):
                assert up.poll() is None, up.communicate()
                assert time.monotonic() < deadline, "sanzi up did not bring the bus up"
                time.sleep(0.05)
            bus_pid = client.processes()[0]["pid"]
            report = _sanzi("status", "--json", env=subprocess_env)
            data = json.loads(report.stdout)
            assert [p["name"] for p in data["processes"]] == ["bus"]
            assert data["processes"][0]["heartbeat_age_s"] is not None, report
            assert report.returncode == 0 and data["healthy"]
            if stop_with == "down":
                done = _sanzi("down", env=subprocess_env)
                assert done.returncode == 0 and "stopped" in done.stdout
            else:
                up.send_signal(signal.SIGINT)
            assert _exit_code(up, runtime_dir) == 0
        finally:
            if up.poll() is None:
                up.kill()
                up.wait()
            # supervisord runs in its own session: a `sanzi up` killed above leaves it serving.
            _sanzi("down", env=subprocess_env)
        assert not _alive(bus_pid)
        assert not client.reachable()
    gone = _sanzi("status", env=subprocess_env)
    assert gone.returncode == 1 and "no stack running" in gone.stderr
    assert "no stack running" in _sanzi("down", env=subprocess_env).stdout
