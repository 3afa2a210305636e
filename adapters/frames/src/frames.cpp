// libfdk_frames: the frame-callback adapter (see fdk/fdk_frames.h).
//
// Push copies the frame into a free slot of a fixed pool and queues it; one
// worker thread corrects queued frames (fdk::adapters::Preprocessor) and
// pushes them into the reconstruction. Every exception stops at this file's
// extern "C" functions and becomes a status plus a message.
#include "fdk/fdk_frames.h"

#include <fdk/adapters/correction.hpp>
#include <fdk/adapters/error.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace {

struct StatusError {
  fdk_status status;
  std::string message;
};

[[noreturn]] void fail(fdk_status s, const std::string& m) { throw StatusError{s, m}; }

// The ranges fdk_push_projection enforces (fdk.h): a frame outside them is
// refused at its push, as a NaN is, instead of by the reconstruction on the
// worker thread after the push already returned OK.
constexpr float kMaxSampleMagnitude = 1e20f;  // |sample| <= 1e20
constexpr double kMaxAngleDeg = 1e6;          // |angle| <= 1e6 degrees

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// True when `rows` rows of `row_bytes`, `pitch` bytes apart from `base`,
// span at most PTRDIFF_MAX bytes and end within the address space, computed
// without wrapping: only then is base + y * pitch a pointer into one object
// for every row y. (The same test as the library's for fdk_push_projection;
// the adapter is built over the C ABI, not the core's headers.)
bool strided_span_fits(const void* base, size_t rows, size_t pitch, size_t row_bytes) {
  if (rows == 0) return true;
  const size_t max = SIZE_MAX;
  if (pitch != 0 && rows - 1 > max / pitch) return false;
  const size_t last_row = (rows - 1) * pitch;
  if (row_bytes > max - last_row) return false;
  const size_t span = last_row + row_bytes;
  const uintptr_t start = reinterpret_cast<uintptr_t>(base);
  return span <= static_cast<size_t>(PTRDIFF_MAX) && span <= UINTPTR_MAX - start;
}

// Messages: per thread, for the handle they concern.
thread_local const fdk_frames* t_error_handle = nullptr;
thread_local std::string t_error;
thread_local std::string t_create_error;

}  // namespace

struct fdk_frames {
  struct Slot {
    int32_t index = -1;
    double angle = 0, timestamp = 0;
    bool is_u16 = false;
    std::vector<uint16_t> u16;
    std::vector<float> f32;
  };

  fdk_context* ctx = nullptr;
  fdk_config recon{};
  std::vector<fdk_view> views;  // FDK_SCAN_VIEWS copy (for the encoder angle)
  fdk_frames_config cfg{};
  std::unique_ptr<fdk::adapters::Preprocessor> pre;
  int32_t num_views = 0;

  std::mutex mutex;
  std::condition_variable room;   // a slot became free
  std::condition_variable work;   // a frame was queued (or stop)
  std::condition_variable idle;   // the worker finished a frame
  std::vector<Slot> slots;
  std::vector<int> free_slots;
  std::deque<int> queue;
  bool worker_busy = false;
  bool stop = false, cancelled = false, finished = false, finishing = false;
  fdk_status worker_status = FDK_OK;
  std::string worker_error;
  int32_t refused = 0;        // frames the reconstruction refused (back to missing)
  std::string last_refusal;   // the latest such refusal's message

  std::vector<uint8_t> received;  // per index
  int32_t received_count = 0, reconstructed = 0, duplicates = 0, out_of_order = 0;
  int32_t highest = -1, high_water = 0, timeouts = 0;
  uint64_t clamped = 0;
  double first_ts = 0, last_ts = 0;
  bool have_ts = false;

  std::thread worker;

  ~fdk_frames() {
    shutdown();
    fdk_destroy(ctx);
  }

  fdk_view view_for(int32_t index, double angle) const {
    fdk_view v;
    if (recon.scan.kind == FDK_SCAN_VIEWS) {
      v = views[static_cast<size_t>(index)];
    } else {
      v = recon.scan.uniform;
      v.gantry_angle_deg = recon.scan.first_angle_deg +
                           index * recon.scan.arc_deg / static_cast<double>(recon.scan.num_views);
    }
    v.gantry_angle_deg = angle;
    return v;
  }

