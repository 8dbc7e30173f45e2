"""Shared by the PE programs: ``raises``, which checks an expected error's type AND message.

The programs run as scripts, so this folder is on sys.path and ``from _expect import raises``
works. Not a program itself (the leading underscore keeps it out of the program lists).
"""

import pyshmem as shmem


def raises(exc, fn, *args, match, **kw):
    """fn(*args, **kw) must raise exc, a ShmemError whose message names the call and this
    PE ("pyshmem.<call> on PE <me>: ") and contains ``match``; returns the exception."""
    me = shmem.my_pe()
    try:
        fn(*args, **kw)
    except exc as e:
        msg = str(e)
        assert isinstance(e, shmem.ShmemError), f"PE {me}: {type(e).__name__} is not a ShmemError: {msg}"
        assert f" on PE {me}: " in msg and msg.startswith("pyshmem."), f"PE {me}: no call and PE in {msg!r}"
        assert match in msg, f"PE {me}: {match!r} not in {msg!r}"
        return e
    raise AssertionError(f"PE {me}: {getattr(fn, '__name__', fn)} did not raise {exc.__name__}")
