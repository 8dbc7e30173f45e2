// core/log.h: debug logging to stderr, enabled by PYSHMEM_DEBUG=1.
#pragma once

namespace pyshmem {
// printf-style; prefixed "pyshmem[pe N]: ". No-op unless state().config.DEBUG.
void log_debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
}  // namespace pyshmem
