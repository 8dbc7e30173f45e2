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
  throw Error(status, error_where(call) + ": " + what);
}

void fail_errno(const char* call, const std::string& what) {
  int err = errno;
  fail(PYSHMEM_ERR_SYSTEM, call, what + ": " + std::strerror(err));
}

}  // namespace pyshmem
