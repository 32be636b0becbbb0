"""``sanzi render WORLD.json OUT.png``: writes an image, refuses bad input with exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from launch.cli import main


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_render_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = _write(
        tmp_path / "world.json",
        {
            "board_center_mm": [200, 150],
            "board_angle_deg": 20,
            "pitch_mm": 40,
            "pieces": [{"colour": "black", "square": 5}, {"colour": "white", "x_mm": 180, "y_mm": 120}],
        },
    )
    out = tmp_path / "frame.png"
    assert main(["render", str(world), str(out), "--seed", "3", "--print-homography"]) == 0
    img = cv2.imread(str(out))
    assert img is not None and img.shape == (480, 640, 3)
    h = np.array(json.loads(capsys.readouterr().out)).reshape(3, 3)
    assert h[2, 2] == pytest.approx(1.0)
    # the same command again gives the same pixels; another seed other noise
    again = tmp_path / "again.png"
    assert main(["render", str(world), str(again), "--seed", "3"]) == 0
    assert np.array_equal(cv2.imread(str(again)), img)
    assert main(["render", str(world), str(again), "--seed", "4"]) == 0
    assert not np.array_equal(cv2.imread(str(again)), img)


def test_render_board_string_style_and_top_view(tmp_path: Path) -> None:
    world = _write(tmp_path / "w.json", {"board": "X.O..X..O", "board_angle_deg": -30})
    out = tmp_path / "dark.png"
    assert main(["render", str(world), str(out), "--style", "dark", "--style-set", "noise_sigma=0"]) == 0
    assert cv2.imread(str(out)).shape == (480, 640, 3)
    top = tmp_path / "top.png"
    assert main(["render", str(world), str(top), "--top-view"]) == 0
    assert cv2.imread(str(top)).shape[0] > 480


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{", "not valid JSON"),
        ({"board": "XX"}, "9 characters"),
        ({"pieces": [{"colour": "green", "square": 1}]}, "colour"),
        ({"pitch": 40}, "unknown field"),
    ],
)
def test_bad_world_is_refused_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: object, words: str
) -> None:
    world = _write(tmp_path / "bad.json", content)
    out = tmp_path / "out.png"
    assert main(["render", str(world), str(out)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and words in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--style", "psychedelic"], "unknown style"),
        (["--style-set", "noise=1"], "unknown style field"),
        (["--style-set", "noise_sigma"], "KEY=VALUE"),
    ],
)
def test_bad_options_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    world = _write(tmp_path / "w.json", {"board": "........."})
    out = tmp_path / "out.png"
    assert main(["render", str(world), str(out), *extra]) == 2
    assert words in capsys.readouterr().err
    assert not out.exists()


def test_missing_world_and_bad_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(tmp_path / "none.json"), str(tmp_path / "o.png")]) == 2
    assert "cannot read" in capsys.readouterr().err
    world = _write(tmp_path / "w.json", {})
    assert main(["render", str(world), str(tmp_path / "o.gif")]) == 2
    assert "image format" in capsys.readouterr().err
    assert main(["render", str(world), str(tmp_path / "no" / "o.png")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"]
