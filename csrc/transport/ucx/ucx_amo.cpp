// transport/ucx/ucx_amo.cpp: atomics on PEs of other nodes through UCP (the ucx
// transport's amo row, and whether a peer's GPU heap can take them).
//
// fetch = atomic add 0, set = swap, compare_swap = CSWAP (compare value in the buffer,
// new value in the reply buffer); UCX has 4- and 8-byte atomics only. Fetching
// atomics wait for their answer; others return once issued and complete at the next
// quiet (a set keeps its SWAP's reply buffer with the request until then).
#include <cstring>
#include <string>
#include <vector>

#include "core/backoff.h"
#include "core/error.h"
#include "core/state.h"
#include "transport/ucx/gpu_atomics.h"
#include "transport/ucx/ucx_state.h"

namespace pyshmem {
namespace ucx_impl {

// An atomic on a peer's GPU memory needs a transport whose NIC performs it (InfiniBand
// or RoCE verbs: rc_verbs, rc_mlx5, dc_mlx5, with GPUDirect RDMA); transports that run
// atomics in software on the target's CPU (tcp, the shared-memory ones) would have that
// CPU touch GPU memory, which it cannot. "" when the atomic may go; else why not, naming
// the endpoint's transports. Decided once per PE.
std::string ucx_gpu_atomics_check(State&, int pe) {
  if (!g.gpu_seg_is_cuda || pe < 0 || pe >= static_cast<int>(g.ep.size()) || !g.ep[pe]) return "";
  std::lock_guard<std::mutex> lock(g.amo_mu);
  std::string& problem = g.gpu_amo_problem[pe];
  if (problem == "?") {
    ucp_transport_entry_t entries[16];
    ucp_ep_attr_t attr{};
    attr.field_mask = UCP_EP_ATTR_FIELD_TRANSPORTS;
    attr.transports.entries = entries;
    attr.transports.num_entries = 16;
    attr.transports.entry_size = sizeof(ucp_transport_entry_t);
    std::vector<std::string> names;
    if (lib().ucp_ep_query(g.ep[pe], &attr) == UCS_OK)
      for (unsigned i = 0; i < attr.transports.num_entries; ++i)
        if (entries[i].transport_name) names.emplace_back(entries[i].transport_name);
    problem = ucx_gpu_atomics_problem(names);
  }
  return problem;
}

void ucx_amo(State& s, const AmoArgs& a) {
  const size_t size = PYSHMEM_DTYPE_SIZE(a.dtype);
  if (size != 4 && size != 8)
    fail_inner(PYSHMEM_ERR_NOT_IMPLEMENTED, "UCX",
               "atomics on " + std::to_string(size) + "-byte elements of a PE on another node (PE " +
                   std::to_string(a.pe) + ") are not supported: UCX atomics are 4 and 8 bytes wide; use an "
                   "int32/int64 (or uint32/uint64) array");
  const bool is_float = (a.dtype & 0xf0) == 0x20;
  if (is_float && a.op != PYSHMEM_AMO_FETCH && a.op != PYSHMEM_AMO_SET && a.op != PYSHMEM_AMO_SWAP)
    fail_inner(PYSHMEM_ERR_TYPE, "UCX",
               "floating-point atomics support only fetch, set and swap (OpenSHMEM extended AMOs); use an integer "
               "array for add/inc/compare_swap/bitwise operations");
  uint64_t operand = 0, reply = 0;
  if (a.value) std::memcpy(&operand, a.value, size);
  // A set is a SWAP whose old value nobody reads: issued without waiting for the
  // target's answer (a round trip that, over tcp, also waits for the target to
  // progress), complete at the next quiet like any non-fetching atomic.
  const bool set_nbi = a.op == PYSHMEM_AMO_SET && a.fetch == nullptr;
  ucp_atomic_op_t op = UCP_ATOMIC_OP_ADD;
  bool need_reply = a.fetch != nullptr;
  switch (a.op) {
    case PYSHMEM_AMO_FETCH: op = UCP_ATOMIC_OP_ADD; operand = 0; need_reply = true; break;
    case PYSHMEM_AMO_SET: op = UCP_ATOMIC_OP_SWAP; need_reply = true; break;  // SWAP needs a reply buffer
    case PYSHMEM_AMO_SWAP: op = UCP_ATOMIC_OP_SWAP; need_reply = true; break;
    case PYSHMEM_AMO_COMPARE_SWAP:
      op = UCP_ATOMIC_OP_CSWAP;  // buffer = compare value; reply = new value in, old value out
      reply = operand;
      operand = 0;
      std::memcpy(&operand, a.cond, size);
      need_reply = true;
      break;
    case PYSHMEM_AMO_ADD: op = UCP_ATOMIC_OP_ADD; break;
    case PYSHMEM_AMO_INC: op = UCP_ATOMIC_OP_ADD; operand = 1; break;
    case PYSHMEM_AMO_AND: op = UCP_ATOMIC_OP_AND; break;
    case PYSHMEM_AMO_OR: op = UCP_ATOMIC_OP_OR; break;
    case PYSHMEM_AMO_XOR: op = UCP_ATOMIC_OP_XOR; break;
    default: fail_inner(PYSHMEM_ERR_INTERNAL, "UCX", "unknown atomic operation " + std::to_string(a.op));
  }
  if (need_reply && !set_nbi) note_transport_op();
  else mark_dirty(a.pe);
  std::unique_ptr<char[]> kept_reply(set_nbi ? new char[sizeof(uint64_t)] : nullptr);
  ucp_request_param_t prm{};
  prm.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  prm.datatype = ucp_dt_make_contig(size);
  if (need_reply) {
    prm.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
    prm.reply_buffer = set_nbi ? static_cast<void*>(kept_reply.get()) : &reply;
  }
  const Remote r = remote(a.dest, a.pe);
  if (g.seg.size() > 1 && r.rkey == g.seg.back().rkey[a.pe]) {  // the target is in the GPU heap
    const std::string problem = ucx_gpu_atomics_check(s, a.pe);
    if (!problem.empty())
      fail_inner(PYSHMEM_ERR_NOT_IMPLEMENTED, "UCX", "an atomic on PE " + std::to_string(a.pe) + "'s GPU memory: " + problem);
  }
  ucs_status_ptr_t req = lib().ucp_atomic_op_nbx(g.ep[a.pe], op, &operand, 1, r.addr, r.rkey, &prm);
  if (set_nbi) {
    keep_pending("atomic", req, a.pe, std::move(kept_reply));
    return;
  }
  wait("atomic", req, a.pe);
  if (a.fetch) std::memcpy(a.fetch, &reply, size);
}

}  // namespace ucx_impl
}  // namespace pyshmem
