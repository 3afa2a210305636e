// fdk-sample — the sample job: simulate a cone-beam scan of the 3D
// Shepp-Logan head phantom, reconstruct it through the C API, and write
//   DIR/volume.mha    the volume (MetaImage, one file, float32)
//   DIR/preview.png   the three central orthogonal slices side by side
//                     (preview.pgm when built without libpng)
// and report the mean of a central brain region against the phantom's 1.02.
//
// Geometry (as fdk-bench's): circular full scan, SID 1000 mm, SDD 1500 mm,
// a 256 mm cube centred on the isocentre, square detector pixels of
// 256 * 1.5 / U mm. The phantom's skull spans 0.92 * 120 mm = 110 mm from the
// centre, inside the field of view.
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>
#include <fdk/phantom.hpp>

#include "status_text.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <sys/types.h>

#ifdef FDK_SAMPLE_WITH_PNG
#include <png.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Options {
  std::string out_dir = "out/sample";
  int size = 192;
  int views = 240;
  int backend = FDK_BACKEND_AUTO;
  int slab_thickness = 0;  // 0: the library plans
  double window_lo = 0, window_hi = 0;  // 0, 0: from the phantom
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "fdk-sample: %s (see --help)\n", message.c_str());
  std::exit(2);
}

void print_help() {
  std::printf(
      "usage: fdk-sample [--out DIR] [--size N] [--views K] [--backend auto|cpu|cuda]\n"
      "                  [--window LO HI] [--slab-thickness PLANES]\n"
      "Simulates a cone-beam scan of the 3D Shepp-Logan phantom (K views of a\n"
      "U x U detector, U = 4N/3), reconstructs an N^3 volume of a 256 mm cube and\n"
      "writes DIR/volume.mha and DIR/preview.png. Defaults: --out out/sample\n"
      "--size 192 --views 240 --backend auto; the preview window defaults to the\n"
      "phantom's brain value +- 0.04; --slab-thickness forces thinner slabs (the same\n"
      "volume up to float rounding).\n");
}

int parse_int(const char* text, const char* what, int lo, int hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end || errno || v < lo || v > hi) {
    usage_error(std::string("bad value for ") + what + ": '" + text + "'");
  }
  return static_cast<int>(v);
}

double parse_double(const char* text, const char* what) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end == text || *end || errno || !std::isfinite(v)) {
    usage_error(std::string("bad value for ") + what + ": '" + text + "'");
  }
  return v;
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage_error("missing value for " + arg);
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      print_help();
      std::exit(0);
    } else if (arg == "--out") {
      o.out_dir = next();
    } else if (arg == "--size") {
      o.size = parse_int(next(), "--size", 8, 4096);
    } else if (arg == "--views") {
      o.views = parse_int(next(), "--views", 1, 100000);
    } else if (arg == "--backend") {
      const std::string v = next();
      if (v == "auto") o.backend = FDK_BACKEND_AUTO;
      else if (v == "cpu") o.backend = FDK_BACKEND_CPU;
      else if (v == "cuda") o.backend = FDK_BACKEND_CUDA;
      else usage_error("bad --backend '" + v + "'");
    } else if (arg == "--slab-thickness") {
      o.slab_thickness = parse_int(next(), "--slab-thickness", 0, 1 << 20);
    } else if (arg == "--window") {
      o.window_lo = parse_double(next(), "--window LO");
      o.window_hi = parse_double(next(), "--window HI");
      if (!(o.window_hi > o.window_lo)) usage_error("--window needs LO < HI");
    } else {
      usage_error("unknown option '" + arg + "'");
    }
  }
  return o;
}

const char* backend_name(int backend) {
  switch (backend) {
    case FDK_BACKEND_CPU: return "cpu";
    case FDK_BACKEND_CUDA: return "cuda";
    default: return "auto";
  }
}

// mkdir -p
bool make_directories(const std::string& path) {
  std::string partial;
  size_t pos = 0;
  while (pos <= path.size()) {
    const size_t slash = path.find('/', pos);
    partial = path.substr(0, slash == std::string::npos ? path.size() : slash);
    if (!partial.empty() && mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// ---- preview image --------------------------------------------------------------------
struct Gray {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

[[maybe_unused]] bool write_pgm(const std::string& path, const Gray& image) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  std::fprintf(f, "P5\n%d %d\n255\n", image.width, image.height);
  const size_t n = image.pixels.size();
  const bool ok = std::fwrite(image.pixels.data(), 1, n, f) == n;
  return std::fclose(f) == 0 && ok;
}

#ifdef FDK_SAMPLE_WITH_PNG
bool write_png(const std::string& path, const Gray& image) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(f);
    return false;
  }
  png_init_io(png, f);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.height), 8, PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int r = 0; r < image.height; ++r) {
    png_write_row(png, image.pixels.data() + static_cast<size_t>(r) * image.width);
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return std::fclose(f) == 0;
}
#endif

