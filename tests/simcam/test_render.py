"""The renderer: deterministic, geometrically exact, pieces where they lie, the hand hides what it covers,
markers a real ArUco detector finds and that give back the camera's homography."""

from __future__ import annotations

import math

import cv2
import msgspec
import numpy as np
import pytest

from messages import GripperState, HandState, PieceState, WorldState
from services.common.config import TableConfig
from services.simcam import CameraModel, RenderStyle, render, square_centre, world_from_board
from services.simcam.renderer import PIECE_THICKNESS_MM, Renderer, RenderError
from services.simcam.world import board_to_table

CLEAN = RenderStyle.preset("clean")


def _pixel(img: np.ndarray, uv: np.ndarray, r: int = 1) -> np.ndarray:
    """Mean BGR of a (2r+1)^2 window around a pixel position."""
    u, v = (round(float(c)) for c in uv)
    return img[v - r : v + r + 1, u - r : u + r + 1].reshape(-1, 3).mean(axis=0)


def test_frame_shape_and_type(camera: CameraModel, table: TableConfig) -> None:
    img = render(world_from_board("X...O...."), camera, seed=0, table=table)
    assert img.shape == (480, 640, 3) and img.dtype == np.uint8


def test_same_seed_same_bytes_other_seed_other_noise(camera: CameraModel, table: TableConfig) -> None:
    w = world_from_board("XO.X.O...", 17, (205, 148), hand=HandState(present=True, x_mm=210, y_mm=150))
    a = render(w, camera, seed=42, table=table)
    # a fresh renderer (no caches shared) gives the same bytes
    fresh = Renderer(camera, table, RenderStyle())
    b = fresh.render(w, seed=42)
    assert a.tobytes() == b.tobytes()
    # the reused image of an unchanged world (only its clock moved) is the same as a full render
    later = msgspec.structs.replace(w, sim_time_s=12.5, revision=7)
    assert fresh.render(later, seed=42).tobytes() == fresh.render(later, seed=42, reuse=False).tobytes()
    assert fresh.render(later, seed=42).tobytes() == a.tobytes()
    c = render(w, camera, seed=43, table=table)
    diff = a.astype(int) - c.astype(int)
    assert np.abs(diff).mean() > 1.0  # the noise differs everywhere...
    assert np.abs(diff.mean(axis=(0, 1))).max() < 0.5  # ...but the picture is the same


def test_noise_has_the_style_sigma(camera: CameraModel, table: TableConfig) -> None:
    w = world_from_board(".........")
    clean = render(w, camera, seed=1, table=table, style=CLEAN)
    noisy = render(w, camera, seed=1, table=table, style=CLEAN.replace(noise_sigma=4.0))
    d = noisy.astype(float) - clean.astype(float)
    assert d.std() == pytest.approx(4.0, rel=0.1)


@pytest.mark.parametrize("angle", [-40.0, 0.0, 25.0])
def test_grid_lines_are_where_the_homography_says(
    camera: CameraModel, table: TableConfig, angle: float
) -> None:
    centre = (195.0, 155.0)
    w = world_from_board(".........", angle, centre)
    img = render(w, camera, seed=0, table=table, style=CLEAN)
    h = camera.table_to_image_homography()
    p = w.pitch_mm
    line_pts, plate_pts = [], []
    for k in (-1.5, -0.5, 0.5, 1.5):
        for t in np.linspace(-1.4, 1.4, 15):
            line_pts.append(board_to_table(k * p, t * p, centre, angle))
            line_pts.append(board_to_table(t * p, k * p, centre, angle))
    for r in (-1, 0, 1):  # square centres are plate colour
        for c in (-1, 0, 1):
            plate_pts.append(board_to_table(c * p, r * p, centre, angle))
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)

    def project(pts: list[tuple[float, float]]) -> np.ndarray:
        q = np.column_stack([np.array(pts), np.ones(len(pts))]) @ h.T
        return q[:, :2] / q[:, 2:3]

    line_values = [grey[round(v), round(u)] for u, v in project(line_pts)]
    plate_values = [grey[round(v), round(u)] for u, v in project(plate_pts)]
    assert max(line_values) < 80, "every sampled line pixel is dark"
    assert min(plate_values) > 170, "every square centre is light"
    # half a line width plus a pixel beside a line, the plate shows again
    beside = project(
        [board_to_table(0.5 * p + w.line_width_mm / 2 + 1.2, t * p, centre, angle) for t in (-1, 0, 1)]
    )
    assert min(grey[round(v), round(u)] for u, v in beside) > 150


