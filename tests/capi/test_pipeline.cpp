// Properties of the pipeline through the C ABI: slabs are independent of how
// the volume is cut and read, geometry given three ways agrees, progress and
// cancellation behave, and push/read may run on different threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "finished_scan.hpp"
#include "small_scan.hpp"

using fdk_test::SmallScan;

namespace {

std::vector<float> reconstruct(const fdk_config& config, const SmallScan& scan, fdk_plan_info* plan = nullptr,
                               fdk_store_info* store = nullptr) {
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  if (!ctx) return {};
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK);
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
  if (plan) {
    plan->struct_size = sizeof(*plan);
    EXPECT_EQ(fdk_get_plan_info(ctx, plan), FDK_OK);
  }
  if (store) {
    store->struct_size = sizeof(*store);
    EXPECT_EQ(fdk_get_store_info(ctx, store), FDK_OK);
  }
  fdk_destroy(ctx);
  return volume;
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::abs(x));
  return m;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(Pipeline, OneSlabEqualsManySlabs) {
  const SmallScan scan;
  fdk_config one = scan.config;
  fdk_plan_info plan_one{}, plan_many{};
  const auto a = reconstruct(one, scan, &plan_one);
  EXPECT_EQ(plan_one.num_slabs, 1);
  fdk_config many = scan.config;
  many.slab_thickness = 5;  // 32 planes: six of 5 and one of 2
  const auto b = reconstruct(many, scan, &plan_many);
  EXPECT_EQ(plan_many.num_slabs, 7);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_GT(max_abs(a), 0.5f);
  EXPECT_LE(max_abs_diff(a, b), 1e-5f * max_abs(a));
}

TEST(Pipeline, SlabsReadInAnyOrderAndTwiceAreTheSame) {
  SmallScan scan;
  scan.config.slab_thickness = 6;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  int32_t count = 0;
  ASSERT_EQ(fdk_slab_count(ctx, &count), FDK_OK);
  ASSERT_EQ(count, 6);
  std::vector<std::vector<float>> first(static_cast<size_t>(count));
  int32_t y_next = 0;
  for (int32_t s = 0; s < count; ++s) {
    fdk_slab_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(fdk_get_slab_info(ctx, s, &info), FDK_OK);
    EXPECT_EQ(info.y_begin, y_next);
    y_next = info.y_end;
    EXPECT_EQ(info.byte_size, uint64_t(info.y_end - info.y_begin) * 32 * 32 * 4);
  }
  EXPECT_EQ(y_next, 32);
  for (int32_t s = count - 1; s >= 0; --s) {
    fdk_slab_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(fdk_get_slab_info(ctx, s, &info), FDK_OK);
    first[static_cast<size_t>(s)].resize(info.byte_size / 4);
    ASSERT_EQ(fdk_read_slab(ctx, s, first[static_cast<size_t>(s)].data(), info.byte_size), FDK_OK);
  }
  for (int32_t s : {2, 0, 5, 2}) {
    std::vector<float> again(first[static_cast<size_t>(s)].size());
    ASSERT_EQ(fdk_read_slab(ctx, s, again.data(), again.size() * 4), FDK_OK);
    EXPECT_EQ(std::memcmp(again.data(), first[static_cast<size_t>(s)].data(), again.size() * 4), 0);
  }
  fdk_destroy(ctx);
}

TEST(Pipeline, RowPitchIsHonoured) {
  const SmallScan scan;
  const auto reference = reconstruct(scan.config, scan);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  const int nu = scan.config.detector.size[0], nv = scan.config.detector.size[1];
  const int padded = nu + 7;
  for (int v = 0; v < scan.views(); ++v) {
    std::vector<float> strided(static_cast<size_t>(padded) * nv, -1e30f);
    for (int j = 0; j < nv; ++j)
      std::memcpy(&strided[static_cast<size_t>(j) * padded], scan.pixels(v) + static_cast<size_t>(j) * nu, nu * 4);
    ASSERT_EQ(fdk_push_projection(ctx, v, strided.data(), padded * 4, nullptr), FDK_OK);
  }
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK);
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), volume.size() * 4), 0);
  fdk_destroy(ctx);
}

