// fdk-convert over several ranks (mpirun, srun, mpiexec): the one seam
// between main.cpp and MPI. A plain run never initialises MPI; a build
// without MPI refuses to run as several ranks (each would write the whole
// volume to the same files).
#pragma once

#include <fdk/adapters/projection_source.hpp>
#include <fdk/fdk.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "options.hpp"
#include "provenance.hpp"

namespace fdk_convert {

// How a launcher started this process, read from its environment before MPI
// is touched: OpenMPI (OMPI_COMM_WORLD_SIZE/RANK), Slurm's srun
// (SLURM_STEP_NUM_TASKS, SLURM_PROCID), MPICH's Hydra (PMI_SIZE, PMI_RANK),
// or a PMIx launcher that states only the rank (PMIX_RANK: size 0, MPI says).
struct Launch {
  std::string launcher;  // empty for a plain run
  int rank = 0;
  int size = 1;
};
Launch detect_launch();

// What run() has worked out before the library starts; the same on every
// rank, since every rank parses the same options and reads the same files.
struct Job {
  const Options& o;
  const fdk::adapters::ProjectionSource& source;
  const fdk_config& config;
  bool have_xml;
  fdk_view first_view;
  std::chrono::steady_clock::time_point start;
  const std::atomic<int>& signal;  // the signal that came (SIGINT, SIGTERM), else 0
  const GeometryOrigins& origins;  // where the geometry came from, for a refusal
};

// This process's part in a distributed run.
class Ranks {
 public:
  virtual ~Ranks() = default;  // finalises MPI
  virtual int rank() const = 0;
  // Everything from the library on. First the ranks compare the arguments
  // that must match (rank_agreement.hpp): a difference is exit code 2 on
  // every rank before any work, rank 0 naming the argument. Then every rank
  // reads its share of the views, the slabs' owners write them (TIFF
  // slices) or send them to rank 0 (single files), rank 0 writes the
  // preview and reports. Returns the
  // exit code; throws (Failure, fdk::adapters::Error) once every rank knows
  // the code, for fail() to report.
  virtual int run(const Job& job) = 0;
  // After an exception: the exit code this rank ends with, the same on every
  // rank. *message becomes what this rank prints: on rank 0 the failure
  // ("rank R: ..."), empty on the others. A failure outside the points where
  // the ranks meet is printed by its rank and ends the job through
  // MPI_Abort with its code.
  virtual int fail(int code, std::string* message) = 0;
};

// The ranks when a launcher started more than one; null otherwise (MPI not
// initialised). Throws Failure (kExitUsage) for several ranks in a build
// without MPI.
std::unique_ptr<Ranks> join_ranks(const Launch& launch);

}  // namespace fdk_convert
