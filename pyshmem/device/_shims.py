"""CUDA C++ source of the extern "C" shims behind the Numba GPU path, generated from
the op table (``_table.py``) at run time and compiled to LTO-IR by ``library()``.

Each shim has the C ABI and forwards to ``<pyshmem/device.cuh>``. Array operations
take byte pointers and byte counts (the Numba side computes them from the arrays);
typed operations (atomics, waits) get one shim per element type, named
``pyshmem_nb_<op>_<type>``. Nothing here is committed as generated code.
"""

import functools

from pyshmem.device._table import LOWERINGS, OPS, REDUCE_OPS

# Numba-visible element types of typed shims: tag -> C type.
TYPES = {"i32": "int32_t", "i64": "int64_t", "u32": "uint32_t", "u64": "uint64_t", "f32": "float", "f64": "double"}
INT_TAGS = ("i32", "i64", "u32", "u64")
# Element types of p/g: every scalar a Numba array holds, tag -> C type the value travels
# as (by value, never through memory: a PE behind the proxy is sent the value in the
# request, and the proxy could not read a kernel's stack). float16 and bool travel as
# their bits, complex64 as its 8 bytes; complex128 as its two parts (16 bytes: a direct
# store, or a trap behind the proxy, as pyshmem::p does for values wider than 8 bytes).
VALUE_TYPES = {**TYPES, "i8": "int8_t", "u8": "uint8_t", "i16": "int16_t", "u16": "uint16_t", "f16": "uint16_t",
               "b8": "uint8_t", "c64": "uint64_t", "c128": "pyshmem_nb_c128"}
EXTENDED_AMOS = ("atomic_fetch", "atomic_set", "atomic_swap")  # also on float/double
COOP_SUFFIX = {"thread": "", "warp": "_warp", "block": "_block"}

# A wait's comparison value arrives as 64 bits and whether the kernel's value was signed:
# one that the ivars' type cannot hold traps, naming the call, where a cast would compare
# with another number (the host API raises ValueOverflowError for the same call).
CMP_VALUE = """template <class T>
__device__ T pyshmem_nb_cmp_value(const char* call, int64_t bits, int32_t is_signed) {
  using L = cuda::std::numeric_limits<T>;
  const bool fits = is_signed && bits < 0 ? L::is_signed && bits >= static_cast<int64_t>(L::min())
                                          : static_cast<uint64_t>(bits) <= static_cast<uint64_t>(L::max());
  if (!fits) pyshmem::detail::trap(call, "value does not fit the element type of ivars", -1);
  return static_cast<T>(bits);
}"""
_FLOAT_REDUCTIONS = tuple(f"{r}_{form}" for r, kind in REDUCE_OPS if kind != "bitwise"
                          for form in ("reduce", "reducescatter"))


def type_tags(op_name):
    """Element types an atomic/wait/reduction op has shims for."""
    if op_name in EXTENDED_AMOS or op_name in _FLOAT_REDUCTIONS:
        return tuple(TYPES)
    return INT_TAGS


def symbol(op_name, tag=None, coop="thread"):
    """The C symbol of a shim."""
    return f"pyshmem_nb_{op_name}{COOP_SUFFIX[coop]}" + (f"_{tag}" if tag else "")


def _coops(op):
    return ("thread", "warp", "block") if op.coop else ("thread",)


_D = 'extern "C" __device__'


def _shim_query(op, coop):
    return [f"{_D} int32_t {symbol(op.name)}() {{ return pyshmem::{op.name}(); }}"]


def _shim_noarg(op, coop):
    return [f"{_D} void {symbol(op.name, coop=coop)}() {{ pyshmem::{op.name}{COOP_SUFFIX[coop]}(); }}"]


def _shim_bytes(op, coop):
    verb = op.name.replace("put", "putmem").replace("get", "getmem")
    return [f"{_D} void {symbol(op.name, coop=coop)}(void* d, const void* s, uint64_t nbytes, int32_t pe) "
            f"{{ pyshmem::{verb}{COOP_SUFFIX[coop]}(d, s, nbytes, pe); }}"]


def _shim_value_put(op, coop):
    # By value: one relaxed system-scope store, never torn (up to 8 bytes).
    out = []
    for tag, t in VALUE_TYPES.items():
        if tag == "c128":
            out.append(f"{_D} void {symbol(op.name, tag)}({t}* dest, double re, double im, int32_t pe) "
                       f"{{ pyshmem::p(dest, {t}{{re, im}}, pe); }}")
        else:
            out.append(f"{_D} void {symbol(op.name, tag)}({t}* dest, {t} value, int32_t pe) "
                       f"{{ pyshmem::p(dest, value, pe); }}")
    return out


