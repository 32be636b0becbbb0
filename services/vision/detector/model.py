"""What the detector returns and how it is tuned: :class:`Detection` (with its squares and supply
pieces), :class:`DetectorParams`, :class:`DetectorError`; and the thresholds that more than one of the
detector's modules use."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from messages import BoardObservation, BoardPose, Point, SquareObservation, SupplyPiece

from .geometry import pitch_of

#: what one square holds.
State = Literal["empty", "black", "white", "unknown"]
#: where a pose came from: found in this image, taken from the prior, or none at all.
PoseSource = Literal["detected", "prior", "none"]
#: which way the grid's contrast goes.
Polarity = Literal["dark-lines", "light-lines"]
#: one square as a reader gives it, before the readings are combined: (state, confidence, evidence of a
#: piece, tone on the grid's scale, why it is not a piece ("" when it may be one), the plate's grey).
SquareRead = tuple[str, float, float, float, str, float]
BOARD_CHARS: Final[dict[str, str]] = {"empty": ".", "black": "X", "white": "O", "unknown": "?"}

#: length to width beyond which a blob is not a piece (a disc or a cross is as wide as it is long).
FOREIGN_ELONGATION: Final = 2.2
#: a square's corners this far (in grid contrasts) off the board's plate surface: something covers it.
FOREIGN_BACKGROUND_FRAC: Final = 0.5
#: median absolute deviation to standard deviation (Gaussian).
MAD_TO_SIGMA: Final = 1.4826
#: the 90th percentile of a chroma deviation to the scale it is compared at (about 1.5 x the Rayleigh
#: sigma, the same margin MAD_TO_SIGMA gives the median).
CHROMA_TAIL_TO_SIGMA: Final = 0.7
#: half the line width in pitches, as measured: its bounds (the default, when it cannot be measured:
#: search.DEFAULT_HALF_WIDTH).
MIN_HALF_WIDTH: Final = 0.01
MAX_HALF_WIDTH: Final = 0.2


class DetectorError(ValueError):
    """The image cannot be processed at all (wrong type, wrong shape, empty)."""


@dataclass(frozen=True)
class DetectorParams:
    """Tuning of the detector. Every size is a fraction of the image or of the grid's pitch."""

    #: local-mean window for the line masks, as a fraction of the image's shorter side.
    window_frac: float = 0.07
    #: a pixel belongs to a line mask when it differs from its local mean by this many noise sigmas...
    line_noise_k: float = 4.0
    #: ...and by at least this fraction of the image's grey-level spread (5th to 95th percentile).
    line_min_frac: float = 0.04
    #: a cell's side is between these fractions of the image's shorter side.
    min_cell_frac: float = 0.025
    max_cell_frac: float = 0.3
    #: a cell's convex hull fills at least this much of its minimum-area rectangle.
    min_rect_fill: float = 0.82
    #: and the region itself at least this much of its hull (a piece touching a line dents it).
    min_hull_fill: float = 0.45
    #: longest to shortest side of a cell's rectangle (perspective and blur allow some).
    max_aspect: float = 1.45
    #: cells of one lattice differ in side by at most this ratio and in angle by this many degrees.
    size_tolerance: float = 0.35
    angle_tolerance_deg: float = 12.0
    #: a cell sits on the lattice when its offset is within this many pitches of a lattice point.
    lattice_tolerance: float = 0.22
    #: fewest cells that make a grid without a prior.
    min_cells: int = 4
    #: canonical view resolution: pixels per square, clamped to this range around the image pitch.
    canonical_min_px: int = 20
    canonical_max_px: int = 40
    #: a square's piece disc and background ring, as fractions of the pitch from its centre.
    piece_radius: float = 0.30
    ring_margin: float = 0.05
    ring_width: float = 0.08
    #: a pixel differs from the square's background when it is this many noise sigmas away...
    piece_noise_k: float = 3.0
    #: ...and at least this fraction of the grid's grey-level spread.
    piece_min_frac: float = 0.1
    #: ...or differs in colour (opponent channels) by this fraction of the grid's contrast.
    piece_min_chroma: float = 0.06
    #: fraction of the piece disc that must differ for a piece to be there.
    piece_min_fill: float = 0.3
    #: a line sample is seen when its contrast is at least this fraction of the grid's typical contrast, both
    #: taken as shares of the light there (the brighter of the line and the board beside it).
    line_seen_frac: float = 0.45
    #: a square is occluded when this fraction of its border lines is not seen...
    square_occluded_frac: float = 0.35
    #: ...and the frame when this fraction of all grid lines is not seen.
    frame_occluded_frac: float = 0.12
    #: a square's reading below this confidence is reported as unknown.
    min_confidence: float = 0.55
    #: supply pieces: diameter between these fractions of the pitch, this round (area / enclosing circle).
    supply_min_diameter: float = 0.3
    supply_max_diameter: float = 0.85
    supply_min_roundness: float = 0.6
    #: how far outside the grid (in pitches) a blob must be to count as a supply piece.
    supply_grid_margin: float = 0.15