TEST(Pipeline, GeometryAsViewsOrMatricesEqualsUniform) {
  // Tilted views exercise the per-voxel path as well as the separable one.
  for (double tilt : {0.0, 3.0}) {
    SCOPED_TRACE(tilt);
    SmallScan scan;
    scan.config.scan.uniform.out_of_plane_angle_deg = tilt;
    scan.config.scan.uniform.in_plane_angle_deg = tilt / 2;
    scan.config.scan.uniform.source_offset_x = 1.5;
    scan.config.scan.uniform.projection_offset_y = -2.0;
    scan.reproject();
    const auto uniform = reconstruct(scan.config, scan);

    std::vector<fdk_view> views(static_cast<size_t>(scan.views()));
    for (int v = 0; v < scan.views(); ++v) views[static_cast<size_t>(v)] = fdk::phantom::view_of(scan.config, v);
    fdk_config by_views = scan.config;
    by_views.scan.kind = FDK_SCAN_VIEWS;
    by_views.scan.views = views.data();
    const auto b = reconstruct(by_views, scan);
    EXPECT_LE(fdk_test::relative_l2(b, uniform), 1e-6);

    // RTK's matrices of the same views, written out from its definition.
    std::vector<double> matrices;
    const double d2r = 3.14159265358979323846 / 180;
    for (const fdk_view& v : views) {
      const double g = -v.gantry_angle_deg * d2r, o = -v.out_of_plane_angle_deg * d2r, p = -v.in_plane_angle_deg * d2r;
      const double ry[9] = {std::cos(g), 0, std::sin(g), 0, 1, 0, -std::sin(g), 0, std::cos(g)};
      const double rx[9] = {1, 0, 0, 0, std::cos(o), -std::sin(o), 0, std::sin(o), std::cos(o)};
      const double rz[9] = {std::cos(p), -std::sin(p), 0, std::sin(p), std::cos(p), 0, 0, 0, 1};
      double rzx[9] = {}, r[9] = {};
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k) rzx[i * 3 + j] += rz[i * 3 + k] * rx[k * 3 + j];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k) r[i * 3 + j] += rzx[i * 3 + k] * ry[k * 3 + j];
      // T(so - po) * Mag(-sdd, -sid) * T(-so) * R
      const double a = v.source_offset_x - v.projection_offset_x, b2 = v.source_offset_y - v.projection_offset_y;
      const double k[3][4] = {{-v.sdd, 0, a, v.sdd * v.source_offset_x - a * v.sid},
                              {0, -v.sdd, b2, v.sdd * v.source_offset_y - b2 * v.sid},
                              {0, 0, 1, -v.sid}};
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) matrices.push_back(2.5 * (k[i][0] * r[j] + k[i][1] * r[3 + j] + k[i][2] * r[6 + j]));
        matrices.push_back(2.5 * k[i][3]);  // any scale is the same matrix
      }
    }
    fdk_config by_matrices = scan.config;
    by_matrices.scan.kind = FDK_SCAN_MATRICES;
    by_matrices.scan.matrices = matrices.data();
    const auto c = reconstruct(by_matrices, scan);
    EXPECT_LE(fdk_test::relative_l2(c, uniform), 1e-5);
  }
}

TEST(Pipeline, MatrixNotOfRtkFormIsRejected) {
  SmallScan scan(16, 4, 16);
  std::vector<double> matrices(12 * 4, 0.0);
  for (int v = 0; v < 4; ++v) {
    double* m = &matrices[static_cast<size_t>(12 * v)];
    m[0] = -750; m[1] = 100; m[5] = -750; m[10] = 1; m[11] = -500;  // skewed detector
  }
  scan.config.scan.kind = FDK_SCAN_MATRICES;
  scan.config.scan.matrices = matrices.data();
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("skew"), std::string::npos);
}

TEST(Pipeline, Float16StorageIsSmallerAndClose) {
  const SmallScan scan;
  fdk_store_info s32{}, s16{};
  const auto a = reconstruct(scan.config, scan, nullptr, &s32);
  fdk_config half = scan.config;
  half.precision = FDK_PRECISION_FLOAT16;
  const auto b = reconstruct(half, scan, nullptr, &s16);
  EXPECT_EQ(s32.rel_error_bound, 0.0);
  EXPECT_GT(s16.rel_error_bound, 0.0);
  // Both fit the default budget uncoded: 2 bytes a sample against 4.
  EXPECT_LT(s16.stored_bytes, s32.stored_bytes * 3 / 4);
  const double err = fdk_test::relative_l2(b, a);
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, 1e-3);
  std::printf("store ratio float32 %.3f, float16 %.3f; float16 volume relative L2 %.2e\n", s32.ratio, s16.ratio, err);
}