def _shim_value_get(op, coop):
    out = []
    for tag, t in VALUE_TYPES.items():
        if tag == "c128":  # the two parts come back through `out` (written here, not by the proxy)
            out.append(f"{_D} void {symbol(op.name, tag)}(const {t}* src, int32_t pe, double* out) "
                       f"{{ const {t} v = pyshmem::g(src, pe); out[0] = v.re; out[1] = v.im; }}")
        else:
            out.append(f"{_D} {t} {symbol(op.name, tag)}(const {t}* src, int32_t pe) "
                       f"{{ return pyshmem::g(src, pe); }}")
    return out


def _shim_strided(op, coop):
    n = op.name
    return [f"{_D} void {symbol(n)}(char* d, const char* s, int64_t dst, int64_t sst, uint64_t nelems, "
            f"uint64_t elem, int32_t pe) {{\n"
            f"  pyshmem::detail::strided(\"{n}\", {'true' if n == 'iput' else 'false'}, d, s, dst, sst, "
            f"nelems, elem, pe);\n}}"]


def _shim_signal_put(op, coop):
    verb = op.name.replace("put_signal", "putmem_signal")
    return [f"{_D} void {symbol(op.name, coop=coop)}(void* d, const void* s, uint64_t nbytes, uint64_t* sig, "
            f"uint64_t signal, int32_t sig_op, int32_t pe) "
            f"{{ pyshmem::{verb}{COOP_SUFFIX[coop]}(d, s, nbytes, sig, signal, sig_op, pe); }}"]


_SIGNAL_SHIMS = {
    "signal_op": ("void", "uint64_t* sig, uint64_t signal, int32_t sig_op, int32_t pe", "sig, signal, sig_op, pe"),
    "signal_fetch": ("uint64_t", "uint64_t* sig", "sig"),
    "signal_wait_until": ("uint64_t", "uint64_t* sig, int32_t cmp, uint64_t value", "sig, cmp, value"),
}


def _shim_signal(op, coop):
    ret, params, args = _SIGNAL_SHIMS[op.name]
    return [f"{_D} {ret} {symbol(op.name)}({params}) "
            f"{{ {'return ' if ret != 'void' else ''}pyshmem::{op.name}({args}); }}"]


def _shim_wait(op, coop):
    out = []
    for tag in INT_TAGS:
        t = TYPES[tag]
        ret = "void" if op.result is None else "int32_t"
        body = f"pyshmem::{op.name}(ivar, cmp, pyshmem_nb_cmp_value<{t}>(\"{op.name}\", value, value_signed))"
        out.append(f"{_D} {ret} {symbol(op.name, tag)}({t}* ivar, int32_t cmp, int64_t value, int32_t value_signed) "
                   f"{{ {'return ' if ret != 'void' else ''}{body}; }}")
    return out


def _shim_wait_set(op, coop):
    return [_wait_set_shim(_D, op.name, tag) for tag in INT_TAGS]


def _shim_team_query(op, coop):
    params = ", ".join(f"int32_t {a}" for a in op.args)
    return [f"{_D} int32_t {symbol(op.name)}({params}) {{ return pyshmem::{op.name}({', '.join(op.args)}); }}"]


def _shim_team_sync(op, coop):
    return [f"{_D} void {symbol(op.name, coop=coop)}(int32_t team) {{ pyshmem::{op.name}{COOP_SUFFIX[coop]}(team); }}"]


def _shim_broadcast(op, coop):
    return [f"{_D} void {symbol(op.name, coop=coop)}(int32_t team, void* d, const void* s, uint64_t nbytes, "
            f"int32_t root) {{ pyshmem::broadcastmem{COOP_SUFFIX[coop]}(team, d, s, nbytes, root); }}"]


def _shim_gather(op, coop):
    n, sfx = op.name, COOP_SUFFIX[coop]
    if n == "collect":
        # Each member brings len(src); the members' counts meet inside the call, which
        # traps when dest cannot hold them together.
        return [f"{_D} void {symbol(n, coop=coop)}(int32_t team, void* d, uint64_t dbytes, const void* s, "
                f"uint64_t sbytes) {{ pyshmem::detail::collect_impl<pyshmem::Coop::{coop}>"
                f"(\"collect{sfx}\", team, d, dbytes, s, sbytes); }}"]
    # fcollect moves len(src) per member, alltoall len(src)/n; dest must hold n of them.
    per = "sbytes" if n == "fcollect" else "(n > 0 ? sbytes / n : 0)"
    return [f"{_D} void {symbol(n, coop=coop)}(int32_t team, void* d, uint64_t dbytes, const void* s, "
            f"uint64_t sbytes) {{\n"
            f"  const int n = pyshmem::team_n_pes(team);\n"
            f"  const uint64_t per = {per};\n"
            f"  if (n > 0 && dbytes < per * n) pyshmem::detail::trap(\"{n}{sfx}\", "
            f"\"dest is shorter than the team size times the block\", n);\n"
            f"  pyshmem::{n}mem{sfx}(team, d, s, per);\n}}"]


