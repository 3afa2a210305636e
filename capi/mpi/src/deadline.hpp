// Waiting on MPI requests for a bounded time: a collective never hangs on a
// rank that stopped, crashed or called something else.
#pragma once
#include <mpi.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace fdk::mpi {

using Clock = std::chrono::steady_clock;

// Polls `requests` until all complete, calling `idle` (may be empty)
// between polls. Throws fdk::Error(INVALID_STATE) with `what` when they
// have not completed within `timeout_s`, and DEVICE for an MPI error.
void wait_all(std::vector<MPI_Request>& requests, double timeout_s, const std::string& what,
              const std::function<void()>& idle = {});

// Throws fdk::Error(DEVICE) naming `call` when `rc` is not MPI_SUCCESS.
void check_mpi(int rc, const char* call);

// A short pause between polls: MPI progresses inside the test calls.
void pause_briefly();

}  // namespace fdk::mpi
