"""Kernel parameters read from CUDA C++ source, and launch arguments checked against them.

:class:`pyshmem.cuda.Module` parses the ``__global__`` functions its source declares
(:func:`parse`); :func:`pyshmem.cuda.launch` checks a call against the kernel's
parameters (:func:`check`) on the CPU build and on the GPU alike, so a missing argument
or an array where the kernel takes a scalar is an error naming the kernel and the
parameter instead of a kernel that runs on garbage. Python ints, floats and bools are
converted to the parameter's exact C type; NumPy scalars and ctypes values must already
have its size.

What cannot be read from the source is launched as given (after the count of arguments
where that is known): kernels declared by a macro, parameters of a type not listed in
:data:`_SCALARS` (structs, typedefs, templates' ``T``), and kernels declared twice with
different parameters.
"""

import ctypes
import re

import numpy as np

from pyshmem._foreign import is_tensor
from pyshmem.errors import ShmemTypeError, ValueOverflowError
from pyshmem.runtime import where

# Lexical: string literals are kept, comments dropped, preprocessor lines (with their
# continuations: macros that define kernels) dropped.
_LEX = re.compile(r'("(?:\\.|[^"\\\n])*")|//[^\n]*|/\*.*?\*/', re.S)
_PREPROCESSOR = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*")
_ATTRIBUTES = {"__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__noinline__", "__forceinline__",
               "static", "inline", "extern", "void", "__device__", "__host__"}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "__grid_constant__",
               "register"}
# C type -> (kind, bytes, signed); kind is "int", "float" or "bool". LP64: long is 8 bytes.
_SCALARS = {"bool": ("bool", 1, False), "float": ("float", 4, True), "double": ("float", 8, True),
            "size_t": ("int", 8, False), "ssize_t": ("int", 8, True), "ptrdiff_t": ("int", 8, True),
            "intptr_t": ("int", 8, True), "uintptr_t": ("int", 8, False)}
_SCALARS.update({f"{u}int{8 * n}_t": ("int", n, not u) for u in ("", "u") for n in (1, 2, 4, 8)})
_C_INTS = {(n, s): getattr(ctypes, f"c_{'' if s else 'u'}int{8 * n}") for n in (1, 2, 4, 8) for s in (True, False)}


class Param:
    """One kernel parameter: its text, name (may be ""), and kind.

    ``kind`` is ``"pointer"``, ``"int"``, ``"float"``, ``"bool"`` or ``None`` (a type
    not known here: passed as given).
    """

    def __init__(self, text, name, kind, size=0, signed=True):
        self.text, self.name, self.kind, self.size, self.signed = text, name, kind, size, signed

    def __repr__(self):
        return f"Param({self.text!r})"

    def __eq__(self, other):
        key = (self.kind, self.size, self.signed)
        return isinstance(other, Param) and key == (other.kind, other.size, other.signed)


def _int_type(words):
    """(kind, bytes, signed) of a builtin integer spelled with char/short/int/long/signed/unsigned."""
    if not words or not set(words) <= {"signed", "unsigned", "char", "short", "int", "long"}:
        return None
    size = 1 if "char" in words else 2 if "short" in words else 8 if "long" in words else 4
    return ("int", size, "unsigned" not in words)


def _param(text):
    """A Param from one declarator such as ``const float* __restrict__ x``."""
    text = " ".join(text.split("=")[0].split())
    is_array = "[" in text
    words = _IDENT.findall(re.sub(r"\[[^\]]*\]", "", text).replace("std::", "").replace("cuda::", ""))
    words = [w for w in words if w not in _QUALIFIERS]
    pointer = is_array or "*" in text
    base = words
    name = ""
    # The last word is the name unless it is part of the type (``float*``, ``unsigned int``).
    if len(words) >= 2 and not (_int_type(words) or " ".join(words) in _SCALARS):
        name, base = words[-1], words[:-1]
    if pointer:
        return Param(text, name, "pointer", 8, False)
    known = _SCALARS.get(" ".join(base)) or _int_type(base)
    return Param(text, name, *known) if known else Param(text, name, None)


def _split_params(text):
    """Top-level comma-separated parts of a parameter list (commas inside <>, (), [] stay)."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    parts = [p.strip() for p in parts]
    return [] if parts in ([""], ["void"]) else parts


def _balanced(text, i):
    """Index just past the parenthesis group that opens at text[i] (or -1)."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return -1


def parse(source):
    """The parameters of every ``__global__`` function that `source` spells out.

    Args:
        source: CUDA C++ text.

    Returns:
        dict[str, list[Param] | None]: kernel name -> its parameters; None where the
        name is declared with different parameters (overloads) or in a template.
    """
    text = _PREPROCESSOR.sub("", _LEX.sub(lambda m: m.group(1) or " ", source))
    found = {}
    for m in re.finditer(r"\b__global__\b", text):
        start = max(text.rfind(c, 0, m.start()) for c in ";{}")
        templated = re.search(r"\btemplate\b", text[start + 1:m.start()]) is not None
        pos = m.end()
        while True:
            ident = _IDENT.search(text, pos)
            if not ident or text[pos:ident.start()].strip():
                break
            pos = ident.end()
            rest = text[pos:].lstrip()
            pos = len(text) - len(rest)
            if ident.group() in _ATTRIBUTES:
                if rest.startswith("("):
                    pos = _balanced(text, pos)
                if pos < 0:
                    break
                continue
            if rest.startswith("("):
                end = _balanced(text, pos)
                if end > 0:
                    params = None if templated else [_param(p) for p in _split_params(text[pos + 1:end - 1])]
                    name = ident.group()
                    found[name] = params if name not in found or found[name] == params else None
            break
    return found