DEFAULT_PARAMS: Final = DetectorParams()


@dataclass(frozen=True)
class SquareReading:
    """One square: number 1..9, state, confidence 0..1, pixel centre, and whether its border is hidden."""

    number: int
    state: State
    confidence: float
    center_px: tuple[float, float]
    occluded: bool = False
    #: fraction of the square's central disc whose colour differs clearly from its background.
    fill: float = 0.0
    #: the disc's median grey on the grid's own scale: 0 its dark tone, 1 its light tone.
    tone: float = 0.0

    @property
    def char(self) -> str:
        return BOARD_CHARS[self.state]


@dataclass(frozen=True)
class SupplyReading:
    """A piece seen off the grid."""

    colour: Literal["black", "white"]
    center_px: tuple[float, float]
    radius_px: float


@dataclass(frozen=True)
class Detection:
    """The reading of one image. ``found`` is false when no grid was found and no prior was given."""

    found: bool
    pose: BoardPose | None = None
    squares: tuple[SquareReading, ...] = ()
    supply: tuple[SupplyReading, ...] = ()
    occluded: bool = False
    #: fraction of the grid lines not seen (covered by something that is not the board).
    occlusion: float = 0.0
    pose_source: PoseSource = "none"
    polarity: Polarity | None = None
    #: how many cells the lattice was built from (0 when the pose came from the prior).
    cells: int = 0
    #: board pitch in image pixels (mean side of a square, lines included).
    pitch_px: float = 0.0
    #: "" or a short word: "no-board", "occluded", "low-confidence", "prior", "overexposed" (a square read
    #: bare on a plate at the camera's ceiling, where a white piece may hide: see ``extra["plate_top"]``).
    problem: str = ""
    processing_ms: float = 0.0
    #: the grid's line contrast in grey levels (signed: positive for light lines).
    line_contrast: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def board(self) -> str:
        """Nine characters row by row: X black, O white, . empty, ? unknown."""
        if not self.squares:
            return "?" * 9
        return "".join(s.char for s in self.squares)

    @classmethod
    def from_observation(cls, obs: BoardObservation) -> Detection:
        """The detection a bus message carries (the inverse of :meth:`to_observation`, as far as the
        message goes: no cells, polarity or contrast), so that a reader of ``vision.board`` draws it with
        :func:`services.vision.annotate.annotate` like vision itself does."""
        return cls(
            found=obs.found,
            pose=obs.pose,
            squares=tuple(
                SquareReading(
                    number=s.number,
                    state=s.state,
                    confidence=s.confidence,
                    center_px=(s.center_px.x, s.center_px.y) if s.center_px is not None else (0.0, 0.0),
                )
                for s in obs.squares
                if s.center_px is not None
            ),
            supply=tuple(
                SupplyReading(
                    colour=p.colour, center_px=(p.center_px.x, p.center_px.y), radius_px=p.radius_px
                )
                for p in obs.supply
            ),
            occluded=obs.occluded,
            occlusion=obs.occlusion,
            pitch_px=pitch_of(obs.pose) if obs.pose is not None else 0.0,
            problem=obs.problem,
            processing_ms=obs.processing_ms,
        )

    def to_observation(self, frame_id: int, *, capture_ns: int = 0) -> BoardObservation:
        """This detection as the bus message (not yet stable: the filter decides that)."""
        return BoardObservation(
            frame_id=frame_id,
            found=self.found,
            board=self.board,
            pose=self.pose,
            squares=[
                SquareObservation(
                    number=s.number,
                    state=s.state,
                    confidence=round(s.confidence, 3),
                    center_px=Point(*s.center_px),
                )
                for s in self.squares
            ],
            supply=[
                SupplyPiece(colour=p.colour, center_px=Point(*p.center_px), radius_px=p.radius_px)
                for p in self.supply
            ],
            occluded=self.occluded,
            occlusion=round(self.occlusion, 3),
            capture_ns=capture_ns,
            processing_ms=round(self.processing_ms, 3),
            problem=self.problem,
        )
