"""The learned second opinion (services/vision/detector/doubt.py): it can only make a square unknown that
the rules read unsure and it is all but certain of otherwise; its numpy network computes what torch's
layers do; its patches carry the board on its own scale."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from services.vision.detector import Detection, detect, doubt, homography_of
from services.vision.detector.doubt import (
    CONTEXT,
    DOUBT_PROBABILITY,
    LAYERS,
    PATCH,
    STATES,
    SURE_READING,
    _conv_relu,
    _pool,
    doubted,
    ensemble_doubts,
    probabilities,
    square_patches,
)

from .synth import Scene, draw


def _naive_conv_relu(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """torch.nn.Conv2d(padding=1) and ReLU, written out: a cross-correlation (the kernel not flipped)."""
    n, _c, height, width = x.shape
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, len(weight), height, width), np.float64)
    for k in range(len(weight)):
        for i in range(height):
            for j in range(width):
                out[:, k, i, j] = (padded[:, :, i : i + 3, j : j + 3] * weight[k]).sum(axis=(1, 2, 3)) + bias[
                    k
                ]
    return np.maximum(out, 0.0)


def test_the_convolution_is_torchs_cross_correlation_with_zero_padding() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 7, 6)).astype(np.float32)
    weight = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    bias = rng.normal(size=4).astype(np.float32)
    channels_last = _conv_relu(x.transpose(0, 2, 3, 1), weight, bias).transpose(0, 3, 1, 2)
    assert np.allclose(channels_last, _naive_conv_relu(x, weight, bias), atol=1e-4)


def test_pooling_takes_each_2x2_blocks_largest_and_drops_an_odd_edge() -> None:
    x = np.arange(2 * 5 * 5, dtype=np.float32).reshape(1, 2, 5, 5).transpose(0, 2, 3, 1)
    pooled = _pool(x)
    assert pooled.shape == (1, 2, 2, 2)
    assert pooled[0, :, :, 0].tolist() == [[6.0, 8.0], [16.0, 18.0]]


def _net_saying(state: str, margin: float = 20.0) -> dict[str, np.ndarray]:
    """A network whose every answer is ``state``: zero weights, its last layer's bias alone."""
    side = PATCH // 4
    net = {
        "conv1.weight": np.zeros((16, 3, 3, 3), np.float32),
        "conv1.bias": np.zeros(16, np.float32),
        "conv2.weight": np.zeros((32, 16, 3, 3), np.float32),
        "conv2.bias": np.zeros(32, np.float32),
        "conv3.weight": np.zeros((32, 32, 3, 3), np.float32),
        "conv3.bias": np.zeros(32, np.float32),
        "fc1.weight": np.zeros((32, 32 * side * side + CONTEXT), np.float32),
        "fc1.bias": np.zeros(32, np.float32),
        "fc2.weight": np.zeros((len(STATES), 32), np.float32),
        "fc2.bias": np.zeros(len(STATES), np.float32),
    }
    net["fc2.bias"][STATES.index(state)] = margin
    return net


def test_probabilities_are_a_distribution_over_the_states() -> None:
    patches = np.zeros((4, 3, PATCH, PATCH), np.float32)
    probs = probabilities(patches, np.zeros(CONTEXT, np.float32), _net_saying("black", margin=2.0))
    assert probs.shape == (4, len(STATES)) and STATES[-1] == "foreign"
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert (probs.argmax(axis=1) == STATES.index("black")).all()


def _detection(readings: list[tuple[str, float]]) -> Detection:
    """A detection of the board of ``_scene()`` with the squares read as ``readings``."""
    det = detect(draw(_scene()))
    assert det.found
    squares = tuple(
        replace(sq, state=state, confidence=conf)  # type: ignore[arg-type]
        for sq, (state, conf) in zip(det.squares, readings, strict=True)
    )
    return replace(det, squares=squares, problem="")


def _scene() -> Scene:
    return Scene(board="X...O....", angle_deg=12.0, noise=2.0)


def test_only_unsure_readings_of_another_state_are_doubted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doubt, "_weights", lambda: (_net_saying("white"),))
    readings = [
        ("black", 0.75),  # unsure, another state: doubted
        ("empty", SURE_READING),  # sure: kept
        ("white", 0.75),  # the network agrees: kept
        ("unknown", 0.0),  # left unknown, never read
        ("empty", 0.85),  # unsure, another state: doubted
    ] + [("empty", 1.0)] * 4
    det = _detection(readings)
    out = doubted(draw(_scene()), det)
    assert [sq.state for sq in out.squares] == ["unknown", "empty", "white", "unknown", "unknown"] + [
        "empty"
    ] * 4
    assert out.squares[0].confidence == 0.0 and out.squares[4].confidence == 0.0
    assert out.problem == "low-confidence"
    assert out.extra["doubted"] == 2.0
    assert out.pose == det.pose


