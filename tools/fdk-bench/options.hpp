// fdk-bench's command line: what a run asks for, parsed apart from the
// benchmark so that main.cpp reads as the measurement it is.
#pragma once
#include <fdk/fdk.h>

#include <cstdint>
#include <string>

namespace fdk_bench {

struct Options {
  std::string case_name;  // a, b, c, d, cpu or "" (explicit)
  int size = 0;           // N: the volume is N^3
  int views = 0;
  int det_u = 0;
  int det_v = 0;
  int backend = FDK_BACKEND_AUTO;
  int precision = FDK_PRECISION_FLOAT32;
  uint64_t budget_host = 0;
  uint64_t budget_gpu = 0;
  int threads = 0;
  int repeats = 3;
  int warmup = 1;
  int slab_thickness = 0;
  int pool = 0;  // distinct projections kept in memory; 0 = automatic
  double rate = 0;  // views per second, as a scanner delivers them; 0 = back to back
  int gpus = 1;     // CUDA ordinals 0..gpus-1 (config.num_devices)
  bool gpus_given = false;
  bool baseline = true;  // with gpus > 1, also run on one GPU
  bool page_locked = false;  // the slab buffer from fdk_alloc_host
  int outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;  // the library's default
  bool estimate_geometry = false;  // --estimate-geometry: fdk_config.estimate_geometry, timed
  bool preview = false;            // --preview: fdk_config.preview, read once after fdk_finish
  double timeline = 0;             // --timeline S: a sample every S seconds of each run; 0 off
  int plane_pairs = -1;  // fdk-bench-seams: 1 on, 0 off, -1 the shipped default
  int ramp_groups = -1;  // fdk-bench-seams: the same for FaultPlan::ramp_pair_groups
  int resident_pairs = -1;  // fdk-bench-seams: the same for FaultPlan::resident_pairs
  int stream_pairs = -1;    // fdk-bench-seams: the same for FaultPlan::stream_pairs
  std::string json;
  std::string commit;
  std::string command_line;
};

// Parses the command line (--help prints the usage and exits 0; a bad
// option exits 2 after saying why).
Options parse_options(int argc, char** argv);

}  // namespace fdk_bench
