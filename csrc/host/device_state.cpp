// host/device_state.cpp: fills the device-state struct (include/pyshmem/device_state.h).
#include <cstddef>
#include <vector>

#include "core/backoff.h"
#include "core/error.h"
#include "core/state.h"
#include "core/trace.h"
#include "host/hang_report.h"
#include "proxy/proxy.h"
#include "team/team.h"
#include "pyshmem/device_state.h"
#include "transport/transport.h"

static_assert(offsetof(pyshmem_device_state, heap_base) == 16, "device state layout is an ABI");
static_assert(offsetof(pyshmem_device_state, peer_flags) == 48, "device state layout is an ABI");
static_assert(offsetof(pyshmem_device_state, proxy) == 56, "device state layout is an ABI");
static_assert(offsetof(pyshmem_device_state, teams) == 64, "device state layout is an ABI");
static_assert(offsetof(pyshmem_device_state, wait_timeout_ns) == 96, "device state layout is an ABI");
static_assert(offsetof(pyshmem_device_state, note_op) == 112, "device state layout is an ABI");
static_assert(offsetof(pyshmem_device_state, progress) == 120, "device state layout is an ABI");
static_assert(sizeof(pyshmem_device_state) == 128, "device state layout is an ABI");
static_assert(sizeof(pyshmem_team_desc) == 32, "team table layout is an ABI");

namespace pyshmem {
namespace {
pyshmem_device_state g_state{};
std::vector<uint8_t> g_peer_flags;
}  // namespace

// Called at the end of init (host/init.cpp).
void device_state_fill(const State& s) {
  g_peer_flags.assign(s.npes, 0);
  for (int p = 0; p < s.npes; ++p)
    if (s.route[p] && (s.route[p]->caps & kCapLoadStore)) g_peer_flags[p] |= PYSHMEM_PEER_LOAD_STORE;
  g_state = pyshmem_device_state{};
  g_state.version = PYSHMEM_DEVICE_STATE_VERSION;
  g_state.my_pe = s.pe;
  g_state.n_pes = s.npes;
  g_state.flags = (s.config.DEBUG ? PYSHMEM_STATE_DEBUG : 0u) | (s.config.PROXY_ALL ? PYSHMEM_STATE_PROXY_ALL : 0u) |
                  (s.config.ORDER_CHECK ? PYSHMEM_STATE_ORDER_CHECK : 0u);
  g_state.heap_base = reinterpret_cast<uint64_t>(s.heap.reservation);
  g_state.heap_stride = s.heap.stride;
  g_state.heap_size = s.heap.size;
  g_state.user_offset = kSysAreaBytes;
  g_state.peer_flags = g_peer_flags.data();
  g_state.proxy = proxy_fifo(s);
  g_state.wait_timeout_ns = static_cast<uint64_t>(g_hang_timeout_ns);  // set by hang_init, earlier in init
  g_state.wait_hook = device_wait_hook;
  // Costs only with PYSHMEM_TIMEOUT (the hang report's last operations) or PYSHMEM_TRACE.
  g_state.note_op = g_record_ops || g_trace_on ? device_note_op : nullptr;
  g_state.progress = g_progress_hook;  // set by a transport's setup, earlier in init
  team_device_fill(&g_state);
}

}  // namespace pyshmem

extern "C" int pyshmem_device_state_get(const pyshmem_device_state** state_out) {
  if (!pyshmem::state().initialized) return PYSHMEM_ERR_NOT_INIT;
  *state_out = &pyshmem::g_state;
  return PYSHMEM_SUCCESS;
}