def test_a_square_the_networks_see_covered_is_doubted_as_any_other(monkeypatch: pytest.MonkeyPatch) -> None:
    # "foreign" (a coin, a pen on the square) is a state the rules never read: a piece they read unsure
    # where the networks are all but sure something else lies is unknown; a sure reading is kept.
    monkeypatch.setattr(doubt, "_weights", lambda: (_net_saying("foreign"),))
    det = _detection([("white", 0.8), ("white", 1.0)] + [("empty", 1.0)] * 7)
    out = doubted(draw(_scene()), det)
    assert [sq.state for sq in out.squares[:3]] == ["unknown", "white", "empty"]
    assert out.extra["doubted"] == 1.0


def test_networks_that_disagree_doubt_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # One reads the squares as the rules do, one does not: their average gives the reading a half,
    # far above 1 - DOUBT_PROBABILITY.
    monkeypatch.setattr(doubt, "_weights", lambda: (_net_saying("white"), _net_saying("empty")))
    det = _detection([("empty", 0.75)] * 9)
    assert doubted(draw(_scene()), det) is det


def test_networks_sure_it_is_not_the_reading_doubt_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each certain of another state than the rules' (one of a white piece, one that something covers the
    # square): neither other state reaches DOUBT_PROBABILITY on average, but the reading gets none.
    monkeypatch.setattr(doubt, "_weights", lambda: (_net_saying("white"), _net_saying("foreign")))
    det = _detection([("empty", 0.75)] + [("white", 0.75)] + [("empty", 1.0)] * 7)
    out = doubted(draw(_scene()), det)
    assert [sq.state for sq in out.squares[:3]] == ["unknown", "white", "empty"]


def _kindred_nets(rng: np.random.Generator, count: int) -> tuple[dict[str, np.ndarray], ...]:
    """``count`` networks of the shipped shape, random but close to one another (as networks trained on
    the same squares are): their average is near certain of many a patch, and just short of it of some."""
    base = {
        name: rng.normal(0.0, 0.1, v.shape).astype(np.float32) for name, v in _net_saying("empty").items()
    }
    base["fc2.weight"] *= 10.0
    return tuple(
        {name: v + rng.normal(0.0, 0.01, v.shape).astype(np.float32) for name, v in base.items()}
        for _ in range(count)
    )


def test_the_ensemble_doubts_what_the_full_average_does() -> None:
    # The networks run one after another on the squares that can still be doubted: the answer must be
    # the plain average's, square by square.
    rng = np.random.default_rng(7)
    nets = _kindred_nets(rng, 3)
    patches = rng.normal(0.0, 1.0, (400, 3, PATCH, PATCH)).astype(np.float32)
    context = rng.normal(0.0, 1.0, CONTEXT).astype(np.float32)
    read = [int(r) for r in rng.integers(0, len(STATES), len(patches))]
    mean = np.mean([probabilities(patches, context, net) for net in nets], axis=0)
    given = mean[np.arange(len(read)), read]
    others = mean.copy()
    others[np.arange(len(read)), read] = -1.0  # (the rules' own state is never the doubt)
    limit = 1.0 - DOUBT_PROBABILITY
    expected = {n: int(np.argmax(others[n])) for n in range(len(read)) if given[n] <= limit}
    near = ((given > limit) & (given < limit + 0.1)).sum()
    assert len(expected) > 10 and near > 10  # (doubts and near misses both: the test means something)
    assert ensemble_doubts(patches, context, read, nets) == expected


def test_a_network_not_sure_enough_doubts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # One and a half logits apart: the reading (black) gets 1 / (e^1.5 + 3), about 0.13, more than
    # 1 - DOUBT_PROBABILITY.
    assert DOUBT_PROBABILITY > 0.87
    monkeypatch.setattr(doubt, "_weights", lambda: (_net_saying("white", margin=1.5),))
    det = _detection([("black", 0.75)] + [("empty", 0.85)] * 8)
    assert doubted(draw(_scene()), det) is det


