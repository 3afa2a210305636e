// fdk-scan-sim — a simulated cone-beam scanner. It renders the raw frames of
// the 3D Shepp-Logan phantom (I = dark + gain * I0 * exp(-p), Poisson-like
// noise, deterministic seed) and either
//   - writes a TIFF folder: OUTPUT_DIR/projections/proj_NNNN.tif,
//     OUTPUT_DIR/dark/, OUTPUT_DIR/flat/, OUTPUT_DIR/geometry.xml (RTK) and
//     OUTPUT_DIR/scan.ini, ready for fdk-convert; or
//   - with --live, plays the scanner driver of libfdk_frames: it pushes every
//     frame through the frame-callback adapter at a given frame rate
//     (optionally dropping, duplicating and reordering frames), reconstructs,
//     and reports the phantom's brain value.
// Exit codes: 0 success, 1 internal error, 2 bad command line, 4 output not
// writable, 5 reconstruction failed, 7 the brain value is off by more than
// --tolerance (live mode only).
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/adapters/geometry_io.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>

#ifdef FDK_SCAN_SIM_WITH_TIFF
#include <fdk/adapters/tiff_io.hpp>
#endif
#ifdef FDK_SCAN_SIM_WITH_FRAMES
#include <fdk/fdk_frames.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "live_preview_frames.hpp"
#include "sim.hpp"

namespace ad = fdk::adapters;

namespace {

struct Failure {
  int code;
  std::string message;
};

[[noreturn]] void usage_error(const std::string& m) { throw Failure{2, m}; }

const char* kHelp = R"(usage: fdk-scan-sim OUTPUT_DIR [options]          (a TIFF folder)
       fdk-scan-sim --live [OUTPUT_DIR] [options]   (drive libfdk_frames)

Simulates a circular cone-beam scan of the 3D Shepp-Logan head phantom (the
original densities, or Toft's higher-contrast ones with --phantom modified) and
renders raw detector frames: I = dark + gain * I0 * exp(-p) with per-pixel
dark current and gain, Poisson-like noise and read noise, reproducible for a
given --seed.

Folder mode writes OUTPUT_DIR/projections/proj_NNNN.tif (uint16 by default),
OUTPUT_DIR/dark/, OUTPUT_DIR/flat/, OUTPUT_DIR/geometry.xml (RTK) and
OUTPUT_DIR/scan.ini. Reconstruct with, e.g.:
  fdk-scan-sim scan --views 360 --detector 256
  fdk-convert scan/projections recon --dark scan/dark --flat scan/flat \
      --geometry scan/scan.ini

Live mode pushes each frame (index, encoder angle, timestamp) through the
frame-callback adapter (libfdk_frames) at --rate frames per second,
reconstructs, writes OUTPUT_DIR/volume.mha if OUTPUT_DIR is given, and checks
the phantom's brain value (1.02, or 0.2 modified) in the central region:
  fdk-scan-sim --live --views 360 --rate 100 --drop-every 17 --shuffle 4

Scanner:
  --views N (180)  --detector COLS[,ROWS] (128)  --pixel-size MM (0.8)
  --sid MM (500)  --sdd MM (800)  --arc DEG (360)  --start-angle DEG (0)
  --scale MM       phantom size (default: fits the field of view)
  --phantom shepp-logan|modified   (default shepp-logan: skull 2.0, brain
                       1.02, features 1.00-1.03; modified: skull 1.0, brain
                       0.2, features 0.0-0.3, visible through the noise)
  --mu PER_MM (0.02)   attenuation per unit density: values reconstruct as
                       density * mu (the brain, 1.02, as 0.0204 /mm)
  --i0 COUNTS (20000)  --dark-level COUNTS (100)  --gain-spread F (0.1)
  --no-noise  --seed N (1)  --threads N
  --detector-offset PX (0)  --detector-tilt DEG (0)   a misaligned scanner: the
                       real detector sits PX pixels off along u and is turned
                       by DEG in its plane; the frames show it, the geometry
                       files say neither (a wrong centre of rotation for
                       fdk-convert --estimate-geometry or --apply-estimate)
Folder mode:
  --dark-frames N (4)  --flat-frames N (8)  --sample-type uint16|float32
  --multipage          one multi-page file per folder instead of one per frame
  --line-integrals     write the exact line integrals (float32), no dark/flat
Live mode:
  --rate HZ (0 = as fast as possible)  --drop-every K  --duplicate-every K
  --shuffle W (reorder frames within windows of W)  --volume N (64)
  --backend auto|cpu|cuda  --queue N (8)  --tolerance F (0.03)
  --live-preview SECONDS  the library's live preview (fdk_config.preview) as
                       OUTPUT_DIR/live-preview-NNN.png, a frame every SECONDS
                       while the frames play and one when they are finished
)";

struct Options {
  std::string output;
  bool live = false;
  fdk_sim::ScannerModel model;
  int threads = 0;
  int dark_frames = 4, flat_frames = 8;
  bool float_samples = false, multipage = false, line_integrals = false;
  double rate = 0;
  int drop_every = 0, duplicate_every = 0, shuffle = 0, volume = 64, queue = 8;
  int backend = FDK_BACKEND_AUTO;
  double tolerance = 0.03;
  double live_preview = 0;  // seconds between live preview frames; 0 = none
};

double number(const std::string& flag, const char* text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (end == text || *end || errno || !std::isfinite(v)) {
    usage_error("bad value for " + flag + ": '" + text + "'");
  }
  return v;
}

int integer(const std::string& flag, const char* text, int lo, int hi) {
  const double v = number(flag, text);
  if (v != std::floor(v) || v < lo || v > hi) {
    usage_error("bad value for " + flag + ": '" + text + "' (an integer in [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "])");
  }
  return static_cast<int>(v);
}

