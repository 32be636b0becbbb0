"""The simhuman process."""
