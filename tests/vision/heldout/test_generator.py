"""The physical generator's truth matches its pixels; its interface, tags and determinism hold."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from tests.vision.heldout import generator as g

N_TONE = 40  # frames for the tone and line checks


def _grey(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)


def _disc_median(grey: np.ndarray, centre, radius: float) -> float:
    yy, xx = np.mgrid[0 : grey.shape[0], 0 : grey.shape[1]]
    m = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2 <= max(radius, 1.5) ** 2
    return float(np.median(grey[m]))


def _formula(sample: g.Sample, dx: float, dy: float) -> tuple[float, float]:
    """The truth's own mapping of a board offset (pitch units) to the image, before perspective."""
    a = math.radians(sample.angle_deg)
    p = sample.pitch_px
    cx, cy = sample.centre_px
    return (
        cx + dx * p * math.cos(a) + dy * p * math.sin(a),
        cy - dx * p * math.sin(a) + dy * p * math.cos(a),
    )


@pytest.fixture(scope="module")
def frames() -> list[tuple[g.Scene, g.Sample]]:
    out = []
    for i in range(N_TONE):
        rng = np.random.default_rng([7, i])
        out.append(g.make_scene_and_sample(rng, None, random_occlusion=False))
    return out


def test_interface(frames) -> None:
    for _, s in frames:
        assert s.image.shape == (480, 640, 3) and s.image.dtype == np.uint8
        assert len(s.board) == 9 and set(s.board) <= set("XO.")
        assert -45 < s.angle_deg <= 45
        assert 35 <= s.pitch_px <= 90.5
        assert 0 <= s.centre_px[0] < 640 and 0 <= s.centre_px[1] < 480
        assert s.tags <= set(g.TAGS)
        assert s.occluded == ("occluded" in s.tags)
        assert isinstance(s.tags, frozenset)
    assert len(set(g.TAGS)) == len(g.TAGS)


def test_deterministic() -> None:
    a = g.make_sample(np.random.default_rng(123))
    b = g.make_sample(np.random.default_rng(123))
    c = g.make_sample(np.random.default_rng(124))
    assert np.array_equal(a.image, b.image)
    assert (a.board, a.centre_px, a.angle_deg, a.pitch_px, a.occluded, a.tags) == (
        b.board,
        b.centre_px,
        b.angle_deg,
        b.pitch_px,
        b.occluded,
        b.tags,
    )
    assert not np.array_equal(a.image, c.image)
    s1 = g.make_set(4, seed=5)
    s2 = g.make_set(4, seed=5)
    assert all(np.array_equal(x.image, y.image) and x.tags == y.tags for x, y in zip(s1, s2, strict=True))


def test_formula_matches_projection(frames) -> None:
    """Square centres from (centre_px, angle_deg, pitch_px) are where the camera puts them, up to the
    perspective and lens of a camera tilted up to 12 degrees."""
    for sc, s in frames:
        for n in range(1, 10):
            r, c = divmod(n - 1, 3)
            exact = sc.project_board(*sc.square_centre(n))[0]
            approx = _formula(s, c - 1, r - 1)
            assert math.dist(exact, approx) < 0.12 * s.pitch_px, (n, exact, approx, s.tags)
        assert math.dist(sc.project_board(0.0, 0.0)[0], s.centre_px) < 1e-6


def test_pieces_have_their_tone(frames) -> None:
    """The top of a black piece is dark, of a white piece light, and black below white in one frame."""
    for sc, s in frames:
        grey = _grey(s.image)
        tones = {"X": [], "O": []}
        for pk in sc.pucks:
            if pk.kind not in ("X", "O"):
                continue
            top = sc.cam.project([(pk.u, pk.v, pk.zb + pk.h)])[0]
            tones[pk.kind].append(_disc_median(grey, top, 0.08 * s.pitch_px))
        assert sorted(tones["X"] + tones["O"]) or s.board == "........."
        if "matte" in s.tags:  # (a glossy top can mirror the lamp)
            assert all(t < 115 for t in tones["X"]), (tones, sorted(s.tags))
            assert all(t > 105 for t in tones["O"]), (tones, sorted(s.tags))
        if tones["X"] and tones["O"]:
            assert max(tones["X"]) + 30 < min(tones["O"]), (tones, sorted(s.tags))


