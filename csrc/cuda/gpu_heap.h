// cuda/gpu_heap.h: the GPU symmetric heap of the CUDA backend.
//
// Each PE creates one cuMem (VMM) allocation on its GPU, exports it as a POSIX file
// descriptor, passes it to the node's PEs over the same authenticated Unix-socket
// exchange as the CPU heap, and maps every local PE's allocation into one reserved
// virtual range: slot p = base + p * stride, so peer addresses are arithmetic, exactly
// as on the CPU heap. The first 64 KiB of each slot is a system area (device barrier
// counters, per-peer flags); symmetric GPU objects are allocated after it by the same
// deterministic allocator as the CPU heap. Host-side symmetric arrays stay on the CPU
// heap; the GPU heap is an addition, present when the backend is cuda.
//
// This header needs no CUDA headers: the rest of the core calls it in every build. In
// builds without the CUDA headers, the functions report that the backend is not built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "pyshmem/device_state.h"

namespace pyshmem {

struct State;

// At init, collective: decides the backend (PYSHMEM_BACKEND: cpu, cuda, or auto = cuda
// when every PE has a usable GPU) and, for cuda, creates and maps the GPU heap.
// Throws for PYSHMEM_BACKEND=cuda when the GPU heap cannot be made (with the reason).
void gpu_heap_create(State& s, const std::string& token);

// At finalize: the GPU heap is no longer usable through pyshmem (mappings are
// released with the process, like the CPU heap's own segment).
void gpu_heap_retire(State& s);

// True when this PE has a GPU heap (backend cuda).
bool gpu_active();

// The CUDA device ordinal of this PE's GPU heap (-1 without one).
int gpu_device_ordinal();

// One line about the backend's GPU side ("cuda: GPU 0 (NVIDIA H200), 1 GiB heap ...",
// or why the GPU is not used). Valid before init too.
std::string gpu_describe();

// This PE's GPU architecture, e.g. "sm_90" ("" without a GPU heap).
std::string gpu_arch();

// What the CUDA driver offers here ("CUDA driver 13.0, 1 GPU(s): NVIDIA H200"), or why
// it cannot be used. Loads the driver named by PYSHMEM_CUDA_DRIVER; no init needed.
std::string gpu_probe();

// Throws NOT_IMPLEMENTED naming `call` unless this PE has a GPU heap (with why not).
void gpu_require(const char* call);

// The allocator of this PE's GPU user heap, local (host/gpu_memory.cpp makes the
// collective gpu_malloc/gpu_free of them). gpu_heap_allocate: false when no block of
// `size` bytes at `align` is free (or there is no GPU heap), else *addr is its device
// address, at the same offset on every PE that allocates in the same order.
// gpu_heap_clear zeroes [addr, addr + nbytes), complete on return. gpu_heap_size_of:
// the bytes of the live allocation that starts at addr, 0 for anything else.
bool gpu_heap_allocate(size_t size, size_t align, uint64_t* addr);
void gpu_heap_clear(uint64_t addr, size_t nbytes, const char* call);
size_t gpu_heap_size_of(uint64_t addr);
void gpu_heap_release(uint64_t addr);  // addr: a live allocation
size_t gpu_heap_bytes_free();
size_t gpu_heap_capacity();

// True when [addr, addr + nbytes) lies in this PE's GPU user heap.
bool gpu_is_symmetric(uint64_t addr, size_t nbytes);

// [begin, end) of this PE's GPU user heap (0, 0 when there is none).
void gpu_heap_range(uint64_t* begin, uint64_t* end);

// Host-initiated copies to/from PE pe's copy of the symmetric GPU object at `sym`
// (an address in this PE's GPU heap). `local` may be any address CUDA can copy
// (device or host memory; unified addressing). stream 0: returns when `local` may be
// reused (put) or holds the data (get). Otherwise the copy is enqueued on that
// CUstream and completes in stream order. A PE whose GPU heap is on another node is
// reached through its transport (UCX registered the GPU heap): the stream is
// synchronised first and the transfer is done on return. Throws naming `call` for a
// non-symmetric `sym`, a PE out of range, or a PE no transport reaches.
void gpu_put(uint64_t sym, uint64_t local, size_t nbytes, int pe, uint64_t stream, const char* call);
void gpu_get(uint64_t local, uint64_t sym, size_t nbytes, int pe, uint64_t stream, const char* call);

// This process's address of PE pe's copy of the symmetric GPU object at `sym` (device
// memory kernels of this PE can load and store), or 0 when pe's GPU heap is not mapped
// here (another node). Throws naming `call` for a non-symmetric `sym` or a bad PE.
uint64_t gpu_peer_address(uint64_t sym, int pe, const char* call);

// For threads pyshmem owns (the proxy): makes pyshmem's CUDA context current on the
// calling thread for good, since such a thread hands GPU addresses to transports and
// flushes GPU writes. A no-op without a GPU heap.
void gpu_thread_attach();

// Makes data that a transport wrote into this PE's GPU memory (a UCX get: GPUDirect
// RDMA writes) visible to GPU kernels; call before publishing the get's completion to
// a kernel. On an attached thread or inside a host API call. No-op without a GPU heap.
void gpu_flush_writes(const char* call);

// "" when atomics (and signals) from this PE on PE pe's GPU heap can be done (same node,
// or a transport that can do atomics in GPU memory); else why not, for an error naming
// `call` (the host API asks before it launches the atomic's kernel).
std::string gpu_atomics_problem(int pe);

// The device state for GPU code (addresses in the GPU heap; peer flags in GPU memory).
const pyshmem_device_state* gpu_device_state();

// Pinned host memory that the GPU reaches at the same address (unified addressing),
// for the proxy ring of GPU kernels; 64-byte aligned. Null without a GPU heap or on
// failure. Freed with gpu_pinned_free.
void* gpu_pinned_alloc(size_t bytes);
void gpu_pinned_free(void* p);

// Address of 64 bytes of pinned host memory kernels can store to (allocated on first
// use, kept for the process): where the host-API atomics on GPU arrays get results.
uint64_t gpu_host_cell(const char* call);

// Points the GPU device state (uploaded into every module loaded after this) at the
// proxy ring of GPU kernels (null: kernels reach only same-node peers).
void gpu_state_set_proxy(pyshmem_proxy_fifo* fifo);

// Teams on the GPU (the team table's mirror, team/team.h TeamMirror; no-ops without an active GPU heap). The
// GPU heap ends with team slots and a copy of the team table, which the GPU device
// state points to. Kernels see table changes from their next launch on.
void gpu_teams_setup(const pyshmem_team_desc* table, uint32_t slot_bytes, uint32_t max_teams, uint32_t rounds);
void gpu_team_update(int index, const pyshmem_team_desc& d);  // copies one entry to the GPU
void gpu_team_slot_clear(int index);                             // zeroes this PE's GPU slot

// Copies the device state into `pyshmem_d_state` of a loaded CUmodule, or of a
// CUlibrary when is_library (cuda.core and Numba load code as libraries); the handle
// as an integer. Throws when the code has no such symbol (it does not include the
// device API) or the backend is not cuda.
void gpu_state_upload(uint64_t handle, bool is_library, const char* call);

}  // namespace pyshmem
