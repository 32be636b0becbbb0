"""The fault recorder ("black box"): keeps the last seconds of bus traffic in memory and writes them to a
recording when something goes wrong (an illegal move, a fault in the game state, a failed actuator
command, a process in fault or restarted). The logic is pure (:mod:`.core`); :mod:`.service` is the shell.
"""
