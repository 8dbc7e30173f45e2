"""The one table of device-API operations: name, arguments, result, cooperation.

Every backend of ``pyshmem.device`` is made from this table, each row by the factory
of its ``lowering`` kind: the simulator's functions (``sim.py``), the GPU path's Numba
intrinsics (``gpu.py``, ``gpu_waits.py``) and the extern "C" shims they call
(``_shims.py``); <nvshmem.h>'s typed families are generated from the ``c`` column
(csrc/nvshmem/gen_nvshmem.py). tests/unit/test_device_table.py checks that each backend
has exactly the table's functions and parameters.

Arguments are named as in NVSHMEM's device API with Python-style arrays in place of
pointer + count: ``dest``/``src`` are arrays (a slice gives an offset and a length),
``sig`` is a 1-element uint64 array, ``ivar`` a 1-element integer array, scalars are
plain numbers. ``coop`` operations also exist as ``<name>_warp`` and ``<name>_block``:
all threads of the warp/block call them with the same arguments and share the work.
"""

import re
from collections import namedtuple
from pathlib import Path

# `c`: the operation's C signature as NVSHMEM spells it (csrc/nvshmem/gen_nvshmem.py
# generates <nvshmem.h>'s typed families from it at build time), or None when NVSHMEM
# has no such device function. See C below.
# `lowering`: how the GPU path reaches the C++ function, one of LOWERINGS; the Numba
# intrinsic (gpu.py) and the extern "C" shim (_shims.py) of a row are made by the
# factory of its lowering, so an operation of an existing kind is one row.
Op = namedtuple("Op", "name args result coop doc c lowering", defaults=(None, None))

# The lowering kinds: what the shim takes and how the intrinsic passes it.
LOWERINGS = {
    "query": "no arguments, an int32 result (my_pe, n_pes)",
    "noarg": "no arguments, no result; cooperative variants (fence, quiet, barriers)",
    "bytes": "two arrays as byte pointers and the smaller byte count, a PE (put/get and nbi)",
    "value_put": "an array's first element stored by value, one shim per element type (p)",
    "value_get": "an array's first element fetched by value, one shim per element type (g)",
    "strided": "two arrays, element strides, a count and the element size (iput/iget)",
    "signal_put": "bytes, then a signal word update (put_signal and nbi)",
    "signal": "a signal word with scalars (signal_op, signal_fetch, signal_wait_until)",
    "wait": "one typed variable, a comparison and a value (wait_until, test)",
    "wait_set": "typed arrays of variables, optional status and indices (wait_until_all ...)",
    "team_query": "team handles and PE numbers in, an int32 out",
    "team_sync": "a team handle; cooperative variants (sync, barrier)",
    "broadcast": "a team, two arrays as bytes, a root",
    "gather": "a team, dest with its capacity in bytes, src in bytes (collect, fcollect, alltoall)",
    "reduce": "a team and two typed arrays, one shim per element type",
    "reducescatter": "a team and two typed arrays with their lengths, one shim per element type",
    "amo": "a typed word and typed operands, one shim per element type",
}

# types: None (one untyped function, nvshmem_<name>) or a class of NVSHMEM's type tables
# (TYPE_CLASSES in gen_nvshmem.py: rma, amo, amo_ext, amo_bit, wait, reduce, reduce_bit):
# nvshmem_<TYPENAME>_<name> for each of its types. params/ret use T for the element type.
# mem: the name of the byte form (nvshmem_putmem...), whose T* become void*. prefix:
# "nvshmemx" where NVSHMEM puts the base name there. status: NVSHMEM returns int (0) where
# pyshmem returns void. stream: NVSHMEM also has the host form nvshmemx_<name>_on_stream
# (stream work that runs in the stream's order: host work in programs built for the CPU, a
# one-block kernel in programs built for the GPU). host: also callable from the host code
# of a program built for the GPU (it touches no peer's GPU memory); the others are device
# functions there.
C = namedtuple("C", "types params ret mem prefix status stream host", defaults=(None, "nvshmem", False, False, False))

_RMA = "T* dest, const T* source, size_t nelems, int pe"
_SIG = "T* dest, const T* source, size_t nelems, uint64_t* sig_addr, uint64_t signal, int sig_op, int pe"
_STRIDED = "T* dest, const T* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe"
_TEAM_RMA = "nvshmem_team_t team, T* dest, const T* source, size_t nelems"
_WAIT_SET = "T* ivars, size_t nelems, const int* status, int cmp, T cmp_value"
_WAIT_SOME = "T* ivars, size_t nelems, size_t* indices, const int* status, int cmp, T cmp_value"


