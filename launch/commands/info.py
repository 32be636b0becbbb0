"""``sanzi info LOG [--json]``: what a recording holds.

Duration, size, and per topic: message count, rate, bytes, the publishers (header sources) with their
counts, sequence gaps (messages the recorder missed) and publisher restarts, the message type with its
version when recorded and in this program. Also the records whose header could not be decoded, and the
damaged tail that was cut off, if any, and (from the MCAP summary of a file that was closed) how many
messages each viewer channel holds.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import messages
from services.common.recording import Recording, RecordingError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", metavar="LOG", help="a recording made by sanzi record or the fault recorder")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace) -> int:
    try:
        summary = summarise(Recording(args.log, warn=False))
    except RecordingError as exc:
        print(f"sanzi info: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=False))
    else:
        print(render(summary))
    return 0


@dataclass
class _TopicTally:
    count: int = 0
    bytes: int = 0
    first_ns: int = 0
    last_ns: int = 0
    sources: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    gaps: int = 0
    restarts: int = 0
    last_seq: dict[str, tuple[int, int]] = field(default_factory=dict)


def summarise(recording: Recording) -> dict[str, Any]:
    """The facts about ``recording`` as plain data (what ``--json`` prints). Reads the file once."""
    tallies: dict[str, _TopicTally] = {}
    bad_headers = 0
    first_ns: int | None = None
    last_ns: int | None = None
    records = 0
    for record in recording:
        records += 1
        # min/max rather than first/last: records are in receive order, but a merged file might not be
        first_ns = record.recv_ns if first_ns is None else min(first_ns, record.recv_ns)
        last_ns = record.recv_ns if last_ns is None else max(last_ns, record.recv_ns)
        tally = tallies.setdefault(record.topic, _TopicTally(first_ns=record.recv_ns))
        tally.count += 1
        tally.bytes += record.size
        tally.last_ns = record.recv_ns
        try:
            header = record.header()
        except messages.DecodeError:
            bad_headers += 1
            continue
        tally.sources[header.source] += 1
        tally.types[f"{header.type} v{header.version}"] += 1
        last = tally.last_seq.get(header.source)
        tally.last_seq[header.source] = (header.pid, header.seq)
        if last is not None:
            if header.pid != last[0] or header.seq <= last[1]:
                tally.restarts += 1
            else:
                tally.gaps += header.seq - last[1] - 1
    header = recording.header
    duration = 0.0 if first_ns is None or last_ns is None else (last_ns - first_ns) / 1e9
    tail = recording.tail
    current = {tag: cls.VERSION for tag, cls in messages.MESSAGE_TYPES.items()}
    return {
        "path": str(recording.path),
        "format_version": header.format_version,
        "created": _iso(header.created_wall_ns),
        "start": None if first_ns is None else _iso(header.wall_ns(first_ns)),
        "duration_s": round(duration, 6),
        "records": records,
        "bytes": recording.good_bytes,
        "topics": {
            topic: {
                "count": t.count,
                "rate_hz": round((t.count - 1) / ((t.last_ns - t.first_ns) / 1e9), 3)
                if t.count > 1 and t.last_ns > t.first_ns
                else 0.0,
                "bytes": t.bytes,
                "sources": dict(t.sources.most_common()),
                "types": dict(t.types.most_common()),
                "gaps": t.gaps,
                "restarts": t.restarts,
            }
            for topic, t in sorted(tallies.items())
        },
        "versions": {
            tag: {"recorded": v, "now": current.get(tag)}
            for tag, v in sorted(header.versions.items())
            if current.get(tag) != v
        },
        "bad_headers": bad_headers,
        "tail": None
        if tail is None
        else {
            "offset": tail.offset,
            "dropped_bytes": tail.dropped_bytes,
            "reason": tail.reason,
            "detail": tail.detail,
        },
        "info": header.info,
        "viewer_channels": {
            topic: n
            for topic, n in sorted((recording.channel_counts() or {}).items())
            if topic.startswith("/")
        },
    }


def _iso(wall_ns: int) -> str:
    return dt.datetime.fromtimestamp(wall_ns / 1e9, tz=dt.UTC).isoformat(timespec="milliseconds")


def render(summary: dict[str, Any]) -> str:
    """The summary for people."""
    lines = [
        f"recording  {summary['path']}  (format {summary['format_version']})",
        f"created    {summary['created']}",
        f"duration   {summary['duration_s']:.3f} s   {summary['records']} messages   "
        f"{summary['bytes']} bytes",
    ]
    info = summary["info"]
    skip = ("host", "pid", "faults")
    extra = ", ".join(f"{k}={v}" for k, v in info.items() if k not in skip and v not in ("", None))
    if extra:
        lines.append(f"info       {extra}")
    for fault in info.get("faults") or []:  # a fault recorder's file: every fault it holds
        if isinstance(fault, dict):
            lines.append(f"fault      {fault.get('kind', '?')}: {fault.get('detail', '')}")
    lines.append("")
    lines.append(
        f"{'topic':<18} {'count':>7} {'rate Hz':>8} {'bytes':>10}  {'gaps':>4} {'rst':>3}  sources; type"
    )
    for topic, t in summary["topics"].items():
        sources = " ".join(f"{s}:{n}" for s, n in t["sources"].items())
        types = " ".join(t["types"])
        lines.append(
            f"{topic:<18} {t['count']:>7} {t['rate_hz']:>8.2f} {t['bytes']:>10}  "
            f"{t['gaps']:>4} {t['restarts']:>3}  {sources}; {types}"
        )
    viewers = summary.get("viewer_channels") or {}
    if viewers:
        lines.append("")
        lines.append("viewers    " + "  ".join(f"{topic} {n}" for topic, n in viewers.items()))
    if summary["versions"]:
        lines.append("")
        for tag, v in summary["versions"].items():
            now = "unknown to this program" if v["now"] is None else f"v{v['now']} now"
            lines.append(f"version    {tag}: recorded v{v['recorded']}, {now}")
    if summary["bad_headers"]:
        lines.append(f"warning    {summary['bad_headers']} messages with an undecodable header")
    tail = summary["tail"]
    if tail is not None:
        lines.append(
            f"warning    {tail['reason']} tail cut at byte {tail['offset']}: {tail['dropped_bytes']} bytes "
            f"dropped ({tail['detail']})"
        )
    return "\n".join(lines)
