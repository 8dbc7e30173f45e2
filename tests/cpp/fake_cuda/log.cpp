// fake_cuda/log.cpp - the call log: with FAKE_CUDA_LOG=<path>, one line per
// entry-point call appended to <path> (format: tests/cpp/fake_cuda_driver.cpp).
// The file is opened with O_APPEND and each line is written with one write(), so
// several processes can share it without tearing lines.
#include "fake_cuda.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fakecuda {
namespace {

int open_log() {
  const char* path = std::getenv("FAKE_CUDA_LOG");
  if (path == nullptr || *path == '\0') return -1;
  return ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

int log_fd() {
  static const int fd = open_log();  // never closed: other threads may still log at exit
  return fd;
}

thread_local std::string t_line;
thread_local bool t_logging = false;

}  // namespace

bool log_enabled() { return log_fd() >= 0; }
bool log_active() { return t_logging; }

void log_detail(const char* fmt, ...) {
  if (!t_logging) return;
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  t_line += ' ';
  t_line.append(buf, static_cast<size_t>(n) < sizeof buf ? static_cast<size_t>(n) : sizeof buf - 1);
}

const char* stream_text(CUstream s) {
  thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "0x%jx", static_cast<uintmax_t>(reinterpret_cast<uintptr_t>(s)));
  return buf;
}

void CallLog::begin(const char* name) {
  char head[128];
  std::snprintf(head, sizeof head, "%ld %ld %d %s", static_cast<long>(::getpid()),
                static_cast<long>(::syscall(SYS_gettid)), current_device(), name);
  t_line = head;
  t_logging = true;
}

void CallLog::finish(CUresult r) {
  t_logging = false;
  t_line += " rc=" + std::to_string(static_cast<int>(r)) + "\n";
  // One write() per line: with O_APPEND the kernel appends it in one piece.
  ssize_t ignored = ::write(log_fd(), t_line.data(), t_line.size());
  (void)ignored;
}

}  // namespace fakecuda
