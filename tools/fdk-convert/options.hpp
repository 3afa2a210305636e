// fdk-convert's command line: the exit codes, the failure they travel in,
// the options and their parser (the help text is in options.cpp).
#pragma once

#include <fdk/adapters/geometry_io.hpp>
#include <fdk/adapters/image_stack.hpp>
#include <fdk/adapters/projection_folder.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>

#include <cstdint>
#include <string>
#include <vector>

#include "progress.hpp"

namespace fdk_convert {

enum ExitCode {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,
  kExitInput = 3,
  kExitOutput = 4,
  kExitReconstruction = 5,
  kExitInterrupted = 6,
  kExitBudget = 7,
};

struct Failure {
  int code;
  std::string message;
};

// Throws Failure{kExitUsage, message}.
[[noreturn]] void usage_error(const std::string& message);

// Inside a catch: the exit code of the exception being handled (Failure,
// fdk::adapters::Error by its kind, out of memory, anything else internal)
// and its message.
int exit_code_of_current_exception(std::string* message);

// A raw projection file's layout (--raw, --raw-type, --raw-offset,
// --raw-endian).
struct RawInput {
  bool given = false;
  int64_t width = 0, height = 0, frames = 0;
  bool type_given = false;
  fdk::adapters::SampleType type = fdk::adapters::SampleType::kUInt16;
  uint64_t offset = 0;
  bool big_endian = false;
};

struct Options {
  std::string projections, output;
  RawInput raw;
  std::string like;  // --like VOLUME: the volume grid from a header
  std::vector<std::string> geometry_files;
  fdk::adapters::ScanDescription flags;
  fdk::adapters::ProjectionFolderOptions folder;
  int read_threads = 0;
  int window_kind = FDK_WINDOW_RAM_LAK;
  double cutoff = 1.0;
  double hann_cutoff_v = 0.0;  // --hann-y: fdk_config.hann_cutoff_v
  double rtk_hann = 0.0;       // --hann F: the cutoff rounded as rtkfdk does, once the width is known
  int short_scan = FDK_AUTO, offset_detector = FDK_AUTO;
  int outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;
  double padding = 0.0;
  int backend = FDK_BACKEND_AUTO;
  std::vector<int> gpus;
  uint64_t host_memory = 0, gpu_memory = 0;
  bool accept_budget_risk = false;  // run when the store fits only at typical compression
  int precision = FDK_PRECISION_FLOAT32;
  int threads = 0, slab_thickness = 0;
  std::string format = "tiff";
  fdk::adapters::VoxelType type = fdk::adapters::VoxelType::kFloat32;
  bool have_window = false;
  double window_lo = 0, window_hi = 0;
  std::string prefix = "slice";
  fdk::adapters::TiffWriteOptions::Compression compression =
      fdk::adapters::TiffWriteOptions::Compression::kNone;
  bool preview = true, force = false, quiet = false;
  bool have_preview_at = false;
  bool live_preview = false;           // --live-preview: OUTPUT_DIR/live-preview.png during the scan
  double live_preview_interval = 2.0;  // --live-preview-interval SECONDS
  double preview_at[3] = {0, 0, 0};  // mm: where the preview's slices cross
  fdk_tools::ProgressStyle progress = fdk_tools::ProgressStyle::kAuto;
  // Geometry estimation (issue 41; estimate.hpp). Without OUTPUT_DIR the run
  // only estimates; with it, --estimate-geometry reports the estimate of the
  // views the nominal reconstruction gets, --apply-estimate reconstructs
  // with the corrected geometry.
  bool estimate_geometry = false;  // --estimate-geometry
  bool apply_estimate = false;     // --apply-estimate
  bool force_estimate = false;     // --force-estimate: apply below confidence 0.5
  std::string write_geometry;      // --write-geometry FILE: the corrected views as RTK XML
  // Any estimation flag: the run estimates (and MPI refuses it).
  bool estimates() const { return estimate_geometry || apply_estimate; }
  // No OUTPUT_DIR: estimate only, no volume.
  bool estimate_only() const { return output.empty(); }
};

// Parses the command line; --help and --version print and exit 0. Throws
// Failure (kExitUsage) on a bad command line or option value.
Options parse_options(int argc, char** argv);

}  // namespace fdk_convert
