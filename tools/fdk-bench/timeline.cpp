#include "timeline.hpp"

#include <algorithm>
#include <cstdio>

namespace fdk_bench {

Timeline::Timeline(fdk_context* ctx, int views, double interval, Clock::time_point start)
    : ctx_(ctx), interval_(interval), start_(start), stored_(static_cast<size_t>(views), 0) {
  thread_ = std::thread([this] { loop(); });
}

Timeline::~Timeline() { stop(); }

void Timeline::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Timeline::loop() {
  auto next = start_;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // A sample that came late (the host was busy) moves the next one on,
    // rather than a burst of samples to catch up.
    next = std::max(next + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_)),
                    Clock::now());
    if (wake_.wait_until(lock, next, [this] { return stop_; })) break;
    lock.unlock();
    sample();
    lock.lock();
  }
  lock.unlock();
  sample();  // where the run ended
}

void Timeline::sample() {
  fdk_progress p{};
  p.struct_size = sizeof p;
  if (fdk_get_progress(ctx_, &p) != FDK_OK) return;
  // A view once STORED stays so in a run without failures: only those not
  // yet seen stored are asked about (the views in flight).
  const int pushed = p.views_pushed < 0 ? 0 : p.views_pushed;
  // fdk-bench pushes view i as the i-th: the views past `pushed` are absent.
  for (int v = 0; v < pushed && v < static_cast<int>(stored_.size()); ++v) {
    if (stored_[static_cast<size_t>(v)]) continue;
    int32_t state = FDK_VIEW_ABSENT;
    if (fdk_get_view_state(ctx_, v, &state, nullptr) == FDK_OK && state == FDK_VIEW_STORED) {
      stored_[static_cast<size_t>(v)] = 1;
      ++stored_count_;
    }
  }
  Sample s;
  s.t = std::chrono::duration<double>(Clock::now() - start_).count();
  s.pushed = pushed;
  s.stored = stored_count_;
  s.backprojected = p.backprojection_total > 0 ? double(p.backprojection_done) / double(p.backprojection_total) : 0;
  s.slabs_done = p.slabs_done;
  s.slabs_total = p.slabs_total;
  std::lock_guard<std::mutex> lock(mutex_);
  samples_.push_back(s);
}

void Timeline::print(const char* label, const char* run, int number) const {
  std::printf("%stimeline of %s %d (every %.3g s; + the change since the sample before):\n", label, run, number,
              interval_);
  Sample before;
  for (const Sample& s : samples_) {
    std::printf("  %8.3f s  pushed %6d (+%5d)  stored %6d (+%5d)  backprojected %6.2f %% (+%5.2f)  slabs %d/%d\n", s.t,
                s.pushed, s.pushed - before.pushed, s.stored, s.stored - before.stored, 100 * s.backprojected,
                100 * (s.backprojected - before.backprojected), s.slabs_done, s.slabs_total);
    before = s;
  }
}

}  // namespace fdk_bench
