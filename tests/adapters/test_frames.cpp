// libfdk_frames through its C interface: reconstruction from raw frames,
// out-of-order, duplicate and dropped frames, back-pressure, the encoder
// angle, concurrent pushers, cancellation and the errors.
#include <fdk/fdk.h>
#include <fdk/fdk_frames.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "sim.hpp"

namespace {

constexpr int kDet = 48, kViews = 60, kVol = 32;

fdk_sim::ScannerModel model(bool noise = false) {
  fdk_sim::ScannerModel m;
  m.columns = m.rows = kDet;
  m.pixel = 1.6;
  m.views = kViews;
  m.noise = noise;
  m.i0 = 30000;
  return m;
}

fdk_config recon_config(const fdk_sim::Scanner& s) {
  fdk_config c = s.config();
  for (int a = 0; a < 3; ++a) {
    c.volume.size[a] = kVol;
    c.volume.spacing[a] = 1.6 * 500.0 / 800.0 * kDet / kVol * 0.9;
    c.volume.origin[a] = -0.5 * (kVol - 1) * c.volume.spacing[a];
  }
  c.backend = FDK_BACKEND_CPU;
  c.num_threads = 2;
  return c;
}

struct Frames {
  fdk_sim::Scanner scanner;
  std::vector<std::vector<uint16_t>> raw;  // per view
  std::vector<std::vector<float>> exact;   // line integrals per view
  std::vector<float> dark, flat;

  explicit Frames(const fdk_sim::ScannerModel& m) : scanner(m) {
    const size_t n = static_cast<size_t>(kDet) * kDet;
    std::vector<double> d;
    for (int v = 0; v < m.views; ++v) {
      exact.emplace_back(n);
      scanner.line_integrals(v, exact.back().data());
      scanner.raw_frame(v, 0, exact.back().data(), d);
      raw.emplace_back(n);
      for (size_t k = 0; k < n; ++k) {
        raw.back()[k] = static_cast<uint16_t>(std::min(65535.0, std::max(0.0, std::round(d[k]))));
      }
    }
    scanner.raw_frame(0, 2, nullptr, d);  // a noiseless dark and flat when noise is off
    dark.assign(d.begin(), d.end());
    scanner.raw_frame(0, 1, nullptr, d);
    flat.assign(d.begin(), d.end());
  }
};

std::vector<float> read_volume(fdk_context* ctx) {
  int32_t count = 0;
  EXPECT_EQ(fdk_slab_count(ctx, &count), FDK_OK);
  std::vector<float> volume;
  for (int32_t i = 0; i < count; ++i) {
    fdk_slab_info info{};
    info.struct_size = sizeof info;
    EXPECT_EQ(fdk_get_slab_info(ctx, i, &info), FDK_OK);
    std::vector<float> slab(info.byte_size / 4);
    EXPECT_EQ(fdk_read_slab(ctx, i, slab.data(), info.byte_size), FDK_OK) << fdk_last_error(ctx);
    volume.insert(volume.end(), slab.begin(), slab.end());
  }
  return volume;
}

// The reconstruction of the exact line integrals of `views` pushed in order
// straight into libfdk.
std::vector<float> direct(const Frames& f, const fdk_config& c, const std::vector<int>& views) {
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v : views) {
    EXPECT_EQ(fdk_push_projection(ctx, v, f.exact[static_cast<size_t>(v)].data(), 4 * kDet, nullptr),
              FDK_OK);
  }
  EXPECT_EQ(fdk_finish(ctx), FDK_OK);
  auto out = read_volume(ctx);
  fdk_destroy(ctx);
  return out;
}

double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

fdk_frames_config frames_config(const Frames& f) {
  fdk_frames_config c;
  fdk_frames_config_init(&c);
  c.width = c.height = kDet;
  c.dark = f.dark.data();
  c.flat = f.flat.data();
  return c;
}

fdk_frames_stats stats_of(const fdk_frames* h) {
  fdk_frames_stats s{};
  s.struct_size = sizeof s;
  EXPECT_EQ(fdk_frames_get_stats(h, &s), FDK_OK);
  return s;
}

}  // namespace

