"""A referee stand-in for the simulator's tests: just enough to drive the simulated person."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

import engine
from messages import GameState
from services.simworld.world import World

PIECE = {"black": "X", "white": "O"}


@dataclass
class MiniReferee:
    """Just enough of a referee to drive the person: the device plays perfect engine moves straight into
    the world, the person's presses are judged on the world's board (legal / cheat restored / illegal)."""

    world: World
    device: str  # "X" or "O"
    seed: int = 0
    #: how the device's piece gets onto a square; default: straight into the world.
    placer: Callable[[str, int], None] | None = None
    revision: int = 0
    logical: str = "........."
    moves: list[int] = field(default_factory=list)
    illegal: str = ""
    illegal_moves: int = 0
    cheats: int = 0
    hand_at_press: list[bool] = field(default_factory=list)
    result: str = ""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    @property
    def person(self) -> str:
        return "O" if self.device == "X" else "X"

    def state(self) -> GameState:
        self.revision += 1
        over = bool(self.result)
        return GameState(
            revision=self.revision,
            game_id="g1",
            phase="game-over" if over else "waiting-for-person",
            board=self.logical,
            device_colour="black" if self.device == "X" else "white",
            lamp=not over,
            result=self.result,
            illegal=self.illegal,
            moves=list(self.moves),
            illegal_moves=self.illegal_moves,
            cheats_restored=self.cheats,
        )

    def device_move(self) -> None:
        board = engine.Board(self.logical)
        if board.is_terminal():
            return
        square = engine.choose_move(board, "perfect", self.rng).number
        colour = "black" if self.device == "X" else "white"
        if self.placer is not None:
            self.placer(colour, square)
        else:
            self.world.place(colour, square)  # the actuator, in effect
        self._play(square, self.device)

    def _play(self, square: int, piece: str) -> None:
        i = square - 1
        self.logical = self.logical[:i] + piece + self.logical[i + 1 :]
        self.moves.append(square)
        board = engine.Board(self.logical)
        if board.is_terminal():
            w = board.winner()
            self.result = "draw" if w is None else ("device-won" if w == self.device else "person-won")

    def judge(self) -> None:
        self.hand_at_press.append(self.world.hand.present)
        seen = self.world.board_string()
        changed = [i + 1 for i in range(9) if seen[i] != self.logical[i]]
        device_gone = [s for s in changed if self.logical[s - 1] == self.device]
        if device_gone:  # cheating: put the device's pieces back, as the referee would
            for s in device_gone:
                moved_to = [t for t in changed if seen[t - 1] == self.device and self.logical[t - 1] == "."]
                if moved_to:
                    self.world.move(moved_to[0], s)
                else:
                    self.world.place("black" if self.device == "X" else "white", s)
            self.cheats += 1
            self.illegal = ""
            return
        new = [s for s in changed if seen[s - 1] == self.person and self.logical[s - 1] == "."]
        if len(changed) == 1 and len(new) == 1:
            self.illegal = ""
            self._play(new[0], self.person)
            self.device_move()
            return
        self.illegal_moves += 1
        if not changed:
            self.illegal = "no-change"
        elif any(seen[s - 1] == self.device for s in changed):
            self.illegal = "wrong-colour"
        elif len(new) > 1:
            self.illegal = "two-pieces"
        else:
            self.illegal = "other"
