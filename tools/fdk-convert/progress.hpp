// Progress display of the command-line tools: a bar with rate and ETA on a
// terminal, plain lines otherwise (logs, CI), nothing with --quiet.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace fdk_tools {

enum class ProgressStyle { kAuto, kBar, kLines, kNone };

// Counts go up from other threads (atomics); a monitor thread draws. Stages
// run one after the other ("reading", "writing").
class Progress {
 public:
  explicit Progress(ProgressStyle style, std::FILE* out = stderr) : out_(out) {
    if (style == ProgressStyle::kAuto) {
      style = ::isatty(::fileno(out)) ? ProgressStyle::kBar : ProgressStyle::kLines;
    }
    style_ = style;
    if (style_ != ProgressStyle::kNone) thread_ = std::thread([this] { run(); });
  }
  ~Progress() { stop(); }

  // Starts a stage of `total` items (ends the previous one).
  void stage(const std::string& name, const std::string& unit, long long total) {
    std::lock_guard<std::mutex> lock(mutex_);
    finish_stage_locked();
    name_ = name;
    unit_ = unit;
    total_ = total;
    done_ = 0;
    start_ = Clock::now();
    last_line_ = start_;
    last_line_fraction_ = -1;
    active_ = true;
  }
  void set(long long done) { done_.store(done); }
  void add(long long n = 1) { done_.fetch_add(n); }
  // Ends the current stage (prints its final state).
  void end_stage() {
    std::lock_guard<std::mutex> lock(mutex_);
    finish_stage_locked();
  }
  // Prints a message without tearing the bar.
  void message(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (style_ == ProgressStyle::kBar && drawn_) std::fprintf(out_, "\r\033[K");
    std::fprintf(out_, "%s\n", text.c_str());
    drawn_ = false;
    std::fflush(out_);
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    finish_stage_locked();
  }

 private:
  using Clock = std::chrono::steady_clock;

  static std::string duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    char b[32];
    const long t = std::lround(s);
    if (t >= 3600) std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
    return b;
  }

  std::string status_text(bool final) const {
    const long long done = done_.load();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = elapsed > 0 ? done / elapsed : 0.0;
    char b[256];
    if (final) {
      std::snprintf(b, sizeof b, "%s: %lld/%lld %s in %s (%.3g %s/s)", name_.c_str(), done,
                    total_, unit_.c_str(), duration(elapsed).c_str(), rate, unit_.c_str());
    } else {
      const double eta = rate > 0 ? (total_ - done) / rate : -1;
      std::snprintf(b, sizeof b, "%s: %lld/%lld %s, %.3g %s/s, ETA %s", name_.c_str(), done,
                    total_, unit_.c_str(), rate, unit_.c_str(), duration(eta).c_str());
    }
    return b;
  }

  void draw_locked() {
    if (!active_ || total_ <= 0) return;
    const long long done = done_.load();
    const double fraction = std::min(1.0, static_cast<double>(done) / total_);
    if (style_ == ProgressStyle::kBar) {
      const int width = 30;
      const int fill = static_cast<int>(fraction * width);
      std::string bar(static_cast<size_t>(fill), '#');
      bar.resize(width, '.');
      std::fprintf(out_, "\r\033[K[%s] %3d%% %s", bar.c_str(), static_cast<int>(fraction * 100),
                   status_text(false).c_str());
      drawn_ = true;
      std::fflush(out_);
    } else if (style_ == ProgressStyle::kLines) {
      // A line every 10 % or every 30 s, whichever comes first.
      const auto now = Clock::now();
      const bool step = std::floor(fraction * 10) > std::floor(last_line_fraction_ * 10);
      const bool slow = now - last_line_ > std::chrono::seconds(30);
      if ((step || slow) && done < total_) {
        std::fprintf(out_, "%3d%% %s\n", static_cast<int>(fraction * 100),
                     status_text(false).c_str());
        std::fflush(out_);
        last_line_ = now;
        last_line_fraction_ = fraction;
      }
    }
  }

  void finish_stage_locked() {
    if (!active_) return;
    active_ = false;
    if (style_ == ProgressStyle::kNone) return;
    if (style_ == ProgressStyle::kBar && drawn_) std::fprintf(out_, "\r\033[K");
    std::fprintf(out_, "%s\n", status_text(true).c_str());
    drawn_ = false;
    std::fflush(out_);
  }

  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      draw_locked();
      wake_.wait_for(lock, std::chrono::milliseconds(style_ == ProgressStyle::kBar ? 200 : 500));
    }
  }

  std::FILE* out_;
  ProgressStyle style_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false, active_ = false, drawn_ = false;
  std::string name_, unit_;
  long long total_ = 0;
  std::atomic<long long> done_{0};
  Clock::time_point start_, last_line_;
  double last_line_fraction_ = -1;
};

}  // namespace fdk_tools
