"""The fake CUDA driver itself (tests/cpp/fake_cuda_driver.cpp, tests/cpp/fake_cuda/*.cpp):
that it models CUDA's asynchrony (copies, memsets and launches that return before the work
is done; legacy-stream ordering; non-blocking streams), contexts, fake modules, the call
log and the test hooks, so that tests of pyshmem's GPU host logic against it mean something.

Each scenario runs in a fresh Python process (the fake reads its FAKE_CUDA_* settings once)
that drives the fake with ctypes, resolving entry points through cuGetProcAddress_v2 as
pyshmem does; it prints a JSON summary that the test checks. Run this file as
`python tests/unit/test_fake_cuda_driver.py <driver.so> <scenario>` to see one by hand.
"""

import ctypes
import json
import os
import re
import subprocess
import sys
import threading
import time
from ctypes import POINTER, byref, c_char_p, c_int, c_size_t, c_ubyte, c_uint, c_uint64, c_ulonglong, c_void_p

import pytest

# ---- CUDA constants (cuda.h) ----
SUCCESS, INVALID_VALUE, INVALID_DEVICE, INVALID_IMAGE, INVALID_CONTEXT = 0, 1, 101, 200, 201
INVALID_HANDLE, NOT_FOUND, NOT_READY, LAUNCH_TIMEOUT, NOT_SUPPORTED = 400, 500, 600, 702, 801
STREAM_NON_BLOCKING = 0x1
STREAM_LEGACY, STREAM_PER_THREAD = 0x1, 0x2
ATTR_GDR_WITH_VMM, ATTR_GDR = 110, 116
ATTR_VMM = 102
MEM_ALLOCATION_TYPE_PINNED, MEM_LOCATION_TYPE_DEVICE, MEM_HANDLE_TYPE_FD, PROT_READWRITE = 1, 1, 1, 3
FLUSH_TARGET_CURRENT_CTX, FLUSH_TO_OWNER = 0, 100
GRAN = 2 << 20


class MemLocation(ctypes.Structure):
    _fields_ = [("type", c_int), ("id", c_int)]


class AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", c_ubyte), ("gpuDirectRDMACapable", c_ubyte), ("usage", ctypes.c_ushort),
                ("reserved", c_ubyte * 4)]


class MemAllocationProp(ctypes.Structure):
    _fields_ = [("type", c_int), ("requestedHandleTypes", c_int), ("location", MemLocation),
                ("win32HandleMetaData", c_void_p), ("allocFlags", AllocFlags)]


class MemAccessDesc(ctypes.Structure):
    _fields_ = [("location", MemLocation), ("flags", c_int)]


P = POINTER
SIGNATURES = {
    "cuInit": [c_uint],
    "cuDeviceGetAttribute": [P(c_int), c_int, c_int],
    "cuDeviceCanAccessPeer": [P(c_int), c_int, c_int],
    "cuDevicePrimaryCtxRetain": [P(c_void_p), c_int],
    "cuCtxSetCurrent": [c_void_p],
    "cuCtxGetCurrent": [P(c_void_p)],
    "cuCtxPushCurrent": [c_void_p],
    "cuCtxPopCurrent": [P(c_void_p)],
    "cuCtxGetDevice": [P(c_int)],
    "cuCtxSynchronize": [],
    "cuMemGetAllocationGranularity": [P(c_size_t), P(MemAllocationProp), c_int],
    "cuMemCreate": [P(c_uint64), c_size_t, P(MemAllocationProp), c_ulonglong],
    "cuMemRelease": [c_uint64],
    "cuMemAddressReserve": [P(c_uint64), c_size_t, c_size_t, c_uint64, c_ulonglong],
    "cuMemMap": [c_uint64, c_size_t, c_size_t, c_uint64, c_ulonglong],
    "cuMemSetAccess": [c_uint64, c_size_t, P(MemAccessDesc), c_size_t],
    "cuMemAlloc": [P(c_uint64), c_size_t],
    "cuMemFree": [c_uint64],
    "cuMemHostAlloc": [P(c_void_p), c_size_t, c_uint],
    "cuMemFreeHost": [c_void_p],
    "cuMemcpy": [c_uint64, c_uint64, c_size_t],
    "cuMemcpyAsync": [c_uint64, c_uint64, c_size_t, c_void_p],
    "cuMemsetD8": [c_uint64, c_ubyte, c_size_t],
    "cuMemsetD8Async": [c_uint64, c_ubyte, c_size_t, c_void_p],
    "cuStreamCreate": [P(c_void_p), c_uint],
    "cuStreamDestroy": [c_void_p],
    "cuStreamSynchronize": [c_void_p],
    "cuStreamQuery": [c_void_p],
    "cuModuleLoadData": [P(c_void_p), c_char_p],
    "cuModuleUnload": [c_void_p],
    "cuModuleGetFunction": [P(c_void_p), c_void_p, c_char_p],
    "cuModuleGetGlobal": [P(c_uint64), P(c_size_t), c_void_p, c_char_p],
    "cuLibraryGetGlobal": [P(c_uint64), P(c_size_t), c_void_p, c_char_p],
    "cuLaunchKernel": [c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_void_p, P(c_void_p),
                       P(c_void_p)],
    "cuFlushGPUDirectRDMAWrites": [c_int, c_int],
    "cuEventCreate": [P(c_void_p), c_uint],
    "cuEventRecord": [c_void_p, c_void_p],
    "cuEventQuery": [c_void_p],
    "cuEventDestroy": [c_void_p],
}


