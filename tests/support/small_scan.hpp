// A small scan shared by the C-ABI tests: a sphere-and-ellipsoid phantom's
// exact projections, so misuse tests run on real data in milliseconds.
#pragma once
#include <fdk/fdk.h>
#include <fdk/phantom.hpp>

#include <cmath>
#include <vector>

namespace fdk_test {

struct SmallScan {
  fdk_config config{};
  std::vector<std::vector<float>> projections;  // one per view, rows x cols

  explicit SmallScan(int n = 32, int views = 24, int det = 48) {
    fdk_config_init(&config);
    for (int a = 0; a < 3; ++a) {
      config.volume.size[a] = n;
      config.volume.spacing[a] = 64.0 / n;
      config.volume.origin[a] = -32.0 + 0.5 * 64.0 / n;
    }
    config.detector.size[0] = det;
    config.detector.size[1] = det;
    for (int a = 0; a < 2; ++a) {
      config.detector.spacing[a] = 1.5 * 80.0 / det;
      config.detector.origin[a] = -0.5 * (det - 1) * config.detector.spacing[a];
    }
    config.scan.num_views = views;
    config.scan.uniform.sid = 500;
    config.scan.uniform.sdd = 750;
    config.backend = FDK_BACKEND_CPU;
    config.num_threads = 2;
    projections.assign(static_cast<size_t>(views), std::vector<float>(static_cast<size_t>(det) * det));
    reproject();
  }

  // Recomputes the projections after the geometry in `config` changed.
  void reproject() {
    const auto phantom = fdk::phantom::shepp_logan_3d(25.0);
    for (int v = 0; v < views(); ++v) fdk::phantom::project(phantom, config, v, projections[static_cast<size_t>(v)].data());
  }

  int views() const { return config.scan.num_views; }
  size_t pitch() const { return sizeof(float) * static_cast<size_t>(config.detector.size[0]); }
  const float* pixels(int v) const { return projections[static_cast<size_t>(v)].data(); }
};

// Reads every slab into one volume (x fastest, then z, then y).
inline fdk_status read_volume(fdk_context* ctx, std::vector<float>& volume) {
  int32_t count = 0;
  fdk_status s = fdk_slab_count(ctx, &count);
  if (s != FDK_OK) return s;
  volume.clear();
  for (int32_t i = 0; i < count; ++i) {
    fdk_slab_info info{};
    info.struct_size = sizeof(info);
    if ((s = fdk_get_slab_info(ctx, i, &info)) != FDK_OK) return s;
    std::vector<float> slab(info.byte_size / sizeof(float));
    if ((s = fdk_read_slab(ctx, i, slab.data(), info.byte_size)) != FDK_OK) return s;
    volume.insert(volume.end(), slab.begin(), slab.end());
  }
  return FDK_OK;
}

inline double relative_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

}  // namespace fdk_test
