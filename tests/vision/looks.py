"""Random looks for the independent drawing (tests/vision/synth.py): wood, painted and dark plates,
thick and thin lines, discs with and without a rim, crosses, coloured supply trays, clutter."""

from __future__ import annotations

import math

import numpy as np

from .synth import Scene, board_point


def _jitter(rng: np.random.Generator, bgr: tuple[float, float, float], amount: float) -> tuple[float, ...]:
    return tuple(float(np.clip(v + rng.uniform(-amount, amount), 0, 255)) for v in bgr)


def random_board(rng: np.random.Generator) -> str:
    cells = ["."] * 9
    order = rng.permutation(9)
    nx, no = int(rng.integers(0, 6)), int(rng.integers(0, 5))
    for i in order[:nx]:
        cells[i] = "X"
    for i in order[nx : nx + no]:
        cells[i] = "O"
    return "".join(cells)


def random_scene(rng: np.random.Generator, angle_deg: float | None = None) -> Scene:
    """One seeded look: a board, its pieces, its supply in trays beside it, the table around."""
    kind = rng.choice(["wood", "painted", "dark"])
    if kind == "wood":
        board = _jitter(rng, (95.0, 150.0, 200.0), 20)  # BGR: warm, light wood
        line = _jitter(rng, (30.0, 45.0, 70.0), 15)
        grain = float(rng.uniform(3, 10))
    elif kind == "painted":
        board = _jitter(rng, tuple(float(v) for v in rng.uniform(150, 235, 3)), 0)
        line = _jitter(rng, (40.0, 40.0, 40.0), 25)
        grain = 0.0
    else:  # like the real photos: a dark plate with light lines
        board = _jitter(rng, (110.0, 85.0, 70.0), 20)
        line = _jitter(rng, (225.0, 215.0, 220.0), 15)
        grain = 0.0
    table = tuple(float(v) for v in rng.uniform(40, 200, 3))
    pitch = float(rng.uniform(40, 72))
    angle = float(rng.uniform(-44.0, 44.0)) if angle_deg is None else angle_deg
    centre = (320 + float(rng.uniform(-70, 70)), 240 + float(rng.uniform(-40, 40)))
    scene = Scene(
        center=centre,
        angle_deg=angle,
        pitch_px=pitch,
        line_px=float(rng.uniform(0.04, 0.16) * pitch),
        board=random_board(rng),
        board_grey=board,
        line_grey=line,
        table_grey=table,
        white_grey=_jitter(rng, (238.0, 238.0, 235.0), 12),
        black_grey=_jitter(rng, (30.0, 30.0, 32.0), 12),
        piece_frac=float(rng.uniform(0.45, 0.62)),
        gradient=float(rng.uniform(0, 0.35)),
        noise=float(rng.uniform(0, 5)),
        blur=float(rng.uniform(0, 1.2)),
        glare=bool(rng.random() < 0.3),
        crosses=bool(rng.random() < 0.4),
        rim=float(rng.uniform(0.15, 0.3)) if rng.random() < 0.5 else 0.0,
        grain=grain,
        clutter=int(rng.integers(0, 5)),
    )
    return with_supply(scene, rng)


def with_supply(scene: Scene, rng: np.random.Generator) -> Scene:
    """The unused pieces (5 of each colour in all) in two coloured trays beside the board."""
    from dataclasses import replace

    p = scene.pitch_px
    blacks = 5 - scene.board.count("X")
    whites = 5 - scene.board.count("O")
    supply: list[tuple[str, float, float]] = []
    trays = []
    tray_colour = tuple(float(v) for v in rng.uniform(60, 220, 3))
    for side, colour, count in ((-1, "black", blacks), (1, "white", whites)):
        # A column along the board's y axis, a pitch and a half beyond its edge.
        cx, cy = board_point(scene, side * 2.45 * p, 0.0)
        # Slots a little more than a piece apart (pieces in a column do not touch).
        spacing = (scene.piece_frac + 0.15) * p
        trays.append((cx, cy, 1.0 * p, 5.2 * spacing, tray_colour))
        for i in range(count):
            dy = (i - 2) * spacing
            x, y = (
                cx + dy * math.sin(math.radians(scene.angle_deg)),
                cy + dy * math.cos(math.radians(scene.angle_deg)),
            )
            supply.append((colour, x, y))
    return replace(scene, supply=tuple(supply), trays=tuple(trays) if rng.random() < 0.6 else ())