int run(const Options& o) {
  const int n = o.size;
  const int u = std::max(16, 2 * ((4 * n / 3 + 1) / 2));  // detector columns = rows
  const double extent = 256.0, voxel = extent / n, pixel = 256.0 * 1.5 / u;
  const double scale = 120.0;

  fdk_config config;
  fdk_config_init(&config);
  for (int axis = 0; axis < 3; ++axis) {
    config.volume.size[axis] = n;
    config.volume.spacing[axis] = voxel;
    config.volume.origin[axis] = -0.5 * extent + 0.5 * voxel;
  }
  config.detector.size[0] = config.detector.size[1] = u;
  config.detector.spacing[0] = config.detector.spacing[1] = pixel;
  config.detector.origin[0] = config.detector.origin[1] = -0.5 * (u - 1) * pixel;
  config.scan.kind = FDK_SCAN_UNIFORM;
  config.scan.num_views = o.views;
  config.scan.arc_deg = 360.0;
  config.scan.uniform.sid = 1000.0;
  config.scan.uniform.sdd = 1500.0;
  config.backend = o.backend;
  config.slab_thickness = o.slab_thickness;

  std::printf("fdk-sample: fdk %s; Shepp-Logan head (scale %.0f mm), %d views of %d x %d "
              "pixels of %.3g mm, volume %d^3 voxels of %.4g mm\n",
              fdk_version_string(), scale, o.views, u, u, pixel, n, voxel);
  if (!make_directories(o.out_dir)) {
    std::fprintf(stderr, "fdk-sample: cannot create directory %s: %s\n", o.out_dir.c_str(),
                 std::strerror(errno));
    return 1;
  }

  fdk_context* ctx = nullptr;
  fdk_status status = fdk_create(&config, &ctx);
  if (status != FDK_OK) {
    std::fprintf(stderr, "fdk-sample: fdk_create failed: %s\n",
                 fdk_tools::status_text(status, fdk_last_create_error()).c_str());
    return 1;
  }
  // From here on every failure goes through `fail`, which releases the handle.
  auto fail = [&](const char* what, fdk_status s) {
    std::fprintf(stderr, "fdk-sample: %s failed: %s\n", what,
                 fdk_tools::status_text(s, fdk_last_error(ctx)).c_str());
    fdk_destroy(ctx);
    return 1;
  };
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  if ((status = fdk_get_plan_info(ctx, &plan)) != FDK_OK) return fail("fdk_get_plan_info", status);
  std::printf("backend: %s (requested %s), %d thread%s, %d slab%s of %d planes\n",
              backend_name(plan.backend), backend_name(o.backend), plan.num_threads,
              plan.num_threads == 1 ? "" : "s", plan.num_slabs, plan.num_slabs == 1 ? "" : "s",
              plan.slab_thickness);
  std::fflush(stdout);

  // Simulate the scan: exact line integrals, generated on all cores, pushed
  // in acquisition order.
  const std::vector<fdk::phantom::Ellipsoid> phantom = fdk::phantom::shepp_logan_3d(scale);
  const size_t view_pixels = static_cast<size_t>(u) * u;
  auto t0 = Clock::now();
  std::vector<float> projections(view_pixels * static_cast<size_t>(o.views));
  {
    std::atomic<int> next{0};
    std::atomic<bool> failed{false};
    std::string error;
    std::vector<std::thread> workers;
    const unsigned count = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned w = 0; w < count; ++w) {
      workers.emplace_back([&, w] {
        try {
          for (int view = next++; view < o.views; view = next++) {
            fdk::phantom::project(phantom, config, view,
                                  projections.data() + view_pixels * static_cast<size_t>(view));
          }
        } catch (const std::exception& e) {
          if (!failed.exchange(true)) error = e.what();
        }
        (void)w;
      });
    }
    for (std::thread& t : workers) t.join();
    if (failed) {
      std::fprintf(stderr, "fdk-sample: projecting the phantom failed: %s\n", error.c_str());
      fdk_destroy(ctx);
      return 1;
    }
  }
  const double simulate_s = since(t0);

  t0 = Clock::now();
  for (int view = 0; view < o.views; ++view) {
    status = fdk_push_projection(ctx, view, projections.data() + view_pixels * view,
                                 static_cast<size_t>(u) * sizeof(float), nullptr);
    if (status != FDK_OK) return fail("fdk_push_projection", status);
  }
  const double push_s = since(t0);
  t0 = Clock::now();
  if ((status = fdk_finish(ctx)) != FDK_OK) return fail("fdk_finish", status);
  const double finish_s = since(t0);
  std::vector<float>().swap(projections);  // the library keeps its own copy

  fdk_store_info store{};
  store.struct_size = sizeof store;
  if ((status = fdk_get_store_info(ctx, &store)) != FDK_OK) return fail("fdk_get_store_info", status);

  // The central brain region: voxels of the central box (a fifth of the
  // skull's size each way) where the phantom is pure brain and which lie at
  // least 2.5 voxels from every ellipsoid surface, away from edge blur.
  const double brain = phantom[0].density + phantom[1].density;  // 2.0 - 0.98
  const int centre = n / 2;
  const int half_box = std::max(2, static_cast<int>(0.2 * scale / voxel));
  const int b0 = std::max(0, centre - half_box), b1 = std::min(n, centre + half_box);
  std::vector<uint8_t> mask(static_cast<size_t>(b1 - b0) * (b1 - b0) * (b1 - b0), 0);
  size_t mask_voxels = 0;
  for (int y = b0; y < b1; ++y) {
    for (int z = b0; z < b1; ++z) {
      for (int x = b0; x < b1; ++x) {
        const double px = config.volume.origin[0] + x * voxel;
        const double py = config.volume.origin[1] + y * voxel;
        const double pz = config.volume.origin[2] + z * voxel;
        if (std::fabs(fdk::phantom::density_at(phantom, px, py, pz) - brain) > 1e-9) continue;
        bool clear = true;
        for (const fdk::phantom::Ellipsoid& e : phantom) {
          if (fdk::phantom::distance_to_surface(e, px, py, pz) < 2.5 * voxel) {
            clear = false;
            break;
          }
        }
        if (clear) {
          mask[(static_cast<size_t>(y - b0) * (b1 - b0) + (z - b0)) * (b1 - b0) + (x - b0)] = 1;
          ++mask_voxels;
        }
      }
    }
  }

  // Read the volume slab by slab: append each to the MetaImage, keep the
  // rows of the three central slices, accumulate the brain statistics.
  // The shared writer: (x, y, z) order as rtkfdk writes, under a temporary
  // name until complete.
  const std::string mha_path = o.out_dir + "/volume.mha";
  std::unique_ptr<fdk::adapters::VolumeWriter> mha;
  try {
    mha = fdk::adapters::make_metaimage_writer(mha_path, config.volume, {});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-sample: %s\n", e.what());
    fdk_destroy(ctx);
    return 1;
  }
  int32_t slabs = 0;
  if ((status = fdk_slab_count(ctx, &slabs)) != FDK_OK) {
    return fail("fdk_slab_count", status);
  }
  const size_t plane = static_cast<size_t>(n) * n;  // one y plane: z rows of x
  std::vector<float> axial(plane), coronal(plane), sagittal(plane);  // row-major images
  std::vector<float> buffer;
  double brain_sum = 0, brain_sum2 = 0;
  size_t non_finite = 0;
  t0 = Clock::now();
  double read_s = 0;
  for (int32_t s = 0; s < slabs; ++s) {
    fdk_slab_info info{};
    info.struct_size = sizeof info;
    if ((status = fdk_get_slab_info(ctx, s, &info)) != FDK_OK) {
      return fail("fdk_get_slab_info", status);
    }
    const size_t floats = static_cast<size_t>(info.byte_size / sizeof(float));
    if (buffer.size() < floats) buffer.resize(floats);
    const auto r0 = Clock::now();
    if ((status = fdk_read_slab(ctx, s, buffer.data(), buffer.size() * sizeof(float))) != FDK_OK) {
      return fail("fdk_read_slab", status);
    }
    read_s += since(r0);
    try {
      mha->write_planes(info.y_begin, info.y_end, buffer.data());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fdk-sample: %s\n", e.what());
      fdk_destroy(ctx);
      return 1;
    }
    for (int y = info.y_begin; y < info.y_end; ++y) {
      const float* p = buffer.data() + static_cast<size_t>(y - info.y_begin) * plane;
      for (size_t i = 0; i < plane; ++i) non_finite += !std::isfinite(p[i]);
      // Axial: the central y plane as is (x across, z down).
      if (y == centre) std::copy(p, p + plane, axial.begin());
      // Coronal (z = centre) and sagittal (x = centre): y up, so +y (the
      // head's top) is the first row.
      const size_t row = static_cast<size_t>(n - 1 - y) * n;
      for (int x = 0; x < n; ++x) coronal[row + x] = p[static_cast<size_t>(centre) * n + x];
      for (int z = 0; z < n; ++z) sagittal[row + z] = p[static_cast<size_t>(z) * n + centre];
      if (y >= b0 && y < b1) {
        for (int z = b0; z < b1; ++z) {
          for (int x = b0; x < b1; ++x) {
            if (!mask[(static_cast<size_t>(y - b0) * (b1 - b0) + (z - b0)) * (b1 - b0) +
                      (x - b0)]) {
              continue;
            }
            const double v = p[static_cast<size_t>(z) * n + x];
            brain_sum += v;
            brain_sum2 += v * v;
          }
        }
      }
    }
  }
  const double slabs_s = since(t0);
  fdk_destroy(ctx);
  try {
    mha->commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-sample: %s\n", e.what());
    return 1;
  }

  // Preview: axial | coronal | sagittal, 4 px apart, windowed to 8 bits.
  const double lo = o.window_hi > o.window_lo ? o.window_lo : brain - 0.04;
  const double hi = o.window_hi > o.window_lo ? o.window_hi : brain + 0.04;
  Gray image;
  const int gap = 4;
  image.width = 3 * n + 2 * gap;
  image.height = n;
  image.pixels.assign(static_cast<size_t>(image.width) * image.height, 0);
  const std::vector<float>* panels[3] = {&axial, &coronal, &sagittal};
  for (int k = 0; k < 3; ++k) {
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) {
        const double v = (*panels[k])[static_cast<size_t>(r) * n + c];
        double g = std::isfinite(v) ? (v - lo) / (hi - lo) : 0.0;
        g = std::min(1.0, std::max(0.0, g));
        image.pixels[static_cast<size_t>(r) * image.width + k * (n + gap) + c] =
            static_cast<uint8_t>(std::lround(255.0 * g));
      }
    }
  }
