"""A mutable gomoku board with incremental pattern counts, Zobrist hashing and take-backs.

Why not :class:`engine.board.Board`: that board is an immutable value (each move builds a new object) whose
win test scans every line mask, which suits 3 x 3 and small m x n boards but costs far too much per node on
15 x 15. This board is played and taken back in place; each stone updates the keys of the four lines through
it and their memoised analyses (:mod:`engine.gomoku.patterns`), so pattern counts, the static score, the
squares that win and the squares that make fours are known without scanning. :meth:`GomokuBoard.from_board`
and :meth:`GomokuBoard.to_board` convert from and to the general board (``Board(rows=15, cols=15, k=5)``).

Squares are indices ``y * width + x``; ``(x, y)`` are the Gomocup protocol's coordinates (x the column, both
from 0 at the top left).

>>> board = GomokuBoard(15)
>>> for x in range(4):
...     _ = board.play(board.index(x, 7))
...     _ = board.play(board.index(x, 0))
>>> board.count(BLACK, OPEN_FOUR), board.count(WHITE, FOUR), sorted(board.win_squares(BLACK))
(0, 1, [109])
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

from ..board import Board, geometry
from .patterns import FIVE, FOUR, LENGTH_SHIFT, OPEN_FOUR, SHAPES, SQUARE_BITS, LineInfo, line_table
from .rules import BLACK, DEFAULT_SIZE, EMPTY, WALL, WHITE, Color, GomokuError, Rule, check_size, other

Square = int
"""A square's index, ``y * width + x``."""

#: The four line directions as (dx, dy): row, column, diagonal, anti-diagonal.
DIRECTIONS: Final = ((1, 0), (0, 1), (1, 1), (-1, 1))
#: Candidate moves lie within this many squares (king moves) of a stone.
NEAR_RADIUS: Final = 2
#: Seed of the Zobrist keys: fixed, so hashes (and the searches that use them) are reproducible.
_ZOBRIST_SEED: Final = 0x5A9_21


@dataclass(frozen=True, slots=True)
class Layout:
    """What depends only on the board's size, built once per size and shared (:func:`layout`)."""

    width: int
    height: int
    #: squares of each line that can hold a five, in order along it
    line_squares: tuple[tuple[Square, ...], ...]
    #: for each square, (line id, bit shift of the square in the line key) of the lines through it
    square_lines: tuple[tuple[tuple[int, int], ...], ...]
    #: for each square, the squares within NEAR_RADIUS king moves
    neighbours: tuple[tuple[Square, ...], ...]
    #: Zobrist keys per square and content, and for the side to move
    zobrist: tuple[tuple[int, ...], ...]
    zobrist_side: int


@functools.cache
def layout(width: int, height: int) -> Layout:
    """The shared :class:`Layout` of a ``width`` x ``height`` board."""
    cells = width * height
    line_squares: list[tuple[Square, ...]] = []
    square_lines: list[list[tuple[int, int]]] = [[] for _ in range(cells)]
    for dx, dy in DIRECTIONS:
        for y0 in range(height):
            for x0 in range(width):
                if 0 <= x0 - dx < width and 0 <= y0 - dy < height:
                    continue  # not the first square of its line
                squares: list[int] = []
                x, y = x0, y0
                while 0 <= x < width and 0 <= y < height:
                    squares.append(y * width + x)
                    x, y = x + dx, y + dy
                if len(squares) < 5:
                    continue  # no five fits: the line never matters
                for pos, sq in enumerate(squares):
                    square_lines[sq].append((len(line_squares), SQUARE_BITS * pos))
                line_squares.append(tuple(squares))
    neighbours = tuple(
        tuple(
            y * width + x
            for y in range(max(0, y0 - NEAR_RADIUS), min(height, y0 + NEAR_RADIUS + 1))
            for x in range(max(0, x0 - NEAR_RADIUS), min(width, x0 + NEAR_RADIUS + 1))
            if (x, y) != (x0, y0)
        )
        for y0 in range(height)
        for x0 in range(width)
    )
    rng = random.Random(_ZOBRIST_SEED ^ cells)
    zobrist = tuple(tuple(rng.getrandbits(64) for _ in range(4)) for _ in range(cells))
    return Layout(
        width,
        height,
        tuple(line_squares),
        tuple(tuple(lines) for lines in square_lines),
        neighbours,
        zobrist,
        rng.getrandbits(64),
    )


