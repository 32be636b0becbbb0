"""bench/train_square_net.py: the squares the second opinion learns from (labelled from the truth, with
the rules' own readings) and what it reports on
held-out generators. (Training itself needs torch, which the project does not.)"""

from __future__ import annotations

import cv2
import numpy as np

from bench.train_square_net import COVERED_MIDDLE, SOURCES, _squares_of, covered_squares, report_held_out
from services.vision.detector import detect, doubt
from services.vision.detector.doubt import CONTEXT, PATCH

from .synth import Scene, draw


def test_each_square_is_labelled_from_the_truth_with_the_rules_reading() -> None:
    scene = Scene(board="XO..X...O", angle_deg=10.0, noise=2.0)
    image = draw(scene)
    rows = _squares_of(image, scene.board, scene.angle_deg, (SOURCES.index("synth"), 1, 0))
    assert len(rows) == 9
    det = detect(image)
    for n, (patch, context, truth, key) in enumerate(rows):
        assert patch.shape == (3, PATCH, PATCH) and context.shape == (CONTEXT,)
        assert ".XO"[truth] == det.board[n]  # (read right here: the truth as the detection numbers it)
        assert key[:4] == (SOURCES.index("synth"), 1, 0, n)
        assert key[5] == round(det.squares[n].confidence * 1000)


def test_the_squares_are_cut_by_the_rules_alone_and_the_second_opinion_is_left_in_place() -> None:
    before = doubt._weights
    scene = Scene(board="X........", noise=2.0)
    _squares_of(draw(scene), scene.board, scene.angle_deg, (0, 0, 0))
    assert doubt._weights is before


def test_the_held_out_report_counts_squares_and_frames(capsys: object) -> None:
    # Two frames of two squares each: frame 0 read right, frame 1 with a square read wrong (black for
    # white). The network doubts frame 1's wrong square and one right square of frame 0.
    truth = np.array([0, 1, 2, 0])
    keys = np.array(
        [
            [0, 1, 0, 0, 0, 750],
            [0, 1, 0, 1, 1, 750],
            [0, 1, 1, 0, 1, 850],  # wrong: black read where a white piece is
            [0, 1, 1, 1, 0, 1000],
        ]
    )
    probs = np.array([[0.995, 0.005, 0.0], [0.0, 0.005, 0.995], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    report_held_out(probs, truth, keys)
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "the rules right 3, unknown 0, wrong 1" in out
    assert "p >= 0.99: squares doubted: wrong 1 of 1, right 1 of 3; frames taken: wrong doubted 1 of 1" in out
    assert "right doubted 1 of 1" in out


def test_a_square_is_covered_where_the_occluders_mask_fills_its_middle() -> None:
    """A board of 50-pixel squares from (0, 0): a coin's disc on the middle square covers most of its
    middle and reaches no other square; a pen along the first inner line reaches the squares on both
    sides and covers neither middle (training leaves such squares out)."""
    h = np.diag([1 / 50, 1 / 50, 1.0])  # image pixels to the board's squares
    coin = np.zeros((150, 150), np.uint8)
    cv2.circle(coin, (75, 75), 12, 255, -1)
    middle, reached = covered_squares(coin, h)
    assert middle[4] > 0.5 and COVERED_MIDDLE > (12 / 50)
    assert reached.tolist() == [n == 4 for n in range(9)]
    assert (middle[np.arange(9) != 4] == 0).all()
    pen = np.zeros((150, 150), np.uint8)
    pen[:, 44:57] = 255
    middle, reached = covered_squares(pen, h)
    assert (middle == 0).all()
    assert reached.tolist() == [col in (0, 1) for row in range(3) for col in range(3)]
