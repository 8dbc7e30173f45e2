// core/error.h: the one exception type of the C++ core.
//
// Every failure inside the core throws pyshmem::Error carrying a status code (which the
// C ABI returns and the binding maps to a Python exception type) and a message that
// names the call, the PE and, where there is one, the fix.
#pragma once

#include <stdexcept>
#include <string>

#include "pyshmem/types.h"

namespace pyshmem {

class Error : public std::runtime_error {
 public:
  Error(pyshmem_status status, const std::string& msg) : std::runtime_error(msg), status_(status) {}
  pyshmem_status status() const { return status_; }

 private:
  pyshmem_status status_;
};

// Formats "<call> on PE <pe>: <what>" so every message says where it happened.
std::string error_where(const char* call);

[[noreturn]] void fail(pyshmem_status status, const char* call, const std::string& what);

// Throws PYSHMEM_ERR_SYSTEM with strerror(errno) appended.
[[noreturn]] void fail_errno(const char* call, const std::string& what);

}  // namespace pyshmem
