"""Small files that must survive a crash at any moment: written whole or not at all, and an unreadable
one kept for a person to look at rather than deleted.

The write is the usual one (SQLite's and etcd's, among others): the new contents go to a temporary file
in the same folder, which is flushed and fsynced, renamed over the old file (atomic on POSIX), and then
the folder is fsynced so that the rename itself is on disk. A crash leaves the old file or the new one,
never a torn one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], body: bytes, mode: int = 0o600) -> None:
    """Replace the file at ``path`` by ``body`` (its folder created if missing; a new file gets
    ``mode``), durably.

    :raises OSError: when it cannot be written (disk full, permissions); the old file is then intact.
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    sync_folder(target.parent)


def sync_folder(path: str | os.PathLike[str]) -> None:
    """fsync the folder ``path``: a file created, renamed or removed in it stays so after a power cut."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def move_aside(path: str | os.PathLike[str], now: float | None = None) -> Path:
    """Rename an unreadable file to ``<name>.corrupt-<unix time>`` beside it and return the new path:
    the caller starts afresh, and nothing is lost for whoever wants to see what went wrong."""
    source = Path(path)
    aside = source.with_name(f"{source.name}.corrupt-{int(time.time() if now is None else now)}")
    os.replace(source, aside)
    return aside
