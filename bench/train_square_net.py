"""Train the detector's learned second opinion (services/vision/detector/doubt.py) and write its weights.

The squares it learns from are those of the tuning sets' clear frames (bench/vision_frames.py's sets:
generators written apart from the detector, never the held-out one, tests/vision/blind), of the
simulator's renderer (bench/vision.py's sweeps) and of the second renderer (tests/vision/synth.py's
contest looks under issue 11's conditions), at seeds of their own, each cut out at the pose the detector
found, with the frame's truth. The tuning sets' occluded frames are left out (what lies under a hand is
no state); a fourth state, "foreign" (a coin, a pen, a fingertip on a square: no piece), is learned from
one generator's occluded frames alone, flat's at seeds of their own, which draws each occluder's mask
(``COVERED_SEEDS``): the other generators' occluders judge whether it generalises. Training needs torch,
which the project does not (the detector runs the network in numpy): a CPU build added to the project's
venv does,

    .venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
    .venv/bin/python bench/train_square_net.py squares /tmp/squares.npz
    .venv/bin/python bench/train_square_net.py train /tmp/squares.npz \\
        [--hold-out sealed,gridded] [--out services/vision/detector/square_net.npz]

``train`` with ``--hold-out`` trains without those generators' squares and prints what the second opinion
would do on them (squares and frames the stability filter would take, right and wrong, doubted at each
probability): how the networks generalise to boards they never saw, which is how DOUBT_PROBABILITY was
chosen. Both train one network for each of ``ENSEMBLE_SEEDS`` and judge (or write) their average, as
the detector runs them. Without ``--hold-out``, all squares train the networks written to ``--out``; the
numpy forward pass the detector runs is checked against torch's on the squares before they are written.
Seeded: the same squares give the same weights on one machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: the renderer's frames: (seed, random looks) of bench/vision.py's sweeps (its own timing sweeps use
#: seeds 1 and 2) and how many of each.
SIM_SWEEPS = ((11, False), (12, True), (13, True))
SIM_FRAMES = 300
#: the sources by number, as ``frame`` records them.
SOURCES = (
    "heldout", "flat", "contest_table", "apart", "unseen", "sealed", "gridded", "simcam", "synth",
    "flat-covered",
)  # fmt: skip
#: the squares something covers that is not a piece ("foreign": a coin, a pen, a fingertip), from the
#: occluded frames of one generator only, flat's (it draws each occluder's mask), at seeds of their own
#: (the tuning sets read it at 1-4): the frames of each seed's first COVERED_FRAMES whose forced
#: condition is an occluder. The other generators' coins, pens and hands are never learned: their
#: occluded frames judge whether the networks tell them from pieces.
COVERED_SEEDS = tuple(range(21, 41))
COVERED_FRAMES = 1500
#: a square is covered ("foreign") when the occluder's mask fills this share of its middle (a disc of
#: COVERED_MIDDLE pitches about its centre, where a piece lies); one the mask reaches nowhere inside
#: its lines keeps its true state; any other is left out (a fingertip on its edge: neither).
COVERED_MIDDLE = 0.3
COVERED_SHARE = 0.2
#: the second renderer's scenes (tests/vision/synth.py): (seed, frames, share of black boards) of each
#: job; contest looks under each of tests/vision/test_conditions.py's conditions or none, and black boards
#: with black lines (seeds of their own: those tests draw at 11-13 and 1-2). Black pieces lighter than
#: a black plate look like white pieces but for the board around them: one scene in five of the first
#: jobs left three networks of three all but sure that such a piece is white; the last two are all black.
SYNTH_JOBS = (*((seed, 100, 0.2) for seed in range(101, 107)), (107, 150, 1.0), (108, 150, 1.0))
#: training: epochs, batch, learning rate, weight decay, the seed; the brightness and offset jitter
#: (in contrasts) each batch is drawn with; the seeds of the ensemble's networks (one trained per seed:
#: the detector averages them; one network's doubts of right readings moved from 30 to 70 of 6,280
#: held-out frames from one seed to another (at 0.99); the three's together, at 0.9, 35).
EPOCHS = 8
BATCH = 256
LEARNING_RATE = 2e-3
WEIGHT_DECAY = 1e-4
SEED = 0
JITTER = 0.1
ENSEMBLE_SEEDS = (0, 1, 2)
#: the second opinion's probabilities reported with --hold-out.
REPORTED = (0.9, 0.95, 0.96, 0.97, 0.99)


# ----------------------------------------------------------------------------------------------------
# the squares


def _tuning_job(job: tuple[str, int, int, int]) -> list[tuple[np.ndarray, np.ndarray, int, tuple[int, ...]]]:
    """The squares of frames ``lo`` to ``hi`` of a tuning generator at a seed (``job``)."""
    import cv2

    from tests.vision.tuning_frames import tuning_sample

    generator, seed, lo, hi = job
    cv2.setNumThreads(1)
    out = []
    for index in range(lo, hi):
        try:
            sample = tuning_sample(generator, seed, index)
        except ValueError:  # (a condition a generator cannot honour)
            continue
        if not sample.occluded:
            frame = (SOURCES.index(generator), seed, index)
            out += _squares_of(sample.image, sample.board, sample.angle_deg, frame)
    return out


def _sim_job(job: tuple[int, bool]) -> list[tuple[np.ndarray, np.ndarray, int, tuple[int, ...]]]:
    """The squares of a sweep of the simulator's renderer (``job``: seed, random looks)."""
    import cv2

    from bench.vision import make_sweep

    seed, random_looks = job
    cv2.setNumThreads(1)
    out = []
    for index, (image, board, _centre, angle) in enumerate(make_sweep(SIM_FRAMES, seed, random_looks)):
        out += _squares_of(image, board, angle, (SOURCES.index("simcam"), seed, index))
    return out


