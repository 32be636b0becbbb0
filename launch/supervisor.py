"""The supervisord configuration, generated from the process registry, and a client for supervisord.

Two renderings of one template:

- :func:`render_reference`: the committed top-level ``supervisord.conf`` — the default configuration (the
  simulator), every path an ``%(ENV_SANZI_RUNTIME_DIR)s`` expansion, ``python`` from ``$PATH``, each service
  finding its configuration through ``$SANZI_CONFIG`` or the defaults. A test regenerates it and compares,
  so a process cannot exist in the registry and not in the file, or the other way round.
- :func:`render_runtime`: the concrete file ``sanzi up`` and ``sanzi sim`` write into the runtime folder
  and run with ``supervisord -n -c FILE``: this interpreter, the runtime configuration file, real paths.

All programs form one group, ``sanzi``. Each program's stdout (JSON log lines; stderr folded in) goes to
``<log_dir>/<name>.log`` with bounded rotation. supervisorctl reaches supervisord over a unix socket in
the runtime folder with mode 0700.

:class:`Supervisor` talks to a running supervisord over that socket with XML-RPC (what supervisorctl
does), for ``sanzi status``, ``sanzi down`` and the tests.
"""

from __future__ import annotations

import os
import re
import shlex
import xmlrpc.client
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .processes import ProcessSpec, processes_for

#: The supervisord group every program belongs to.
GROUP: Final = "sanzi"
#: File names inside the runtime folder.
SOCKET_NAME: Final = "supervisor.sock"
PIDFILE_NAME: Final = "supervisord.pid"
CONF_NAME: Final = "supervisord.conf"
RUNTIME_CONFIG_NAME: Final = "sanzi.toml"
SUPERVISORD_LOG_NAME: Final = "supervisord.log"

#: Restart forever in practice: a process that keeps failing backs off (1 s, 2 s, ...) and shows up in
#: ``sanzi status`` with its last error; it must not give up after a handful of quick failures.
START_RETRIES: Final = 1000
#: The service shell exits within about 2 s of SIGTERM (it bounds its own shutdown); give it a margin
#: before SIGKILL.
STOP_WAIT_S: Final = 5
#: Per-program log rotation: at most (1 + backups) * maxbytes on disk per program.
LOG_MAXBYTES: Final = "5MB"
LOG_BACKUPS: Final = 3
#: supervisord's own log.
MAIN_LOG_MAXBYTES: Final = "5MB"
MAIN_LOG_BACKUPS: Final = 2

#: The path expansions of the committed reference file.
REFERENCE_RUNTIME: Final = "%(ENV_SANZI_RUNTIME_DIR)s"
REFERENCE_HEADER: Final = """\
; supervisord configuration of the sanzi stack (the simulator, the default configuration).
;
; GENERATED from launch/processes.py by launch/supervisor.py -- do not edit by hand; regenerate with
;     python -m launch.supervisor > supervisord.conf
; tests/launch_stack checks that this file matches the registry.
;
; `sanzi up` and `sanzi sim` do not read this file: they write a concrete one into the runtime folder
; (with the hardware's or the simulator's processes, as the configuration says). To run this one by hand:
;     export SANZI_RUNTIME_DIR=/tmp/sanzi-$(id -u)      # sockets, logs; must exist, mode 0700
;     export SANZI_CONFIG=/path/to/sanzi.toml           # optional; built-in defaults otherwise
;     mkdir -p -m 0700 $SANZI_RUNTIME_DIR/logs && supervisord -n -c supervisord.conf
"""
RUNTIME_HEADER: Final = """\
; supervisord configuration of the sanzi stack, written by `sanzi {command}` for this run.
; GENERATED from launch/processes.py by launch/supervisor.py; the registry is the source of truth.
"""


class SupervisorError(RuntimeError):
    """supervisord is not reachable or refused a request."""


@dataclass(frozen=True)
class Paths:
    """Everything the rendered file needs to know about where things are. Values are written as they
    are, so they may hold supervisord expansions such as ``%(ENV_X)s``; :func:`runtime_paths` makes
    concrete ones."""

    #: the runtime folder (socket, pid file).
    runtime_dir: str
    #: one log file per program, plus supervisord's own.
    log_dir: str
    #: the interpreter that runs ``-m services.NAME``.
    python: str
    #: the working directory of every program.
    directory: str
    #: ``--config`` passed to every program, or "" to let each find its configuration itself.
    config_file: str = ""


