"""The led process."""
