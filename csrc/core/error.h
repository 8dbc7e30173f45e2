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
  // `located`: the message already starts with "<call> on PE <k>: " (fail() does that).
  // Errors raised below the API (a transport, the bootstrap) do not know the call; the
  // API boundary that catches them (the Python binding, the C ABI) prefixes it.
  Error(pyshmem_status status, const std::string& msg, bool located = false)
      : std::runtime_error(msg), status_(status), located_(located) {}
  pyshmem_status status() const { return status_; }
  bool located() const { return located_; }

 private:
  pyshmem_status status_;
  bool located_;
};

// Formats "<call> on PE <pe>: <what>" so every message says where it happened.
std::string error_where(const char* call);

[[noreturn]] void fail(pyshmem_status status, const char* call, const std::string& what);

// For code below the API that cannot know which call it serves (transports, the
// bootstrap): throws an unlocated Error "<layer>: <what>" (just <what> when layer is
// null); the API boundary adds
// "<call> on PE <k>: " in front (error_message).
[[noreturn]] void fail_inner(pyshmem_status status, const char* layer, const std::string& what);

// The message to show for `e` caught at the API boundary of `call`: e.what(), with the
// call and PE in front when the error did not name them itself.
std::string error_message(const Error& e, const char* call);

// Throws PYSHMEM_ERR_SYSTEM with strerror(errno) appended.
[[noreturn]] void fail_errno(const char* call, const std::string& what);

}  // namespace pyshmem
