"""Start, watch and stop the whole stack under supervisord (used by ``sanzi up``, ``sanzi sim``, the
end-to-end tests and the benchmark).

The sequence is always the same::

    config = stack.load_config(path, overrides)              # + stack.simulator_overrides(...) if wanted
    files = stack.prepare(config, command="up")              # runtime sanzi.toml + supervisord.conf
    with stack.Stack(files) as s:                            # supervisord -n -c FILE, in its own session
        s.wait_running(timeout=30)                           # every program RUNNING (supervisord's view)
        s.wait_heartbeats(timeout=30)                        # every process heard on sys.heartbeat
        ...
    # leaving the block shuts supervisord down and makes sure no process of the stack is left

Nothing here sleeps to synchronise: every wait polls a condition against a deadline and raises
:class:`StackError` saying what was missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from services.common import config as config_module
from services.common.config import Config

from . import supervisor as sv
from .processes import Mode, ProcessSpec, mode_of, processes_for

#: How often the waits below look again.
POLL_S: Final = 0.05
#: Default deadlines.
START_TIMEOUT_S: Final = 30.0
STOP_TIMEOUT_S: Final = 20.0
#: The repository root: every program runs from here so ``python -m services.NAME`` resolves.
PROJECT_ROOT: Final = Path(__file__).resolve().parent.parent


class StackError(RuntimeError):
    """The stack did not start, did not become ready, or could not be stopped; the message says which
    process and what to look at."""


def load_config(path: str | os.PathLike[str] | None, overrides: dict[str, Any] | None = None) -> Config:
    """The configuration as services load it (see :func:`services.common.config.load`)."""
    return config_module.load(path, overrides=overrides)


def simulator_overrides(config: Config) -> dict[str, Any]:
    """Overrides that turn ``config`` into a simulator configuration: frames from the simulated camera,
    the simulated button, the actuator on the emulated controller's pseudo-terminal speaking its protocol.
    """
    return {
        "camera": {"source": "sim"},
        "led": {"driver": "sim"},
        "actuator": {"port": config.simworld.serial_link, "protocol": config.simworld.protocol},
    }


def merge(config: Config, overrides: dict[str, Any]) -> Config:
    """``config`` with ``overrides`` (nested like the TOML) applied and validated again."""
    data = config_module.merge_dicts(msgspec.to_builtins(config), overrides)
    try:
        return msgspec.convert(data, config_module.Config)
    except msgspec.ValidationError as exc:
        raise config_module.ConfigError(f"configuration: {exc}") from None


def config_toml(config: Config) -> str:
    """``config`` as TOML that loads back to the same configuration."""
    return config_module.to_toml(config)


@dataclass(frozen=True)
class StackFiles:
    """Where one run of the stack keeps its files."""

    runtime_dir: Path
    log_dir: Path
    #: the configuration every program runs with (``--config``).
    config_file: Path
    #: the supervisord configuration.
    supervisord_conf: Path
    mode: Mode
    programs: tuple[ProcessSpec, ...]

    @property
    def socket(self) -> Path:
        return sv.socket_path(self.runtime_dir)

    @property
    def main_log(self) -> Path:
        return self.log_dir / sv.SUPERVISORD_LOG_NAME

    def log_file(self, name: str) -> Path:
        return self.log_dir / f"{name}.log"


def prepare(
    config: Config, *, command: str = "up", exclude: Iterable[str] = (), python: str = sys.executable
) -> StackFiles:
    """Write the runtime configuration and the supervisord configuration for ``config`` into its runtime
    folder (created with mode 0700) and return where they are. ``exclude`` names registry processes not
    to run under supervisord (``sanzi sim --human you`` runs simhuman in the foreground itself).
    """
    runtime = config_module.ensure_private_dir(config.runtime.dir)
    log_dir = Path(config.runtime.log_dir)
    log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    Path(config.runtime.state_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = mode_of(config)
    programs = tuple(processes_for(mode, exclude=frozenset(exclude)))
    # the console writes its address when it listens: a file left by an earlier run must not be taken
    Path(config.console.address_file).unlink(missing_ok=True)
    config_file = runtime / sv.RUNTIME_CONFIG_NAME
    config_file.write_text(config_toml(config))
    paths = sv.runtime_paths(runtime, log_dir, python, PROJECT_ROOT, config_file)
    conf = runtime / sv.CONF_NAME
    conf.write_text(sv.render_runtime(programs, paths, command=command))
    return StackFiles(
        runtime_dir=runtime,
        log_dir=log_dir,
        config_file=config_file,
        supervisord_conf=conf,
        mode=mode,
        programs=programs,
    )


def console_url(config: Config, files: StackFiles, timeout: float = 5.0) -> str:
    """The browser console's address once it listens (read from ``console.address_file``), or "" when
    the stack runs no console or it does not listen within ``timeout`` (its port taken: its log says)."""
    if "console" not in {p.name for p in files.programs}:
        return ""
    path = Path(config.console.address_file)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            url = path.read_text().strip()
            if url:
                return url
        time.sleep(POLL_S)
    return ""


def running_config(config: Config) -> Config:
    """The configuration a running stack uses: the runtime folder's ``sanzi.toml`` if one was written
    there (by ``sanzi up`` or ``sanzi sim``), else ``config`` itself."""
    written = Path(config.runtime.dir) / sv.RUNTIME_CONFIG_NAME
    if written.exists():
        try:
            return config_module.load(written)
        except config_module.ConfigError:
            return config
    return config


@dataclass
class ProcessStatus:
    """One process as ``sanzi status`` shows it."""

    name: str
    state: str
    pid: int = 0
    uptime_s: float = 0.0
    restarts: int = 0
    heartbeat_age_s: float | None = None
    health: str = ""
    last_error: str = ""


@dataclass
class Stack:
    """One supervisord running one stack. Use as a context manager, or call :meth:`start` and
    :meth:`stop` (in a ``finally``) yourself."""

    files: StackFiles
    #: where supervisord's own output goes (None: inherit ours, for ``sanzi up``).
    output: Any = subprocess.DEVNULL
    proc: subprocess.Popen[bytes] | None = None
    _child_pids: set[int] = field(default_factory=set)

    @property
    def client(self) -> sv.Supervisor:
        return sv.Supervisor(self.files.socket)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.files.programs]

    # -- starting ------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start supervisord in the foreground (``-n``) as our child, in its own session so that a
        Ctrl-C at the terminal reaches us, and we stop the stack in order.

        :raises StackError: when a supervisord already serves this runtime folder.
        """
        if self.client.reachable():
            raise StackError(
                f"a stack is already running in {self.files.runtime_dir}; stop it with `sanzi down`"
            )
        # supervisord with its loop turning every 0.1 s (a dead process restarts at once): launch.supervisord
        cmd = [sys.executable, "-m", "launch.supervisord", "-n", "-c", str(self.files.supervisord_conf)]
        env = dict(os.environ)
        env["SANZI_RUNTIME_DIR"] = str(self.files.runtime_dir)
        env["SANZI_CONFIG"] = str(self.files.config_file)
        env.pop("SANZI_SET", None)  # the runtime configuration file holds every setting of this run
        self.proc = subprocess.Popen(
            cmd,
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.output,
            stderr=subprocess.STDOUT if self.output is not None else None,
            start_new_session=True,
        )

    def _check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise StackError(
                f"supervisord exited with code {self.proc.returncode}; see {self.files.main_log}"
            )

    def wait_running(self, timeout: float = START_TIMEOUT_S) -> list[dict[str, Any]]:
        """Wait until supervisord answers and every program is RUNNING (up for its startsecs).

        :raises StackError: naming the programs that are not running and their last error.
        """
        deadline = time.monotonic() + timeout
        infos: list[dict[str, Any]] = []
        while True:
            self._check_alive()
            client = self.client
            if client.reachable():
                with contextlib.suppress(sv.SupervisorError):
                    infos = client.processes()
                    self._child_pids.update(int(i["pid"]) for i in infos if i["pid"])
                    if infos and all(i["statename"] == "RUNNING" for i in infos):
                        return infos
            if time.monotonic() >= deadline:
                waiting = [
                    f"{i['name']} ({i['statename']}{': ' + i['spawnerr'] if i.get('spawnerr') else ''})"
                    for i in infos
                    if i["statename"] != "RUNNING"
                ] or ["supervisord itself"]
                raise StackError(
                    f"not running after {timeout:.0f} s: {', '.join(waiting)}; logs in {self.files.log_dir}"
                )
            time.sleep(POLL_S)

    def wait_heartbeats(
        self, config: Config, timeout: float = START_TIMEOUT_S, names: Sequence[str] | None = None
    ) -> dict[str, Any]:
        """Wait until every program (or ``names``) has been heard on ``sys.heartbeat``; returns the last
        heartbeat of each. :raises StackError: naming the silent ones."""
        wanted = list(names if names is not None else self.names)
        return asyncio.run(wait_heartbeats(config, wanted, timeout, alive=self._check_alive))

    # -- inspecting ----------------------------------------------------------------------------------

    def pids(self) -> dict[str, int]:
        infos = self.client.processes()
        pids = {i["name"]: int(i["pid"]) for i in infos}
        self._child_pids.update(p for p in pids.values() if p)
        return pids

    def restarts(self) -> dict[str, int]:
        """Restarts of each program since supervisord started (from supervisord's log)."""
        return sv.restarts(self.files.main_log.read_text(errors="replace"), self.names)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` to process ``name`` (kill -9 by default); returns the pid that was signalled.
        :raises StackError: when it is not running."""
        pid = self.pids().get(name, 0)
        if not pid:
            raise StackError(f"{name} is not running, cannot signal it")
        os.kill(pid, sig)
        return pid

    def wait_restarted(self, name: str, old_pid: int, timeout: float = START_TIMEOUT_S) -> int:
        """Wait until supervisord runs ``name`` again under a new pid; returns it."""
        deadline = time.monotonic() + timeout
        while True:
            self._check_alive()
            with contextlib.suppress(sv.SupervisorError):
                info = self.client.process(name)
                if info["statename"] == "RUNNING" and info["pid"] and info["pid"] != old_pid:
                    self._child_pids.add(int(info["pid"]))
                    return int(info["pid"])
            if time.monotonic() >= deadline:
                raise StackError(f"{name} was not restarted within {timeout:.0f} s")
            time.sleep(POLL_S)

    # -- stopping ------------------------------------------------------------------------------------

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Shut supervisord down (it stops every program, each as a process group), wait for it, and
        make sure no process of the stack is left: a survivor's process group is killed.
        Safe to call twice and after a failed start."""
        with contextlib.suppress(sv.SupervisorError, StackError):
            self.pids()
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                self.client.shutdown()
            except sv.SupervisorError:
                proc.send_signal(signal.SIGTERM)  # same clean shutdown, without the socket
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        elif proc is None:
            # Not our child: ask whichever supervisord serves this folder to stop.
            stop_running(self.files.runtime_dir, timeout=timeout)
        self._reap_strays()

    def _reap_strays(self) -> None:
        # supervisord puts each program in its own process group (pgid = pid).
        for pid in sorted(self._child_pids):
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
        self._child_pids.clear()

    def __enter__(self) -> Stack:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise KeyboardInterrupt like Ctrl-C does, so that a tool
    killed politely still stops its stack (supervisord runs in its own session and would outlive it).
    Ctrl-C (SIGINT) raises it too even when this process was started with SIGINT ignored, as a shell
    without job control starts a background command (``sanzi up &`` in a script): the stack is stopped
    by ``kill -INT`` whoever started it."""
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def uninterruptible() -> Iterator[None]:
    """Ignore Ctrl-C (and SIGTERM) within the block: stopping the stack must not be cut short and leave
    processes behind."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours is not alive in any useful sense.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return False


def stop_running(runtime_dir: str | os.PathLike[str], timeout: float = STOP_TIMEOUT_S) -> bool:
    """Stop the supervisord that serves ``runtime_dir`` (``sanzi down``). Returns False when none was
    running. :raises StackError: when it did not stop within ``timeout``."""
    client = sv.Supervisor.for_runtime(runtime_dir)
    if not client.reachable():
        return False
    pid = client.pid()
    children = [int(i["pid"]) for i in client.processes() if i["pid"]]
    client.shutdown()
    deadline = time.monotonic() + timeout
    while _alive(pid):
        if time.monotonic() >= deadline:
            raise StackError(f"supervisord (pid {pid}) did not stop within {timeout:.0f} s")
        time.sleep(POLL_S)
    for child in children:
        if _alive(child):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child, signal.SIGKILL)
    return True


async def wait_heartbeats(
    config: Config, names: Sequence[str], timeout: float, alive: Any = None
) -> dict[str, Any]:
    """Listen on ``sys.heartbeat`` until each of ``names`` was heard; returns name -> last Heartbeat.
    ``alive`` (optional) is called on every wake-up and may raise to abort early.
    :raises StackError: naming the processes not heard within ``timeout``."""
    from services.bus.client import Subscriber, context

    ctx = context()
    sub = Subscriber(ctx, config.bus, ["sys.heartbeat"], name="launch")
    heard: dict[str, Any] = {}
    deadline = time.monotonic() + timeout
    try:
        while set(names) - set(heard):
            if alive is not None:
                alive()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                missing = sorted(set(names) - set(heard))
                raise StackError(
                    f"no heartbeat within {timeout:.0f} s from: {', '.join(missing)}; "
                    f"see their logs under {config.runtime.log_dir}"
                )
            env = await sub.recv(timeout=min(remaining, 0.5))
            if env is not None:
                heard[env.message.process] = env.message
    finally:
        sub.close()
        ctx.destroy(linger=0)
    return heard


async def listen_heartbeats(config: Config, duration_s: float) -> dict[str, tuple[Any, int]]:
    """Every heartbeat heard during ``duration_s``: process -> (last Heartbeat, its header mono_ns)."""
    from services.bus.client import Subscriber, context

    ctx = context()
    sub = Subscriber(ctx, config.bus, ["sys.heartbeat"], name="status")
    heard: dict[str, tuple[Any, int]] = {}
    deadline = time.monotonic() + duration_s
    try:
        while (remaining := deadline - time.monotonic()) > 0:
            env = await sub.recv(timeout=remaining)
            if env is not None:
                heard[env.message.process] = (env.message, env.header.mono_ns)
    finally:
        sub.close()
        ctx.destroy(linger=0)
    return heard
