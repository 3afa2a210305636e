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
  std::string first_output;                  // the first file --format writes
};

// Fills `out` (which must not move afterwards); with `check_folder`, first
// creates the output folder, refuses to replace an existing output without
// --force (Failure kExitUsage) and checks that files can be created there
// (one rank does that for all).
void prepare_output(const Options& o, const fdk_volume& volume, OutputSetup* out,
                    bool check_folder = true);

// The writer for --format; with --format tiff, only slices [y_begin, y_end)
// when y_end >= 0 (one rank's share).
std::unique_ptr<fdk::adapters::VolumeWriter> open_writer(const Options& o, const fdk_volume& volume,
                                                         const OutputSetup& setup, int y_begin = 0,
                                                         int y_end = -1);

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
