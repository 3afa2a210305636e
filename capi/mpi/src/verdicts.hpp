// Every rank's outcome of a collective step, known on every rank: how
// libfdk_mpi's errors become collective ("rank 2: ...") instead of leaving
// the other ranks waiting.
#pragma once
#include <fdk/fdk.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fdk::mpi {

struct Verdict {
  fdk_status status = FDK_OK;
  std::string message;         // "" when OK
  std::vector<int32_t> data;   // step-specific figures (capacities, slabs, failed views)
};

// Two all-gathers bounded by `timeout_s` (see wait_all).
std::vector<Verdict> gather_verdicts(MPI_Comm comm, const Verdict& mine, double timeout_s, const std::string& what);

// Throws fdk::Error with the first failing rank's status and a message
// naming every failing rank; returns when every verdict is OK.
void throw_if_any_failed(const std::vector<Verdict>& verdicts);

}  // namespace fdk::mpi
