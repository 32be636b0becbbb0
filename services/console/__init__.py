"""The console: one page in the browser that shows the camera with vision's overlay, the game, the
processes' health, takes the operator's commands and, on the simulator, lets a person play by clicking.

An aiohttp server inside the usual asyncio service shell (:mod:`services.common.shell`): one loop runs the
bus (pyzmq's asyncio sockets), the HTTP endpoints and the WebSockets, so the newest game state and frame
are plain attributes every handler reads, with no threads or locks. The pure part is :mod:`.core`; the
endpoints are in :mod:`.server`; the process is :mod:`.service`.
"""
