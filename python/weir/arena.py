"""Arenas: attach by name, channels, keys as Python values, watching."""
import ctypes
import time

import numpy as np

from . import _lib
from ._lib import Closing, lib
from .channel import Channel, _deadline, _slice_ns
from .vectors import Vectors

_NUMPY_TO_DTYPE = {np.dtype(v).newbyteorder("<"): k for k, v in _lib.DTYPES.items()}


class Arena(Closing):
    """An attached arena. Attaching never creates or deletes it: `weir create` or `weir run` does.

    where: "NAME" (/dev/shm/weir.NAME), a path containing '/' (a file-backed arena) or "fd:N".
    read_only=True maps it read-only: reads and copies only (no followers, watchers or sets), for an
    arena whose mode gives you read permission only."""

    def __init__(self, where, read_only=False):
        self.where = str(where)
        handle = ctypes.c_void_p()
        flags = _lib.ATTACH_READ_ONLY if read_only else 0
        _lib.check(lib.weir_attach(_lib.encode(self.where), flags, ctypes.byref(handle)))
        self._arena = handle
        self._labels = {}
        info = _lib.ArenaInfo()
        _lib.check(lib.weir_arena_get_info(handle, ctypes.byref(info)))
        self.name = info.name.decode()
        self.info = {name: getattr(info, name) for name, _ in info._fields_ if name not in ("name", "reserved")}
        self.info["name"] = self.name

    def _handle(self):
        if not self._arena:
            raise ValueError(f"arena '{self.where}' is closed")
        return self._arena

    def close(self):
        """Detaches. Followers and watchers still open keep the mapping until they close."""
        if self._arena:
            lib.weir_detach(self._arena)
            self._arena = None

    def __repr__(self):
        return f"<weir.Arena {self.name!r} {self.info['bytes']} bytes>"

    def _label(self, label_id):
        if label_id not in self._labels:
            buf = ctypes.create_string_buffer(64)
            _lib.check(lib.weir_label_name(self._handle(), label_id, buf, len(buf)))
            self._labels[label_id] = buf.value.decode()
        return self._labels[label_id]

    # ---- channels ----
    @property
    def channels(self):
        """Every ready channel, by name."""
        count = ctypes.c_uint32()
        capacity = self.info["channel_capacity"]
        infos = (_lib.ChannelInfo * max(1, capacity))()
        _lib.check(lib.weir_channel_list(self._handle(), infos, capacity, ctypes.byref(count)))
        return {c.name: c for c in (Channel(self, infos[i]) for i in range(count.value))}

    def channel(self, name):
        """The channel called name; NotFoundError naming it and the arena otherwise."""
        info = _lib.ChannelInfo()
        _lib.check(lib.weir_channel_find(self._handle(), _lib.encode(name), ctypes.byref(info)))
        return Channel(self, info)

    # ---- keys ----
    @property
    def keys(self):
        """The live keys, sorted."""
        size = 4096
        while True:
            buf = ctypes.create_string_buffer(size)
            needed, count = ctypes.c_size_t(), ctypes.c_uint32()
            status = lib.weir_key_list(self._handle(), buf, size, ctypes.byref(needed), ctypes.byref(count))
            if status == _lib.E_TOO_SMALL:
                size = needed.value + 4096  # keys added meanwhile: a little room
                continue
            _lib.check(status)
            raw = buf.raw[:needed.value]
            return sorted(k.decode("utf-8", "replace") for k in raw.split(b"\0")[:-1])

    def key_info(self, key):
        """type, length, version (completed writes) and, for arrays, dtype and shape of a key."""
        vi = _lib.ValueInfo()
        _lib.check(lib.weir_key_info(self._handle(), _lib.encode(key), ctypes.byref(vi)))
        return _info_dict(vi)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key):
        vi = _lib.ValueInfo()
        return lib.weir_key_info(self._handle(), _lib.encode(key), ctypes.byref(vi)) == _lib.OK

    def __getitem__(self, key):
        """The value as Python sees it: float (f64), int (i64, u64), str (text), bytes, a numpy array
        (arrays, with their dtype and shape), None (a key with no value yet). KeyError if missing."""
        size = self.info["value_bytes"]
        buf = ctypes.create_string_buffer(max(1, size))
        vi = _lib.ValueInfo()
        status = lib.weir_get(self._handle(), _lib.encode(key), buf, size, ctypes.byref(vi))
        if status == _lib.E_NOT_FOUND:
            raise KeyError(key)
        _lib.check(status)
        return _decode(buf.raw[:vi.length], vi)

    def __setitem__(self, key, value):
        self.set(key, value)

    def __delitem__(self, key):
        status = lib.weir_del(self._handle(), _lib.encode(key))
        if status == _lib.E_NOT_FOUND:
            raise KeyError(key)
        _lib.check(status)

    def set(self, key, value, type=None):
        """Writes a key. The type follows the value: float -> f64, int -> i64 (u64 past i64's range),
        str -> text, bytes -> bytes, numpy array (rank 1 or 2) -> array; numpy scalars keep theirs.
        type ("f64", "i64", "u64", "text", "bytes") forces one."""
        k = _lib.encode(key)
        h = self._handle()
        if type is None:
            type = _infer_type(value)
        if type == "array":
            arr = np.ascontiguousarray(value)
            if arr.dtype.byteorder == ">":
                arr = arr.astype(arr.dtype.newbyteorder("<"))
            code = _NUMPY_TO_DTYPE.get(arr.dtype.newbyteorder("<") if arr.dtype.byteorder != "|" else arr.dtype)
            if code is None:
                raise TypeError(f"key '{key}': numpy dtype {arr.dtype} has no weir array dtype")
            if arr.ndim not in (1, 2):
                raise ValueError(f"key '{key}': arrays are rank 1 or 2, not {arr.ndim}")
            dims = (ctypes.c_uint32 * 2)(arr.shape[0], arr.shape[1] if arr.ndim == 2 else 0)
            _lib.check(lib.weir_set_array(h, k, code, arr.ndim, dims, arr.ctypes.data, arr.nbytes))
            return
        if type == "f64":
            data = np.float64(value).tobytes()
        elif type == "i64":
            data = np.int64(value).tobytes()
        elif type == "u64":
            data = np.uint64(value).tobytes()
        elif type == "text":
            data = str(value).encode("utf-8")
        elif type == "bytes":
            data = bytes(value)
        else:
            raise ValueError(f"key '{key}': type must be f64, i64, u64, text, bytes or array, not {type!r}")
        code = {"bytes": _lib.VALUE_BYTES, "text": _lib.VALUE_TEXT, "i64": _lib.VALUE_I64, "u64": _lib.VALUE_U64,
                "f64": _lib.VALUE_F64}[type]
        _lib.check(lib.weir_set(h, k, code, data, len(data)))

    # ---- watching ----
    def watcher(self, keys=(), labels=(), channels=()):
        """A watcher subscribed to keys, labels and channels; wait() sleeps until one of them changes."""
        return Watcher(self, keys, labels, channels)

    def wait_change(self, key, since=None, timeout=None):
        """Waits until `key` is written after version `since` (default: its version now); returns the
        new value, or raises TimeoutError after `timeout` s. Ctrl-C raises KeyboardInterrupt."""
        with Watcher(self, keys=[key]) as w:
            return w.wait_key(key, since, timeout)

    def watch(self, *keys, timeout=None):
        """Yields (key, value) each time one of `keys` is written; ends after `timeout` s without a
        write (None: never). No polling: sleeps on the keys' signal groups."""
        with Watcher(self, keys=keys) as w:
            versions = {k: self._version(k) for k in keys}
            while True:
                if not w.wait(timeout):
                    return
                for k in keys:
                    v = self._version(k)
                    if v != versions[k]:
                        versions[k] = v
                        yield k, self.get(k)

    def _version(self, key):
        vi = _lib.ValueInfo()
        return vi.version if lib.weir_key_info(self._handle(), _lib.encode(key), ctypes.byref(vi)) == _lib.OK else 0

    # ---- vectors ----
    def vector_search(self, query, k=10, metric="cosine"):
        """Top-k keys by similarity of their float32 vectors to query: [(key, score)], best first."""
        q = np.ascontiguousarray(query, dtype=np.float32)
        hits = (_lib.VectorHit * max(1, k))()
        count = ctypes.c_uint32()
        _lib.check(lib.weir_vector_search(self._handle(), q.ctypes.data, q.size, _lib.METRICS[metric], hits, k,
                                          ctypes.byref(count)))
        return self._hit_keys(hits, count.value)

    def _hit_keys(self, hits, count):
        # [(key, score)] of the first count hits; a hit whose key was deleted since is left out.
        out = []
        buf = ctypes.create_string_buffer(self.info["key_bytes"] + 1)
        for i in range(count):
            if lib.weir_vector_hit_key(self._handle(), ctypes.byref(hits[i]), buf, len(buf)) == _lib.OK:
                out.append((buf.value.decode("utf-8", "replace"), float(hits[i].score)))
        return out

    def vectors(self, part):
        """The vector partition `part` (a label its keys carry): search(query= or like=, k=10) asks its
        `weir ann` service; search(..., exact=True) scores every vector in place."""
        return Vectors(self, part)

    def vector(self, key):
        """A key's float32 vector."""
        dim = ctypes.c_uint32()
        _lib.check(lib.weir_vector_dim(self._handle(), ctypes.byref(dim)))
        out = np.empty(dim.value, dtype=np.float32)
        _lib.check(lib.weir_vector_get(self._handle(), _lib.encode(key), out.ctypes.data, dim.value))
        return out

    def set_vector(self, key, v, part=None):
        """Stores key's float32 vector; part: first give the key that partition's label (once is enough),
        so the partition's ann service indexes it."""
        if part is not None:
            self.set_labels(key, [part])
        v = np.ascontiguousarray(v, dtype=np.float32)
        _lib.check(lib.weir_vector_set(self._handle(), _lib.encode(key), v.ctypes.data, v.size))

    def set_labels(self, key, labels):
        """Gives key (created empty if missing) these labels: its writes then pulse their signal groups."""
        names = [_lib.encode(label) for label in labels]
        array = (ctypes.c_char_p * max(1, len(names)))(*names)
        _lib.check(lib.weir_set_labels(self._handle(), _lib.encode(key), array, len(names)))


