"""The device API on a GPU: Numba intrinsics that call the extern "C" shims.

Every function of the op table (``_table.py``) is a Numba ``@intrinsic``: it is typed
for the concrete array/scalar types of the call and lowered to one call of a shim
(``_shims.py``). Intrinsics, unlike ``@cuda.jit(device=True)`` helpers, need no GPU
to compile, so kernels using them compile to LTO-IR and link with ``library()`` on
any machine (``link()`` does both). Arrays give pointers and sizes (a slice gives an
offset); scalars are cast to the element type.

Launching such kernels needs the CUDA backend (GPU heap, device-state upload by the
setup callback of ``linkable()``).
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.extending import intrinsic

from pyshmem.device import _shims
from pyshmem.device._table import OPS
from pyshmem.device.gpu_link import _setup_module, library, link, linkable  # noqa: F401 - re-exported
from pyshmem.device.gpu_lowering import (_I8P, _I32, _I64, _VALUE_TAG_OF, _VOID, _array, _cmp_value, _contiguous, _fn,
                                         _i32, _is_array, _is_int, _tag)
from pyshmem.device.gpu_waits import make_wait_set
from pyshmem.errors import ShmemTypeError
from pyshmem.runtime import where

def _make_noarg(name, sym, ret):
    def typer(typingctx):
        sig = (types.int32 if ret == "i32" else types.void)()

        def codegen(context, builder, sig, args):
            r = builder.call(_fn(builder, sym, _I32 if ret == "i32" else _VOID, []), [])
            return r if ret == "i32" else context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _transfer(context, builder, sig_args, args):
    """(dest i8*, src i8*, bytes) of a transfer: min(len(dest), len(src)) elements,
    the host API's default size."""
    d, dn, item = _array(context, builder, sig_args[0], args[0])
    s, sn, _ = _array(context, builder, sig_args[1], args[1])
    n = builder.select(builder.icmp_signed("<", dn, sn), dn, sn)
    return d, s, builder.mul(n, context.get_constant(types.intp, item))


def _make_rma(name, sym):
    """put/get(+_nbi): (dest array, src array, pe); moves min(len(dest), len(src)) elements."""

    def typer(typingctx, dest, src, pe):
        if not (_is_array(dest) and _is_array(src) and _is_int(pe)) or dest.dtype != src.dtype:
            return None
        _contiguous(name, dest, src)
        sig = types.void(dest, src, pe)

        def codegen(context, builder, sig, args):
            d, s, nbytes = _transfer(context, builder, sig.args, args)
            builder.call(_fn(builder, sym, _VOID, [_I8P, _I8P, _I64, _I32]),
                         [d, s, nbytes, _i32(context, builder, sig.args[2], args[2])])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _value_tag(call, dtype):
    tag = _VALUE_TAG_OF.get(dtype)
    if tag is None:
        names = ", ".join(str(t) for t in _VALUE_TAG_OF)
        raise ShmemTypeError(f"{where('device.' + call)}: element type {dtype} is not supported; use {names}")
    return tag


_I16 = ir.IntType(16)
_F32 = ir.FloatType()


def _to_wire(builder, tag, v):
    """The value arguments of a p shim for the Numba value `v` of an element of type tag."""
    if tag == "f16":
        return [builder.bitcast(v, _I16)]
    if tag == "b8":
        return [builder.zext(v, ir.IntType(8))]
    if tag == "c64":  # real part in the low word: the element's first 4 bytes (little endian)
        re, im = (builder.zext(builder.bitcast(builder.extract_value(v, k), _I32), _I64) for k in (0, 1))
        return [builder.or_(re, builder.shl(im, ir.Constant(_I64, 32)))]
    if tag == "c128":
        return [builder.extract_value(v, 0), builder.extract_value(v, 1)]
    return [v]


