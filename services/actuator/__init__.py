"""The actuator process."""