class Cuda:
    """The fake driver through cuGetProcAddress_v2 (CUDA 13000, flags 0), as pyshmem loads it.
    `cu.rc.cuX(...)` returns the CUresult; `cu.cuX(...)` asserts CUDA_SUCCESS."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        get = self.lib.cuGetProcAddress_v2
        get.argtypes = [c_char_p, P(c_void_p), c_int, c_uint64, c_void_p]
        get.restype = c_int
        self._fns = {}
        for name, args in SIGNATURES.items():
            fn = c_void_p()
            assert get(name.encode(), byref(fn), 13000, 0, None) == 0, name
            self._fns[name] = ctypes.CFUNCTYPE(c_int, *args)(fn.value)
        for hook in ("fake_cuda_set_current_device", "fake_cuda_current_device", "fake_cuda_pending"):
            getattr(self.lib, hook).restype = c_int
        cu = self

        class _Rc:
            def __getattr__(self, name):
                return cu._fns[name]

        self.rc = _Rc()

    def __getattr__(self, name):
        fn = self._fns[name]

        def checked(*args):
            r = fn(*args)
            assert r == SUCCESS, f"{name} returned {r}"

        return checked

    # small helpers
    def pending(self):
        return self.lib.fake_cuda_pending()

    def current_device(self):
        return self.lib.fake_cuda_current_device()

    def context(self, dev=0):
        ctx = c_void_p()
        self.cuDevicePrimaryCtxRetain(byref(ctx), dev)
        return ctx.value

    def use(self, dev=0):
        self.cuInit(0)
        self.cuCtxSetCurrent(self.context(dev))

    def alloc(self, n):
        p = c_uint64()
        self.cuMemAlloc(byref(p), n)
        return p.value

    def pinned(self, n):
        p = c_void_p()
        self.cuMemHostAlloc(byref(p), n, 0)
        ctypes.memset(p.value, 0, n)
        return p.value

    def stream(self, flags):
        s = c_void_p()
        self.cuStreamCreate(byref(s), flags)
        return s.value

    def module(self, text):
        m = c_void_p()
        self.cuModuleLoadData(byref(m), text.encode())
        return m.value

    def function(self, module, name):
        f = c_void_p()
        self.cuModuleGetFunction(byref(f), module, name.encode())
        return f.value

    def launch(self, fn, stream, *u64_params):
        """Launches a fake kernel with 64-bit parameters; returns their storage (the
        caller may overwrite it: CUDA copies parameters at launch)."""
        cells = [c_uint64(v) for v in u64_params]
        params = (c_void_p * max(1, len(cells)))(*[ctypes.addressof(c) for c in cells])
        self.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, params, None)
        return cells


def addr(buf):
    return ctypes.addressof(buf)


def first_byte(p):
    return ctypes.string_at(p, 1)[0]


# ---- scenarios (run in a subprocess: `python this_file.py <driver> <scenario>`) ----


def scenario_pageable_h2d(cu, tries=30, n=4096):
    """cuMemcpy from pageable memory returns before the data lands; a non-blocking
    stream's DtoH right after may see the old bytes; the source is snapshotted."""
    cu.use()
    dev = cu.alloc(n)
    cu.cuMemsetD8(dev, 0, n)
    cu.cuStreamSynchronize(0)
    s = cu.stream(STREAM_NON_BLOCKING)
    stale = bad_after_sync = max_pending = 0
    old = 0
    for i in range(tries):
        val = i % 250 + 1
        src = ctypes.create_string_buffer(bytes([val]) * n, n)
        cu.cuMemcpy(dev, addr(src), n)
        max_pending = max(max_pending, cu.pending())
        ctypes.memset(addr(src), 0xEE, n)  # reuse the source at once
        dst = ctypes.create_string_buffer(n)
        cu.cuMemcpyAsync(addr(dst), dev, n, s)  # DtoH to pageable memory: returns once done
        seen = dst.raw[0]
        assert seen in (old, val), (seen, old, val)
        stale += seen == old
        cu.cuStreamSynchronize(0)
        cu.cuMemcpyAsync(addr(dst), dev, n, s)
        bad_after_sync += dst.raw != bytes([val]) * n
        old = val
    return {"stale": stale, "bad_after_sync": bad_after_sync, "max_pending": max_pending, "tries": tries}