def _from_wire(context, builder, tag, dt, r):
    """The Numba value of the element a g shim returned as `r`."""
    if tag == "f16":
        return builder.bitcast(r, context.get_value_type(dt))
    if tag == "b8":
        return builder.icmp_unsigned("!=", r, ir.Constant(r.type, 0))
    if tag == "c64":
        parts = [builder.bitcast(builder.trunc(w, _I32), _F32) for w in (r, builder.lshr(r, ir.Constant(_I64, 32)))]
        return _complex(context, builder, dt, parts)
    return r


def _complex(context, builder, dt, parts):
    z = context.make_complex(builder, dt)
    z.real, z.imag = parts
    return z._getvalue()


def _wire_type(context, tag, dt):
    """The IR type an element of type tag travels as (its storage type for pointers)."""
    return {"f16": _I16, "b8": ir.IntType(8), "c64": _I64}.get(tag) or context.get_value_type(dt)


def _make_p():
    def p(typingctx, dest, value, pe):
        if not (_is_array(dest) and _is_int(pe)):
            return None
        tag = _value_tag("p", dest.dtype)
        if not isinstance(value, (types.Number, types.Boolean)):
            return None
        sig = types.void(dest, value, pe)

        def codegen(context, builder, sig, args):
            dt = sig.args[0].dtype
            v = context.cast(builder, args[1], sig.args[1], dt)
            pe32 = _i32(context, builder, sig.args[2], args[2])
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            vals = _to_wire(builder, tag, v)
            ptr = _I8P if tag == "c128" else _wire_type(context, tag, dt).as_pointer()
            builder.call(_fn(builder, _shims.symbol("p", tag), _VOID, [ptr] + [x.type for x in vals] + [_I32]),
                         [builder.bitcast(data, ptr), *vals, pe32])
            return context.get_dummy_value()

        return sig, codegen

    return intrinsic(p)


def _make_g():
    def g(typingctx, src, pe):
        if not (_is_array(src) and _is_int(pe)):
            return None
        tag = _value_tag("g", src.dtype)
        sig = src.dtype(src, pe)

        def codegen(context, builder, sig, args):
            dt = sig.args[0].dtype
            pe32 = _i32(context, builder, sig.args[1], args[1])
            data = context.make_array(sig.args[0])(context, builder, args[0]).data
            sym = _shims.symbol("g", tag)
            if tag == "c128":  # the shim writes the two parts to `out`; no remote op reads it
                f64 = ir.DoubleType()
                out = cgutils.alloca_once(builder, f64, size=2)
                builder.call(_fn(builder, sym, _VOID, [_I8P, _I32, f64.as_pointer()]),
                             [builder.bitcast(data, _I8P), pe32, out])
                parts = [builder.load(builder.gep(out, [ir.Constant(_I32, k)])) for k in (0, 1)]
                return _complex(context, builder, dt, parts)
            wire = _wire_type(context, tag, dt)
            r = builder.call(_fn(builder, sym, wire, [wire.as_pointer(), _I32]), [builder.bitcast(data, wire.as_pointer()), pe32])
            return _from_wire(context, builder, tag, dt, r)

        return sig, codegen

    return intrinsic(g)


def _make_strided(name):
    def typer(typingctx, dest, src, dst, sst, nelems, pe):
        ints = (dst, sst, nelems, pe)
        if not (_is_array(dest) and _is_array(src) and all(_is_int(t) for t in ints)):
            return None
        if dest.dtype != src.dtype:
            return None
        _contiguous(name, dest, src)
        sig = types.void(dest, src, dst, sst, nelems, pe)

        def codegen(context, builder, sig, args):
            d, _, item = _array(context, builder, sig.args[0], args[0])
            s, _, _ = _array(context, builder, sig.args[1], args[1])
            i64 = [context.cast(builder, args[k], sig.args[k], types.int64) for k in (2, 3, 4)]
            builder.call(_fn(builder, _shims.symbol(name), _VOID, [_I8P, _I8P, _I64, _I64, _I64, _I64, _I32]),
                         [d, s, *i64, ir.Constant(_I64, item), _i32(context, builder, sig.args[5], args[5])])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _sig_ptr(context, builder, ty, val):
    a = context.make_array(ty)(context, builder, val)
    return builder.bitcast(a.data, _I64.as_pointer())


