"""An independent board-frame generator: an evaluation set written without reading the project's renderers."""
