"""The ai process."""
