"""Channels: copies of blocks as numpy arrays with their metadata, followers, envelopes."""
import ctypes
import time

import numpy as np

from . import _lib
from ._lib import Closing, lib

BLOCK_META_DTYPE = np.dtype([("sequence", "<u8"), ("offset_bytes", "<u8"), ("realtime_ns", "<u8"),
                             ("monotonic_ns", "<u8"), ("first_sample", "<u8"), ("samples", "<u4"),
                             ("flags", "<u4"), ("state", "<u4"), ("reserved", "<u4")])
assert BLOCK_META_DTYPE.itemsize == ctypes.sizeof(_lib.BlockMeta)
_U8 = np.dtype(np.uint8)
_addressof = ctypes.addressof
_char_at = ctypes.c_char.from_buffer
_U64 = ctypes.c_uint64
_channel_read = lib.weir_channel_read


def _address(arr):
    """Address of a writable, contiguous, non-empty numpy array.

    A ctypes object over the array's buffer costs ~0.15 us; arr.ctypes.data ~0.5 us and
    arr.__array_interface__ ~0.6 us (~4 us for a structured dtype, which builds its descr list)."""
    return _addressof(_char_at(arr))


def _deadline(timeout):
    return None if timeout is None else time.monotonic() + max(0.0, timeout)


def _slice_ns(deadline):
    """The next C wait: at most WAIT_SLICE_S, so Python sees Ctrl-C between two; 0 when past the deadline."""
    if deadline is None:
        return int(_lib.WAIT_SLICE_S * 1e9)
    left = deadline - time.monotonic()
    return max(0, int(min(left, _lib.WAIT_SLICE_S) * 1e9))


class _Described:
    """Units, rate, labels, dtype and frame axis of the channel a result came from (read from the
    channel when asked, so making a result costs one attribute)."""

    def _describe(self, channel):
        self._source = channel

    channel = property(lambda self: self._source.name, doc="the channel's name")
    units = property(lambda self: self._source.units)
    rate = property(lambda self: self._source.rate)
    labels = property(lambda self: self._source.labels)
    axis = property(lambda self: self._source.axis)
    dtype = property(lambda self: self._source.dtype)


class Block(_Described):
    """One block: `data` (numpy, a copy unless it came from a view) and its metadata.

    data is 1-D (samples), or 2-D (frames x elements) for a frame channel. `lost` counts the blocks
    lost just before this one (lapped by the writer, or overwritten while copied)."""

    def __init__(self, channel, data, meta, lost=0):
        self._describe(channel)
        self.data = data
        self.sequence = int(meta.sequence)
        self.realtime_ns = int(meta.realtime_ns)
        self.monotonic_ns = int(meta.monotonic_ns)
        self.first_sample = int(meta.first_sample)
        self.samples = int(meta.samples)
        self.flags = int(meta.flags)
        self.lost = int(lost)

    @property
    def time(self):
        """Seconds since the epoch of the block's first sample."""
        return self.realtime_ns * 1e-9

    def times(self):
        """Seconds since the epoch of each sample (or frame), from the block's stamp and the rate."""
        n = self.data.shape[0]
        step = (self.axis["frame_elements"] if self.axis else 1) / self.rate if self.rate else 0.0
        return self.time + step * np.arange(n)

    def __repr__(self):
        return (f"<weir.Block {self.channel} seq={self.sequence} samples={self.samples} {self.data.dtype}"
                f"{list(self.data.shape)} lost={self.lost}>")


class Blocks(_Described):
    """Consecutive blocks copied out of a channel's ring, without registering.

    data: the copied blocks' samples back to back (1-D; frames x elements for a frame channel).
    meta: one record per block asked for (numpy structured array: sequence, realtime_ns,
    monotonic_ns, first_sample, samples, flags, state), including those not copied; `state` is 0
    for a copied block, 1 overwritten (the writer lapped it), 2 not written yet. `lost` counts the
    overwritten ones."""

    def __init__(self, channel, data, records, visited):
        self._source = channel
        self.data = data
        self._records = records  # ctypes BlockMeta (one) or array of them, `visited` filled in
        self._visited = visited
        self._meta = None

    @property
    def meta(self):
        if self._meta is None:
            self._meta = np.frombuffer(self._records, dtype=BLOCK_META_DTYPE, count=self._visited)
        return self._meta

    @property
    def sequences(self):
        """Sequences of the copied blocks."""
        return self.meta["sequence"][self.meta["state"] == 0]

    @property
    def lost(self):
        """Blocks asked for that the writer had overwritten."""
        return int(np.count_nonzero(self.meta["state"] == 1))

    @property
    def unwritten(self):
        """Blocks asked for that were not published yet."""
        return int(np.count_nonzero(self.meta["state"] == 2))

    def __len__(self):
        return int(np.count_nonzero(self.meta["state"] == 0))

    def __repr__(self):
        return (f"<weir.Blocks {self.channel} blocks={len(self)} lost={self.lost} {self.data.dtype}"
                f"{list(self.data.shape)}>")