def _fits(value, size, signed):
    lo, hi = (-(2 ** (8 * size - 1)), 2 ** (8 * size - 1)) if signed else (0, 2 ** (8 * size))
    return lo <= value < hi


def _scalar_size(value):
    """(kind, bytes) of a NumPy scalar or ctypes value; None for anything else."""
    if isinstance(value, np.generic):
        k = value.dtype.kind
        return ("bool" if k == "b" else "int" if k in "iu" else "float" if k == "f" else k), value.dtype.itemsize
    if isinstance(value, ctypes._SimpleCData) and not isinstance(value, (ctypes.c_void_p, ctypes.c_char_p,
                                                                          ctypes.c_wchar_p)):
        k = type(value)._type_
        kind = "bool" if k == "?" else "float" if k in "fdg" else "int"
        return kind, ctypes.sizeof(value)
    return None


def _describe(value):
    if (isinstance(value, np.ndarray) or is_tensor(value)
            or hasattr(value, "__array_interface__") and not isinstance(value, np.generic)):
        return f"an array ({type(value).__name__})"
    if hasattr(value, "__cuda_array_interface__"):
        return f"a GPU array ({type(value).__name__})"
    if value is None:
        return "None"
    if isinstance(value, np.generic):
        return f"a NumPy {value.dtype}"
    return f"a {type(value).__module__ + '.' if type(value).__module__ == 'ctypes' else ''}{type(value).__name__}"


_ADVICE = {"pointer": "pass an array (NumPy or symmetric; on a GPU a GPU array), an address as int, or None",
           "int": "pass a Python int or a NumPy integer of its size",
           "float": "pass a Python float or a NumPy float of its size (np.float32 for float)",
           "bool": "pass a Python bool"}


_BAD = object()


def _convert(value, p):
    """`value` for parameter `p`: converted (Python scalars), as given, _BAD when of the
    wrong kind, or OverflowError when out of range."""
    is_array = (hasattr(value, "__cuda_array_interface__") or isinstance(value, np.ndarray) or is_tensor(value)
                or (hasattr(value, "__array_interface__") and not isinstance(value, np.generic)))
    scalar = _scalar_size(value)
    if p.kind == "pointer":
        if is_array or value is None or isinstance(value, (ctypes._Pointer, ctypes.c_void_p, ctypes.c_char_p)):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return value if _fits(value, 8, False) else _BAD
        return value if scalar == ("int", 8) else _BAD
    if is_array or value is None or isinstance(value, (ctypes._Pointer, ctypes.c_void_p, ctypes.c_char_p)):
        return _BAD
    if scalar is not None:
        same = scalar == (p.kind, p.size) or (p.kind == "bool" and scalar[0] in ("bool", "int") and scalar[1] == 1)
        return value if same else _BAD
    if p.kind == "bool":
        return ctypes.c_bool(value) if isinstance(value, (bool, int)) else _BAD
    if p.kind == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return (ctypes.c_float if p.size == 4 else ctypes.c_double)(float(value))
    if p.kind == "int" and isinstance(value, int):
        return _C_INTS[(p.size, p.signed)](value) if _fits(value, p.size, p.signed) else OverflowError
    return _BAD


def check(kernel, params, args, call="cuda.launch"):
    """Checks launch arguments against the kernel's parameters; converts Python scalars.

    Args:
        kernel: the kernel's name (for messages).
        params: its parameters from :func:`parse`, or None (unknown: nothing checked).
        args: the launch arguments.
        call: the API call for messages.

    Returns:
        list: the arguments, Python scalars replaced by ctypes values of the parameter's type.

    Raises:
        ShmemTypeError: too few or too many arguments, or one of the wrong kind.
        ValueOverflowError: a Python int that the parameter's type cannot hold.
    """
    if params is None:
        return list(args)
    sig = f"({', '.join(p.text for p in params)})"
    if len(args) != len(params):
        fix = (f"missing {', '.join(repr(p.name or p.text) for p in params[len(args):])}" if len(args) < len(params)
               else f"pass exactly {len(params)}")
        raise ShmemTypeError(f"{where(call)}: kernel '{kernel}' takes {len(params)} argument"
                             f"{'s' if len(params) != 1 else ''} {sig}, got {len(args)}; {fix}")
    out = []
    for i, (value, p) in enumerate(zip(args, params)):
        if p.kind is None:
            out.append(value)
            continue
        conv = _convert(value, p)
        if conv is OverflowError:
            raise ValueOverflowError(f"{where(call)}: kernel '{kernel}' argument {i} ({p.text}) is {value}, which "
                                     f"does not fit {p.size * 8}-bit {'signed' if p.signed else 'unsigned'}; pass a "
                                     "value in its range")
        if conv is _BAD:
            got = _describe(value)
            if p.kind in ("int", "float", "bool") and _scalar_size(value):
                got += f" ({_scalar_size(value)[1]} bytes; the parameter has {p.size})"
            raise ShmemTypeError(f"{where(call)}: kernel '{kernel}' argument {i} ({p.text}) is {got}; "
                                 f"{_ADVICE[p.kind]}")
        out.append(conv)
    return out


__all__ = ["Param", "check", "parse"]