def test_pieces_appear_on_their_squares(camera: CameraModel, table: TableConfig) -> None:
    board = "X.O.XO..X"
    w = world_from_board(board, 30, (200, 150))
    img = render(w, camera, seed=0, table=table, style=CLEAN)
    style = CLEAN
    for n, ch in enumerate(board, start=1):
        x, y = square_centre(n, w.board_center_mm, w.board_angle_deg, w.pitch_mm)
        uv = camera.project(np.array([[x, y, PIECE_THICKNESS_MM]]))[0]
        colour = _pixel(img, uv)
        expected = {"X": style.black_piece_colour, "O": style.white_piece_colour, ".": w.board_colour}[ch]
        assert np.abs(colour - np.array(expected)).max() < 14, (n, ch, colour)


def test_hand_occludes_the_squares_it_covers(camera: CameraModel, table: TableConfig) -> None:
    board = "X.O.X.O.X"
    centre = (200.0, 150.0)
    hand = HandState(present=True, x_mm=200.0, y_mm=150.0, angle_deg=0.0)
    without = world_from_board(board, 10, centre)
    with_hand = msgspec.structs.replace(without, hand=hand)
    a = render(without, camera, seed=5, table=table)
    b = render(with_hand, camera, seed=5, table=table)
    changed = np.abs(a.astype(int) - b.astype(int)).max(axis=2) > 25
    # the hand and forearm cover a large area (the forearm runs out of the image at the bottom)...
    assert changed.mean() > 0.05
    assert changed[-5:, :].any()
    # ...including square 5 (under the palm and fingers) and the squares behind it towards the arm
    skin = np.array(RenderStyle().skin_colour, float)
    for n in (5, 8):
        x, y = square_centre(n, centre, 10, 40)
        uv = camera.project(np.array([[x, y]]))[0]
        seen = _pixel(b, uv, 2)
        assert seen[2] - seen[0] > 30, f"square {n} shows skin, not its piece: {seen}"
        assert np.abs(seen / seen.max() - skin / skin.max()).max() < 0.15
    # far from the hand nothing changed but the shadow: square 1 still shows its black piece
    x, y = square_centre(1, centre, 10, 40)
    uv = camera.project(np.array([[x, y, PIECE_THICKNESS_MM]]))[0]
    assert _pixel(b, uv).max() < 90


def _edge_distance(img: np.ndarray, centre: np.ndarray, start_px: float, threshold: float) -> float:
    """Pixels from ``centre`` towards -u until the grey level drops below ``threshold``."""
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    u, v = float(centre[0]), round(float(centre[1]))
    d = start_px
    while grey[v, round(u - d)] >= threshold:
        d += 0.5
    return d


def test_held_piece_is_raised_and_larger(camera: CameraModel, table: TableConfig) -> None:
    style = CLEAN.replace(shadow_strength=0.0, glare=0.0)
    x, y = 300.0, 200.0
    lying = PieceState(piece_id=5, colour="white", x_mm=x, y_mm=y, where="table")
    held = msgspec.structs.replace(lying, where="gripper")
    g = GripperState(x_mm=x, y_mm=y, z_mm=150.0, magnet=True, holding=5)
    base = world_from_board(".........")
    park = GripperState(x_mm=-300.0, y_mm=-300.0, z_mm=0.0)
    a = render(
        msgspec.structs.replace(base, pieces=[held], gripper=g), camera, seed=0, table=table, style=style
    )
    b = render(
        msgspec.structs.replace(base, pieces=[lying], gripper=park), camera, seed=0, table=table, style=style
    )
    top_held = g.z_mm + PIECE_THICKNESS_MM
    c_held = camera.project(np.array([[x, y, top_held]]))[0]
    c_lying = camera.project(np.array([[x, y, PIECE_THICKNESS_MM]]))[0]
    # the raised piece shows away from the camera's foot point, and larger
    foot = camera.project(np.array([camera.centre[:2]]))[0]
    assert np.linalg.norm(c_held - foot) > np.linalg.norm(c_lying - foot) + 5
    px_per_mm = np.linalg.norm(camera.project(np.array([[x + 1, y, top_held]]))[0] - c_held)
    r_held = _edge_distance(a, c_held, (8.0 + 1.0) * px_per_mm, 170)  # from beyond the magnet tube
    r_lying = _edge_distance(b, c_lying, 0.0, 170)
    hc = camera.height_mm
    expected = (hc - PIECE_THICKNESS_MM) / (hc - top_held)
    assert r_held / r_lying == pytest.approx(expected, rel=0.08)
    # the magnet tube covers the middle of the held piece
    assert cv2.cvtColor(a, cv2.COLOR_BGR2GRAY)[round(c_held[1]), round(c_held[0])] < 170


