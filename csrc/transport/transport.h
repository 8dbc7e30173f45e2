// transport/transport.h: the one seam between the host API and the ways of reaching a PE.
//
// A transport is a table of operations plus capability bits. At init every PE gets a
// route: the first transport in the registry (transport/registry.cpp) that can reach it.
// The host API calls through the route and never names a transport; adding UCX means
// adding a row to the registry, not an #ifdef in the API.
//
// Addresses passed to transports are symmetric addresses *in the caller's own heap*
// (the caller's copy of the object); the transport finds the target PE's copy.
// Completion: put/get/amo return when the source may be reused / the result is in
// place (blocking semantics); remote visibility of puts is guaranteed only after
// quiet (all PEs) or ordered by fence (per PE), as OpenSHMEM specifies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pyshmem/types.h"

namespace pyshmem {

struct State;

enum TransportCaps : uint32_t {
  kCapLoadStore = 1u << 0,  // peer memory is mapped: ptr() returns an address
  kCapRma = 1u << 1,
  kCapAmo = 1u << 2,
};

struct AmoArgs {
  int op;             // pyshmem_amo_op
  int dtype;          // pyshmem_dtype
  void* dest;         // symmetric address (caller's copy)
  const void* value;  // operand (SET/SWAP/ADD/AND/OR/XOR/COMPARE_SWAP new value), may be null
  const void* cond;   // COMPARE_SWAP comparand, else null
  void* fetch;        // where the old value goes, null for non-fetching ops
  int pe;
};

struct Transport {
  const char* name;
  uint32_t caps;
  // False (with a reason) when the transport cannot be used in this process at all.
  bool (*available)(std::string* why);
  bool (*can_reach)(const State& s, int pe);
  void (*put)(State& s, void* dest, const void* src, size_t nbytes, int pe);
  void (*get)(State& s, void* dest, const void* src, size_t nbytes, int pe);
  void (*amo)(State& s, const AmoArgs& a);
  void (*fence)(State& s);
  void (*quiet)(State& s);
  // Optional (may be null). setup: collective over all PEs, after routing, when any PE
  // routes a peer through this transport. progress: lets remote operations targeting
  // this PE advance (called from waits). teardown: at finalize, after the last barrier.
  void (*setup)(State& s);
  // Non-blocking put: may return before `src` is read (complete after quiet). Null:
  // put is used (load/store transports complete on return anyway).
  void (*put_nbi)(State& s, void* dest, const void* src, size_t nbytes, int pe);
  void (*progress)(State& s);
  void (*teardown)(State& s);
  // Optional: "" when atomics on PE pe's GPU heap can go through this transport, else
  // why not and what to do (null: they can, or the transport never carries GPU memory).
  std::string (*gpu_atomics_problem)(State& s, int pe);
  // Optional (both null, or both set; after setup): how an idle proxy thread sleeps
  // until remote work for this PE arrives instead of polling progress(). wakeup_fd: a
  // file descriptor that becomes readable then, or -1 when this process has none.
  // wakeup_arm: true when armed (sleeping on the fd now is safe); false when work is
  // already pending (call progress() first) or arming failed.
  int (*wakeup_fd)(State& s);
  bool (*wakeup_arm)(State& s);
};

// Registry in preference order; null-terminated.
extern const Transport* const kTransports[];

// Fills s.route. Throws Error(NOT_IMPLEMENTED) naming the PE and the missing transport
// when some PE cannot be reached.
void transport_route_all(State& s);

// Collective: runs setup() of every transport some PE routes through (init).
void transport_setup_all(State& s);

// Runs teardown() of every transport that was set up (finalize).
void transport_teardown_all(State& s);

// Describes each registered transport ("shm: available", "ucx: not built ...").
std::string transport_describe();

extern const Transport kShmTransport;
extern const Transport kUcxTransport;  // transport/ucx/ucx.cpp, or ucx_none.cpp without UCX headers

}  // namespace pyshmem
