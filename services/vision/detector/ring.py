"""Step 4 of the package's overview against the ring of board just inside each square's lines
(:func:`_read_squares_ring`): right where pieces are small beside their squares. And what in a square
is not a piece by the ring's rules (:func:`_foreign_ring`: it reaches the lines, it is elongated, or
the square's background is not the board's)."""

from __future__ import annotations

from functools import lru_cache
from typing import Final

import numpy as np

from .geometry import GRID_SQUARES, _Canon, _read_only
from .model import (
    CHROMA_TAIL_TO_SIGMA,
    FOREIGN_BACKGROUND_FRAC,
    FOREIGN_ELONGATION,
    MAD_TO_SIGMA,
    DetectorParams,
    SquareRead,
)
from .squares import _median_of_nine, _saturated_plate
from .stats import brightest_channel, least_squares, median, median_along, percentile

#: differing pixels below this share of a square's inside are noise, not an object.
RING_FOREIGN_MIN_AREA: Final = 0.08
#: share of the ring that a piece never covers (the ring lies outside any piece on its square).
RING_FOREIGN_RING_COVER: Final = 0.55
#: the ring reading's thresholds (see _read_squares_ring): a pixel differs beyond this share of the
#: grid's contrast, and a piece fills this share of the central disc.
RING_PIECE_MIN_FRAC: Final = 0.06
RING_PIECE_MIN_FILL: Final = 0.12
#: rounds of the fit of a square's light slope through its ring (see _ring_slope): each takes the ring's
#: pixels within the noise threshold of the last round's plane (the first round's: the ring's median).
RING_SLOPE_ROUNDS: Final = 2
#: ...each round's normal equations take this ridge, so that a ring with no pixel kept stays solvable.
RING_SLOPE_RIDGE: Final = 1e-6
#: where each entry of a fit's 3x3 normal equations lies among a pixel's six moments (see _ring_slope).
_NORMAL_AT: Final = np.array([[0, 1, 2], [1, 3, 4], [2, 4, 5]])
_NORMAL_AT.flags.writeable = False
#: the plane the nine squares' ring backgrounds are fitted with (see _foreign_ring): 1, column, row.
BACKGROUND_PLANE: Final = np.stack([np.ones(9), np.arange(9) % 3 - 1.0, np.arange(9) // 3 - 1.0], axis=1)
BACKGROUND_PLANE.flags.writeable = False


@lru_cache(maxsize=64)
def _ring_masks(s: int, m: int, half_width: float, params: DetectorParams) -> tuple[np.ndarray, ...]:
    """One square's geometry for the ring reading, over the pixels of its inside (everything within the
    ring's outer edge): where the background ring is (a mask) and, as indices, where the ring and the
    piece disc are; each pixel's offset from the centre in pitches (dx, dy); and the nine squares'
    inside pixels as flat indices into a canonical view of ``s`` px per square and ``m`` margin (9, P).
    It depends on these sizes alone, so every frame at them shares it."""
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32)
    dx = (xx + 0.5) / s - 0.5
    dy = (yy + 0.5) / s - 0.5
    cheb = np.maximum(np.abs(dx), np.abs(dy))
    rad = np.hypot(dx, dy)
    ring_out = 0.5 - half_width - params.ring_margin
    ring_in = ring_out - params.ring_width
    ring = (cheb <= ring_out) & (cheb >= ring_in)
    disc = rad <= min(params.piece_radius, ring_in)
    inside = cheb <= ring_out
    row, col = np.divmod(np.arange(9), 3)
    ys, xs = np.nonzero(inside)
    size = GRID_SQUARES * s + 2 * m
    pixels = (m + row[:, None] * s + ys[None, :]) * size + (m + col[:, None] * s + xs[None, :])
    ring_i = ring[inside]
    return _read_only(
        ring_i, np.flatnonzero(ring_i), np.flatnonzero(disc[inside]), dx[inside], dy[inside], pixels
    )


def _read_squares_ring(
    canon: _Canon, half_width: float, line_level: np.ndarray, params: DetectorParams, dark_lines: bool
) -> list[SquareRead]:
    """The first reading, against a ring of board just inside each square's lines (``dark_lines``: the
    grid's polarity): (state, confidence, piece fill, lightness, foreign, the ring's grey) of every
    square; ``foreign`` is "" or why
    something that is not a piece is in the square (see :func:`_foreign_ring`). Right where pieces are
    small beside their squares (the ring is bare board); a large piece covers the ring, and then
    :func:`.squares._read_squares` (against the plate in the corners) is the one to believe.

    *Whether* a piece is there: the fraction of the square's central disc whose colour differs clearly
    from the square's own background (the median colour of the ring of board just inside its lines).
    Colour, not grey: a blue-black piece on an olive board has the same grey level as the board.
    *Which* piece: the disc's median grey placed on the scale the grid itself provides, from its dark
    tone (0) to its light tone (1) (board and lines, whichever is which): below the middle is black.
    Glare spots on a black piece and shading on a white one are minorities of the disc.
    """
    s, m = canon.px, canon.margin
    ring_i, ring_at, disc_at, dx_i, dy_i, pixels = _ring_masks(s, m, round(half_width, 3), params)
    grey = canon.img.ravel()[pixels]  # (9, P): the inside of each square
    # (np.take along an axis gathers the same values as indexing, at a fraction of the cost.)
    grey_ring = np.take(grey, ring_at, axis=1)
    chroma = None
    if canon.colour is None:
        bg_grey, bg_chroma = median_along(grey_ring, 1), np.zeros((9, 2), np.float32)  # (9,), (9, 2)
    else:
        colour = np.take(canon.colour.reshape(-1, 3), pixels, axis=0)
        # Opponent colour (blue-green, red-green): what the grey level cannot see.
        chroma = np.stack([colour[..., 0] - colour[..., 1], colour[..., 2] - colour[..., 1]], axis=-1)
        # The ring's median grey and chroma, in one call.
        # (Channel-major, so that each median runs along contiguous values.)
        ring_chroma = np.take(chroma, ring_at, axis=1)
        ring_all = np.stack([grey_ring, ring_chroma[..., 0], ring_chroma[..., 1]], axis=1)  # (9, 3, R)
        ring_level = median_along(ring_all, 2)
        bg_grey, bg_chroma = ring_level[:, 0], ring_level[:, 1:]
    contrast = np.abs(line_level - bg_grey)  # (9,) the grid's own contrast around each square
    # How much bare board varies (noise, texture, glow of the lines): pooled over the nine rings, robust
    # to the few a piece reaches into. A pixel differs from its background beyond k times that.
    ring_dev = np.abs(grey_ring - bg_grey[:, None])
    vary = MAD_TO_SIGMA * median(ring_dev)
    t_grey = np.maximum(params.piece_noise_k * vary, RING_PIECE_MIN_FRAC * contrast)
    off = np.abs(grey - bg_grey[:, None])
    # The shape of what differs is judged against the plane of the light across the square too, not its
    # ring's median alone: a 2:1 gradient, a vignette or a plate clipping to one side leave a band of the
    # square beyond the threshold on each side of the median, as long as a pen. (Whether a piece is there
    # stays judged against the median: a faint black piece on a dark plate tilts a plane towards itself.)
    slope = _ring_slope(grey_ring, dx_i[ring_at], dy_i[ring_at], bg_grey, t_grey)
    off_plane = np.abs(grey - bg_grey[:, None] - slope[:, :1] * dx_i - slope[:, 1:] * dy_i)
    if canon.slack is not None:
        off = off - canon.slack.ravel()[pixels]  # (what an estimate taken out may have got wrong)
        off_plane = off_plane - canon.slack.ravel()[pixels]
    differs = off > t_grey[:, None]  # (9, P)
    differs_plane = off_plane > t_grey[:, None]
    if chroma is not None:
        ring_cdev = _chroma_distance(ring_chroma, bg_chroma)
        # Chroma is coarsely quantised (8-bit channels, JPEG's subsampled colour): the median deviation
        # is often 0 while a tenth of the pixels stray by several levels, so the tail sets the scale too.
        vary_c = max(
            MAD_TO_SIGMA * median(ring_cdev),
            CHROMA_TAIL_TO_SIGMA * percentile(ring_cdev, 90),
        )
        t_chroma = np.maximum(params.piece_noise_k * vary_c, params.piece_min_chroma * contrast)
        by_chroma = _chroma_distance(chroma, bg_chroma) > t_chroma[:, None]
        differs |= by_chroma
        differs_plane |= by_chroma
    fill = np.take(differs, disc_at, axis=1).mean(axis=1)
    dark_ref = np.minimum(line_level, bg_grey)
    t = (median_along(np.take(grey, disc_at, axis=1), 1) - dark_ref) / np.maximum(contrast, 1e-3)
    # A saturated plate as the light end: in its brightest channel, as squares._read_squares.
    if chroma is not None:
        by_light, light = _saturated_plate(line_level, bg_grey, bg_chroma, dark_lines)
        if by_light.any():
            disc_light = median_along(brightest_channel(np.take(colour, disc_at, axis=1)), 1)
            t_light = (disc_light - dark_ref) / np.maximum(light - dark_ref, 1e-3)
            t = np.where(by_light, t_light, t)
    foreign = _foreign_ring(differs, differs_plane, ring_i, dx_i, dy_i, bg_grey, bg_chroma, contrast)
    # A middle beyond the lines' own tone (darker than dark lines, lighter than light ones) is no bare
    # board, whatever the ring says: a large piece covers the ring too, and the disc does not differ
    # from it.
    beyond = (t < 0.0) if dark_lines else (t > 1.0)
    foreign = ["beyond-lines" if b and not w else w for b, w in zip(beyond.tolist(), foreign, strict=True)]
    out: list[SquareRead] = []
    f0 = RING_PIECE_MIN_FILL
    for f, tone, why, bg in zip(fill.tolist(), t.tolist(), foreign, bg_grey.tolist(), strict=True):
        if f < f0 and not why:
            out.append(("empty", 1.0 - 0.5 * f / f0, f, tone, "", bg))
            continue
        presence = min(1.0, (f - f0) / f0)
        # How far the tone is from the middle of the scale, 0.5 away is certain.
        certainty = min(1.0, abs(tone - 0.5) / 0.3)
        conf = 0.5 + 0.5 * min(presence, certainty)
        out.append(("black" if tone < 0.5 else "white", conf, f, tone, why, bg))
    return out


def _ring_slope(
    ring: np.ndarray, dx: np.ndarray, dy: np.ndarray, level: np.ndarray, threshold: np.ndarray
) -> np.ndarray:
    """Each square's slope of light (grey per pitch along the canonical x and y, (9, 2)) through its ring
    pixels' grey (``ring``, (9, R); offsets ``dx``, ``dy`` (R,) from the centre in pitches), fitted by
    least squares on the pixels within ``threshold`` (9,) of the plane of the round before, from the
    ring's ``level`` (9,), flat, over ``RING_SLOPE_ROUNDS`` rounds: what of a piece reaches into the ring
    differs from the plate by more than the threshold, and does not tilt it."""
    design = np.stack([np.ones_like(dx), dx, dy], axis=1).astype(np.float64)  # (R, 3)
    # Each pixel's products of the design's terms (1, dx, dy, dx dx, dx dy, dy dy): the normal
    # equations of every square's weighted fit, from one matrix product.
    moments = np.column_stack([design, dx * dx, dx * dy, dy * dy]).astype(np.float64)  # (R, 6)
    fit = np.column_stack([level, np.zeros((len(level), 2))])
    for _ in range(RING_SLOPE_ROUNDS):
        kept = (np.abs(ring - fit @ design.T) <= threshold[:, None]).astype(np.float64)
        normal = (kept @ moments)[:, _NORMAL_AT] + RING_SLOPE_RIDGE * np.eye(3)  # (9, 3, 3)
        fit = np.linalg.solve(normal, ((kept * ring) @ design)[..., None])[..., 0]
    return fit[:, 1:]


def _chroma_distance(chroma: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """The distance of each pixel's opponent colour (``chroma``, (9, N, 2)) from its square's
    (``ref``, (9, 2)): (9, N), as ``np.linalg.norm(chroma - ref[:, None, :], axis=2)`` gives it (the
    same sum of two squares), without its detour through a strided reduction."""
    a = chroma[..., 0] - ref[:, None, 0]
    b = chroma[..., 1] - ref[:, None, 1]
    return np.sqrt(a * a + b * b)


def _elongation(
    differs: np.ndarray, ring_i: np.ndarray, dx: np.ndarray, dy: np.ndarray, least: float
) -> np.ndarray:
    """How elongated what differs (``differs``, (9, P)) inside the ring (``ring_i`` (P,) marks the ring's
    pixels; ``dx``, ``dy`` their offsets) is in each square: the square root of the ratio of its second
    moments' eigenvalues, (9,); 0 where fewer than ``least`` pixels differ there."""
    w = (differs & ~ring_i).astype(np.float32)
    mass = w.sum(axis=1)
    mx = (w @ dx) / np.maximum(mass, 1.0)
    my = (w @ dy) / np.maximum(mass, 1.0)
    sxx = (w @ (dx * dx)) / np.maximum(mass, 1.0) - mx * mx
    syy = (w @ (dy * dy)) / np.maximum(mass, 1.0) - my * my
    sxy = (w @ (dx * dy)) / np.maximum(mass, 1.0) - mx * my
    half_tr = (sxx + syy) / 2.0
    root = np.sqrt(np.maximum(half_tr**2 - (sxx * syy - sxy**2), 0.0))
    elong = np.sqrt((half_tr + root) / np.maximum(half_tr - root, 1e-6))
    return np.where(mass >= least, elong, 0.0)


def _foreign_ring(
    differs: np.ndarray,
    differs_plane: np.ndarray,
    ring_i: np.ndarray,
    dx: np.ndarray,
    dy: np.ndarray,
    bg_grey: np.ndarray,
    bg_chroma: np.ndarray,
    contrast: np.ndarray,
) -> list[str]:
    """For each square, "" or why what lies in it is not a piece (a fingertip, a pen, a sheet, a hand
    that leaves the lines visible): the pixels that differ from the square's background

    - cover much of the ring of board just inside the lines ("reaches-lines": a piece, even off-centre,
      stays clear of most of it; something coming in from outside crosses it);
    - are elongated ("elongated": a disc or a cross is as wide as it is long, a finger or a pen is not),
      both as what differs from the ring's median and as what differs from the plane of the square's
      light through it (``differs_plane``): a light gradient across the square, or a dip in a plate
      clipped around it, is elongated one way only;
    - or the background itself is not the board's ("background": something flat covers the whole
      square), judged against a plane through the nine squares' backgrounds (lighting gradients are
      smooth) on the grid's own contrast scale.
    """
    n = differs.shape[0]
    why = [""] * n
    ring_cover = np.take(differs, np.flatnonzero(ring_i), axis=1).mean(axis=1)
    # Shape from the part inside the ring: the glow of thick lines and the edges of shadows along the
    # border make thin strips there that are no object.
    least = RING_FOREIGN_MIN_AREA * differs.shape[1]
    enough = (differs & ~ring_i).sum(axis=1) >= least
    # Elongated against the ring's median and against the plane of its light alike: a pen is, whatever
    # the light; a gradient leaves bands against the median, a plate clipped but for a dip in one corner
    # a patch against the plane.
    elongated = (_elongation(differs, ring_i, dx, dy, least) > FOREIGN_ELONGATION) & (
        _elongation(differs_plane, ring_i, dx, dy, least) > FOREIGN_ELONGATION
    )
    # Background against a plane through the nine squares' backgrounds (grey and both chroma axes).
    design = BACKGROUND_PLANE
    bgs = np.column_stack([bg_grey, bg_chroma]).astype(np.float64)
    coef = least_squares(design, bgs)
    resid = np.linalg.norm(bgs - design @ coef, axis=1)
    scale = _median_of_nine(contrast)
    for k in range(n):
        if enough[k] and ring_cover[k] > RING_FOREIGN_RING_COVER:
            why[k] = "reaches-lines"
        elif elongated[k]:
            why[k] = "elongated"
        elif resid[k] > FOREIGN_BACKGROUND_FRAC * scale:
            why[k] = "background"
    return why
