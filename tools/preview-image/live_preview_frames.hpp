// The live preview's frames (fdk_config.preview): while the projections are
// pushed, a thread reads the library's preview every few seconds and
// writes it as a preview image (preview.hpp), captioned with the views in
// it: one file replaced whole each time (never half written), or a series
// of numbered frames.
#pragma once

#include <fdk/fdk.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace fdk_tools {

struct LivePreviewOptions {
  double interval_s = 2.0;
  double window_lo = 0, window_hi = 0;  // lo >= hi: each frame's own percentiles
  // false: `base` + ".png" replaced by each frame and removed when the
  // LivePreview goes; true: `base` + "-NNN.png", one per frame, kept.
  bool series = false;
};

class LivePreview {
 public:
  // Starts the thread; the first frame comes after interval_s seconds.
  // `base`: the frames' path without the extension.
  LivePreview(fdk_context* ctx, const std::string& base, const LivePreviewOptions& options);
  // Writes a frame now (after fdk_finish: the complete preview).
  void frame_now();
  // Stops the thread; removes the file unless a series.
  ~LivePreview();
  LivePreview(const LivePreview&) = delete;
  LivePreview& operator=(const LivePreview&) = delete;
  // The file (or the first frame's name, for a series).
  std::string path() const;
  int frames() const { return frames_.load(); }

 private:
  void loop();
  void write_frame() noexcept;

  fdk_context* ctx_;
  std::string base_;
  LivePreviewOptions options_;
  std::mutex mutex_;  // one frame at a time; guards stop_
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<int> frames_{0};
  std::thread thread_;
};

}  // namespace fdk_tools
