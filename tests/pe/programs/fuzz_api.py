"""Fuzz every public host-API function with bad values in every argument position.

Usage: fuzz_api.py SEED CALLS

First None goes into every argument position of every function, each function is
called with no arguments and with an unknown keyword, then CALLS seeded
random calls put one bad value into one position. Every PE makes the same calls, so
collectives stay aligned when they reject their arguments everywhere. A call may
succeed or raise a pyshmem.ShmemError subclass; any other exception is a defect and is
reported. A crash or a hang shows up as the job failing or timing out. Prints
"FUZZ pe=<k> calls=<n> sweep=<m> ok=<a> errors=<b> defects=<d>" and "OK pe=<k>"
when no call raised anything else.
"""

import os
import random
import sys
import warnings

import numpy as np

import pyshmem as shmem

SEED, CALLS = int(sys.argv[1]), int(sys.argv[2])
warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # full(n, 1+2j, int) casts as shmem4py does
me, npes = shmem.my_pe(), shmem.n_pes()
peer = (me + 1) % npes

# Base objects the valid calls use; never handed out as "bad" values.
a8 = shmem.zeros(8, np.int64)
b8 = shmem.zeros(8, np.int64)
f8 = shmem.zeros(8, np.float64)
w4 = shmem.zeros(4, np.int32)  # wait variables: stay 0, waits use GE 0 (satisfied)
red_t = shmem.zeros(8 * npes, np.int64)
red_s = shmem.zeros(8 * npes, np.int64)
sig = shmem.new_signal()
lock = shmem.new_lock()
src8 = np.arange(8, dtype=np.int64)
fetch = np.zeros(1, np.int64)

# Symmetric objects handed out as bad values (a fuzzed free may release them: fine).
bad_sym_float = shmem.zeros(4, np.float32)
bad_sym_u8 = shmem.zeros(4, np.uint8)
freed = shmem.zeros(4, np.int64)
shmem.free(freed)
small = shmem.zeros(4, np.int64)
oversize = np.lib.stride_tricks.as_strided(small, shape=(64,), strides=(8,))
dead_team = shmem.TEAM_WORLD.split_strided(0, 1, npes)
dead_team.destroy()
dead_ctx = shmem.Ctx.create()
dead_ctx.destroy()


def bad_values():
    """Fresh bad values: wrong types, out-of-range integers, non-symmetric, freed,
    read-only, strided or oversized arrays, NumPy scalars, dead handles."""
    ro = a8[:2].view()
    ro.flags.writeable = False
    return [
        None, -1, 2**31, 2**32 + 1, 2**63, 2**64, -2**63 - 1, 0.5, float("nan"), float("inf"), "x", b"x",
        object(), [], [1, 2], (1,), {}, True, np.int64(3), np.float64(0.5), 1 + 2j,
        np.zeros(3), np.zeros((2, 2), np.int64), ro, a8[::2], a8.view(np.uint8), bad_sym_float, bad_sym_u8,
        freed, oversize, dead_team, dead_ctx, shmem.CTX_INVALID, shmem.TEAM_INVALID, np.zeros(0, np.int64),
    ]


def fresh(kind):
    """A fresh collective object for the destroy-style calls (freed after the call)."""
    return {"array": lambda: shmem.zeros(2, np.int64), "signal": shmem.new_signal, "lock": shmem.new_lock,
            "team": lambda: shmem.TEAM_WORLD.split_strided(0, 1, npes)}[kind]()