TEST(Frames, RawFramesReconstructLikeTheirLineIntegrals) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  const fdk_frames_config fc = frames_config(f);
  fdk_frames* h = nullptr;
  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK) << fdk_frames_last_create_error();
  for (int v = 0; v < kViews; ++v) {
    ASSERT_EQ(fdk_frames_push_u16(h, v, 0.0, 0.01 * v, f.raw[static_cast<size_t>(v)].data(),
                                  2 * kDet, -1),
              FDK_OK)
        << fdk_frames_last_error(h);
  }
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK) << fdk_frames_last_error(h);
  const fdk_frames_stats s = stats_of(h);
  EXPECT_EQ(s.frames_received, kViews);
  EXPECT_EQ(s.frames_reconstructed, kViews);
  EXPECT_EQ(s.missing, 0);
  EXPECT_DOUBLE_EQ(s.last_timestamp_s, 0.01 * (kViews - 1));
  std::vector<int> all(kViews);
  std::iota(all.begin(), all.end(), 0);
  const auto want = direct(f, rc, all);
  const auto got = read_volume(fdk_frames_context(h));
  // Only the uint16 rounding of the raw counts differs.
  EXPECT_LT(relative_l2(got, want), 2e-3);
  fdk_frames_destroy(h);
}

TEST(Frames, OutOfOrderDuplicateAndDroppedFrames) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  fdk_frames_config fc = frames_config(f);
  fc.line_integrals = 1;  // exact data: the comparison is then tight
  fc.dark = fc.flat = nullptr;
  fdk_frames* h = nullptr;
  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK) << fdk_frames_last_create_error();
  // Drop every 7th frame; push the rest in shuffled windows of 5, each
  // frame twice.
  std::vector<int> order, kept, dropped;
  for (int v = 0; v < kViews; ++v) (v % 7 == 3 ? dropped : kept).push_back(v);
  order = kept;
  for (size_t w = 0; w < order.size(); w += 5) {
    std::reverse(order.begin() + static_cast<std::ptrdiff_t>(w),
                 order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), w + 5)));
  }
  for (int v : order) {
    for (int copy = 0; copy < 2; ++copy) {
      ASSERT_EQ(fdk_frames_push_f32(h, v, 0.0, 0.0, f.exact[static_cast<size_t>(v)].data(),
                                    4 * kDet, -1),
                FDK_OK);
    }
  }
  fdk_frames_stats s = stats_of(h);
  EXPECT_EQ(s.duplicates, static_cast<int>(kept.size()));
  EXPECT_GT(s.out_of_order, 0);
  EXPECT_GT(s.missing, 0);  // dropped ones below the highest index
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK) << fdk_frames_last_error(h);
  s = stats_of(h);
  EXPECT_EQ(s.missing, static_cast<int>(dropped.size()));
  std::vector<int32_t> missing(100);
  int32_t count = 0;
  ASSERT_EQ(fdk_frames_missing(h, missing.data(), 100, &count), FDK_OK);
  missing.resize(static_cast<size_t>(count));
  EXPECT_EQ(missing, std::vector<int32_t>(dropped.begin(), dropped.end()));
  // Same as pushing the frames that arrived, in order, straight into libfdk.
  const auto want = direct(f, rc, kept);
  EXPECT_LT(relative_l2(read_volume(fdk_frames_context(h)), want), 1e-5);
  fdk_frames_destroy(h);
}

namespace {
// Holds the adapter's worker inside the reconstruction's progress callback.
struct Gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  int entered = 0;
  static void callback(void* user, const fdk_progress*) {
    auto* g = static_cast<Gate*>(user);
    std::unique_lock<std::mutex> lock(g->m);
    ++g->entered;
    g->cv.notify_all();
    g->cv.wait(lock, [&] { return g->open; });
  }
  void wait_entered() {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return entered > 0; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
};
}  // namespace

TEST(Frames, BackPressureRefusesWithBudgetAndNeverDropsSilently) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  fdk_frames_config fc = frames_config(f);
  fc.queue_capacity = 2;
  fdk_frames* h = nullptr;
  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK);
  Gate gate;
  ASSERT_EQ(fdk_set_progress_callback(fdk_frames_context(h), Gate::callback, &gate), FDK_OK);
  const size_t pitch = 2 * kDet;
  ASSERT_EQ(fdk_frames_push_u16(h, 0, 0, 0, f.raw[0].data(), pitch, 0), FDK_OK);
  gate.wait_entered();  // the worker holds slot 0
  ASSERT_EQ(fdk_frames_push_u16(h, 1, 0, 0, f.raw[1].data(), pitch, 0), FDK_OK);  // slot 1
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(fdk_frames_push_u16(h, 2, 0, 0, f.raw[2].data(), pitch, 50), FDK_ERROR_BUDGET);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(45));
  EXPECT_NE(std::string(fdk_frames_last_error(h)).find("frame 2 was not taken"), std::string::npos)
      << fdk_frames_last_error(h);
  fdk_frames_stats s = stats_of(h);
  EXPECT_EQ(s.queue_full_timeouts, 1);
  EXPECT_EQ(s.frames_received, 2);
  EXPECT_EQ(s.queue_high_water, 1);
  // A blocking push waits for room once the worker moves on.
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate.release();
  });
  EXPECT_EQ(fdk_frames_push_u16(h, 2, 0, 0, f.raw[2].data(), pitch, -1), FDK_OK);
  opener.join();
  for (int v = 3; v < kViews; ++v) {
    ASSERT_EQ(fdk_frames_push_u16(h, v, 0, 0, f.raw[static_cast<size_t>(v)].data(), pitch, -1), FDK_OK);
  }
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK);
  s = stats_of(h);
  EXPECT_EQ(s.frames_reconstructed, kViews);
  EXPECT_EQ(s.missing, 0);
  fdk_frames_destroy(h);
}

