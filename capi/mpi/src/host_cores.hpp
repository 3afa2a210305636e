// How many CPU threads a rank takes when its fdk_config leaves num_threads
// at 0. One process takes every core of its host; ranks on one host that
// each did so ran twice as many threads as cores, and their pushes (the
// row copies, the filter feeding) waited on each other: (c) on two H200s,
// two ranks took 2.72-2.76 s with every core each and 2.63 s with half
// (docs/PERFORMANCE.md, session 42).
#pragma once
#include <cstdint>
#include <vector>

namespace fdk::mpi {

// Words naming this host (its name and boot), the same on every rank of it.
std::vector<int32_t> host_identity();

// A rank's default threads: the cores it may run on when it was bound to
// fewer than the host has (mpirun --bind-to), else the host's cores shared
// out among the `ranks_on_host` ranks there.
int default_threads(int ranks_on_host);

}  // namespace fdk::mpi
