"""Held-out synthetic evaluation frames for the board detector (see README.md)."""
