// The live preview on the GPU (fdk_config.preview): accumulated where the
// views are filtered, resident and streamed, on one worker and on two (one
// GPU listed twice), against a reconstruction of the preview's own grid.
// Every test skips, saying "skipped: no GPU", where no CUDA device is usable.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "finished_scan.hpp"
#include "gpu_skip.hpp"
#include "small_scan.hpp"

using fdk_test::SmallScan;

namespace {

struct Preview {
  std::vector<float> volume;
  fdk_preview_info info{};
};

// The scan pushed with the preview on; the preview read after fdk_finish.
Preview preview_of(fdk_config config, const SmallScan& scan) {
  Preview p;
  fdk_preview_info_init(&p.info);
  config.preview = 1;
  fdk_context* ctx = fdk_test::finished_scan(config, scan);
  if (!ctx) return p;
  EXPECT_EQ(fdk_get_preview_info(ctx, &p.info), FDK_OK);
  const fdk_volume& g = p.info.volume;
  p.volume.resize(static_cast<size_t>(g.size[0]) * g.size[1] * g.size[2]);
  EXPECT_EQ(fdk_read_preview(ctx, p.volume.data(), p.volume.size() * 4, &p.info), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return p;
}

std::vector<float> direct(fdk_config config, const SmallScan& scan, const fdk_volume& grid) {
  config.preview = 0;
  config.volume = grid;
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_OK) << fdk_last_create_error();
  std::vector<float> vol;
  if (!ctx) return vol;
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_test::read_volume(ctx, vol), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return vol;
}

// The preview after every view against a reconstruction of its grid done
// directly: the CPU's, whose arithmetic (float interpolation, the sums in
// double where they matter) the preview's kernel follows, to 1e-5; and the
// GPU's, whose texture unit interpolates with 8-bit weights, to its own
// distance from the CPU (1e-3, as CudaBackend.*).
void expect_equal_to_direct(fdk_config config, const SmallScan& scan, const char* what) {
  const Preview gpu = preview_of(config, scan);
  EXPECT_EQ(gpu.info.on_gpu, 1) << what;
  EXPECT_EQ(gpu.info.flags, static_cast<uint32_t>(FDK_PREVIEW_COMPLETE)) << what;
  EXPECT_EQ(gpu.info.views, scan.views()) << what;
  fdk_config cpu = config;
  cpu.backend = FDK_BACKEND_CPU;
  cpu.gpu_memory_budget = 0;
  cpu.num_devices = 0;
  const std::vector<float> on_cpu = direct(cpu, scan, gpu.info.volume);
  const std::vector<float> on_gpu = direct(config, scan, gpu.info.volume);
  ASSERT_EQ(on_cpu.size(), gpu.volume.size());
  ASSERT_EQ(on_gpu.size(), gpu.volume.size());
  const double to_cpu = fdk_test::relative_l2(gpu.volume, on_cpu);
  const double to_gpu = fdk_test::relative_l2(gpu.volume, on_gpu);
  std::printf("[gpu] preview %s (%dx%dx%d): relative L2 to the CPU's reconstruction of its grid %.3g, "
              "to the GPU's %.3g\n",
              what, gpu.info.volume.size[0], gpu.info.volume.size[1], gpu.info.volume.size[2], to_cpu, to_gpu);
  EXPECT_LE(to_cpu, 1e-5) << what;
  EXPECT_LE(to_gpu, 1e-3) << what;
}

SmallScan medium() {
  SmallScan scan(64, 120, 96);
  scan.config.backend = FDK_BACKEND_CUDA;
  return scan;
}

TEST(GpuPreview, ResidentEqualsAReconstructionOfItsGrid) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan = medium();
  expect_equal_to_direct(scan.config, scan, "resident");
}

TEST(GpuPreview, StreamedEqualsAReconstructionOfItsGrid) {
  SKIP_WITHOUT_GPU();
  SmallScan scan = medium();
  scan.config.gpu_memory_budget = 4u << 20;  // slabs streamed from the store
  expect_equal_to_direct(scan.config, scan, "streamed");
}

TEST(GpuPreview, TwoWorkersResidentAndStreamed) {
  SKIP_WITHOUT_GPU();
  SmallScan scan = medium();
  scan.config.num_devices = 2;  // one GPU listed twice: two workers, views copied between them
  scan.config.devices[0] = scan.config.devices[1] = 0;
  expect_equal_to_direct(scan.config, scan, "two workers, resident");
  scan.config.gpu_memory_budget = 4u << 20;
  expect_equal_to_direct(scan.config, scan, "two workers, streamed");
}

TEST(GpuPreview, ChosenGridAndTiltedViews) {
  SKIP_WITHOUT_GPU();
  SmallScan scan = medium();
  scan.config.scan.uniform.in_plane_angle_deg = 0.7;  // the generic kernel in the volume too
  scan.reproject();
  scan.config.preview_volume.size[0] = 40;
  scan.config.preview_volume.size[1] = 24;
  scan.config.preview_volume.size[2] = 36;
  for (int a = 0; a < 3; ++a) {
    scan.config.preview_volume.spacing[a] = 1.6;
    scan.config.preview_volume.origin[a] = -28 + a;
  }
  expect_equal_to_direct(scan.config, scan, "tilted, chosen grid");
}

TEST(GpuPreview, ReadsRacingPushes) {
  SKIP_WITHOUT_GPU();
  SmallScan scan = medium();
  scan.config.preview = 1;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_preview_info info;
  fdk_preview_info_init(&info);
  ASSERT_EQ(fdk_get_preview_info(ctx, &info), FDK_OK);
  const size_t n = static_cast<size_t>(info.volume.size[0]) * info.volume.size[1] * info.volume.size[2];
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, failures{0};
  std::thread reader([&] {
    std::vector<float> vol(n);
    int last = 0;
    while (!done.load()) {
      fdk_preview_info i;
      fdk_preview_info_init(&i);
      if (fdk_read_preview(ctx, vol.data(), n * 4, &i) != FDK_OK || i.views < last) ++failures;
      for (float x : vol)
        if (!std::isfinite(x)) ++failures;
      last = i.views;
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
  std::printf("[gpu] preview reads racing %d pushes: %d reads\n", scan.views(), reads.load());
  fdk_destroy(ctx);
}

}  // namespace