TEST(Frames, EncoderAngleReplacesTheConfiguredAngle) {
  fdk_sim::ScannerModel m = model();
  m.first_angle = 30;  // the real scan starts at 30 degrees
  const Frames f(m);
  fdk_config rc = recon_config(f.scanner);
  const auto truth = direct(f, rc, [] {
    std::vector<int> v(kViews);
    std::iota(v.begin(), v.end(), 0);
    return v;
  }());
  rc.scan.first_angle_deg = 0;  // the configuration believes 0
  fdk_frames_config fc = frames_config(f);
  fc.line_integrals = 1;
  fc.dark = fc.flat = nullptr;
  for (int use : {0, 1}) {
    fc.use_encoder_angle = use;
    fdk_frames* h = nullptr;
    ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK);
    for (int v = 0; v < kViews; ++v) {
      const double encoder = 30.0 + v * 360.0 / kViews;
      ASSERT_EQ(fdk_frames_push_f32(h, v, encoder, 0, f.exact[static_cast<size_t>(v)].data(), 4 * kDet, -1),
                FDK_OK);
    }
    ASSERT_EQ(fdk_frames_finish(h), FDK_OK) << fdk_frames_last_error(h);
    const double err = relative_l2(read_volume(fdk_frames_context(h)), truth);
    if (use) {
      EXPECT_LT(err, 1e-4);
    } else {
      EXPECT_GT(err, 0.05);  // rotated by 30 degrees
    }
    fdk_frames_destroy(h);
  }
}

