"""A vector partition (the keys carrying one label) and its nearest-neighbour service.

    pulses = arena.vectors("pulses")               # needs `weir ann ARENA pulses` running
    for key, score in pulses.search(like="pulses/adc0/17", k=10):
        print(key, score, arena[key])              # the key's value: the pulse's time and sequence
    pulses.search(query=np.random.rand(arena.info["vector_dim"]))
    pulses.search(like="pulses/adc0/17", exact=True)   # exact search, the truth the index is checked by
"""
import ctypes

import numpy as np

from . import _lib
from ._lib import Closing, lib


class Vectors(Closing):
    """Asks the ann service of partition `part` (a label) through the arena: the question is written
    as keys, the service's answer wakes this process through a signal group. Close it, or use `with`;
    it holds one of the arena's watcher rows while open."""

    def __init__(self, arena, part):
        self._arena = arena
        self.part = str(part)
        self._ann = None
        dim = ctypes.c_uint32()
        _lib.check(lib.weir_vector_dim(arena._handle(), ctypes.byref(dim)))
        self.dim = dim.value

    def _client(self):
        if self._ann is None:
            handle = ctypes.c_void_p()
            _lib.check(lib.weir_ann_open(self._arena._handle(), _lib.encode(self.part), ctypes.byref(handle)),
                       f"partition '{self.part}'")
            self._ann = handle
        return self._ann

    def close(self):
        if self._ann:
            lib.weir_ann_close(self._ann)
            self._ann = None

    def __repr__(self):
        return f"<weir.Vectors {self.part!r} of {self._arena.name!r}, dim {self.dim}>"

    def search(self, query=None, like=None, k=10, ef=0, timeout=1.0, exact=False):
        """The k keys of the partition nearest to `query` (dim floats) or to the vector of key `like`:
        [(key, score)], best first, by the service's metric (cosine unless it was started otherwise).
        exact=True scores every vector of the arena in place instead (no service needed) and keeps the
        partition's keys."""
        if (query is None) == (like is None):
            raise ValueError("search needs exactly one of query= or like=")
        if not 1 <= k <= _lib.ANN_MAX_HITS:
            raise ValueError(f"k must be 1..{_lib.ANN_MAX_HITS}, not {k}")
        if exact:
            return self._exact(self._arena.vector(like) if like is not None else query, k)
        hits = (_lib.VectorHit * k)()
        count = ctypes.c_uint32()
        timeout_ns = int(timeout * 1e9)
        if like is not None:
            status = lib.weir_ann_search_like(self._client(), _lib.encode(like), k, ef, timeout_ns, hits,
                                              ctypes.byref(count))
        else:
            q = np.ascontiguousarray(query, dtype=np.float32)
            status = lib.weir_ann_search(self._client(), q.ctypes.data, q.size, k, ef, timeout_ns, hits,
                                         ctypes.byref(count))
        _lib.check(status, f"partition '{self.part}'")
        return self._arena._hit_keys(hits, count.value)

    def _exact(self, query, k):
        q = np.ascontiguousarray(query, dtype=np.float32)
        hits = (_lib.VectorHit * k)()
        count = ctypes.c_uint32()
        _lib.check(lib.weir_ann_exact_search(self._arena._handle(), _lib.encode(self.part), q.ctypes.data, q.size, k,
                                             hits, ctypes.byref(count)), f"partition '{self.part}'")
        return self._arena._hit_keys(hits, count.value)