def _synth_job(job: tuple[int, int, float]) -> list[tuple[np.ndarray, np.ndarray, int, tuple[int, ...]]]:
    """The squares of ``frames`` scenes of the second renderer at ``seed`` (``job``): a contest look,
    changed by one of the conditions of tests/vision/test_conditions.py drawn at random (or none), or,
    with the job's share of black boards, a black board with black lines (black pieces lighter than the
    plate), its pieces dressed as the contest look's or, one in two, plain discs."""
    from dataclasses import replace

    import cv2

    from tests.vision.looks import contest_scene
    from tests.vision.synth import draw
    from tests.vision.test_conditions import CONDITIONS

    seed, frames, black_share = job
    cv2.setNumThreads(1)
    rng = np.random.default_rng(seed)
    changes = [change for change, _floor in CONDITIONS.values()]
    out = []
    for index in range(frames):
        scene = contest_scene(rng)
        if rng.random() < black_share:
            scene = replace(
                scene,
                board_grey=float(rng.uniform(15, 35)),
                line_grey=float(rng.uniform(5, 15)),
                black_grey=float(rng.uniform(30, 60)),
                white_grey=float(rng.uniform(200, 240)),
                line_px=float(rng.uniform(0.04, 0.08)) * scene.pitch_px,
            )
            if black_share == 1.0 and rng.random() < 0.5:
                scene = replace(scene, rim=0.0, soft_shadow=0.0, glare=False)
        else:
            pick = int(rng.integers(len(changes) + 1))
            if pick < len(changes):
                scene = changes[pick](scene, rng)  # type: ignore[operator]
        frame = (SOURCES.index("synth"), seed, index)
        out += _squares_of(draw(scene, seed=index), scene.board, scene.angle_deg, frame)
    return out