class GomokuBoard:
    """A ``width`` x ``height`` gomoku position, changed in place by :meth:`play` / :meth:`undo`.

    Besides the stones it keeps, always current: each side's number of segments of every shape
    (:meth:`count`), each side's static score, a Zobrist hash (:attr:`hash`), and how many stones lie near
    each square (for candidate moves).

    :raises GomokuError: on a bad size.
    """

    def __init__(self, width: int = DEFAULT_SIZE, height: int | None = None, rule: Rule = Rule.FREESTYLE):
        self.width = check_size(width)
        self.height = check_size(width if height is None else height)
        self.rule = Rule(rule)
        self.cells_count = self.width * self.height
        self.table = line_table(self.rule.exact)
        self.cells: list[Color] = [EMPTY] * self.cells_count
        shape = layout(self.width, self.height)
        #: squares of each line, in order along it
        self.line_squares = shape.line_squares
        #: for each square, (line id, bit shift of the square in the line key) of the lines through it
        self.square_lines = shape.square_lines
        self._neighbours = shape.neighbours
        self._zobrist = shape.zobrist
        self._zobrist_side = shape.zobrist_side
        self.keys: list[int] = [len(sq) << LENGTH_SHIFT for sq in self.line_squares]
        self.counts: list[int] = [0] * (2 * SHAPES)
        for key in self.keys:
            for i, n in enumerate(self.table[key].counts):
                self.counts[i] += n
        self.scores: list[int] = [0, 0, 0]  # indexed by colour; [0] unused
        self.hash = 0
        self.to_move: Color = BLACK
        self.history: list[tuple[Square, Color]] = []
        self.near: list[int] = [0] * self.cells_count

    # ------------------------------------------------------------------------------------------ geometry
    def index(self, x: int, y: int) -> Square:
        """The square at column ``x``, row ``y``.

        :raises GomokuError: if it is off the board.
        """
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise GomokuError(f"{x},{y} is off the {self.width} x {self.height} board")
        return y * self.width + x

    def xy(self, square: Square) -> tuple[int, int]:
        """The (x, y) of a square."""
        return square % self.width, square // self.width

    # -------------------------------------------------------------------------------------------- moves
    def place(self, square: Square, color: Color) -> None:
        """Put ``color`` (BLACK, WHITE or WALL) on the empty ``square``; :meth:`remove` takes it back.

        Does not change :attr:`to_move`. No checks: the hot path of every search.
        """
        self.cells[square] = color
        self._update_lines(square, color, 1)
        self.hash ^= self._zobrist[square][color]
        self.history.append((square, color))
        near = self.near
        for sq in self._neighbours[square]:
            near[sq] += 1

    def _update_lines(self, square: Square, color: Color, sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) a ``color`` stone on ``square`` in the keys of the lines
        through it, and move the pattern counts and scores by the difference each line's shapes make."""
        table, keys, counts, scores = self.table, self.keys, self.counts, self.scores
        for line_id, shift in self.square_lines[square]:
            old_key = keys[line_id]
            new_key = old_key + sign * (color << shift)
            keys[line_id] = new_key
            old, new = table[old_key], table[new_key]
            if old.counts != new.counts:
                for i, (a, b) in enumerate(zip(new.counts, old.counts, strict=True)):
                    if a != b:
                        counts[i] += a - b
            scores[1] += new.score[0] - old.score[0]
            scores[2] += new.score[1] - old.score[1]

    def remove(self) -> tuple[Square, Color]:
        """Take back the last :meth:`place` and return what it placed.

        :raises GomokuError: if the board holds no stone.
        """
        if not self.history:
            raise GomokuError("no stone to take back")
        square, color = self.history.pop()
        self.cells[square] = EMPTY
        self._update_lines(square, color, -1)
        self.hash ^= self._zobrist[square][color]
        near = self.near
        for sq in self._neighbours[square]:
            near[sq] -= 1
        return square, color

    def play(self, square: Square) -> Color:
        """The side to move puts a stone on ``square``; returns that side's colour.

        :raises GomokuError: if the square is off the board or taken.
        """
        self.check_empty(square)
        color = self.to_move
        self.place(square, color)
        self.to_move = other(color)
        self.hash ^= self._zobrist_side
        return color

    def undo(self) -> Square:
        """Take back the last :meth:`play`; returns its square.

        :raises GomokuError: if there is nothing to take back.
        """
        square, color = self.remove()
        self.to_move = color if color in (BLACK, WHITE) else self.to_move
        self.hash ^= self._zobrist_side
        return square

    def check_empty(self, square: object) -> None:
        """:raises GomokuError: unless ``square`` is an empty square of this board."""
        if isinstance(square, bool) or not isinstance(square, int) or not 0 <= square < self.cells_count:
            raise GomokuError(f"square {square!r} is not on the board (0..{self.cells_count - 1})")
        if self.cells[square] != EMPTY:
            x, y = self.xy(square)
            raise GomokuError(f"{x},{y} is taken")

    def set_to_move(self, color: Color) -> None:
        """Make ``color`` the side to move (for positions set up stone by stone)."""
        if color != self.to_move:
            self.to_move = color
            self.hash ^= self._zobrist_side

    # ---------------------------------------------------------------------------------------- queries
    def count(self, color: Color, shape: int) -> int:
        """How many of ``color``'s segments have ``shape`` (see :mod:`engine.gomoku.patterns`)."""
        return self.counts[(color - 1) * SHAPES + shape]

    def shape_counts(self, color: Color) -> tuple[int, ...]:
        """``color``'s segment count of every shape, indexed by shape."""
        base = (color - 1) * SHAPES
        return tuple(self.counts[base : base + SHAPES])

    def score(self, color: Color) -> int:
        """``color``'s static score: the sum of its segments' values."""
        return self.scores[color]

    def infos(self) -> Iterator[tuple[int, LineInfo]]:
        """(line id, analysis) of every line that holds a stone."""
        table = self.table
        for line_id, key in enumerate(self.keys):
            if key & ((1 << LENGTH_SHIFT) - 1):
                yield line_id, table[key]

    def _squares(self, field: str, color: Color) -> set[Square]:
        side = color - 1
        out: set[Square] = set()
        table, line_squares = self.table, self.line_squares
        for line_id, key in enumerate(self.keys):
            if key & ((1 << LENGTH_SHIFT) - 1):
                positions = getattr(table[key], field)[side]
                if positions:
                    squares = line_squares[line_id]
                    out.update(squares[p] for p in positions)
        return out

    def win_squares(self, color: Color) -> set[Square]:
        """The empty squares where a ``color`` stone makes a five."""
        if not (self.count(color, FOUR) or self.count(color, OPEN_FOUR)):  # nothing to complete
            return set()
        return self._squares("wins", color)

    def four_squares(self, color: Color) -> set[Square]:
        """The empty squares where a ``color`` stone makes a new four or a five."""
        return self._squares("fours", color)

    def three_squares(self, color: Color) -> set[Square]:
        """The empty squares where a ``color`` stone makes a new open three."""
        return self._squares("threes", color)

    def move_gain(self, square: Square, color: Color) -> int:
        """How much a ``color`` stone on the empty ``square`` raises ``color``'s score minus the opponent's,
        read from the analyses of the lines through it (no stone is placed): the move ordering's measure."""
        table, keys = self.table, self.keys
        side = color - 1
        gain = 0
        for line_id, shift in self.square_lines[square]:
            gain += table[keys[line_id]].gains[side][shift // SQUARE_BITS]
        return gain

    def has_five(self, color: Color) -> bool:
        """Whether ``color`` has a winning row."""
        return self.count(color, FIVE) > 0

    def winner(self) -> Color | None:
        """The side with a winning row, or None."""
        if self.has_five(BLACK):
            return BLACK
        if self.has_five(WHITE):
            return WHITE
        return None

    def is_full(self) -> bool:
        """Whether no square is empty."""
        return len(self.history) >= self.cells_count and EMPTY not in self.cells

    def candidates(self) -> list[Square]:
        """Empty squares near a stone (the centre on an empty board): where sensible moves are."""
        near, cells = self.near, self.cells
        out = [sq for sq in range(self.cells_count) if near[sq] and cells[sq] == EMPTY]
        if not out and EMPTY in cells:
            centre = self.index(self.width // 2, self.height // 2)
            out = [centre] if cells[centre] == EMPTY else [cells.index(EMPTY)]
        return out

    def stones(self) -> int:
        """Number of stones (and walls) on the board."""
        return len(self.history)

    # ------------------------------------------------------------------------------------ conversions
    def copy(self) -> GomokuBoard:
        """An independent board with the same stones in the same order and the same side to move."""
        twin = GomokuBoard(self.width, self.height, self.rule)
        for square, color in self.history:
            twin.place(square, color)
        twin.set_to_move(self.to_move)
        return twin

    @classmethod
    def from_moves(
        cls, moves: Iterable[tuple[int, int]], size: int = DEFAULT_SIZE, rule: Rule = Rule.FREESTYLE
    ) -> GomokuBoard:
        """A board after playing ``(x, y)`` moves alternately, black first.

        :raises GomokuError: on an off-board or repeated move.
        """
        board = cls(size, rule=rule)
        for x, y in moves:
            board.play(board.index(x, y))
        return board

    @classmethod
    def from_text(cls, text: str, rule: Rule = Rule.FREESTYLE, to_move: Color | None = None) -> GomokuBoard:
        """A board from rows of ``X`` (black), ``O`` (white), ``.`` and ``#`` (wall), one row per line.

        The side to move is ``to_move`` if given, else white when black has more stones, else black.

        :raises GomokuError: on ragged rows, a bad character or a bad size.
        """
        rows = [row.strip() for row in text.strip().splitlines() if row.strip()]
        if not rows or any(len(row) != len(rows[0]) for row in rows):
            raise GomokuError("board text needs equal rows of 'X', 'O', '.', '#'")
        board = cls(len(rows[0]), len(rows), rule=rule)
        codes = {"X": BLACK, "x": BLACK, "O": WHITE, "o": WHITE, "#": WALL}
        for y, row in enumerate(rows):
            for x, ch in enumerate(row):
                if ch in codes:
                    board.place(board.index(x, y), codes[ch])
                elif ch != ".":
                    raise GomokuError(f"bad character {ch!r} in board text: use X, O, '.', '#'")
        blacks = board.cells.count(BLACK)
        whites = board.cells.count(WHITE)
        board.set_to_move(to_move if to_move is not None else WHITE if blacks > whites else BLACK)
        return board

    @classmethod
    def from_board(cls, board: Board, rule: Rule = Rule.FREESTYLE) -> GomokuBoard:
        """This engine's board for a general :class:`engine.board.Board` with k = 5 (X is black).

        :raises GomokuError: if the board's k is not 5.
        """
        if board.k != 5:
            raise GomokuError(f"gomoku is five in a row; this board has k = {board.k}")
        twin = cls(board.cols, board.rows, rule=rule)
        for sq in range(board.rows * board.cols):
            piece = board.piece_at(sq)
            if piece is not None:
                twin.place(sq, BLACK if piece == "X" else WHITE)
        twin.set_to_move(BLACK if board.to_move() == "X" else WHITE)
        return twin

    def to_board(self) -> Board:
        """The same stones as a general :class:`engine.board.Board` (walls are dropped)."""
        x = sum(1 << sq for sq, c in enumerate(self.cells) if c == BLACK)
        o = sum(1 << sq for sq, c in enumerate(self.cells) if c == WHITE)
        return Board.from_masks(x, o, geometry(self.height, self.width, 5), validate=False)

    def __str__(self) -> str:
        chars = {EMPTY: ".", BLACK: "X", WHITE: "O", WALL: "#"}
        w = self.width
        rows = (self.cells[y * w : (y + 1) * w] for y in range(self.height))
        return "\n".join("".join(chars[c] for c in row) for row in rows)

    def __repr__(self) -> str:
        return f"GomokuBoard.from_text({str(self)!r}, rule={self.rule!r})"
