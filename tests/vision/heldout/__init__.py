"""An independent, physically modelled renderer of boards (see README.md), a further tuning set."""