#: plate families of contest_scene: BGR base colour and jitter.
PLATES: dict[str, tuple[tuple[float, float, float], float]] = {
    "blue": ((200.0, 130.0, 40.0), 25.0),
    "green": ((80.0, 160.0, 60.0), 25.0),
    "white": ((238.0, 240.0, 240.0), 10.0),
    "grey": ((150.0, 150.0, 150.0), 30.0),
    "wood": ((95.0, 150.0, 200.0), 20.0),
    "pastel": ((205.0, 205.0, 205.0), 45.0),
    "dark": ((60.0, 55.0, 55.0), 20.0),
}


def contest_scene(rng: np.random.Generator, plate: str | None = None) -> Scene:
    """One seeded look of the kind a contest table shows, for tuning (issue 11's list): a plate of any
    colour (white, grey, wood, dark, saturated, pastel), dark or light lines 2-12% of the pitch, pieces
    0.20-0.45 of the pitch in radius (so they hide most of their square), matte or glossy, with a darker
    rim and a soft shadow, white pieces that may be within 20 grey levels of the plate, warm or cool
    white balance, a light gradient up to 2:1, vignetting, JPEG 50-95, motion blur up to 2 px, pitch
    35-90 px."""
    from dataclasses import replace

    kind = str(rng.choice(list(PLATES))) if plate is None else plate
    base, amount = PLATES[kind]
    board = _jitter(rng, base, amount)
    if kind == "dark":
        line = _jitter(rng, (215.0, 215.0, 215.0), 20)
    else:
        line = _jitter(rng, (35.0, 35.0, 40.0), 20)
    white = _jitter(rng, (225.0, 225.0, 225.0), 20)
    if kind in ("white", "pastel") and rng.random() < 0.5:
        # White pieces within 20 grey levels of the plate, brighter or darker.
        g = float(np.mean(board)) + float(rng.uniform(-20, 20))
        white = _jitter(rng, (g, g, g), 4)
    pitch = float(rng.uniform(35, 90))
    half_extent = 1.5 * pitch * math.sqrt(2) + 0.3 * pitch
    cx = 320 + float(rng.uniform(-1, 1)) * max(0.0, 300 - half_extent)
    cy = 240 + float(rng.uniform(-1, 1)) * max(0.0, 225 - half_extent)
    warm = float(rng.uniform(-0.12, 0.12))
    scene = Scene(
        center=(cx, cy),
        angle_deg=float(rng.uniform(-44.0, 44.0)),
        pitch_px=pitch,
        line_px=float(rng.uniform(0.02, 0.12) * pitch),
        board=random_board(rng),
        board_grey=board,
        line_grey=line,
        table_grey=tuple(float(v) for v in rng.uniform(40, 200, 3)),
        white_grey=white,
        black_grey=_jitter(rng, (35.0, 35.0, 35.0), 20),
        piece_frac=float(rng.uniform(0.40, 0.88)),
        gradient=float(rng.uniform(0, 0.5)),
        noise=float(rng.uniform(0, 4)),
        blur=float(rng.uniform(0, 1.0)),
        glare=bool(rng.random() < 0.5),
        rim=float(rng.uniform(0.08, 0.2)),
        grain=float(rng.uniform(3, 10)) if kind == "wood" else 0.0,
        soft_shadow=float(rng.uniform(0.15, 0.45)),
        vignette=float(rng.uniform(0, 0.3)),
        white_balance=(1.0 - warm, 1.0, 1.0 + warm),
        motion_blur=float(rng.uniform(0, 2)) if rng.random() < 0.3 else 0.0,
        jpeg_quality=int(rng.integers(50, 96)),
        clutter=int(rng.integers(0, 4)),
    )
    # Off-centre pieces, as far as their square allows (a piece never crosses a line).
    room = max(0.0, 0.5 - scene.line_px / scene.pitch_px / 2 - scene.piece_frac / 2)
    tilt = (
        (float(rng.uniform(-3e-4, 3e-4)), float(rng.uniform(-3e-4, 3e-4)))
        if rng.random() < 0.5
        else (0.0, 0.0)
    )
    scene = replace(scene, piece_jitter=min(0.06, room / 1.5), tilt=tilt)
    return replace(with_supply(scene, rng), trays=())