def _covered_job(seed: int) -> list[tuple[np.ndarray, np.ndarray, int, tuple[int, ...]]]:
    """The squares of flat's occluded frames among the first ``COVERED_FRAMES`` at ``seed``: a square
    the occluder's mask covers (``COVERED_SHARE`` of its middle or more) is "foreign", one it does not
    reach keeps the frame's truth, and the rest are left out."""
    import cv2

    from bench.vision import _rotate
    from services.vision.detector import homography_of
    from services.vision.detector.doubt import STATES, square_patches

    # (The generator's own renderer, with the masks it keeps for checking itself: make_frame returns
    # the frame alone.)
    from tests.vision.flat.generator import _frame_rng, _render, set_families

    cv2.setNumThreads(1)
    foreign = STATES.index("foreign")
    states = {".": 0, "X": 1, "O": 2}
    out = []
    for index, family in enumerate(set_families(COVERED_FRAMES, seed)):
        if not (family or "").startswith("occluded:"):
            continue
        sample, info = _render(_frame_rng(seed, 0, index + 1), family)
        det = _rules_alone(sample.image)
        if info.occluder_mask is None or not det.found or det.pose is None:
            continue
        h = homography_of(det.pose)
        patches, context = square_patches(sample.image, h)
        middle, reached = covered_squares(info.occluder_mask, h)
        truth = _rotate(sample.board, round((det.pose.angle_deg - sample.angle_deg) / 90))
        for n, square in enumerate(det.squares):
            if middle[n] >= COVERED_SHARE:
                label = foreign
            elif not reached[n]:
                label = states[truth[n]]
            else:
                continue
            rules = STATES.index(square.state) if square.state in STATES else len(STATES)
            key = (SOURCES.index("flat-covered"), seed, index, n, rules, round(square.confidence * 1000))
            out.append((patches[n], context, label, key))
    return out


