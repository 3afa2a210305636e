// A rank's measured capacity (fdk_mpi_config.capacity 0): what its share of
// the planes is proportional to.
#pragma once
#include "fdk/core/reconstruction.hpp"

namespace fdk::mpi {

// 64 per GPU the configuration would use (CUDA asked for, or AUTO with a
// usable GPU), else 1 per CPU thread: a GPU counts as a few dozen cores, so
// that a mixed job gives the GPU ranks nearly all of the planes. Declare
// capacities (fdk_mpi_config.capacity) for anything finer.
struct MeasuredCapacity {
  double value = 0;
  // The value is the CPU threads of a configuration that left num_threads
  // at 0: the host's cores, before the rank learns how many ranks share
  // them (host_cores.hpp).
  bool default_cpu_threads = false;
};
MeasuredCapacity measured_capacity(const Settings& settings);

}  // namespace fdk::mpi
