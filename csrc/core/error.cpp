#include "core/error.h"

#include <cerrno>
#include <cstring>

#include "core/state.h"

namespace pyshmem {

std::string error_where(const char* call) {
  const State& s = state();
  std::string where = call ? call : "pyshmem";
  if (s.pe >= 0) where += " on PE " + std::to_string(s.pe);
  return where;
}

void fail(pyshmem_status status, const char* call, const std::string& what) {
  throw Error(status, error_where(call) + ": " + what, true);
}

void fail_inner(pyshmem_status status, const char* layer, const std::string& what) {
  throw Error(status, layer ? std::string(layer) + ": " + what : what, false);
}

std::string error_message(const Error& e, const char* call) {
  if (e.located()) return e.what();
  return error_where(call ? call : "pyshmem") + ": " + e.what();
}

void fail_errno(const char* call, const std::string& what) {
  int err = errno;
  fail(PYSHMEM_ERR_SYSTEM, call, what + ": " + std::strerror(err));
}

}  // namespace pyshmem