namespace {
struct ProgressLog {
  std::atomic<int> calls{0};
  std::atomic<int> last_views{0};
  std::atomic<int> last_slabs{0};
  fdk_context* ctx = nullptr;
  int cancel_at_views = -1;
};

void on_progress(void* user, const fdk_progress* p) {
  auto* log = static_cast<ProgressLog*>(user);
  log->calls++;
  log->last_views = p->views_pushed;
  log->last_slabs = p->slabs_done;
  fdk_progress again{};
  again.struct_size = sizeof(again);
  EXPECT_EQ(fdk_get_progress(log->ctx, &again), FDK_OK);  // allowed from the callback
  if (p->views_pushed == log->cancel_at_views) {
    EXPECT_EQ(fdk_cancel(log->ctx), FDK_OK);
  }
}
}  // namespace

TEST(Pipeline, ProgressIsReportedAndCancelStopsEverything) {
  SmallScan scan;
  scan.config.slab_thickness = 8;
  ProgressLog log;
  ASSERT_EQ(fdk_create(&scan.config, &log.ctx), FDK_OK);
  ASSERT_EQ(fdk_set_progress_callback(log.ctx, on_progress, &log), FDK_OK);
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(log.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  EXPECT_EQ(log.last_views.load(), scan.views());
  ASSERT_EQ(fdk_finish(log.ctx), FDK_OK);
  fdk_progress p{};
  p.struct_size = sizeof(p);
  ASSERT_EQ(fdk_get_progress(log.ctx, &p), FDK_OK);
  EXPECT_EQ(p.phase, FDK_PHASE_RECONSTRUCTING);
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(log.ctx, volume), FDK_OK);
  ASSERT_EQ(fdk_get_progress(log.ctx, &p), FDK_OK);
  EXPECT_EQ(p.phase, FDK_PHASE_DONE);
  EXPECT_EQ(p.slabs_done, 4);
  EXPECT_EQ(log.last_slabs.load(), 4);
  EXPECT_EQ(log.calls.load(), scan.views() + 1 + 4);
  fdk_destroy(log.ctx);

  // Cancel from inside the callback in the middle of the acquisition.
  ProgressLog cancel_log;
  cancel_log.cancel_at_views = 5;
  ASSERT_EQ(fdk_create(&scan.config, &cancel_log.ctx), FDK_OK);
  ASSERT_EQ(fdk_set_progress_callback(cancel_log.ctx, on_progress, &cancel_log), FDK_OK);
  fdk_status s = FDK_OK;
  int v = 0;
  for (; v < scan.views() && s == FDK_OK; ++v) s = fdk_push_projection(cancel_log.ctx, v, scan.pixels(v), scan.pitch(), nullptr);
  EXPECT_EQ(s, FDK_ERROR_CANCELLED);
  EXPECT_EQ(v, 6);
  EXPECT_EQ(fdk_finish(cancel_log.ctx), FDK_ERROR_CANCELLED);
  ASSERT_EQ(fdk_get_progress(cancel_log.ctx, &p), FDK_OK);
  EXPECT_EQ(p.phase, FDK_PHASE_CANCELLED);
  fdk_destroy(cancel_log.ctx);
}

TEST(Pipeline, PushOnOneThreadReadOnAnother) {
  const SmallScan scan;
  const auto reference = reconstruct(scan.config, scan);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  std::atomic<bool> finished{false}, polling{false};
  std::thread acquisition([&] {
    // The pushes start once the queries have: under Wine on a busy machine
    // the pushes once ended before the first query.
    while (!polling) std::this_thread::yield();
    for (int v = 0; v < scan.views(); ++v)
      EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
    EXPECT_EQ(fdk_finish(ctx), FDK_OK);
    finished = true;
  });
  // Meanwhile: queries never block on the pushes.
  int polls = 0;
  while (!finished) {
    fdk_progress p{};
    p.struct_size = sizeof(p);
    EXPECT_EQ(fdk_get_progress(ctx, &p), FDK_OK);
    int32_t count = 0;
    EXPECT_EQ(fdk_slab_count(ctx, &count), FDK_OK);
    ++polls;
    polling = true;
    std::this_thread::yield();
  }
  acquisition.join();
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK);
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), volume.size() * 4), 0);
  EXPECT_GT(polls, 0);
  fdk_destroy(ctx);
}

// ---- fdk_slab_ready: slabs computed ahead, the host cache within the budget --

