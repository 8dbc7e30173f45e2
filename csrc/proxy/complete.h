// proxy/complete.h: completion of everything a PE has issued, below the host API.
//
// The host API's quiet and the layers under it that need one (team syncs that publish
// a failure, the team barrier of collectives) complete the same set: device-API
// requests on the proxy FIFOs, the operations the ordering check holds, and each
// transport's outstanding operations.
#pragma once

namespace pyshmem {

struct State;

// Returns when every RMA, AMO and signal this PE issued before the call (host or device
// API, to any PE) is complete and visible at its target. `call` names the wait in hang
// reports and in the error thrown when the proxy fails or PYSHMEM_PROXY_TIMEOUT expires.
// The runtime must be initialised (callers check).
void complete_all(State& s, const char* call);

}  // namespace pyshmem
