"""A person's shadow across the board: one soft edge, the shadow reaching off the board and over up to
most of it (our renderer's contest looks, ``looks.with_body_shadow``). The shadow band's model does not
hold it (the plane of light it is measured against leans into such a shadow), so squares the soft edge
crosses may read as bodies and be left unknown; what matters is that none is read wrong, and that a
coin on a square in the shadow is not taken for a piece more often than without it.

A fitted edge (one soft edge with the lit board's own plane of light, read through where the first read
had a square in doubt) read 94.0 % -> 97.4 % of these squares right (120 frames), but let 5 more of 116
boards with a coin on an empty square in the shadow be read as clear boards, the coin a piece: dropped
(session 62). These tests hold the reader where it is, so that the next attempt is measured on both."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from services.vision.detector import detect
from services.vision.tracker import StabilityFilter

from .looks import contest_scene, with_body_shadow
from .synth import draw, square_centre
from .test_marker_lines import read_scenes
from .test_occlusion import COIN_METALS

#: our renderer's frames under a person's shadow: how many, their seed, the squares read right at least
#: (measured: 339 of 360, 10 frames flagged, none read wrong).
FRAMES, SEED = 40, 7
RIGHT_AT_LEAST = 336
#: a coin (test_occlusion's metals) on an empty square of a board under such a shadow: frames, seed,
#: and the boards read clear at most (measured: 11 of 39, 10 of them wrong, the coin a piece; over 116
#: frames, 23 of 112, 22 wrong).
COINS = list(COIN_METALS.values())
COIN_FRAMES, COIN_SEED = 40, 21
COINS_CLEAR_AT_MOST = 11


def test_boards_under_a_persons_shadow_read_no_square_wrong() -> None:
    rng = np.random.default_rng(SEED)
    scenes = [with_body_shadow(contest_scene(rng), rng) for _ in range(FRAMES)]
    right, _, problems = read_scenes(scenes)
    assert not problems
    assert right >= RIGHT_AT_LEAST


def test_coins_in_a_persons_shadow_are_read_clear_no_more_often() -> None:
    # (The coin rules' weakness in a shadow, reported, not mended here. The person's-shadow read that
    # was dropped, measured with other metal colours: 28 -> 33 of 116 boards read clear.)
    rng = np.random.default_rng(COIN_SEED)
    clear = frames = 0
    for i in range(COIN_FRAMES):
        scene = with_body_shadow(contest_scene(rng), rng)
        empty = [k + 1 for k, ch in enumerate(scene.board) if ch == "."]
        if not empty:
            continue
        cx, cy = square_centre(scene, int(rng.choice(empty)))
        radius = float(rng.uniform(0.18, 0.3)) * scene.pitch_px
        colour = tuple(c * float(rng.uniform(0.85, 1.1)) for c in COINS[int(rng.integers(0, 3))])
        det = detect(draw(replace(scene, objects=(("coin", cx, cy, radius, 0.0, colour),)), seed=i))
        frames += 1
        clear += StabilityFilter.usable(det.found, det.board, det.occluded, det.problem)
    assert frames >= 35
    assert clear <= COINS_CLEAR_AT_MOST
