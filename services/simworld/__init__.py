"""The simworld process."""
