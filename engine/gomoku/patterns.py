"""Line patterns: what one side's stones on one line amount to (five, open four, four, open three, ...).

A *line* is a row, a column or a diagonal of the board. Along a line, one side's stones live in *segments*:
maximal runs of squares that hold that side's stones or are empty, cut by the opponent's stones, walls and
the board's edges. A segment shorter than five can never hold a five and counts for nothing.

Each segment gets one *shape*, the strongest it holds, defined by what one more stone can do, so the
definitions follow the rule (freestyle: five or more wins; standard: exactly five) without special cases:

==============  ===========================================================================================
FIVE            a winning run is on the board (exactly five under the standard rule)
OPEN_FOUR       two or more empty squares each complete a five: cannot be stopped by one stone
FOUR            exactly one square completes a five
OPEN_THREE      some move makes an open four
THREE           some move makes a four, none an open four
OPEN_TWO        some move makes an open three
TWO             some move makes a three, none an open three
ONE             any other segment holding a stone
==============  ===========================================================================================

Broken shapes are covered by the same words: ``.X.XX.`` is an open three (a broken three) because one
stone makes ``.XXXX.``; ``XX.XX`` is a four.

A line's analysis (:class:`LineInfo`) is memoised on the line's *key*, an integer holding the line length
and two bits per square (0 empty, 1 black, 2 white, 3 wall), so a board updates its pattern counts with four
dictionary look-ups per stone (:class:`engine.gomoku.board.GomokuBoard`).

>>> shape_of('..XXX..', exact=False) == OPEN_THREE, shape_of('OXXX..', exact=False) == THREE
(True, True)
>>> shape_of('XXXXXX', exact=False) == FIVE, shape_of('XXXXXX', exact=True) == FIVE
(True, False)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Final

from .rules import BLACK, EMPTY, WALL, WHITE, Color

Shape = int
"""A segment's shape, one of the constants below; larger is stronger."""

NONE: Final = 0
ONE: Final = 1
TWO: Final = 2
OPEN_TWO: Final = 3
THREE: Final = 4
OPEN_THREE: Final = 5
FOUR: Final = 6
OPEN_FOUR: Final = 7
FIVE: Final = 8
#: Number of shapes (index range of a count vector for one side).
SHAPES: Final = 9
SHAPE_NAMES: Final = (
    "none",
    "one",
    "two",
    "open two",
    "three",
    "open three",
    "four",
    "open four",
    "five",
)

#: Bits per square in a line key, and the shift of the line length above the squares (32 squares at most).
SQUARE_BITS: Final = 2
LENGTH_SHIFT: Final = 64

#: What a segment is worth to its owner in the static evaluation, by shape. Fours and fives are handled by
#: the search as forced moves; their weights only matter for move ordering.
SHAPE_SCORE: Final = (0, 4, 40, 160, 180, 1200, 1500, 20_000, 200_000)

#: The shape one move below a child's shape: a move making an open four means the segment holds an open
#: three, and so on. Shapes not listed fall to ONE.
_PARENT_SHAPE: Final = {OPEN_FOUR: OPEN_THREE, FOUR: THREE, OPEN_THREE: OPEN_TWO, THREE: TWO}


#: Entries kept by a line table (about 600 bytes each) and by the segment shape cache before they start over.
LINE_TABLE_LIMIT: Final = 200_000
SEGMENT_CACHE_LIMIT: Final = 1 << 18

#: Empty squares kept beyond a segment's outer stones when it is analysed (see _shaped_segments).
_MARGIN: Final = 5
#: Stones more than this many squares apart (five or more empty squares between) never share a five, nor
#: touch each other's five as an overline: the segment is cut between them.
_CUT_GAP: Final = 5


def _run_through(length: int, mask: int, i: int) -> int:
    """Length of the run of stones a stone on empty square ``i`` would join (itself included)."""
    run = 1
    j = i - 1
    while j >= 0 and mask >> j & 1:
        run += 1
        j -= 1
    j = i + 1
    while j < length and mask >> j & 1:
        run += 1
        j += 1
    return run


def _wins(run: int, exact: bool) -> bool:
    return run == 5 or (run > 5 and not exact)


def completions(length: int, mask: int, exact: bool) -> tuple[int, ...]:
    """The empty squares of a segment (``mask`` = the side's stones) where one stone makes a winning run."""
    return tuple(
        i for i in range(length) if not mask >> i & 1 and _wins(_run_through(length, mask, i), exact)
    )


def has_five(length: int, mask: int, exact: bool) -> bool:
    """Whether the segment already holds a winning run."""
    run = 0
    for i in range(length + 1):
        if i < length and mask >> i & 1:
            run += 1
        else:
            if _wins(run, exact):
                return True
            run = 0
    return False


