"""The referee process: the game's state machine (:mod:`.machine`, pure), judging (:mod:`.judge`),
events and actions (:mod:`.events`), the journal (:mod:`.journal`), the shell (:mod:`.service`) and the
operator's client (:mod:`.operator_client`)."""
