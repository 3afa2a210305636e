#include "live_preview.hpp"

#include "inputs.hpp"
#include "options.hpp"
#include "preview.hpp"

namespace fdk_convert {

std::string live_preview_file_name() { return "live-" + fdk_tools::preview_file_name(); }

void check_live_preview(const Options& o, bool distributed) {
  if (distributed)
    throw Failure{kExitUsage, "--live-preview is not available over MPI ranks: each rank filters only a band of "
                              "each view's rows"};
  const InputSet::Clash clash = InputSet::of(o).first_clash(o.output, {live_preview_file_name()});
  if (!clash.input.empty()) throw Failure{kExitUsage, "--live-preview would write '" + clash.path + "' over " + clash.input};
}

std::unique_ptr<fdk_tools::LivePreview> start_live_preview(fdk_context* ctx, const Options& o) {
  fdk_tools::LivePreviewOptions lo;
  lo.interval_s = o.live_preview_interval;
  if (o.have_window) {
    lo.window_lo = o.window_lo;
    lo.window_hi = o.window_hi;
  }
  return std::make_unique<fdk_tools::LivePreview>(ctx, o.output + "/live-preview", lo);
}

void end_live_preview(fdk_tools::LivePreview& live, fdk_tools::Progress& progress, const Options& o) {
  live.frame_now();
  if (!o.quiet)
    progress.message("live preview: " + std::to_string(live.frames()) + " frames in '" + live.path() +
                     "', the last complete (the file goes at the end: the result has preview.png)");
}

}  // namespace fdk_convert