def test_lying_pieces_cast_a_shadow_away_from_the_light(camera: CameraModel, table: TableConfig) -> None:
    style = CLEAN.replace(light_azimuth_deg=0.0, light_elevation_deg=35.0, shadow_strength=0.6)
    piece = PieceState(piece_id=0, colour="white", x_mm=100.0, y_mm=250.0, where="table")
    w = msgspec.structs.replace(world_from_board("........."), pieces=[piece])
    img = render(w, camera, seed=0, table=table, style=style)
    no_piece = render(msgspec.structs.replace(w, pieces=[]), camera, seed=0, table=table, style=style)
    grey, ref = (cv2.cvtColor(i, cv2.COLOR_BGR2GRAY).astype(int) for i in (img, no_piece))
    shade = ref - grey
    left = camera.project(np.array([[100.0 - 13.0, 250.0]]))[0]  # the light is at +x: shadow at -x
    right = camera.project(np.array([[100.0 + 13.0, 250.0]]))[0]
    assert shade[round(left[1]), round(left[0])] > 15
    assert abs(shade[round(right[1]), round(right[0])]) < 8


STYLES = ["default", "dark", "harsh", "dim", "random:1", "random:7"]


@pytest.mark.parametrize("style", STYLES)
def test_markers_give_back_the_homography_within_1mm(
    camera: CameraModel, table: TableConfig, style: str
) -> None:
    w = world_from_board("XO..X..O.", 25, (200, 150))
    img = render(w, camera, seed=9, table=table, style=RenderStyle.preset(style))
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, table.marker_dictionary))
    corners, ids, _ = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters()).detectMarkers(img)
    assert ids is not None and sorted(ids.ravel().tolist()) == [0, 1, 2, 3]
    half = table.marker_size_mm / 2
    where = {int(m[0]): (m[1], m[2]) for m in table.markers}
    image_pts, table_pts = [], []
    for quad, marker_id in zip(corners, ids.ravel(), strict=True):
        x, y = where[int(marker_id)]
        image_pts += list(quad.reshape(4, 2))
        table_pts += [(x - half, y - half), (x + half, y - half), (x + half, y + half), (x - half, y + half)]
    h_est, _ = cv2.findHomography(np.array(image_pts), np.array(table_pts))
    grid = np.array([[x, y] for x in np.linspace(0, 400, 11) for y in np.linspace(0, 300, 9)])
    pix = camera.project(grid)
    back = np.column_stack([pix, np.ones(len(pix))]) @ h_est.T
    back = back[:, :2] / back[:, 2:3]
    assert np.abs(back - grid).max() < 1.0


def test_random_styles_all_render(camera: CameraModel, table: TableConfig) -> None:
    rng = np.random.default_rng(11)
    w = world_from_board(
        "XOX.O.X.O", 40, (190, 160), hand=HandState(present=True, x_mm=150, y_mm=200, angle_deg=60)
    )
    for _ in range(6):
        img = render(w, camera, seed=1, table=table, style=RenderStyle.random(rng))
        assert img.shape == (480, 640, 3)
        assert 20 < img.mean() < 235


def test_stacked_and_off_view_pieces_do_not_break_rendering(camera: CameraModel, table: TableConfig) -> None:
    pieces = [
        PieceState(piece_id=0, colour="black", x_mm=200.0, y_mm=150.0, where="board", square=5),
        PieceState(piece_id=1, colour="white", x_mm=204.0, y_mm=150.0, where="board", square=5, layer=1),
        PieceState(piece_id=2, colour="white", x_mm=-500.0, y_mm=900.0, where="table"),
        PieceState(piece_id=3, colour="black", x_mm=-8.0, y_mm=-8.0, where="table"),
    ]
    w = msgspec.structs.replace(world_from_board("........."), pieces=pieces)
    img = render(w, camera, seed=0, table=table, style=CLEAN)
    top = camera.project(np.array([[204.0, 150.0, 2 * PIECE_THICKNESS_MM]]))[0]
    assert _pixel(img, top).min() > 180  # the white piece lies on top of the black one
    gripper_far = msgspec.structs.replace(w, gripper=GripperState(x_mm=2000.0, y_mm=-900.0, z_mm=10.0))
    render(gripper_far, camera, seed=0, table=table)
    hand_far = msgspec.structs.replace(w, hand=HandState(present=True, x_mm=3000.0, y_mm=3000.0))
    render(hand_far, camera, seed=0, table=table)


