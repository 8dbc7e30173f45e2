// host/signal.cpp: put-with-signal and signal queries.
#include <atomic>

#include "core/backoff.h"
#include "core/trace.h"
#include "host/check.h"
#include "order/order_check.h"
#include "transport/transport.h"

namespace pyshmem {

void putmem_signal(void* dest, const void* src, size_t nbytes, uint64_t* sig_addr, uint64_t signal, int sig_op,
                   int pe, const char* call) {
  State& s = rma_prologue(call, pe);
  require_symmetric(call, "target", dest, nbytes);
  require_symmetric(call, "signal", sig_addr, sizeof(uint64_t));
  require_aligned(call, "signal", sig_addr, sizeof(uint64_t));
  if (sig_op != PYSHMEM_SIGNAL_SET && sig_op != PYSHMEM_SIGNAL_ADD)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "signal operation (sigop) must be SIGNAL_SET or SIGNAL_ADD (got " + std::to_string(sig_op) + ")");
  hang_note_op(PYSHMEM_OP_PUT, pe, dest, nbytes);
  hang_note_op(PYSHMEM_OP_SIGNAL, pe, sig_addr, sizeof(uint64_t));
  const TraceSpan span(kTraceSignal, call, pe, nbytes);
  const AmoArgs sig{sig_op == PYSHMEM_SIGNAL_SET ? PYSHMEM_AMO_SET : PYSHMEM_AMO_ADD, PYSHMEM_UINT64, sig_addr,
                    &signal, nullptr, nullptr, pe};
  if (order_holds(s, pe)) return order_put_signal(s, dest, src, nbytes, sig);  // the signal after its data
  const Transport* t = s.route[pe];
  if (nbytes) t->put(s, dest, src, nbytes, pe);
  if (!order_guarantee_broken(kBrokenPutSignal)) t->fence(s);  // the data must be visible before the signal
  t->amo(s, sig);
}

uint64_t signal_fetch(const uint64_t* sig_addr, const char* call) {
  require_init(call);
  require_symmetric(call, "signal", sig_addr, sizeof(uint64_t));
  require_aligned(call, "signal", sig_addr, sizeof(uint64_t));
  return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t value, const char* call) {
  require_init(call);
  require_symmetric(call, "signal", sig_addr, sizeof(uint64_t));
  require_aligned(call, "signal", sig_addr, sizeof(uint64_t));
  if (cmp < PYSHMEM_CMP_EQ || cmp > PYSHMEM_CMP_GE)
    fail(PYSHMEM_ERR_INVALID_ARG, call, "cmp must be one of CMP_EQ/NE/GT/LE/LT/GE (got " + std::to_string(cmp) + ")");
  const State& s = state();
  const WaitInfo info{call, sig_addr, PYSHMEM_UINT64, cmp, value, -1};
  const WaitScope scope(info);
  Backoff backoff(s.config.SPIN_ITERS, s.config.WAIT_SLEEP_MAX_US);
  for (;;) {
    uint64_t v = __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
    if (compare(&v, PYSHMEM_UINT64, cmp, &value)) return v;
    backoff.pause();
  }
}

}  // namespace pyshmem
