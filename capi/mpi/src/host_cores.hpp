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

// The cores this process is bound to (mpirun --bind-to) when fewer than the
// host has, else 0.
int bound_cores();

// A rank's default threads: the cores it is bound to, when bound, else the
// host's cores shared out among the `ranks_on_host` ranks there; never 0.
int share_of_host(int host_cores, int bound_cores, int ranks_on_host);
int default_threads(int ranks_on_host);  // of this process

}  // namespace fdk::mpi
