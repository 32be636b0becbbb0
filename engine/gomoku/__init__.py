"""Gomoku (five in a row) on 15 x 15 and other sizes: patterns, threat-space search, PVS, time control."""