def _is_sig(t):
    return _is_array(t) and t.dtype == types.uint64


def _make_put_signal(name, sym):
    def typer(typingctx, dest, src, sig, signal, sig_op, pe):
        if not (_is_array(dest) and _is_array(src) and _is_sig(sig) and dest.dtype == src.dtype):
            return None
        _contiguous(name, dest, src)
        if not all(_is_int(t) for t in (signal, sig_op, pe)):
            return None
        s_ = types.void(dest, src, sig, signal, sig_op, pe)

        def codegen(context, builder, sig_, args):
            d, s, nbytes = _transfer(context, builder, sig_.args, args)
            builder.call(_fn(builder, sym, _VOID, [_I8P, _I8P, _I64, _I64.as_pointer(), _I64, _I32, _I32]),
                         [d, s, nbytes, _sig_ptr(context, builder, sig_.args[2], args[2]),
                          context.cast(builder, args[3], sig_.args[3], types.uint64),
                          _i32(context, builder, sig_.args[4], args[4]), _i32(context, builder, sig_.args[5], args[5])])
            return context.get_dummy_value()

        return s_, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _make_signal(name):
    sym = _shims.symbol(name)

    if name == "signal_op":
        def typer(typingctx, sig, signal, sig_op, pe):
            if not (_is_sig(sig) and all(_is_int(t) for t in (signal, sig_op, pe))):
                return None
            s_ = types.void(sig, signal, sig_op, pe)

            def codegen(context, builder, s, args):
                builder.call(_fn(builder, sym, _VOID, [_I64.as_pointer(), _I64, _I32, _I32]),
                             [_sig_ptr(context, builder, s.args[0], args[0]),
                              context.cast(builder, args[1], s.args[1], types.uint64),
                              _i32(context, builder, s.args[2], args[2]), _i32(context, builder, s.args[3], args[3])])
                return context.get_dummy_value()

            return s_, codegen
    elif name == "signal_fetch":
        def typer(typingctx, sig):
            if not _is_sig(sig):
                return None

            def codegen(context, builder, s, args):
                return builder.call(_fn(builder, sym, _I64, [_I64.as_pointer()]),
                                    [_sig_ptr(context, builder, s.args[0], args[0])])

            return types.uint64(sig), codegen
    else:  # signal_wait_until
        def typer(typingctx, sig, cmp, value):
            if not (_is_sig(sig) and _is_int(cmp) and _is_int(value)):
                return None

            def codegen(context, builder, s, args):
                return builder.call(_fn(builder, sym, _I64, [_I64.as_pointer(), _I32, _I64]),
                                    [_sig_ptr(context, builder, s.args[0], args[0]),
                                     _i32(context, builder, s.args[1], args[1]),
                                     context.cast(builder, args[2], s.args[2], types.uint64)])

            return types.uint64(sig, cmp, value), codegen

    typer.__name__ = name
    return intrinsic(typer)