def scenario_memset(cu, tries=30, n=1 << 16):
    """cuMemsetD8 on device memory returns before the fill; on pinned memory after it."""
    cu.use()
    dev = cu.alloc(n)
    early = bad_after_sync = 0
    for i in range(tries):
        val = i % 250 + 1
        cu.cuMemsetD8(dev, val, n)
        early += first_byte(dev) != val  # "device memory" is host memory in the fake
        cu.cuStreamSynchronize(0)
        bad_after_sync += ctypes.string_at(dev, n) != bytes([val]) * n
    pin = cu.pinned(n)
    pinned_early = 0
    for i in range(tries // 3):
        cu.cuMemsetD8(pin, i + 1, n)
        pinned_early += ctypes.string_at(pin, n) != bytes([i + 1]) * n
    s = cu.stream(STREAM_NON_BLOCKING)
    cu.cuMemsetD8Async(dev, 0x5A, n, s)
    cu.cuStreamSynchronize(s)
    async_done = ctypes.string_at(dev, n) == b"\x5a" * n
    return {"early": early, "bad_after_sync": bad_after_sync, "pinned_early": pinned_early, "async_done": async_done,
            "tries": tries}


WAIT_MODULE = "FAKECUDA-MODULE\nkernel spin wait_flag\nkernel store store_u64\n"


def _start_copy(cu, ctx, dev, stream, done):
    """In a thread (with the context current there): a DtoH copy of `dev` into pageable
    memory, on `stream` (None: cuMemcpy on the legacy stream); sets done[key] when it
    returned."""

    def body():
        cu.cuCtxSetCurrent(ctx)
        dst = ctypes.create_string_buffer(8)
        if stream is None:
            cu.cuMemcpy(addr(dst), dev, 8)
        else:
            cu.cuMemcpyAsync(addr(dst), dev, 8, stream)
        done.append(time.monotonic())

    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def _blocked(cu, ctx, dev, flag, spin_on, streams):
    """Launches a wait_flag kernel on `spin_on`, then DtoH copies on each of `streams`
    (name -> handle, None = cuMemcpy); returns name -> blocked while the flag was 0, the
    cuStreamQuery of `spin_on` then, and whether all finished once the flag was set."""
    m = cu.module(WAIT_MODULE)
    cu.launch(cu.function(m, "spin"), spin_on, flag)
    done = {name: [] for name in streams}
    threads = [_start_copy(cu, ctx, dev, s, done[name]) for name, s in streams.items()]
    time.sleep(0.5)
    blocked = {name: not d for name, d in done.items()}
    query = cu.rc.cuStreamQuery(spin_on)
    ctypes.c_uint64.from_address(flag).value = 1  # host memory: the host releases the kernel
    for t in threads:
        t.join(10)
    cu.cuCtxSynchronize()
    ctypes.c_uint64.from_address(flag).value = 0
    return {"blocked": blocked, "query": query, "all_done": all(done.values())}


def scenario_legacy_order(cu):
    cu.use()
    ctx = cu.context()
    dev = cu.alloc(64)
    flag = cu.pinned(8)
    blocking = cu.stream(0)
    nonblocking = cu.stream(STREAM_NON_BLOCKING)
    streams = {"legacy_memcpy": None, "legacy_async": 0, "CU_STREAM_LEGACY": STREAM_LEGACY, "blocking": blocking,
               "per_thread": STREAM_PER_THREAD, "nonblocking": nonblocking}
    # a kernel spinning on the legacy stream holds back the legacy and blocking streams
    on_legacy = _blocked(cu, ctx, dev, flag, 0, streams)
    # a kernel spinning on a blocking stream holds back the legacy stream, not other blocking ones
    # (separate runs: a blocking stream's op enqueued after a held-back legacy op waits for it)
    other_blocking = cu.stream(0)
    on_blocking = _blocked(cu, ctx, dev, flag, blocking, {"legacy_memcpy": None})
    on_blocking2 = _blocked(cu, ctx, dev, flag, blocking, {"other_blocking": other_blocking,
                                                            "nonblocking": nonblocking})
    # ... and that transitively: the legacy memset waits for the kernel, the copy on another
    # blocking stream for the memset
    m = cu.module(WAIT_MODULE)
    cu.launch(cu.function(m, "spin"), blocking, flag)
    cu.cuMemsetD8(dev, 3, 64)  # device memory: returns at once
    done = []
    t = _start_copy(cu, ctx, dev, other_blocking, done)
    time.sleep(0.5)
    transitive = not done
    ctypes.c_uint64.from_address(flag).value = 1
    t.join(10)
    cu.cuCtxSynchronize()
    transitive_released = bool(done) and first_byte(dev) == 3
    ctypes.c_uint64.from_address(flag).value = 0
    # one on a non-blocking stream holds back nothing else
    on_nonblocking = _blocked(cu, ctx, dev, flag, nonblocking, {"legacy_memcpy": None, "blocking": blocking})
    return {"on_legacy": on_legacy, "on_blocking": on_blocking, "on_blocking2": on_blocking2,
            "on_nonblocking": on_nonblocking, "transitive": transitive, "transitive_released": transitive_released}


def scenario_copy_global(cu, tries=30):
    """A copy_global kernel reads the global when it runs: on a non-blocking stream it may
    miss a legacy-stream cuMemcpy made just before; on the legacy or a blocking stream it
    never does."""
    cu.use()
    m = cu.module("FAKECUDA-MODULE\n# a global and a kernel that copies it out\nglobal g 64\n"
                  "kernel cg copy_global g\n")
    g, size = c_uint64(), c_size_t()
    cu.cuModuleGetGlobal(byref(g), byref(size), m, b"g")
    assert ctypes.string_at(g.value, 64) == bytes(64)  # zero-filled
    cg = cu.function(m, "cg")
    out = cu.pinned(64)
    nonblocking, blocking = cu.stream(STREAM_NON_BLOCKING), cu.stream(0)
    result = {"size": size.value, "max_pending_after_launch": 0}
    for label, stream in (("nonblocking", nonblocking), ("legacy", 0), ("blocking", blocking)):
        stale = 0
        for i in range(tries):
            val = i % 250 + 1
            src = ctypes.create_string_buffer(bytes([val]) * 64, 64)
            cu.cuMemcpy(g.value, addr(src), 64)
            cu.launch(cg, stream, out)
            result["max_pending_after_launch"] = max(result["max_pending_after_launch"], cu.pending())
            cu.cuStreamSynchronize(stream)
            stale += ctypes.string_at(out, 64) != bytes([val]) * 64
            cu.cuCtxSynchronize()
        result[label] = stale
    return result


def scenario_contexts(cu):
    r = {}
    cu.cuInit(0)
    p, n = c_uint64(), c_size_t()
    s, pin = c_void_p(), c_void_p()
    r["none_current_device"] = cu.current_device()
    buf = ctypes.create_string_buffer(8)
    r["no_ctx"] = {
        "cuMemAlloc": cu.rc.cuMemAlloc(byref(p), 64),
        "cuMemHostAlloc": cu.rc.cuMemHostAlloc(byref(pin), 64, 0),
        "cuStreamCreate": cu.rc.cuStreamCreate(byref(s), 0),
        "cuMemcpy": cu.rc.cuMemcpy(addr(buf), addr(buf), 8),
        "cuMemsetD8": cu.rc.cuMemsetD8(addr(buf), 0, 8),
        "cuModuleLoadData": cu.rc.cuModuleLoadData(byref(s), WAIT_MODULE.encode()),
        "cuFlushGPUDirectRDMAWrites": cu.rc.cuFlushGPUDirectRDMAWrites(FLUSH_TARGET_CURRENT_CTX, FLUSH_TO_OWNER),
        "cuCtxSynchronize": cu.rc.cuCtxSynchronize(),
        "cuCtxGetDevice": cu.rc.cuCtxGetDevice(byref(c_int())),
        "cuCtxPopCurrent": cu.rc.cuCtxPopCurrent(byref(s)),
    }
    prop = MemAllocationProp(type=MEM_ALLOCATION_TYPE_PINNED, location=MemLocation(MEM_LOCATION_TYPE_DEVICE, 0))
    v = c_int()
    r["no_ctx_allowed"] = {
        "cuDeviceGetAttribute": cu.rc.cuDeviceGetAttribute(byref(v), ATTR_VMM, 0),
        "cuMemGetAllocationGranularity": cu.rc.cuMemGetAllocationGranularity(byref(n), byref(prop), 0),
    }
    ctx0, ctx1 = cu.context(0), cu.context(1)
    dev = c_int()

    def device():
        rc = cu.rc.cuCtxGetDevice(byref(dev))
        return dev.value if rc == SUCCESS else -rc

    steps = []
    cu.cuCtxPushCurrent(ctx0)
    cu.cuCtxPushCurrent(ctx1)
    steps.append(device())  # 1
    cu.cuCtxSetCurrent(ctx0)  # replaces the top
    steps.append(device())  # 0
    popped = c_void_p()
    cu.cuCtxPopCurrent(byref(popped))
    steps.append(popped.value == ctx0)
    steps.append(device())  # 0 (the first push)
    cu.cuCtxPopCurrent(byref(popped))
    steps.append(device())  # none: -201
    steps.append(cu.rc.cuCtxPopCurrent(byref(popped)))  # 201
    r["stack"] = steps
    # per thread: another thread has no context while this one has
    cu.cuCtxSetCurrent(ctx1)
    other = []
    t = threading.Thread(target=lambda: other.append((cu.current_device(), cu.rc.cuMemAlloc(byref(c_uint64()), 8))))
    t.start()
    t.join()
    r["other_thread"] = other[0]
    r["this_thread"] = cu.current_device()
    # SetCurrent(NULL) pops; the hook makes a device current as a framework would
    cu.cuCtxSetCurrent(None)
    r["after_null"] = cu.current_device()
    r["hook_rc"] = cu.lib.fake_cuda_set_current_device(1)
    cur = c_void_p()
    cu.cuCtxGetCurrent(byref(cur))
    r["hook"] = [cu.current_device(), cur.value == ctx1, device()]
    r["hook_bad_device"] = cu.lib.fake_cuda_set_current_device(7)
    can = c_int()
    r["peer"] = []
    for a, b in ((0, 1), (1, 0), (0, 0)):
        cu.cuDeviceCanAccessPeer(byref(can), a, b)
        r["peer"].append(can.value)
    r["peer_bad"] = cu.rc.cuDeviceCanAccessPeer(byref(can), 0, 5)
    r["bad_ctx"] = cu.rc.cuCtxSetCurrent(c_void_p(0x1234))
    return r


def _vmm(cu, dev, rdma):
    """cuMemCreate of one granule on dev (rdma: the GPUDirect RDMA flag); returns the rc
    and the handle."""
    prop = MemAllocationProp(type=MEM_ALLOCATION_TYPE_PINNED, requestedHandleTypes=MEM_HANDLE_TYPE_FD,
                             location=MemLocation(MEM_LOCATION_TYPE_DEVICE, dev))
    prop.allocFlags.gpuDirectRDMACapable = 1 if rdma else 0
    h = c_uint64()
    return cu.rc.cuMemCreate(byref(h), GRAN, byref(prop), 0), h.value


def scenario_gdr(cu):
    cu.use()
    v1, v2 = c_int(), c_int()
    cu.cuDeviceGetAttribute(byref(v1), ATTR_GDR_WITH_VMM, 0)
    cu.cuDeviceGetAttribute(byref(v2), ATTR_GDR, 0)
    rc_rdma, _ = _vmm(cu, 0, True)
    rc_plain, _ = _vmm(cu, 0, False)
    return {"attr_vmm": v1.value, "attr_gdr": v2.value, "create_rdma": rc_rdma, "create_plain": rc_plain}


def scenario_log(cu):
    """A little of everything, for the call log."""
    cu.cuInit(0)
    cu.use(0)
    s = cu.stream(STREAM_NON_BLOCKING)
    dev = cu.alloc(4096)
    host = ctypes.create_string_buffer(4096)
    pin = cu.pinned(4096)
    cu.cuMemcpy(dev, addr(host), 4096)  # HtoD-pageable
    cu.cuMemcpy(dev, pin, 4096)  # HtoD-pinned
    cu.cuMemcpy(addr(host), dev, 4096)  # DtoH
    cu.cuMemcpyAsync(dev + 2048, dev, 1024, s)  # DtoD
    cu.cuMemcpy(addr(host), pin, 100)  # HtoH
    cu.cuMemsetD8(dev, 7, 4096)
    cu.cuMemsetD8Async(dev, 7, 512, s)
    rc, h = _vmm(cu, 1, True)
    assert rc == SUCCESS
    va = c_uint64()
    cu.cuMemAddressReserve(byref(va), GRAN, 0, 0, 0)
    cu.cuMemMap(va.value, GRAN, 0, h, 0)
    access = (MemAccessDesc * 2)(MemAccessDesc(MemLocation(MEM_LOCATION_TYPE_DEVICE, 0), PROT_READWRITE),
                                 MemAccessDesc(MemLocation(MEM_LOCATION_TYPE_DEVICE, 1), PROT_READWRITE))
    cu.cuMemSetAccess(va.value, GRAN, access, 2)
    cu.cuFlushGPUDirectRDMAWrites(FLUSH_TARGET_CURRENT_CTX, FLUSH_TO_OWNER)
    m = cu.module(WAIT_MODULE)
    cu.launch(cu.function(m, "store"), s, pin, 5)
    cu.cuStreamSynchronize(s)
    cu.cuCtxPushCurrent(cu.context(1))
    cu.cuCtxPopCurrent(None)
    cu.cuStreamDestroy(s)
    cu.cuCtxSetCurrent(None)
    return {"pid": os.getpid(), "stream": s, "tid": threading.get_native_id()}


def scenario_log_spam(cu, calls=1500):
    cu.use()
    buf = ctypes.create_string_buffer(64)
    for _ in range(calls):
        cu.cuMemcpy(addr(buf), addr(buf) + 32, 16)  # HtoH: no worker, as fast as it gets
    return {"pid": os.getpid(), "calls": calls}


def scenario_modules(cu):
    cu.use()
    r = {}
    m = c_void_p()
    r["cubin"] = cu.rc.cuModuleLoadData(byref(m), b"\x7fELF\x02\x01\x01")
    r["ptx"] = cu.rc.cuModuleLoadData(byref(m), b"//\n.version 8.0\n.target sm_90\n")
    r["malformed"] = [cu.rc.cuModuleLoadData(byref(m), text.encode()) for text in (
        "FAKECUDA-MODULE\nkernel k no_such_kind\n", "FAKECUDA-MODULE\nglobal g zero\n",
        "FAKECUDA-MODULE\nkernel k copy_global missing\n", "FAKECUDA-MODULE\nwhat is this\n")]
    mod = cu.module("FAKECUDA-MODULE\nglobal pyshmem_d_state 256\nkernel spin wait_flag\nkernel store store_u64\n")
    g, f, size = c_uint64(), c_void_p(), c_size_t()
    r["global_missing"] = cu.rc.cuModuleGetGlobal(byref(g), byref(size), mod, b"other")
    r["function_missing"] = cu.rc.cuModuleGetFunction(byref(f), mod, b"other")
    cu.cuModuleGetGlobal(byref(g), byref(size), mod, b"pyshmem_d_state")
    r["global_size"] = size.value
    r["library_global"] = cu.rc.cuLibraryGetGlobal(byref(g), byref(size), None, b"pyshmem_d_state")
    # parameters are copied at launch: overwriting them afterwards changes nothing
    store = cu.function(mod, "store")
    out = cu.pinned(8)
    s = cu.stream(STREAM_NON_BLOCKING)
    cells = cu.launch(store, s, out, 1234)
    cells[1].value = 999
    r["pending_after_launch"] = cu.pending()
    r["query_after_launch"] = cu.rc.cuStreamQuery(s)
    cu.cuStreamSynchronize(s)
    r["stored"] = ctypes.c_uint64.from_address(out).value
    r["query_after_sync"] = cu.rc.cuStreamQuery(s)
    # launches into the global, as pyshmem's kernels would read pyshmem_d_state
    cu.launch(store, 0, g.value + 8, 77)
    cu.cuStreamSynchronize(0)
    r["global_word1"] = ctypes.c_uint64.from_address(g.value + 8).value
    # bad launches and streams
    params = (c_void_p * 2)()
    r["launch_null_params"] = cu.rc.cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, None, None, None)
    r["launch_zero_grid"] = cu.rc.cuLaunchKernel(store, 0, 1, 1, 1, 1, 1, 0, None, params, None)
    r["launch_bad_function"] = cu.rc.cuLaunchKernel(c_void_p(0x99), 1, 1, 1, 1, 1, 1, 0, None, params, None)
    c1, c2 = c_uint64(out), c_uint64(1)
    good = (c_void_p * 2)(addr(c1), addr(c2))
    r["launch_bad_stream"] = cu.rc.cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, c_void_p(0x777), good, None)
    r["copy_bad_stream"] = cu.rc.cuMemcpyAsync(out, out, 8, c_void_p(5))
    r["sync_bad_stream"] = cu.rc.cuStreamSynchronize(c_void_p(5))
    r["destroy_legacy"] = cu.rc.cuStreamDestroy(None)
    r["distinct_streams"] = len({cu.stream(0) for _ in range(5)})
    # cuStreamDestroy lets pending work finish; the handle is gone afterwards
    s2 = cu.stream(0)
    ctypes.c_uint64.from_address(out).value = 0
    cu.launch(store, s2, out, 4321)
    cu.cuStreamDestroy(s2)
    r["after_destroy"] = ctypes.c_uint64.from_address(out).value
    r["destroyed_handle"] = cu.rc.cuStreamSynchronize(s2)
    # unload frees; the handles die with it
    cu.cuModuleUnload(mod)
    r["after_unload"] = [cu.rc.cuModuleGetFunction(byref(f), mod, b"store"), cu.rc.cuModuleUnload(mod)]
    return r


