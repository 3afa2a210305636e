// fdk-agreement — the fdk side of the agreement matrix with RTK's rtkfdk
// (scripts/rtk-agreement.sh drives it):
//
//   fdk-agreement list
//   fdk-agreement rtk-args CASE...   rtkfdk's filter options of each case, a line each
//   fdk-agreement simulate DIR [CASE...]
//       DIR/CASE/geometry.xml     the views, RTK XML (with each 3x4 matrix)
//       DIR/CASE/projections.mha  exact line integrals, one stack (RTK reads it)
//       DIR/CASE/phantom.raw      the phantom at the voxel centres
//   fdk-agreement reconstruct DIR cpu|cuda [CASE...]
//       DIR/CASE/fdk-BACKEND.raw       every voxel backprojected (the default)
//       DIR/CASE/fdk-BACKEND-zero.raw  outside the field of view zeroed
//
// The geometry is read back from geometry.xml (the adapters' RTK reader),
// so fdk and rtkfdk see the same file. Volumes are raw float32 in fdk's
// layout (x fastest, then z, then y), 128^3 voxels of 1.6 mm centred on the
// isocentre.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cases.hpp"
#include "fdk/adapters/files.hpp"
#include "fdk/adapters/geometry_io.hpp"
#include "fdk/fdk.h"
#include "fdk/phantom.hpp"

namespace ad = fdk::adapters;
using agreement::Case;

namespace {

std::vector<Case> selected(int argc, char** argv, int first) {
  std::vector<Case> all = agreement::all_cases(), out;
  if (argc <= first) return all;
  for (int a = first; a < argc; ++a) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const Case& c) { return c.name == argv[a]; });
    if (it == all.end()) throw std::runtime_error(std::string("no case '") + argv[a] + "' (fdk-agreement list)");
    out.push_back(*it);
  }
  return out;
}

void write_file(const std::string& path, const void* data, size_t bytes, const std::string& header = "") {
  std::ofstream f(path, std::ios::binary);
  f << header;
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!f) throw std::runtime_error("cannot write " + path);
}

std::vector<float> read_raw(const std::string& path, size_t floats, size_t skip = 0) {
  std::ifstream f(path, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(skip));
  std::vector<float> v(floats);
  f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(floats * sizeof(float)));
  if (!f) throw std::runtime_error("cannot read " + std::to_string(floats) + " floats from " + path);
  return v;
}

size_t pixels(const fdk_detector& d) { return static_cast<size_t>(d.size[0]) * static_cast<size_t>(d.size[1]); }

std::string stack_header(const fdk_detector& d, size_t views) {
  std::ostringstream h;
  h.precision(17);
  h << "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
    << "CompressedData = False\nTransformMatrix = 1 0 0 0 1 0 0 0 1\n"
    << "Offset = " << d.origin[0] << " " << d.origin[1] << " 0\nCenterOfRotation = 0 0 0\n"
    << "ElementSpacing = " << d.spacing[0] << " " << d.spacing[1] << " 1\n"
    << "DimSize = " << d.size[0] << " " << d.size[1] << " " << views << "\n"
    << "ElementType = MET_FLOAT\nElementDataFile = LOCAL\n";
  return h.str();
}

template <class F>
void in_parallel(int n, F&& f) {
  const int threads = std::max(1, std::min<int>(n, static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = t; i < n; i += threads) f(i);
    });
  for (auto& th : pool) th.join();
}

void simulate(const std::string& dir, const Case& c) {
  const std::string at = ad::join_path(dir, c.name);
  ad::make_directories(at);
  ad::write_rtk_geometry(ad::join_path(at, "geometry.xml"), c.views);
  const auto phantom = fdk::phantom::shepp_logan_3d(agreement::kPhantomScale);
  const size_t per = pixels(c.detector);
  std::vector<float> stack(per * c.views.size());
  in_parallel(static_cast<int>(c.views.size()), [&](int v) {
    fdk::phantom::project_view(phantom, c.views[static_cast<size_t>(v)], c.detector, stack.data() + per * v);
  });
  write_file(ad::join_path(at, "projections.mha"), stack.data(), stack.size() * sizeof(float),
             stack_header(c.detector, c.views.size()));
  const fdk_volume vol = agreement::case_volume();
  const int n = agreement::kN;
  std::vector<float> truth(static_cast<size_t>(n) * n * n);
  in_parallel(n, [&](int j) {
    for (int k = 0; k < n; ++k)
      for (int i = 0; i < n; ++i)
        truth[(static_cast<size_t>(j) * n + k) * n + i] = static_cast<float>(fdk::phantom::density_at(
            phantom, vol.origin[0] + i * vol.spacing[0], vol.origin[1] + j * vol.spacing[1],
            vol.origin[2] + k * vol.spacing[2]));
  });
  write_file(ad::join_path(at, "phantom.raw"), truth.data(), truth.size() * sizeof(float));
  std::printf("simulated %-20s %zu views\n", c.name.c_str(), c.views.size());
}

void check(fdk_status s, fdk_context* ctx, const char* what) {
  if (s != FDK_OK)
    throw std::runtime_error(std::string(what) + ": " + fdk_status_string(s) + ": " +
                             (ctx ? fdk_last_error(ctx) : fdk_last_create_error()));
}

