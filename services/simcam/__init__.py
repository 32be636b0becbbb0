"""The simcam process."""
