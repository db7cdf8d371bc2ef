"""Keys of every type round-trip between the weir CLI and Python; watching wakes on a write."""
import json
import subprocess
import sys
import threading

import numpy as np
import pytest

import weir
from conftest import WEIR, run_weir

SCALARS = [  # (CLI --type, CLI text, Python value)
    ("f64", "2.5", 2.5),
    ("f64", "-1e-300", -1e-300),
    ("i64", "-9223372036854775808", -(1 << 63)),
    ("i64", "42", 42),
    ("u64", "18446744073709551615", (1 << 64) - 1),
    ("text", "héllo wörld", "héllo wörld"),
]
ARRAY_DTYPES = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "f32", "f64", "c64"]
NUMPY = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16, "i32": np.int32, "u32": np.uint32,
         "i64": np.int64, "f32": np.float32, "f64": np.float64, "c64": np.complex64}


@pytest.mark.parametrize("type_name,text,value", SCALARS)
def test_scalars_and_text_set_by_the_cli_read_back_in_python_and_back(arena_name, type_name, text, value):
    run_weir("set", arena_name, "k", text, "--type", type_name)
    arena = weir.Arena(arena_name)
    assert arena["k"] == value and type(arena["k"]) is type(value)
    assert arena.key_info("k")["type"] == type_name
    arena["p"] = value
    out = json.loads(run_weir("get", arena_name, "p", "--json").stdout)
    assert out["type"] == type_name
    assert out["value"] == value


def test_bytes_round_trip_both_ways(arena_name):
    run_weir("set", arena_name, "b", "00ff10", "--hex")
    arena = weir.Arena(arena_name)
    assert arena["b"] == b"\x00\xff\x10"
    arena["c"] = b"\x01\x02\xfe"
    raw = subprocess.run([WEIR, "get", arena_name, "c", "--raw"], capture_output=True, timeout=60).stdout
    assert raw == b"\x01\x02\xfe"
    assert json.loads(run_weir("get", arena_name, "c", "--json").stdout)["type"] == "bytes"


@pytest.mark.parametrize("dtype", ARRAY_DTYPES)
def test_arrays_of_every_dtype_round_trip_both_ways(arena_name, dtype):
    arena = weir.Arena(arena_name)
    if dtype == "c64":
        cli_text, expected = "1 2 3 -4", np.array([1 + 2j, 3 - 4j], dtype=np.complex64)
    else:
        cli_text, expected = "1 2 3 4 5 6", np.arange(1, 7, dtype=NUMPY[dtype]).reshape(2, 3)
    shape = ["--shape", "2"] if dtype == "c64" else ["--shape", "2x3"]
    run_weir("set", arena_name, "a", cli_text, "--array", dtype, *shape)
    got = arena["a"]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected)
    arena["p"] = expected
    out = json.loads(run_weir("get", arena_name, "p", "--json").stdout)
    assert out["dtype"] == dtype and out["shape"] == list(expected.shape)
    if dtype == "c64":
        assert out["value"] == [[1, 2], [3, -4]]
    else:
        assert np.array_equal(np.array(out["value"]), expected)


def test_keys_list_delete_and_missing_keys(arena_name):
    arena = weir.Arena(arena_name)
    arena["a.x"] = 1.0
    run_weir("set", arena_name, "a.y", "t")
    assert arena.keys == ["a.x", "a.y"]
    assert "a.x" in arena and "nope" not in arena
    with pytest.raises(KeyError):
        arena["nope"]
    del arena["a.x"]
    assert run_weir("get", arena_name, "a.x", check=False).returncode != 0
    with pytest.raises(TypeError):
        arena["l"] = [1, 2]  # ambiguous element type: numpy.asarray(..., dtype=...) says which
    with pytest.raises(ValueError):
        arena.set("bad", 1, type="nonsense")
    arena["t"] = "text"
    with pytest.raises(weir.WeirTypeError):  # the C ABI's typed get refuses another type
        weir._lib.check(weir._lib.lib.weir_get_f64(arena._handle(), b"t", weir._lib.ctypes.byref(
            weir._lib.ctypes.c_double())))


def test_a_python_waiter_wakes_on_a_cli_write(arena_name):
    arena = weir.Arena(arena_name)
    arena["run.state"] = "idle"
    since = arena.key_info("run.state")["version"]
    writer = threading.Timer(0.2, lambda: run_weir("set", arena_name, "run.state", "running"))
    writer.start()
    try:
        assert arena.wait_change("run.state", since=since, timeout=60) == "running"
    finally:
        writer.join()
    with pytest.raises(TimeoutError):
        arena.wait_change("run.state", timeout=0.05)


def test_watch_yields_each_write_of_the_watched_keys(arena_name):
    arena = weir.Arena(arena_name)
    got = []

    def write():
        for i in range(3):
            run_weir("set", arena_name, "n", str(i), "--type", "i64")
            while not got or got[-1] != ("n", i):
                threading.Event().wait(0.01)

    t = threading.Thread(target=write)
    t.start()
    for key, value in arena.watch("n", timeout=30):
        got.append((key, value))
        if value == 2:
            break
    t.join()
    assert got == [("n", 0), ("n", 1), ("n", 2)]
