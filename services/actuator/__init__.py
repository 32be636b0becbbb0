"""The actuator process: the serial link to the motion controller, calibration, supply bookkeeping.

Modules:

- :mod:`.controller` the one :class:`~.controller.MotionController` interface, its status and errors;
- :mod:`.grbl` G-code to GRBL 1.1; :mod:`.framed` the binary frame protocol (codec in
  :mod:`services.common.frame`, shared with the emulated controller);
  both over :mod:`.link` (pyserial + the asyncio loop); :mod:`.drivers` picks one from the configuration;
  :mod:`.blocking` a blocking wrapper for `sanzi motion`;
- :mod:`.planner` (pure) a command -> motion steps; :mod:`.geometry` (pure) squares and slots -> mm;
- :mod:`.record` the persistent record of emptied supply slots and command outcomes;
- :mod:`.core` carries out commands at most once; :mod:`.service` the bus shell;
- :mod:`.calibration` (pure) the camera-to-table homography from points or from the table's ArUco markers.
"""
