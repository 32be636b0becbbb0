"""The configuration: defaults, file, environment, overrides, unknown keys, the private runtime folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from services.common import config as config_module
from services.common.shell import parse_overrides


def test_defaults_expand_runtime_and_state(tmp_path: Path) -> None:
    cfg = config_module.load(None, overrides={"runtime": {"dir": str(tmp_path)}})
    assert cfg.bus.pub == f"ipc://{tmp_path}/bus-pub"
    assert cfg.runtime.state_dir == f"{tmp_path}/state"
    assert cfg.referee.journal == f"{tmp_path}/state/referee.journal"


def test_unknown_key_is_an_error_that_names_it(tmp_path: Path) -> None:
    file = tmp_path / "sanzi.toml"
    file.write_text("[referee]\nlevle = 'easy'\n")
    with pytest.raises(config_module.ConfigError, match="levle"):
        config_module.load(file)
    file.write_text("[refree]\nlevel = 'easy'\n")
    with pytest.raises(config_module.ConfigError, match="refree"):
        config_module.load(file)


def test_wrong_type_is_an_error_that_names_the_key(tmp_path: Path) -> None:
    file = tmp_path / "sanzi.toml"
    file.write_text("[bus]\nevent_hwm = 'many'\n")
    with pytest.raises(config_module.ConfigError, match=r"event_hwm"):
        config_module.load(file)


def test_file_from_environment_and_argument(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_file = tmp_path / "env.toml"
    env_file.write_text("[referee]\nlevel = 'easy'\n")
    arg_file = tmp_path / "arg.toml"
    arg_file.write_text("[referee]\nlevel = 'hard'\n")
    monkeypatch.setenv(config_module.ENV_CONFIG, str(env_file))
    assert config_module.load(None).referee.level == "easy"
    assert config_module.load(arg_file).referee.level == "hard"


def test_missing_or_broken_file(tmp_path: Path) -> None:
    with pytest.raises(config_module.ConfigError, match="cannot read"):
        config_module.load(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[bus\n")
    with pytest.raises(config_module.ConfigError, match="not valid TOML"):
        config_module.load(bad)


def test_overrides_parse_toml_values() -> None:
    assert parse_overrides(["simworld.speed=10", "led.driver='console'", "referee.level=hard"]) == {
        "simworld": {"speed": 10},
        "led": {"driver": "console"},
        "referee": {"level": "hard"},
    }
    with pytest.raises(config_module.ConfigError):
        parse_overrides(["novalue"])


def test_printed_configuration_loads_back(tmp_path: Path) -> None:
    cfg = config_module.load(None, overrides={"runtime": {"dir": str(tmp_path)}})
    file = tmp_path / "out.toml"
    file.write_text(config_module.to_toml(cfg))
    assert config_module.load(file) == cfg


def test_runtime_folder_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    config_module.ensure_private_dir(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    folder.chmod(0o755)
    config_module.ensure_private_dir(folder)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert folder.stat().st_uid == os.getuid()
