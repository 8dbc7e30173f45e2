// python/module.cpp: the pyshmem._C extension module.
//
// Setup, memory and query functions are pybind11 bindings; the hot one-sided calls are
// METH_FASTCALL functions from rma_bind/amo_bind/sync_bind added to the same module.
// Only pyshmem/_lib.py imports this module.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/trace.h"
#include "core/env.h"
#include "core/state.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_module.h"
#include "host/host.h"
#include "order/order_check.h"
#include "python/gpu_hooks.h"
#include "python/nbi_sources.h"
#include "python/team_bind.h"
#include "python/args.h"
#include "python/block.h"
#include "python/dlpack.h"
#include "python/errors.h"
#include "python/fast.h"
#include "pyshmem/version.h"
#include "transport/transport.h"

namespace pybind = pybind11;

namespace pyshmem {
namespace py {

extern PyObject* g_default_ctx;
static PyObject* g_auto_init = nullptr;

bool ensure_init(const char* call) {
  if (state().initialized) return true;
  if (state().finalized) return run_guarded(call, [call] { require_init(call); });
  if (g_auto_init) {
    PyObject* r = PyObject_CallNoArgs(g_auto_init);
    if (!r) return false;
    Py_DECREF(r);
    return true;
  }
  return run_guarded(call, [call] { require_init(call); });
}

}  // namespace py
}  // namespace pyshmem

using namespace pyshmem;

PYBIND11_MODULE(_C, m) {
  m.doc() = "pyshmem compiled core (internal: use the pyshmem package)";
  if (!py::errors_register(m.ptr())) throw pybind::error_already_set();
  if (!py::numpy_import()) throw pybind::error_already_set();
  if (!py::block_register(m.ptr())) throw pybind::error_already_set();
  py::install_interrupt_hook();
  pybind::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::set_error(e);
    } catch (const py::PythonErrorAlreadySet&) {
      // the Python error is already set by the interrupt hook
    }
  });
  for (PyMethodDef* table : {py::kRmaMethods, py::kAmoMethods, py::kSyncMethods, py::kCollMethods})
    if (PyModule_AddFunctions(m.ptr(), table) != 0) throw pybind::error_already_set();

  m.attr("VERSION") = pybind::make_tuple(PYSHMEM_VERSION_MAJOR, PYSHMEM_VERSION_MINOR, PYSHMEM_VERSION_PATCH);
  m.attr("SPEC_VERSION") = pybind::make_tuple(PYSHMEM_MAJOR_VERSION, PYSHMEM_MINOR_VERSION);
  m.attr("VENDOR_STRING") = PYSHMEM_VENDOR_STRING;
  // The reduction operators as (name, kind) in enum order (pyshmem/types.h).
  pybind::tuple ops(static_cast<size_t>(PYSHMEM_OP_COUNT));
  int k = 0;
#define PYSHMEM_REDUCE_OP_ROW(NAME, name, kind) ops[k++] = pybind::make_tuple(name, kind);
  PYSHMEM_REDUCE_OPS(PYSHMEM_REDUCE_OP_ROW)
