#include "heap/allocator.h"

#include <iterator>

namespace pyshmem {
namespace {
size_t round_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }
}  // namespace

Allocator::Allocator(size_t begin, size_t end) : begin_(begin), end_(end), free_bytes_(end - begin) {
  if (end > begin) free_[begin] = end - begin;
}

bool Allocator::allocate(size_t size, size_t align, size_t* offset_out) {
  if (align < kMinAlign) align = kMinAlign;
  if (align & (align - 1)) return false;
  if (size > capacity()) return false;
  size_t need = round_up(size == 0 ? 1 : size, kMinAlign);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    size_t start = it->first, len = it->second;
    size_t aligned = round_up(start, align);
    if (aligned < start || aligned - start > len || len - (aligned - start) < need) continue;
    // Carve [aligned, aligned+need) out of [start, start+len); keep the remainders free.
    free_.erase(it);
    if (aligned > start) free_[start] = aligned - start;
    size_t tail = start + len - (aligned + need);
    if (tail) free_[aligned + need] = tail;
    used_[aligned] = need;
    serial_[aligned] = ++allocations_;
    requested_[aligned] = size;
    free_bytes_ -= need;
    *offset_out = aligned;
    return true;
  }
  return false;
}

bool Allocator::release(size_t offset) {
  auto u = used_.find(offset);
  if (u == used_.end()) return false;
  size_t start = offset, len = u->second;
  used_.erase(u);
  serial_.erase(offset);
  requested_.erase(offset);
  ++releases_;
  free_bytes_ += len;
  auto next = free_.lower_bound(start);
  if (next != free_.end() && start + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      prev->second += len;
      return true;
    }
  }
  free_[start] = len;
  return true;
}

size_t Allocator::size_of(size_t offset) const {
  auto u = used_.find(offset);
  return u == used_.end() ? 0 : u->second;
}

bool Allocator::find(size_t offset, size_t* start_out, size_t* size_out, uint64_t* serial_out) const {
  auto it = used_.upper_bound(offset);
  if (it == used_.begin()) return false;
  --it;
  if (offset >= it->first + it->second) return false;
  *start_out = it->first;
  *size_out = it->second;
  if (serial_out) *serial_out = serial_.at(it->first);
  return true;
}

bool Allocator::find_requested(size_t offset, size_t* start_out, size_t* requested_out) const {
  size_t start, size;
  if (!find(offset, &start, &size)) return false;
  *start_out = start;
  *requested_out = requested_.at(start);
  return true;
}

size_t Allocator::largest_free() const {
  size_t best = 0;
  for (const auto& f : free_)
    if (f.second > best) best = f.second;
  return best;
}

}  // namespace pyshmem
