#include "core/log.h"

#include <cstdarg>
#include <cstdio>

#include "core/state.h"

namespace pyshmem {

void log_debug(const char* fmt, ...) {
  const State& s = state();
  if (!s.config.DEBUG) return;
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "pyshmem[pe %d]: %s\n", s.pe, buf);
}

}  // namespace pyshmem
