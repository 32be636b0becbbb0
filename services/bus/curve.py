"""CURVE encryption and authentication for a bus spread over machines.

Layout of a key folder made by ``sanzi keys DIR``::

    DIR/server.key            the forwarder's public key (copy it to every client machine)
    DIR/server.key_secret     the forwarder's secret key (stays on the forwarder's machine)
    DIR/clients/NAME.key      public keys of the clients allowed in (the forwarder reads this folder)
    DIR/NAME.key_secret       each client's key pair (copy to that client's machine)

Only clients whose public key is in ``clients/`` are let in; everyone else is refused by the ZAP
handler before a single message passes.
"""

from __future__ import annotations

import ipaddress
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator


class CurveError(RuntimeError):
    """Keys are missing or an endpoint would listen beyond loopback without them."""


SERVER = "server"


def make_keys(folder: str | Path, clients: list[str]) -> list[Path]:
    """Create the server key pair and one pair per client name in ``folder``; returns the files written.
    Existing server keys are kept (so existing clients stay valid)."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    (root / "clients").mkdir(exist_ok=True, mode=0o700)
    written: list[Path] = []
    if not (root / f"{SERVER}.key_secret").exists():
        pub, sec = zmq.auth.create_certificates(root, SERVER)
        written += [Path(pub), Path(sec)]
    for name in clients:
        pub, sec = zmq.auth.create_certificates(root, name)
        allowed = root / "clients" / f"{name}.key"
        shutil.copy(pub, allowed)
        Path(sec).chmod(0o600)
        written += [Path(sec), allowed]
    return written


def is_beyond_loopback(endpoint: str) -> bool:
    """True for a tcp:// endpoint whose host is not a loopback address (``*`` and 0.0.0.0 included)."""
    if not endpoint.startswith("tcp://"):
        return False
    host = urlsplit(endpoint).hostname or "*"
    if host in ("*", ""):
        return True
    if host == "localhost":
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True  # an interface name or a host name: assume it is reachable from outside


def require_keys_for(endpoints: list[str], curve_dir: str) -> None:
    """Refuse to listen beyond loopback without CURVE keys. :raises CurveError: saying what to do."""
    remote = [e for e in endpoints if is_beyond_loopback(e)]
    if remote and not curve_dir:
        raise CurveError(
            f"refusing to bind {', '.join(remote)} beyond loopback without CURVE keys: "
            "run `sanzi keys DIR --client NAME ...` and set bus.curve_dir = DIR in the configuration"
        )
    if curve_dir and not (Path(curve_dir) / f"{SERVER}.key_secret").exists():
        raise CurveError(
            f"bus.curve_dir {curve_dir} holds no {SERVER}.key_secret; run `sanzi keys {curve_dir}`"
        )


def start_authenticator(ctx: zmq.Context, curve_dir: str) -> ThreadAuthenticator:
    """Start the ZAP handler that admits only the public keys in ``curve_dir/clients``."""
    auth = ThreadAuthenticator(ctx)
    auth.start()
    auth.configure_curve(domain="*", location=str(Path(curve_dir) / "clients"))
    return auth


def make_server(socket: zmq.Socket, curve_dir: str) -> None:
    public, secret = zmq.auth.load_certificate(Path(curve_dir) / f"{SERVER}.key_secret")
    socket.curve_secretkey = secret
    socket.curve_publickey = public
    socket.curve_server = True


def make_client(socket: zmq.Socket, curve_dir: str, client: str) -> None:
    """Give a client socket its key pair and the server's public key. :raises CurveError: if missing."""
    root = Path(curve_dir)
    try:
        public, secret = zmq.auth.load_certificate(root / f"{client}.key_secret")
        server_public, _ = zmq.auth.load_certificate(root / f"{SERVER}.key")
    except OSError as exc:
        raise CurveError(f"CURVE keys for client {client!r} not found in {root}: {exc}") from None
    socket.curve_secretkey = secret
    socket.curve_publickey = public
    socket.curve_serverkey = server_public
