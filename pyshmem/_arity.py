"""Wrong argument lists of the Python-level API raise ShmemTypeError, like bad values.

The compiled entry points (put, get, the atomics ...) parse their arguments themselves
and already raise ShmemTypeError for a missing or unknown argument. The functions and
methods written in Python would raise Python's own TypeError; :func:`wrap_public`
converts exactly those errors (the call does not bind to the signature), so every
exception a public function raises for bad input derives from ShmemError. Errors from
inside a function that was called correctly pass through unchanged.
"""

import functools
import inspect
import types

from pyshmem.errors import ShmemTypeError


def _checked(fn, name):
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError as exc:
            if isinstance(exc, ShmemTypeError):
                raise
            try:
                signature.bind(*args, **kwargs)
            except TypeError as bad:
                from pyshmem.runtime import where

                raise ShmemTypeError(f"{where(name)}: {bad}; see help(pyshmem.{name})") from None
            raise

    return call


def wrap_public(namespace, names, classes):
    """Replaces the plain Python functions among ``names`` in ``namespace`` (a module
    dict) and the public methods of ``classes`` with argument-checked versions."""
    for n in names:
        obj = namespace.get(n)
        if isinstance(obj, types.FunctionType):
            namespace[n] = _checked(obj, n)
    for cls in classes:
        for attr, obj in list(vars(cls).items()):
            if attr.startswith("_") and attr != "__init__":
                continue
            label = cls.__name__ if attr == "__init__" else f"{cls.__name__}.{attr}"
            if isinstance(obj, staticmethod):
                setattr(cls, attr, staticmethod(_checked(obj.__func__, label)))
            elif isinstance(obj, types.FunctionType):
                setattr(cls, attr, _checked(obj, label))
