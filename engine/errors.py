"""The engine's exceptions: every one is a :class:`ValueError`, so callers may catch broadly or precisely."""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the engine raises on bad input."""


class InvalidBoardError(EngineError):
    """A board that cannot occur in a legal game, or text/geometry that does not describe a board."""


class IllegalMoveError(EngineError):
    """A move that is not legal here: not an integer, off the board, on an occupied square, or after the
    end."""


class GameOverError(IllegalMoveError):
    """A move was asked for (or played) on a board whose game has already ended."""


class UnknownLevelError(EngineError):
    """A difficulty level name that is not one of :data:`engine.LEVELS`, or invalid level parameters."""
