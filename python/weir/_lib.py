"""ctypes bindings of libweir (capi/include/weir/weir_c.h): structs, prototypes, errors.

Loads libweir.so.1 from next to this file (the build tree), from the path recorded at install
(_install.py), from $WEIR_LIBRARY, or through the system loader, in that order.
"""
import ctypes
import os
from pathlib import Path

SONAME = "libweir.so.1"
ABI_VERSION = 1
WAIT_SLICE_S = 0.05  # longest C wait between two chances for Python to see Ctrl-C

# weir_status
OK, TIMEOUT, EMPTY, INTERRUPTED = 0, 1, 2, 3
E_INVALID, E_NOT_FOUND, E_PERMISSION, E_LAYOUT, E_NOT_READY = -1, -2, -3, -4, -5
E_TOO_SMALL, E_TYPE, E_BUSY, E_TORN, E_FULL = -6, -7, -8, -9, -10
E_TOO_LARGE, E_UNSUPPORTED, E_SYSTEM, E_INTERNAL = -11, -12, -13, -14

# weir_value_type
VALUE_NONE, VALUE_BYTES, VALUE_TEXT, VALUE_I64, VALUE_U64, VALUE_F64, VALUE_VECTOR, VALUE_ARRAY = range(8)
VALUE_TYPE_NAMES = {VALUE_NONE: "none", VALUE_BYTES: "bytes", VALUE_TEXT: "text", VALUE_I64: "i64",
                    VALUE_U64: "u64", VALUE_F64: "f64", VALUE_VECTOR: "vector", VALUE_ARRAY: "array"}

# weir_dtype -> numpy dtype text, and back
DTYPES = {1: "i1", 2: "u1", 3: "<i2", 4: "<u2", 5: "<i4", 6: "<u4", 7: "<i8", 8: "<f4", 9: "<f8", 10: "<c8"}
DTYPE_NAMES = {1: "i8", 2: "u8", 3: "i16", 4: "u16", 5: "i32", 6: "u32", 7: "i64", 8: "f32", 9: "f64", 10: "c64"}

POLICIES = {"lossy": 0, "lossless": 1, "latest": 2}
STARTS = {"oldest": 0, "newest": 1, "sequence": 2}
METRICS = {"cosine": 0, "dot": 1, "l2": 2}
ANN_MAX_HITS = 100  # WEIR_ANN_MAX_HITS
BLOCK_STATES = {0: "ok", 1: "overwritten", 2: "unwritten"}
ATTACH_READ_ONLY = 1
BLOCK_GAP_FLAG = 0x80000000


class Closing:
    """A handle closed by close(), by a with-block, or when collected."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class WeirError(Exception):
    """A libweir call failed; `status` is its weir_status, the text names the arena, channel or key."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class NotFoundError(WeirError, LookupError):
    """No such arena, channel, key or label."""


class PermissionDenied(WeirError, PermissionError):
    """Another user's arena, or a read-only attach asked to write or register."""


class InvalidArenaError(WeirError, ValueError):
    """A foreign, truncated, corrupted, newer-version or unfinished arena."""


class WeirTypeError(WeirError, TypeError):
    """The key holds a value of another type."""


class WeirValueError(WeirError, ValueError):
    """A bad argument, a buffer too small, or a value too large for the arena."""


class BusyError(WeirError):
    """A writer held the slot past the bounded wait; try again."""


class TornError(WeirError):
    """A writer died mid-write: the value is not trustworthy until rewritten."""


class FullError(WeirError):
    """No free key slot, consumer row, watcher row or signal group."""


class UnsupportedError(WeirError):
    """The arena (or this CPU) lacks the feature, e.g. vectors."""


class SystemFailure(WeirError, OSError):
    """A system call failed inside libweir."""


_ERRORS = {E_INVALID: WeirValueError, E_NOT_FOUND: NotFoundError, E_PERMISSION: PermissionDenied,
           E_LAYOUT: InvalidArenaError, E_NOT_READY: InvalidArenaError, E_TOO_SMALL: WeirValueError,
           E_TYPE: WeirTypeError, E_BUSY: BusyError, E_TORN: TornError, E_FULL: FullError,
           E_TOO_LARGE: WeirValueError, E_UNSUPPORTED: UnsupportedError, E_SYSTEM: SystemFailure,
           E_INTERNAL: WeirError}


class ArenaInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64), ("bytes", ctypes.c_uint64), ("created_ns", ctypes.c_uint64),
                ("channel_data_bytes", ctypes.c_uint64), ("layout_version", ctypes.c_uint32),
                ("creator_pid", ctypes.c_uint32), ("slot_count", ctypes.c_uint32), ("key_bytes", ctypes.c_uint32),
                ("value_bytes", ctypes.c_uint32), ("channel_capacity", ctypes.c_uint32),
                ("consumer_capacity", ctypes.c_uint32), ("vector_dim", ctypes.c_uint32),
                ("read_only", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


class ChannelInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 64), ("units", ctypes.c_char * 32), ("axis_name", ctypes.c_char * 32),
                ("axis_units", ctypes.c_char * 32), ("axis_values_key", ctypes.c_char * 64),
                ("rate_hz", ctypes.c_double), ("axis_start", ctypes.c_double), ("axis_step", ctypes.c_double),
                ("head", ctypes.c_uint64), ("samples_written", ctypes.c_uint64),
                ("dropped_at_source", ctypes.c_uint64), ("label_ids", ctypes.c_uint64),
                ("index", ctypes.c_uint32), ("dtype", ctypes.c_uint32), ("sample_bytes", ctypes.c_uint32),
                ("samples_per_block", ctypes.c_uint32), ("ring_blocks", ctypes.c_uint32),
                ("frames_per_block", ctypes.c_uint32), ("frame_elements", ctypes.c_uint32),
                ("writer_pid", ctypes.c_uint32), ("writer_alive", ctypes.c_uint32), ("consumers", ctypes.c_uint32)]


class BlockMeta(ctypes.Structure):
    _fields_ = [("sequence", ctypes.c_uint64), ("offset_bytes", ctypes.c_uint64), ("realtime_ns", ctypes.c_uint64),
                ("monotonic_ns", ctypes.c_uint64), ("first_sample", ctypes.c_uint64), ("samples", ctypes.c_uint32),
                ("flags", ctypes.c_uint32), ("state", ctypes.c_uint32), ("reserved", ctypes.c_uint32)]


class BlockView(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("bytes", ctypes.c_uint64), ("meta", BlockMeta),
                ("token", ctypes.c_void_p), ("token_expected", ctypes.c_uint64)]


class ReaderStats(ctypes.Structure):
    _fields_ = [("cursor", ctypes.c_uint64), ("head", ctypes.c_uint64), ("blocks_read", ctypes.c_uint64),
                ("samples_read", ctypes.c_uint64), ("blocks_lost", ctypes.c_uint64)]


class ValueInfo(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint64), ("type", ctypes.c_uint32), ("length", ctypes.c_uint32),
                ("elem_dtype", ctypes.c_uint32), ("rank", ctypes.c_uint32), ("dims", ctypes.c_uint32 * 2)]


