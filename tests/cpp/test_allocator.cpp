// Unit test of the collective allocator (heap/allocator.cpp): determinism, alignment,
// coalescing, exhaustion. Exits non-zero with a message on the first failure.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "heap/allocator.h"

using pyshmem::Allocator;

#define CHECK(cond)                                                      \
  do {                                                                   \
    if (!(cond)) {                                                       \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

int main() {
  const size_t base = 65536, end = base + (1 << 20);
  Allocator a(base, end), b(base, end);
  std::vector<size_t> offs;
  // Two allocators fed the same sequence give the same offsets: what makes it symmetric.
  for (size_t sz : {100, 4096, 1, 0, 777, 65536}) {
    size_t oa, ob;
    CHECK(a.allocate(sz, 0, &oa));
    CHECK(b.allocate(sz, 0, &ob));
    CHECK(oa == ob);
    CHECK(oa % Allocator::kMinAlign == 0);
    CHECK(oa >= base && oa + sz <= end);
    offs.push_back(oa);
  }
  for (size_t i = 1; i < offs.size(); ++i) CHECK(offs[i] != offs[i - 1]);  // zero-size gets its own block
  size_t aligned;
  CHECK(a.allocate(10, 4096, &aligned));
  CHECK(aligned % 4096 == 0);
  CHECK(!a.allocate(10, 3000, &aligned));  // not a power of two
  // Free everything: the heap coalesces back into one block.
  for (size_t o : offs) CHECK(a.release(o));
  CHECK(a.release(aligned));
  CHECK(!a.release(offs[0]));  // double free is refused
  CHECK(a.bytes_free() == end - base);
  CHECK(a.largest_free() == end - base);
  CHECK(a.live_count() == 0);
  // Exhaustion fails without changing the heap.
  size_t big;
  CHECK(!a.allocate((1 << 20) + 1, 0, &big));
  CHECK(a.allocate(1 << 20, 0, &big));
  CHECK(a.bytes_free() == 0);
  size_t s, n;
  CHECK(a.find(big + 100, &s, &n) && s == big && n == (1u << 20));
  std::printf("test_allocator: OK\n");
  return 0;
}