def test_unknown_marker_dictionary_is_an_error(camera: CameraModel) -> None:
    with pytest.raises(RenderError, match="DICT_NOPE"):
        Renderer(camera, TableConfig(marker_dictionary="DICT_NOPE"), RenderStyle())


def test_board_colours_come_from_the_world_unless_the_style_overrides(
    camera: CameraModel, table: TableConfig
) -> None:
    w = msgspec.structs.replace(world_from_board("........."), board_colour=(40, 60, 30))
    centre = camera.project(np.array([[200.0 + 40.0, 150.0 + 40.0]]))[0]
    assert (
        np.abs(_pixel(render(w, camera, seed=0, table=table, style=CLEAN), centre) - (40, 60, 30)).max() < 6
    )
    dark = CLEAN.replace(board_colour=(10, 10, 10))
    assert _pixel(render(w, camera, seed=0, table=table, style=dark), centre).max() < 16


def test_world_state_type_is_what_render_takes(camera: CameraModel, table: TableConfig) -> None:
    # a WorldState decoded from the bus renders like the original
    w = world_from_board(
        "X........", 5, hand=HandState(present=True, x_mm=250, y_mm=100, angle_deg=math.degrees(0.5))
    )
    back = msgspec.json.decode(msgspec.json.encode(w), type=WorldState)
    assert (
        render(back, camera, seed=3, table=table).tobytes()
        == render(w, camera, seed=3, table=table).tobytes()
    )


@pytest.mark.parametrize(
    "change",
    [
        {"board_angle_deg": float("nan")},
        {"pitch_mm": 0.0},
        {"piece_diameter_mm": -3.0},
        {"hand": HandState(present=True, x_mm=float("inf"))},
        {"gripper": GripperState(x_mm=0.0, y_mm=float("nan"), z_mm=0.0)},
        {"gripper": GripperState(x_mm=0.0, y_mm=0.0, z_mm=5000.0)},
        {"piece_diameter_mm": 1e9},
    ],
)
def test_undrawable_worlds_are_refused(
    camera: CameraModel, table: TableConfig, change: dict[str, object]
) -> None:
    w = msgspec.structs.replace(world_from_board("X........"), **change)
    with pytest.raises(RenderError):
        render(w, camera, seed=0, table=table)


def test_a_piece_with_nan_coordinates_is_refused(camera: CameraModel, table: TableConfig) -> None:
    w = world_from_board("X........")
    bad = [msgspec.structs.replace(w.pieces[0], x_mm=float("nan")), *w.pieces[1:]]
    with pytest.raises(RenderError, match="piece 0"):
        render(msgspec.structs.replace(w, pieces=bad), camera, seed=0, table=table)


def test_caches_never_show_a_stale_world(camera: CameraModel, table: TableConfig) -> None:
    worlds = [
        world_from_board("X...O....", 10),
        world_from_board("X...O...X", 10),  # one more piece
        world_from_board("X...O...X", 12),  # the board turned
        world_from_board("X...O...X", 12, hand=HandState(present=True, x_mm=220, y_mm=160)),
        world_from_board("X...O...X", 12, gripper=GripperState(x_mm=200, y_mm=150, z_mm=15)),
        world_from_board("X...O....", 10),  # back to the first
    ]
    shared = Renderer(camera, table, RenderStyle())
    for i, w in enumerate(worlds):
        expected = Renderer(camera, table, RenderStyle()).render(w, seed=i)
        assert shared.render(w, seed=i).tobytes() == expected.tobytes(), i


def test_the_caches_cannot_be_written(camera: CameraModel, table: TableConfig) -> None:
    """The renderer's cached layers and sprites are shared by every later frame: they are read-only, and
    the frame it returns is a fresh array the caller may draw on."""
    renderer = Renderer(camera, table, RenderStyle(noise_sigma=0.0))
    w = world_from_board("XO.......")
    first = renderer.render(w, seed=1)
    first[:] = 0  # the caller's own array
    assert renderer.render(w, seed=1).any()
    cached = [renderer._base, renderer._board_layer, renderer._pieces_layer, renderer._last_image]
    cached += [a for sprite in renderer._sprites.values() for a in sprite]
    for array in cached:
        assert array is not None and not array.flags.writeable