def test_piece_count_matches_board(frames) -> None:
    for sc, s in frames:
        on_board = "".join("X" if pk.kind == "X" else "O" for pk in sc.pucks if pk.kind in ("X", "O"))
        assert sorted(on_board) == sorted(s.board.replace(".", ""))


def test_pieces_inside_their_squares(frames) -> None:
    """Every piece lies inside its square, clear of the lines, within 0.06 pitch of the centre."""
    for sc, s in frames:
        ex, ey = sc.ex, sc.ey
        occupied = [i for i in range(9) if s.board[i] != "."]
        pucks = [pk for pk in sc.pucks if pk.kind in ("X", "O")]
        for i, pk in zip(occupied, pucks, strict=True):
            d = np.array([pk.u, pk.v]) - sc.B
            bx, by = float(d @ ex), float(d @ ey)
            cx, cy = sc.square_centre(i + 1)
            off = math.hypot(bx - cx, by - cy)
            assert off <= 0.06 * sc.s + 1e-6
            assert 0.2 * sc.s - 1e-6 <= pk.R <= 0.45 * sc.s + 1e-6
            for o in (bx - cx, by - cy):
                assert abs(o) + pk.R <= 0.5 * sc.s - sc.lw / 2 + 1e-6


def _line_contrast(sc: g.Scene, s: g.Sample) -> tuple[float, float]:
    """Mean tone on the projected grid lines and at points a quarter pitch beside them."""
    grey = _grey(s.image)
    h = sc.s
    on, beside = [], []
    for k in (-1.5, -0.5, 0.5, 1.5):
        for t in np.linspace(-1.4, 1.4, 15):
            for vertical in (True, False):
                pts = (
                    [(k, t), (k - 0.25, t), (k + 0.25, t)]
                    if vertical
                    else [(t, k), (t, k - 0.25), (t, k + 0.25)]
                )
                px = sc.project_board(np.array([p[0] for p in pts]) * h, np.array([p[1] for p in pts]) * h)
                vals = [float(cv2.getRectSubPix(grey, (1, 1), (float(x), float(y)))[0, 0]) for x, y in px]
                on.append(vals[0])
                beside += [
                    v for v, p in zip(vals[1:], pts[1:], strict=True) if max(abs(p[0]), abs(p[1])) < 1.5
                ]
    return float(np.mean(on)), float(np.mean(beside))


def test_grid_lines_where_the_truth_says() -> None:
    """On empty boards the projected lines carry the line colour: darker (or lighter) than the plate
    a quarter pitch away."""
    for i, s in enumerate(g.make_condition("empty-board", 16, seed=3)):
        sc, s2 = g.make_scene_and_sample(np.random.default_rng([3, _key("empty-board"), i]), {"empty-board"})
        assert np.array_equal(s.image, s2.image)
        on, beside = _line_contrast(sc, s)
        if "lines:dark" in s.tags:
            assert on < beside - 8, (on, beside, sorted(s.tags))
        else:
            assert on > beside + 8, (on, beside, sorted(s.tags))


def _key(tag: str) -> int:
    import zlib

    return zlib.crc32(tag.encode())


@pytest.mark.parametrize("tag", g.TAGS)
def test_every_tag_can_be_forced(tag: str) -> None:
    for s in g.make_condition(tag, 2, seed=11):
        assert tag in s.tags
        if tag.startswith("occ") or tag == "occluded":
            assert s.occluded