def _shim_reduce(op, coop):
    out = []
    for tag in type_tags(op.name):
        t = TYPES[tag]
        out.append(f"{_D} void {symbol(op.name, tag, coop)}(int32_t team, {t}* d, const {t}* s, uint64_t nelems) "
                   f"{{ pyshmem::{op.name}{COOP_SUFFIX[coop]}(team, d, s, nelems); }}")
    return out


def _shim_reducescatter(op, coop):
    out = []
    for tag in type_tags(op.name):
        t, n, sfx = TYPES[tag], op.name, COOP_SUFFIX[coop]
        out.append(f"{_D} void {symbol(n, tag, coop)}(int32_t team, {t}* d, uint64_t dn, const {t}* s, uint64_t sn) {{\n"
                   f"  const int size = pyshmem::team_n_pes(team);\n"
                   f"  if (size > 0 && sn < dn * static_cast<uint64_t>(size)) pyshmem::detail::trap(\"{n}{sfx}\", "
                   f"\"src is shorter than the team size times len(dest)\", size);\n"
                   f"  pyshmem::{n}{sfx}(team, d, s, dn);\n}}")
    return out


def _shim_amo(op, coop):
    n, out = op.name, []
    for tag in type_tags(n):
        t = TYPES[tag]
        params = [f"{t}* dest"] + [f"{t} {a}" for a in op.args if a in ("cond", "value")] + ["int32_t pe"]
        call_args = ["dest"] + [a for a in op.args if a in ("cond", "value")] + ["pe"]
        if op.args[0] == "src":  # atomic_fetch reads
            params[0], call_args[0] = f"{t}* src", "src"
        ret = t if op.result == "element" else "void"
        out.append(f"{_D} {ret} {symbol(n, tag)}({', '.join(params)}) "
                   f"{{ {'return ' if ret != 'void' else ''}pyshmem::{n}({', '.join(call_args)}); }}")
    return out


# One writer per lowering kind of the op table (_table.LOWERINGS).
_WRITERS = {kind: globals()[f"_shim_{kind}"] for kind in LOWERINGS}


def source():
    """The whole shim translation unit, one function per (op, type, cooperation)."""
    out = ["// generated by pyshmem/device/_shims.py from pyshmem/device/_table.py", "#include <pyshmem/device.cuh>",
           "#include <cuda/std/limits>", "struct pyshmem_nb_c128 { double re, im; };", CMP_VALUE, ""]
    for op in OPS:
        for coop in _coops(op):
            out += _WRITERS[op.lowering](op, coop)
    return "\n".join(out) + "\n"


def _wait_set_shim(D, n, tag):
    """The shim of one wait/test on an array of variables for element type `tag`: traps
    (naming the call) when status, values or indices is shorter than ivars; *_any
    return -1 where pyshmem returns SIZE_MAX (test_any: none satisfies it now; both: the
    wait set is empty). n_status is
    ~0 when the kernel passed no status (an empty status array is not "no mask": its
    data pointer may be null too)."""
    t = TYPES[tag]
    some, vector = "_some" in n, n.endswith("_vector")
    params = [f"{t}* ivars", "uint64_t n"] + (["uint64_t* indices", "uint64_t n_indices"] if some else [])
    params += ["const int32_t* status", "uint64_t n_status", "int32_t cmp"]
    params += [f"const {t}* values", "uint64_t n_values"] if vector else ["int64_t value", "int32_t value_signed"]
    checks = [("n_status != ~uint64_t(0) && n_status < n", "status is shorter than ivars")]
    if vector:
        checks.append(("n_values < n", "values is shorter than ivars"))
    if some:
        checks.append(("n_indices < n", "indices is shorter than ivars"))
    body = "".join(f"  if ({c}) pyshmem::detail::trap(\"{n}\", \"{msg}\", -1);\n" for c, msg in checks)
    args = ["ivars", "n"] + (["reinterpret_cast<size_t*>(indices)"] if some else [])
    value = "values" if vector else f"pyshmem_nb_cmp_value<{t}>(\"{n}\", value, value_signed)"
    args += ["n_status == ~uint64_t(0) ? nullptr : reinterpret_cast<const int*>(status)", "cmp", value]
    call = f"pyshmem::{n}<{t}>({', '.join(args)})"
    if "_any" in n:
        ret = "int64_t"
        body += f"  const size_t i = {call};\n  return i == pyshmem::kNoIndex ? -1 : static_cast<int64_t>(i);\n"
    elif some:
        ret, body = "int64_t", body + f"  return static_cast<int64_t>({call});\n"
    elif n.startswith("test"):
        ret, body = "int32_t", body + f"  return {call};\n"
    else:
        ret, body = "void", body + f"  {call};\n"
    return f"{D} {ret} {symbol(n, tag)}({', '.join(params)}) {{\n{body}}}"


@functools.lru_cache(maxsize=None)
def library(arch="sm_90"):
    """The shims compiled to LTO-IR for `arch` (cached per process), a cuda.core ObjectCode."""
    from pyshmem.cuda import compile

    return compile(source(), arch=arch, output="ltoir", name="pyshmem_device_shims")
