// heap/symmetric.h: whether an address range lies in one live symmetric allocation.
//
// Below the host API so that every layer that checks its arguments (host RMA and
// atomics, team collectives, the binding) asks the same question the same way.
#pragma once

#include <cstddef>

namespace pyshmem {

// True when [addr, addr + nbytes) is inside one live allocation of this PE's symmetric
// heap (nbytes == 0: addr anywhere in the user heap, up to its end). False before init.
// Thread-safe; a thread's last answer is cached, so repeated checks on one object cost
// two compares.
bool is_symmetric(const void* addr, size_t nbytes);

}  // namespace pyshmem
