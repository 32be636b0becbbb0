"""One configuration for the whole stack: a TOML file whose every key has a documented default.

Which file: ``--config FILE``, else ``$SANZI_CONFIG``, else ``./sanzi.toml`` if it exists, else the
built-in defaults. A key that is not known is an error that names it (a typo must not silently fall
back to a default). ``sanzi config`` prints the effective configuration.

Strings may use ``{runtime}`` and ``{state}``; they are replaced by the runtime and state folders.
The runtime folder (sockets, logs, the serial symlink) defaults to ``$SANZI_RUNTIME_DIR``, else
``$XDG_RUNTIME_DIR/sanzi``, else ``/tmp/sanzi-<uid>``; it is created with mode 0700.

Each service owns its section's class (``services/<name>/config.py``); this module assembles them into
the static :class:`Config`, so that every signature can name it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec

# The sections' modules import only services.common.section (a leaf), never this module: no circle, and
# loading the configuration loads no service code (no OpenCV, no numpy).
from services.actuator.config import ActuatorConfig, CalibrationConfig
from services.ai.config import AiConfig
from services.blackbox.config import BlackboxConfig
from services.bus.config import BusConfig
from services.common.section import Section as Section  # re-exported: the base of every section
from services.console.config import ConsoleConfig
from services.led.config import LedConfig
from services.referee.config import RefereeConfig
from services.simcam.config import SimCamConfig
from services.simhuman.config import SimHumanConfig
from services.simworld.config import SimWorldConfig
from services.vision.config import CameraConfig, VisionConfig

ENV_CONFIG = "SANZI_CONFIG"
ENV_RUNTIME = "SANZI_RUNTIME_DIR"
DEFAULT_FILE = "sanzi.toml"


class ConfigError(ValueError):
    """The configuration file is missing, unreadable, or holds an unknown key or a bad value."""


class RuntimeConfig(Section):
    #: sockets, logs and the simulator's serial symlink. "" = $SANZI_RUNTIME_DIR, $XDG_RUNTIME_DIR/sanzi
    #: or /tmp/sanzi-<uid>.
    dir: str = ""
    #: persistent state (the referee's journal, the actuator's supply record). "" = {runtime}/state.
    state_dir: str = ""
    #: one JSON log file per process under supervisord.
    log_dir: str = "{runtime}/logs"
    #: recordings written automatically on a fault (last seconds of bus traffic).
    fault_dir: str = "{state}/faults"


class LogConfig(Section):
    #: "debug", "info", "warning", "error".
    level: str = "info"
    #: "auto" (pretty on a terminal, JSON lines otherwise), "json" or "console".
    format: str = "auto"


class SupplyColumn(Section):
    """A column of supply slots on the table, in table millimetres. Slot i is at
    (x_mm + i * dx_mm, y_mm + i * dy_mm); slot 0 is the first taken."""

    x_mm: float
    y_mm: float
    dx_mm: float = 0.0
    dy_mm: float = 30.0
    slots: int = 5


class TableConfig(Section):
    """The fixed layout of the table, shared by the actuator and the simulated world. The table frame
    is the machine frame (see docs/geometry.md): x to the right and y down as the camera sees the table.
    """

    black_supply: SupplyColumn = msgspec.field(
        default_factory=lambda: SupplyColumn(x_mm=40.0, y_mm=80.0, dy_mm=30.0, slots=5)
    )
    white_supply: SupplyColumn = msgspec.field(
        default_factory=lambda: SupplyColumn(x_mm=360.0, y_mm=80.0, dy_mm=30.0, slots=5)
    )
    #: the table's working area, millimetres (the gantry's travel).
    width_mm: float = 400.0
    height_mm: float = 300.0
    #: ArUco markers for automatic calibration: [id, x_mm, y_mm] of each marker's centre.
    markers: list[list[float]] = msgspec.field(
        default_factory=lambda: [[0, 20.0, 20.0], [1, 380.0, 20.0], [2, 380.0, 280.0], [3, 20.0, 280.0]]
    )
    marker_size_mm: float = 24.0
    marker_dictionary: str = "DICT_4X4_50"


class Config(Section):
    """The whole configuration: one field per section (a table of the TOML file), each with its defaults.
    :func:`load` returns one, with ``{runtime}`` and ``{state}`` expanded."""

    runtime: RuntimeConfig = msgspec.field(default_factory=RuntimeConfig)
    bus: BusConfig = msgspec.field(default_factory=BusConfig)
    log: LogConfig = msgspec.field(default_factory=LogConfig)
    table: TableConfig = msgspec.field(default_factory=TableConfig)
    camera: CameraConfig = msgspec.field(default_factory=CameraConfig)
    vision: VisionConfig = msgspec.field(default_factory=VisionConfig)
    referee: RefereeConfig = msgspec.field(default_factory=RefereeConfig)
    ai: AiConfig = msgspec.field(default_factory=AiConfig)
    actuator: ActuatorConfig = msgspec.field(default_factory=ActuatorConfig)
    calibration: CalibrationConfig = msgspec.field(default_factory=CalibrationConfig)
    led: LedConfig = msgspec.field(default_factory=LedConfig)
    simworld: SimWorldConfig = msgspec.field(default_factory=SimWorldConfig)
    simcam: SimCamConfig = msgspec.field(default_factory=SimCamConfig)
    simhuman: SimHumanConfig = msgspec.field(default_factory=SimHumanConfig)
    blackbox: BlackboxConfig = msgspec.field(default_factory=BlackboxConfig)
    console: ConsoleConfig = msgspec.field(default_factory=ConsoleConfig)


def default_runtime_dir() -> Path:
    if os.environ.get(ENV_RUNTIME):
        return Path(os.environ[ENV_RUNTIME])
    if os.environ.get("XDG_RUNTIME_DIR"):
        return Path(os.environ["XDG_RUNTIME_DIR"]) / "sanzi"
    return Path(f"/tmp/sanzi-{os.getuid()}")


def resolve_path(config: str | os.PathLike[str] | None) -> Path | None:
    """Which file to read: the argument, $SANZI_CONFIG, ./sanzi.toml, or None for the defaults."""
    if config:
        return Path(config)
    if os.environ.get(ENV_CONFIG):
        return Path(os.environ[ENV_CONFIG])
    local = Path(DEFAULT_FILE)
    return local if local.exists() else None


def _expand(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, replacement in names.items():
            value = value.replace("{" + key + "}", replacement)
        return value
    if isinstance(value, msgspec.Struct):
        changes = {f: _expand(getattr(value, f), names) for f in value.__struct_fields__}
        return msgspec.structs.replace(value, **changes)
    if isinstance(value, list):
        return [_expand(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _expand(v, names) for k, v in value.items()}
    return value


def load(path: str | os.PathLike[str] | None = None, *, overrides: dict[str, Any] | None = None) -> Config:
    """Read the configuration (see the module docstring for which file), apply ``overrides`` (a nested
    dict like the TOML), expand ``{runtime}`` and ``{state}``, and return the ``Config`` Struct.

    :raises ConfigError: naming the file and the offending key.
    """
    file = resolve_path(path)
    data: dict[str, Any] = {}
    if file is not None:
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read configuration {file}: {exc.strerror}") from None
        try:
            data = msgspec.toml.decode(raw)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{file}: not valid TOML: {exc}") from None
    if overrides:
        data = merge_dicts(data, overrides)
    try:
        config = msgspec.convert(data, Config)
    except msgspec.ValidationError as exc:
        where = f"{file}" if file else "configuration"
        raise ConfigError(f"{where}: {exc}") from None
    runtime = Path(config.runtime.dir) if config.runtime.dir else default_runtime_dir()
    state = config.runtime.state_dir.replace("{runtime}", str(runtime)) or str(runtime / "state")
    expanded: Config = _expand(config, {"runtime": str(runtime), "state": state})
    runtime_cfg = msgspec.structs.replace(expanded.runtime, dir=str(runtime), state_dir=state)
    return msgspec.structs.replace(expanded, runtime=runtime_cfg)


def merge_dicts(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` laid over it, nested tables merged key by key (neither is changed)."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_dicts(out[key], value)
        else:
            out[key] = value
    return out


def ensure_private_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` (and parents) with mode 0700 and make sure it is 0700: other users must not reach
    the bus sockets. :raises ConfigError: when it exists and belongs to someone else."""
    p = Path(path)
    p.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = p.stat()
    if st.st_uid != os.getuid():
        raise ConfigError(f"runtime folder {p} belongs to uid {st.st_uid}, not to us; choose another")
    if st.st_mode & 0o077:
        p.chmod(0o700)
    return p


def to_toml(config: Config) -> str:
    """The configuration as TOML text (for `sanzi config` and for writing a calibration back)."""
    import tomllib  # noqa: F401  (only to make sure the stdlib reader exists)

    return _dump_toml(msgspec.to_builtins(config))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return msgspec.json.encode(value).decode()
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if value is None:
        raise TypeError("TOML has no null")
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


def _dump_toml(data: dict[str, Any], prefix: str = "") -> str:
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            tables.append((key, value))
        elif value is None:
            lines.append(f"# {key} = (unset)")
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    out = "\n".join(lines)
    for key, value in tables:
        name = f"{prefix}.{key}" if prefix else key
        body = _dump_toml(value, name)
        out += f"\n\n[{name}]\n{body}" if out or prefix else f"[{name}]\n{body}"
    return out.strip("\n") + "\n"
