"""The vision process."""