TEST(Frames, ConcurrentPushersAndCancel) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  const fdk_frames_config fc = frames_config(f);
  fdk_frames* h = nullptr;
  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      // Every thread pushes every other frame: each frame arrives twice.
      for (int v = t % 2; v < kViews; v += 2) {
        if (fdk_frames_push_u16(h, v, 0, 0, f.raw[static_cast<size_t>(v)].data(), 2 * kDet, -1) != FDK_OK) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK);
  const fdk_frames_stats s = stats_of(h);
  EXPECT_EQ(s.frames_reconstructed, kViews);
  EXPECT_EQ(s.duplicates, kViews);
  fdk_frames_destroy(h);

  // Cancel releases a push waiting on a full queue.
  fdk_frames_config small = fc;
  small.queue_capacity = 1;
  ASSERT_EQ(fdk_frames_create(&rc, &small, &h), FDK_OK);
  Gate gate;
  ASSERT_EQ(fdk_set_progress_callback(fdk_frames_context(h), Gate::callback, &gate), FDK_OK);
  ASSERT_EQ(fdk_frames_push_u16(h, 0, 0, 0, f.raw[0].data(), 2 * kDet, -1), FDK_OK);
  gate.wait_entered();
  auto waiting = std::async(std::launch::async, [&] {
    return fdk_frames_push_u16(h, 1, 0, 0, f.raw[1].data(), 2 * kDet, -1);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(fdk_frames_cancel(h), FDK_OK);
  EXPECT_EQ(waiting.get(), FDK_ERROR_CANCELLED);
  gate.release();
  EXPECT_EQ(fdk_frames_finish(h), FDK_ERROR_CANCELLED);
  fdk_frames_destroy(h);
}

// A frame with a NaN pixel and a good copy of the same index pushed from two
// threads at once: the bad one is refused, the good one is reconstructed,
// and nothing is counted as a duplicate. The old adapter claimed the index
// before it had looked at the pixels, so a good copy arriving during that
// copy was ignored as a "duplicate" (FDK_OK) and the index then given back:
// the frame lost without an error.
//
// The race is made to happen on purpose rather than hoped for: the frames
// are large (1536 x 1536, binned 32 x 32 to the 48 x 48 detector) with the
// NaN in the last pixel, so checking and copying one takes milliseconds, and
// the second thread pushes the good copy the moment fdk_frames_missing stops
// listing the index (the bad frame holds it), or, when that never happens
// (the fixed adapter), as soon as the bad push has returned.
TEST(Frames, BadFrameNeverHoldsItsIndexAgainstAConcurrentGoodCopy) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  constexpr int kBin = 32, kBig = kDet * kBin;
  fdk_frames_config fc;
  fdk_frames_config_init(&fc);
  fc.width = fc.height = kBig;
  fc.bin[0] = fc.bin[1] = kBin;
  fc.line_integrals = 1;
  fc.queue_capacity = 4;
  fdk_frames* h = nullptr;
  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK) << fdk_frames_last_create_error();
  // Frame v at full size: every line integral repeated over its 32 x 32 block.
  auto big_frame = [&](int v, std::vector<float>* out) {
    out->resize(static_cast<size_t>(kBig) * kBig);
    for (int y = 0; y < kBig; ++y) {
      for (int x = 0; x < kBig; ++x) {
        (*out)[static_cast<size_t>(y) * kBig + x] =
            f.exact[static_cast<size_t>(v)][static_cast<size_t>(y / kBin) * kDet + x / kBin];
      }
    }
  };
  std::vector<float> good, bad;
  // The last view first: fdk_frames_missing then lists every lower index
  // that has not been claimed.
  big_frame(kViews - 1, &good);
  ASSERT_EQ(fdk_frames_push_f32(h, kViews - 1, 0, 0, good.data(), 4 * kBig, -1), FDK_OK);
  auto claimed = [&](int v) {
    std::vector<int32_t> missing(kViews);
    int32_t count = 0;
    EXPECT_EQ(fdk_frames_missing(h, missing.data(), kViews, &count), FDK_OK);
    return std::find(missing.begin(), missing.begin() + count, v) == missing.begin() + count;
  };
  const int attempts = 30;
  int raced = 0;  // attempts where the bad frame was seen holding its index
  for (int v = 0; v < attempts; ++v) {
    big_frame(v, &good);
    bad = good;
    bad.back() = std::nanf("");
    std::atomic<bool> bad_done{false};
    fdk_status bad_status = FDK_OK;
    std::thread bad_pusher([&] {
      bad_status = fdk_frames_push_f32(h, v, 0, 0, bad.data(), 4 * kBig, -1);
      bad_done = true;
    });
    bool seen = false;
    while (!bad_done.load()) {
      if (claimed(v)) {
        seen = true;
        break;
      }
    }
    raced += seen ? 1 : 0;
    const fdk_status good_status = fdk_frames_push_f32(h, v, 0, 0, good.data(), 4 * kBig, -1);
    bad_pusher.join();
    EXPECT_EQ(bad_status, FDK_ERROR_INVALID_ARGUMENT) << "frame " << v;
    EXPECT_EQ(good_status, FDK_OK) << "frame " << v;
  }
  std::printf("the bad frame was seen holding its index in %d of %d attempts\n", raced, attempts);
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK) << fdk_frames_last_error(h);
  const fdk_frames_stats s = stats_of(h);
  EXPECT_EQ(s.duplicates, 0);
  EXPECT_EQ(s.frames_received, attempts + 1);
  EXPECT_EQ(s.frames_reconstructed, attempts + 1);
  std::vector<int32_t> missing(kViews);
  int32_t count = 0;
  ASSERT_EQ(fdk_frames_missing(h, missing.data(), kViews, &count), FDK_OK);
  for (int v = 0; v < attempts; ++v) {
    EXPECT_EQ(std::count(missing.begin(), missing.begin() + count, v), 0)
        << "frame " << v << " was lost";
  }
  fdk_frames_destroy(h);
}

// Two good copies of each frame pushed from two threads at once: exactly one
// is taken, the other is a duplicate, and every push returns FDK_OK.
TEST(Frames, ConcurrentGoodCopiesGiveOneFrameAndOneDuplicate) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  fdk_frames_config fc;
  fdk_frames_config_init(&fc);
  fc.width = fc.height = kDet;
  fc.line_integrals = 1;
  fdk_frames* h = nullptr;
  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK) << fdk_frames_last_create_error();
  std::atomic<int> failures{0};
  auto pusher = [&] {
    for (int v = 0; v < kViews; ++v) {
      if (fdk_frames_push_f32(h, v, 0, 0, f.exact[static_cast<size_t>(v)].data(), 4 * kDet, -1) !=
          FDK_OK) {
        ++failures;
      }
    }
  };
  std::thread a(pusher), b(pusher);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK);
  const fdk_frames_stats s = stats_of(h);
  EXPECT_EQ(s.frames_received, kViews);
  EXPECT_EQ(s.frames_reconstructed, kViews);
  EXPECT_EQ(s.duplicates, kViews);
  fdk_frames_destroy(h);
}

