// What the ranks of a distributed fdk-convert must agree on, as text.
//
// Every rank parses its own command line. Ranks started with different
// outputs, formats or geometry would each write or reconstruct something
// else and the job would hang at a meeting or, worse, succeed with a volume
// split between two folders. So each rank describes, per argument, what that
// argument means on it (the absolute output folder, not the path as typed;
// the computed volume grid, not the flags that made it), the ranks compare
// one digest per argument, and a difference stops the job before any work,
// naming the argument. Per-rank settings (GPUs, memory budgets, threads,
// read threads, --quiet, --progress, --backend) are not compared.
//
// No MPI here: distributed.cpp exchanges the digests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed.hpp"

namespace fdk_convert {

// The arguments compared, in the order the first difference is looked for:
// causes before their consequences (--bin before the detector it changes,
// --voxel-size before the volume size it changes), so that the argument
// named is the one the user gave differently.
enum AgreedArgument : int {
  kAgreeOutput,
  kAgreeFormat,
  kAgreePrefix,
  kAgreeOutputType,
  kAgreeWindow,
  kAgreeCompression,
  kAgreePreview,
  kAgreePreviewAt,
  kAgreeProjections,
  kAgreePattern,
  kAgreeRaw,
  kAgreeInput,
  kAgreeDark,
  kAgreeFlat,
  kAgreeI0,
  kAgreeDarkLevel,
  kAgreeMinTransmission,
  kAgreeBadPixels,
  kAgreeCrop,
  kAgreeBin,
  kAgreeFlip,
  kAgreeProjectionsFound,
  kAgreePixelSize,
  kAgreeDetectorOrigin,
  kAgreeGeometry,
  kAgreeViews,
  kAgreeSid,
  kAgreeSdd,
  kAgreeStartAngle,
  kAgreeArc,
  kAgreeProjectionOffset,
  kAgreeSourceOffset,
  kAgreeInPlaneAngle,
  kAgreeOutOfPlaneAngle,
  kAgreeVoxelSize,
  kAgreeVolumeSize,
  kAgreeVolumeOrigin,
  kAgreeSlabThickness,
  kAgreeFilter,
  kAgreeCutoff,
  kAgreeHannY,
  kAgreePadding,
  kAgreeShortScan,
  kAgreeOffsetDetector,
  kAgreeOutsideFov,
  kAgreePrecision,
  kAgreedCount
};

// How the argument is named in a message ("--format", "OUTPUT_DIR").
const char* agreed_name(int argument);

// What one argument means on this rank.
struct AgreedValue {
  std::string text;   // canonical: equal texts mean the same thing
  std::string shown;  // what a message shows (the text, or a summary of a long one)
};

// This rank's values, indexed by AgreedArgument.
std::vector<AgreedValue> agreed_values(const Job& job);

// FNV-1a over the text, 64 bits: what the ranks exchange per argument.
uint64_t digest(const std::string& text);

// The message for ranks that disagree on `argument`. `digests[r]` and
// `shown[r]` are rank r's; ranks with equal digests are listed together:
// "ranks disagree on --format: rank 0 'tiff', ranks 1,2 'mha'". `also`
// names the other arguments that differ.
std::string disagreement_message(int argument, const std::vector<uint64_t>& digests,
                                 const std::vector<std::string>& shown, const std::vector<int>& also);

// "rank 3", "ranks 1,2", "ranks 0-3,7".
std::string rank_list(const std::vector<int>& ranks);

}  // namespace fdk_convert
