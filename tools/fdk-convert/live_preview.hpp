// fdk-convert --live-preview: OUTPUT_DIR/live-preview.png rewritten from
// the library's live preview while the projections are pushed
// (fdk_tools::LivePreview). Not preview.png: that file belongs to the
// published result, and rewriting it during the run would replace an
// earlier result's before this one has succeeded, and leave, after a
// failure, a file that looks like a result's. The live file is removed
// when the run ends, whatever the outcome.
#pragma once

#include <fdk/fdk.h>

#include <memory>
#include <string>

#include "live_preview_frames.hpp"
#include "progress.hpp"

namespace fdk_convert {

struct Options;

// The live file's plain name (live-preview.png, or .pgm without libpng).
std::string live_preview_file_name();
// Throws Failure (kExitUsage) where --live-preview cannot be: over MPI
// ranks (each filters only a band of each view's rows), or where its file
// would replace or join an input.
void check_live_preview(const Options& o, bool distributed);
// In o.output, every o.live_preview_interval seconds, with o's --window.
std::unique_ptr<fdk_tools::LivePreview> start_live_preview(fdk_context* ctx, const Options& o);
// After fdk_finish: the last frame (the complete preview), and how many
// frames there were.
void end_live_preview(fdk_tools::LivePreview& live, fdk_tools::Progress& progress, const Options& o);

}  // namespace fdk_convert
