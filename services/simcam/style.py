"""How the simulated camera's frames look: lighting, noise, blur, colours. Everything that is a matter of
taste rather than geometry lives here, so that tests can sweep it (:meth:`RenderStyle.random`).

Colours are BGR tuples (OpenCV's order). Directions are in the table frame: an azimuth of 0 degrees
points along +x (to the right of the image), 90 along -y (to the top of the image), i.e. counter-clockwise
as seen from the camera, like board angles.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Final

import numpy as np

BGR = tuple[int, int, int]


class StyleError(ValueError):
    """An unknown preset name or a bad style value."""


def _is_bgr(value: object) -> bool:
    return (
        isinstance(value, tuple | list)
        and len(value) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value)
    )


@dataclass(frozen=True)
class RenderStyle:
    """The look of a rendered frame. Frozen and hashable: renderers cache per style."""

    #: where the light comes from (azimuth, degrees CCW from +x as seen from the camera) and how high
    #: (elevation, degrees above the table). Sets the shading of pieces, their glare and the shadows.
    light_azimuth_deg: float = 120.0
    light_elevation_deg: float = 62.0
    #: brightness falls off across the image by this fraction from the lit side to the other.
    light_gradient: float = 0.22
    #: darkening of the image corners (fraction at the corners).
    vignette: float = 0.18
    #: overall gain (1 = nominal exposure).
    exposure: float = 1.0
    #: frame-to-frame brightness wavering (standard deviation of a per-frame gain, e.g. 0.01 = 1%).
    flicker: float = 0.0
    #: per-channel white balance gains (B, G, R).
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)
    #: sensor noise, standard deviation in grey levels.
    noise_sigma: float = 3.0
    #: optical blur, Gaussian sigma in image pixels (0 = sharp).
    blur_sigma: float = 0.7
    #: strength of the specular highlight on pieces (0 = matte, 1 = a saturated glint).
    glare: float = 0.8
    #: a broad soft reflection of the lamp on the board's plate (0 = none, 0.3 = strong).
    hotspot: float = 0.08
    #: shadows: darkness (0..1) and the blur of their edges in millimetres.
    shadow_strength: float = 0.45
    shadow_softness_mm: float = 3.0
    #: the table top: base colour and the amplitude of its low-frequency blotches (grey levels).
    table_colour: BGR = (88, 108, 128)
    table_texture: float = 5.0
    #: board colours; None keeps the world's own (WorldState.board_colour / line_colour).
    board_colour: BGR | None = None
    line_colour: BGR | None = None
    #: faint unevenness of the board's plate (grey levels).
    board_texture: float = 3.0
    black_piece_colour: BGR = (38, 36, 36)
    white_piece_colour: BGR = (226, 230, 232)
    skin_colour: BGR = (128, 160, 212)
    #: the person's hand: size (1 = an adult's, palm about 85 mm wide) and which hand (thumb side).
    hand_scale: float = 1.0
    left_hand: bool = False
    #: the forearm's sleeve colour, or None for a bare forearm.
    sleeve_colour: BGR | None = None
    #: seeds the table's texture (the static look), independent of the per-frame seed.
    texture_seed: int = 0

    def __post_init__(self) -> None:
        self._check_types()
        if not 5.0 <= self.light_elevation_deg <= 90.0:
            raise StyleError(f"light_elevation_deg must be within [5, 90], got {self.light_elevation_deg}")
        if self.noise_sigma < 0 or self.blur_sigma < 0:
            raise StyleError("noise_sigma and blur_sigma must not be negative")
        for name in ("light_gradient", "vignette", "glare", "shadow_strength", "hotspot", "flicker"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise StyleError(f"{name} must be within [0, 1], got {value}")
        if self.exposure <= 0:
            raise StyleError(f"exposure must be positive, got {self.exposure}")
        if not 0.3 <= self.hand_scale <= 3.0:
            raise StyleError(f"hand_scale must be within [0.3, 3], got {self.hand_scale}")

    def _check_types(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            kind = str(f.type)
            if kind == "float":
                if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                    raise StyleError(f"{f.name} must be a number, got {value!r}")
            elif kind == "bool":
                if not isinstance(value, bool):
                    raise StyleError(f"{f.name} must be true or false, got {value!r}")
            elif kind == "int":
                if isinstance(value, bool) or not isinstance(value, int):
                    raise StyleError(f"{f.name} must be an integer, got {value!r}")
            elif kind.startswith("BGR"):
                if value is None and "None" in kind:
                    continue
                if not _is_bgr(value):
                    raise StyleError(f"{f.name} must be three integers 0..255 (B, G, R), got {value!r}")
                object.__setattr__(self, f.name, tuple(value))
            elif f.name == "tint":
                if (
                    not isinstance(value, tuple | list)
                    or len(value) != 3
                    or not all(isinstance(c, int | float) and 0.0 < c < 4.0 for c in value)
                ):
                    raise StyleError(f"tint must be three gains in (0, 4), got {value!r}")
                object.__setattr__(self, f.name, tuple(float(c) for c in value))

    # -- derived quantities -----------------------------------------------------------------------

    def light_direction(self) -> tuple[float, float]:
        """Unit vector in the table frame (x right, y down) pointing towards the light, horizontally."""
        a = math.radians(self.light_azimuth_deg)
        return (math.cos(a), -math.sin(a))

    def shadow_offset(self, height_mm: float) -> tuple[float, float]:
        """Where the shadow of a point ``height_mm`` above the table falls, relative to the point below it."""
        lx, ly = self.light_direction()
        reach = height_mm / math.tan(math.radians(self.light_elevation_deg))
        return (-lx * reach, -ly * reach)

    def replace(self, **changes: object) -> RenderStyle:
        """A copy with some fields changed. :raises StyleError: for an unknown field."""
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise StyleError(
                f"unknown style field(s): {', '.join(unknown)}; known: {', '.join(sorted(names))}"
            )
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]

    # -- families ---------------------------------------------------------------------------------

    @classmethod
    def preset(cls, name: str) -> RenderStyle:
        """A named look: "default", "clean" (no noise, blur, gradient or vignette: for geometry tests
        and docs), "dark" (dark board with light lines), "harsh" (low strong light, glare, noise), "dim"
        (under-exposed, noisy), "contest-blue" and "contest-green" (the 2024 contest's plates: black lines,
        black foam and white discs), or "random:N" (:meth:`random` with seed N).

        :raises StyleError: for an unknown name.
        """
        if name.startswith("random:"):
            try:
                seed = int(name.split(":", 1)[1])
            except ValueError:
                raise StyleError(f"random style wants an integer seed, got {name!r}") from None
            return cls.random(np.random.default_rng(seed))
        try:
            return cls(**PRESETS[name])
        except KeyError:
            raise StyleError(
                f"unknown style {name!r}; choose one of {', '.join(PRESETS)} or random:N"
            ) from None

    @classmethod
    def random(cls, rng: np.random.Generator) -> RenderStyle:
        """A plausible random look for sweeps: light, noise, blur, glare, colours of table, board and
        skin, and in about a third of the draws a dark board with light lines."""

        def jitter(colour: BGR, amount: float) -> BGR:
            return tuple(int(np.clip(c + rng.normal(0.0, amount), 0, 255)) for c in colour)  # type: ignore[return-value]

        dark_board = rng.random() < 0.35
        if dark_board:
            board = jitter((40, 45, 50), 12)
            lines = jitter((225, 228, 230), 10)
        else:
            board = jitter((200, 210, 205), 18)
            lines = jitter((35, 35, 35), 10)
        grey = float(rng.uniform(60, 150))
        table = jitter((grey * 0.85, grey, grey * 1.15), 10)
        return cls(
            light_azimuth_deg=float(rng.uniform(0, 360)),
            light_elevation_deg=float(rng.uniform(40, 85)),
            light_gradient=float(rng.uniform(0.0, 0.4)),
            vignette=float(rng.uniform(0.0, 0.35)),
            exposure=float(rng.uniform(0.75, 1.2)),
            flicker=float(rng.uniform(0.0, 0.02)),
            tint=tuple(float(x) for x in rng.uniform(0.9, 1.1, 3)),  # type: ignore[arg-type]
            noise_sigma=float(rng.uniform(0.5, 7.0)),
            blur_sigma=float(rng.uniform(0.0, 1.4)),
            glare=float(rng.uniform(0.0, 1.0)),
            hotspot=float(rng.uniform(0.0, 0.2)),
            shadow_strength=float(rng.uniform(0.2, 0.6)),
            shadow_softness_mm=float(rng.uniform(1.0, 6.0)),
            table_colour=table,
            table_texture=float(rng.uniform(0.0, 9.0)),
            board_colour=board,
            line_colour=lines,
            board_texture=float(rng.uniform(0.0, 6.0)),
            black_piece_colour=jitter((38, 36, 36), 6),
            white_piece_colour=jitter((226, 230, 232), 8),
            skin_colour=jitter((128, 160, 212), 18),
            hand_scale=float(rng.uniform(0.85, 1.15)),
            left_hand=bool(rng.random() < 0.15),
            sleeve_colour=None if rng.random() < 0.6 else jitter((110, 70, 60), 40),
            texture_seed=int(rng.integers(0, 2**31)),
        )


#: what the 2024 contest's tables share, whichever the plate's colour: black foam pieces, a little
#: glare on the white ones, a grey table.
_CONTEST_TABLE: Final[dict[str, object]] = {
    "black_piece_colour": (30, 30, 32),
    "glare": 0.2,
    "table_colour": (120, 130, 140),
}

#: named looks (field overrides of the defaults); see :meth:`RenderStyle.preset`.
PRESETS: Final[dict[str, dict[str, object]]] = {
    "default": {},
    "clean": {
        "noise_sigma": 0.0,
        "blur_sigma": 0.0,
        "light_gradient": 0.0,
        "vignette": 0.0,
        "hotspot": 0.0,
        "table_texture": 0.0,
        "board_texture": 0.0,
        "flicker": 0.0,
    },
    "dark": {
        "board_colour": (42, 46, 52),
        "line_colour": (224, 228, 230),
        "table_colour": (150, 160, 170),
    },
    "harsh": {
        "light_azimuth_deg": 30.0,
        "light_elevation_deg": 40.0,
        "light_gradient": 0.4,
        "vignette": 0.3,
        "noise_sigma": 6.0,
        "glare": 1.0,
        "hotspot": 0.2,
        "shadow_strength": 0.6,
    },
    "dim": {"exposure": 0.6, "noise_sigma": 7.0, "blur_sigma": 1.0, "vignette": 0.3, "flicker": 0.02},
    # The 2024 contest's boards: a blue or a green plate with black lines, black foam discs and white
    # discs (the pieces' size is the world's: simworld.piece_diameter_mm, about 0.8 of the pitch there).
    "contest-blue": {**_CONTEST_TABLE, "board_colour": (168, 92, 36), "line_colour": (28, 28, 30)},
    "contest-green": {**_CONTEST_TABLE, "board_colour": (70, 150, 60), "line_colour": (28, 30, 28)},
}