@functools.lru_cache(maxsize=SEGMENT_CACHE_LIMIT)
def _four_shape(length: int, mask: int, exact: bool) -> Shape:
    """FIVE, OPEN_FOUR, FOUR, or NONE for anything weaker."""
    if has_five(length, mask, exact):
        return FIVE
    wins = completions(length, mask, exact)
    return OPEN_FOUR if len(wins) >= 2 else FOUR if wins else NONE


@functools.lru_cache(maxsize=SEGMENT_CACHE_LIMIT)
def _three_shape(length: int, mask: int, exact: bool) -> Shape:
    """The shape if it is a three or stronger, else NONE: one move is looked at, no more."""
    shape = _four_shape(length, mask, exact)
    if shape != NONE:
        return shape
    best = NONE
    for i in range(length):
        if not mask >> i & 1:
            child = _four_shape(length, mask | 1 << i, exact)
            if child > best:
                best = child
                if best == OPEN_FOUR:
                    break
    return _PARENT_SHAPE.get(best, NONE)


@functools.lru_cache(maxsize=SEGMENT_CACHE_LIMIT)
def segment_shape(length: int, mask: int, exact: bool) -> Shape:
    """The shape of a segment of ``length`` squares whose stones are the bits of ``mask`` (see the table in
    the module docstring). ``exact`` is the standard rule (exactly five). Two moves ahead at most are
    looked at (a two is a move from a three, which is a move from a four), so the cost stays bounded."""
    if length < 5 or mask == 0:
        return NONE
    shape = _four_shape(length, mask, exact)
    if shape != NONE:
        return shape
    if mask.bit_count() < 2:
        return ONE
    shape = _three_shape(length, mask, exact)
    if shape != NONE:
        return shape
    best = NONE
    for i in range(length):
        if not mask >> i & 1:
            child = _three_shape(length, mask | 1 << i, exact)
            if child > best:
                best = child
                if best >= OPEN_THREE:
                    break
    return _PARENT_SHAPE.get(best, ONE)


@dataclass(frozen=True, slots=True)
class LineInfo:
    """What a line holds, for both sides. Side ``c`` (1 black, 2 white) uses index ``c - 1`` of the pairs."""

    #: number of segments of each shape: black's SHAPES counts, then white's
    counts: tuple[int, ...]
    #: static value of the line for each side (sum of SHAPE_SCORE over its segments)
    score: tuple[int, int]
    #: per side, the line positions where one stone makes a winning run
    wins: tuple[tuple[int, ...], tuple[int, ...]]
    #: per side, the positions where one stone makes a new four (a new winning square) or a five
    fours: tuple[tuple[int, ...], tuple[int, ...]]
    #: per side, the positions where one stone lifts a segment below an open three to an open three
    threes: tuple[tuple[int, ...], tuple[int, ...]]
    #: per side and position, how much a stone there raises the side's line value less the opponent's
    #: (0 on occupied squares): the move ordering's measure
    gains: tuple[tuple[int, ...], tuple[int, ...]]


def line_key(squares: str | list[int] | tuple[int, ...]) -> int:
    """The key of a line given as text (``'X'``, ``'O'``, ``'.'``, ``'#'`` for a wall) or as colours."""
    codes = {"X": BLACK, "O": WHITE, ".": EMPTY, "#": WALL}
    values = [codes[ch] for ch in squares] if isinstance(squares, str) else list(squares)
    key = len(values) << LENGTH_SHIFT
    for i, value in enumerate(values):
        key |= value << (SQUARE_BITS * i)
    return key


def _segments(key: int, color: Color) -> list[tuple[int, int]]:
    """The side's segments of a line as (start, length), with the line's squares decoded from ``key``."""
    length = key >> LENGTH_SHIFT
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(length + 1):
        value = key >> (SQUARE_BITS * i) & 3 if i < length else WALL
        if value != EMPTY and value != color:
            if i - start >= 5:
                out.append((start, i - start))
            start = i + 1
    return out


def _shaped_segments(key: int, color: Color, exact: bool) -> list[tuple[int, int, int, Shape]]:
    """The side's segments of a line as (start, length, stone mask, shape).

    A segment is cut where five or more empty squares separate two stones (they can never share a five),
    and each piece is trimmed to the squares that matter: every five its stones can take part in lies
    within four of one of them, and one square more decides an overline, so squares farther than _MARGIN
    from its outer stones are dropped. A piece without stones keeps the whole segment."""
    out: list[tuple[int, int, int, Shape]] = []
    for seg_start, seg_length in _segments(key, color):
        stones = [i for i in range(seg_length) if key >> (SQUARE_BITS * (seg_start + i)) & 3 == color]
        if not stones:
            out.append((seg_start, seg_length, 0, segment_shape(seg_length, 0, exact)))
            continue
        pieces: list[list[int]] = [[stones[0]]]
        for i in stones[1:]:
            if i - pieces[-1][-1] > _CUT_GAP:
                pieces.append([i])
            else:
                pieces[-1].append(i)
        for piece in pieces:
            lo, hi = max(0, piece[0] - _MARGIN), min(seg_length, piece[-1] + _MARGIN + 1)
            mask = sum(1 << (i - lo) for i in piece)
            out.append((seg_start + lo, hi - lo, mask, segment_shape(hi - lo, mask, exact)))
    return out