def on_cutting_mat(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` with its table a cutting mat: a printed grid over the whole table, light lines on a green
    or dark mat or dark lines on a grey one, 0.12-0.25 of the board's pitch apart with every fifth
    heavier (a 1 cm grid under squares of 5-8 cm), or 0.5-1.1 of it (a 1-inch grid, or the heavy lines
    alone): a grid of square cells all round the board, some of the board's own size."""
    from dataclasses import replace

    if rng.random() < 0.7:
        mat = (float(rng.uniform(30, 70)), float(rng.uniform(70, 110)), float(rng.uniform(40, 80)))
        ink = (float(rng.uniform(150, 230)),) * 3
    else:
        mat, ink = (float(rng.uniform(150, 220)),) * 3, (float(rng.uniform(20, 80)),) * 3
    fine = rng.random() < 0.5
    spacing = float(rng.uniform(0.12, 0.25) if fine else rng.uniform(0.5, 1.1)) * scene.pitch_px
    grid = (spacing, float(rng.uniform(-45, 45)), float(rng.uniform(0.6, 2.0)), ink, 5 if fine else 1000)
    return replace(scene, table_grey=mat, table_grid=grid)


def with_washers(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` with a steel washer or magnet on every piece (what the electromagnet lifts it by):
    0.3-0.6 of the piece's radius, bright or dull steel (grey 110-200, a little blue or warm); a washer's
    hole (0.4 of its radius) shows the piece, a magnet has none."""
    from dataclasses import replace

    grey = float(rng.uniform(110, 200))
    tint = float(rng.uniform(-8, 8))
    hole = 0.4 if rng.random() < 0.5 else 0.0
    return replace(scene, washer=(float(rng.uniform(0.3, 0.6)), (grey + tint, grey, grey - tint), hole))


def with_faded_lines(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` with two or three stretches of its lines grown faint (a marker running dry, a pen's
    stroke gone thin): each on a random line, 0.5-1.2 pitches long, its middle 0.5-0.75 of the way to the
    plate's colour."""
    from dataclasses import replace

    stretches = []
    for _ in range(int(rng.integers(2, 4))):
        length = float(rng.uniform(0.5, 1.2))
        start = float(rng.uniform(0.0, 3.0 - length))
        stretches.append((int(rng.integers(0, 4)), bool(rng.random() < 0.5), start, start + length))
    return replace(scene, faded_lines=tuple(stretches), line_fade=float(rng.uniform(0.5, 0.75)))


def with_hard_shadow(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` under a lamp's sharp shadow of something beside the board (an arm, a box, the gantry's
    frame): half the time a band 0.5-3 pitches wide, else a half plane, at any angle, taking 20-60% of
    the light, its edges at most 0.03 of a pitch soft."""
    from dataclasses import replace

    width = float(rng.uniform(0.5, 3.0)) if rng.random() < 0.5 else 8.0
    band = (
        float(rng.uniform(0.0, 180.0)),
        float(rng.uniform(-1.5, 1.5)),
        width,
        float(rng.uniform(0.2, 0.6)),
        float(rng.uniform(0.0, 0.03)),
    )
    return replace(scene, arm_shadow=band)


def with_body_shadow(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` under the shadow of a person beside the board: a half plane at any angle, its edge
    across the board up to 1.2 pitches from its centre (so covering a fifth to four fifths of it),
    taking 20-60% of the light, its edge's penumbra 0.03-1 pitch wide (a desk lamp close by to a ceiling
    lamp far above)."""
    from dataclasses import replace

    edge = float(rng.uniform(-1.2, 1.2))
    side = 1.0 if rng.random() < 0.5 else -1.0
    # (A band 8 pitches wide whose one edge crosses the board: its other lies far beyond it.)
    shadow = (
        float(rng.uniform(0.0, 180.0)),
        edge + side * 4.0,
        8.0,
        float(rng.uniform(0.2, 0.6)),
        float(rng.uniform(0.03, 1.0)),
    )
    return replace(scene, arm_shadow=shadow)


def with_printed_plate(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` with a 3D-printed plate: its top layer's ridges 1.2-5 px apart (a 0.4-0.6 mm nozzle seen
    at 3-9 px a millimetre), along the board's diagonals (a slicer's top layers) or any way, 4-25 grey
    levels from ridge to groove (a lamp low beside the board)."""
    from dataclasses import replace

    angle = float(rng.choice([45.0, -45.0]) if rng.random() < 0.6 else rng.uniform(0.0, 180.0))
    return replace(scene, striations=(float(rng.uniform(1.2, 5.0)), angle, float(rng.uniform(4.0, 25.0))))


def with_wavy_lines(scene: Scene, rng: np.random.Generator) -> Scene:
    """``scene`` with its lines drawn by hand with a marker: wandering 0.5-2 px across their axis over
    waves 0.6-2 pitches long, their width a third more or less along them."""
    from dataclasses import replace

    return replace(scene, wavy=(float(rng.uniform(0.5, 2.0)), float(rng.uniform(0.6, 2.0))))
