// host/c_api_guard.h: how the C ABI's functions (host/c_api.cpp, host/c_api_gpu.cpp)
// turn C++ exceptions into status codes and pyshmem_last_error()'s message. Exceptions
// never cross the C boundary.
#pragma once

#include <exception>
#include <string>

#include "core/error.h"
#include "pyshmem/types.h"

namespace pyshmem {
namespace capi {

// The message of the last failed C call on this thread ("" after a success).
std::string& last_error();

// Runs f; returns PYSHMEM_SUCCESS, or the failure's status with its message kept.
template <class F>
int guard(F&& f) {
  try {
    f();
    last_error().clear();
    return PYSHMEM_SUCCESS;
  } catch (const Error& e) {
    last_error() = error_message(e, nullptr);
    return e.status();
  } catch (const std::exception& e) {
    last_error() = e.what();
    return PYSHMEM_ERR_INTERNAL;
  } catch (...) {  // e.g. a wait abandoned by an interrupt hook
    last_error() = "pyshmem: the call was interrupted";
    return PYSHMEM_ERR_INTERRUPTED;
  }
}

}  // namespace capi
}  // namespace pyshmem
