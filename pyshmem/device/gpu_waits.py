"""Numba intrinsics of the waits and tests on arrays of variables (wait_until_all/any/some,
their _vector forms and test_*; rows of ``_table.py``, shims of ``_shims.py``).

Typing checks what can be checked from types: ivars an integer array of a shimmed type,
``values`` an array of the same type, ``indices`` an int64/uint64 array, ``status`` None
or an int32 array, all contiguous. The lengths are only known when the kernel runs: the
shim traps, naming the call, when status, values or indices is shorter than ivars.
"""

from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from pyshmem.device import _shims
from pyshmem.device.gpu_lowering import (_I32, _I64, _VOID, _array, _cmp_value, _contiguous, _fn, _i32, _is_array,
                                         _is_int, _tag)
from pyshmem.errors import ShmemTypeError
from pyshmem.runtime import where

_INDEX_TYPES = (types.int64, types.uint64)


def _data(context, builder, ty, val, elem):
    """(pointer to the data as elem*, element count as i64) of an array argument."""
    p, n, _item = _array(context, builder, ty, val)
    return builder.bitcast(p, elem.as_pointer()), n


def _check(name, role, ty, ok, want):
    if not (_is_array(ty) and ok(ty.dtype)):
        raise ShmemTypeError(f"{where('device.' + name)}: {role} must be {want}, not {ty}")
    _contiguous(name, ty)


def make_wait_set(op):
    """The intrinsic of one wait/test on an array of variables (op: its _table.py row)."""
    name = op.name
    some, vector = "_some" in name, name.endswith("_vector")
    ret = {None: types.void, "int32": types.int32, "int64": types.int64}[op.result]
    ret_ir = {None: _VOID, "int32": _I32, "int64": _I64}[op.result]
    sym = _shims.symbol  # per element type, picked at typing time

    def typer(typingctx, ivars, *rest):
        # rest: [indices,] cmp, value(s), status (None or types.none when not given)
        if not _is_array(ivars):
            return None
        indices, (cmp, value, status) = (rest[0], rest[1:]) if some else (None, rest)
        tag = _tag(name, ivars.dtype, _shims.INT_TAGS)
        _contiguous(name, ivars)
        if some:
            _check(name, "indices", indices, lambda d: d in _INDEX_TYPES, "an int64 or uint64 array")
        if not _is_int(cmp):
            return None
        if vector:
            _check(name, "values", value, lambda d: d == ivars.dtype, f"an array of {ivars.dtype} (ivars' type)")
        elif not _is_int(value):
            return None
        given = status is not None and not isinstance(status, (types.NoneType, types.Omitted))
        if given:
            _check(name, "status", status, lambda d: d == types.int32, "None or an int32 array")
        omitted = status if status is not None else types.Omitted(None)
        args = [ivars] + ([indices] if some else []) + [cmp, value, omitted]
        sig = ret(*args)

        def codegen(context, builder, s, vals):
            elem = context.get_value_type(ivars.dtype)
            p, n = _data(context, builder, s.args[0], vals[0], elem)
            call, tys, k = [p, n], [elem.as_pointer(), _I64], 1
            if some:
                call += list(_data(context, builder, s.args[1], vals[1], _I64))
                tys += [_I64.as_pointer(), _I64]
                k = 2
            cmp_v = _i32(context, builder, s.args[k], vals[k])
            if given:
                st, st_n = _data(context, builder, s.args[k + 2], vals[k + 2], _I32)
            else:
                st, st_n = ir.Constant(_I32.as_pointer(), None), ir.Constant(_I64, -1)  # ~0: no status
            call += [st, st_n, cmp_v]
            tys += [_I32.as_pointer(), _I64, _I32]
            if vector:
                call += list(_data(context, builder, s.args[k + 1], vals[k + 1], elem))
                tys += [elem.as_pointer(), _I64]
            else:  # checked against the ivars' type by the shim
                v, t = _cmp_value(context, builder, s.args[k + 1], vals[k + 1])
                call += v
                tys += t
            r = builder.call(_fn(builder, sym(name, tag), ret_ir, tys), call)
            return r if ret_ir is not _VOID else context.get_dummy_value()

        return sig, codegen

    # Numba reads the parameters (names for keywords, status optional) from the typer's
    # signature: spell them out as the table names them.
    if some and vector:
        def fixed(typingctx, ivars, indices, cmp, values, status=None):
            return typer(typingctx, ivars, indices, cmp, values, status)
    elif some:
        def fixed(typingctx, ivars, indices, cmp, value, status=None):
            return typer(typingctx, ivars, indices, cmp, value, status)
    elif vector:
        def fixed(typingctx, ivars, cmp, values, status=None):
            return typer(typingctx, ivars, cmp, values, status)
    else:
        def fixed(typingctx, ivars, cmp, value, status=None):
            return typer(typingctx, ivars, cmp, value, status)
    fixed.__name__ = name
    return intrinsic(fixed)


__all__ = ["make_wait_set"]
