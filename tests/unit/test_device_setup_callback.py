"""The Numba module setup callback (pyshmem.device.gpu._setup_module) uploads to the right
handle, as a module or a library, whatever form of the loaded module numba-cuda passes;
a form it cannot use is a clear error and nothing is uploaded.

Stand-in objects replace numba-cuda's and cuda.core's, and a recording replaces
``lib.gpu_state_upload``, so no GPU is needed.
"""

import ctypes

import pytest

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")
driver = pytest.importorskip("cuda.bindings.driver", reason="cuda-bindings is not installed")

from pyshmem._lib import lib  # noqa: E402
from pyshmem.device import gpu  # noqa: E402
from pyshmem.errors import ShmemTypeError  # noqa: E402

LIB, MOD = 0x7F00_1234_5000, 0x7F00_ABCD_6000


@pytest.fixture
def uploads(monkeypatch):
    calls = []
    monkeypatch.setattr(lib, "gpu_state_upload", lambda handle, is_library, call: calls.append((handle, is_library)))
    return calls


class ObjectCode:
    """cuda.core >= 0.3: handle is the CUlibrary; get_module() its CUmodule in the current context."""

    def __init__(self):
        self.handle = driver.CUlibrary(LIB)

    def get_module(self):
        return driver.CUmodule(MOD)


class OldObjectCode:
    """cuda.core before libraries: handle is a CUmodule, and there is no get_module."""

    handle = driver.CUmodule(MOD)


class ModuleOnly:
    """Only a get_module() (an object whose handle is not a driver handle)."""

    handle = 12345

    def get_module(self):
        return driver.CUmodule(MOD)


class NumbaModule:
    """numba-cuda's own module object: handle is its object code's handle."""

    def __init__(self, handle):
        self.handle = handle


@pytest.mark.parametrize("obj, expected", [
    pytest.param(ObjectCode(), (LIB, True), id="cuda.core-ObjectCode"),
    pytest.param(OldObjectCode(), (MOD, False), id="old-ObjectCode"),
    pytest.param(ModuleOnly(), (MOD, False), id="get_module-only"),
    pytest.param(driver.CUmodule(MOD), (MOD, False), id="CUmodule"),
    pytest.param(driver.CUlibrary(LIB), (LIB, True), id="CUlibrary"),
    pytest.param(ctypes.c_void_p(MOD), (MOD, False), id="ctypes-CUmodule"),
    pytest.param(NumbaModule(driver.CUlibrary(LIB)), (LIB, True), id="numba-module-of-library"),
])
def test_each_form_uploads_to_its_handle(uploads, obj, expected):
    gpu._setup_module(obj)
    assert uploads == [expected]


def test_extra_callback_arguments_are_ignored(uploads):
    gpu._setup_module(driver.CUlibrary(LIB), "teardown-or-context", 3)
    assert uploads == [(LIB, True)]


@pytest.mark.parametrize("obj, named", [
    pytest.param(MOD, f"int {MOD}", id="bare-int"),
    pytest.param(True, "bool True", id="bool"),
    pytest.param(ctypes.c_void_p(None), "c_void_p c_void_p(None)", id="null-ctypes"),
    pytest.param(object(), "object <object object at", id="object"),
    pytest.param(NumbaModule(MOD), f"NumbaModule <{__name__}.NumbaModule object at", id="handle-is-a-bare-int"),
    pytest.param("CUmodule", "str 'CUmodule'", id="string"),
])
def test_a_form_it_cannot_use_is_a_clear_error_and_uploads_nothing(uploads, obj, named):
    with pytest.raises(ShmemTypeError) as err:
        gpu._setup_module(obj)
    msg = str(err.value)
    assert "pyshmem.device (Numba module setup)" in msg and f"callback {named}" in msg, msg
    assert "not uploaded" in msg, msg
    if isinstance(obj, NumbaModule):
        assert f"whose handle is int {MOD}" in msg, msg
    assert uploads == []


def test_linkable_attaches_this_callback():
    """The callback tested here is the one numba-cuda is given (needs no GPU)."""
    lto = gpu.linkable("sm_90")
    assert lto.setup_callback is gpu._setup_module