Options parse(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) usage_error("missing value for " + a);
      return argv[++i];
    };
    auto positive = [&](double v) {
      if (!(v > 0)) usage_error(a + " must be > 0");
      return v;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(0);
    } else if (a == "--live") {
      o.live = true;
    } else if (a == "--views") {
      o.model.views = integer(a, next(), 1, 1000000);
    } else if (a == "--detector") {
      const std::string v = next();
      const size_t comma = v.find(',');
      o.model.columns = integer(a, v.substr(0, comma).c_str(), 2, 65536);
      o.model.rows = comma == std::string::npos ? o.model.columns
                                                : integer(a, v.substr(comma + 1).c_str(), 2, 65536);
    } else if (a == "--pixel-size") {
      o.model.pixel = positive(number(a, next()));
    } else if (a == "--sid") {
      o.model.sid = positive(number(a, next()));
    } else if (a == "--sdd") {
      o.model.sdd = positive(number(a, next()));
    } else if (a == "--arc") {
      o.model.arc = number(a, next());
    } else if (a == "--start-angle") {
      o.model.first_angle = number(a, next());
    } else if (a == "--scale") {
      o.model.phantom_scale = positive(number(a, next()));
    } else if (a == "--phantom") {
      const std::string v = next();
      if (v == "shepp-logan") o.model.modified_phantom = false;
      else if (v == "modified") o.model.modified_phantom = true;
      else usage_error("bad value for --phantom: '" + v + "' (shepp-logan or modified)");
    } else if (a == "--mu") {
      o.model.mu = positive(number(a, next()));
    } else if (a == "--i0") {
      o.model.i0 = positive(number(a, next()));
    } else if (a == "--dark-level") {
      o.model.dark_level = number(a, next());
    } else if (a == "--gain-spread") {
      o.model.gain_spread = number(a, next());
      if (o.model.gain_spread < 0 || o.model.gain_spread >= 1) usage_error("--gain-spread in [0, 1)");
    } else if (a == "--detector-offset") {
      o.model.detector_offset_px = number(a, next());
      if (std::fabs(o.model.detector_offset_px) > 1e4) usage_error("--detector-offset beyond 10000 pixels");
    } else if (a == "--detector-tilt") {
      o.model.detector_tilt_deg = number(a, next());
      if (std::fabs(o.model.detector_tilt_deg) >= 45) usage_error("--detector-tilt within (-45, 45) degrees");
    } else if (a == "--no-noise") {
      o.model.noise = false;
    } else if (a == "--seed") {
      o.model.seed = static_cast<uint64_t>(integer(a, next(), 0, 2000000000));
    } else if (a == "--threads") {
      o.threads = integer(a, next(), 1, 1024);
    } else if (a == "--dark-frames") {
      o.dark_frames = integer(a, next(), 0, 10000);
    } else if (a == "--flat-frames") {
      o.flat_frames = integer(a, next(), 1, 10000);
    } else if (a == "--sample-type") {
      const std::string v = next();
      if (v == "uint16") o.float_samples = false;
      else if (v == "float32") o.float_samples = true;
      else usage_error("bad value for --sample-type: '" + v + "'");
    } else if (a == "--multipage") {
      o.multipage = true;
    } else if (a == "--line-integrals") {
      o.line_integrals = true;
    } else if (a == "--rate") {
      o.rate = number(a, next());
      if (o.rate < 0) usage_error("--rate must be >= 0");
    } else if (a == "--drop-every") {
      o.drop_every = integer(a, next(), 0, 1 << 30);
    } else if (a == "--duplicate-every") {
      o.duplicate_every = integer(a, next(), 0, 1 << 30);
    } else if (a == "--shuffle") {
      o.shuffle = integer(a, next(), 0, 1 << 20);
    } else if (a == "--volume") {
      o.volume = integer(a, next(), 8, 4096);
    } else if (a == "--queue") {
      o.queue = integer(a, next(), 1, 1 << 16);
    } else if (a == "--live-preview") {
      o.live_preview = number(a, next());
      if (!(o.live_preview >= 0.05 && o.live_preview <= 3600))
        usage_error("bad value for --live-preview: seconds within [0.05, 3600]");
    } else if (a == "--tolerance") {
      o.tolerance = positive(number(a, next()));
    } else if (a == "--backend") {
      const std::string v = next();
      if (v == "auto") o.backend = FDK_BACKEND_AUTO;
      else if (v == "cpu") o.backend = FDK_BACKEND_CPU;
      else if (v == "cuda") o.backend = FDK_BACKEND_CUDA;
      else usage_error("bad value for --backend: '" + v + "'");
    } else if (a.size() > 1 && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() > 1) usage_error("unexpected argument '" + positional[1] + "'");
  if (!o.live && positional.empty()) usage_error("expected OUTPUT_DIR");
  if (!positional.empty()) o.output = positional[0];
  if (o.live_preview > 0 && (!o.live || o.output.empty()))
    usage_error("--live-preview needs --live and an OUTPUT_DIR for its frames");
  return o;
}

