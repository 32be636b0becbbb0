"""Step 7: a second opinion on each square, learned, that can only doubt.

The rules of steps 4 and 5 read a square from what a piece looks like (a round body with an edge, its
tone on the grid's scale). Where they are wrong they are mostly wrong at the confidences their caps
give (two readers disagreeing, a body of the plate's own tone): 0.75 and 0.85, where thousands of
right readings lie too. Three small convolutional networks, trained on the squares of the tuning sets
and of both renderers, never the held-out set's (``bench/train_square_net.py``), each from its own
seed, read each square from its pixels and the board's tones; where their average is all but certain
(``DOUBT_PROBABILITY``) that a square the rules were not sure of (``SURE_READING``) holds something
other than they read, the square is unknown: a frame with an unknown square is never taken as the
board, so the device waits for a frame both agree on. It never reads a square the rules left unknown,
nor changes one they read: it can keep a wrong board from being taken, never make one.

The networks know a fourth state the rules never read, "foreign": something on the square that is no
piece (a coin, a pen, a fingertip). They learn it from one generator's occluded frames only (flat's, at
seeds the tuning sets do not read, where it draws each occluder's mask); the other generators' coins,
pens and hands are never learned, and judge it. A doubt asks that the networks give the rules' reading
``1 - DOUBT_PROBABILITY`` or less, not that they be that sure of one other state: a phantom piece's
square can look bare to them and covered alike.

Measured before it was kept, the networks trained without the generators they were judged on (three
splits: sealed and gridded; apart and unseen; heldout, flat and contest_table), at
``DOUBT_PROBABILITY`` 0.9: of the clear frames whose every square the rules read, 80 of the 117 read
wrong were doubted and 37 of the 6,339 read right; of their squares, 151 of 295 wrong and 73 of
59,562 right. (With three states and a doubt of one other state, on the rules of an earlier session:
72 of 113 and 35 of 6,280; squares 136 of 294 and 65 of 59,284.) Trained on every generator's clear
squares, and read by the detector: on the tuning sets read cold, the occluded frames read as a clear
board went from 77 to 63 (33 to 28 of them wrong), the clear frames read whole but wrong from 24 to
17, the squares read right from 59,552 to 59,544; on the held-out set (tests/vision/blind), from 9 to 8
(6 wrong, both), from 20 to 18, and from 6,582 to 6,565 (the price: right readings doubted, which the
device waits out). With three states, one network alone (at 0.99, where one is as sure as it usefully
gets) doubted 58 to 70 of the wrong frames and 30 to 70 of the right ones, depending on its seed: three
average out what one seed learns by chance.

Each network (:data:`WEIGHTS`, numpy arrays: no learning library is needed to run it) sees each square
as ``PATCH`` pixels square, the square and a strip of its lines, in a top view of ``VIEW_PX`` pixels a
square: its grey and two opponent colours (blue - green, red - green), on the board's own scale (less
the plate's grey, over the grid's contrast: the median of the squares' corners and of the inner
lines), and the board's context (which way the lines' contrast goes, the plate's grey, the contrast,
and the tones of the nine squares' middles: what else lies on the board).
When the file is missing the second opinion is not given.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Final

import cv2
import numpy as np

from .geometry import GRID_SQUARES, homography_of
from .model import Detection, SquareReading

#: the networks' weights (written by bench/train_square_net.py), the ensemble's in one file.
WEIGHTS: Final = Path(__file__).with_name("square_net.npz")
#: pixels a square in the top view the network reads, and the view's margin beyond the outer lines.
VIEW_PX: Final = 16
VIEW_MARGIN: Final = 8
#: pixels of line beyond a square on each side of its patch; a patch's side.
PATCH_BEYOND: Final = 2
PATCH: Final = VIEW_PX + 2 * PATCH_BEYOND
#: half the side of a square's middle (patch pixels) whose median grey is the square's in the context.
MIDDLE_HALF: Final = 3
#: the context's length: the lines' sign, the plate's grey, the contrast, the nine middles sorted.
CONTEXT: Final = 3 + GRID_SQUARES * GRID_SQUARES
#: the grid's contrast is never taken below this (grey levels): a board whose lines barely differ
#: from its plate would blow every patch up to noise.
MIN_SCALE: Final = 8.0
#: patches are clipped to this many contrasts off the plate (as in training).
PATCH_CLIP: Final = 4.0
#: the states in the network's output order: the three the rules read, and "foreign", something on the
#: square that is no piece (a coin, a pen, a fingertip), which the rules never read: a square the
#: networks are all but sure of it is unknown like any other they doubt.
STATES: Final = ("empty", "black", "white", "foreign")
#: a reading the rules give this sure or surer is not doubted (wrong at >= 0.9: 2 of 294 wrong squares
#: of the tuning sets, against 32,900 right).
SURE_READING: Final = 0.9
#: the networks' average probability that the square holds another state than the rules read which makes
#: it unknown: they give the reading 1 - this or less. (Three states, of one other: frames doubted in the
#: three splits above, wrong and right: at 0.99, 42 of 113 and 5 of 6,280; at 0.97, 60 and 12; at 0.95,
#: 62 and 19. One network at 0.99 as shipped before, 70 and 50: three at 0.9 doubt more wrong frames and
#: fewer right ones.)
DOUBT_PROBABILITY: Final = 0.9
#: each network's arrays, as torch names its layers.
LAYERS: Final = tuple(
    f"{layer}.{kind}" for layer in ("conv1", "conv2", "conv3", "fc1", "fc2") for kind in ("weight", "bias")
)
#: corners of a square sampled for the plate's grey: this many view pixels in from each corner, this
#: many wide.
CORNER_IN: Final = 3
CORNER_PX: Final = 3


def square_patches(image: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The nine squares of the board that the homography ``h`` (image to canonical) maps, as the network
    reads them: patches (9, 3, ``PATCH``, ``PATCH``) float32 (grey and the two opponent colours, on
    the board's scale) and the board's context (``CONTEXT``,): the sign of the lines' contrast, the
    plate's grey and the contrast (over 255), and the nine squares' middles' greys on the board's scale,
    sorted. ``image`` is BGR or grey (its opponent colours are then 0)."""
    size = GRID_SQUARES * VIEW_PX + 2 * VIEW_MARGIN
    to_view = np.array([[VIEW_PX, 0.0, VIEW_MARGIN], [0.0, VIEW_PX, VIEW_MARGIN], [0.0, 0.0, 1.0]]) @ h
    view = cv2.warpPerspective(
        image, to_view, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    ).astype(np.float32)
    if view.ndim == 2:
        grey, blue_green, red_green = view, np.zeros_like(view), np.zeros_like(view)
    else:
        grey = cv2.cvtColor(view, cv2.COLOR_BGR2GRAY)
        blue_green, red_green = view[..., 0] - view[..., 1], view[..., 2] - view[..., 1]
    plate = float(np.median(_corner_pixels(grey)))
    m, s = VIEW_MARGIN, VIEW_PX
    inner = [grey[m + k * s, m : m + GRID_SQUARES * s] for k in range(GRID_SQUARES + 1)]
    inner += [grey[m : m + GRID_SQUARES * s, m + k * s] for k in range(GRID_SQUARES + 1)]
    line = float(np.median(np.concatenate(inner)))
    scale = max(abs(line - plate), MIN_SCALE)
    channels = np.stack([(grey - plate) / scale, blue_green / scale, red_green / scale])
    patches = np.empty((GRID_SQUARES * GRID_SQUARES, 3, PATCH, PATCH), np.float32)
    for n in range(GRID_SQUARES * GRID_SQUARES):
        row, col = divmod(n, GRID_SQUARES)
        y, x = m + row * s - PATCH_BEYOND, m + col * s - PATCH_BEYOND
        patches[n] = channels[:, y : y + PATCH, x : x + PATCH]
    patches = np.clip(patches, -PATCH_CLIP, PATCH_CLIP)
    # The board's own tones: what the squares' middles hold, from the darkest to the lightest (a black
    # piece lighter than a black plate is told by white pieces far lighter still, elsewhere on it).
    middle = slice(PATCH // 2 - MIDDLE_HALF, PATCH // 2 + MIDDLE_HALF)
    middles = np.sort(np.median(patches[:, 0, middle, middle].reshape(len(patches), -1), axis=1))
    context = np.concatenate([[np.sign(line - plate), plate / 255.0, scale / 255.0], middles])
    return patches, context.astype(np.float32)


def _corner_pixels(grey: np.ndarray) -> np.ndarray:
    """The view's pixels in the four corners of every square, clear of the lines: the bare plate, as far
    as a piece does not reach them."""
    m, s, c = VIEW_MARGIN, VIEW_PX, CORNER_PX
    near, far = CORNER_IN, VIEW_PX - CORNER_IN - CORNER_PX
    return np.concatenate(
        [
            grey[m + r * s + dy : m + r * s + dy + c, m + q * s + dx : m + q * s + dx + c].ravel()
            for r in range(GRID_SQUARES)
            for q in range(GRID_SQUARES)
            for dy in (near, far)
            for dx in (near, far)
        ]
    )


@lru_cache(maxsize=1)
def _weights() -> tuple[dict[str, np.ndarray], ...] | None:
    """The networks' arrays, one dict per network of the ensemble (the file names them ``net0.conv1.weight``
    and so on), or None when the file is missing. A file of another layout (one network's arrays
    unprefixed, as an earlier training script wrote them, or a layer missing) is a ValueError that says
    so, rather than a KeyError on the first board read."""
    if not WEIGHTS.is_file():
        return None
    nets: dict[str, dict[str, np.ndarray]] = {}
    with np.load(WEIGHTS) as arrays:
        for name in arrays.files:
            net, _, layer = name.partition(".")
            nets.setdefault(net, {})[layer] = arrays[name].astype(np.float32)
    for net, layers in nets.items():
        if not net.startswith("net") or set(layers) != set(LAYERS):
            raise ValueError(
                f"{WEIGHTS}: {net!r} holds {sorted(layers)}, not a network's {list(LAYERS)} under"
                " net0., net1., ...: train the networks again (bench/train_square_net.py)"
            )
    return tuple(nets[k] for k in sorted(nets))


def _conv_relu(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """A 3x3 convolution with a pixel of zero padding, then ReLU, channels last: (N, H, W, C) ->
    (N, H, W, K) for ``weight`` (K, C, 3, 3), as torch.nn.Conv2d(padding=1) computes it (channels first).
    Summed over the kernel's nine offsets, one matrix product each: on patches this small, numpy's cost
    is in the copies, and this makes the fewest."""
    n, height, width, c = x.shape
    padded = np.zeros((n, height + 2, width + 2, c), np.float32)
    padded[:, 1:-1, 1:-1] = x
    out = np.zeros((n * height * width, len(weight)), np.float32)
    for i in range(3):
        for j in range(3):
            out += padded[:, i : i + height, j : j + width].reshape(-1, c) @ weight[:, :, i, j].T
    out += bias
    np.maximum(out, 0.0, out=out)
    return out.reshape(n, height, width, -1)


def _pool(x: np.ndarray) -> np.ndarray:
    """2x2 max pooling, channels last (odd rows and columns dropped, as torch's MaxPool2d(2))."""
    n, height, width, c = x.shape
    x = x[:, : height // 2 * 2, : width // 2 * 2, :]
    return x.reshape(n, height // 2, 2, width // 2, 2, c).max(axis=(2, 4))


def probabilities(patches: np.ndarray, context: np.ndarray, net: dict[str, np.ndarray]) -> np.ndarray:
    """The network's probability of each of ``STATES`` for each patch (N, 3, ``PATCH``, ``PATCH``): (N,
    ``len(STATES)``)."""
    x = patches.transpose(0, 2, 3, 1)
    x = _pool(_conv_relu(x, net["conv1.weight"], net["conv1.bias"]))
    x = _pool(_conv_relu(x, net["conv2.weight"], net["conv2.bias"]))
    x = _conv_relu(x, net["conv3.weight"], net["conv3.bias"])
    # (Flattened channels first, as torch flattens what its layers hand on.)
    flat = x.transpose(0, 3, 1, 2).reshape(len(x), -1)
    features = np.concatenate([flat, np.broadcast_to(context, (len(x), len(context)))], 1)
    hidden = np.maximum(features @ net["fc1.weight"].T + net["fc1.bias"], 0.0)
    logits = hidden @ net["fc2.weight"].T + net["fc2.bias"]
    logits -= logits.max(axis=1, keepdims=True)
    e = np.exp(logits)
    return e / e.sum(axis=1, keepdims=True)


def ensemble_doubts(
    patches: np.ndarray, context: np.ndarray, read: list[int], nets: tuple[dict[str, np.ndarray], ...]
) -> dict[int, int]:
    """The squares whose patches (N, 3, ``PATCH``, ``PATCH``) the ensemble ``nets`` doubts: those whose
    rules' reading (``read[n]``, an index in ``STATES``) the networks, averaged, give at most
    ``1 - DOUBT_PROBABILITY``, that is, all but certain it is something else, and for each the likeliest
    other state. (All but certain of no one other state: with a fourth state, a phantom piece's square
    may look bare to them and covered alike.) The networks run one after another, each on the squares
    that can still be doubted (the networks to come giving the reading at least 0 each): a square the
    first one reads as the rules do costs one network, and the answer is the full average's."""
    k = len(nets)
    if not k or not len(patches):
        return {}
    alive = np.arange(len(patches))
    reads = np.asarray(read)
    total = np.zeros((len(patches), len(STATES)), np.float32)
    limit = (1.0 - DOUBT_PROBABILITY) * k
    for net in nets:
        total[alive] += probabilities(patches[alive], context, net)
        alive = alive[total[alive, reads[alive]] <= limit]
        if not len(alive):
            return {}
    others = total[alive].copy()
    others[np.arange(len(alive)), reads[alive]] = -1.0
    return {int(n): int(np.argmax(m)) for n, m in zip(alive, others, strict=True)}


def doubted(image: np.ndarray, det: Detection) -> Detection:
    """``det`` with every square the rules read with less than ``SURE_READING`` confidence that the
    networks (averaged) are all but certain holds something else (:func:`ensemble_doubts`) made unknown
    (confidence 0), the detection's ``problem`` "low-confidence" when it had none, and
    ``extra["doubted"]`` the number of such squares. ``det`` itself when there is nothing to doubt, no
    board, or no network."""
    if not det.found or det.pose is None or len(det.squares) != GRID_SQUARES * GRID_SQUARES:
        return det
    unsure = [n for n, sq in enumerate(det.squares) if sq.state in STATES and sq.confidence < SURE_READING]
    nets = _weights()
    if not unsure or not nets:
        return det
    patches, context = square_patches(image, homography_of(det.pose))
    reads = [STATES.index(det.squares[n].state) for n in unsure]
    doubts = ensemble_doubts(patches[unsure], context, reads, nets)
    if not doubts:
        return det
    squares = list(det.squares)
    for k in doubts:
        squares[unsure[k]] = _unknown(squares[unsure[k]])
    return replace(
        det,
        squares=tuple(squares),
        problem=det.problem or "low-confidence",
        extra={**det.extra, "doubted": float(len(doubts))},
    )


def _unknown(square: SquareReading) -> SquareReading:
    """``square`` made unknown, as a reading too unsure to take."""
    return replace(square, state="unknown", confidence=0.0)
