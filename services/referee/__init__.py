"""The referee process."""
