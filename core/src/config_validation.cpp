#include "config_validation.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/preview.hpp"
#include "fdk/core/system_memory.hpp"
#include "fdk/core/value_ranges.hpp"

namespace fdk {
namespace {

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
  // Extents up to 65536 keep the voxel count (2^48) and every byte count
  // derived from it far inside 64 bits; checked again below where they
  // combine, for a size_t of 32 bits.
  static const char* axes[3] = {"x", "y", "z"};
  for (int a = 0; a < 3; ++a) {
    const std::string name = std::string("volume ") + axes[a];
    if (c.volume.size[a] < 1 || c.volume.size[a] > ranges::kMaxExtent)
      fail(FDK_ERROR_INVALID_ARGUMENT,
           name + " size is " + std::to_string(c.volume.size[a]) + ": it must lie within [1, 65536]");
    require_spacing(c.volume.spacing[a], name + " spacing");
    require_coordinate(c.volume.origin[a], name + " origin");
  }
  static const char* det_axes[2] = {"u (columns)", "v (rows)"};
  for (int a = 0; a < 2; ++a) {
    const std::string name = std::string("detector ") + det_axes[a];
    if (c.detector.size[a] < 2 || c.detector.size[a] > ranges::kMaxExtent)
      fail(FDK_ERROR_INVALID_ARGUMENT,
           name + " size is " + std::to_string(c.detector.size[a]) + ": it must lie within [2, 65536]");
    require_spacing(c.detector.spacing[a], name + " spacing");
    require_coordinate(c.detector.origin[a], name + " origin");
  }
  // The largest buffers, in bytes, must be addressable: a plane of the
  // volume and a view as filtered (at most twice the columns, half fan).
  const size_t plane = checked_multiply<size_t>(static_cast<size_t>(c.volume.size[0]),
                                                static_cast<size_t>(c.volume.size[2]), "voxels of a volume plane");
  checked_multiply<size_t>(plane, 4 * static_cast<size_t>(c.volume.size[1]), "bytes of the volume");
  checked_multiply<size_t>(8 * static_cast<size_t>(c.detector.size[0]), static_cast<size_t>(c.detector.size[1]),
                           "bytes of a filtered view");
  if (c.window < FDK_WINDOW_RAM_LAK || c.window > FDK_WINDOW_HANN)
    fail(FDK_ERROR_INVALID_ARGUMENT, "window is not a fdk_window");
  if (!(c.cutoff > 0 && c.cutoff <= 1))
    fail(FDK_ERROR_INVALID_ARGUMENT, "cutoff is " + number_text(c.cutoff) + ": it must lie within (0, 1]");
  require_within(c.truncation_padding, 0, 1, "truncation_padding", "[0, 1]");
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
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "num_threads is " + std::to_string(c.num_threads) + ": it must lie within [0, 1024]");
  if (c.slab_thickness < 0)
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "slab_thickness is " + std::to_string(c.slab_thickness) + ": it must be >= 0 (0 = chosen from the budgets)");
  if (c.outside_fov != FDK_OUTSIDE_FOV_BACKPROJECT && c.outside_fov != FDK_OUTSIDE_FOV_ZERO)
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "outside_fov must be FDK_OUTSIDE_FOV_BACKPROJECT (0) or FDK_OUTSIDE_FOV_ZERO (1)");
  if (c.store_policy != FDK_STORE_REDUCE_PRECISION && c.store_policy != FDK_STORE_STRICT)
    fail(FDK_ERROR_INVALID_ARGUMENT, "store_policy is " + std::to_string(c.store_policy) +
                                         ": it must be FDK_STORE_REDUCE_PRECISION (0) or FDK_STORE_STRICT (1)");
  require_within(c.hann_cutoff_v, 0, 1, "hann_cutoff_v", "[0, 1] (0 = off)");
  if (c.estimate_geometry != 0 && c.estimate_geometry != 1)
    fail(FDK_ERROR_INVALID_ARGUMENT,
         "estimate_geometry is " + std::to_string(c.estimate_geometry) + ": it must be 0 (off) or 1");

  if (c.preview != 0 && c.preview != 1)
    fail(FDK_ERROR_INVALID_ARGUMENT, "preview is " + std::to_string(c.preview) + ": it must be 0 (off) or 1");
  if (c.preview) preview_grid(c);  // its checks

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
