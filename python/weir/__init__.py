"""weir: numpy access to live weir arenas (channels, keys, signal groups) through libweir.

    import weir
    arena = weir.Arena("lab1")
    ch = arena.channel("adc0")
    blocks = ch.read(8)                       # the newest 8 blocks, copied and validated
    for block in ch.follow(policy="lossy", timeout=1.0):
        print(block.sequence, block.data.mean(), block.lost)
    arena["adc0.gain"] = 2.0; print(arena["adc0.rms"])

No server, no sockets, no serialisation: the arena is the interface.
"""
from ._lib import (BusyError, FullError, InvalidArenaError, NotFoundError, PermissionDenied, SystemFailure,
                   TornError, UnsupportedError, WeirError, WeirTypeError, WeirValueError, library_path)
from .arena import Arena, Watcher
from .channel import Block, Blocks, BlockView, Channel, Envelope, Follower
from .vectors import Vectors

__version__ = "0.1.0"
__all__ = ["Arena", "Watcher", "Vectors", "Channel", "Block", "Blocks", "BlockView", "Envelope", "Follower", "WeirError",
           "NotFoundError", "PermissionDenied", "InvalidArenaError", "WeirTypeError", "WeirValueError", "BusyError",
           "TornError", "FullError", "UnsupportedError", "SystemFailure", "library_path"]
