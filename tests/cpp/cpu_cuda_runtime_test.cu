// Behaviour of pyshmem's CPU CUDA runtime (pyshmem/cpu_cuda_runtime.h), written as a
// CUDA program's host code: error codes, memory, streams' order and asynchrony, the
// legacy default stream's synchronisation, events, device count and sticky errors.
// tests/unit/test_cpu_cuda_runtime.py compiles it with g++ the way `pyshmem-nvcc --cpu`
// does and runs it; checks that only hold on the CPU build (pyshmem's hooks, PYSHMEM_NPES)
// are under PYSHMEM_CPU_CUDA_RUNTIME, the rest is plain CUDA.
//
// Usage: cpu_cuda_runtime_test EXPECTED_DEVICE_COUNT. Prints "cpu_cuda_runtime_test: OK"
// and exits 0, or prints every failed check and exits 1.
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

static int failures = 0;
#define CHECK(cond)                                             \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "FAIL line %d: %s\n", __LINE__, #cond);  \
      ++failures;                                               \
    }                                                           \
  } while (0)
#define CHECK_EQ(a, b)                                                                              \
  do {                                                                                              \
    long long va_ = (long long)(a), vb_ = (long long)(b);                                           \
    if (va_ != vb_) {                                                                               \
      fprintf(stderr, "FAIL line %d: %s == %s (%lld vs %lld)\n", __LINE__, #a, #b, va_, vb_);       \
      ++failures;                                                                                   \
    }                                                                                               \
  } while (0)

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

__global__ void some_kernel(int* x) { x[0] = 1; }

// Host functions (cudaLaunchHostFunc): sleep, then publish or observe a flag.
struct Flag {
  std::atomic<int> value{0};
  std::atomic<int> seen{-1};   // what an observer read
  int sleep_ms = 0;
  std::atomic<int>* watched = nullptr;
};
static void CUDART_CB sleep_then_set(void* p) {
  Flag* f = static_cast<Flag*>(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(f->sleep_ms));
  f->value.store(1);
}
static void CUDART_CB observe(void* p) {
  Flag* f = static_cast<Flag*>(p);
  f->seen.store(f->watched->load());
}
struct Write {
  int* where;
  int value;
  int sleep_ms;
};
static void CUDART_CB sleep_then_write(void* p) {
  Write* w = static_cast<Write*>(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(w->sleep_ms));
  *(volatile int*)w->where = w->value;
}
struct Log {
  std::vector<int> order;
  int next = 0;
};
static void CUDART_CB append(void* p) {
  Log* l = static_cast<Log*>(p);
  l->order.push_back(l->next++);
}

static void test_errors() {
  CHECK_EQ(cudaSuccess, 0);
  CHECK_EQ(cudaErrorInvalidValue, 1);
  CHECK_EQ(cudaErrorMemoryAllocation, 2);
  CHECK_EQ(cudaErrorInitializationError, 3);
  CHECK_EQ(cudaErrorInvalidConfiguration, 9);
  CHECK_EQ(cudaErrorInvalidMemcpyDirection, 21);
  CHECK_EQ(cudaErrorInvalidDeviceFunction, 98);
  CHECK_EQ(cudaErrorNoDevice, 100);
  CHECK_EQ(cudaErrorInvalidDevice, 101);
  CHECK_EQ(cudaErrorInvalidResourceHandle, 400);
  CHECK_EQ(cudaErrorNotReady, 600);
  CHECK_EQ(cudaErrorLaunchFailure, 719);
  CHECK_EQ(cudaErrorCooperativeLaunchTooLarge, 720);
  CHECK_EQ(cudaErrorNotPermitted, 800);
  CHECK_EQ(cudaErrorNotSupported, 801);
  CHECK_EQ(cudaErrorUnknown, 999);
  CHECK_EQ(cudaMemcpyDefault, 4);
  CHECK_EQ(cudaStreamNonBlocking, 1);
  CHECK_EQ(cudaEventDisableTiming, 2);
  CHECK(strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0);
  CHECK(strcmp(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady") == 0);
  CHECK(strcmp(cudaGetErrorName(cudaSuccess), "cudaSuccess") == 0);
  CHECK(strlen(cudaGetErrorString(cudaErrorMemoryAllocation)) > 0);
  CHECK(strcmp(cudaGetErrorString(cudaSuccess), cudaGetErrorString(cudaErrorInvalidValue)) != 0);

  // Last error: set by a failing call, peeked without clearing, cleared by Get.
  CHECK_EQ(cudaGetLastError(), cudaSuccess);
  CHECK_EQ(cudaSetDevice(1 << 20), cudaErrorInvalidDevice);
  int count = 0;
  CHECK_EQ(cudaGetDeviceCount(&count), cudaSuccess);  // a success does not reset it
  CHECK_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  CHECK_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
  cudaError_t other_thread = cudaErrorUnknown;  // per host thread
  std::thread([&] { other_thread = cudaPeekAtLastError(); }).join();
  CHECK_EQ(other_thread, cudaSuccess);
  CHECK_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  CHECK_EQ(cudaGetLastError(), cudaSuccess);
}

static void test_memory() {
  CHECK_EQ(cudaFree(0), cudaSuccess);  // the "initialise the runtime" idiom
  int on_stack = 0;
  CHECK_EQ(cudaFree(&on_stack), cudaErrorInvalidValue);
  CHECK_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  void* blocks[5];
  const size_t sizes[5] = {1, 3, 255, 1000, 4097};
  for (int i = 0; i < 5; ++i) {
    CHECK_EQ(cudaMalloc(&blocks[i], sizes[i]), cudaSuccess);
    CHECK_EQ((uintptr_t)blocks[i] % 256, 0);
  }
  CHECK_EQ(cudaFreeHost(blocks[0]), cudaErrorInvalidValue);  // not from cudaMallocHost
  for (int i = 0; i < 5; ++i) CHECK_EQ(cudaFree(blocks[i]), cudaSuccess);
  CHECK_EQ(cudaFree(blocks[2]), cudaErrorInvalidValue);  // freed already
  cudaGetLastError();

  const size_t n = 4096;
  unsigned char *d = nullptr, *h = nullptr;
  CHECK_EQ(cudaMalloc((void**)&d, n), cudaSuccess);
  CHECK_EQ(cudaMallocHost((void**)&h, n), cudaSuccess);
  CHECK_EQ(cudaMemset(d, 0xAB, n), cudaSuccess);
  CHECK_EQ(cudaMemcpy(h, d, n, cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK(h[0] == 0xAB && h[n - 1] == 0xAB);
  cudaStream_t s;
  CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
  CHECK_EQ(cudaMemsetAsync(d + 16, 0x1234, 32, s), cudaSuccess);  // the low byte
  CHECK_EQ(cudaMemcpyAsync(h, d, n, cudaMemcpyDefault, s), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(h[15] == 0xAB && h[16] == 0x34 && h[47] == 0x34 && h[48] == 0xAB);
  CHECK_EQ(cudaMemcpy(h, d, n, (cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
  CHECK_EQ(cudaMemcpyAsync(h, d, n, (cudaMemcpyKind)-1, s), cudaErrorInvalidMemcpyDirection);
  CHECK_EQ(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);

  // 2-D copy: 3 rows of 4 bytes out of a pitch of 8.
  for (int i = 0; i < 24; ++i) h[i] = (unsigned char)i;
  CHECK_EQ(cudaMemset(d, 0, 64), cudaSuccess);
  CHECK_EQ(cudaMemcpy2D(d, 4, h, 8, 4, 3, cudaMemcpyHostToDevice), cudaSuccess);
  CHECK(d[0] == 0 && d[3] == 3 && d[4] == 8 && d[11] == 19 && d[12] == 0);
  CHECK_EQ(cudaMemcpy2D(d, 2, h, 8, 4, 3, cudaMemcpyHostToDevice), cudaErrorInvalidPitchValue);

  cudaPointerAttributes attr;
  CHECK_EQ(cudaPointerGetAttributes(&attr, d + 100), cudaSuccess);
  CHECK_EQ(attr.type, cudaMemoryTypeDevice);
  CHECK_EQ(cudaPointerGetAttributes(&attr, h), cudaSuccess);
  CHECK_EQ(attr.type, cudaMemoryTypeHost);
  size_t free_b = 0, total_b = 0;
  CHECK_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
  CHECK(total_b > 0 && free_b <= total_b);
  CHECK_EQ(cudaStreamDestroy(s), cudaSuccess);
  CHECK_EQ(cudaFree(d), cudaSuccess);
  CHECK_EQ(cudaFreeHost(h), cudaSuccess);
  cudaGetLastError();
}

static void test_stream_order_and_asynchrony() {
  cudaStream_t s;
  CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
  int *a, *b;
  CHECK_EQ(cudaMallocHost((void**)&a, sizeof(int)), cudaSuccess);
  CHECK_EQ(cudaMalloc((void**)&b, sizeof(int)), cudaSuccess);
  *a = 0, *b = -1;
  // The copy must wait for the host function before it on the same stream.
  Write w{a, 42, 50};
  auto t0 = Clock::now();
  CHECK_EQ(cudaLaunchHostFunc(s, sleep_then_write, &w), cudaSuccess);
  CHECK_EQ(cudaMemcpyAsync(b, a, sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  CHECK(ms_since(t0) < 40);  // both returned before the work ran
  CHECK_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  CHECK_EQ(cudaGetLastError(), cudaSuccess);  // not-ready is not an error
  CHECK_EQ(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(ms_since(t0) >= 50);
  CHECK_EQ(*b, 42);
  CHECK_EQ(cudaStreamQuery(s), cudaSuccess);

  Flag f;
  f.sleep_ms = 100;
  t0 = Clock::now();
  CHECK_EQ(cudaLaunchHostFunc(s, sleep_then_set, &f), cudaSuccess);
  CHECK(ms_since(t0) < 50);
  CHECK_EQ(f.value.load(), 0);
  CHECK_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  CHECK_EQ(cudaStreamSynchronize(s), cudaSuccess);
  CHECK_EQ(f.value.load(), 1);

  Log log;  // many items keep their order
  for (int i = 0; i < 300; ++i) CHECK_EQ(cudaLaunchHostFunc(s, append, &log), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(s), cudaSuccess);
  bool in_order = log.order.size() == 300;
  for (size_t i = 0; in_order && i < log.order.size(); ++i) in_order = log.order[i] == (int)i;
  CHECK(in_order);

  // Destroying a stream with pending work: the work still runs.
  Flag g;
  g.sleep_ms = 60;
  CHECK_EQ(cudaLaunchHostFunc(s, sleep_then_set, &g), cudaSuccess);
  CHECK_EQ(cudaStreamDestroy(s), cudaSuccess);
  CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CHECK_EQ(g.value.load(), 1);
#ifdef PYSHMEM_CPU_CUDA_RUNTIME  // using a destroyed handle is undefined on a GPU
  CHECK_EQ(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
  CHECK_EQ(cudaMemsetAsync(b, 0, 4, s), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
#endif
  CHECK_EQ(cudaFreeHost(a), cudaSuccess);
  CHECK_EQ(cudaFree(b), cudaSuccess);
}

// cudaMemcpyAsync's host-side behaviour by memory kind (CUDA's "API synchronisation
// behavior"): a pageable source is staged at the call, a pageable destination is written
// before the call returns, page-locked host <-> device stays asynchronous.
static void test_async_copies_by_memory_kind() {
  cudaStream_t s;
  CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
  int* d = nullptr;
  int* pinned = nullptr;
  CHECK_EQ(cudaMalloc(&d, 4 * sizeof(int)), cudaSuccess);
  CHECK_EQ(cudaMallocHost(&pinned, sizeof(int)), cudaSuccess);
  Write slow{d + 3, 5, 60};
  CHECK_EQ(cudaLaunchHostFunc(s, sleep_then_write, &slow), cudaSuccess);
  int pageable = 0;
  for (int i = 0; i < 3; ++i) {  // one stack variable, three values: each copy gets its own
    pageable = 10 + i;
    CHECK_EQ(cudaMemcpyAsync(d + i, &pageable, sizeof(int), cudaMemcpyHostToDevice, s), cudaSuccess);
  }
  pageable = -1;
  CHECK_EQ(cudaStreamQuery(s), cudaErrorNotReady);  // the slow write still runs: the copies waited for nothing
  int got[4] = {};
  CHECK_EQ(cudaMemcpyAsync(got, d, sizeof got, cudaMemcpyDeviceToHost, s), cudaSuccess);
  // Returned only once done: the earlier stream work included.
  CHECK(got[0] == 10 && got[1] == 11 && got[2] == 12 && got[3] == 5);
  Write slow2{d, 7, 60};
  CHECK_EQ(cudaLaunchHostFunc(s, sleep_then_write, &slow2), cudaSuccess);
  *pinned = 0;
  const Clock::time_point t0 = Clock::now();
  CHECK_EQ(cudaMemcpyAsync(pinned, d, sizeof(int), cudaMemcpyDeviceToHost, s), cudaSuccess);
  CHECK(ms_since(t0) < 40 && *(volatile int*)pinned == 0);  // page-locked: asynchronous
  CHECK_EQ(cudaStreamSynchronize(s), cudaSuccess);
  CHECK(*pinned == 7);
  CHECK_EQ(cudaFreeHost(pinned), cudaSuccess);
  CHECK_EQ(cudaFree(d), cudaSuccess);
  CHECK_EQ(cudaStreamDestroy(s), cudaSuccess);
}

static void test_default_stream_rules() {
  cudaStream_t blocking, nonblocking;
  CHECK_EQ(cudaStreamCreate(&blocking), cudaSuccess);
  CHECK_EQ(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
  unsigned flags = 7;
  CHECK_EQ(cudaStreamGetFlags(nonblocking, &flags), cudaSuccess);
  CHECK_EQ(flags, cudaStreamNonBlocking);

  // Stream 0 waits for earlier work of a blocking stream ...
  Flag f1;
  f1.sleep_ms = 80;
  Flag o1;
  o1.watched = &f1.value;
  CHECK_EQ(cudaLaunchHostFunc(blocking, sleep_then_set, &f1), cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(0, observe, &o1), cudaSuccess);
  CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CHECK_EQ(o1.seen.load(), 1);
  // ... and a blocking stream for earlier work of stream 0 (cudaStreamLegacy too).
  Flag f2;
  f2.sleep_ms = 80;
  Flag o2;
  o2.watched = &f2.value;
  CHECK_EQ(cudaLaunchHostFunc(cudaStreamLegacy, sleep_then_set, &f2), cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(blocking, observe, &o2), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(blocking), cudaSuccess);
  CHECK_EQ(o2.seen.load(), 1);
  // A synchronous cudaMemcpy is stream-0 work: it follows the blocking stream's writes.
  int *src, dst = 0;
  CHECK_EQ(cudaMalloc((void**)&src, sizeof(int)), cudaSuccess);
  *src = 0;
  Write w{src, 99, 60};
  CHECK_EQ(cudaLaunchHostFunc(blocking, sleep_then_write, &w), cudaSuccess);
  CHECK_EQ(cudaMemcpy(&dst, src, sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
  CHECK_EQ(dst, 99);

  // A non-blocking stream synchronises with neither direction.
  Flag f3;
  f3.sleep_ms = 150;
  Flag o3;
  o3.watched = &f3.value;
  CHECK_EQ(cudaLaunchHostFunc(0, sleep_then_set, &f3), cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(nonblocking, observe, &o3), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(nonblocking), cudaSuccess);
  CHECK_EQ(o3.seen.load(), 0);  // ran while stream 0 still slept
  CHECK_EQ(f3.value.load(), 0);
  CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CHECK_EQ(f3.value.load(), 1);
  Flag f4;
  f4.sleep_ms = 150;
  Flag o4;
  o4.watched = &f4.value;
  CHECK_EQ(cudaLaunchHostFunc(nonblocking, sleep_then_set, &f4), cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(0, observe, &o4), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(0), cudaSuccess);
  CHECK_EQ(o4.seen.load(), 0);
  CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CHECK_EQ(f4.value.load(), 1);

  CHECK_EQ(cudaStreamDestroy(blocking), cudaSuccess);
  CHECK_EQ(cudaStreamDestroy(nonblocking), cudaSuccess);
  CHECK_EQ(cudaFree(src), cudaSuccess);
}

static void test_events() {
  cudaStream_t s1, s2;
  CHECK_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  CHECK_EQ(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t start, stop, never, untimed;
  CHECK_EQ(cudaEventCreate(&start), cudaSuccess);
  CHECK_EQ(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync), cudaSuccess);
  CHECK_EQ(cudaEventCreate(&never), cudaSuccess);
  CHECK_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
  CHECK_EQ(cudaEventQuery(never), cudaSuccess);  // never recorded: complete

  Flag f;
  f.sleep_ms = 60;
  CHECK_EQ(cudaEventRecord(start, s1), cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(s1, sleep_then_set, &f), cudaSuccess);
  CHECK_EQ(cudaEventRecord(stop, s1), cudaSuccess);
  CHECK_EQ(cudaEventRecord(untimed, s1), cudaSuccess);
  CHECK_EQ(cudaEventQuery(stop), cudaErrorNotReady);
  float ms = -1;
  CHECK_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorNotReady);
  CHECK_EQ(cudaEventSynchronize(stop), cudaSuccess);
  CHECK_EQ(f.value.load(), 1);
  CHECK_EQ(cudaEventQuery(stop), cudaSuccess);
  CHECK_EQ(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
  CHECK(ms >= 59.5f && ms < 5000.0f);
  CHECK_EQ(cudaEventSynchronize(untimed), cudaSuccess);
  CHECK_EQ(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
  CHECK_EQ(cudaEventElapsedTime(&ms, start, never), cudaErrorInvalidResourceHandle);
  cudaGetLastError();

  // cudaStreamWaitEvent: s2's read waits for s1's write (both non-blocking).
  int x = 0;
  Write w{&x, 7, 80};
  Flag o;
  std::atomic<int> xa{0};
  o.watched = &xa;
  struct Copy {
    int* from;
    std::atomic<int>* to;
  } c{&x, &xa};
  CHECK_EQ(cudaLaunchHostFunc(s1, sleep_then_write, &w), cudaSuccess);
  CHECK_EQ(cudaEventRecord(stop, s1), cudaSuccess);
  CHECK_EQ(cudaStreamWaitEvent(s2, stop, 0), cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(
               s2, [](void* p) { static_cast<Copy*>(p)->to->store(*(volatile int*)static_cast<Copy*>(p)->from); }, &c),
           cudaSuccess);
  CHECK_EQ(cudaLaunchHostFunc(s2, observe, &o), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(s2), cudaSuccess);
  CHECK_EQ(o.seen.load(), 7);
  CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);  // w and x live on this stack frame

  CHECK_EQ(cudaEventDestroy(start), cudaSuccess);
  CHECK_EQ(cudaEventDestroy(stop), cudaSuccess);
  CHECK_EQ(cudaEventDestroy(never), cudaSuccess);
  CHECK_EQ(cudaEventDestroy(untimed), cudaSuccess);
  CHECK_EQ(cudaStreamDestroy(s1), cudaSuccess);
  CHECK_EQ(cudaStreamDestroy(s2), cudaSuccess);
}

static void test_device(int expected) {
  int count = -1, dev = -1;
  CHECK_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  CHECK_EQ(count, expected);
  CHECK_EQ(cudaSetDevice(expected), cudaErrorInvalidDevice);
  CHECK_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  CHECK_EQ(cudaSetDevice(expected - 1), cudaSuccess);
  CHECK_EQ(cudaGetDevice(&dev), cudaSuccess);
  CHECK_EQ(dev, expected - 1);
  CHECK_EQ(cudaSetDevice(0), cudaSuccess);

  cudaDeviceProp p;
  CHECK_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  CHECK_EQ(p.warpSize, 32);
  CHECK_EQ(p.maxThreadsPerBlock, 1024);
  CHECK(p.maxThreadsDim[2] == 64 && p.maxGridSize[0] == 2147483647 && p.maxGridSize[1] == 65535);
  CHECK_EQ(p.sharedMemPerBlock, 48 * 1024);
  CHECK_EQ(p.cooperativeLaunch, 1);
  CHECK(p.totalGlobalMem > 0);
  int v = 0;
  CHECK_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  CHECK_EQ(v, p.multiProcessorCount);
  CHECK_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0), cudaSuccess);
  CHECK_EQ(v, 32);
  CHECK_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrCooperativeLaunch, 0), cudaSuccess);
  CHECK_EQ(v, 1);
  CHECK_EQ(cudaDeviceGetAttribute(&v, cudaDevAttrMaxThreadsPerBlock, expected), cudaErrorInvalidDevice);

  cudaFuncAttributes fa;
  CHECK_EQ(cudaFuncGetAttributes(&fa, some_kernel), cudaSuccess);
  CHECK_EQ(fa.maxThreadsPerBlock, 1024);
  int blocks = -1;
  // Small blocks: as many as a multiprocessor holds; larger ones: as many as its threads.
  CHECK_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, some_kernel, 32, 0), cudaSuccess);
  CHECK_EQ(blocks, p.maxBlocksPerMultiProcessor);
  CHECK_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, some_kernel, 256, 0), cudaSuccess);
  CHECK_EQ(blocks, p.maxThreadsPerMultiProcessor / 256);
  CHECK_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, some_kernel, 2048, 0), cudaSuccess);
  CHECK_EQ(blocks, 0);
  cudaGetLastError();
#ifdef PYSHMEM_CPU_CUDA_RUNTIME
  CHECK(strstr(p.name, "pyshmem") != nullptr);
  CHECK_EQ(p.multiProcessorCount, sysconf(_SC_NPROCESSORS_ONLN));
  CHECK_EQ(p.major, 9);
  // A grid of blocks-per-SM x SMs fits one CPU launch (4096 blocks, all at once).
  CHECK(p.maxBlocksPerMultiProcessor >= 1 && p.maxBlocksPerMultiProcessor * p.multiProcessorCount <= 4096);
  CHECK_EQ(cudaDeviceGetAttribute(&v, (cudaDeviceAttr)12345, 0), cudaErrorInvalidValue);
  CHECK_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  // pyshmem's NVSHMEM init sets the node's PE count; it overrides PYSHMEM_NPES.
  pyshmem::cpu::rt::g_node_pes = 5;
  CHECK_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  CHECK_EQ(count, 5);
  CHECK_EQ(cudaSetDevice(4), cudaSuccess);
  pyshmem::cpu::rt::g_node_pes = 0;
  CHECK_EQ(cudaSetDevice(0), cudaSuccess);
#endif
}

#ifdef PYSHMEM_CPU_CUDA_RUNTIME
static void test_sticky_errors() {
  namespace rt = pyshmem::cpu::rt;
  cudaStream_t s;
  CHECK_EQ(cudaStreamCreate(&s), cudaSuccess);
  int* p;
  CHECK_EQ(cudaMalloc((void**)&p, 64), cudaSuccess);
  // Failing stream work (what a faulting kernel launch enqueues) becomes sticky.
  std::atomic<int> ran_after{0};
  Flag slow;  // holds the stream back until all three items are enqueued
  slow.sleep_ms = 50;
  CHECK_EQ(cudaLaunchHostFunc(s, sleep_then_set, &slow), cudaSuccess);
  CHECK_EQ(rt::stream_enqueue(s, "fake_kernel_launch", [] { return cudaErrorLaunchFailure; }), cudaSuccess);
  CHECK_EQ(rt::stream_enqueue(s, "later_work", [&] { ran_after = 1; return cudaSuccess; }), cudaSuccess);
  CHECK_EQ(cudaStreamSynchronize(s), cudaErrorLaunchFailure);
  CHECK_EQ(ran_after.load(), 0);  // work after the fault is skipped
  CHECK_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  CHECK_EQ(cudaMemset(p, 0, 64), cudaErrorLaunchFailure);
  CHECK_EQ(cudaMemcpyAsync(p, p + 8, 4, cudaMemcpyDeviceToDevice, s), cudaErrorLaunchFailure);
  CHECK_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  CHECK_EQ(cudaGetLastError(), cudaErrorLaunchFailure);  // sticky: not cleared
  // cudaDeviceReset clears it and frees what cudaMalloc returned.
  CHECK_EQ(cudaDeviceReset(), cudaSuccess);
  CHECK_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CHECK_EQ(cudaGetLastError(), cudaSuccess);
  CHECK_EQ(cudaFree(p), cudaErrorInvalidValue);
  CHECK_EQ(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);  // reset destroyed it
  cudaGetLastError();

  rt::set_sticky_error(cudaErrorIllegalAddress, "test: an illegal address in a kernel");
  rt::set_sticky_error(cudaErrorAssert, "test: a second fault (not printed)");
  CHECK_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  CHECK_EQ(cudaStreamSynchronize(0), cudaErrorIllegalAddress);
  int h = 0;
  CHECK_EQ(cudaMemcpy(&h, &h, sizeof h, cudaMemcpyHostToHost), cudaErrorIllegalAddress);
  CHECK_EQ(cudaPeekAtLastError(), cudaErrorIllegalAddress);
  CHECK_EQ(cudaDeviceReset(), cudaSuccess);

  rt::record_error(cudaErrorNotPermitted, "test_call", "a message for the test");
  CHECK_EQ(cudaGetLastError(), cudaErrorNotPermitted);
}
#endif

int main(int argc, char** argv) {
  const int expected_devices = argc > 1 ? atoi(argv[1]) : 1;
  auto t0 = Clock::now();
  test_errors();
  test_memory();
  test_stream_order_and_asynchrony();
  test_async_copies_by_memory_kind();
  test_default_stream_rules();
  test_events();
  test_device(expected_devices);
#ifdef PYSHMEM_CPU_CUDA_RUNTIME
  test_sticky_errors();
#endif
  if (failures) {
    printf("cpu_cuda_runtime_test: %d checks failed\n", failures);
    return 1;
  }
  printf("cpu_cuda_runtime_test: OK (%.0f ms)\n", ms_since(t0));
  return 0;
}
