// The live preview (fdk_config.preview, fdk_read_preview): a coarse volume
// reconstructed alongside, readable during the scan (suite Preview; the
// racing reads also run under TSan in .ci/run).
#include <fdk/fdk.h>
#include <fdk/phantom.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "small_scan.hpp"

namespace {

using fdk_test::SmallScan;

fdk_preview_info preview_info() {
  fdk_preview_info info;
  fdk_preview_info_init(&info);
  return info;
}

size_t voxels(const fdk_volume& v) {
  return static_cast<size_t>(v.size[0]) * static_cast<size_t>(v.size[1]) * static_cast<size_t>(v.size[2]);
}

// max |a - b| / max |b|
double relative_max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return diff / scale;
}

// RMSE against the phantom over the voxels inside its outer ellipsoid
// (the field outside it is only air); `interior`: only those at least 1.5
// voxels from every ellipsoid's surface (no edge a coarse grid must blur).
double rmse_against_phantom(const std::vector<float>& vol, const fdk_volume& g, bool interior = false) {
  const auto phantom = fdk::phantom::shepp_logan_3d(25.0);
  double sum = 0;
  size_t n = 0;
  for (int j = 0; j < g.size[1]; ++j)
    for (int k = 0; k < g.size[2]; ++k)
      for (int i = 0; i < g.size[0]; ++i) {
        const double x = g.origin[0] + i * g.spacing[0], y = g.origin[1] + j * g.spacing[1],
                     z = g.origin[2] + k * g.spacing[2];
        if (!fdk::phantom::contains(phantom.front(), x, y, z)) continue;
        bool near_edge = false;
        for (const auto& e : phantom)
          near_edge = near_edge || std::abs(fdk::phantom::distance_to_surface(e, x, y, z)) < 1.5 * g.spacing[0];
        if (interior && near_edge) continue;
        const double d = vol[(static_cast<size_t>(j) * g.size[2] + k) * g.size[0] + i] -
                         fdk::phantom::density_at(phantom, x, y, z);
        sum += d * d;
        ++n;
      }
  return std::sqrt(sum / static_cast<double>(n));
}