def test_make_set_cycles_and_occludes() -> None:
    frames = g.make_set(30, seed=2)
    assert sum(s.occluded for s in frames) == 3
    for i, s in enumerate(frames):
        if i % 10 != 9:
            k = i - i // 10
            assert g.TAG_CYCLE[k % len(g.TAG_CYCLE)] in s.tags
    families = {
        name for name, tags in g.TAG_FAMILIES.items() for s in frames[:9] for t in s.tags if t in tags
    }
    assert len(families) >= 6
    # any frame of the set, rendered alone
    for i in (0, 9, 10, 21, 29):
        alone = g.make_frame(i, seed=2)
        assert np.array_equal(alone.image, frames[i].image)
        assert (alone.board, alone.tags) == (frames[i].board, frames[i].tags)


def test_tags_constrain_the_scene() -> None:
    for i in range(4):
        sc, s = g.make_scene_and_sample(np.random.default_rng([1, i]), {"plate:dark"})
        assert sc.truth["plate_luma"] <= 92 and "lines:light" in s.tags
        sc, s = g.make_scene_and_sample(np.random.default_rng([2, i]), {"white-near-plate"})
        assert "O" in s.board and abs(sc.truth["white_luma"] - sc.truth["plate_luma"]) <= 20
        sc, s = g.make_scene_and_sample(np.random.default_rng([3, i]), {"black-near-plate"})
        assert "X" in s.board and abs(sc.truth["black_luma"] - sc.truth["plate_luma"]) <= 25
        sc, s = g.make_scene_and_sample(np.random.default_rng([4, i]), {"plate:darker-than-black"})
        assert sc.truth["plate_luma"] < sc.truth["black_luma"]
        sc, s = g.make_scene_and_sample(np.random.default_rng([5, i]), {"supply"})
        spares = [pk for pk in sc.pucks if pk.kind == "spare"]
        assert len(spares) == 10 and all(pk.zb == 0.0 for pk in spares)
        sc, s = g.make_scene_and_sample(np.random.default_rng([6, i]), {"large-pieces", "lines:thick"})
        assert all(0.38 * sc.s <= pk.R for pk in sc.pucks if pk.kind in "XO")


def test_occluder_covers_the_grid() -> None:
    """An occluded frame differs from the same scene without its occluder inside the grid."""
    for tag in g.OCCLUSION_TAGS:
        rng = np.random.default_rng([5, _key(tag)])
        sc = g._make_scene(rng, {tag})
        state = rng.bit_generator.state
        with_occ = g._render(sc, rng)
        rng.bit_generator.state = state
        if tag == "occ:coin":
            sc.pucks = [pk for pk in sc.pucks if pk.kind != "coin"]
        else:
            sc.occluder = None
        without = g._render(sc, rng)
        half = 1.5 * sc.s
        corners = sc.project_board(np.array([-half, half, half, -half]), np.array([-half, -half, half, half]))
        mask = np.zeros((480, 640), np.uint8)
        cv2.fillConvexPoly(mask, np.round(corners).astype(np.int32), 1)
        diff = np.abs(with_occ.astype(np.int16) - without.astype(np.int16)).max(axis=2)
        changed = (diff > 40) & (mask > 0)
        assert changed.sum() > 30, (tag, changed.sum())


def test_white_balance_shifts_colour() -> None:
    """The same scene rendered warm is redder against blue than rendered cool."""
    rng = np.random.default_rng(9)
    sc = g._make_scene(rng, {"wb:warm"})
    state = rng.bit_generator.state
    warm = g._render(sc, rng).reshape(-1, 3).astype(np.float64).mean(axis=0)
    rng.bit_generator.state = state
    sc.post["gains"] = np.array([1.15, 1.0, 0.85], np.float32)
    cool = g._render(sc, rng).reshape(-1, 3).astype(np.float64).mean(axis=0)
    assert warm[2] / warm[0] > cool[2] / cool[0] * 1.1


def test_unknown_or_conflicting_tags_raise() -> None:
    with pytest.raises(ValueError):
        g.make_sample(np.random.default_rng(0), {"plate:purple"})
    with pytest.raises(ValueError):
        g.make_sample(np.random.default_rng(0), {"empty-board", "full-board"})
    with pytest.raises(ValueError):
        g.make_condition("nope", 1, 0)