def scenario_sticky(cu):
    """A wait_flag kernel that times out (FAKE_CUDA_KERNEL_TIMEOUT_S) is a sticky error."""
    cu.use()
    mod = cu.module(WAIT_MODULE)
    flag = cu.pinned(8)
    s = cu.stream(STREAM_NON_BLOCKING)
    t0 = time.monotonic()
    cu.launch(cu.function(mod, "spin"), s, flag)
    r = {"launch_returned_s": time.monotonic() - t0}
    r["sync"] = cu.rc.cuStreamSynchronize(s)
    r["waited_s"] = time.monotonic() - t0
    r["ctx_sync"] = cu.rc.cuCtxSynchronize()
    r["later_alloc"] = cu.rc.cuMemAlloc(byref(c_uint64()), 64)
    return r


def scenario_exit_pending(cu):
    """Exit with work still pending (a kernel spinning for a minute, copies queued behind
    it): the process must end promptly and cleanly."""
    cu.use()
    mod = cu.module(WAIT_MODULE)
    flag = cu.pinned(8)
    dev = cu.alloc(1 << 20)
    cu.launch(cu.function(mod, "spin"), 0, flag)
    for _ in range(5):
        cu.cuMemsetD8(dev, 1, 1 << 20)
    s = cu.stream(STREAM_NON_BLOCKING)
    cu.cuMemsetD8Async(dev, 2, 1 << 20, s)
    return {"pending": cu.pending()}