def literal(value: str) -> str:
    """``value`` as a literal in a supervisord configuration.

    :raises ValueError: when it holds a ``%``: supervisord expands some values (log file names) twice,
        so no single escaping is right for every field; such a path must be avoided.
    """
    if "%" in value:
        raise ValueError(f"supervisord cannot use a path with a '%' in it: {value!r}; choose another folder")
    return value


def reference_paths() -> Paths:
    return Paths(
        runtime_dir=REFERENCE_RUNTIME,
        log_dir=f"{REFERENCE_RUNTIME}/logs",
        python="python",
        directory="%(here)s",
        config_file="",
    )


def runtime_paths(
    runtime_dir: str | os.PathLike[str],
    log_dir: str | os.PathLike[str],
    python: str,
    directory: str | os.PathLike[str],
    config_file: str | os.PathLike[str],
) -> Paths:
    """Concrete paths for a runtime file. :raises ValueError: see :func:`literal`."""
    return Paths(
        runtime_dir=literal(str(runtime_dir)),
        log_dir=literal(str(log_dir)),
        python=shlex.quote(literal(python)),
        directory=literal(str(directory)),
        config_file=shlex.quote(literal(str(config_file))),
    )


def program_command(spec: ProcessSpec, paths: Paths) -> str:
    command = f"{paths.python} -m {spec.module}"
    if paths.config_file:
        command += f" --config {paths.config_file}"
    return command


def _section(name: str, items: Sequence[tuple[str, object]]) -> str:
    body = "\n".join(f"{key}={value}" for key, value in items)
    return f"[{name}]\n{body}\n"


def render(programs: Sequence[ProcessSpec], paths: Paths, header: str = "") -> str:
    """The supervisord configuration running ``programs`` (in one group) with ``paths``."""
    if not programs:
        raise ValueError("a stack needs at least one program")
    sections = [
        _section(
            "unix_http_server",
            [("file", f"{paths.runtime_dir}/{SOCKET_NAME}"), ("chmod", "0700")],
        ),
        _section(
            "supervisord",
            [
                ("logfile", f"{paths.log_dir}/{SUPERVISORD_LOG_NAME}"),
                ("logfile_maxbytes", MAIN_LOG_MAXBYTES),
                ("logfile_backups", MAIN_LOG_BACKUPS),
                ("loglevel", "info"),
                ("pidfile", f"{paths.runtime_dir}/{PIDFILE_NAME}"),
                ("childlogdir", paths.log_dir),
                ("nodaemon", "true"),
                ("identifier", GROUP),
                # the bus alone opens ~10 sockets per client process; keep plenty of descriptors.
                ("minfds", 4096),
            ],
        ),
        _section(
            "rpcinterface:supervisor",
            [("supervisor.rpcinterface_factory", "supervisor.rpcinterface:make_main_rpcinterface")],
        ),
        _section("supervisorctl", [("serverurl", f"unix://{paths.runtime_dir}/{SOCKET_NAME}")]),
    ]
    for spec in programs:
        sections.append(
            _section(
                f"program:{spec.name}",
                [
                    ("command", program_command(spec, paths)),
                    ("directory", paths.directory),
                    ("priority", spec.priority),
                    ("autostart", "true"),
                    ("autorestart", "true"),
                    ("startsecs", spec.startsecs),
                    ("startretries", START_RETRIES),
                    ("stopsignal", "TERM"),
                    ("stopwaitsecs", STOP_WAIT_S),
                    ("stopasgroup", "true"),
                    ("killasgroup", "true"),
                    ("environment", 'PYTHONUNBUFFERED="1"'),
                    ("redirect_stderr", "true"),
                    ("stdout_logfile", f"{paths.log_dir}/{spec.name}.log"),
                    ("stdout_logfile_maxbytes", LOG_MAXBYTES),
                    ("stdout_logfile_backups", LOG_BACKUPS),
                ],
            )
        )
    sections.append(_section(f"group:{GROUP}", [("programs", ",".join(p.name for p in programs))]))
    return header + "\n" + "\n".join(sections)


def render_reference() -> str:
    """The committed top-level ``supervisord.conf``: the default configuration (the simulator)."""
    return render(processes_for("sim"), reference_paths(), REFERENCE_HEADER)


def render_runtime(programs: Sequence[ProcessSpec], paths: Paths, command: str = "up") -> str:
    return render(programs, paths, RUNTIME_HEADER.format(command=command))


def program_names(text: str) -> list[str]:
    """The ``[program:NAME]`` names in a supervisord configuration text, in order."""
    return re.findall(r"^\[program:([^\]]+)\]\s*$", text, flags=re.MULTILINE)