W = shmem.TEAM_WORLD
# name: (function, builder of (args, kwargs)[, flags]). flags: "blocking" (a wait that
# must stay satisfied), "alloc" (frees what it returns), "team" (destroys what it
# returns), "ctx", "lock", ("fresh", kind) (first argument made per call), "method"
# (argument 0 is self: not fuzzed).
T = {
    "pe_accessible": (shmem.pe_accessible, lambda: ([peer], {})),
    "init_thread": (shmem.init_thread, lambda: ([shmem.THREAD_MULTIPLE], {})),
    "alloc": (shmem.alloc, lambda: ([4], {"size": 8, "align": 64, "clear": True}), "alloc"),
    "free": (shmem.free, lambda: ([None], {}), ("fresh", "array")),
    "fromalloc": (shmem.fromalloc, lambda: ([memoryview(a8).cast("B")], {"shape": 8, "dtype": np.int64}), ""),
    "new_array": (shmem.new_array, lambda: ([4], {"dtype": np.int64, "order": "C", "align": 128}), "alloc"),
    "del_array": (shmem.del_array, lambda: ([None], {}), ("fresh", "array")),
    "array": (shmem.array, lambda: ([[1, 2, 3]], {"dtype": np.int32}), "alloc"),
    "empty": (shmem.empty, lambda: ([(2, 2)], {"dtype": np.float64}), "alloc"),
    "zeros": (shmem.zeros, lambda: ([3], {"dtype": np.int16}), "alloc"),
    "ones": (shmem.ones, lambda: ([3], {"dtype": np.int16}), "alloc"),
    "full": (shmem.full, lambda: ([3, 7], {"dtype": np.int16}), "alloc"),
    "ptr": (shmem.ptr, lambda: ([a8, peer], {})),
    "addr_accessible": (shmem.addr_accessible, lambda: ([a8, peer], {})),
    "put": (shmem.put, lambda: ([a8, src8, peer], {"size": 4, "ctx": None})),
    "get": (shmem.get, lambda: ([np.zeros(8, np.int64), a8, peer], {"size": 4, "ctx": None})),
    "put_nbi": (shmem.put_nbi, lambda: ([a8, src8, peer], {"size": 4})),
    "get_nbi": (shmem.get_nbi, lambda: ([np.zeros(8, np.int64), a8, peer], {"size": 4})),
    "iput": (shmem.iput, lambda: ([a8, src8, peer], {"tst": 2, "sst": 1, "size": 3})),
    "iget": (shmem.iget, lambda: ([np.zeros(8, np.int64), a8, peer], {"tst": 1, "sst": 2, "size": 3})),
    "signal_fetch": (shmem.signal_fetch, lambda: ([sig], {})),
    "put_signal": (shmem.put_signal, lambda: ([a8, src8, peer, sig, 1, shmem.SIGNAL_ADD], {"size": 2})),
    "put_signal_nbi": (shmem.put_signal_nbi, lambda: ([a8, src8, peer, sig, 1, shmem.SIGNAL_ADD], {"size": 2})),
    "signal_wait_until": (shmem.signal_wait_until, lambda: ([sig, shmem.CMP.GE, 0], {}), "blocking"),
    "wait_until": (shmem.wait_until, lambda: ([w4[:1], shmem.CMP.GE, 0], {}), "blocking"),
    "test": (shmem.test, lambda: ([w4[:1], shmem.CMP.GE, 0], {})),
    "fence": (shmem.fence, lambda: ([], {"ctx": None})),
    "quiet": (shmem.quiet, lambda: ([], {"ctx": None})),
    "barrier_all": (shmem.barrier_all, lambda: ([], {})),
    "sync_all": (shmem.sync_all, lambda: ([], {})),
    "del_signal": (shmem.del_signal, lambda: ([None], {}), ("fresh", "signal")),
    "del_lock": (shmem.del_lock, lambda: ([None], {}), ("fresh", "lock")),
    "set_lock": (shmem.set_lock, lambda: ([lock], {}), "lock"),
    "test_lock": (shmem.test_lock, lambda: ([lock], {}), "lock"),
    "clear_lock": (shmem.clear_lock, lambda: ([np.zeros(1, np.int64)], {})),
    "team_my_pe": (shmem.team_my_pe, lambda: ([W], {})),
    "team_n_pes": (shmem.team_n_pes, lambda: ([W], {})),
    "team_get_config": (shmem.team_get_config, lambda: ([W], {})),
    "team_translate_pe": (shmem.team_translate_pe, lambda: ([W, 0, W], {})),
    "team_split_strided": (shmem.team_split_strided, lambda: ([W, 0, 1, npes], {}), "team"),
    "team_split_2d": (shmem.team_split_2d, lambda: ([W, 1], {}), "team"),
    "team_destroy": (shmem.team_destroy, lambda: ([None], {}), ("fresh", "team")),
    "team_create_ctx": (shmem.team_create_ctx, lambda: ([W, 0], {}), "ctx"),
    "team_sync": (shmem.team_sync, lambda: ([W], {})),
    "sync": (shmem.sync, lambda: ([], {"team": None})),
    "barrier": (shmem.barrier, lambda: ([], {"team": None})),
    "broadcast": (shmem.broadcast, lambda: ([red_t, red_s, 0], {"size": 4, "team": None})),
    "collect": (shmem.collect, lambda: ([red_t, red_s], {"size": 2, "team": None})),
    "fcollect": (shmem.fcollect, lambda: ([red_t, red_s], {"size": 2, "team": None})),
    "alltoall": (shmem.alltoall, lambda: ([red_t, red_s], {"size": 2, "team": None})),
    "alltoalls": (shmem.alltoalls, lambda: ([red_t, red_s], {"tst": 1, "sst": 1, "size": 2, "team": None})),
    "reduce": (shmem.reduce, lambda: ([red_t, red_s], {"op": "sum", "size": 4, "team": None})),
    "Ctx": (shmem.Ctx, lambda: ([shmem.CTX_DEFAULT], {})),
    "Ctx.create": (shmem.Ctx.create, lambda: ([0], {"team": None}), "ctx"),
    "Team": (shmem.Team, lambda: ([W], {})),
    "Team.split_strided": (shmem.Team.split_strided, lambda: ([W, 0, 1, npes], {}), "team", "method"),
    "Team.split_2d": (shmem.Team.split_2d, lambda: ([W, 1], {}), "team", "method"),
    "Team.translate_pe": (shmem.Team.translate_pe, lambda: ([W, 0, W], {}), "method"),
    "Team.create_ctx": (shmem.Team.create_ctx, lambda: ([W, 0], {}), "ctx", "method"),
    "Lock.acquire": (shmem.Lock.acquire, lambda: ([shmem.Lock(), True], {}), "method", "newlock"),
}
for name in ("atomic_fetch",):
    T[name] = (getattr(shmem, name), lambda: ([a8[:1], peer], {"ctx": None}))
