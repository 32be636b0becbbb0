"""The console's token: made like the bus's CURVE keys (``sanzi keys DIR`` writes ``DIR/console.token``,
mode 0600), read from ``console.token`` or ``console.token_file``; and whether the console may listen
where it is told to without one (:func:`binding_problem`)."""

from __future__ import annotations

import ipaddress
import os
import secrets
from pathlib import Path
from typing import Final

from .config import ConsoleConfig

#: the token's file name in a keys folder.
TOKEN_FILE: Final = "console.token"
#: random bytes in a token (printed as URL-safe base64, 43 characters).
TOKEN_BYTES: Final = 32


class ConsoleRefused(RuntimeError):
    """The console will not start as configured (beyond loopback without a token, an unreadable token)."""


def make_token(folder: str | os.PathLike[str]) -> Path:
    """Write a new random token to ``folder/console.token`` (mode 0600) unless one is there; returns the
    file. Kept when it exists, so that browsers that have it stay valid (like the bus's server key)."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = root / TOKEN_FILE
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_urlsafe(TOKEN_BYTES) + "\n")
    return path


def resolve_token(config: ConsoleConfig) -> str:
    """The token from ``console.token`` or ``console.token_file`` ("" when neither is set).
    :raises ConsoleRefused: when the token file cannot be read or is empty."""
    if config.token:
        return str(config.token)
    if not config.token_file:
        return ""
    try:
        token = Path(config.token_file).read_text().strip()
    except OSError as exc:
        raise ConsoleRefused(f"console.token_file {config.token_file}: {exc.strerror}") from None
    if not token:
        raise ConsoleRefused(f"console.token_file {config.token_file} is empty")
    return token


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name or "" (every interface): not provably loopback


def binding_problem(host: str, token: str) -> str:
    """Why the console must not listen on ``host`` with ``token`` ("" when it may)."""
    if is_loopback(host) or token:
        return ""
    return (
        f"console.host = {host!r} listens beyond this machine and no token is set: set console.token "
        "or console.token_file (`sanzi keys DIR` writes DIR/console.token), or listen on 127.0.0.1"
    )
