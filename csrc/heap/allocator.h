// heap/allocator.h: the collective allocator of the symmetric heap.
//
// Works on offsets, not pointers, and is purely deterministic: every PE runs the same
// sequence of allocate/release calls on its own copy and so computes the same offsets,
// which is what makes an allocation "symmetric" without any communication.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

namespace pyshmem {

class Allocator {
 public:
  static constexpr size_t kMinAlign = 64;  // cache line: no false sharing between objects

  // Manages offsets [begin, end) of a segment.
  Allocator(size_t begin, size_t end);

  // First fit, lowest offset. `align` must be a power of two (raised to kMinAlign).
  // A zero-byte request gets a distinct minimal block so each object has its own offset.
  // Returns false (and leaves the heap unchanged) when no free block fits.
  bool allocate(size_t size, size_t align, size_t* offset_out);

  // Returns false when `offset` is not the start of a live allocation.
  bool release(size_t offset);

  // Bytes of the live allocation starting at `offset`, or 0 when there is none.
  size_t size_of(size_t offset) const;

  // Start of the live allocation that contains `offset`; false when none does.
  // serial_out (optional): the allocation's number, 1 for the job's first allocation;
  // the same on every PE, since every PE runs the same sequence of allocations.
  bool find(size_t offset, size_t* start_out, size_t* size_out, uint64_t* serial_out = nullptr) const;

  // Like find(), with the bytes the allocation's caller asked for (the block itself is
  // rounded up to kMinAlign): the bounds an access through the object must stay within.
  bool find_requested(size_t offset, size_t* start_out, size_t* requested_out) const;
  // Number of releases so far: a cached find() result is valid while this is unchanged
  // (allocations never move or shrink a live block).
  uint64_t releases() const { return releases_; }

  size_t bytes_free() const { return free_bytes_; }
  size_t largest_free() const;
  size_t capacity() const { return end_ - begin_; }
  size_t live_count() const { return used_.size(); }

 private:
  size_t begin_, end_;
  size_t free_bytes_;
  std::map<size_t, size_t> free_;  // offset -> bytes, coalesced
  std::map<size_t, size_t> used_;  // offset -> bytes (rounded)
  std::map<size_t, uint64_t> serial_;  // offset -> allocation number
  std::map<size_t, size_t> requested_;  // offset -> bytes asked for
  uint64_t allocations_ = 0;
  uint64_t releases_ = 0;
};

}  // namespace pyshmem
