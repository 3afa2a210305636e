// What the several-GPU tests share (test_multi_gpu.cpp, test_scan_pace.cpp,
// test_resident_progress.cpp):
// the GPUs there are, the CUDA backend on chosen devices, and a scan
// reconstructed into its volume, slab count and device stats. They skip
// with gpu_skip.hpp's SKIP_WITHOUT_GPU.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "finished_scan.hpp"
#include "gpu_skip.hpp"
#include "small_scan.hpp"

namespace fdk_test::multi_gpu {

// The GPUs the library sees here (fdk_get_device_stats), 0 where none: the
// tests run on the real GPUs where there are several.
inline int gpu_count() {
  static const int count = [] {
    SmallScan scan(8, 4, 8);
    scan.config.backend = FDK_BACKEND_CUDA;
    fdk_context* ctx = nullptr;
    if (fdk_create(&scan.config, &ctx) != FDK_OK) return 0;
    fdk_device_stats stats{};
    stats.struct_size = sizeof(stats);
    const int n = fdk_get_device_stats(ctx, &stats) == FDK_OK ? stats.num_devices : 0;
    fdk_destroy(ctx);
    return n;
  }();
  return count;
}

// The CUDA backend on the devices `ordinals`, each within `budget` bytes
// (0: the default).
inline fdk_config on_devices(fdk_config c, const std::vector<int>& ordinals, uint64_t budget) {
  c.backend = FDK_BACKEND_CUDA;
  c.num_devices = static_cast<int32_t>(ordinals.size());
  for (size_t i = 0; i < ordinals.size(); ++i) c.devices[i] = ordinals[i];
  c.gpu_memory_budget = budget;
  return c;
}

struct Outcome {
  std::vector<float> volume;
  fdk_device_stats stats{};
  int slabs = 0;
};

// The volume, slab count and device stats of a finished context, which it
// destroys.
inline Outcome outcome_of(fdk_context* ctx) {
  Outcome out;
  EXPECT_EQ(fdk_test::read_volume(ctx, out.volume), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_slab_count(ctx, &out.slabs), FDK_OK);
  out.stats.struct_size = sizeof(out.stats);
  EXPECT_EQ(fdk_get_device_stats(ctx, &out.stats), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  return out;
}

inline Outcome reconstruct(const fdk_config& config, const SmallScan& scan) {
  fdk_context* ctx = finished_scan(config, scan);
  return ctx ? outcome_of(ctx) : Outcome{};
}

// "{0,1}": the devices a run used, for messages.
inline std::string describe(const std::vector<int>& ordinals) {
  std::string s;
  for (int o : ordinals) s += (s.empty() ? "" : ",") + std::to_string(o);
  return "{" + s + "}";
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return !a.empty() && a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace fdk_test::multi_gpu