class VectorHit(ctypes.Structure):
    _fields_ = [("score", ctypes.c_float), ("slot", ctypes.c_uint32), ("generation", ctypes.c_uint32)]


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_U32, _U64, _I64, _SZ = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64, ctypes.c_size_t
_PROTOTYPES = {
    "weir_attach": [_S, _U32, ctypes.POINTER(_P)],
    "weir_detach": [_P],
    "weir_arena_get_info": [_P, ctypes.POINTER(ArenaInfo)],
    "weir_label_name": [_P, _U32, _P, _SZ],
    "weir_channel_list": [_P, _P, _U32, ctypes.POINTER(_U32)],
    "weir_channel_find": [_P, _S, ctypes.POINTER(ChannelInfo)],
    "weir_channel_head": [_P, _U32, ctypes.POINTER(_U64)],
    "weir_channel_read": [_P, _U32, _U64, _U64, _P, _SZ, _P, ctypes.POINTER(_U64)],
    "weir_channel_envelope": [_P, _U32, _U64, _U64, _P, _P, _SZ],
    "weir_reader_open": [_P, _S, _U32, _U32, _U64, _S, ctypes.POINTER(_P)],
    "weir_reader_close": [_P],
    "weir_reader_next": [_P, _P, _SZ, ctypes.POINTER(BlockMeta), ctypes.POINTER(_U64), _I64],
    "weir_reader_view": [_P, ctypes.POINTER(BlockView), ctypes.POINTER(_U64), _I64],
    "weir_reader_release": [_P, ctypes.POINTER(BlockView), ctypes.POINTER(ctypes.c_int)],
    "weir_reader_get_stats": [_P, ctypes.POINTER(ReaderStats)],
    "weir_reader_interrupt": [_P],
    "weir_key_list": [_P, _P, _SZ, ctypes.POINTER(_SZ), ctypes.POINTER(_U32)],
    "weir_key_info": [_P, _S, ctypes.POINTER(ValueInfo)],
    "weir_get": [_P, _S, _P, _SZ, ctypes.POINTER(ValueInfo)],
    "weir_set": [_P, _S, _U32, _P, _SZ],
    "weir_set_array": [_P, _S, _U32, _U32, ctypes.POINTER(_U32), _P, _SZ],
    "weir_del": [_P, _S],
    "weir_watcher_open": [_P, ctypes.POINTER(_P)],
    "weir_watcher_close": [_P],
    "weir_watcher_add_key": [_P, _S],
    "weir_watcher_add_label": [_P, _S],
    "weir_watcher_add_channel": [_P, _S],
    "weir_watcher_wait": [_P, _I64],
    "weir_watcher_wait_key": [_P, _S, _U64, _I64, ctypes.POINTER(ValueInfo)],
    "weir_watcher_interrupt": [_P],
    "weir_vector_dim": [_P, ctypes.POINTER(_U32)],
    "weir_set_labels": [_P, _S, ctypes.POINTER(_S), _U32],
    "weir_vector_set": [_P, _S, _P, _U32],
    "weir_vector_get": [_P, _S, _P, _U32],
    "weir_vector_search": [_P, _P, _U32, _U32, _P, _U32, ctypes.POINTER(_U32)],
    "weir_vector_hit_key": [_P, ctypes.POINTER(VectorHit), _P, _SZ],
    "weir_ann_open": [_P, _S, ctypes.POINTER(_P)],
    "weir_ann_close": [_P],
    "weir_ann_search": [_P, _P, _U32, _U32, _U32, _I64, _P, ctypes.POINTER(_U32)],
    "weir_ann_search_like": [_P, _S, _U32, _U32, _I64, _P, ctypes.POINTER(_U32)],
    "weir_ann_exact_search": [_P, _S, _P, _U32, _U32, _P, ctypes.POINTER(_U32)],
}


def _candidates():
    env = os.environ.get("WEIR_LIBRARY")
    if env:
        yield env
    here = Path(__file__).resolve().parent
    yield str(Path(__file__).parent / SONAME)
    yield str(here / SONAME)
    try:
        from . import _install  # written by `cmake --install`
        yield _install.LIBRARY
    except ImportError:
        pass
    yield SONAME  # the system loader's search path


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            tried.append(f"{path} ({e})")
    else:
        raise ImportError("weir: cannot load libweir (tried " + ", ".join(tried) + "); build it (cmake --build build "
                          "--target weir_python) or set WEIR_LIBRARY")
    lib.weir_abi_version.restype = ctypes.c_uint32
    lib.weir_abi_version.argtypes = []
    if lib.weir_abi_version() != ABI_VERSION:
        raise ImportError(f"weir: {path} has C ABI {lib.weir_abi_version()}, this package needs {ABI_VERSION}")
    lib.weir_last_error.restype = ctypes.c_char_p
    lib.weir_last_error.argtypes = []
    lib.weir_block_view_valid.restype = ctypes.c_int
    lib.weir_block_view_valid.argtypes = [ctypes.POINTER(BlockView)]
    for name in ("weir_dtype_name", "weir_status_name"):
        getattr(lib, name).restype = ctypes.c_char_p
        getattr(lib, name).argtypes = [ctypes.c_int]
    for name, args in _PROTOTYPES.items():
        f = getattr(lib, name)
        f.restype = ctypes.c_int
        f.argtypes = args
    return lib, path


lib, library_path = _load()


def error(status, context=None):
    """The exception for a failed call, with libweir's message for this thread."""
    text = lib.weir_last_error().decode("utf-8", "replace")
    if context and context not in text:
        text = f"{context}: {text}" if text else context
    return _ERRORS.get(status, WeirError)(status, text or lib.weir_status_name(status).decode())


def check(status, context=None):
    """Raises for status < 0; returns status (OK, TIMEOUT, EMPTY, INTERRUPTED) otherwise."""
    if status < 0:
        raise error(status, context)
    return status


def encode(name):
    if isinstance(name, bytes):
        return name
    return str(name).encode("utf-8")