std::vector<float> reconstruct_once(const Case& c, const std::vector<fdk_view>& views, const std::vector<float>& stack,
                                    fdk_backend backend, int outside, fdk_plan_info* plan) {
  fdk_config cfg;
  fdk_config_init(&cfg);
  cfg.volume = agreement::case_volume();
  cfg.detector = c.detector;
  cfg.backend = backend;
  cfg.outside_fov = outside;
  if (c.hann > 0) {
    cfg.window = FDK_WINDOW_HANN;
    cfg.cutoff = c.hann;
  }
  cfg.hann_cutoff_v = c.hann_y;
  cfg.offset_detector = c.offset_detector;
  std::vector<double> matrices;
  cfg.scan.num_views = static_cast<int32_t>(views.size());
  if (c.matrices) {
    for (const fdk_view& v : views) {
      const auto m = ad::rtk_matrix(v);
      matrices.insert(matrices.end(), m.begin(), m.end());
    }
    cfg.scan.kind = FDK_SCAN_MATRICES;
    cfg.scan.matrices = matrices.data();
  } else {
    cfg.scan.kind = FDK_SCAN_VIEWS;
    cfg.scan.views = views.data();
  }
  fdk_context* ctx = nullptr;
  check(fdk_create(&cfg, &ctx), nullptr, "fdk_create");
  struct Guard {
    fdk_context* ctx;
    ~Guard() { fdk_destroy(ctx); }
  } guard{ctx};
  plan->struct_size = sizeof *plan;
  check(fdk_get_plan_info(ctx, plan), ctx, "fdk_get_plan_info");
  const size_t per = pixels(c.detector);
  for (size_t v = 0; v < views.size(); ++v)
    check(fdk_push_projection(ctx, static_cast<int32_t>(v), stack.data() + per * v,
                              sizeof(float) * static_cast<size_t>(c.detector.size[0]), nullptr),
          ctx, "fdk_push_projection");
  check(fdk_finish(ctx), ctx, "fdk_finish");
  const size_t plane = static_cast<size_t>(agreement::kN) * agreement::kN;
  std::vector<float> volume(plane * agreement::kN);
  int32_t slabs = 0;
  check(fdk_slab_count(ctx, &slabs), ctx, "fdk_slab_count");
  for (int32_t s = 0; s < slabs; ++s) {
    fdk_slab_info info{};
    info.struct_size = sizeof info;
    check(fdk_get_slab_info(ctx, s, &info), ctx, "fdk_get_slab_info");
    check(fdk_read_slab(ctx, s, volume.data() + plane * static_cast<size_t>(info.y_begin),
                        static_cast<size_t>(info.byte_size)),
          ctx, "fdk_read_slab");
  }
  return volume;
}

void reconstruct(const std::string& dir, const Case& c, const std::string& backend_name) {
  const fdk_backend backend = backend_name == "cuda" ? FDK_BACKEND_CUDA : FDK_BACKEND_CPU;
  const std::string at = ad::join_path(dir, c.name);
  const std::vector<fdk_view> views = ad::read_rtk_geometry(ad::join_path(at, "geometry.xml"));
  const std::string stack_path = ad::join_path(at, "projections.mha");
  const size_t per = pixels(c.detector), floats = per * views.size();
  std::ifstream probe(stack_path, std::ios::binary | std::ios::ate);
  const size_t bytes = static_cast<size_t>(probe.tellg());
  const std::vector<float> stack = read_raw(stack_path, floats, bytes - floats * sizeof(float));
  fdk_plan_info plan{};
  for (int outside : {FDK_OUTSIDE_FOV_BACKPROJECT, FDK_OUTSIDE_FOV_ZERO}) {
    const std::vector<float> vol = reconstruct_once(c, views, stack, backend, outside, &plan);
    const std::string name = "fdk-" + backend_name + (outside == FDK_OUTSIDE_FOV_ZERO ? "-zero" : "") + ".raw";
    write_file(ad::join_path(at, name), vol.data(), vol.size() * sizeof(float));
  }
  std::printf("reconstructed %-20s %s: short scan %d, half fan %d (edge rays %.1f and %.1f mm from the axis), "
              "%llu voxels outside the field of view\n",
              c.name.c_str(), backend_name.c_str(), plan.short_scan, plan.offset_detector, plan.half_fan_inferior,
              plan.half_fan_superior, static_cast<unsigned long long>(plan.voxels_outside_fov));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string verb = argc > 1 ? argv[1] : "";
    if (verb == "list") {
      for (const Case& c : agreement::all_cases()) std::printf("%-20s %s\n", c.name.c_str(), c.what.c_str());
      return 0;
    }
    if (verb == "rtk-args" && argc > 2) {
      // rtkfdk's options for the case's filter, beyond the geometry's.
      for (const Case& c : selected(argc, argv, 2)) {
        if (c.hann > 0) std::printf("--hann %g ", c.hann);
        if (c.hann_y > 0) std::printf("--hannY %g ", c.hann_y);
        std::printf("\n");
      }
      return 0;
    }
    if (verb == "simulate" && argc > 2) {
      for (const Case& c : selected(argc, argv, 3)) simulate(argv[2], c);
      return 0;
    }
    if (verb == "reconstruct" && argc > 3 && (std::string(argv[3]) == "cpu" || std::string(argv[3]) == "cuda")) {
      for (const Case& c : selected(argc, argv, 4)) reconstruct(argv[2], c, argv[3]);
      return 0;
    }
    std::fprintf(stderr, "usage: fdk-agreement list | simulate DIR [CASE...] | reconstruct DIR cpu|cuda [CASE...]\n");
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-agreement: %s\n", e.what());
    return 1;
  }
}
