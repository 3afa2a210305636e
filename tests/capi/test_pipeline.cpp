// Properties of the pipeline through the C ABI: slabs are independent of how
// the volume is cut and read, geometry given three ways agrees, progress and
// cancellation behave, and push/read may run on different threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

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
  EXPECT_LT(s16.stored_bytes, s32.stored_bytes * 3 / 4);
  EXPECT_GT(s32.ratio, 1.0);
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
  std::atomic<bool> finished{false};
  std::thread acquisition([&] {
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
    std::this_thread::yield();
  }
  acquisition.join();
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK);
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), volume.size() * 4), 0);
  EXPECT_GT(polls, 0);
  fdk_destroy(ctx);
}
