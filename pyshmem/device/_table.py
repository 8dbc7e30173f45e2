"""The one table of device-API operations: name, arguments, result, cooperation.

Every backend of ``pyshmem.device`` is generated from or checked against this table:
the simulator implementation (``pyshmem/device/sim.py``) must provide exactly these
functions with these parameters (tests/unit/test_device_table.py checks it), and the
GPU path (extern "C" shims declared with ``cuda.declare_device``, a later increment)
takes its symbols and signatures from it too.

Arguments are named as in NVSHMEM's device API with Python-style arrays in place of
pointer + count: ``dest``/``src`` are arrays (a slice gives an offset and a length),
``sig`` is a 1-element uint64 array, ``ivar`` a 1-element integer array, scalars are
plain numbers. ``coop`` operations also exist as ``<name>_warp`` and ``<name>_block``:
all threads of the warp/block call them with the same arguments and share the work.
"""

from collections import namedtuple

Op = namedtuple("Op", "name args result coop doc")

OPS = (
    Op("my_pe", (), "int32", False, "This PE's number."),
    Op("n_pes", (), "int32", False, "Number of PEs."),
    Op("put", ("dest", "src", "pe"), None, True, "Copy src into dest on pe (min of both lengths)."),
    Op("get", ("dest", "src", "pe"), None, True, "Copy src on pe into local dest."),
    Op("put_nbi", ("dest", "src", "pe"), None, True, "Non-blocking put; complete after quiet()."),
    Op("get_nbi", ("dest", "src", "pe"), None, True, "Non-blocking get; complete after quiet()."),
    Op("p", ("dest", "value", "pe"), None, False, "Store value into dest[0] on pe."),
    Op("g", ("src", "pe"), "element", False, "Return src[0] on pe."),
    Op("iput", ("dest", "src", "dst", "sst", "nelems", "pe"), None, False, "Strided put (strides in elements)."),
    Op("iget", ("dest", "src", "dst", "sst", "nelems", "pe"), None, False, "Strided get (strides in elements)."),
    Op("put_signal", ("dest", "src", "sig", "signal", "sig_op", "pe"), None, True,
       "Put, then update sig on pe (SIGNAL_SET/ADD); the data is visible before the signal."),
    Op("put_signal_nbi", ("dest", "src", "sig", "signal", "sig_op", "pe"), None, True,
       "Non-blocking put_signal."),
    Op("signal_op", ("sig", "signal", "sig_op", "pe"), None, False, "Update sig on pe with SIGNAL_SET/ADD."),
    Op("signal_fetch", ("sig",), "uint64", False, "The local value of sig (acquire)."),
    Op("signal_wait_until", ("sig", "cmp", "value"), "uint64", False,
       "Wait until the local sig compares cmp to value; returns its value."),
    Op("wait_until", ("ivar", "cmp", "value"), None, False, "Wait until the local ivar[0] compares cmp to value."),
    Op("test", ("ivar", "cmp", "value"), "int32", False, "1 when ivar[0] compares cmp to value, else 0."),
    Op("atomic_fetch", ("src", "pe"), "element", False, "Atomically read src[0] on pe."),
    Op("atomic_set", ("dest", "value", "pe"), None, False, "Atomically store value."),
    Op("atomic_swap", ("dest", "value", "pe"), "element", False, "Store value, return the previous value."),
    Op("atomic_compare_swap", ("dest", "cond", "value", "pe"), "element", False,
       "Store value if dest[0] == cond; return the previous value."),
    Op("atomic_fetch_add", ("dest", "value", "pe"), "element", False, "Add, return the previous value."),
    Op("atomic_add", ("dest", "value", "pe"), None, False, "Add."),
    Op("atomic_fetch_inc", ("dest", "pe"), "element", False, "Add 1, return the previous value."),
    Op("atomic_inc", ("dest", "pe"), None, False, "Add 1."),
    Op("atomic_fetch_and", ("dest", "value", "pe"), "element", False, "Bitwise and, return the previous value."),
    Op("atomic_and", ("dest", "value", "pe"), None, False, "Bitwise and."),
    Op("atomic_fetch_or", ("dest", "value", "pe"), "element", False, "Bitwise or, return the previous value."),
    Op("atomic_or", ("dest", "value", "pe"), None, False, "Bitwise or."),
    Op("atomic_fetch_xor", ("dest", "value", "pe"), "element", False, "Bitwise xor, return the previous value."),
    Op("atomic_xor", ("dest", "value", "pe"), None, False, "Bitwise xor."),
    Op("fence", (), None, False, "Order this thread's operations to each PE."),
    Op("quiet", (), None, False, "Complete this thread's operations."),
    Op("barrier_all", (), None, True, "quiet, then barrier over all PEs (one caller per PE, or a whole warp/block)."),
    Op("sync_all", (), None, True, "Barrier over all PEs without quiet."),
    # Teams and collectives. `team` is a team handle: int(pyshmem.TEAM_WORLD), int(t) of a
    # split's result... Every member calls a collective (one thread, warp or block per PE).
    Op("team_my_pe", ("team",), "int32", False, "This PE's number in team, or -1."),
    Op("team_n_pes", ("team",), "int32", False, "Number of PEs in team, or -1."),
    Op("team_translate_pe", ("src_team", "pe", "dest_team"), "int32", False,
       "PE pe of src_team numbered in dest_team, or -1."),
    Op("sync", ("team",), None, True, "Barrier over the team's PEs without quiet."),
    Op("barrier", ("team",), None, True, "quiet, then barrier over the team's PEs."),
    Op("broadcast", ("team", "dest", "src", "root"), None, True,
       "dest on every member <- src on team PE root (min of both lengths)."),
    Op("collect", ("team", "dest", "src"), None, True,
       "dest <- the members' src back to back in team order (each member's length may differ)."),
    Op("fcollect", ("team", "dest", "src"), None, True, "dest[j*len(src):] <- member j's src."),
    Op("alltoall", ("team", "dest", "src"), None, True,
       "Block j of src (len(src) / team size elements) -> block (my team PE) of member j's dest."),
) + tuple(
    Op(f"{r}_reduce", ("team", "dest", "src"), None, True,
       f"dest[i] = {r} over the members of src[i] (min of both lengths)"
       + (" (integer arrays)" if r in ("and", "or", "xor") else "") + ".")
    for r in ("sum", "prod", "max", "min", "and", "or", "xor")
)


def all_names():
    """Every function name the table defines, cooperative variants included."""
    names = []
    for op in OPS:
        names.append(op.name)
        if op.coop:
            names += [op.name + "_warp", op.name + "_block"]
    return names