for name in ("atomic_set", "atomic_swap", "atomic_fetch_add", "atomic_add", "atomic_fetch_and", "atomic_and",
             "atomic_fetch_or", "atomic_or", "atomic_fetch_xor", "atomic_xor"):
    T[name] = (getattr(shmem, name), lambda: ([a8[:1], 3, peer], {"ctx": None}))
T["atomic_compare_swap"] = (shmem.atomic_compare_swap, lambda: ([a8[:1], 0, 3, peer], {}))
T["atomic_fetch_inc"] = (shmem.atomic_fetch_inc, lambda: ([a8[:1], peer], {}))
T["atomic_inc"] = (shmem.atomic_inc, lambda: ([a8[:1], peer], {}))
T["atomic_fetch_nbi"] = (shmem.atomic_fetch_nbi, lambda: ([fetch, a8[:1], peer], {}))
T["atomic_fetch_inc_nbi"] = (shmem.atomic_fetch_inc_nbi, lambda: ([fetch, a8[:1], peer], {}))
for name in ("atomic_swap_nbi", "atomic_fetch_add_nbi", "atomic_fetch_and_nbi", "atomic_fetch_or_nbi",
             "atomic_fetch_xor_nbi"):
    T[name] = (getattr(shmem, name), lambda: ([fetch, a8[:1], 3, peer], {}))
T["atomic_compare_swap_nbi"] = (shmem.atomic_compare_swap_nbi, lambda: ([fetch, a8[:1], 0, 3, peer], {}))
T["atomic_op"] = (shmem.atomic_op, lambda: ([a8[:1], 3, shmem.AMO.ADD, peer], {}))
T["atomic_fetch_op"] = (shmem.atomic_fetch_op, lambda: ([a8[:1], 3, shmem.AMO.XOR, peer], {}))
T["atomic_fetch_op_nbi"] = (shmem.atomic_fetch_op_nbi, lambda: ([fetch, a8[:1], 3, shmem.AMO.SET, peer], {}))
for name in ("wait_until_all", "wait_until_any", "wait_until_some"):
    T[name] = (getattr(shmem, name), lambda: ([w4, shmem.CMP.GE, 0], {"status": [0, 0, 0, 0]}), "blocking")
for name in ("wait_until_all_vector", "wait_until_any_vector", "wait_until_some_vector"):
    T[name] = (getattr(shmem, name), lambda: ([w4, shmem.CMP.GE, [0, 0, 0, 0]], {"status": None}), "blocking")
for name in ("test_all", "test_any", "test_some"):
    T[name] = (getattr(shmem, name), lambda: ([w4, shmem.CMP.GE, 0], {"status": [0, 1, 0, 0]}))
for name in ("test_all_vector", "test_any_vector", "test_some_vector"):
    T[name] = (getattr(shmem, name), lambda: ([w4, shmem.CMP.EQ, [0, 1, 0, 0]], {}))
for op in ("and", "or", "xor", "max", "min", "sum", "prod"):
    T[f"{op}_reduce"] = (getattr(shmem, f"{op}_reduce"), lambda: ([red_t, red_s], {"size": 4, "team": None}))

# Public callables deliberately not fuzzed, with the reason.
NOT_FUZZED = {
    "init": "starts the runtime (already started)", "finalize": "ends the runtime",
    "global_exit": "ends the job", "initialized": "no arguments", "finalized": "no arguments",
    "query_thread": "no arguments", "my_pe": "no arguments", "n_pes": "no arguments",
    "info_get_version": "no arguments", "info_get_name": "no arguments", "new_signal": "no arguments",
    "new_lock": "no arguments", "Lock": "no arguments (Lock.acquire is fuzzed)",
    "pcontrol": "covered by the shmem4py suite",
}
uncovered = [n for n in shmem.__all__ if callable(getattr(shmem, n)) and n not in T and n not in NOT_FUZZED
             and not (isinstance(getattr(shmem, n), type) and issubclass(getattr(shmem, n), (BaseException, int, str)))]
