// Progress display of the command-line tools: a bar with rate and ETA on a
// terminal, plain lines otherwise (logs, CI), nothing with --quiet, or JSON
// lines for a wrapper (--progress json, on stdout: one object per line, see
// docs/ADAPTERS.md).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace fdk_tools {

enum class ProgressStyle { kAuto, kBar, kLines, kNone, kJson };

// `text` as a JSON string literal.
inline std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// A JSON number (null when not finite).
inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// Set once a write to stdout has failed: its reader went away (EPIPE, with
// SIGPIPE ignored) or it was closed. The run then stops with exit code 4
// rather than carry on unheard, or die of SIGPIPE leaving temporaries.
inline std::atomic<bool>& stdout_lost() {
  static std::atomic<bool> lost{false};
  return lost;
}
// Flushes `f`; a failure on stdout sets stdout_lost().
inline void flush_checked(std::FILE* f) {
  if (std::fflush(f) != 0 || std::ferror(f)) {
    if (f == stdout) stdout_lost().store(true);
  }
}

// Counts go up from other threads (atomics); a monitor thread draws. Stages
// run one after the other ("reading", "writing").
class Progress {
 public:
  explicit Progress(ProgressStyle style, std::FILE* out = stderr) : out_(out) {
    if (style == ProgressStyle::kJson) out_ = stdout;
    if (style == ProgressStyle::kAuto) {
      style = ::isatty(::fileno(out)) ? ProgressStyle::kBar : ProgressStyle::kLines;
    }
    style_ = style;
    if (style_ != ProgressStyle::kNone) thread_ = std::thread([this] { run(); });
  }
  ~Progress() { stop(); }

  // Starts a stage of `total` items (ends the previous one). `poll`, when
  // given, is asked for the count on every tick of the display (a count the
  // library keeps, read without waiting), else set() and add() give it.
  void stage(const std::string& name, const std::string& unit, long long total,
             std::function<long long()> poll = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    finish_stage_locked();
    poll_ = std::move(poll);
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
  // Prints a message without tearing the bar (JSON: a "message" event).
  void message(const std::string& text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (style_ == ProgressStyle::kJson) {
      emit_locked("{\"event\":\"message\",\"text\":" + json_string(text) + "}");
      return;
    }
    if (style_ == ProgressStyle::kBar && drawn_) std::fprintf(out_, "\r\033[K");
    std::fprintf(out_, "%s\n", text.c_str());
    drawn_ = false;
    flush_out();
  }
  // JSON style only: writes one event object (a complete JSON object) as
  // a line; other styles ignore it.
  void event(const std::string& json_object) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (style_ == ProgressStyle::kJson) emit_locked(json_object);
  }
  bool json() const { return style_ == ProgressStyle::kJson; }
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

  void flush_out() { flush_checked(out_); }
  void emit_locked(const std::string& line) {
    std::fprintf(out_, "%s\n", line.c_str());
    flush_out();
  }

  std::string json_progress(bool final) const {
    const long long done = done_.load();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = elapsed > 0 ? done / elapsed : 0.0;
    const double eta = final ? 0.0 : rate > 0 ? (total_ - done) / rate : NAN;
    return "{\"event\":\"" + std::string(final ? "stage_done" : "progress") + "\",\"stage\":" +
           json_string(name_) + ",\"unit\":" + json_string(unit_) + ",\"done\":" + std::to_string(done) +
           ",\"total\":" + std::to_string(total_) + ",\"fraction\":" +
           json_number(total_ > 0 ? static_cast<double>(done) / total_ : 1.0) + ",\"elapsed_s\":" +
           json_number(elapsed) + ",\"eta_s\":" + json_number(eta) + "}";
  }

  void draw_locked() {
    if (!active_ || total_ <= 0) return;
    if (poll_) done_.store(poll_());
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
      flush_out();
    } else if (style_ == ProgressStyle::kJson) {
      // Every tick (0.5 s) while the count moves.
      if (done != last_json_done_) {
        emit_locked(json_progress(false));
        last_json_done_ = done;
      }
    } else if (style_ == ProgressStyle::kLines) {
      // A line every 10 % or every 30 s, whichever comes first.
      const auto now = Clock::now();
      const bool step = std::floor(fraction * 10) > std::floor(last_line_fraction_ * 10);
      const bool slow = now - last_line_ > std::chrono::seconds(30);
      if ((step || slow) && done < total_) {
        std::fprintf(out_, "%3d%% %s\n", static_cast<int>(fraction * 100),
                     status_text(false).c_str());
        flush_out();
        last_line_ = now;
        last_line_fraction_ = fraction;
      }
    }
  }

  void finish_stage_locked() {
    if (!active_) return;
    active_ = false;
    if (poll_) done_.store(poll_());
    poll_ = nullptr;
    last_json_done_ = -1;
    if (style_ == ProgressStyle::kNone) return;
    if (style_ == ProgressStyle::kJson) {
      emit_locked(json_progress(true));
      return;
    }
    if (style_ == ProgressStyle::kBar && drawn_) std::fprintf(out_, "\r\033[K");
    std::fprintf(out_, "%s\n", status_text(true).c_str());
    drawn_ = false;
    flush_out();
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
  long long last_json_done_ = -1;
  std::function<long long()> poll_;
};

}  // namespace fdk_tools