def line_scores(key: int, exact: bool) -> tuple[int, int]:
    """The line's static value for black and for white (the sums of SHAPE_SCORE over their segments)."""
    return (
        sum(SHAPE_SCORE[shape] for *_, shape in _shaped_segments(key, BLACK, exact)),
        sum(SHAPE_SCORE[shape] for *_, shape in _shaped_segments(key, WHITE, exact)),
    )


def analyse_line(key: int, exact: bool) -> LineInfo:
    """The full analysis of the line with this key (see :class:`LineInfo`). Not cached: see
    :class:`LineTable`."""
    counts = [0] * (2 * SHAPES)
    score = [0, 0]
    wins: list[tuple[int, ...]] = []
    fours: list[tuple[int, ...]] = []
    threes: list[tuple[int, ...]] = []
    for color in (BLACK, WHITE):
        side = color - 1
        side_wins: list[int] = []
        side_fours: list[int] = []
        side_threes: list[int] = []
        for start, length, mask, shape in _shaped_segments(key, color, exact):
            counts[side * SHAPES + shape] += 1
            score[side] += SHAPE_SCORE[shape]
            if mask == 0 or shape == FIVE:
                continue
            old_wins = completions(length, mask, exact)
            side_wins.extend(start + i for i in old_wins)
            for i in range(length):
                if mask >> i & 1:
                    continue
                child = mask | 1 << i
                if has_five(length, child, exact) or any(
                    w not in old_wins for w in completions(length, child, exact)
                ):
                    side_fours.append(start + i)
                elif shape < OPEN_THREE and segment_shape(length, child, exact) == OPEN_THREE:
                    side_threes.append(start + i)
        wins.append(tuple(side_wins))
        fours.append(tuple(side_fours))
        threes.append(tuple(side_threes))
    # What a stone on each empty square does to the line's value: its side's gain plus the other's loss.
    length = key >> LENGTH_SHIFT
    gains: list[tuple[int, ...]] = []
    for color in (BLACK, WHITE):
        own, opp = color - 1, 2 - color
        side_gains = [0] * length
        for pos in range(length):
            if key >> (SQUARE_BITS * pos) & 3 == EMPTY:
                child = line_scores(key + (color << (SQUARE_BITS * pos)), exact)
                side_gains[pos] = child[own] - score[own] + score[opp] - child[opp]
        gains.append(tuple(side_gains))
    return LineInfo(
        counts=tuple(counts),
        score=(score[0], score[1]),
        wins=(wins[0], wins[1]),
        fours=(fours[0], fours[1]),
        threes=(threes[0], threes[1]),
        gains=(gains[0], gains[1]),
    )


class LineTable(dict[int, LineInfo]):
    """Memo of :func:`analyse_line` for one rule: ``table[key]`` analyses a line the first time it is seen.

    One table per rule is shared by every board (:func:`line_table`); it grows by the lines that actually
    occur (about 5,000 per game) and starts again empty past :data:`LINE_TABLE_LIMIT` entries.
    """

    def __init__(self, exact: bool) -> None:
        super().__init__()
        self.exact = exact

    def __missing__(self, key: int) -> LineInfo:
        if len(self) >= LINE_TABLE_LIMIT:
            self.clear()  # bounded memory over long matches; the lines in use come back on demand
        info = analyse_line(key, self.exact)
        self[key] = info
        return info


_TABLES: dict[bool, LineTable] = {}


def line_table(exact: bool) -> LineTable:
    """The shared memo for the standard rule (``exact=True``) or freestyle."""
    table = _TABLES.get(exact)
    if table is None:
        table = _TABLES[exact] = LineTable(exact)
    return table


def shape_of(text: str, exact: bool = False, color: Color = BLACK) -> Shape:
    """The strongest shape of ``color`` on a line written as text (``'X'``, ``'O'``, ``'.'``, ``'#'``)."""
    counts = line_table(exact)[line_key(text)].counts
    side = color - 1
    return max((s for s in range(SHAPES) if counts[side * SHAPES + s]), default=NONE)
