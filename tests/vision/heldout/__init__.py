"""An independent, physically modelled renderer of boards (see README.md): held out once, a tuning set now."""