#ifdef FDK_SAMPLE_WITH_PNG
  const std::string preview_path = o.out_dir + "/preview.png";
  const bool preview_ok = write_png(preview_path, image);
#else
  const std::string preview_path = o.out_dir + "/preview.pgm";
  const bool preview_ok = write_pgm(preview_path, image);
#endif
  if (!preview_ok) {
    std::fprintf(stderr, "fdk-sample: cannot write %s\n", preview_path.c_str());
    return 1;
  }

  std::printf("simulate %.2f s, filter+store %.2f s, finish %.2f s, slabs %.2f s "
              "(fdk_read_slab %.2f s), store ratio %.2f\n",
              simulate_s, push_s, finish_s, slabs_s, read_s, store.ratio);
  if (non_finite) {
    std::fprintf(stderr, "fdk-sample: the volume holds %zu NaN/Inf voxels\n", non_finite);
    return 1;
  }
  if (mask_voxels == 0) {
    std::fprintf(stderr, "fdk-sample: the central brain region is empty at this size\n");
    return 1;
  }
  const double mean = brain_sum / mask_voxels;
  const double sd = std::sqrt(std::max(0.0, brain_sum2 / mask_voxels - mean * mean));
  const double error = (mean - brain) / brain;
  std::printf("central brain region (%zu voxels): mean %.4f, sd %.4f; phantom %.2f "
              "(error %+.2f%%)\n",
              mask_voxels, mean, sd, brain, 100.0 * error);
  std::printf("volume:  %s (MetaImage, %d x %d x %d float32, x, y, z order as rtkfdk's)\n",
              mha_path.c_str(), n, n, n);
  std::printf("preview: %s (axial | coronal | sagittal, window %.3f..%.3f)\n",
              preview_path.c_str(), lo, hi);
  if (std::fabs(error) > 0.05) {
    std::fprintf(stderr, "fdk-sample: the brain mean is off by more than 5%%\n");
    return 3;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-sample: %s\n", e.what());
    return 1;
  }
}
