"""Gomoku (five in a row) on 15 x 15 and other sizes, in pure Python. One job per module:

* :mod:`.rules` — colours, the freestyle and standard (exactly five) rules, sizes;
* :mod:`.patterns` — line shapes (five, open four, four, open three, three, two, ...) memoised per line;
* :mod:`.board` — the mutable board: incremental pattern counts, Zobrist hash, candidates, take-backs;
* :mod:`.threats` — VCF and VCT searches whose wins are proofs;
* :mod:`.search` — PVS with iterative deepening, transposition table, killers and history;
* :mod:`.clock` — deadlines and the Gomocup turn budget;
* :mod:`.player` — the move chooser and its levels (wins, blocks, VCF, defence, VCT, then PVS);
* :mod:`.protocol` — the Gomocup brain protocol as a pure state machine (``sanzi pbrain`` runs it).

>>> from engine.gomoku.board import GomokuBoard
>>> from engine.gomoku.player import GomokuPlayer
>>> board = GomokuBoard.from_moves([(7, 7), (0, 0), (8, 7), (0, 1), (9, 7), (0, 2), (10, 7), (0, 3)])
>>> decision = GomokuPlayer(board, "easy").choose(5.0)
>>> decision.reason, board.xy(decision.move) in ((6, 7), (11, 7))
('win', True)
"""