def group_programs(text: str) -> list[str]:
    """The programs of the ``sanzi`` group in a configuration text."""
    match = re.search(rf"^\[group:{GROUP}\]\s*\nprograms=(.*)$", text, flags=re.MULTILINE)
    return match.group(1).strip().split(",") if match else []


# --------------------------------------------------------------------------------------------------------
# talking to a running supervisord


def socket_path(runtime_dir: str | os.PathLike[str]) -> Path:
    return Path(runtime_dir) / SOCKET_NAME


class Supervisor:
    """A client of the supervisord that serves ``socket`` (XML-RPC over the unix socket, as supervisorctl
    does). Each call opens a fresh connection; an instance may be shared between threads only with care
    (xmlrpc's ServerProxy is not thread-safe)."""

    def __init__(self, socket: str | os.PathLike[str]) -> None:
        from supervisor.xmlrpc import SupervisorTransport

        self.socket = Path(socket)
        self._transport = SupervisorTransport(None, None, serverurl=f"unix://{self.socket}")
        # The host part is ignored by the transport; the socket is what is dialled.
        self._proxy = xmlrpc.client.ServerProxy("http://127.0.0.1", transport=self._transport)

    @classmethod
    def for_runtime(cls, runtime_dir: str | os.PathLike[str]) -> Supervisor:
        return cls(socket_path(runtime_dir))

    def _call(self, method: str, *args: Any) -> Any:
        target: Any = self._proxy
        for part in method.split("."):
            target = getattr(target, part)
        try:
            return target(*args)
        except xmlrpc.client.Fault as exc:
            raise SupervisorError(f"supervisord refused {method}: {exc.faultString}") from None
        except OSError as exc:
            raise SupervisorError(
                f"supervisord is not reachable at {self.socket}: {exc.strerror or exc}"
            ) from None

    def reachable(self) -> bool:
        """Whether a supervisord answers on the socket (and is running, not shutting down)."""
        if not self.socket.exists():
            return False
        try:
            return self._call("supervisor.getState")["statename"] == "RUNNING"
        except SupervisorError:
            return False

    def pid(self) -> int:
        return int(self._call("supervisor.getPID"))

    def processes(self) -> list[dict[str, Any]]:
        """``getAllProcessInfo``: one dict per program (name, statename, pid, start, now, spawnerr, ...)."""
        return list(self._call("supervisor.getAllProcessInfo"))

    def process(self, name: str) -> dict[str, Any]:
        return dict(self._call("supervisor.getProcessInfo", f"{GROUP}:{name}"))

    def main_log_tail(self, length: int = 1 << 20) -> str:
        """The last ``length`` bytes of supervisord's own log (or all of it when shorter)."""
        try:
            return str(self._call("supervisor.readLog", -length, 0))
        except SupervisorError as exc:
            if "BAD_ARGUMENTS" in str(exc):  # the log is shorter than asked: read it all
                return str(self._call("supervisor.readLog", 0, 0))
            raise

    def log_tail(self, name: str, length: int = 1 << 16) -> str:
        """The last ``length`` bytes of program ``name``'s log."""
        text, _, _ = self._call("supervisor.tailProcessStdoutLog", f"{GROUP}:{name}", 0, length)
        return str(text)

    def stop_process(self, name: str, wait: bool = True) -> bool:
        return bool(self._call("supervisor.stopProcess", f"{GROUP}:{name}", wait))

    def start_process(self, name: str, wait: bool = True) -> bool:
        return bool(self._call("supervisor.startProcess", f"{GROUP}:{name}", wait))

    def shutdown(self) -> None:
        self._call("supervisor.shutdown")


_SPAWNED = re.compile(r"spawned: '([^']+)' with pid (\d+)")
_STARTED = "supervisord started with pid"


def spawn_counts(main_log: str) -> dict[str, int]:
    """How many times supervisord spawned each program since it last started, from its own log.

    supervisord keeps no restart counter; its log says ``spawned: 'NAME' with pid N`` for every start.
    Only the lines after the last ``supervisord started`` count (the log outlives one run).
    """
    start = main_log.rfind(_STARTED)
    if start >= 0:
        main_log = main_log[start:]
    counts: dict[str, int] = {}
    for match in _SPAWNED.finditer(main_log):
        counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return counts


def restarts(main_log: str, names: Iterable[str]) -> dict[str, int]:
    """Restarts per program (spawns after the first) since supervisord started."""
    counts = spawn_counts(main_log)
    return {name: max(0, counts.get(name, 0) - 1) for name in names}


def main() -> None:
    """``python -m launch.supervisor``: print the reference configuration (to regenerate the file)."""
    print(render_reference(), end="")


if __name__ == "__main__":
    main()