def _reduce_ops():
    """[(name, kind)] of PYSHMEM_REDUCE_OPS, the one list of reduction operators
    (pyshmem/types.h), read from the header because this table is also run at build time,
    before the compiled module exists (csrc/nvshmem/gen_nvshmem.py)."""
    here = Path(__file__).resolve().parents[1]
    for include in (here / "include", here.parent / "csrc" / "include"):  # installed, then source tree
        header = include / "pyshmem" / "types.h"
        if header.is_file():
            m = re.search(r"#define PYSHMEM_REDUCE_OPS\(X\)((?:.*\\\n)*.*)", header.read_text())
            return re.findall(r'X\(\w+, "(\w+)", "(\w+)"\)', m.group(1))
    raise FileNotFoundError("pyshmem/types.h is missing from this installation; reinstall pyshmem")


REDUCE_OPS = _reduce_ops()


def _wait_set_op(verb, mode, vector):
    """The row of <verb>_<mode>[_vector]: waits and tests on arrays of local variables
    (pyshmem/device/wait_vector.cuh). status is None or an int32 array with one entry per
    ivar (non-zero: leave it out); the _vector forms take one comparison value per ivar;
    *_any return the lowest satisfying index, or -1 (test_any: none satisfies it now; both:
    the wait set is empty);
    *_some write the satisfying indices into indices (an int64/uint64 array as long as
    ivars) and return how many."""
    wait = verb == "wait_until"
    value = "values" if vector else "value"
    args = ("ivars",) + (("indices",) if mode == "some" else ()) + ("cmp", value, "status")
    result = {"all": None if wait else "int32", "any": "int64", "some": "int64"}[mode]
    what = {"all": "every ivar not excluded satisfies", "any": "an ivar satisfies",
            "some": "at least one ivar satisfies"}[mode]
    doc = ("Wait until " if wait else "Test whether ") + what + " cmp with " + ("its own value" if vector else "value")
    doc += {"all": "." if wait else " (1 or 0).", "any": "; its index, or -1 (none).",
            "some": "; how many (in indices)."}[mode]
    params = _WAIT_SOME if mode == "some" else _WAIT_SET
    if vector:
        params = params.replace("T cmp_value", "T* cmp_values")
    ret = {"all": "void" if wait else "int", "any": "size_t", "some": "size_t"}[mode]
    # NVSHMEM has the stream forms of wait_until_all[_vector] only.
    return Op(f"{verb}_{mode}{'_vector' if vector else ''}", args, result, False, doc,
              c=C("wait", params, ret, stream=wait and mode == "all"), lowering="wait_set")