TEST(Frames, ErrorsAreStatusesWithMessages) {
  const Frames f(model());
  const fdk_config rc = recon_config(f.scanner);
  fdk_frames_config fc = frames_config(f);
  fdk_frames* h = nullptr;

  fdk_frames_config bad = fc;
  bad.struct_size = 3;
  EXPECT_EQ(fdk_frames_create(&rc, &bad, &h), FDK_ERROR_STRUCT_SIZE);
  EXPECT_EQ(h, nullptr);
  bad = fc;
  bad.width = kDet + 2;  // does not match the detector
  bad.dark = bad.flat = nullptr;  // (arrays must have width * height floats)
  bad.i0 = 30000;
  EXPECT_EQ(fdk_frames_create(&rc, &bad, &h), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_frames_last_create_error()).find("reconstruction's detector is 48 x 48"),
            std::string::npos)
      << fdk_frames_last_create_error();
  bad = fc;
  bad.dark = nullptr;  // wrong size arrays cannot be detected; a wrong flat can
  std::vector<float> zero(kDet * kDet, 0.0f);
  bad.flat = zero.data();
  EXPECT_EQ(fdk_frames_create(&rc, &bad, &h), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_frames_last_create_error()).find("flat"), std::string::npos);
  bad = fc;
  bad.flat = nullptr;
  EXPECT_EQ(fdk_frames_create(&rc, &bad, &h), FDK_ERROR_INVALID_ARGUMENT);  // no flat, no i0
  fdk_config rbad = rc;
  rbad.detector.spacing[0] = -1;
  EXPECT_NE(fdk_frames_create(&rbad, &fc, &h), FDK_OK);  // fdk_create's own checks
  EXPECT_STRNE(fdk_frames_last_create_error(), "");

  ASSERT_EQ(fdk_frames_create(&rc, &fc, &h), FDK_OK);
  EXPECT_EQ(fdk_frames_finish(h), FDK_ERROR_INVALID_STATE);  // nothing arrived
  // (finish may be retried after a failure of this kind)
  EXPECT_EQ(fdk_frames_push_u16(h, kViews, 0, 0, f.raw[0].data(), 2 * kDet, -1), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(fdk_frames_last_error(h)).find("frame index 60"), std::string::npos);
  EXPECT_EQ(fdk_frames_push_u16(h, 0, 0, 0, nullptr, 2 * kDet, -1), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_frames_push_u16(h, 0, 0, 0, f.raw[0].data(), 2 * kDet - 1, -1), FDK_ERROR_INVALID_ARGUMENT);
  std::vector<float> nan(kDet * kDet, 1000.0f);
  nan[5 * kDet + 7] = std::nanf("");
  EXPECT_EQ(fdk_frames_push_f32(h, 0, 0, 0, nan.data(), 4 * kDet, -1), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_frames_last_error(h)).find("pixel (7, 5)"), std::string::npos)
      << fdk_frames_last_error(h);
  EXPECT_EQ(fdk_frames_push_f32(h, 0, NAN, 0, nan.data(), 4 * kDet, -1), FDK_ERROR_INVALID_ARGUMENT);
  // The refused frame was not taken: it can still come.
  ASSERT_EQ(fdk_frames_push_u16(h, 0, 0, 0, f.raw[0].data(), 2 * kDet, -1), FDK_OK);
  ASSERT_EQ(fdk_frames_finish(h), FDK_OK);
  EXPECT_EQ(fdk_frames_push_u16(h, 1, 0, 0, f.raw[1].data(), 2 * kDet, -1), FDK_ERROR_INVALID_STATE);
  EXPECT_EQ(fdk_frames_finish(h), FDK_ERROR_INVALID_STATE);
  fdk_frames_stats st{};
  st.struct_size = 1;
  EXPECT_EQ(fdk_frames_get_stats(h, &st), FDK_ERROR_STRUCT_SIZE);
  EXPECT_EQ(stats_of(h).missing, kViews - 1);
  // Messages are per thread.
  std::thread([&] { EXPECT_STREQ(fdk_frames_last_error(h), ""); }).join();
  fdk_frames_destroy(h);
  fdk_frames_destroy(nullptr);
  EXPECT_EQ(fdk_frames_context(nullptr), nullptr);
}