class Watcher(Closing):
    """Sleeps on signal groups (keys, labels, channels) until one pulses. Close it, or use `with`."""

    def __init__(self, arena, keys=(), labels=(), channels=()):
        self._arena = arena
        handle = ctypes.c_void_p()
        _lib.check(lib.weir_watcher_open(arena._handle(), ctypes.byref(handle)))
        self._watcher = handle
        try:
            for k in keys:
                _lib.check(lib.weir_watcher_add_key(handle, _lib.encode(k)))
            for label in labels:
                _lib.check(lib.weir_watcher_add_label(handle, _lib.encode(label)))
            for c in channels:
                _lib.check(lib.weir_watcher_add_channel(handle, _lib.encode(c)))
        except BaseException:
            self.close()
            raise

    def _handle(self):
        if not self._watcher:
            raise ValueError("watcher is closed")
        return self._watcher

    def wait(self, timeout=None):
        """True when a subscribed group pulsed, False after `timeout` s (None: wait forever)."""
        deadline = _deadline(timeout)
        while True:
            status = _lib.check(lib.weir_watcher_wait(self._handle(), _slice_ns(deadline)))
            if status == _lib.OK:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def wait_key(self, key, since=None, timeout=None):
        """The value of `key` once its version differs from `since` (default: now); TimeoutError after
        `timeout` s."""
        k = _lib.encode(key)
        if since is None:
            since = self._arena._version(key)
        deadline = _deadline(timeout)
        vi = _lib.ValueInfo()
        while True:
            status = _lib.check(lib.weir_watcher_wait_key(self._handle(), k, since, _slice_ns(deadline),
                                                          ctypes.byref(vi)))
            if status == _lib.OK:
                return self._arena.get(key)
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"key '{key}' in arena '{self._arena.name}': no write within {timeout} s")

    def close(self):
        if self._watcher:
            lib.weir_watcher_close(self._watcher)
            self._watcher = None