def scenario_events(cu):
    """Events: complete once the work enqueued before their latest record ran; a
    re-record replaces the earlier one; destroying one with a record pending is safe."""
    cu.use()
    mod = cu.module("FAKECUDA-MODULE\nkernel spin wait_flag\n")
    spin = cu.function(mod, "spin")
    flag = cu.pinned(8)
    s = cu.stream(STREAM_NON_BLOCKING)
    ev = c_void_p()
    cu.cuEventCreate(byref(ev), 0x2)  # CU_EVENT_DISABLE_TIMING
    out = {"never_recorded": cu.rc.cuEventQuery(ev)}
    cu.cuEventRecord(ev, s)
    cu.cuStreamSynchronize(s)
    out["recorded_idle"] = cu.rc.cuEventQuery(ev)
    cu.launch(spin, s, flag)
    cu.cuEventRecord(ev, s)
    time.sleep(0.05)
    out["behind_kernel"] = cu.rc.cuEventQuery(ev)
    other = c_void_p()
    cu.cuEventCreate(byref(other), 0)
    cu.cuEventRecord(other, 0)  # the legacy stream, not ordered after a non-blocking stream
    cu.cuStreamSynchronize(0)
    out["other_stream"] = cu.rc.cuEventQuery(other)
    doomed = c_void_p()
    cu.cuEventCreate(byref(doomed), 0)
    cu.cuEventRecord(doomed, s)
    out["destroy_pending"] = cu.rc.cuEventDestroy(doomed)
    ctypes.c_uint64.from_address(flag).value = 1
    cu.cuStreamSynchronize(s)
    out["after_kernel"] = cu.rc.cuEventQuery(ev)
    out["destroyed_query"] = cu.rc.cuEventQuery(doomed)
    out["bad_stream"] = cu.rc.cuEventRecord(ev, c_void_p(0xbad0))
    cu.cuEventDestroy(ev)
    out["double_destroy"] = cu.rc.cuEventDestroy(ev)
    return out


