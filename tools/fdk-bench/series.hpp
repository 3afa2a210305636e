// One configuration's warm-up and timed runs (what fdk-bench measures), apart
// from the summaries and the report that main.cpp makes of them.
#pragma once
#include <fdk/fdk.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "options.hpp"
#include "status_text.hpp"

namespace fdk_bench {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}


struct RunTimes {
  double create_s = 0;
  double push_s = 0;
  double finish_s = 0;
  double read_s = 0;
  double end_to_end_s = 0;
  double after_last_push_s = 0;  // the last push's return to the last slab read
  double destroy_s = 0;
  double estimate_s = 0;  // fdk_get_geometry_estimate after the last read (--estimate-geometry)
  double preview_s = 0;   // fdk_read_preview after fdk_finish (--preview)
  // The library's own accounting (fdk_get_timings).
  double filter_s = 0, store_s = 0, kernel_s = 0, upload_s = 0, download_s = 0;
};

struct Outcome {
  fdk_plan_info plan{};
  fdk_store_info store{};
  int32_t slab_count = 0;
};

struct VolumeCheck {
  uint64_t non_finite = 0;
  double sum = 0;
  float min = 0, max = 0;
  uint64_t count = 0;
};

struct Series {
  int gpus = 0;  // config.num_devices asked for; 0 on the CPU backend
  std::vector<RunTimes> runs;
  std::vector<fdk_device_stats> devices;  // one per timed run
  bool device_stats_ok = true;
  Outcome outcome;
  VolumeCheck volume_check;
  bool checked = false;          // the first warm-up's volume was scanned
  uint64_t peak_resident = 0;    // VmHWM after the runs
  bool peak_reset = false;       // VmHWM was lowered before the runs
};

struct Projections {
  std::vector<std::unique_ptr<float[]>> views;  // view i is pushed from views[i % pool]
  int pool = 0;
  size_t row_pitch = 0;
};

// The one slab-sized buffer every read goes to (slabs stream out and are
// discarded), reused across runs and configurations: ordinary memory, or
// with --page-locked from fdk_alloc_host.
class SlabBuffer {
 public:
  explicit SlabBuffer(bool page_locked) : page_locked_(page_locked) {}
  ~SlabBuffer() { release(); }
  SlabBuffer(const SlabBuffer&) = delete;
  SlabBuffer& operator=(const SlabBuffer&) = delete;
  // Grows to `bytes` (touched), or exits after reporting why it cannot.
  void reserve(uint64_t bytes) {
    if (bytes <= bytes_) return;
    release();
    const size_t floats = static_cast<size_t>(bytes / sizeof(float));
    if (page_locked_) {
      void* p = nullptr;
      const fdk_status s = fdk_alloc_host(floats * sizeof(float), &p);
      if (s != FDK_OK) {
        std::fprintf(stderr, "fdk-bench: fdk_alloc_host failed: %s\n", fdk_tools::status_text(s, fdk_last_create_error()).c_str());
        std::exit(1);
      }
      data_ = static_cast<float*>(p);
    } else {
      ordinary_.assign(floats, 1.0f);
      data_ = ordinary_.data();
    }
    std::fill(data_, data_ + floats, 1.0f);
    bytes_ = floats * sizeof(float);
  }
  float* data() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  bool page_locked() const { return page_locked_; }

 private:
  void release() {
    if (page_locked_ && data_) fdk_free_host(data_);
    ordinary_.clear();
    ordinary_.shrink_to_fit();
    data_ = nullptr;
    bytes_ = 0;
  }
  bool page_locked_;
  std::vector<float> ordinary_;
  float* data_ = nullptr;
  uint64_t bytes_ = 0;
};

// Runs o.warmup + o.repeats reconstructions on new contexts. label prefixes
// the per-run lines ("" or "baseline "). Returns false after a failure it
// has reported.
bool run_series(const Options& o, int gpus, const char* label, const Projections& p,
                SlabBuffer& slab_buffer, Series& series);

}  // namespace fdk_bench