  void run() {
    std::vector<float> out(static_cast<size_t>(pre->out_width()) * pre->out_height());
    std::vector<float> scratch;
    for (;;) {
      int s;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work.wait(lock, [&] { return stop || !queue.empty(); });
        if (stop) return;
        s = queue.front();
        queue.pop_front();
        worker_busy = true;
      }
      Slot& slot = slots[static_cast<size_t>(s)];
      fdk_status status = FDK_OK;
      std::string message;
      size_t clamped_now = 0;
      try {
        const size_t w = static_cast<size_t>(cfg.width);
        clamped_now = slot.is_u16 ? pre->process(slot.u16.data(), w, out.data(), scratch)
                                  : pre->process(slot.f32.data(), w, out.data(), scratch);
        fdk_view v{};
        const bool measured = cfg.use_encoder_angle != 0;
        if (measured) v = view_for(slot.index, slot.angle);
        status = fdk_push_projection(ctx, slot.index, out.data(),
                                     sizeof(float) * static_cast<size_t>(pre->out_width()),
                                     measured ? &v : nullptr);
        if (status != FDK_OK) message = fdk_last_error(ctx);
      } catch (const fdk::adapters::Error& e) {
        status = FDK_ERROR_INVALID_ARGUMENT;
        message = e.what();
      } catch (const std::bad_alloc&) {
        status = FDK_ERROR_OUT_OF_MEMORY;
        message = "out of memory";
      } catch (const std::exception& e) {
        status = FDK_ERROR_INTERNAL;
        message = e.what();
      }
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (status == FDK_OK) {
          ++reconstructed;
          clamped += clamped_now;
        } else if (refuses_only_this_frame(status)) {
          // The reconstruction refused this frame and stays usable: the
          // frame goes back to "not arrived", so fdk_frames_missing and
          // stats.missing report it and the driver may push it again.
          // Latching here would fail every later push and the finish for
          // one bad frame. The push-time checks mirror the library's, so
          // this is a backstop, not the usual path.
          received[static_cast<size_t>(slot.index)] = 0;
          --received_count;
          ++refused;
          last_refusal = "frame " + std::to_string(slot.index) + ": " + message;
        } else if (worker_status == FDK_OK) {
          worker_status = status;
          worker_error = "frame " + std::to_string(slot.index) + ": " + message;
        }
        free_slots.push_back(s);
        worker_busy = false;
      }
      room.notify_all();
      idle.notify_all();
    }
  }

  // Statuses by which fdk_push_projection (or the correction) refuses the
  // frame it was given and leaves the reconstruction as it was (fdk.h: bad
  // input leaves the handle usable); anything else (memory, device,
  // internal) stops the adapter.
  static bool refuses_only_this_frame(fdk_status s) {
    return s == FDK_ERROR_INVALID_ARGUMENT || s == FDK_ERROR_OUT_OF_RANGE;
  }

  // Throws the latched worker error, if any (called with the lock held).
  void check_worker_locked() const {
    if (worker_status != FDK_OK) {
      fail(worker_status, "the reconstruction stopped at " + worker_error);
    }
  }

  template <typename T>
  void push(int32_t index, double angle, double ts, const T* pixels, size_t pitch,
            int32_t timeout_ms) {
    if (!pixels) fail(FDK_ERROR_INVALID_ARGUMENT, "pixels is NULL");
    if (pitch < sizeof(T) * static_cast<size_t>(cfg.width) || pitch % sizeof(T) != 0) {
      fail(FDK_ERROR_INVALID_ARGUMENT,
           "row_pitch_bytes " + std::to_string(pitch) + " is not a multiple of " +
               std::to_string(sizeof(T)) + " of at least " +
               std::to_string(sizeof(T) * static_cast<size_t>(cfg.width)));
    }
    if (!strided_span_fits(pixels, static_cast<size_t>(cfg.height), pitch,
                           sizeof(T) * static_cast<size_t>(cfg.width))) {
      fail(FDK_ERROR_INVALID_ARGUMENT,
           "row_pitch_bytes " + std::to_string(pitch) + ": " + std::to_string(cfg.height) +
               " rows that far apart span more than PTRDIFF_MAX bytes or the address space");
    }
    if (index < 0 || index >= num_views) {
      fail(FDK_ERROR_OUT_OF_RANGE, "frame index " + std::to_string(index) + " outside [0, " +
                                       std::to_string(num_views) + ")");
    }
    if (!std::isfinite(angle) || !std::isfinite(ts)) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "frame " + std::to_string(index) +
                                           ": the encoder angle or timestamp is not finite");
    }
    // fdk.h's range for angles: refused here, where the driver learns which
    // frame it was, rather than by the reconstruction on the worker thread.
    if (!(std::abs(angle) <= kMaxAngleDeg)) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "frame " + std::to_string(index) + ": the encoder angle " +
                                           number_text(angle) +
                                           " degrees must lie within [-1e6, 1e6]");
    }
    int s;
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (cancelled) fail(FDK_ERROR_CANCELLED, "cancelled");
      if (finished || finishing) fail(FDK_ERROR_INVALID_STATE, "push after fdk_frames_finish");
      check_worker_locked();
      if (received[static_cast<size_t>(index)]) {
        ++duplicates;
        return;
      }
      auto ready = [&] { return !free_slots.empty() || cancelled || worker_status != FDK_OK; };
      if (timeout_ms < 0) {
        room.wait(lock, ready);
      } else if (!room.wait_for(lock, std::chrono::milliseconds(timeout_ms), ready)) {
        ++timeouts;
        fail(FDK_ERROR_BUDGET, "the frame queue (" + std::to_string(cfg.queue_capacity) +
                                   " frames) stayed full for " + std::to_string(timeout_ms) +
                                   " ms: frame " + std::to_string(index) +
                                   " was not taken (the reconstruction is slower than the "
                                   "scanner: retry, raise queue_capacity or slow down)");
      }
      if (cancelled) fail(FDK_ERROR_CANCELLED, "cancelled");
      check_worker_locked();
      if (received[static_cast<size_t>(index)]) {  // a concurrent push won
        ++duplicates;
        return;
      }
      // Only the slot is taken here. The index is claimed once the copy has
      // passed its checks: a frame rejected for a bad pixel never holds it,
      // so a good copy arriving meanwhile from another thread is not turned
      // away as a duplicate (and then lost when the bad one gives up).
      s = free_slots.back();
      free_slots.pop_back();
    }
    Slot& slot = slots[static_cast<size_t>(s)];
    const size_t w = static_cast<size_t>(cfg.width), h = static_cast<size_t>(cfg.height);
    bool acceptable = true;
    size_t bad_x = 0, bad_y = 0;
    float bad_value = 0;
    if constexpr (sizeof(T) == 2) {
      slot.is_u16 = true;
      slot.u16.resize(w * h);
      for (size_t y = 0; y < h; ++y) {
        std::memcpy(slot.u16.data() + y * w,
                    reinterpret_cast<const char*>(pixels) + y * pitch, w * sizeof(T));
      }
    } else {
      slot.is_u16 = false;
      slot.f32.resize(w * h);
      for (size_t y = 0; y < h; ++y) {
        const float* row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(pixels) + y * pitch);
        std::memcpy(slot.f32.data() + y * w, row, w * sizeof(float));
        for (size_t x = 0; x < w && acceptable; ++x) {
          if (!(std::abs(row[x]) <= kMaxSampleMagnitude)) {  // NaN fails too
            acceptable = false;
            bad_x = x;
            bad_y = y;
            bad_value = row[x];
          }
        }
      }
    }
    slot.index = index;
    slot.angle = angle;
    slot.timestamp = ts;
    {
      std::lock_guard<std::mutex> lock(mutex);
      const bool duplicate = acceptable && !cancelled && received[static_cast<size_t>(index)];
      if (!acceptable || cancelled || duplicate) {
        free_slots.push_back(s);
        room.notify_one();
        if (cancelled) fail(FDK_ERROR_CANCELLED, "cancelled");
        if (duplicate) {  // a good copy from another thread was queued first
          ++duplicates;
          return;
        }
        const std::string pixel = "frame " + std::to_string(index) + ": pixel (" +
                                  std::to_string(bad_x) + ", " + std::to_string(bad_y) + ")";
        if (!std::isfinite(bad_value)) fail(FDK_ERROR_INVALID_ARGUMENT, pixel + " is not finite");
        fail(FDK_ERROR_INVALID_ARGUMENT, pixel + " is " + number_text(bad_value) +
                                             ": samples must lie within [-1e20, 1e20]");
      }
      received[static_cast<size_t>(index)] = 1;  // later arrivals are duplicates
      ++received_count;
      if (index < highest) ++out_of_order;
      highest = std::max(highest, index);
      if (!have_ts) first_ts = last_ts = ts;
      first_ts = std::min(first_ts, ts);
      last_ts = std::max(last_ts, ts);
      have_ts = true;
      queue.push_back(s);
      high_water = std::max(high_water, static_cast<int32_t>(queue.size()));
    }
    work.notify_one();
  }

  void finish() {
    {
      std::unique_lock<std::mutex> lock(mutex);
      if (cancelled) fail(FDK_ERROR_CANCELLED, "cancelled");
      if (finished || finishing) fail(FDK_ERROR_INVALID_STATE, "fdk_frames_finish called twice");
      finishing = true;
      idle.wait(lock, [&] {
        return (queue.empty() && !worker_busy) || cancelled || worker_status != FDK_OK;
      });
      if (cancelled) fail(FDK_ERROR_CANCELLED, "cancelled");
      check_worker_locked();
      if (received_count == 0) {
        finishing = false;
        fail(FDK_ERROR_INVALID_STATE, "no frame arrived");
      }
    }
    const fdk_status s = fdk_finish(ctx);
    std::lock_guard<std::mutex> lock(mutex);
    finishing = false;
    if (s != FDK_OK) fail(s, std::string("fdk_finish: ") + fdk_last_error(ctx));
    finished = true;
  }

  std::vector<int32_t> missing_locked() const {
    std::vector<int32_t> out;
    const int32_t end = finished ? num_views : highest;
    for (int32_t i = 0; i < end; ++i) {
      if (!received[static_cast<size_t>(i)]) out.push_back(i);
    }
    return out;
  }

  void shutdown() noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
      cancelled = true;
    }
    work.notify_all();
    room.notify_all();
    idle.notify_all();
    if (worker.joinable()) worker.join();
  }
};