SCENARIOS = {name[len("scenario_"):]: fn for name, fn in globals().items() if name.startswith("scenario_")}


def _main(argv):
    cu = Cuda(argv[1])
    print(json.dumps(SCENARIOS[argv[2]](cu)), flush=True)


# ---- the tests ----

FAKE_ENV_KEYS = ("FAKE_CUDA_",)


def _env(**fake):
    env = {k: v for k, v in os.environ.items() if not k.startswith(FAKE_ENV_KEYS)}
    env.update({k: str(v) for k, v in fake.items()})
    return env


def run(driver, scenario, timeout=60, **fake):
    """Runs a scenario in a fresh process with FAKE_CUDA_* settings; returns its JSON."""
    proc = subprocess.run([sys.executable, __file__, driver, scenario], capture_output=True, text=True,
                          timeout=timeout, env=_env(**fake))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_only_cuGetProcAddress_is_exported(fake_driver):
    lib = ctypes.CDLL(fake_driver)
    for name in ("cuGetProcAddress_v2", "fake_cuda_set_current_device", "fake_cuda_current_device",
                 "fake_cuda_pending"):
        assert hasattr(lib, name), name
    for name in ("cuInit", "cuMemcpy", "cuMemcpy_v2", "cuStreamCreate", "cuLaunchKernel"):
        assert not hasattr(lib, name), name
    out = subprocess.run(["nm", "-D", "--defined-only", fake_driver], capture_output=True, text=True)
    if out.returncode == 0:
        exported = {line.split()[-1] for line in out.stdout.splitlines()}
        assert {s for s in exported if s.startswith("cu")} == {"cuGetProcAddress_v2"}, exported


