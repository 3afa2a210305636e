#include "live_preview_frames.hpp"

#include <chrono>
#include <cstdio>
#include <vector>

#include "preview.hpp"

namespace fdk_tools {

namespace {
std::string extension() {
  const std::string name = preview_file_name();  // preview.png or preview.pgm
  return name.substr(name.rfind('.'));
}
std::string frame_base(const std::string& base, int frame) {
  char number[16];
  std::snprintf(number, sizeof number, "-%03d", frame);
  return base + number;
}
}  // namespace

LivePreview::LivePreview(fdk_context* ctx, const std::string& base, const LivePreviewOptions& options)
    : ctx_(ctx), base_(base), options_(options) {
  thread_ = std::thread([this] { loop(); });
}

LivePreview::~LivePreview() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  if (!options_.series) std::remove(path().c_str());
}

std::string LivePreview::path() const {
  return (options_.series ? frame_base(base_, 0) : base_) + extension();
}

void LivePreview::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto interval = std::chrono::duration<double>(options_.interval_s);
  while (!wake_.wait_for(lock, interval, [this] { return stop_; })) write_frame();
}

void LivePreview::frame_now() {
  std::lock_guard<std::mutex> lock(mutex_);
  write_frame();
}

// mutex_ held. A frame that cannot be read or written is skipped: the live
// view is for looking at, and the run's own errors come from its own calls.
void LivePreview::write_frame() noexcept {
  try {
    fdk_preview_info info;
    fdk_preview_info_init(&info);
    if (fdk_get_preview_info(ctx_, &info) != FDK_OK) return;
    const fdk_volume& g = info.volume;
    std::vector<float> volume(static_cast<size_t>(g.size[0]) * g.size[1] * g.size[2]);
    if (fdk_read_preview(ctx_, volume.data(), volume.size() * sizeof(float), &info) != FDK_OK) return;
    PreviewCollector collector(g);
    collector.add_planes(0, g.size[1], volume.data());
    char line[192];
    std::snprintf(line, sizeof line, "live preview: %d of %d views (%.0f %% of the angular weight)%s, %dx%dx%d voxels",
                  info.views, info.views_announced, 100.0 * info.coverage,
                  (info.flags & FDK_PREVIEW_COMPLETE) ? ", complete" : "", g.size[0], g.size[1], g.size[2]);
    collector.write(options_.series ? frame_base(base_, frames_.load()) : base_, options_.window_lo,
                    options_.window_hi, {line});
    ++frames_;
  } catch (...) {
  }
}

}  // namespace fdk_tools