namespace {

using Clock = std::chrono::steady_clock;

double backproject_seconds(const fdk_context* ctx) {
  fdk_timings t{};
  t.struct_size = sizeof(t);
  EXPECT_EQ(fdk_get_timings(ctx, &t), FDK_OK);
  return t.backproject_seconds;
}

int32_t ready_now(fdk_context* ctx, int32_t slab) {
  int32_t ready = -1;
  EXPECT_EQ(fdk_slab_ready(ctx, slab, &ready), FDK_OK) << fdk_last_error(ctx);
  return ready;
}

// Polls until the slab is ready; false after `limit`.
bool poll_until_ready(fdk_context* ctx, int32_t slab, std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (ready_now(ctx, slab) == 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::vector<float> read_one(fdk_context* ctx, int32_t slab) {
  fdk_slab_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(fdk_get_slab_info(ctx, slab, &info), FDK_OK);
  std::vector<float> out(info.byte_size / 4);
  EXPECT_EQ(fdk_read_slab(ctx, slab, out.data(), info.byte_size), FDK_OK) << fdk_last_error(ctx);
  return out;
}

std::vector<float> slab_of(const std::vector<float>& volume, int32_t slab, size_t slab_floats) {
  return std::vector<float>(volume.begin() + static_cast<std::ptrdiff_t>(slab * slab_floats),
                            volume.begin() + static_cast<std::ptrdiff_t>((slab + 1) * slab_floats));
}

// A host budget whose slab cache holds `slabs` slabs of `config` (and less
// than one more): the smallest budget the planner accepts (to 4 KiB, the
// plan's reserve plus under 4 KiB), plus the compressed store, plus that.
uint64_t budget_for_cached_slabs(const fdk_config& config, const SmallScan& scan, double slabs) {
  fdk_config c = config;
  uint64_t minimal = 4096;
  for (;; minimal += 4096) {
    c.host_memory_budget = minimal;
    fdk_context* ctx = nullptr;
    const fdk_status s = fdk_create(&c, &ctx);
    fdk_destroy(ctx);
    if (s == FDK_OK) break;
    EXPECT_EQ(s, FDK_ERROR_BUDGET);
    if (s != FDK_ERROR_BUDGET || minimal > (64u << 20)) return 0;
  }
  c.host_memory_budget = 0;
  fdk_context* ctx = fdk_test::finished_scan(c, scan);
  fdk_store_info store{};
  store.struct_size = sizeof(store);
  EXPECT_EQ(fdk_get_store_info(ctx, &store), FDK_OK);
  fdk_slab_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(fdk_get_slab_info(ctx, 0, &info), FDK_OK);
  fdk_destroy(ctx);
  return minimal + store.stored_bytes + static_cast<uint64_t>(slabs * static_cast<double>(info.byte_size));
}

}  // namespace

// Polled until ready, a slab is computed in the background: its read then
// takes no backprojection at all, and holds the same bytes as a plain read.
TEST(Pipeline, SlabReadyComputesInTheBackgroundAndTheReadComputesNothing) {
  SmallScan scan;
  scan.config.slab_thickness = 8;
  const auto reference = reconstruct(scan.config, scan);
  const size_t slab_floats = 8 * 32 * 32;
  fdk_context* ctx = fdk_test::finished_scan(scan.config, scan);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(backproject_seconds(ctx), 0.0);
  fdk_progress p{};
  p.struct_size = sizeof(p);
  for (int32_t s : {2, 0, 3, 1}) {
    SCOPED_TRACE("slab " + std::to_string(s));
    ASSERT_TRUE(poll_until_ready(ctx, s)) << "slab " << s << " never became ready";
    const double before = backproject_seconds(ctx);
    EXPECT_GT(before, 0.0);  // computed, in the background
    const auto t0 = Clock::now();
    const std::vector<float> slab = read_one(ctx, s);
    std::printf("slab %d: read after fdk_slab_ready in %.3f ms\n", s,
                std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    EXPECT_EQ(backproject_seconds(ctx), before) << "the read computed the slab again";
    const auto expected = slab_of(reference, s, slab_floats);
    EXPECT_EQ(std::memcmp(slab.data(), expected.data(), slab.size() * 4), 0);
    EXPECT_EQ(ready_now(ctx, s), 1);  // still cached after the read
  }
  ASSERT_EQ(fdk_get_progress(ctx, &p), FDK_OK);
  EXPECT_EQ(p.phase, FDK_PHASE_DONE);
  EXPECT_EQ(p.slabs_done, 4);
  fdk_destroy(ctx);
}

// A host budget whose cache holds a single slab: a slab read is evicted for
// the next one and recomputed, bit for bit, when read again; a slab computed
// ahead keeps its room until read, so the next request waits for that read.
TEST(Pipeline, SlabsReadAreEvictedAndRecomputedTheSame) {
  SmallScan scan;
  scan.config.slab_thickness = 8;
  const auto reference = reconstruct(scan.config, scan);
  const size_t slab_floats = 8 * 32 * 32;
  fdk_config config = scan.config;
  config.host_memory_budget = budget_for_cached_slabs(scan.config, scan, 1.5);
  ASSERT_GT(config.host_memory_budget, 0u);

  // Reads only: 0, 1, 0 again (recomputed), 0 once more (cached).
  fdk_context* ctx = fdk_test::finished_scan(config, scan);
  ASSERT_NE(ctx, nullptr);
  const auto first = read_one(ctx, 0);
  const double after_0 = backproject_seconds(ctx);
  EXPECT_EQ(ready_now(ctx, 0), 1);  // cached
  const auto one = read_one(ctx, 1);
  const double after_1 = backproject_seconds(ctx);
  EXPECT_GT(after_1, after_0);
  const auto again = read_one(ctx, 0);
  const double after_again = backproject_seconds(ctx);
  EXPECT_GT(after_again, after_1) << "slab 0 was not evicted: the budget holds more than one slab";
  EXPECT_EQ(std::memcmp(first.data(), again.data(), first.size() * 4), 0);
  EXPECT_EQ(std::memcmp(first.data(), slab_of(reference, 0, slab_floats).data(), first.size() * 4), 0);
  EXPECT_EQ(std::memcmp(one.data(), slab_of(reference, 1, slab_floats).data(), one.size() * 4), 0);
  const auto third = read_one(ctx, 0);
  EXPECT_EQ(backproject_seconds(ctx), after_again);  // cached again
  EXPECT_EQ(std::memcmp(first.data(), third.data(), first.size() * 4), 0);
  fdk_destroy(ctx);

  // Computed ahead: slab 1 waits for slab 0's room until slab 0 is read.
  ctx = fdk_test::finished_scan(config, scan);
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(poll_until_ready(ctx, 0));
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(ready_now(ctx, 1), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(ready_now(ctx, 0), 1) << "slab 0, computed ahead and not read, was evicted";
  // Reading slab 0 frees its room, so the background thread may start the
  // pending slab 1 at once, and fdk_get_timings waits for that computation:
  // just after the read, the time is either that before it (slab 1 not yet
  // computed) or that once slab 1 is ready (slab 1 computed, nothing else).
  // A read that recomputed slab 0 would show neither.
  double before = backproject_seconds(ctx);
  const auto ahead0 = read_one(ctx, 0);
  const double after_read0 = backproject_seconds(ctx);
  ASSERT_TRUE(poll_until_ready(ctx, 1));  // slab 0 was read: its room goes to slab 1
  const double slab1_ready = backproject_seconds(ctx);
  EXPECT_GT(slab1_ready, before);  // slab 1 computed in the background
  EXPECT_TRUE(after_read0 == before || after_read0 == slab1_ready)
      << "the read of slab 0 computed: " << before << " s before it, " << after_read0 << " s after it, "
      << slab1_ready << " s once slab 1 was ready";
  // Nothing is requested now: the read of slab 1 computes nothing at all.
  before = slab1_ready;
  const auto ahead1 = read_one(ctx, 1);
  EXPECT_EQ(backproject_seconds(ctx), before);
  EXPECT_EQ(ready_now(ctx, 0), 0);  // evicted for slab 1 (and requested again)
  EXPECT_EQ(std::memcmp(ahead0.data(), first.data(), first.size() * 4), 0);
  EXPECT_EQ(std::memcmp(ahead1.data(), one.data(), one.size() * 4), 0);
  const auto ahead0_again = read_one(ctx, 0);
  EXPECT_EQ(std::memcmp(ahead0_again.data(), first.data(), first.size() * 4), 0);
  fdk_destroy(ctx);
}

// A budget that leaves the cache less than a slab: fdk_slab_ready never
// says 1 and nothing is computed in the background; reads still work.
TEST(Pipeline, SlabTooBigForTheCacheIsNeverReadyButReads) {
  SmallScan scan;
  scan.config.slab_thickness = 8;
  fdk_config config = scan.config;
  config.host_memory_budget = budget_for_cached_slabs(scan.config, scan, 0.5);
  ASSERT_GT(config.host_memory_budget, 0u);
  fdk_context* ctx = fdk_test::finished_scan(config, scan);
  ASSERT_NE(ctx, nullptr);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(ready_now(ctx, 0), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(backproject_seconds(ctx), 0.0);
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(ready_now(ctx, 0), 0);
  fdk_destroy(ctx);
}