def covered_squares(mask: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of the nine squares of the board the homography ``h`` (image to canonical) maps, the share of
    each one's middle (a disc of ``COVERED_MIDDLE`` pitches about its centre) that ``mask`` (an image's
    uint8 mask, non-zero where something lies) covers, and whether it reaches inside the square at all:
    (9,) floats and (9,) bools, the squares numbered as the detector numbers them."""
    import cv2

    from services.vision.detector.doubt import VIEW_MARGIN, VIEW_PX
    from services.vision.detector.geometry import GRID_SQUARES

    size = GRID_SQUARES * VIEW_PX + 2 * VIEW_MARGIN
    to_view = np.array([[VIEW_PX, 0.0, VIEW_MARGIN], [0.0, VIEW_PX, VIEW_MARGIN], [0.0, 0.0, 1.0]]) @ h
    view = cv2.warpPerspective(mask, to_view, (size, size), flags=cv2.INTER_NEAREST) > 0
    ys, xs = np.mgrid[0:VIEW_PX, 0:VIEW_PX] + 0.5
    disc = np.hypot(xs - VIEW_PX / 2, ys - VIEW_PX / 2) <= COVERED_MIDDLE * VIEW_PX
    middle, reached = np.zeros(GRID_SQUARES**2), np.zeros(GRID_SQUARES**2, bool)
    for n in range(GRID_SQUARES**2):
        row, col = divmod(n, GRID_SQUARES)
        y, x = VIEW_MARGIN + row * VIEW_PX, VIEW_MARGIN + col * VIEW_PX
        square = view[y : y + VIEW_PX, x : x + VIEW_PX]
        middle[n] = float(square[disc].mean())
        reached[n] = bool(square.any())
    return middle, reached


def _rules_alone(image: np.ndarray):  # type: ignore[no-untyped-def]
    """The detection of ``image`` by the rules alone, the second opinion not given: the states recorded
    are theirs, what the second opinion is judged against (and the network being trained is not yet)."""
    from services.vision.detector import detect, doubt

    weights = doubt._weights
    doubt._weights = lambda: None  # type: ignore[assignment]
    try:
        return detect(image)
    finally:
        doubt._weights = weights


def _squares_of(
    image: np.ndarray, board: str, angle_deg: float, frame: tuple[int, int, int]
) -> list[tuple[np.ndarray, np.ndarray, int, tuple[int, ...]]]:
    """(patch, context, true state, (source, seed, index, square, rules' state, rules' confidence x 1000))
    of each square of a frame whose board the rules find; none when they find none. (Also where they
    find something else, a window of a cutting mat's grid or a supply tray, 16 frames of the tuning sets:
    its squares are labelled as the board's. Leaving them out, told by the true centre, is the next
    step: a network trained so, tried once, read our renderer's black boards and engraved lines worse.)"""
    from bench.vision import _rotate
    from services.vision.detector import homography_of
    from services.vision.detector.doubt import STATES, square_patches

    det = _rules_alone(image)
    if not det.found or det.pose is None:
        return []
    truth = _rotate(board, round((det.pose.angle_deg - angle_deg) / 90))
    patches, context = square_patches(image, homography_of(det.pose))
    states = {".": 0, "X": 1, "O": 2}
    out = []
    for n, square in enumerate(det.squares):
        rules = STATES.index(square.state) if square.state in STATES else len(STATES)
        key = (*frame, n, rules, round(square.confidence * 1000))
        out.append((patches[n], context, states[truth[n]], key))
    return out


def cut_squares(path: Path, jobs: int) -> None:
    """Every square of the tuning sets' clear frames, of the renderers' and of flat's occluded frames at
    ``COVERED_SEEDS`` (:func:`_covered_job`), to ``path`` (npz)."""
    from multiprocessing import Pool

    from bench.vision_frames import JOB_FRAMES, SETS

    frames = 300
    tuning = [
        (generator, seed, lo, min(lo + JOB_FRAMES, frames))
        for name in SETS
        for generator, seed in SETS[name]
        for lo in range(0, frames, JOB_FRAMES)
    ]
    rows: list[tuple[np.ndarray, np.ndarray, int, tuple[int, ...]]] = []
    with Pool(jobs) as pool:
        for chunk in pool.imap(_tuning_job, tuning):
            rows += chunk
        for chunk in pool.imap(_sim_job, SIM_SWEEPS):
            rows += chunk
        for chunk in pool.imap(_synth_job, SYNTH_JOBS):
            rows += chunk
        for chunk in pool.imap(_covered_job, COVERED_SEEDS):
            rows += chunk
    np.savez_compressed(
        path,
        patches=np.array([r[0] for r in rows], np.float16),
        context=np.array([r[1] for r in rows], np.float32),
        truth=np.array([r[2] for r in rows], np.int64),
        keys=np.array([r[3] for r in rows], np.int64),
    )
    print(f"{len(rows)} squares to {path}")


# ----------------------------------------------------------------------------------------------------
# the network (torch)


def _network():  # type: ignore[no-untyped-def]
    """The network doubt.probabilities runs, in torch: three 3x3 convolutions (16, 32, 32 channels,
    ReLU, 2x2 max pooling after the first two), the board's context joined, 32 hidden units, the four
    ``STATES``."""
    import torch
    from torch import nn

    from services.vision.detector.doubt import CONTEXT, PATCH, STATES

    side = PATCH // 4

    class SquareNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
            self.fc1 = nn.Linear(32 * side * side + CONTEXT, 32)
            self.fc2 = nn.Linear(32, len(STATES))

        def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
            pool, relu = nn.functional.max_pool2d, nn.functional.relu
            x = pool(relu(self.conv1(x)), 2)
            x = pool(relu(self.conv2(x)), 2)
            x = relu(self.conv3(x))
            return self.fc2(relu(self.fc1(torch.cat([x.flatten(1), context], 1))))

    return SquareNet()


def _batches(n: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    order = rng.permutation(n)
    for start in range(0, n, BATCH):
        yield order[start : start + BATCH]


def train(  # type: ignore[no-untyped-def]
    patches: np.ndarray, context: np.ndarray, truth: np.ndarray, seed: int = SEED
):
    """The network trained on the squares (``seed``: its first weights and its batches' draws). Each
    batch is turned by a random quarter turn and mirrored half the time (a square's state does not
    depend on which way the board lies), and its brightness scaled and shifted by ``JITTER`` of the
    contrast."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = _network()
    optimiser = torch.optim.Adam(net.parameters(), LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    x_all, c_all, y_all = torch.tensor(patches), torch.tensor(context), torch.tensor(truth)
    for epoch in range(EPOCHS):
        total = 0.0
        for batch in _batches(len(truth), rng):
            index = torch.from_numpy(batch)
            x = torch.rot90(x_all[index], int(rng.integers(4)), (2, 3))
            if rng.random() < 0.5:
                x = torch.flip(x, (3,))
            n = len(batch)
            gain = torch.from_numpy(rng.normal(1.0, JITTER, (n, 1, 1, 1)).astype(np.float32))
            shift = torch.from_numpy(rng.normal(0.0, JITTER / 2, (n, 1, 1, 1)).astype(np.float32))
            loss = nn.functional.cross_entropy(net(x * gain + shift, c_all[index]), y_all[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += loss.item() * n
        print(f"epoch {epoch + 1}/{EPOCHS}: loss {total / len(truth):.4f}", flush=True)
    return net.eval()


def _torch_probabilities(net, patches: np.ndarray, context: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    import torch

    with torch.no_grad():
        return torch.softmax(net(torch.tensor(patches), torch.tensor(context)), 1).numpy()


def report_held_out(probs: np.ndarray, truth: np.ndarray, keys: np.ndarray) -> None:
    """What the second opinion does to the held-out squares the rules read: wrong and right ones
    doubted, and the frames the stability filter would take (no square unknown) wrong and right."""
    from services.vision.detector.doubt import STATES, SURE_READING

    rules, confidence = keys[:, 4], keys[:, 5] / 1000.0
    read = rules < len(STATES)
    best = probs.argmax(1)
    frame = keys[:, 0] * 10**8 + keys[:, 1] * 10**5 + keys[:, 2]
    right = read & (rules == truth)
    print(
        f"held-out squares {len(truth)}: the network alone right {np.mean(best == truth):.2%}; the rules"
        f" right {right.sum()}, unknown {(~read).sum()}, wrong {(read & ~right).sum()}"
    )
    # (What the networks give the rules' own reading: doubted at 1 - p or less, as doubt.ensemble_doubts.)
    given = np.where(read, probs[np.arange(len(rules)), np.where(read, rules, 0)], 1.0)
    for p in REPORTED:
        doubt = read & (given <= 1.0 - p) & (confidence < SURE_READING)
        taken = {f for f in np.unique(frame) if read[frame == f].all()}
        wrong_frames = {f for f in taken if not right[frame == f].all()}
        doubted_frames = {f for f in taken if doubt[frame == f].any()}
        print(
            f"  p >= {p}: squares doubted: wrong {(doubt & ~right).sum()} of {(read & ~right).sum()},"
            f" right {(doubt & right).sum()} of {right.sum()}; frames taken: wrong doubted"
            f" {len(wrong_frames & doubted_frames)} of {len(wrong_frames)}, right doubted"
            f" {len(doubted_frames - wrong_frames)} of {len(taken - wrong_frames)}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cut = sub.add_parser("squares", help="cut out the squares")
    cut.add_argument("out", type=Path)
    cut.add_argument("--jobs", type=int, default=2)
    fit = sub.add_parser("train", help="train the network (needs torch)")
    fit.add_argument("squares", type=Path)
    fit.add_argument("--hold-out", default="", help="generators to leave out and report on")
    fit.add_argument("--out", type=Path, default=REPO / "services" / "vision" / "detector" / "square_net.npz")
    args = parser.parse_args()
    if args.command == "squares":
        cut_squares(args.out, args.jobs)
        return 0
    from services.vision.detector.doubt import probabilities

    data = np.load(args.squares)
    patches = data["patches"].astype(np.float32)
    context, truth, keys = data["context"], data["truth"], data["keys"]
    held = np.isin(keys[:, 0], [SOURCES.index(g) for g in args.hold_out.split(",") if g])
    nets = [train(patches[~held], context[~held], truth[~held], seed) for seed in ENSEMBLE_SEEDS]
    if held.any():
        mean = np.mean([_torch_probabilities(net, patches[held], context[held]) for net in nets], axis=0)
        report_held_out(mean, truth[held], keys[held])
        return 0
    arrays: dict[str, np.ndarray] = {}
    check = range(2048)  # (one square at a time: the detector gives each board's context with it)
    for k, net in enumerate(nets):
        mine = {name: value.detach().numpy().astype(np.float32) for name, value in net.state_dict().items()}
        theirs = _torch_probabilities(net, patches[: len(check)], context[: len(check)])
        ours = np.concatenate([probabilities(patches[i : i + 1], context[i], mine) for i in check])
        gap = float(np.abs(ours - theirs).max())
        if gap > 1e-4:
            print(f"network {k}: the numpy forward pass differs from torch's by {gap}: not written")
            return 1
        arrays |= {f"net{k}.{name}": value for name, value in mine.items()}
    np.savez_compressed(args.out, **arrays)
    print(f"{len(nets)} networks to {args.out} (numpy and torch agree within 1e-4)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
