#include "config_validation.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "fdk/core/error.hpp"
#include "fdk/core/system_memory.hpp"

namespace fdk {
namespace {

constexpr int kMaxExtent = 1 << 16;  // per axis; keeps every index product in 64 bits

void check_finite(double v, const std::string& what) {
  if (!std::isfinite(v)) fail(FDK_ERROR_INVALID_ARGUMENT, what + " is not finite");
}

void check_positive(double v, const std::string& what) {
  check_finite(v, what);
  if (!(v > 0)) fail(FDK_ERROR_INVALID_ARGUMENT, what + " must be > 0");
}

void check_switch(int32_t v, const char* what) {
  if (v != FDK_AUTO && v != FDK_ON && v != FDK_OFF)
    fail(FDK_ERROR_INVALID_ARGUMENT, std::string(what) + " must be FDK_AUTO, FDK_ON or FDK_OFF");
}

}  // namespace

Settings validate_config(const fdk_config& c) {
  if (c.struct_size != sizeof(fdk_config))
    fail(FDK_ERROR_STRUCT_SIZE, "fdk_config.struct_size is " + std::to_string(c.struct_size) +
                                    ", this library knows " + std::to_string(sizeof(fdk_config)) +
                                    ": initialise it with fdk_config_init");
  if (c.scan.struct_size != sizeof(fdk_scan))
    fail(FDK_ERROR_STRUCT_SIZE, "fdk_config.scan.struct_size is " + std::to_string(c.scan.struct_size) +
                                    ": initialise it with fdk_scan_init (fdk_config_init does)");
  static const char* axes[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const std::string name = std::string("volume ") + axes[a];
    if (c.volume.size[a] < 1 || c.volume.size[a] > kMaxExtent)
      fail(FDK_ERROR_INVALID_ARGUMENT, name + " size must be in [1, 65536]");
    check_positive(c.volume.spacing[a], name + " spacing");
    check_finite(c.volume.origin[a], name + " origin");
  }
  static const char* det_axes[2] = {"u (columns)", "v (rows)"};
  for (int a = 0; a < 2; ++a) {
    const std::string name = std::string("detector ") + det_axes[a];
    if (c.detector.size[a] < 2 || c.detector.size[a] > kMaxExtent)
      fail(FDK_ERROR_INVALID_ARGUMENT, name + " size must be in [2, 65536]");
    check_positive(c.detector.spacing[a], name + " spacing");
    check_finite(c.detector.origin[a], name + " origin");
  }
  if (c.window < FDK_WINDOW_RAM_LAK || c.window > FDK_WINDOW_HANN)
    fail(FDK_ERROR_INVALID_ARGUMENT, "window is not a fdk_window");
  check_finite(c.cutoff, "cutoff");
  if (!(c.cutoff > 0 && c.cutoff <= 1)) fail(FDK_ERROR_INVALID_ARGUMENT, "cutoff must be in (0, 1]");
  check_finite(c.truncation_padding, "truncation_padding");
  if (!(c.truncation_padding >= 0 && c.truncation_padding <= 1))
    fail(FDK_ERROR_INVALID_ARGUMENT, "truncation_padding must be in [0, 1]");
  check_switch(c.short_scan, "short_scan");
  check_switch(c.offset_detector, "offset_detector");
  if (c.backend < FDK_BACKEND_AUTO || c.backend > FDK_BACKEND_CUDA)
    fail(FDK_ERROR_INVALID_ARGUMENT, "backend is not a fdk_backend");
  if (c.num_devices < 0 || c.num_devices > FDK_MAX_DEVICES)
    fail(FDK_ERROR_INVALID_ARGUMENT, "num_devices must be in [0, FDK_MAX_DEVICES]");
  for (int d = 0; d < c.num_devices; ++d)
    if (c.devices[d] < 0) fail(FDK_ERROR_INVALID_ARGUMENT, "devices[] entries must be >= 0");
  if (c.precision != FDK_PRECISION_FLOAT32 && c.precision != FDK_PRECISION_FLOAT16)
    fail(FDK_ERROR_INVALID_ARGUMENT, "precision is not a fdk_precision");
  if (c.num_threads < 0 || c.num_threads > 1024)
    fail(FDK_ERROR_INVALID_ARGUMENT, "num_threads must be in [0, 1024]");
  if (c.slab_thickness < 0) fail(FDK_ERROR_INVALID_ARGUMENT, "slab_thickness must be >= 0");
  if (c.outside_fov != FDK_OUTSIDE_FOV_BACKPROJECT && c.outside_fov != FDK_OUTSIDE_FOV_ZERO)
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "outside_fov must be FDK_OUTSIDE_FOV_BACKPROJECT (0) or FDK_OUTSIDE_FOV_ZERO (1)");

  Settings s;
  s.config = c;
  s.config.scan.views = nullptr;
  s.config.scan.matrices = nullptr;
  s.num_threads = c.num_threads > 0 ? c.num_threads
                                    : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (c.host_memory_budget > 0) {
    s.host_budget = c.host_memory_budget;
  } else {
    const uint64_t physical = physical_memory_bytes();
    s.host_budget = physical > 0 ? physical / 2 : (4ull << 30);
  }
  return s;
}

}  // namespace fdk
