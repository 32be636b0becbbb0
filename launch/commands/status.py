"""``sanzi status [--json]``: every process of the running stack and the referee's phase.

For each process: supervisord's state, pid, uptime, restarts since supervisord started, the age of its
last heartbeat on ``sys.heartbeat``, its health and its last error (from its heartbeat, supervisord's
spawn error, or the last error line of its log). The referee's phase comes from its snapshot server.
Exit code 0 when every process runs and is heard, 1 otherwise (also when no stack runs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from dataclasses import asdict
from typing import Any, Final

from services.common import config as config_module
from services.common.config import Config

from .. import stack as stack_module
from .. import supervisor as sv
from ..processes import PROCESSES
from ..stack import ProcessStatus

#: How long to listen for heartbeats: a bit more than one period, so every live process is heard once.
LISTEN_PERIODS: Final = 1.5
#: How much of each program's log to scan for its last error.
LOG_TAIL_BYTES: Final = 1 << 16
#: Log levels that count as an error.
ERROR_LEVELS: Final = frozenset({"error", "critical", "exception"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--runtime", metavar="DIR", help="the stack's runtime folder (default: the configuration's)"
    )


def last_error_in_log(text: str) -> str:
    """The event of the last JSON log line at error level or above in ``text`` ("" when none).
    Lines that are not JSON (a traceback printed by Python itself) are ignored unless they are the
    final ``SomeError: ...`` line of a traceback."""
    last = ""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and str(record.get("level", "")).lower() in ERROR_LEVELS:
                detail = record.get("error") or record.get("reason") or ""
                last = str(record.get("event", "")) + (f": {detail}" if detail else "")
        elif not line.startswith((" ", "File ", "Traceback")) and "Error" in line.split(":", 1)[0]:
            last = line
    return last[:200]


def build_status(
    infos: list[dict[str, Any]],
    restarts: dict[str, int],
    heartbeats: dict[str, tuple[Any, int]],
    now_ns: int,
    log_errors: dict[str, str],
) -> list[ProcessStatus]:
    """One :class:`ProcessStatus` per supervisord program, in the registry's order.

    ``heartbeats`` maps a process to (its last Heartbeat, the header's mono_ns); ``now_ns`` is
    ``time.monotonic_ns()`` on the same machine.
    """
    rows: list[ProcessStatus] = []
    order = {p.name: i for i, p in enumerate(PROCESSES)}  # the registry's order: the data flow
    for info in sorted(infos, key=lambda i: order.get(i["name"], len(order))):
        name = info["name"]
        running = info["statename"] == "RUNNING"
        beat = heartbeats.get(name)
        heartbeat_age = round((now_ns - beat[1]) / 1e9, 3) if beat else None
        # The heartbeat's own account first, then the log's last error line (it says why a process
        # died), then supervisord's generic spawn error ("Exited too quickly").
        if beat and beat[0].last_error:
            error = beat[0].last_error
        else:
            error = log_errors.get(name, "") or str(info.get("spawnerr") or "")
        rows.append(
            ProcessStatus(
                name=name,
                state=str(info["statename"]),
                pid=int(info["pid"]) if running else 0,
                uptime_s=float(info["now"] - info["start"]) if running else 0.0,
                restarts=restarts.get(name, 0),
                heartbeat_age_s=heartbeat_age,
                health=beat[0].state if beat else "",
                last_error=error,
            )
        )
    return rows


def healthy(rows: list[ProcessStatus]) -> bool:
    return bool(rows) and all(r.state == "RUNNING" and r.heartbeat_age_s is not None for r in rows)


def _age(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def _uptime(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def format_status(rows: list[ProcessStatus], referee: dict[str, Any] | None, runtime: str) -> str:
    """The table ``sanzi status`` prints."""
    header = ("process", "state", "pid", "uptime", "restarts", "heartbeat", "health", "last error")
    table = [header] + [
        (
            r.name,
            r.state,
            str(r.pid or "-"),
            _uptime(r.uptime_s) if r.state == "RUNNING" else "-",
            str(r.restarts),
            _age(r.heartbeat_age_s),
            r.health or "-",
            r.last_error or "",
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])) + "  " + row[-1] for row in table
    ]
    if referee is None:
        lines.append("referee: no snapshot (not running or not answering)")
    else:
        game = f" game {referee['game_id']}" if referee.get("game_id") else ""
        task = f" task {referee['task']}" if referee.get("task") else ""
        result = f" result {referee['result']}" if referee.get("result") else ""
        lines.append(f"referee: phase {referee['phase']}{task}{game} move {referee['move_number']}{result}")
        if referee.get("message"):
            lines.append(f"         {referee['message']}")
    lines.append(f"runtime: {runtime}")
    return "\n".join(line.rstrip() for line in lines)


async def _bus_view(config: Config) -> tuple[dict[str, tuple[Any, int]], dict[str, Any] | None]:
    from messages import to_builtins
    from services.bus.client import context, request_snapshot

    listen = config.bus.heartbeat_period_s * LISTEN_PERIODS
    ctx = context()
    try:
        snapshot_task = asyncio.create_task(
            request_snapshot(
                ctx, config.bus.snapshot, "referee.state", timeout=0.5, attempts=2, bus=config.bus
            )
        )
        heartbeats = await stack_module.listen_heartbeats(config, listen)
        env = await snapshot_task
    finally:
        ctx.destroy(linger=0)
    return heartbeats, (to_builtins(env.message) if env is not None else None)


def collect(config: Config) -> dict[str, Any]:
    """Everything ``sanzi status`` shows, as plain data. :raises sv.SupervisorError: no stack running."""
    client = sv.Supervisor.for_runtime(config.runtime.dir)
    if not client.reachable():
        raise sv.SupervisorError(f"no stack running in {config.runtime.dir}")
    infos = client.processes()
    restarts = sv.restarts(client.main_log_tail(), [i["name"] for i in infos])
    log_errors: dict[str, str] = {}
    for info in infos:
        with contextlib.suppress(sv.SupervisorError):
            log_errors[info["name"]] = last_error_in_log(client.log_tail(info["name"], LOG_TAIL_BYTES))
    heartbeats, referee = asyncio.run(_bus_view(config))
    rows = build_status(infos, restarts, heartbeats, time.monotonic_ns(), log_errors)
    return {
        "runtime": str(config.runtime.dir),
        "healthy": healthy(rows),
        "processes": [asdict(r) for r in rows],
        "referee": referee,
    }


def run(args: argparse.Namespace) -> int:
    try:
        overrides = {"runtime": {"dir": str(args.runtime)}} if args.runtime else None
        config = stack_module.running_config(config_module.load(args.config, overrides=overrides))
    except config_module.ConfigError as exc:
        print(f"sanzi status: {exc}", file=sys.stderr)
        return 2
    try:
        report = collect(config)
    except sv.SupervisorError as exc:
        if args.json:
            print(json.dumps({"runtime": str(config.runtime.dir), "healthy": False, "error": str(exc)}))
        else:
            print(f"sanzi status: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        rows = [ProcessStatus(**p) for p in report["processes"]]
        print(format_status(rows, report["referee"], report["runtime"]))
    return 0 if report["healthy"] else 1