#undef PYSHMEM_REDUCE_OP_ROW
  m.attr("REDUCE_OPS") = ops;
  m.attr("LEGACY_STREAM") = py::kLegacyStream;  // CU_STREAM_LEGACY, as stream handles give it
  m.attr("CMP_EQ") = int(PYSHMEM_CMP_EQ);
  m.attr("CMP_NE") = int(PYSHMEM_CMP_NE);
  m.attr("CMP_GT") = int(PYSHMEM_CMP_GT);
  m.attr("CMP_LE") = int(PYSHMEM_CMP_LE);
  m.attr("CMP_LT") = int(PYSHMEM_CMP_LT);
  m.attr("CMP_GE") = int(PYSHMEM_CMP_GE);
  m.attr("SIGNAL_SET") = int(PYSHMEM_SIGNAL_SET);
  m.attr("SIGNAL_ADD") = int(PYSHMEM_SIGNAL_ADD);
  m.attr("SYS_AREA_BYTES") = kSysAreaBytes;

  m.def("_set_default_ctx", [](pybind::object ctx) {
    Py_XDECREF(py::g_default_ctx);
    py::g_default_ctx = ctx.inc_ref().ptr();
  });
  m.def("_set_gpu_amo", [](pybind::object fn) {
    Py_XDECREF(py::g_gpu_amo);
    py::g_gpu_amo = fn.is_none() ? nullptr : fn.inc_ref().ptr();
  });
  m.def(
      "stream_handle",
      [](pybind::object stream, const char* call) {
        uint64_t h = 0;
        if (!py::parse_stream(call, stream.ptr(), &h)) throw pybind::error_already_set();
        return h;
      },
      pybind::arg("stream"), pybind::arg("call"),
      "The CUstream handle of a stream= argument (python/args.h parse_stream): None is 0, handle 0 the legacy "
      "default stream (CU_STREAM_LEGACY).");
  m.def("_set_gpu_coll", [](pybind::object fn) {
    Py_XDECREF(py::g_gpu_coll);
    py::g_gpu_coll = fn.is_none() ? nullptr : fn.inc_ref().ptr();
  });
  m.def("_torch_fast_path", [] { return pybind::reinterpret_steal<pybind::object>(py::torch_fast_path_status()); },
        "The torch-tensor fast path's state (python/torch_abi.h): enabled, bits, status.");
  m.def(
      "_torch_tensor_read",
      [](pybind::object t, bool fast) {
        PyObject* r = py::torch_tensor_read(t.ptr(), fast);
        if (!r) throw pybind::error_already_set();
        return pybind::reinterpret_steal<pybind::object>(r);
      },
      "Test hook: a torch tensor as the binding reads it, by the fast path or by DLPack (python/dlpack.h).");
  m.def("_set_auto_init", [](pybind::object fn) {
    Py_XDECREF(py::g_auto_init);
    py::g_auto_init = fn.is_none() ? nullptr : fn.inc_ref().ptr();
  });

  m.def("init", [] { pyshmem::init(); }, pybind::call_guard<pybind::gil_scoped_release>(),
        "Collective: start this PE (reads the PYSHMEM_* variables set by shmemrun).");
  m.def(
      "finalize",
      [] {
        {
          pybind::gil_scoped_release nogil;
          pyshmem::finalize();
        }
        py::nbi_sources_release();  // every put_nbi completed with the transports
      },
      "Collective: barrier, then release the heap.");
  m.def("initialized", &is_initialized);
  m.def("finalized", &is_finalized);
  m.def("my_pe", &my_pe);
  m.def("n_pes", &n_pes);
  m.def("global_exit", [](int status) { global_exit(status); });
  // PYSHMEM_TRACE: a PE that ends without finalize (an uncaught exception) still writes its trace.
  m.def("trace_flush", [] { trace_flush(); });
  m.def("order_check_seed", [] { return order_check_seed(); },
        "The ordering check's job seed (PYSHMEM_ORDER_CHECK=1), or '' when it is off.");
  m.def("break_guarantee", [](const std::string& what) { return order_break_guarantee(what); },
        "Test hook: remove one memory-model guarantee (fence, quiet, put_signal; '' restores all).");
  m.def("describe", &describe);
  m.def("transports", &transport_describe);
  m.def("env_table", [] {
    pybind::list rows;
    for (const auto& v : env_table())
      rows.append(pybind::dict(pybind::arg("name") = v.name, pybind::arg("type") = v.type,
                               pybind::arg("default") = v.default_value, pybind::arg("help") = v.help,
                               pybind::arg("is_set") = v.is_set, pybind::arg("value") = v.value));
    return rows;
  });
  m.def("config_check", [] { config_from_env(); }, "Parse every PYSHMEM_* variable; raises on a bad value.");

  m.def("malloc", [](size_t size, size_t align, bool clear, const char* call) {
          return reinterpret_cast<uintptr_t>(sym_malloc(size, align, clear, call));
        },
        pybind::arg("size"), pybind::arg("align"), pybind::arg("clear"), pybind::arg("call"),
        pybind::call_guard<pybind::gil_scoped_release>(), "Collective symmetric allocation; returns the address.");
  m.def("free", [](uintptr_t addr, const char* call) { sym_free(reinterpret_cast<void*>(addr), call); },
        pybind::call_guard<pybind::gil_scoped_release>());
  m.def("malloc_reject", [](const char* call) { sym_malloc_reject(call); },
        pybind::call_guard<pybind::gil_scoped_release>(),
        "Collective: take part in an allocation this PE rejected, so the other PEs fail too.");
  m.def("heap_range", [] {
    require_init("pyshmem.heap_range");
    const Heap& h = state().heap;
    return pybind::make_tuple(reinterpret_cast<uintptr_t>(h.user_begin()), reinterpret_cast<uintptr_t>(h.user_end()));
  });
  m.def("is_symmetric", [](uintptr_t addr, size_t n) { return is_symmetric(reinterpret_cast<void*>(addr), n); });
  m.def("ptr", [](uintptr_t addr, int pe, const char* call) -> pybind::object {
    void* p = sym_ptr(reinterpret_cast<void*>(addr), pe, call);
    if (!p) return pybind::none();
    return pybind::int_(reinterpret_cast<uintptr_t>(p));
  });
  m.def("pe_accessible", &pe_accessible);
  m.def("addr_accessible", [](uintptr_t addr, int pe) { return addr_accessible(reinterpret_cast<void*>(addr), pe); });
  m.def("device_state_address", [] {
    const pyshmem_device_state* st = nullptr;
    if (pyshmem_device_state_get(&st) != PYSHMEM_SUCCESS) require_init("pyshmem.device_state_address");
    return reinterpret_cast<uintptr_t>(st);
  }, "Address of this PE's pyshmem_device_state (for CPU builds of device code loaded at run time).");
  // ---- CUDA backend: the GPU symmetric heap (cuda/gpu_heap.h) ----
  m.def("gpu_probe", &gpu_probe, pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_describe", &gpu_describe);
  m.def("gpu_active", &gpu_active);
  m.def("gpu_arch", &gpu_arch);
  m.def("gpu_host_cell", &gpu_host_cell, pybind::arg("call"));
  m.def("gpu_malloc", &gpu_malloc, pybind::arg("size"), pybind::arg("align"), pybind::arg("clear"),
        pybind::arg("call"), pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_free", &gpu_free, pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_heap_range", [] {
    uint64_t b = 0, e = 0;
    gpu_heap_range(&b, &e);
    return pybind::make_tuple(b, e);
  });
  m.def("gpu_put", &gpu_put, pybind::arg("sym"), pybind::arg("local"), pybind::arg("nbytes"), pybind::arg("pe"),
        pybind::arg("stream"), pybind::arg("call"), pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_get", &gpu_get, pybind::arg("local"), pybind::arg("sym"), pybind::arg("nbytes"), pybind::arg("pe"),
        pybind::arg("stream"), pybind::arg("call"), pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_state_upload", &gpu_state_upload, pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_module_load", [](pybind::bytes image, const char* call) {
    std::string data = image;
    pybind::gil_scoped_release nogil;
    return gpu_module_load(data, call);
  });
  m.def("gpu_module_function", &gpu_module_function);
  m.def("gpu_module_unload", &gpu_module_unload);
  m.def("gpu_launch", [](uint64_t fn, std::array<unsigned, 3> grid, std::array<unsigned, 3> block, unsigned shared,
                         uint64_t stream, const std::vector<pybind::bytes>& args, bool cooperative,
                         const char* call) {
    std::vector<std::string> packed(args.begin(), args.end());
    pybind::gil_scoped_release nogil;
    gpu_launch(fn, grid.data(), block.data(), shared, stream, packed, cooperative, call);
  });
  m.def("gpu_atomics_problem", &gpu_atomics_problem, pybind::arg("pe"));
  m.def("gpu_private_stream", &gpu_private_stream, pybind::arg("call"));
  m.def("gpu_watch_user_stream", &gpu_watch_user_stream, pybind::arg("stream"), pybind::arg("call"),
        pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_stream_synchronize", &gpu_stream_synchronize, pybind::arg("stream"), pybind::arg("call"),
        pybind::call_guard<pybind::gil_scoped_release>());
  m.def("gpu_device_state_address", [] { return reinterpret_cast<uintptr_t>(gpu_device_state()); });
  py::team_bind(m);
  m.def("bytes_free", &sym_bytes_free);
  m.def("capacity", &sym_capacity);
}