namespace {

template <typename F>
fdk_status guarded(const fdk_frames* h, F f) {
  try {
    f();
    return FDK_OK;
  } catch (const StatusError& e) {
    t_error_handle = h;
    t_error = e.message;
    return e.status;
  } catch (const fdk::adapters::Error& e) {
    t_error_handle = h;
    t_error = e.what();
    return FDK_ERROR_INVALID_ARGUMENT;
  } catch (const std::bad_alloc&) {
    t_error_handle = h;
    t_error = "out of memory";
    return FDK_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    t_error_handle = h;
    t_error = std::string("internal error: ") + e.what();
    return FDK_ERROR_INTERNAL;
  } catch (...) {
    t_error_handle = h;
    t_error = "internal error";
    return FDK_ERROR_INTERNAL;
  }
}

}  // namespace

extern "C" {

fdk_frames_config* fdk_frames_config_init(fdk_frames_config* c) {
  if (!c) return c;
  std::memset(c, 0, sizeof *c);
  c->struct_size = sizeof *c;
  c->min_transmission = 1e-5;
  c->max_unusable_fraction = 0.01;
  c->flat_saturation = 65535.0;
  c->bin[0] = c->bin[1] = 1;
  c->queue_capacity = 8;
  return c;
}

fdk_status fdk_frames_create(const fdk_config* recon, const fdk_frames_config* cfg,
                             fdk_frames** out) {
  if (out) *out = nullptr;
  fdk_frames* h = nullptr;
  const fdk_status s = guarded(nullptr, [&] {
    if (!recon || !cfg || !out) fail(FDK_ERROR_INVALID_ARGUMENT, "NULL argument");
    if (cfg->struct_size != sizeof(fdk_frames_config)) {
      fail(FDK_ERROR_STRUCT_SIZE, "fdk_frames_config: struct_size must be sizeof(fdk_frames_config) "
                                  "(call fdk_frames_config_init)");
    }
    if (recon->struct_size != sizeof(fdk_config)) {
      fail(FDK_ERROR_STRUCT_SIZE, "fdk_config: struct_size must be sizeof(fdk_config)");
    }
    const fdk_frames_config& c = *cfg;
    if (c.width < 1 || c.height < 1 || static_cast<uint64_t>(c.width) * c.height > (1ull << 30)) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "frame size " + std::to_string(c.width) + " x " +
                                           std::to_string(c.height) + " is invalid");
    }
    if (c.queue_capacity < 1 || c.queue_capacity > 65536) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "queue_capacity must lie in [1, 65536]");
    }
    if (recon->scan.num_views < 1) fail(FDK_ERROR_INVALID_ARGUMENT, "scan.num_views must be >= 1");
    if (c.use_encoder_angle && recon->scan.kind == FDK_SCAN_MATRICES) {
      fail(FDK_ERROR_UNSUPPORTED, "use_encoder_angle needs FDK_SCAN_UNIFORM or FDK_SCAN_VIEWS");
    }
    if (recon->scan.kind == FDK_SCAN_VIEWS && !recon->scan.views) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "scan.views is NULL");
    }
    auto frames = std::make_unique<fdk_frames>();
    frames->recon = *recon;
    frames->cfg = c;
    frames->num_views = recon->scan.num_views;
    if (recon->scan.kind == FDK_SCAN_VIEWS) {
      frames->views.assign(recon->scan.views, recon->scan.views + recon->scan.num_views);
      frames->recon.scan.views = frames->views.data();
    }
    frames->recon.scan.matrices = nullptr;  // not needed after create

    // Correction.
    fdk::adapters::PreprocessOptions po;
    po.raw = c.line_integrals == 0;
    po.i0 = c.i0;
    po.dark_level = c.dark_level;
    po.min_transmission = c.min_transmission;
    po.max_unusable_fraction = c.max_unusable_fraction;
    po.crop = fdk::adapters::Region{c.crop[0], c.crop[1], c.crop[2], c.crop[3]};
    po.bin_u = c.bin[0];
    po.bin_v = c.bin[1];
    po.flip_u = c.flip_u != 0;
    po.flip_v = c.flip_v != 0;
    fdk::adapters::CalibrationFrames cal;
    const size_t n = static_cast<size_t>(c.width) * static_cast<size_t>(c.height);
    if (c.dark) {
      cal.dark.width = c.width;
      cal.dark.height = c.height;
      cal.dark.pixels.assign(c.dark, c.dark + n);
      cal.dark_name = "dark";
    }
    if (c.flat) {
      cal.flat.width = c.width;
      cal.flat.height = c.height;
      cal.flat.pixels.assign(c.flat, c.flat + n);
      cal.flat_name = "flat";
      if (c.flat_saturation > 0) {
        cal.flat_saturated.resize(n);
        for (size_t i = 0; i < n; ++i) cal.flat_saturated[i] = c.flat[i] >= c.flat_saturation;
      }
    }
    if (c.bad_pixels) {
      cal.bad_map.assign(c.bad_pixels, c.bad_pixels + n);
      cal.bad_map_name = "bad_pixels";
    }
    if (po.raw && !c.flat && !(c.i0 > 0)) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "raw frames need a flat field or i0 > 0 "
                                       "(or set line_integrals)");
    }
    frames->pre = std::make_unique<fdk::adapters::Preprocessor>(c.width, c.height, po, std::move(cal));
    if (frames->pre->out_width() != recon->detector.size[0] ||
        frames->pre->out_height() != recon->detector.size[1]) {
      fail(FDK_ERROR_INVALID_ARGUMENT,
           "frames of " + std::to_string(c.width) + " x " + std::to_string(c.height) +
               " become " + std::to_string(frames->pre->out_width()) + " x " +
               std::to_string(frames->pre->out_height()) +
               " after crop and binning, but the reconstruction's detector is " +
               std::to_string(recon->detector.size[0]) + " x " +
               std::to_string(recon->detector.size[1]));
    }

    const fdk_status cs = fdk_create(&frames->recon, &frames->ctx);
    if (cs != FDK_OK) fail(cs, fdk_last_create_error());
    frames->received.assign(static_cast<size_t>(frames->num_views), 0);
    frames->slots.resize(static_cast<size_t>(c.queue_capacity));
    for (int i = c.queue_capacity - 1; i >= 0; --i) frames->free_slots.push_back(i);
    fdk_frames* raw = frames.get();
    frames->worker = std::thread([raw] { raw->run(); });
    h = frames.release();
  });
  if (s != FDK_OK) {  // a partly built handle was released by its unique_ptr
    t_create_error = t_error;
    return s;
  }
  *out = h;
  return FDK_OK;
}

