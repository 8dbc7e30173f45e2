"""Lowering helpers shared by the Numba intrinsics of the device API (gpu.py, gpu_waits.py):
LLVM types of the shims' parameters, array pointers and sizes, element-type tags."""

from llvmlite import ir
from numba import types
from numba.core import cgutils

from pyshmem.errors import ShmemTypeError
from pyshmem.runtime import where

_I8P = ir.IntType(8).as_pointer()
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_VOID = ir.VoidType()

_TAG_OF = {types.int32: "i32", types.int64: "i64", types.uint32: "u32", types.uint64: "u64",
           types.float32: "f32", types.float64: "f64"}
# p/g have a shim for every element type (_shims.VALUE_TYPES): the value is passed, not
# a pointer to a copy of it.
_VALUE_TAG_OF = {**_TAG_OF, types.int8: "i8", types.uint8: "u8", types.int16: "i16", types.uint16: "u16",
                 types.float16: "f16", types.boolean: "b8", types.complex64: "c64", types.complex128: "c128"}


def _fn(builder, name, ret, params):
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, params), name)


def _array(context, builder, ty, val):
    """(data as i8*, element count, item size) of an array argument."""
    a = context.make_array(ty)(context, builder, val)
    item = context.get_abi_sizeof(context.get_data_type(ty.dtype))
    return builder.bitcast(a.data, _I8P), a.nitems, item


def _i32(context, builder, ty, val):
    return context.cast(builder, val, ty, types.int32)


def _tag(call, dtype, allowed):
    tag = _TAG_OF.get(dtype)
    if tag not in allowed:
        names = ", ".join(str(t) for t, g in _TAG_OF.items() if g in allowed)
        raise ShmemTypeError(f"{where('device.' + call)}: element type {dtype} is not supported; use {names}")
    return tag


def _is_array(t):
    return isinstance(t, types.Array)


def _contiguous(call, *arrays):
    """Array arguments of a data transfer must be contiguous: their bytes are moved as
    one block (the host API's strided-view support has no device equivalent yet)."""
    for a in arrays:
        if a.layout not in ("C", "F"):
            raise ShmemTypeError(
                f"{where('device.' + call)}: {a} is not contiguous; pass a contiguous array or slice "
                "(x[i:j]), or use iput/iget with element strides"
            )
    return True


def _is_int(t):
    # CMP_* and SIGNAL_* are IntEnum members; Numba types them apart from plain ints.
    return isinstance(t, (types.Integer, types.IntEnumMember))


def _cmp_value(context, builder, ty, val):
    """A wait's comparison value as the shims take it: (the value widened to 64 bits,
    whether it was signed), so the shim can trap on one the ivars' type cannot hold."""
    base = ty.dtype if isinstance(ty, types.IntEnumMember) else ty
    signed = getattr(base, "signed", True)
    wide = context.cast(builder, val, ty, types.int64 if signed else types.uint64)
    return [wide, ir.Constant(_I32, int(signed))], [_I64, _I32]