def test_pageable_memcpy_returns_before_the_data_lands(fake_driver):
    r = run(fake_driver, "pageable_h2d", FAKE_CUDA_DELAY_US=10000)
    assert r["stale"] >= 1, r  # a non-blocking stream saw the old bytes at least once
    assert r["bad_after_sync"] == 0, r  # cuStreamSynchronize(0) completes it, with the snapshot
    assert r["max_pending"] >= 1, r


def test_memset_returns_before_the_fill(fake_driver):
    r = run(fake_driver, "memset", FAKE_CUDA_DELAY_US=10000)
    assert r["early"] >= 1, r
    assert r["bad_after_sync"] == 0 and r["pinned_early"] == 0 and r["async_done"], r


def test_fake_cuda_sync_restores_synchronous_behaviour(fake_driver):
    r = run(fake_driver, "pageable_h2d", FAKE_CUDA_DELAY_US=10000, FAKE_CUDA_SYNC=1)
    assert r["stale"] == 0 and r["bad_after_sync"] == 0 and r["max_pending"] == 0, r
    r = run(fake_driver, "memset", FAKE_CUDA_DELAY_US=10000, FAKE_CUDA_SYNC=1)
    assert r["early"] == 0 and r["bad_after_sync"] == 0 and r["async_done"], r
    r = run(fake_driver, "copy_global", FAKE_CUDA_SYNC=1)
    assert r["nonblocking"] == 0 and r["max_pending_after_launch"] == 0, r


def test_legacy_stream_serialisation(fake_driver):
    r = run(fake_driver, "legacy_order", FAKE_CUDA_DELAY_US=1000)
    on_legacy = r["on_legacy"]
    assert on_legacy["blocked"] == {"legacy_memcpy": True, "legacy_async": True, "CU_STREAM_LEGACY": True,
                                    "blocking": True, "per_thread": True, "nonblocking": False}, r
    assert on_legacy["query"] == NOT_READY and on_legacy["all_done"], r
    assert r["on_blocking"]["blocked"] == {"legacy_memcpy": True} and r["on_blocking"]["all_done"], r
    assert r["on_blocking2"]["blocked"] == {"other_blocking": False, "nonblocking": False}, r
    assert r["on_blocking2"]["all_done"], r
    assert r["transitive"] and r["transitive_released"], r
    assert r["on_nonblocking"]["blocked"] == {"legacy_memcpy": False, "blocking": False}, r
    assert r["on_nonblocking"]["all_done"], r


def test_copy_global_sees_a_legacy_copy_only_once_ordered(fake_driver):
    r = run(fake_driver, "copy_global", FAKE_CUDA_DELAY_US=10000)
    assert r["size"] == 64, r
    assert r["nonblocking"] >= 1, r  # not ordered after the copy: it may read the old bytes
    assert r["legacy"] == 0 and r["blocking"] == 0, r
    assert r["max_pending_after_launch"] >= 1, r  # the launch returned before the kernel ran


def test_context_stack_and_invalid_context(fake_driver):
    r = run(fake_driver, "contexts", FAKE_CUDA_DEVICES=2)
    assert r["none_current_device"] == -1
    assert r["no_ctx"] == {name: INVALID_CONTEXT for name in r["no_ctx"]}, r
    assert r["no_ctx_allowed"] == {name: SUCCESS for name in r["no_ctx_allowed"]}, r
    assert r["stack"] == [1, 0, True, 0, -INVALID_CONTEXT, INVALID_CONTEXT], r
    assert r["other_thread"] == [-1, INVALID_CONTEXT] and r["this_thread"] == 1, r
    assert r["after_null"] == -1 and r["hook_rc"] == SUCCESS and r["hook"] == [1, True, 1], r
    assert r["hook_bad_device"] == INVALID_DEVICE, r
    assert r["peer"] == [1, 1, 0] and r["peer_bad"] == INVALID_DEVICE, r
    assert r["bad_ctx"] == INVALID_CONTEXT, r


def test_gdr_attributes_and_the_rdma_flag(fake_driver):
    r = run(fake_driver, "gdr")
    assert r == {"attr_vmm": 1, "attr_gdr": 1, "create_rdma": SUCCESS, "create_plain": SUCCESS}, r
    r = run(fake_driver, "gdr", FAKE_CUDA_GDR=0)
    assert r == {"attr_vmm": 0, "attr_gdr": 0, "create_rdma": NOT_SUPPORTED, "create_plain": SUCCESS}, r


def test_fake_modules_and_launches(fake_driver):
    r = run(fake_driver, "modules", FAKE_CUDA_DELAY_US=20000)
    assert r["cubin"] == NOT_SUPPORTED and r["ptx"] == NOT_SUPPORTED, r
    assert r["malformed"] == [INVALID_IMAGE] * 4, r
    assert r["global_missing"] == NOT_FOUND and r["function_missing"] == NOT_FOUND, r
    assert r["global_size"] == 256 and r["library_global"] == NOT_SUPPORTED, r
    assert r["pending_after_launch"] >= 1 and r["query_after_launch"] == NOT_READY, r
    assert r["stored"] == 1234 and r["query_after_sync"] == SUCCESS, r  # params copied at launch
    assert r["global_word1"] == 77, r
    assert r["launch_null_params"] == INVALID_VALUE and r["launch_zero_grid"] == INVALID_VALUE, r
    assert r["launch_bad_function"] == INVALID_HANDLE and r["launch_bad_stream"] == INVALID_HANDLE, r
    assert r["copy_bad_stream"] == INVALID_HANDLE and r["sync_bad_stream"] == INVALID_HANDLE, r
    assert r["destroy_legacy"] == INVALID_HANDLE and r["distinct_streams"] == 5, r
    assert r["after_destroy"] == 4321 and r["destroyed_handle"] == INVALID_HANDLE, r
    assert r["after_unload"] == [INVALID_HANDLE, INVALID_HANDLE], r