def test_a_detection_with_a_problem_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doubt, "_weights", lambda: (_net_saying("white"),))
    det = replace(_detection([("black", 0.75)] + [("empty", 1.0)] * 8), problem="occluded")
    out = doubted(draw(_scene()), det)
    assert out.problem == "occluded" and out.board[0] == "?"


def test_without_the_weights_file_nothing_is_doubted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doubt, "_weights", lambda: None)
    det = _detection([("black", 0.75)] * 9)
    assert doubted(draw(_scene()), det) is det


def test_weights_of_an_earlier_layout_are_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One network's arrays without the ensemble's prefixes, as session 56's training script wrote them.
    old = tmp_path / "square_net.npz"
    np.savez(old, **_net_saying("white"))
    monkeypatch.setattr(doubt, "WEIGHTS", old)
    doubt._weights.cache_clear()
    try:
        with pytest.raises(ValueError, match="train the networks again"):
            doubt._weights()
    finally:
        doubt._weights.cache_clear()


def test_the_shipped_weights_are_three_networks_of_the_layers_run() -> None:
    nets = doubt._weights()
    assert nets is not None and len(nets) == 3
    assert all(set(net) == set(LAYERS) for net in nets)


def test_no_board_is_left_as_it_is() -> None:
    nothing = Detection(found=False, problem="no-board")
    assert doubted(np.zeros((480, 640, 3), np.uint8), nothing) is nothing


def test_patches_put_the_board_on_its_own_scale() -> None:
    # Dark lines on a light plate: the plate is 0, the lines -1; a black piece far below, a white one above.
    scene = Scene(
        board="X...O....", angle_deg=20.0, board_grey=190, line_grey=60, white_grey=245, black_grey=30
    )
    image = draw(scene)
    det = detect(image)
    assert det.found and det.pose is not None
    patches, context = square_patches(image, homography_of(det.pose))
    assert patches.shape == (9, 3, PATCH, PATCH)
    assert context[0] == -1.0  # the lines darker than the plate
    middle = slice(PATCH // 2 - 2, PATCH // 2 + 2)
    grey = patches[:, 0, middle, middle].mean(axis=(1, 2))
    # (Squares numbered as the detection numbers them; which holds which, from its own reading.)
    by_state = {state: [grey[n] for n, sq in enumerate(det.squares) if sq.state == state] for state in STATES}
    assert max(abs(g) for g in by_state["empty"]) < 0.2
    assert by_state["black"] and min(by_state["black"]) < -0.9
    assert by_state["white"] and min(by_state["white"]) > 0.25


def test_a_grey_image_is_read_without_colour() -> None:
    scene = _scene()
    image = draw(scene)
    grey = image[..., 1].copy()
    det = detect(image)
    patches, _context = square_patches(grey, homography_of(det.pose))
    assert not patches[:, 1:].any()


def test_the_shipped_network_agrees_with_the_rules_on_a_clean_board() -> None:
    # A plain rendered board the rules read right and sure: nothing for the network to doubt even where
    # the rules are capped (every square read as the board is).
    image = draw(Scene(board="XO..X..O.", angle_deg=-8.0, noise=2.0))
    det = detect(image)
    assert det.board == "XO..X..O."
    unsure = replace(det, squares=tuple(replace(sq, confidence=0.75) for sq in det.squares))
    assert doubted(image, unsure).board == "XO..X..O."


@pytest.mark.parametrize(
    ("generator", "seed", "index"),
    [("apart", 1, 4), ("gridded", 3, 227), ("sealed", 2, 215), ("unseen", 2, 262)],
)
def test_boards_the_rules_read_whole_but_wrong_are_no_longer_taken(
    generator: str, seed: int, index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tuning frames (the network learned from them: this pins the mechanism, the held-out figures in
    # doubt.py's docstring say how it generalises): a phantom white piece on an empty board, two black
    # pieces read bare, two phantom black pieces, a white piece read bare. Each square the rules read
    # wrong and the network doubts is unknown, so the stability filter never takes the frame.
    from services.vision.tracker import StabilityFilter

    from .tuning_frames import read_tuning_frame

    det, truth = read_tuning_frame(generator, seed, index)
    assert not StabilityFilter.usable(det.found, det.board, det.occluded, det.problem), det.board
    assert all(a in ("?", b) for a, b in zip(det.board, truth, strict=True)), (det.board, truth)
    monkeypatch.setattr(doubt, "_weights", lambda: None)
    rules, _truth = read_tuning_frame(generator, seed, index)
    assert StabilityFilter.usable(rules.found, rules.board, rules.occluded, rules.problem)
    assert rules.board != truth
