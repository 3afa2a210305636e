// fdk-convert's outputs, shared by the one-process run (main.cpp) and the
// ranks of a distributed one (distributed.cpp): the writer --format asks
// for, where the preview's slices cross, and the preview's caption.
#pragma once

#include <fdk/adapters/files.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "options.hpp"

namespace fdk_convert {

struct OutputSetup {
  fdk::adapters::VolumeWriterOptions options;
  fdk::adapters::WriteFaultInjection fault;  // options.fault points here (test hook)
  // The preview's: the volume's (FDK_CONVERT_FAIL_AFTER_BYTES), or its own
  // that fails at once (FDK_CONVERT_FAIL_PREVIEW), else none.
  fdk::adapters::WriteFaultInjection preview_fault_at_once{0, 0};
  fdk::adapters::WriteFaultInjection* preview_fault = nullptr;
  std::string folder;                        // where the writers write (the staging folder)
  std::string first_output;                  // the first file --format writes there
};

// The plain file names of the run's result in the output folder, the
// preview's included (one slice file per y plane with --format tiff).
std::vector<std::string> output_names(const Options& o, const fdk_volume& volume);

// Fills `out` (which must not move afterwards) for writers that write into
// `folder`.
void prepare_output(const Options& o, const fdk_volume& volume, const std::string& folder,
                    OutputSetup* out);

// The writer for --format, writing into setup.folder; with --format tiff,
// only slices [y_begin, y_end) when y_end >= 0 (one rank's share).
std::unique_ptr<fdk::adapters::VolumeWriter> open_writer(const Options& o, const fdk_volume& volume,
                                                         const OutputSetup& setup, int y_begin = 0,
                                                         int y_end = -1);

// The final paths of the volume's files for messages (first and last
// slice of a stack).
std::vector<std::string> final_outputs(const Options& o, const fdk_volume& volume);

// The voxel where --preview-at puts the preview's slices (-1: the centre).
std::array<int, 3> preview_voxel(const Options& o, const fdk_volume& volume);

// What the preview's caption says about the run.
struct CaptionFacts {
  bool cuda = false, short_scan = false, half_fan = false, have_xml = false;
  int views = 0;
  fdk_view first_view{};
  double seconds = 0;
};
std::vector<std::string> preview_caption(const Options& o, const fdk_config& config,
                                         const CaptionFacts& facts);

// printf-style formatting of one number.
std::string fmt(const char* format, double value);

}  // namespace fdk_convert