// The whole reconstruction of `config` (its volume) from `scan`'s views.
std::vector<float> reconstruct(fdk_config config, const SmallScan& scan) {
  fdk_context* ctx = nullptr;
  config.preview = 0;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  std::vector<float> vol;
  EXPECT_EQ(fdk_test::read_volume(ctx, vol), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return vol;
}

TEST(Preview, DefaultGridIsTheFieldAtHalfTheVoxelsUpTo256) {
  SmallScan scan(64, 8, 64);
  scan.config.preview = 1;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_preview_info info = preview_info();
  ASSERT_EQ(fdk_get_preview_info(ctx, &info), FDK_OK) << fdk_last_error(ctx);
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(info.volume.size[a], 32);
    EXPECT_DOUBLE_EQ(info.volume.spacing[a], 2 * scan.config.volume.spacing[a]);
    // The same first edge: the same field.
    EXPECT_NEAR(info.volume.origin[a] - 0.5 * info.volume.spacing[a],
                scan.config.volume.origin[a] - 0.5 * scan.config.volume.spacing[a], 1e-12);
  }
  EXPECT_EQ(info.views, 0);
  EXPECT_EQ(info.views_announced, 8);
  EXPECT_EQ(info.coverage, 0.0);
  EXPECT_EQ(info.on_gpu, 0);
  EXPECT_GT(info.memory_bytes, 4u * 32 * 32 * 32);
  // Nothing pushed: zeros, not garbage.
  std::vector<float> vol(voxels(info.volume), 1.0f);
  ASSERT_EQ(fdk_read_preview(ctx, vol.data(), vol.size() * 4, nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(*std::max_element(vol.begin(), vol.end()), 0.0f);
  fdk_destroy(ctx);
}

// After every view the preview is the reconstruction of its own grid, and
// fdk_finish makes it complete before any slab is read.
TEST(Preview, AfterAllViewsEqualsAReconstructionOfItsGrid) {
  SmallScan scan(48, 60, 64);
  scan.config.preview = 1;
  scan.config.preview_volume.size[0] = 40;
  scan.config.preview_volume.size[1] = 28;
  scan.config.preview_volume.size[2] = 36;
  for (int a = 0; a < 3; ++a) {
    scan.config.preview_volume.spacing[a] = 1.7;
    scan.config.preview_volume.origin[a] = -20.0 + 0.3 * a;
  }
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  fdk_preview_info info = preview_info();
  std::vector<float> preview(voxels(scan.config.preview_volume));
  ASSERT_EQ(fdk_read_preview(ctx, preview.data(), preview.size() * 4, &info), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(info.views, 60);
  EXPECT_EQ(info.coverage, 1.0);
  EXPECT_EQ(info.flags, static_cast<uint32_t>(FDK_PREVIEW_COMPLETE));
  fdk_destroy(ctx);

  fdk_config direct = scan.config;
  direct.volume = scan.config.preview_volume;
  const std::vector<float> expected = reconstruct(direct, scan);
  const double diff = relative_max_difference(preview, expected);
  std::printf("preview against a reconstruction of its grid: max |difference| / max = %.3g\n", diff);
  EXPECT_LT(diff, 1e-5);
}

// From a quarter of the scan on, the scaled preview's grey values are the
// finished volume's (its error against the phantom is reported).
TEST(Preview, ScaledByCoverageFromTheFirstQuarter) {
  SmallScan scan(64, 120, 80);
  scan.config.preview = 1;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_preview_info info = preview_info();
  ASSERT_EQ(fdk_get_preview_info(ctx, &info), FDK_OK);
  std::vector<float> vol(voxels(info.volume));
  double at_quarter = 0, at_end = 0, mean_quarter = 0, mean_end = 0, inner_quarter = 0;
  for (int v = 0; v < scan.views(); ++v) {
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
    if (v + 1 == scan.views() / 4) {
      // The view pushed last may still be on its way: settle by reading
      // until all of them are in.
      do {
        ASSERT_EQ(fdk_read_preview(ctx, vol.data(), vol.size() * 4, &info), FDK_OK) << fdk_last_error(ctx);
      } while (info.views < v + 1);
      EXPECT_NEAR(info.coverage, 0.25, 1e-12);
      at_quarter = rmse_against_phantom(vol, info.volume);
      inner_quarter = rmse_against_phantom(vol, info.volume, true);
      for (float x : vol) mean_quarter += x;
    }
  }
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  ASSERT_EQ(fdk_read_preview(ctx, vol.data(), vol.size() * 4, &info), FDK_OK) << fdk_last_error(ctx);
  at_end = rmse_against_phantom(vol, info.volume);
  const double inner_end = rmse_against_phantom(vol, info.volume, true);
  for (float x : vol) mean_end += x;
  std::printf("preview RMSE against the phantom (skull 2.0, brain 1.02): %.4f at a quarter of the views, %.4f at "
              "the end; away from the edges %.4f and %.4f (grid %dx%dx%d)\n",
              at_quarter, at_end, inner_quarter, inner_end, info.volume.size[0], info.volume.size[1],
              info.volume.size[2]);
  EXPECT_LT(inner_end, inner_quarter);
  // The total attenuation (the mean) is the finished one's within 5 %: the
  // quarter's streaks move values around, the scale keeps the level.
  EXPECT_NEAR(mean_quarter / mean_end, 1.0, 0.05);
  EXPECT_LT(at_end, at_quarter);
  EXPECT_LT(at_quarter, 0.5);  // the phantom: skull 2.0, brain 1.02
  fdk_destroy(ctx);
}

TEST(Preview, SlicesAreThePlanesOfTheVolume) {
  SmallScan scan(32, 24, 48);
  scan.config.preview = 1;
  scan.config.preview_volume.size[0] = 12;
  scan.config.preview_volume.size[1] = 10;
  scan.config.preview_volume.size[2] = 14;
  for (int a = 0; a < 3; ++a) {
    scan.config.preview_volume.spacing[a] = 4;
    scan.config.preview_volume.origin[a] = -20;
  }
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  const int nx = 12, ny = 10, nz = 14;
  std::vector<float> vol(static_cast<size_t>(nx) * ny * nz);
  ASSERT_EQ(fdk_read_preview(ctx, vol.data(), vol.size() * 4, nullptr), FDK_OK);
  std::vector<float> xs(static_cast<size_t>(nz) * ny), ys(static_cast<size_t>(nx) * nz), zs(static_cast<size_t>(nx) * ny);
  fdk_preview_slices s{};
  s.struct_size = sizeof s;
  s.at[0] = 3;
  s.at[1] = -1;  // the middle: 5
  s.at[2] = 9;
  s.x_slice = xs.data();
  s.x_slice_bytes = xs.size() * 4;
  s.y_slice = ys.data();
  s.y_slice_bytes = ys.size() * 4;
  s.z_slice = zs.data();
  s.z_slice_bytes = zs.size() * 4;
  ASSERT_EQ(fdk_read_preview_slices(ctx, &s, nullptr), FDK_OK) << fdk_last_error(ctx);
  auto at = [&](int i, int j, int k) { return vol[(static_cast<size_t>(j) * nz + k) * nx + i]; };
  for (int j = 0; j < ny; ++j)
    for (int k = 0; k < nz; ++k) ASSERT_EQ(xs[static_cast<size_t>(j) * nz + k], at(3, j, k));
  for (int k = 0; k < nz; ++k)
    for (int i = 0; i < nx; ++i) ASSERT_EQ(ys[static_cast<size_t>(k) * nx + i], at(i, 5, k));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) ASSERT_EQ(zs[static_cast<size_t>(j) * nx + i], at(i, j, 9));

  // Hostile: each refused with its reason, the handle still usable.
  s.at[2] = 14;
  EXPECT_EQ(fdk_read_preview_slices(ctx, &s, nullptr), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("at[2]"), std::string::npos) << fdk_last_error(ctx);
  s.at[2] = 0;
  s.y_slice_bytes = 4;
  EXPECT_EQ(fdk_read_preview_slices(ctx, &s, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("y_slice_bytes"), std::string::npos) << fdk_last_error(ctx);
  s.y_slice = nullptr;  // not wanted
  EXPECT_EQ(fdk_read_preview_slices(ctx, &s, nullptr), FDK_OK) << fdk_last_error(ctx);
  s.struct_size = 3;
  EXPECT_EQ(fdk_read_preview_slices(ctx, &s, nullptr), FDK_ERROR_STRUCT_SIZE);
  EXPECT_EQ(fdk_read_preview_slices(ctx, nullptr, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_read_preview(ctx, vol.data(), vol.size() * 4 - 1, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_read_preview(ctx, nullptr, vol.size() * 4, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  fdk_preview_info bad = preview_info();
  bad.struct_size = 1;
  EXPECT_EQ(fdk_get_preview_info(ctx, &bad), FDK_ERROR_STRUCT_SIZE);
  EXPECT_EQ(fdk_get_preview_info(ctx, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  std::vector<float> again(vol.size());
  ASSERT_EQ(fdk_read_preview(ctx, again.data(), again.size() * 4, nullptr), FDK_OK);
  EXPECT_EQ(again, vol);
  fdk_destroy(ctx);
}

TEST(Preview, RefusedWhereItCannotBe) {
  SmallScan scan(16, 8, 24);
  fdk_context* ctx = nullptr;
  // Off: the reads say so.
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  fdk_preview_info info = preview_info();
  EXPECT_EQ(fdk_get_preview_info(ctx, &info), FDK_ERROR_INVALID_STATE);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("preview = 0"), std::string::npos) << fdk_last_error(ctx);
  float one = 0;
  EXPECT_EQ(fdk_read_preview(ctx, &one, 4, nullptr), FDK_ERROR_INVALID_STATE);
  fdk_destroy(ctx);
  // Bad settings: named.
  scan.config.preview = 2;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("preview"), std::string::npos);
  scan.config.preview = 1;
  for (int a = 0; a < 3; ++a) scan.config.preview_volume.spacing[a] = 1;
  scan.config.preview_volume.size[0] = 8;  // the others 0
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("preview_volume y size"), std::string::npos)
      << fdk_last_create_error();
  scan.config.preview_volume.size[1] = scan.config.preview_volume.size[2] = 8;
  scan.config.preview_volume.spacing[2] = std::nan("");
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("preview_volume z spacing"), std::string::npos)
      << fdk_last_create_error();
  // A preview larger than the host budget allows: the plan says so.
  scan.config.preview_volume = fdk_volume{};
  scan.config.preview_volume.size[0] = scan.config.preview_volume.size[1] = scan.config.preview_volume.size[2] = 512;
  for (int a = 0; a < 3; ++a) scan.config.preview_volume.spacing[a] = 0.1;
  scan.config.host_memory_budget = 64ull << 20;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_BUDGET);
  EXPECT_NE(std::string(fdk_last_create_error()).find("preview"), std::string::npos) << fdk_last_create_error();
}

// A config of the 0.7 size (without the preview fields) still works, with
// no preview.
TEST(Preview, OlderConfigHasNoPreview) {
  SmallScan scan(16, 8, 24);
  fdk_config c = scan.config;
  c.struct_size = offsetof(fdk_config, preview);
  c.preview = 1;  // beyond the 0.7 struct: not read
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_preview_info info = preview_info();
  EXPECT_EQ(fdk_get_preview_info(ctx, &info), FDK_ERROR_INVALID_STATE);
  fdk_destroy(ctx);
}

// Reads race the pushes from another thread: every read is whole and
// consistent (views never decrease); clean under TSan.
TEST(Preview, ReadsRacingPushes) {
  SmallScan scan(32, 48, 48);
  scan.config.preview = 1;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_preview_info info = preview_info();
  ASSERT_EQ(fdk_get_preview_info(ctx, &info), FDK_OK);
  const size_t n = voxels(info.volume);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, failures{0};
  std::thread reader([&] {
    std::vector<float> vol(n);
    std::vector<float> xs(static_cast<size_t>(info.volume.size[2]) * info.volume.size[1]);
    int last = 0;
    while (!done.load()) {
      fdk_preview_info i = preview_info();
      if (fdk_read_preview(ctx, vol.data(), n * 4, &i) != FDK_OK || i.views < last) ++failures;
      last = i.views;
      fdk_preview_slices s{};
      s.struct_size = sizeof s;
      s.at[0] = s.at[1] = s.at[2] = -1;
      s.x_slice = xs.data();
      s.x_slice_bytes = xs.size() * 4;
      if (fdk_read_preview_slices(ctx, &s, &i) != FDK_OK || i.views < last) ++failures;
      ++reads;
    }
  });
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  while (reads.load() < 3) std::this_thread::yield();
  done = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(fdk_get_preview_info(ctx, &info), FDK_OK);
  EXPECT_EQ(info.views, scan.views());
  EXPECT_EQ(info.flags, static_cast<uint32_t>(FDK_PREVIEW_COMPLETE));
  fdk_destroy(ctx);
}

}  // namespace