void fdk_frames_destroy(fdk_frames* h) { delete h; }

fdk_status fdk_frames_push_u16(fdk_frames* h, int32_t index, double angle, double ts,
                               const uint16_t* pixels, size_t pitch, int32_t timeout_ms) {
  if (!h) {
    t_error_handle = nullptr;
    t_error = "frames is NULL";
    return FDK_ERROR_INVALID_ARGUMENT;
  }
  return guarded(h, [&] { h->push(index, angle, ts, pixels, pitch, timeout_ms); });
}

fdk_status fdk_frames_push_f32(fdk_frames* h, int32_t index, double angle, double ts,
                               const float* pixels, size_t pitch, int32_t timeout_ms) {
  if (!h) {
    t_error_handle = nullptr;
    t_error = "frames is NULL";
    return FDK_ERROR_INVALID_ARGUMENT;
  }
  return guarded(h, [&] { h->push(index, angle, ts, pixels, pitch, timeout_ms); });
}

fdk_status fdk_frames_finish(fdk_frames* h) {
  if (!h) return FDK_ERROR_INVALID_ARGUMENT;
  return guarded(h, [&] { h->finish(); });
}

fdk_context* fdk_frames_context(fdk_frames* h) { return h ? h->ctx : nullptr; }

fdk_status fdk_frames_get_stats(const fdk_frames* h, fdk_frames_stats* st) {
  return guarded(h, [&] {
    if (!h || !st) fail(FDK_ERROR_INVALID_ARGUMENT, "NULL argument");
    if (st->struct_size != sizeof(fdk_frames_stats)) {
      fail(FDK_ERROR_STRUCT_SIZE, "fdk_frames_stats: struct_size must be sizeof(fdk_frames_stats)");
    }
    auto& m = const_cast<fdk_frames*>(h)->mutex;
    std::lock_guard<std::mutex> lock(m);
    st->frames_announced = h->num_views;
    st->frames_received = h->received_count;
    st->frames_reconstructed = h->reconstructed;
    st->duplicates = h->duplicates;
    st->out_of_order = h->out_of_order;
    st->missing = static_cast<int32_t>(h->missing_locked().size());
    st->queue_capacity = h->cfg.queue_capacity;
    st->queue_depth = static_cast<int32_t>(h->queue.size());
    st->queue_high_water = h->high_water;
    st->queue_full_timeouts = h->timeouts;
    st->bad_pixels = static_cast<int32_t>(h->pre->report().bad_total);
    st->clamped_pixels = h->clamped;
    st->first_timestamp_s = h->first_ts;
    st->last_timestamp_s = h->last_ts;
  });
}