int thread_count(const Options& o) {
  return o.threads > 0 ? o.threads
                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs f(i) for i in [begin, end) on `threads` threads; rethrows the first
// error.
template <typename F>
void parallel_for(int begin, int end, int threads, F f) {
  std::atomic<int> next{begin};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < end && !failed; i = next++) {
        try {
          f(i);
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

#ifdef FDK_SCAN_SIM_WITH_TIFF
ad::ScanDescription description_of(const fdk_sim::ScannerModel& m) {
  ad::ScanDescription d;
  d.sid = m.sid;
  d.sdd = m.sdd;
  d.views = m.views;
  d.start_angle = m.first_angle;
  d.arc = std::fabs(m.arc);
  d.direction = m.arc < 0 ? -1 : 1;
  d.pixel_size = std::array<double, 2>{m.pixel, m.pixel};
  // No detector.size: it would check the processed projections, so a user's
  // --crop or --bin on the sample would fail against it.
  return d;
}

// Writes frames [0, count) of one kind, rendered in parallel batches and
// written in order, one file each or pages of one file.
void write_frames(const fdk_sim::Scanner& scanner, const Options& o, const std::string& folder,
                  const std::string& stem, int count, int stream) {
  ad::make_directories(folder);
  const int w = o.model.columns, h = o.model.rows;
  const size_t n = static_cast<size_t>(w) * h;
  const int threads = thread_count(o);
  const int batch = std::max(1, 4 * threads);
  const bool as_float = o.float_samples || o.line_integrals;
  // The pixel pitch in the resolution tags, as a scanner writes it (so an
  // RTK XML geometry is all fdk-convert needs besides the folder).
  ad::TiffWriteOptions tags;
  tags.pixel_size_x_mm = tags.pixel_size_y_mm = o.model.pixel;
  std::unique_ptr<ad::TiffWriter> multi;
  if (o.multipage) {
    multi = std::make_unique<ad::TiffWriter>(ad::join_path(folder, stem + ".tif"), tags);
  }
  int digits = 4;
  for (int c = count - 1; c >= 10000; c /= 10) ++digits;
  std::vector<std::vector<float>> f(static_cast<size_t>(batch), std::vector<float>(n));
  std::vector<std::vector<uint16_t>> u(static_cast<size_t>(batch), std::vector<uint16_t>(n));
  for (int b0 = 0; b0 < count; b0 += batch) {
    const int b1 = std::min(count, b0 + batch);
    parallel_for(b0, b1, threads, [&](int i) {
      std::vector<float>& out = f[static_cast<size_t>(i - b0)];
      if (stream == 0) scanner.line_integrals(i, out.data());
      if (o.line_integrals) return;
      std::vector<double> raw;
      scanner.raw_frame(i, stream, stream == 0 ? out.data() : nullptr, raw);
      for (size_t k = 0; k < n; ++k) {
        if (as_float) {
          out[k] = static_cast<float>(raw[k]);
        } else {
          u[static_cast<size_t>(i - b0)][k] =
              static_cast<uint16_t>(std::min(65535.0, std::max(0.0, std::round(raw[k]))));
        }
      }
    });
    for (int i = b0; i < b1; ++i) {
      const void* data = as_float ? static_cast<const void*>(f[static_cast<size_t>(i - b0)].data())
                                  : static_cast<const void*>(u[static_cast<size_t>(i - b0)].data());
      const ad::SampleType type = as_float ? ad::SampleType::kFloat32 : ad::SampleType::kUInt16;
      if (multi) {
        multi->add_page(w, h, type, data, i, count);
      } else {
        char name[64];
        std::snprintf(name, sizeof name, "%s_%0*d.tif", stem.c_str(), digits, i);
        ad::TiffWriter one(ad::join_path(folder, name), tags);
        one.add_page(w, h, type, data);
        one.commit();
      }
    }
  }
  if (multi) multi->commit();
}

int run_folder(const Options& o) {
  const fdk_sim::Scanner scanner(o.model);
  ad::make_directories(o.output);
  const auto t0 = std::chrono::steady_clock::now();
  write_frames(scanner, o, ad::join_path(o.output, "projections"), "proj", o.model.views, 0);
  if (!o.line_integrals) {
    if (o.dark_frames > 0) {
      write_frames(scanner, o, ad::join_path(o.output, "dark"), "dark", o.dark_frames, 2);
    }
    write_frames(scanner, o, ad::join_path(o.output, "flat"), "flat", o.flat_frames, 1);
  }
  std::vector<fdk_view> views;
  for (int i = 0; i < o.model.views; ++i) views.push_back(scanner.view(i));
  ad::write_rtk_geometry(ad::join_path(o.output, "geometry.xml"), views);
  const std::string ini = ad::format_scan_ini(description_of(o.model));
  ad::OutputFile f(ad::join_path(o.output, "scan.ini"));
  f.write(ini.data(), ini.size());
  f.commit();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fdk-scan-sim: %d views of %d x %d pixels (%s), phantom scale %.4g mm, mu %.4g/mm "
              "(the brain reconstructs as %.4g/mm), written to '%s' in %.1f s\n",
              o.model.views, o.model.columns, o.model.rows,
              o.line_integrals ? "line integrals" : o.float_samples ? "float32 raw" : "uint16 raw",
              scanner.phantom_scale(), o.model.mu, scanner.brain_density() * o.model.mu,
              o.output.c_str(), s);
  if (o.model.detector_offset_px != 0 || o.model.detector_tilt_deg != 0) {
    std::printf("fdk-scan-sim: the real detector sits %.4g pixels off along u and is turned by %.4g deg; "
                "geometry.xml and scan.ini say neither\n",
                o.model.detector_offset_px, o.model.detector_tilt_deg);
  }
  return 0;
}
#endif

#ifdef FDK_SCAN_SIM_WITH_FRAMES
int run_live(const Options& o);
#endif

}  // namespace

#ifdef FDK_SCAN_SIM_WITH_FRAMES
#include "live.inc"
#endif

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    if (o.live) {
#ifdef FDK_SCAN_SIM_WITH_FRAMES
      return run_live(o);
#else
      throw Failure{2, "--live needs libfdk_frames, which this build lacks"};
#endif
    }
#ifdef FDK_SCAN_SIM_WITH_TIFF
    return run_folder(o);
#else
    throw Failure{2, "folder output needs libtiff, which this build lacks (use --live)"};
#endif
  } catch (const Failure& f) {
    std::fprintf(stderr, "fdk-scan-sim: %s%s\n", f.message.c_str(), f.code == 2 ? " (see --help)" : "");
    return f.code;
  } catch (const ad::Error& e) {
    std::fprintf(stderr, "fdk-scan-sim: %s\n", e.what());
    return e.kind() == ad::ErrorKind::kOutput ? 4 : e.kind() == ad::ErrorKind::kInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-scan-sim: internal error: %s\n", e.what());
    return 1;
  }
}