OPS = (
    Op("my_pe", (), "int32", False, "This PE's number.",
       c=C(None, "", "int", host=True), lowering="query"),
    Op("n_pes", (), "int32", False, "Number of PEs.",
       c=C(None, "", "int", host=True), lowering="query"),
    Op("put", ("dest", "src", "pe"), None, True, "Copy src into dest on pe (min of both lengths).",
       c=C("rma", _RMA, "void", mem="putmem", stream=True), lowering="bytes"),
    Op("get", ("dest", "src", "pe"), None, True, "Copy src on pe into local dest.",
       c=C("rma", _RMA, "void", mem="getmem", stream=True), lowering="bytes"),
    Op("put_nbi", ("dest", "src", "pe"), None, True, "Non-blocking put; complete after quiet().",
       c=C("rma", _RMA, "void", mem="putmem_nbi", stream=True), lowering="bytes"),
    Op("get_nbi", ("dest", "src", "pe"), None, True, "Non-blocking get; complete after quiet().",
       c=C("rma", _RMA, "void", mem="getmem_nbi", stream=True), lowering="bytes"),
    Op("p", ("dest", "value", "pe"), None, False, "Store value into dest[0] on pe.",
       c=C("rma", "T* dest, T value, int pe", "void", stream=True), lowering="value_put"),
    Op("g", ("src", "pe"), "element", False, "Return src[0] on pe.",
       c=C("rma", "const T* source, int pe", "T"), lowering="value_get"),
    Op("iput", ("dest", "src", "dst", "sst", "nelems", "pe"), None, False, "Strided put (strides in elements).",
       c=C("rma", _STRIDED, "void"), lowering="strided"),
    Op("iget", ("dest", "src", "dst", "sst", "nelems", "pe"), None, False, "Strided get (strides in elements).",
       c=C("rma", _STRIDED, "void"), lowering="strided"),
    Op("put_signal", ("dest", "src", "sig", "signal", "sig_op", "pe"), None, True,
       "Put, then update sig on pe (SIGNAL_SET/ADD); the data is visible before the signal.",
       c=C("rma", _SIG, "void", mem="putmem_signal", stream=True), lowering="signal_put"),
    Op("put_signal_nbi", ("dest", "src", "sig", "signal", "sig_op", "pe"), None, True,
       "Non-blocking put_signal.",
       c=C("rma", _SIG, "void", mem="putmem_signal_nbi", stream=True), lowering="signal_put"),
    Op("signal_op", ("sig", "signal", "sig_op", "pe"), None, False, "Update sig on pe with SIGNAL_SET/ADD.",
       c=C(None, "uint64_t* sig_addr, uint64_t signal, int sig_op, int pe", "void", prefix="nvshmemx", stream=True), lowering="signal"),
    Op("signal_fetch", ("sig",), "uint64", False, "The local value of sig (acquire).",
       c=C(None, "const uint64_t* sig_addr", "uint64_t"), lowering="signal"),
    Op("signal_wait_until", ("sig", "cmp", "value"), "uint64", False,
       "Wait until the local sig compares cmp to value; returns its value.",
       c=C(None, "uint64_t* sig_addr, int cmp, uint64_t cmp_value", "uint64_t", stream=True), lowering="signal"),
    Op("wait_until", ("ivar", "cmp", "value"), None, False, "Wait until the local ivar[0] compares cmp to value.",
       c=C("wait", "T* ivar, int cmp, T cmp_value", "void", stream=True), lowering="wait"),
    Op("test", ("ivar", "cmp", "value"), "int32", False, "1 when ivar[0] compares cmp to value, else 0.",
       c=C("wait", "T* ivar, int cmp, T cmp_value", "int"), lowering="wait"),
) + tuple(_wait_set_op(verb, mode, vector) for verb in ("wait_until", "test") for mode in ("all", "any", "some")
          for vector in (False, True)) + (
    Op("atomic_fetch", ("src", "pe"), "element", False, "Atomically read src[0] on pe.",
       c=C("amo_ext", "const T* source, int pe", "T"), lowering="amo"),
    Op("atomic_set", ("dest", "value", "pe"), None, False, "Atomically store value.",
       c=C("amo_ext", "T* dest, T value, int pe", "void"), lowering="amo"),
    Op("atomic_swap", ("dest", "value", "pe"), "element", False, "Store value, return the previous value.",
       c=C("amo_ext", "T* dest, T value, int pe", "T"), lowering="amo"),
    Op("atomic_compare_swap", ("dest", "cond", "value", "pe"), "element", False,
       "Store value if dest[0] == cond; return the previous value.",
       c=C("amo", "T* dest, T cond, T value, int pe", "T"), lowering="amo"),
    Op("atomic_fetch_add", ("dest", "value", "pe"), "element", False, "Add, return the previous value.",
       c=C("amo", "T* dest, T value, int pe", "T"), lowering="amo"),
    Op("atomic_add", ("dest", "value", "pe"), None, False, "Add.",
       c=C("amo", "T* dest, T value, int pe", "void"), lowering="amo"),
    Op("atomic_fetch_inc", ("dest", "pe"), "element", False, "Add 1, return the previous value.",
       c=C("amo", "T* dest, int pe", "T"), lowering="amo"),
    Op("atomic_inc", ("dest", "pe"), None, False, "Add 1.",
       c=C("amo", "T* dest, int pe", "void"), lowering="amo"),
    Op("atomic_fetch_and", ("dest", "value", "pe"), "element", False, "Bitwise and, return the previous value.",
       c=C("amo_bit", "T* dest, T value, int pe", "T"), lowering="amo"),
    Op("atomic_and", ("dest", "value", "pe"), None, False, "Bitwise and.",
       c=C("amo_bit", "T* dest, T value, int pe", "void"), lowering="amo"),
    Op("atomic_fetch_or", ("dest", "value", "pe"), "element", False, "Bitwise or, return the previous value.",
       c=C("amo_bit", "T* dest, T value, int pe", "T"), lowering="amo"),
    Op("atomic_or", ("dest", "value", "pe"), None, False, "Bitwise or.",
       c=C("amo_bit", "T* dest, T value, int pe", "void"), lowering="amo"),
    Op("atomic_fetch_xor", ("dest", "value", "pe"), "element", False, "Bitwise xor, return the previous value.",
       c=C("amo_bit", "T* dest, T value, int pe", "T"), lowering="amo"),
    Op("atomic_xor", ("dest", "value", "pe"), None, False, "Bitwise xor.",
       c=C("amo_bit", "T* dest, T value, int pe", "void"), lowering="amo"),
    Op("fence", (), None, False, "Order this thread's operations to each PE.",
       c=C(None, "", "void", host=True), lowering="noarg"),
    Op("quiet", (), None, False, "Complete this thread's operations.",
       c=C(None, "", "void", stream=True, host=True), lowering="noarg"),
    Op("barrier_all", (), None, True, "quiet, then barrier over all PEs (one caller per PE, or a whole warp/block).",
       c=C(None, "", "void", stream=True, host=True), lowering="noarg"),
    Op("sync_all", (), None, True, "Barrier over all PEs without quiet.",
       c=C(None, "", "void", stream=True, host=True), lowering="noarg"),
    # Teams and collectives. `team` is a team handle: int(pyshmem.TEAM_WORLD), int(t) of a
    # split's result... Every member calls a collective (one thread, warp or block per PE).
    Op("team_my_pe", ("team",), "int32", False, "This PE's number in team, or -1.",
       c=C(None, "nvshmem_team_t team", "int", host=True), lowering="team_query"),
    Op("team_n_pes", ("team",), "int32", False, "Number of PEs in team, or -1.",
       c=C(None, "nvshmem_team_t team", "int", host=True), lowering="team_query"),
    Op("team_translate_pe", ("src_team", "pe", "dest_team"), "int32", False,
       "PE pe of src_team numbered in dest_team, or -1.",
       c=C(None, "nvshmem_team_t src_team, int src_pe, nvshmem_team_t dest_team", "int", host=True), lowering="team_query"),
    Op("sync", ("team",), None, True, "Barrier over the team's PEs without quiet.",
       c=C(None, "nvshmem_team_t team", "void", prefix="nvshmem_team", status=True, stream=True, host=True), lowering="team_sync"),
    Op("barrier", ("team",), None, True, "quiet, then barrier over the team's PEs.",
       c=C(None, "nvshmem_team_t team", "void", status=True, stream=True, host=True), lowering="team_sync"),
    Op("broadcast", ("team", "dest", "src", "root"), None, True,
       "dest on every member <- src on team PE root (min of both lengths).",
       c=C("rma", _TEAM_RMA + ", int pe_root", "void", mem="broadcastmem", status=True, stream=True), lowering="broadcast"),
    Op("collect", ("team", "dest", "src"), None, True,
       "dest <- the members' src back to back in team order (each member's length may differ).",
       c=C("rma", _TEAM_RMA, "void", mem="collectmem", status=True, stream=True), lowering="gather"),
    Op("fcollect", ("team", "dest", "src"), None, True, "dest[j*len(src):] <- member j's src.",
       c=C("rma", _TEAM_RMA, "void", mem="fcollectmem", status=True, stream=True), lowering="gather"),
    Op("alltoall", ("team", "dest", "src"), None, True,
       "Block j of src (len(src) / team size elements) -> block (my team PE) of member j's dest.",
       c=C("rma", _TEAM_RMA, "void", mem="alltoallmem", status=True, stream=True), lowering="gather"),
) + tuple(
    Op(f"{r}_reduce", ("team", "dest", "src"), None, True,
       f"dest[i] = {r} over the members of src[i] (min of both lengths)"
       + (" (integer arrays)" if kind == "bitwise" else "") + ".",
       C("reduce_bit" if kind == "bitwise" else "reduce", "nvshmem_team_t team, T* dest, const T* source, size_t nreduce",
         "void", status=True, stream=True), lowering="reduce")
    for r, kind in REDUCE_OPS
) + tuple(
    Op(f"{r}_reducescatter", ("team", "dest", "src"), None, True,
       f"dest[i] = {r} over the members of their src[my team PE * len(dest) + i]; src holds len(dest) "
       "elements per member" + (" (integer arrays)" if kind == "bitwise" else "") + "; dest and src must not overlap.",
       C("reduce_bit" if kind == "bitwise" else "reduce", "nvshmem_team_t team, T* dest, const T* source, size_t nreduce",
         "void", status=True, stream=True), lowering="reducescatter")
    for r, kind in REDUCE_OPS
)


def all_names():
    """Every function name the table defines, cooperative variants included."""
    names = []
    for op in OPS:
        names.append(op.name)
        if op.coop:
            names += [op.name + "_warp", op.name + "_block"]
    return names
