"""sanzi's game engine: perfect tic-tac-toe, difficulty levels, and m x n boards with k in a row.

Pure library code: no I/O, no logging, no bus. Importing it is cheap; the complete 3 x 3 table is built on
first use (about 15 ms; see :mod:`engine.table`), after which a perfect move costs about 2 microseconds.

Squares are 0-based indices row by row from the top left (``0..8`` on 3 x 3); people number them 1..9
(:func:`square_number`, :func:`square_from_number`). X is black and moves first; O is white.

>>> from engine import Board, choose_move, solve
>>> board = Board('X...O....')
>>> solve(board).value            # O to move; perfect play draws
0
>>> import random
>>> choose_move(Board('XX..O.O..'), 'perfect', random.Random(1)).number
3

The CS50 "tictactoe" API on list-of-lists boards is :mod:`engine.tictactoe`.
"""

from __future__ import annotations

from .board import (
    BLACK,
    GEOMETRY_3X3,
    WHITE,
    Board,
    Geometry,
    O,
    Outcome,
    Player,
    Square,
    X,
    geometry,
    is_terminal,
    legal_moves,
    other,
    outcome,
    play,
    square_from_number,
    square_number,
    to_move,
    utility,
    winner,
)
from .errors import EngineError, GameOverError, IllegalMoveError, InvalidBoardError, UnknownLevelError
from .policy import (
    EASY,
    HARD,
    LEVELS,
    MEDIUM,
    PERFECT,
    Evaluation,
    Level,
    MoveChoice,
    choose_move,
    get_level,
    solve,
)
from .search import Searcher, evaluate, score_distance, score_value
from .table import REACHABLE_POSITIONS, reachable_positions

__all__ = [
    "BLACK",
    "EASY",
    "GEOMETRY_3X3",
    "HARD",
    "LEVELS",
    "MEDIUM",
    "PERFECT",
    "REACHABLE_POSITIONS",
    "WHITE",
    "Board",
    "EngineError",
    "Evaluation",
    "GameOverError",
    "Geometry",
    "IllegalMoveError",
    "InvalidBoardError",
    "Level",
    "MoveChoice",
    "O",
    "Outcome",
    "Player",
    "Searcher",
    "Square",
    "UnknownLevelError",
    "X",
    "choose_move",
    "evaluate",
    "geometry",
    "get_level",
    "is_terminal",
    "legal_moves",
    "other",
    "outcome",
    "play",
    "reachable_positions",
    "score_distance",
    "score_value",
    "solve",
    "square_from_number",
    "square_number",
    "to_move",
    "utility",
    "winner",
]