def test_events_complete_with_the_work_recorded_before_them(fake_driver):
    r = run(fake_driver, "events", FAKE_CUDA_DELAY_US=0)
    assert r == {"never_recorded": SUCCESS, "recorded_idle": SUCCESS, "behind_kernel": NOT_READY,
                 "other_stream": SUCCESS, "destroy_pending": SUCCESS, "after_kernel": SUCCESS,
                 "destroyed_query": INVALID_HANDLE, "bad_stream": INVALID_HANDLE,
                 "double_destroy": INVALID_HANDLE}, r


def test_kernel_timeout_is_a_sticky_error(fake_driver):
    r = run(fake_driver, "sticky", FAKE_CUDA_KERNEL_TIMEOUT_S="0.3", FAKE_CUDA_DELAY_US=0)
    assert r["launch_returned_s"] < 0.2, r
    assert r["sync"] == LAUNCH_TIMEOUT and r["waited_s"] >= 0.3, r
    assert r["ctx_sync"] == LAUNCH_TIMEOUT and r["later_alloc"] == LAUNCH_TIMEOUT, r


def test_exit_with_pending_work_is_clean(fake_driver):
    from latency_bounds import assert_within  # here: this file also runs as a script, without tests/ on the path

    t0 = time.monotonic()
    r = run(fake_driver, "exit_pending", timeout=30, FAKE_CUDA_KERNEL_TIMEOUT_S=60)
    assert r["pending"] >= 6, r
    print(f"exit with pending work: {time.monotonic() - t0:.2f} s")
    # cap: well under the pending kernels' FAKE_CUDA_KERNEL_TIMEOUT_S=60, which a wait would reach
    assert_within("fake_exit_pending", time.monotonic() - t0, str(r), cap=30)


LINE = re.compile(r"^(\d+) (\d+) (-?\d+) (cu\w+)((?: [\w.]+=\S*)*) rc=(-?\d+)$")


def _parse_log(path):
    lines = path.read_text().splitlines()
    parsed = []
    for line in lines:
        m = LINE.match(line)
        assert m, f"malformed log line: {line!r}"
        details = dict(kv.split("=", 1) for kv in m.group(5).split())
        parsed.append({"pid": int(m.group(1)), "tid": int(m.group(2)), "dev": int(m.group(3)), "name": m.group(4),
                       "rc": int(m.group(6)), **details})
    return parsed


def test_call_log_format(fake_driver, tmp_path):
    log = tmp_path / "calls.log"
    r = run(fake_driver, "log", FAKE_CUDA_LOG=log, FAKE_CUDA_DEVICES=2)
    calls = _parse_log(log)
    assert {c["pid"] for c in calls} == {r["pid"]} and {c["tid"] for c in calls} == {r["tid"]}
    assert all(c["rc"] == 0 for c in calls), [c for c in calls if c["rc"]]

    def one(name, **want):
        found = [c for c in calls if c["name"] == name and all(c.get(k) == v for k, v in want.items())]
        assert found, (name, want, [c for c in calls if c["name"] == name])
        return found[0]

    assert calls[0]["name"] == "cuInit" and calls[0]["dev"] == -1
    assert one("cuCtxSetCurrent", ctx_dev="0")["dev"] == -1  # the device before the call
    stream = hex(r["stream"])
    assert one("cuStreamCreate", flags="0x1")["stream"] == stream
    for kind, nbytes in (("HtoD-pageable", "4096"), ("HtoD-pinned", "4096"), ("DtoH", "4096"), ("HtoH", "100")):
        c = one("cuMemcpy", kind=kind, bytes=nbytes, stream="0x0")
        assert c["dev"] == 0 and c["wait"] == ("0" if kind == "HtoD-pageable" else "1"), c
    one("cuMemcpyAsync", kind="DtoD", bytes="1024", stream=stream, wait="0")
    one("cuMemsetD8", kind="D", bytes="4096", stream="0x0", wait="0")
    one("cuMemsetD8Async", kind="D", bytes="512", stream=stream)
    one("cuMemCreate", dev="1", rdma="1")
    one("cuMemSetAccess", devices="0,1")
    one("cuFlushGPUDirectRDMAWrites", target="0", scope="100")
    one("cuLaunchKernel", function="store", kind="store_u64", stream=stream)
    assert one("cuCtxPushCurrent", ctx_dev="1")["dev"] == 0
    assert one("cuCtxPopCurrent", ctx_dev="1")["dev"] == 1
    assert one("cuCtxSetCurrent", ctx_dev="-1")["dev"] == 0
    one("cuStreamDestroy", stream=stream)


def test_call_log_shared_by_processes(fake_driver, tmp_path):
    log = tmp_path / "shared.log"
    procs = [subprocess.Popen([sys.executable, __file__, fake_driver, "log_spam"], stdout=subprocess.PIPE, text=True,
                              env=_env(FAKE_CUDA_LOG=log)) for _ in range(3)]
    results = [json.loads(p.communicate(timeout=60)[0].strip().splitlines()[-1]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    calls = _parse_log(log)  # every line whole
    for res in results:
        mine = [c for c in calls if c["pid"] == res["pid"] and c["name"] == "cuMemcpy"]
        assert len(mine) == res["calls"] and all(c["kind"] == "HtoH" for c in mine)


if __name__ == "__main__":
    _main(sys.argv)
