// The standard benchmark cases of design/BENCHMARKS.md, for fdk-bench and
// fdk-bench-mpi alike.
#pragma once
#include <fdk/fdk.h>

namespace fdk_bench {

struct Case {
  const char* name;
  int size, views, det_u, det_v;
};

inline constexpr Case kCases[] = {
    {"a", 512, 360, 512, 512},
    {"b", 1024, 1200, 1024, 1012},
    {"c", 2048, 1200, 2048, 2048},
    {"d", 4096, 2400, 4096, 4096},
    {"cpu", 256, 360, 256, 256},
};

// BENCHMARKS.md's geometry for a volume of size^3 and views of det_u x
// det_v: a full circle at SID 1000 mm, SDD 1500 mm, a 256 mm cube centred
// on the isocentre, square pixels of 256 * 1.5 / det_u mm, the detector
// centred. The rest of the configuration keeps fdk_config_init's defaults.
inline fdk_config case_geometry(int size, int views, int det_u, int det_v) {
  fdk_config config;
  fdk_config_init(&config);
  const double extent = 256.0, voxel = extent / size;
  for (int axis = 0; axis < 3; ++axis) {
    config.volume.size[axis] = size;
    config.volume.spacing[axis] = voxel;
    config.volume.origin[axis] = -0.5 * extent + 0.5 * voxel;
  }
  const double pixel = 256.0 * 1.5 / det_u;
  config.detector.size[0] = det_u;
  config.detector.size[1] = det_v;
  config.detector.spacing[0] = pixel;
  config.detector.spacing[1] = pixel;
  config.detector.origin[0] = -0.5 * (det_u - 1) * pixel;
  config.detector.origin[1] = -0.5 * (det_v - 1) * pixel;
  config.scan.kind = FDK_SCAN_UNIFORM;
  config.scan.num_views = views;
  config.scan.first_angle_deg = 0.0;
  config.scan.arc_deg = 360.0;
  config.scan.uniform.sid = 1000.0;
  config.scan.uniform.sdd = 1500.0;
  return config;
}

}  // namespace fdk_bench