def _make_typed(op):
    """Atomics and waits: one shim per element type, picked at typing time."""
    name = op.name
    scalar_args = [a for a in op.args if a in ("cond", "value")]
    has_cmp = "cmp" in op.args
    allowed = _shims.type_tags(name) if op.lowering == "amo" else _shims.INT_TAGS

    def typer(typingctx, target, *rest):
        if not _is_array(target):
            return None
        tag = _tag(name, target.dtype, allowed)
        dt = target.dtype
        ret = dt if op.result == "element" else (types.int32 if op.result == "int32" else types.void)
        sig = ret(target, *rest)
        sym = _shims.symbol(name, tag)

        def codegen(context, builder, s, args):
            elem = context.get_value_type(dt)
            ptr = builder.bitcast(context.make_array(s.args[0])(context, builder, args[0]).data, elem.as_pointer())
            vals, tys = [ptr], [elem.as_pointer()]
            k = 1
            if has_cmp:
                vals.append(_i32(context, builder, s.args[k], args[k]))
                tys.append(_I32)
                k += 1
            for _ in scalar_args:
                if op.lowering == "wait":  # checked against dt by the shim
                    v, t = _cmp_value(context, builder, s.args[k], args[k])
                    vals += v
                    tys += t
                else:
                    vals.append(context.cast(builder, args[k], s.args[k], dt))
                    tys.append(elem)
                k += 1
            if "pe" in op.args:
                vals.append(_i32(context, builder, s.args[k], args[k]))
                tys.append(_I32)
            ret_ir = elem if op.result == "element" else (_I32 if op.result == "int32" else _VOID)
            r = builder.call(_fn(builder, sym, ret_ir, tys), vals)
            return r if ret_ir is not _VOID else context.get_dummy_value()

        return sig, codegen

    # Numba reads the number of arguments from the typer's signature, so *rest will not
    # do: wrap it in a function with as many parameters as the table gives.
    fixed = _FIXED_ARITY[len(op.args)](typer)
    fixed.__name__ = name
    return intrinsic(fixed)


def _make_team_query(name, sym, nargs):
    """team_my_pe/team_n_pes(team), team_translate_pe(src_team, pe, dest_team): ints -> int32."""

    def typer(typingctx, *args):
        if not all(_is_int(a) for a in args):
            return None
        sig = types.int32(*args)

        def codegen(context, builder, sig, vals):
            ints = [_i32(context, builder, t, v) for t, v in zip(sig.args, vals)]
            return builder.call(_fn(builder, sym, _I32, [_I32] * len(ints)), ints)

        return sig, codegen

    fixed = _FIXED_ARITY[nargs](typer)
    fixed.__name__ = name
    return intrinsic(fixed)


def _make_team_sync(name, sym):
    """sync/barrier(team)."""

    def typer(typingctx, team):
        if not _is_int(team):
            return None
        sig = types.void(team)

        def codegen(context, builder, sig, args):
            builder.call(_fn(builder, sym, _VOID, [_I32]), [_i32(context, builder, sig.args[0], args[0])])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _team_arrays(name, team, dest, src):
    if not (_is_int(team) and _is_array(dest) and _is_array(src)) or dest.dtype != src.dtype:
        return False
    return _contiguous(name, dest, src)


def _make_broadcast(name, sym):
    """broadcast(team, dest, src, root): min(len(dest), len(src)) elements of root's src."""

    def typer(typingctx, team, dest, src, root):
        if not (_team_arrays(name, team, dest, src) and _is_int(root)):
            return None
        sig = types.void(team, dest, src, root)

        def codegen(context, builder, sig, args):
            d, s, nbytes = _transfer(context, builder, sig.args[1:3], args[1:3])
            builder.call(_fn(builder, sym, _VOID, [_I32, _I8P, _I8P, _I64, _I32]),
                         [_i32(context, builder, sig.args[0], args[0]), d, s, nbytes,
                          _i32(context, builder, sig.args[3], args[3])])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _make_gather(name, sym):
    """fcollect/alltoall(team, dest, src): the shim gets both arrays' byte sizes."""

    def typer(typingctx, team, dest, src):
        if not _team_arrays(name, team, dest, src):
            return None
        sig = types.void(team, dest, src)

        def codegen(context, builder, sig, args):
            d, dn, item = _array(context, builder, sig.args[1], args[1])
            s, sn, _ = _array(context, builder, sig.args[2], args[2])
            size = context.get_constant(types.intp, item)
            builder.call(_fn(builder, sym, _VOID, [_I32, _I8P, _I64, _I8P, _I64]),
                         [_i32(context, builder, sig.args[0], args[0]), d, builder.mul(dn, size), s,
                          builder.mul(sn, size)])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