assert not uncovered, f"public functions missing from the fuzz table: {uncovered}"


def fits_wait(value):
    """True for values a satisfied wait (GE 0 on int32/uint64) could still block on:
    valid comparison values, which make it wait for something that never comes."""
    if isinstance(value, (bool, np.bool_)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iub"
    return isinstance(value, (int, np.integer)) and 0 < int(value) < 2**64


def release(flags, result, name):
    """Undo what a successful call created, so the heap and team table do not fill up."""
    if "alloc" in flags and result is not None:
        shmem.free(result)
    elif "team" in flags and result is not None:
        for t in (result if isinstance(result, tuple) else (result,)):
            if t is not None and t != shmem.TEAM_INVALID:
                t.destroy()
    elif "ctx" in flags and result is not None:
        result.destroy()


TRACE = bool(os.environ.get("FUZZ_TRACE"))
ok = errors = 0
defects = {}


def prepare(name):
    """(fn, flags, args, kwargs, fresh object, fuzzable slots) of one valid call."""
    entry = T[name]
    fn, build, flags = entry[0], entry[1], entry[2:]
    args, kwargs = build()
    fresh_obj = None
    for f in flags:
        if isinstance(f, tuple) and f[0] == "fresh":
            fresh_obj = fresh(f[1])
            args[0] = fresh_obj
    slots = [("a", k) for k in range(len(args)) if not ("method" in flags and k == 0)]
    slots += [("k", k) for k in kwargs]
    return fn, flags, args, kwargs, fresh_obj, slots


def call(i, name, prepared, slot, value):
    """One call with `value` in `slot` (None: an extra argument of a no-argument call);
    records a defect when it raises anything but a ShmemError, then undoes its effects."""
    global ok, errors
    fn, flags, args, kwargs, fresh_obj, _ = prepared
    if "blocking" in flags and fits_wait(value):
        value = None
    if slot is None:
        args, where_, key = [value], "a", 0
    elif slot == "no arguments":
        args, kwargs, where_, key = [], {}, "", slot
    elif slot == "unknown keyword":
        kwargs, where_, key = dict(kwargs, no_such_argument=1), "", slot
    else:
        where_, key = slot
        (args if where_ == "a" else kwargs)[key] = value
    result = None
    if TRACE:
        print(f"CALL pe={me} {i} {name} {where_}{key}={value!r:.60}", flush=True)
    try:
        result = fn(*args, **kwargs)
        ok += 1
    except shmem.ShmemError:
        errors += 1
    except Exception as exc:  # noqa: BLE001 - the point of the fuzz
        sig_key = (name, where_ + str(key), type(exc).__name__)
        defects.setdefault(sig_key, (repr(value)[:40], str(exc)[:160]))
    # Undo side effects identically on every PE.
    try:
        if "lock" in flags and name == "set_lock" and result is None and args and args[0] is lock:
            shmem.clear_lock(lock)
        elif "lock" in flags and name == "test_lock" and args and args[0] is lock and result in (0, False):
            shmem.clear_lock(lock)
        elif "newlock" in flags and args and isinstance(args[0], shmem.Lock):
            if result:
                args[0].release()
            shmem.barrier_all()
            args[0].destroy()
        else:
            release(flags, result, name)
        if fresh_obj is not None:
            try:
                if isinstance(fresh_obj, shmem.Team):
                    fresh_obj.destroy()
                else:
                    shmem.free(fresh_obj)
            except shmem.ShmemError:
                pass  # the fuzzed call freed it
    except shmem.ShmemError:
        pass
    if i % 64 == 63:
        shmem.barrier_all()


names = sorted(T)
# First None in every argument position of every function, then the seeded random calls.
i = 0
for name in names:
    for k in range(len(prepare(name)[5]) or 1):
        prepared = prepare(name)
        call(i, name, prepared, prepared[5][k] if prepared[5] else None, None)
        i += 1
# Wrong argument lists: no arguments at all, and an unknown keyword.
for name in names:
    for slot in ("no arguments", "unknown keyword"):
        call(i, name, prepare(name), slot, "-")
        i += 1
swept = i
rng = random.Random(SEED)
for _ in range(CALLS):
    name = rng.choice(names)
    prepared = prepare(name)
    slot = rng.choice(prepared[5]) if prepared[5] else None
    call(i, name, prepared, slot, rng.choice(bad_values()))
    i += 1

shmem.barrier_all()
for (name, slot, exc), (value, msg) in sorted(defects.items()):
    print(f"DEFECT pe={me} {name}[{slot}]={value}: {exc}: {msg}", flush=True)
print(f"FUZZ pe={me} calls={CALLS} sweep={swept} ok={ok} errors={errors} defects={len(defects)}", flush=True)
if not defects:
    print(f"OK pe={me}", flush=True)