fdk_status fdk_frames_missing(const fdk_frames* h, int32_t* indices, int32_t capacity,
                              int32_t* count) {
  return guarded(h, [&] {
    if (!h || !count || capacity < 0 || (capacity > 0 && !indices)) {
      fail(FDK_ERROR_INVALID_ARGUMENT, "NULL argument or negative capacity");
    }
    std::vector<int32_t> missing;
    {
      std::lock_guard<std::mutex> lock(const_cast<fdk_frames*>(h)->mutex);
      missing = h->missing_locked();
    }
    *count = static_cast<int32_t>(missing.size());
    const size_t n = std::min(missing.size(), static_cast<size_t>(capacity));
    std::copy(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(n), indices);
  });
}

fdk_status fdk_frames_cancel(fdk_frames* h) {
  if (!h) return FDK_ERROR_INVALID_ARGUMENT;
  {
    std::lock_guard<std::mutex> lock(h->mutex);
    h->cancelled = true;
    for (int s : h->queue) h->free_slots.push_back(s);
    h->queue.clear();
  }
  fdk_cancel(h->ctx);
  h->room.notify_all();
  h->idle.notify_all();
  h->work.notify_all();
  return FDK_OK;
}

const char* fdk_frames_last_error(const fdk_frames* h) {
  return h && h == t_error_handle ? t_error.c_str() : "";
}

const char* fdk_frames_last_create_error(void) { return t_create_error.c_str(); }

}  // extern "C"