class Envelope(_Described):
    """Min/max of a span of samples in `columns` buckets (what a scope draws); NaN where unknown."""

    def __init__(self, channel, first_sample, count, mins, maxs):
        self._describe(channel)
        self.first_sample = first_sample
        self.count = count
        self.mins = mins
        self.maxs = maxs


class Channel:
    """A channel of an attached arena, as `weir ls` shows it."""

    def __init__(self, arena, info):
        self._arena = arena
        self._set_info(info)

    def _set_info(self, info):
        self.index = info.index
        self.name = info.name.decode()
        self.units = info.units.decode()
        self.rate = info.rate_hz
        self.dtype = np.dtype(_lib.DTYPES[info.dtype])
        self.dtype_name = _lib.DTYPE_NAMES[info.dtype]
        self.block_size = info.samples_per_block
        self.block_bytes = info.samples_per_block * info.sample_bytes
        self.ring_blocks = info.ring_blocks
        self.labels = tuple(self._arena._label(i) for i in range(64) if info.label_ids >> i & 1)
        self.frames_per_block = info.frames_per_block
        self.frame_elements = info.frame_elements
        self.axis = None
        if info.frames_per_block:
            self.axis = {"name": info.axis_name.decode(), "units": info.axis_units.decode(),
                         "start": info.axis_start, "step": info.axis_step,
                         "values_key": info.axis_values_key.decode() or None,
                         "frame_elements": info.frame_elements}
        self.writer_pid = info.writer_pid if info.writer_alive else None
        self.samples_written = info.samples_written
        self.dropped_at_source = info.dropped_at_source
        self.consumers = info.consumers
        self._head = info.head
        self._out = (None, None, 0)  # the last `out` of read(): that array, its typed view, its address

    def refresh(self):
        """Re-reads the channel's counters (samples written, writer, consumers)."""
        info = _lib.ChannelInfo()
        _lib.check(lib.weir_channel_find(self._arena._handle(), _lib.encode(self.name), ctypes.byref(info)))
        self._set_info(info)
        return self

    @property
    def head(self):
        """Blocks published so far: the next block's sequence."""
        head = ctypes.c_uint64()
        _lib.check(lib.weir_channel_head(self._arena._handle(), self.index, ctypes.byref(head)))
        return head.value

    def axis_values(self):
        """The frame axis as a numpy array (explicit values key, else start + i * step); None for samples."""
        if not self.axis:
            return None
        if self.axis["values_key"]:
            try:
                return np.asarray(self._arena[self.axis["values_key"]], dtype=np.float64)
            except KeyError:
                pass
        return self.axis["start"] + self.axis["step"] * np.arange(self.frame_elements)

    def _shape(self, flat):
        if self.frames_per_block:
            return flat.reshape(-1, self.frame_elements)
        return flat

    def read(self, n_blocks=1, start=None, out=None):
        """Copies `n_blocks` blocks, the newest published ones unless `start` (a sequence) says where.

        Each block is validated against its state word: one the writer reuses while it is copied is
        reported (meta state 1, counted in `lost`), never handed out torn. `out` (a writable contiguous
        array of any dtype, at least n_blocks * block_bytes long in bytes) saves the allocation: the
        samples are copied straight into it and `data` is a view of it. Never holds the writer back."""
        if n_blocks < 1:
            raise ValueError("read: n_blocks must be at least 1")
        if start is None:
            start = max(0, self.head - n_blocks)
        need = n_blocks * self.block_bytes
        if out is None:
            buf = np.empty(need // self.dtype.itemsize, dtype=self.dtype)  # the result itself: no view to make
            address = _address(buf)
        else:
            cached, buf, address = self._out
            if out is not cached or not out.flags.writeable:  # a new buffer: checked, viewed and located once
                buf, address = self._typed_out(out, need)
            if buf.nbytes < need:
                raise ValueError(f"read: out must be a writable contiguous buffer of at least {need} bytes")
        metas = _lib.BlockMeta() if n_blocks == 1 else (_lib.BlockMeta * n_blocks)()
        visited = _U64()
        status = _channel_read(self._arena._arena or self._arena._handle(), self.index, start, n_blocks, address,
                               need, _addressof(metas), visited)
        if status < 0:
            raise _lib.error(status, f"channel '{self.name}'")
        n = visited.value
        last = (metas if n_blocks == 1 else metas[n - 1]) if n else None
        if last is not None and last.state == 0:  # copied: the samples end after the last one, no numpy
            nbytes = last.offset_bytes + last.samples * self.dtype.itemsize
        elif n_blocks == 1:
            nbytes = 0
        else:
            records = np.frombuffer(metas, dtype=BLOCK_META_DTYPE, count=n)
            states = records["state"]
            samples = records["samples"]
            if states.any():
                samples = samples[states == 0]
            nbytes = int(samples.sum()) * self.dtype.itemsize
        if nbytes != buf.nbytes:
            buf = buf[:nbytes // self.dtype.itemsize]
        return Blocks(self, buf.reshape(-1, self.frame_elements) if self.frames_per_block else buf, metas, n)

    def _typed_out(self, out, need):
        """`out` as a flat array of the channel's dtype (a view of whole samples) and its address; the
        channel remembers them for the next read into the same array."""
        if not isinstance(out, np.ndarray) or out.nbytes < need or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"read: out must be a writable contiguous buffer of at least {need} bytes")
        size = self.dtype.itemsize
        typed = out.reshape(-1).view(_U8)[:out.nbytes // size * size].view(self.dtype)
        address = _address(typed)
        self._out = (out, typed, address)
        return typed, address

    def latest(self, timeout=1.0):
        """The newest published block, copied; waits up to `timeout` s for a first one (None if none)."""
        deadline = _deadline(timeout)
        buf = np.empty(self.block_bytes, dtype=_U8)
        m = _lib.BlockMeta()
        visited = ctypes.c_uint64()
        while True:
            head = self.head
            if head > 0:
                _lib.check(lib.weir_channel_read(self._arena._handle(), self.index, head - 1, 1, _address(buf),
                                                 buf.nbytes, _addressof(m), ctypes.byref(visited)))
                if visited.value == 1 and m.state == 0:
                    data = buf[:m.samples * self.dtype.itemsize].view(self.dtype)
                    return Block(self, self._shape(data), m)
                continue  # overwritten while copied: the next one is newer
            if deadline is not None and time.monotonic() >= deadline:
                return None
            with self.follow(policy="latest", start="newest") as f:
                block = f.next(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
                return block

    def follow(self, policy="lossy", timeout=None, start="next", view=False, name="python"):
        """A registered consumer of the channel (shown by `weir ls`), iterable over its blocks.

        policy: "lossy" (lapped blocks are counted lost), "lossless" (the writer waits for us) or
        "latest" (only the newest block). start: "next" (blocks published from now on), "newest"
        (from the last published one), "oldest" (the oldest still in the ring) or a sequence number.
        Iteration ends when no block arrives for `timeout` seconds (None: never). view=True yields
        read-only views in place instead of copies (see BlockView)."""
        return Follower(self, policy, timeout, start, view, name)

    def envelope(self, span=None, columns=1000, first=None):
        """Min/max of `span` samples (default: the ring's worth) ending at the newest sample, or from
        sample `first`, in `columns` buckets, from the channel's pyramid."""
        written = self.refresh().samples_written
        if span is None:
            span = self.block_size * self.ring_blocks
        if first is None:
            first = max(0, written - span)
        mins = np.empty(columns, dtype=np.float32)
        maxs = np.empty(columns, dtype=np.float32)
        _lib.check(lib.weir_channel_envelope(self._arena._handle(), self.index, first, span, mins.ctypes.data,
                                             maxs.ctypes.data, columns))
        return Envelope(self, first, span, mins, maxs)

    def __repr__(self):
        return (f"<weir.Channel {self.name} {self.dtype_name} {self.rate:g} Hz block={self.block_size} "
                f"units={self.units!r} labels={list(self.labels)}>")


class BlockView(Block):
    """A block in place: `data` is a read-only numpy view into the arena, no copy.

    The writer never waits for it: the samples may change under you at any time. Use them, then call
    still_valid(); False means the slot was reused and what you read must be discarded. The view is
    released (marked read) when the follower moves to the next block, or by release()."""

    def __init__(self, follower, channel, raw, lost):
        buf = (ctypes.c_char * raw.bytes).from_address(raw.data) if raw.bytes else (ctypes.c_char * 0)()
        buf._owner = follower  # the follower keeps the arena mapped while the array lives
        data = np.frombuffer(buf, dtype=channel.dtype)
        data.flags.writeable = False
        super().__init__(channel, channel._shape(data), raw.meta, lost)
        self._raw = raw
        self._follower = follower
        self.released = False

    def still_valid(self):
        """True while the block's slot still holds this block (the samples read so far are good)."""
        return bool(lib.weir_block_view_valid(ctypes.byref(self._raw)))

    def release(self):
        """Marks the block read; returns whether it stayed valid until now."""
        if self.released:
            return self.still_valid()
        self.released = True
        valid = ctypes.c_int()
        _lib.check(lib.weir_reader_release(self._follower._handle(), ctypes.byref(self._raw), ctypes.byref(valid)))
        return bool(valid.value)


class Follower(Closing):
    """A registered consumer of one channel; iterate it, or call next(). Close it (or use `with`)."""

    def __init__(self, channel, policy, timeout, start, view, name):
        if policy not in _lib.POLICIES:
            raise ValueError(f"follow: policy must be one of {sorted(_lib.POLICIES)}, not {policy!r}")
        self.channel = channel
        self.policy = policy
        self.timeout = timeout
        self.view = view
        self.lost = 0  # blocks lost since the follower started
        self._arena = channel._arena
        sequence = 0
        if start == "next":
            start_code, sequence = _lib.STARTS["sequence"], channel.head
        elif isinstance(start, int):
            start_code, sequence = _lib.STARTS["sequence"], start
        elif start in _lib.STARTS:
            start_code = _lib.STARTS[start]
        else:
            raise ValueError(f"follow: start must be 'next', 'newest', 'oldest' or a sequence, not {start!r}")
        handle = ctypes.c_void_p()
        _lib.check(lib.weir_reader_open(self._arena._handle(), _lib.encode(channel.name), _lib.POLICIES[policy],
                                        start_code, sequence, _lib.encode(name), ctypes.byref(handle)))
        self._reader = handle
        self._buf = None
        self._meta = _lib.BlockMeta()
        self._lost = ctypes.c_uint64()
        self._current = None
        self._pending_lost = 0  # lost since the last block handed out

    def _handle(self):
        if not self._reader:
            raise ValueError(f"follower of channel '{self.channel.name}' is closed")
        return self._reader

    def next(self, timeout=None):
        """The next block (a copy, or a BlockView with view=True), or None after `timeout` s without one
        (None: wait forever). Ctrl-C raises KeyboardInterrupt within a fraction of a second."""
        handle = self._handle()
        if self._current is not None:
            self._current.release()
            self._current = None
        deadline = _deadline(timeout)
        while True:
            wait_ns = _slice_ns(deadline)
            if self.view:
                raw = _lib.BlockView()
                status = lib.weir_reader_view(handle, ctypes.byref(raw), ctypes.byref(self._lost), wait_ns)
            else:
                buf = np.empty(self.channel.block_size, dtype=self.channel.dtype)
                status = lib.weir_reader_next(handle, _address(buf), buf.nbytes, ctypes.byref(self._meta),
                                              ctypes.byref(self._lost), wait_ns)
            _lib.check(status, f"channel '{self.channel.name}'")
            lost = self._lost.value
            self.lost += lost
            self._pending_lost += lost
            if status == _lib.OK:
                lost, self._pending_lost = self._pending_lost, 0
                if self.view:
                    self._current = BlockView(self, self.channel, raw, lost)
                    return self._current
                data = buf if self._meta.samples == buf.size else buf[:self._meta.samples]
                return Block(self.channel, self.channel._shape(data), self._meta, lost)
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def __iter__(self):
        while True:
            block = self.next(self.timeout)
            if block is None:
                return
            yield block

    def stats(self):
        """cursor, head, blocks_read, samples_read and blocks_lost of this consumer's row."""
        s = _lib.ReaderStats()
        _lib.check(lib.weir_reader_get_stats(self._handle(), ctypes.byref(s)))
        return {name: getattr(s, name) for name, _ in s._fields_}

    def close(self):
        if self._reader:
            if self._current is not None and not self._current.released:
                self._current.release()
            lib.weir_reader_close(self._reader)
            self._reader = None