def _info_dict(vi):
    d = {"type": _lib.VALUE_TYPE_NAMES.get(vi.type, str(vi.type)), "length": vi.length, "version": vi.version}
    if vi.type == _lib.VALUE_ARRAY:
        d["dtype"] = _lib.DTYPE_NAMES.get(vi.elem_dtype, "?")
        d["shape"] = (vi.dims[0],) if vi.rank == 1 else (vi.dims[0], vi.dims[1])
    return d


def _decode(raw, vi):
    t = vi.type
    if t == _lib.VALUE_F64:
        return float(np.frombuffer(raw, dtype="<f8")[0])
    if t == _lib.VALUE_I64:
        return int(np.frombuffer(raw, dtype="<i8")[0])
    if t == _lib.VALUE_U64:
        return int(np.frombuffer(raw, dtype="<u8")[0])
    if t == _lib.VALUE_TEXT:
        return raw.decode("utf-8", "replace")
    if t == _lib.VALUE_ARRAY:
        shape = (vi.dims[0],) if vi.rank == 1 else (vi.dims[0], vi.dims[1])
        return np.frombuffer(raw, dtype=_lib.DTYPES[vi.elem_dtype]).reshape(shape).copy()
    if t == _lib.VALUE_VECTOR:
        return np.frombuffer(raw, dtype="<f4").copy()
    if t == _lib.VALUE_NONE:
        return None
    return raw


def _infer_type(value):
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, (bool, np.bool_)):
        return "i64"
    if isinstance(value, np.floating):
        return "f64"
    if isinstance(value, np.unsignedinteger):
        return "u64"
    if isinstance(value, np.integer):
        return "i64"
    if isinstance(value, float):
        return "f64"
    if isinstance(value, int):
        return "i64" if -(1 << 63) <= value < (1 << 63) else "u64"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "bytes"
    if isinstance(value, (list, tuple)):
        raise TypeError("a list is stored as an array: pass numpy.asarray(value, dtype=...)")
    raise TypeError(f"no weir value type for {type(value).__name__}")