def _make_reduce(name, op_name, coop, scatter=False):
    """<op>_reduce(team, dest, src): typed; min(len(dest), len(src)) elements. With
    `scatter` (<op>_reducescatter): len(dest) elements, src holding len(dest) per member,
    both lengths passed to the shim (which checks them)."""

    def typer(typingctx, team, dest, src):
        if not _team_arrays(name, team, dest, src):
            return None
        tag = _tag(name, dest.dtype, _shims.type_tags(op_name))
        sym = _shims.symbol(op_name, tag, coop)
        sig = types.void(team, dest, src)

        def codegen(context, builder, sig, args):
            d, dn, _ = _array(context, builder, sig.args[1], args[1])
            s, sn, _ = _array(context, builder, sig.args[2], args[2])
            team_id = _i32(context, builder, sig.args[0], args[0])
            if scatter:
                builder.call(_fn(builder, sym, _VOID, [_I32, _I8P, _I64, _I8P, _I64]), [team_id, d, dn, s, sn])
            else:
                n = builder.select(builder.icmp_signed("<", dn, sn), dn, sn)
                builder.call(_fn(builder, sym, _VOID, [_I32, _I8P, _I8P, _I64]), [team_id, d, s, n])
            return context.get_dummy_value()

        return sig, codegen

    typer.__name__ = name
    return intrinsic(typer)


_FIXED_ARITY = {
    1: lambda f: lambda typingctx, a: f(typingctx, a),
    2: lambda f: lambda typingctx, a, b: f(typingctx, a, b),
    3: lambda f: lambda typingctx, a, b, c: f(typingctx, a, b, c),
    4: lambda f: lambda typingctx, a, b, c, d: f(typingctx, a, b, c, d),
}


# One factory per lowering kind of the op table (_table.LOWERINGS): (op, full name,
# cooperation) -> the Numba intrinsic.
_FACTORIES = {
    "query": lambda op, full, coop: _make_noarg(full, _shims.symbol(op.name), "i32"),
    "noarg": lambda op, full, coop: _make_noarg(full, _shims.symbol(op.name, coop=coop), "void"),
    "bytes": lambda op, full, coop: _make_rma(full, _shims.symbol(op.name, coop=coop)),
    "value_put": lambda op, full, coop: _make_p(),
    "value_get": lambda op, full, coop: _make_g(),
    "strided": lambda op, full, coop: _make_strided(op.name),
    "signal_put": lambda op, full, coop: _make_put_signal(full, _shims.symbol(op.name, coop=coop)),
    "signal": lambda op, full, coop: _make_signal(op.name),
    "wait": lambda op, full, coop: _make_typed(op),
    "wait_set": lambda op, full, coop: make_wait_set(op),
    "team_query": lambda op, full, coop: _make_team_query(full, _shims.symbol(op.name), len(op.args)),
    "team_sync": lambda op, full, coop: _make_team_sync(full, _shims.symbol(op.name, coop=coop)),
    "broadcast": lambda op, full, coop: _make_broadcast(full, _shims.symbol(op.name, coop=coop)),
    "gather": lambda op, full, coop: _make_gather(full, _shims.symbol(op.name, coop=coop)),
    "reduce": lambda op, full, coop: _make_reduce(full, op.name, coop),
    "reducescatter": lambda op, full, coop: _make_reduce(full, op.name, coop, scatter=True),
    "amo": lambda op, full, coop: _make_typed(op),
}


def _build():
    fns = {}
    for op in OPS:
        for coop, sfx in _shims.COOP_SUFFIX.items():
            if coop == "thread" or op.coop:
                fns[op.name + sfx] = _FACTORIES[op.lowering](op, op.name + sfx, coop)
    return fns


FUNCTIONS = _build()
globals().update(FUNCTIONS)


__all__ = list(FUNCTIONS) + ["library", "link", "linkable"]
