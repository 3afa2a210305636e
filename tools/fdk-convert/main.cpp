// fdk-convert — a folder of TIFF projections in, a reconstructed volume out
// (a stack of TIFF slices, one BigTIFF, or a MetaImage), slab by slab.
//
// Exit codes (also in --help and docs/ADAPTERS.md):
//   0 success; 1 unexpected internal error; 2 bad command line or option
//   value; 3 unusable input (projections, dark/flat, bad-pixel map, geometry
//   file); 4 output cannot be written (folder, permissions, full disk);
//   5 the reconstruction failed (library error: budget, backend, device);
//   6 interrupted (SIGINT/SIGTERM). On any failure nothing under the final
//   output names is left behind.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/adapters/geometry_io.hpp>
#include <fdk/adapters/projection_folder.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "preview.hpp"
#include "progress.hpp"

namespace ad = fdk::adapters;

namespace {

enum ExitCode {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,
  kExitInput = 3,
  kExitOutput = 4,
  kExitReconstruction = 5,
  kExitInterrupted = 6,
};

struct Failure {
  int code;
  std::string message;
};

[[noreturn]] void usage_error(const std::string& message) { throw Failure{kExitUsage, message}; }

// The library's largest detector and volume extent per axis (fdk.h).
constexpr int kMaxExtent = 65536;

std::atomic<int> g_signal{0};
extern "C" void on_signal(int sig) { g_signal.store(sig); }

const char* kHelp = R"(usage: fdk-convert PROJECTIONS_DIR OUTPUT_DIR [options]

Reconstructs a cone-beam CT volume (FDK) from a folder of TIFF projections and
writes it slab by slab (never holding the whole volume) as TIFF slices (one
file per axial y plane, x across and z down), one multi-page BigTIFF, or a
MetaImage, plus OUTPUT_DIR/preview.png of the three central slices.

Examples:
  # raw uint16 frames with dark and flat folders, geometry from flags
  fdk-convert scan/proj out --dark scan/dark --flat scan/flat \
      --sid 500 --sdd 800 --pixel-size 0.2 --arc 360
  # RTK geometry file, 2x2 binning, 16-bit slices windowed to [0, 0.05]
  fdk-convert proj out --geometry geometry.xml --pixel-size 0.1 --bin 2 \
      --output-type uint16 --window 0,0.05
  # INI description, two GPUs, 8 GiB host budget, one MetaImage file
  fdk-convert proj out --geometry scan.ini --backend cuda --gpus 0,1 \
      --host-memory 8G --format mha

Geometry (RTK conventions; lengths in mm, angles in degrees):
  --geometry FILE        RTK XML geometry (one view per projection) or an INI
                         scan description (docs/ADAPTERS.md); may be given
                         twice: an XML for the views plus an INI for the
                         detector and volume. Flags below override the INI.
  --sid MM --sdd MM      source-to-isocentre and source-to-detector distances
  --pixel-size U[,V]     pixel pitch of the raw frames (default: the TIFF
                         resolution tags of the first projection)
  --views N              number of views (default: the number of images)
  --start-angle DEG      gantry angle of the first view (default 0)
  --arc DEG              angle covered, step = arc/views (default 360)
  --direction ccw|cw     increasing or decreasing gantry angle (default ccw)
  --projection-offset X,Y  --source-offset X,Y
  --in-plane-angle DEG   --out-of-plane-angle DEG
  --detector-origin U,V  centre of raw pixel (0,0) (default: centred)
Volume (default: voxel = pixel / magnification, covering the field of view):
  --volume-size NX,NY,NZ --voxel-size S|SX,SY,SZ --volume-origin X,Y,Z
Projections:
  --pattern GLOB         files to read (default "*.tif;*.tiff"), natural order
  --dark PATH --flat PATH  file or folder of frames, averaged
  --i0 VALUE             open-beam intensity when there is no flat
  --dark-level VALUE     constant dark when there is no dark frame
  --input auto|raw|line-integral  (auto: integer samples or a dark/flat/i0
                         given mean raw intensities)
  --min-transmission T   clamp of (I-D)/(F-D) before -log (default 1e-5)
  --bad-pixels PATH      TIFF mask (nonzero = bad) or text "x y" lines
  --crop X,Y,W,H         in raw pixels   --bin N|U,V   --flip-u  --flip-v
  --read-threads N       decoding threads (default: up to 4)
Reconstruction:
  --filter NAME          ram-lak (default), shepp-logan, cosine, hamming, hann
  --cutoff F             fraction of Nyquist (default 1)
  --short-scan auto|on|off  (auto: when the views leave a gap of more than
                         twice their median step)
  --offset-detector auto|on|off  half-fan weights about the ray through the
                         rotation axis (auto: rtkfdk's rule, when the rays
                         through the detector's edges pass at distances from
                         the axis that differ by 10 % of their mean or more)
  --outside-fov backproject|zero  voxels the views do not all see: the partial
                         sum, as RTK's rtkfdk (default), or 0
  --padding F            truncation padding, fraction of the width (default 0)
  --backend auto|cpu|cuda  --gpus all|LIST (e.g. 0,1)
  --host-memory SIZE     --gpu-memory SIZE (bytes, or with K/M/G/T suffix)
  --precision float32|float16   --threads N   --slab-thickness PLANES
Output:
  --format tiff|bigtiff|mha   (default tiff: OUTPUT_DIR/slice_NNNN.tif;
                         bigtiff: volume.tif; mha: volume.mha)
  --output-type float32|uint16  --window LO,HI (uint16 range and preview)
  --prefix NAME          slice file prefix (default "slice")
  --compression none|lzw|deflate   (TIFF outputs)
  --no-preview  --force (replace existing output)
  --quiet  --progress auto|bar|lines|none  --version  --help

Exit codes: 0 success, 1 internal error, 2 bad command line, 3 unusable input,
4 output not writable (incl. full disk), 5 reconstruction failed, 6 interrupted.
Output is written under temporary names and renamed at the end: a failed run
leaves nothing that looks complete.
)";

struct Options {
  std::string projections, output;
  std::vector<std::string> geometry_files;
  ad::ScanDescription flags;
  ad::ProjectionFolderOptions folder;
  int read_threads = 0;
  int window_kind = FDK_WINDOW_RAM_LAK;
  double cutoff = 1.0;
  int short_scan = FDK_AUTO, offset_detector = FDK_AUTO;
  int outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;
  double padding = 0.0;
  int backend = FDK_BACKEND_AUTO;
  std::vector<int> gpus;
  uint64_t host_memory = 0, gpu_memory = 0;
  int precision = FDK_PRECISION_FLOAT32;
  int threads = 0, slab_thickness = 0;
  std::string format = "tiff";
  ad::VoxelType type = ad::VoxelType::kFloat32;
  bool have_window = false;
  double window_lo = 0, window_hi = 0;
  std::string prefix = "slice";
  ad::TiffWriteOptions::Compression compression = ad::TiffWriteOptions::Compression::kNone;
  bool preview = true, force = false, quiet = false;
  fdk_tools::ProgressStyle progress = fdk_tools::ProgressStyle::kAuto;
};

std::vector<double> parse_list(const std::string& flag, const std::string& text, size_t lo,
                               size_t hi) {
  std::vector<double> out;
  std::string t = text;
  for (char& c : t) {
    if (c == ',') c = ' ';
  }
  size_t pos = 0;
  while (pos < t.size()) {
    while (pos < t.size() && t[pos] == ' ') ++pos;
    if (pos >= t.size()) break;
    const char* start = t.c_str() + pos;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(start, &end);
    if (end == start || errno || !std::isfinite(v) || (*end != ' ' && *end != '\0')) {
      usage_error("bad value for " + flag + ": '" + text + "'");
    }
    out.push_back(v);
    pos = static_cast<size_t>(end - t.c_str());
  }
  if (out.size() < lo || out.size() > hi) {
    usage_error("bad value for " + flag + ": '" + text + "' (expected " +
                (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                " numbers)");
  }
  return out;
}

double parse_number(const std::string& flag, const std::string& text) {
  return parse_list(flag, text, 1, 1)[0];
}

int parse_int(const std::string& flag, const std::string& text, int lo, int hi) {
  const double v = parse_number(flag, text);
  if (v != std::floor(v) || v < lo || v > hi) {
    usage_error("bad value for " + flag + ": '" + text + "' (an integer in [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "])");
  }
  return static_cast<int>(v);
}

uint64_t parse_size(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  std::string suffix = end ? end : "";
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!suffix.empty() && suffix.back() == 'B') suffix.pop_back();
  if (suffix.size() == 2 && suffix[1] == 'I') suffix.pop_back();
  double scale = 1;
  if (suffix == "K") scale = 1024.0;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty()) usage_error("bad size for " + flag + ": '" + text + "'");
  if (end == text.c_str() || errno || !(v > 0) || v * scale > 1.8e19) {
    usage_error("bad size for " + flag + ": '" + text + "'");
  }
  return static_cast<uint64_t>(v * scale);
}

int parse_switch(const std::string& flag, const std::string& v) {
  if (v == "auto") return FDK_AUTO;
  if (v == "on") return FDK_ON;
  if (v == "off") return FDK_OFF;
  usage_error("bad value for " + flag + ": '" + v + "' (auto, on or off)");
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage_error("missing value for " + arg);
      return argv[++i];
    };
    // Geometry flags map onto the INI keys.
    static const struct {
      const char* flag;
      const char* key;
    } kGeometryFlags[] = {
        {"--sid", "scan.sid"},
        {"--sdd", "scan.sdd"},
        {"--views", "scan.views"},
        {"--start-angle", "scan.start_angle"},
        {"--arc", "scan.arc"},
        {"--direction", "scan.direction"},
        {"--projection-offset", "scan.projection_offset"},
        {"--source-offset", "scan.source_offset"},
        {"--in-plane-angle", "scan.in_plane_angle"},
        {"--out-of-plane-angle", "scan.out_of_plane_angle"},
        {"--pixel-size", "detector.pixel_size"},
        {"--detector-origin", "detector.origin"},
        {"--volume-size", "volume.size"},
        {"--voxel-size", "volume.spacing"},
        {"--volume-origin", "volume.origin"},
    };
    bool geometry_flag = false;
    for (const auto& g : kGeometryFlags) {
      if (arg == g.flag) {
        const std::string value = next();
        try {
          o.flags.set(g.key, value, g.flag);
        } catch (const ad::Error& e) {
          usage_error(e.what());
        }
        geometry_flag = true;
      }
    }
    if (geometry_flag) continue;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(kExitOk);
    } else if (arg == "--version") {
      std::printf("fdk-convert (fdk %s)\n", fdk_version_string());
      std::exit(kExitOk);
    } else if (arg == "--geometry") {
      o.geometry_files.push_back(next());
      if (o.geometry_files.size() > 2) usage_error("--geometry given more than twice");
    } else if (arg == "--pattern") {
      o.folder.pattern = next();
    } else if (arg == "--dark") {
      o.folder.dark = next();
    } else if (arg == "--flat") {
      o.folder.flat = next();
    } else if (arg == "--i0") {
      o.folder.preprocess.i0 = parse_number(arg, next());
      if (!(o.folder.preprocess.i0 > 0)) usage_error("--i0 must be > 0");
    } else if (arg == "--dark-level") {
      o.folder.preprocess.dark_level = parse_number(arg, next());
    } else if (arg == "--input") {
      const std::string v = next();
      if (v == "auto") o.folder.kind = ad::ProjectionFolderOptions::Kind::kAuto;
      else if (v == "raw") o.folder.kind = ad::ProjectionFolderOptions::Kind::kRaw;
      else if (v == "line-integral") o.folder.kind = ad::ProjectionFolderOptions::Kind::kLineIntegral;
      else usage_error("bad value for --input: '" + v + "'");
    } else if (arg == "--min-transmission") {
      o.folder.preprocess.min_transmission = parse_number(arg, next());
      if (!(o.folder.preprocess.min_transmission > 0 && o.folder.preprocess.min_transmission < 1)) {
        usage_error("--min-transmission must lie in (0, 1)");
      }
    } else if (arg == "--bad-pixels") {
      o.folder.bad_pixels = next();
    } else if (arg == "--crop") {
      const auto v = parse_list(arg, next(), 4, 4);
      for (double x : v) {
        if (x < 0 || x != std::floor(x) || x > 1e9) usage_error("bad value for --crop");
      }
      o.folder.preprocess.crop = ad::Region{static_cast<int>(v[0]), static_cast<int>(v[1]),
                                            static_cast<int>(v[2]), static_cast<int>(v[3])};
    } else if (arg == "--bin") {
      const auto v = parse_list(arg, next(), 1, 2);
      for (double x : v) {
        if (x < 1 || x != std::floor(x) || x > 1024) usage_error("bad value for --bin");
      }
      o.folder.preprocess.bin_u = static_cast<int>(v[0]);
      o.folder.preprocess.bin_v = static_cast<int>(v.size() > 1 ? v[1] : v[0]);
    } else if (arg == "--flip-u") {
      o.folder.preprocess.flip_u = true;
    } else if (arg == "--flip-v") {
      o.folder.preprocess.flip_v = true;
    } else if (arg == "--read-threads") {
      o.read_threads = parse_int(arg, next(), 1, 256);
    } else if (arg == "--filter") {
      const std::string v = next();
      if (v == "ram-lak") o.window_kind = FDK_WINDOW_RAM_LAK;
      else if (v == "shepp-logan") o.window_kind = FDK_WINDOW_SHEPP_LOGAN;
      else if (v == "cosine") o.window_kind = FDK_WINDOW_COSINE;
      else if (v == "hamming") o.window_kind = FDK_WINDOW_HAMMING;
      else if (v == "hann") o.window_kind = FDK_WINDOW_HANN;
      else usage_error("bad value for --filter: '" + v + "'");
    } else if (arg == "--cutoff") {
      o.cutoff = parse_number(arg, next());
      if (!(o.cutoff > 0 && o.cutoff <= 1)) usage_error("--cutoff must lie in (0, 1] (a fraction of Nyquist)");
    } else if (arg == "--short-scan") {
      o.short_scan = parse_switch(arg, next());
    } else if (arg == "--offset-detector") {
      o.offset_detector = parse_switch(arg, next());
    } else if (arg == "--padding") {
      o.padding = parse_number(arg, next());
      if (!(o.padding >= 0 && o.padding <= 1)) usage_error("--padding must lie in [0, 1] (a fraction of the width)");
    } else if (arg == "--backend") {
      const std::string v = next();
      if (v == "auto") o.backend = FDK_BACKEND_AUTO;
      else if (v == "cpu") o.backend = FDK_BACKEND_CPU;
      else if (v == "cuda") o.backend = FDK_BACKEND_CUDA;
      else usage_error("bad value for --backend: '" + v + "'");
    } else if (arg == "--gpus") {
      const std::string v = next();
      o.gpus.clear();
      if (v != "all") {
        for (double g : parse_list(arg, v, 1, FDK_MAX_DEVICES)) {
          if (g < 0 || g != std::floor(g) || g > 1024) usage_error("bad value for --gpus");
          o.gpus.push_back(static_cast<int>(g));
        }
      }
    } else if (arg == "--host-memory") {
      o.host_memory = parse_size(arg, next());
    } else if (arg == "--gpu-memory") {
      o.gpu_memory = parse_size(arg, next());
    } else if (arg == "--outside-fov") {
      const std::string v = next();
      if (v == "backproject") o.outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;
      else if (v == "zero") o.outside_fov = FDK_OUTSIDE_FOV_ZERO;
      else usage_error("bad value for --outside-fov: '" + v + "' (backproject or zero)");
    } else if (arg == "--precision") {
      const std::string v = next();
      if (v == "float32") o.precision = FDK_PRECISION_FLOAT32;
      else if (v == "float16") o.precision = FDK_PRECISION_FLOAT16;
      else usage_error("bad value for --precision: '" + v + "'");
    } else if (arg == "--threads") {
      o.threads = parse_int(arg, next(), 0, 1024);  // the library's limit
    } else if (arg == "--slab-thickness") {
      o.slab_thickness = parse_int(arg, next(), 0, 1 << 24);
    } else if (arg == "--format") {
      o.format = next();
      if (o.format != "tiff" && o.format != "bigtiff" && o.format != "mha") {
        usage_error("bad value for --format: '" + o.format + "' (tiff, bigtiff or mha)");
      }
    } else if (arg == "--output-type") {
      const std::string v = next();
      if (v == "float32") o.type = ad::VoxelType::kFloat32;
      else if (v == "uint16") o.type = ad::VoxelType::kUInt16;
      else usage_error("bad value for --output-type: '" + v + "'");
    } else if (arg == "--window") {
      const auto v = parse_list(arg, next(), 2, 2);
      if (!(v[1] > v[0])) usage_error("--window needs LO < HI");
      o.have_window = true;
      o.window_lo = v[0];
      o.window_hi = v[1];
    } else if (arg == "--prefix") {
      o.prefix = next();
      if (o.prefix.empty() || o.prefix.find('/') != std::string::npos) {
        usage_error("--prefix must be a plain file name prefix");
      }
    } else if (arg == "--compression") {
      const std::string v = next();
      if (v == "none") o.compression = ad::TiffWriteOptions::Compression::kNone;
      else if (v == "lzw") o.compression = ad::TiffWriteOptions::Compression::kLzw;
      else if (v == "deflate") o.compression = ad::TiffWriteOptions::Compression::kDeflate;
      else usage_error("bad value for --compression: '" + v + "'");
    } else if (arg == "--no-preview") {
      o.preview = false;
    } else if (arg == "--force") {
      o.force = true;
    } else if (arg == "--quiet" || arg == "-q") {
      o.quiet = true;
    } else if (arg == "--progress") {
      const std::string v = next();
      if (v == "auto") o.progress = fdk_tools::ProgressStyle::kAuto;
      else if (v == "bar") o.progress = fdk_tools::ProgressStyle::kBar;
      else if (v == "lines") o.progress = fdk_tools::ProgressStyle::kLines;
      else if (v == "none") o.progress = fdk_tools::ProgressStyle::kNone;
      else usage_error("bad value for --progress: '" + v + "'");
    } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
      usage_error("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  if (positional.size() != 2) {
    usage_error(positional.size() < 2 ? "expected PROJECTIONS_DIR and OUTPUT_DIR"
                                      : "unexpected argument '" + positional[2] + "'");
  }
  o.projections = positional[0];
  o.output = positional[1];
  if (o.type == ad::VoxelType::kUInt16 && !o.have_window) {
    usage_error("--output-type uint16 needs --window LO,HI (the values mapped to 0 and 65535)");
  }
  if (o.quiet) o.progress = fdk_tools::ProgressStyle::kNone;
  return o;
}

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  }
  return true;
}

std::string describe_status(fdk_status s, const char* message) {
  const std::string name = fdk_status_string(s);
  const std::string text = message ? message : "";
  if (text.empty()) return name;
  if (text.compare(0, name.size(), name) == 0) return text;
  return name + ": " + text;
}

// Owns the library handle.
struct Context {
  fdk_context* ctx = nullptr;
  ~Context() { fdk_destroy(ctx); }
  [[noreturn]] void fail(const char* what, fdk_status s) const {
    if (s == FDK_ERROR_CANCELLED && g_signal.load()) {
      throw Failure{kExitInterrupted, std::string("interrupted by signal ") +
                                          std::to_string(g_signal.load())};
    }
    throw Failure{kExitReconstruction,
                  std::string(what) + " failed: " + describe_status(s, fdk_last_error(ctx))};
  }
};

// Decodes projections on worker threads, handing them out in index order
// through a ring of `depth` slots (bounded memory).
class OrderedReader {
 public:
  OrderedReader(const ad::ProjectionFolder& folder, int workers, int depth)
      : folder_(folder), depth_(depth), slots_(static_cast<size_t>(depth)) {
    const size_t pixels = static_cast<size_t>(folder.width()) * folder.height();
    for (Slot& s : slots_) s.data.resize(pixels);
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }
  ~OrderedReader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // Blocks until projection i is decoded; rethrows its error.
  const float* get(int i, size_t* clamped) {
    Slot& s = slots_[static_cast<size_t>(i % depth_)];
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return (s.ready && s.index == i) || stop_; });
    if (s.error) std::rethrow_exception(s.error);
    *clamped = s.clamped;
    return s.data.data();
  }
  void release(int i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Slot& s = slots_[static_cast<size_t>(i % depth_)];
      s.ready = false;
      s.index = -1;
      released_ = i + 1;
    }
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<float> data;
    int index = -1;
    bool ready = false;
    size_t clamped = 0;
    std::exception_ptr error;
  };

  void work() {
    ad::ProjectionFolder::Workspace ws;
    for (;;) {
      int i;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (stop_ || next_ >= folder_.count()) return;
        i = next_++;
        cv_.wait(lock, [&] { return stop_ || i < released_ + depth_; });
        if (stop_) return;
      }
      Slot& s = slots_[static_cast<size_t>(i % depth_)];
      std::exception_ptr error;
      size_t clamped = 0;
      try {
        clamped = folder_.read(i, s.data.data(), ws);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        s.index = i;
        s.clamped = clamped;
        s.error = error;
        s.ready = true;
      }
      cv_.notify_all();
    }
  }

  const ad::ProjectionFolder& folder_;
  const int depth_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int next_ = 0, released_ = 0;
  bool stop_ = false;
};

std::string fmt(const char* format, double a) {
  char b[64];
  std::snprintf(b, sizeof b, format, a);
  return b;
}

int run(const Options& o) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  auto say = [&](const std::string& text) {
    if (!o.quiet) std::fprintf(stderr, "%s\n", text.c_str());
  };

  // ---- geometry files ------------------------------------------------------------
  ad::ScanDescription desc;
  std::vector<fdk_view> xml_views;
  bool have_xml = false;
  for (const std::string& g : o.geometry_files) {
    if (ends_with(g, ".xml")) {
      if (have_xml) usage_error("two XML geometry files given");
      xml_views = ad::read_rtk_geometry(g);
      have_xml = true;
    } else if (ends_with(g, ".ini") || ends_with(g, ".cfg") || ends_with(g, ".txt")) {
      desc.merge(ad::read_scan_ini(g));
    } else {
      usage_error("--geometry '" + g + "': expected an RTK .xml file or an .ini description");
    }
  }
  desc.merge(o.flags);
  if (have_xml && (desc.sid || desc.sdd || desc.start_angle || desc.arc || desc.direction ||
                   desc.projection_offset || desc.source_offset || desc.in_plane_angle ||
                   desc.out_of_plane_angle)) {
    usage_error("the RTK geometry file gives every view's geometry: do not also give sid, sdd, "
                "angles or offsets (flags or INI)");
  }
  // ---- projections ---------------------------------------------------------------
  const ad::ProjectionFolder folder(o.projections, o.folder);
  const int count = folder.count();
  {
    std::string line = "fdk-convert: " + std::to_string(count) + " projections of " +
                       std::to_string(folder.raw_width()) + " x " +
                       std::to_string(folder.raw_height()) + " " +
                       ad::sample_type_name(folder.sample_type()) + " in '" + o.projections +
                       "' (" + (folder.raw() ? "raw intensities" : "line integrals");
    if (folder.dark_frames()) line += ", dark: " + std::to_string(folder.dark_frames()) + " frames";
    if (folder.flat_frames()) line += ", flat: " + std::to_string(folder.flat_frames()) + " frames";
    const auto& r = folder.preprocessor().report();
    if (r.bad_total) {
      line += ", " + std::to_string(r.bad_total) + " bad pixels replaced";
      if (r.flat_not_above_dark + r.flat_saturated + r.calibration_non_finite) {
        line += " (" + std::to_string(r.flat_not_above_dark + r.flat_saturated +
                                      r.calibration_non_finite) +
                " from the flat field)";
      }
    }
    say(line + ")");
  }

  // ---- detector, views, volume --------------------------------------------------------
  // The library's limits, checked here so that the exit code says whose
  // fault it is: the input's (3) or the options' (2), not the library's (5).
  {
    const auto& pp = o.folder.preprocess;
    const bool reshaped = pp.crop.width > 0 || pp.crop.height > 0 || pp.bin_u > 1 || pp.bin_v > 1;
    auto outside = [](int n) { return n < 2 || n > kMaxExtent; };
    if (outside(folder.width()) || outside(folder.height())) {
      const std::string raw = std::to_string(folder.raw_width()) + " x " + std::to_string(folder.raw_height());
      const std::string limit = ": the detector must have 2 to " + std::to_string(kMaxExtent) + " pixels per axis";
      if (!reshaped) {
        throw Failure{kExitInput, "the projections in '" + o.projections + "' are " + raw + " pixels" + limit};
      }
      usage_error("--crop/--bin leave " + std::to_string(folder.width()) + " x " +
                  std::to_string(folder.height()) + " of the " + raw + " pixels of the projections" + limit);
    }
  }
  if (!desc.pixel_size) {
    const auto tagged = folder.raw_pixel_size_mm();
    if (!(tagged[0] > 0 && tagged[1] > 0)) {
      throw Failure{kExitUsage,
                    "the detector pixel size is not given: no --pixel-size, no detector.pixel_size in an INI "
                    "description, and '" + folder.describe(0) +
                        "' has no resolution tags (ResolutionUnit centimetre or inch with XResolution and "
                        "YResolution)"};
    }
    desc.pixel_size = tagged;
    say("pixel size: " + fmt("%.6g", tagged[0]) + " x " + fmt("%.6g", tagged[1]) +
        " mm, from the TIFF resolution tags");
  }
  fdk_detector raw_detector = ad::centred_detector(folder.raw_width(), folder.raw_height(),
                                                   (*desc.pixel_size)[0], (*desc.pixel_size)[1]);
  if (desc.detector_origin) {
    raw_detector.origin[0] = (*desc.detector_origin)[0];
    raw_detector.origin[1] = (*desc.detector_origin)[1];
  }
  const fdk_detector detector = folder.preprocessor().processed_detector(raw_detector);
  if (desc.detector_size &&
      ((*desc.detector_size)[0] != detector.size[0] || (*desc.detector_size)[1] != detector.size[1])) {
    throw Failure{kExitInput, "the geometry says the detector is " +
                                  std::to_string((*desc.detector_size)[0]) + " x " +
                                  std::to_string((*desc.detector_size)[1]) +
                                  " pixels but the (processed) projections are " +
                                  std::to_string(detector.size[0]) + " x " +
                                  std::to_string(detector.size[1])};
  }
  fdk_scan scan;
  if (have_xml) {
    if (desc.views && *desc.views != static_cast<int>(xml_views.size())) {
      usage_error("views = " + std::to_string(*desc.views) + " contradicts the geometry file's " +
                  std::to_string(xml_views.size()) + " views");
    }
    if (static_cast<int>(xml_views.size()) != count) {
      throw Failure{kExitInput, "the geometry file describes " + std::to_string(xml_views.size()) +
                                    " views but '" + o.projections + "' holds " +
                                    std::to_string(count) + " projections"};
    }
    fdk_scan_init(&scan);
    scan.kind = FDK_SCAN_VIEWS;
    scan.num_views = count;
    scan.views = xml_views.data();
  } else {
    if (desc.views && *desc.views != count) {
      throw Failure{kExitInput, "the geometry announces " + std::to_string(*desc.views) +
                                    " views but '" + o.projections + "' holds " +
                                    std::to_string(count) + " projections"};
    }
    try {
      scan = ad::uniform_scan(desc, count);
    } catch (const ad::Error& e) {
      usage_error(e.what());
    }
  }
  const fdk_view first_view = have_xml ? xml_views[0] : [&] {
    fdk_view v = scan.uniform;
    v.gantry_angle_deg = scan.first_angle_deg;
    return v;
  }();
  fdk_volume volume = ad::default_volume(detector, first_view);
  const bool default_volume = !desc.volume_size && !desc.volume_spacing && !desc.volume_origin;
  {
    const fdk_volume fov = volume;
    if (desc.volume_spacing) {
      for (int a = 0; a < 3; ++a) {
        volume.spacing[a] = (*desc.volume_spacing)[a];
        volume.size[a] = std::max(
            1, static_cast<int>(std::ceil(fov.size[a] * fov.spacing[a] / volume.spacing[a] - 1e-9)));
      }
    }
    if (desc.volume_size) {
      for (int a = 0; a < 3; ++a) volume.size[a] = (*desc.volume_size)[a];
    }
    for (int a = 0; a < 3; ++a) {
      if (volume.size[a] > kMaxExtent) {
        const std::string why = "a voxel of " + fmt("%.6g", volume.spacing[a]) + " mm makes the volume " +
                                std::to_string(volume.size[a]) + " voxels along " + "xyz"[a] +
                                " (at most " + std::to_string(kMaxExtent) + "): give a larger voxel or --volume-size";
        if (o.flags.volume_spacing) usage_error("--voxel-size: " + why);
        throw Failure{kExitInput, "the geometry's volume.spacing: " + why};
      }
    }
    for (int a = 0; a < 3; ++a) {
      if (desc.volume_origin) {
        volume.origin[a] = (*desc.volume_origin)[a];
      } else {  // centred where the field of view is
        const double centre = fov.origin[a] + 0.5 * (fov.size[a] - 1) * fov.spacing[a];
        volume.origin[a] = centre - 0.5 * (volume.size[a] - 1) * volume.spacing[a];
      }
    }
  }

  // ---- the library ----------------------------------------------------------------------
  fdk_config config;
  fdk_config_init(&config);
  config.volume = volume;
  config.detector = detector;
  config.scan = scan;
  config.window = o.window_kind;
  config.cutoff = o.cutoff;
  config.short_scan = o.short_scan;
  config.offset_detector = o.offset_detector;
  config.outside_fov = o.outside_fov;
  config.truncation_padding = o.padding;
  config.backend = o.backend;
  config.num_devices = static_cast<int32_t>(o.gpus.size());
  for (size_t g = 0; g < o.gpus.size(); ++g) config.devices[g] = o.gpus[g];
  config.host_memory_budget = o.host_memory;
  config.gpu_memory_budget = o.gpu_memory;
  config.precision = o.precision;
  config.num_threads = o.threads;
  config.slab_thickness = o.slab_thickness;
  Context lib;
  if (const fdk_status s = fdk_create(&config, &lib.ctx); s != FDK_OK) {
    // Every value in the configuration came from the options or the input
    // and was checked above; a value the library still refuses is reported
    // as a bad option value (2), never as a failed reconstruction (5).
    const bool refused = s == FDK_ERROR_INVALID_ARGUMENT || s == FDK_ERROR_OUT_OF_RANGE;
    throw Failure{refused ? kExitUsage : kExitReconstruction,
                  "cannot set up the reconstruction: " + describe_status(s, fdk_last_create_error())};
  }
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  if (const fdk_status s = fdk_get_plan_info(lib.ctx, &plan); s != FDK_OK) lib.fail("fdk_get_plan_info", s);
  say("detector: " + std::to_string(detector.size[0]) + " x " + std::to_string(detector.size[1]) +
      " pixels of " + fmt("%.4g", detector.spacing[0]) + " x " + fmt("%.4g", detector.spacing[1]) +
      " mm; " + (have_xml ? "views from '" + o.geometry_files[0] + "'" : "uniform " +
      fmt("%.4g", scan.arc_deg) + " deg scan from " + fmt("%.4g", scan.first_angle_deg) + " deg") +
      ", SID " + fmt("%.6g", first_view.sid) + " mm, SDD " + fmt("%.6g", first_view.sdd) + " mm");
  say("volume: " + std::to_string(volume.size[0]) + " x " + std::to_string(volume.size[1]) +
      " x " + std::to_string(volume.size[2]) + " voxels of " + fmt("%.4g", volume.spacing[0]) +
      " x " + fmt("%.4g", volume.spacing[1]) + " x " + fmt("%.4g", volume.spacing[2]) + " mm" +
      (default_volume ? " (default: the field of view)" : "") + "; " +
      (plan.backend == FDK_BACKEND_CUDA ? "CUDA" : "CPU") + " backend, " +
      std::to_string(plan.num_slabs) + " slab" + (plan.num_slabs == 1 ? "" : "s") + " of " +
      std::to_string(plan.slab_thickness) + " planes" + (plan.short_scan ? ", short scan" : ""));
  say("half fan: " + std::string(plan.offset_detector ? "on" : "off") + " (the rays through the detector's edges pass " +
      fmt("%.4g", -plan.half_fan_inferior) + " mm and " + fmt("%.4g", plan.half_fan_superior) +
      " mm from the rotation axis" +
      (o.offset_detector == FDK_AUTO ? "" : ", forced by --offset-detector") + ")");
  {
    const double total = static_cast<double>(volume.size[0]) * volume.size[1] * volume.size[2];
    say("field of view: " + std::to_string(plan.voxels_outside_fov) + " voxels (" +
        fmt("%.3g", 100.0 * static_cast<double>(plan.voxels_outside_fov) / total) + " %) outside, " +
        (plan.outside_fov == FDK_OUTSIDE_FOV_ZERO ? "set to 0 (--outside-fov zero)"
                                                  : "backprojected as rtkfdk does (--outside-fov zero sets them to 0)"));
  }
  // What the host budget leaves the projections, and whether the scan fits
  // there (the library stores later views as float16 rather than fail, and
  // says so at the end).
  const auto bytes_text = [](uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    return b >= 1024.0 * 1024 * 1024 ? fmt("%.4g", b / (1024.0 * 1024 * 1024)) + " GiB"
                                     : fmt("%.4g", b / (1024.0 * 1024)) + " MiB";
  };
  const bool reduce = plan.store_policy == FDK_STORE_REDUCE_PRECISION;
  say("store: " + bytes_text(plan.store_limit) + " for the projections (of a " + bytes_text(plan.host_memory_budget) +
      " host budget, --host-memory); " +
      (plan.store_fit == FDK_STORE_FITS
           ? std::string("the scan fits for certain") + (reduce ? " (at worst with some views as float16)" : "")
       : plan.store_fit == FDK_STORE_LIKELY
           ? std::string("the scan fits at the compression typical of noisy projections") +
                 (reduce ? " (views beyond the budget as float16)" : "")
           : std::string("the scan is unlikely to fit, even as float16: give more --host-memory")));

  // ---- output (opened now so an unwritable folder fails before the work) ------------------
  ad::make_directories(o.output);
  ad::VolumeWriterOptions wo;
  wo.type = o.type;
  wo.window_lo = o.window_lo;
  wo.window_hi = o.window_hi;
  wo.description = "fdk-convert from '" + o.projections + "'";
  ad::WriteFaultInjection fault;
  if (const char* env = std::getenv("FDK_CONVERT_FAIL_AFTER_BYTES")) {  // test hook
    fault.fail_after_bytes = std::strtoull(env, nullptr, 10);
    wo.fault = &fault;
  }
  const std::string first_output =
      o.format == "tiff" ? ad::join_path(o.output, ad::slice_file_name(o.prefix, 0, volume.size[1]))
      : o.format == "bigtiff" ? ad::join_path(o.output, "volume.tif")
                              : ad::join_path(o.output, "volume.mha");
  if (!o.force && ad::is_regular_file(first_output)) {
    usage_error("'" + first_output + "' exists; use --force to replace the output");
  }
  {  // Can we create files there at all?
    ad::OutputFile probe(ad::join_path(o.output, ".fdk-convert-probe"));
    probe.discard();
  }
  std::unique_ptr<ad::VolumeWriter> writer;
  if (o.format == "tiff") {
    writer = ad::make_tiff_slice_writer(o.output, o.prefix, volume, wo, o.compression);
  } else if (o.format == "bigtiff") {
    writer = ad::make_bigtiff_writer(first_output, volume, wo, o.compression);
  } else {
    writer = ad::make_metaimage_writer(first_output, volume, wo);
  }

  // ---- a watchdog: signals cancel the library ------------------------------------------
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    while (!done.load()) {
      if (g_signal.load()) {
        fdk_cancel(lib.ctx);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  struct Joiner {
    std::atomic<bool>& done;
    std::thread& t;
    ~Joiner() {
      done = true;
      t.join();
    }
  } joiner{done, watchdog};

  fdk_tools::Progress progress(o.progress);
  // ---- read, correct, push ---------------------------------------------------------------
  size_t clamped_total = 0;
  int clamped_views = 0;
  {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int workers = o.read_threads > 0 ? o.read_threads : static_cast<int>(std::min(4u, hw));
    OrderedReader reader(folder, workers, workers + 2);  // frames in flight: workers + 2
    progress.stage("projections", "views", count);
    const size_t pitch = static_cast<size_t>(detector.size[0]) * sizeof(float);
    for (int i = 0; i < count; ++i) {
      if (g_signal.load()) throw Failure{kExitInterrupted, "interrupted"};
      size_t clamped = 0;
      const float* pixels = reader.get(i, &clamped);
      if (clamped) {
        clamped_total += clamped;
        ++clamped_views;
      }
      const fdk_status s = fdk_push_projection(lib.ctx, i, pixels, pitch, nullptr);
      if (s == FDK_ERROR_INVALID_ARGUMENT) {  // the projection's values: unusable input
        throw Failure{kExitInput, folder.describe(i) + ": " + describe_status(s, fdk_last_error(lib.ctx))};
      }
      if (s != FDK_OK) {
        Failure f{kExitReconstruction, ""};
        try {
          lib.fail(("pushing " + folder.describe(i)).c_str(), s);
        } catch (Failure& e) {
          f = e;
        }
        throw f;
      }
      reader.release(i);
      progress.add();
    }
    progress.end_stage();
  }
  if (const fdk_status s = fdk_finish(lib.ctx); s != FDK_OK) lib.fail("fdk_finish", s);
  {
    fdk_store_info store{};
    store.struct_size = sizeof store;
    if (fdk_get_store_info(lib.ctx, &store) == FDK_OK && store.views_reduced > 0) {
      progress.message("note: " + std::to_string(store.views_reduced) + " of " + std::to_string(store.views_stored) +
                       " projections were stored as float16 (the host budget could not hold them as float32): "
                       "their error is at most " + fmt("%.3g", store.rel_error_bound) + " relative + " +
                       fmt("%.3g", store.abs_error_bound_factor) + " of their row band's largest value");
    }
  }
  if (clamped_total) {
    progress.message("note: " + std::to_string(clamped_total) + " pixels in " +
                     std::to_string(clamped_views) +
                     " projections had a transmission below the clamp (" +
                     fmt("%g", o.folder.preprocess.min_transmission) + ") and were clamped");
  }

  // ---- slabs out ---------------------------------------------------------------------------
  int32_t slabs = 0;
  if (const fdk_status s = fdk_slab_count(lib.ctx, &slabs); s != FDK_OK) lib.fail("fdk_slab_count", s);
  fdk_tools::PreviewCollector preview(volume);
  std::vector<float> buffer;
  progress.stage("volume", "planes", volume.size[1]);
  for (int32_t k = 0; k < slabs; ++k) {
    fdk_slab_info info{};
    info.struct_size = sizeof info;
    if (const fdk_status s = fdk_get_slab_info(lib.ctx, k, &info); s != FDK_OK) {
      lib.fail("fdk_get_slab_info", s);
    }
    buffer.resize(static_cast<size_t>(info.byte_size / sizeof(float)));
    if (const fdk_status s = fdk_read_slab(lib.ctx, k, buffer.data(), buffer.size() * sizeof(float));
        s != FDK_OK) {
      lib.fail("fdk_read_slab", s);
    }
    writer->write_planes(info.y_begin, info.y_end, buffer.data());
    if (o.preview) preview.add_planes(info.y_begin, info.y_end, buffer.data());
    progress.set(info.y_end);
  }
  progress.end_stage();
  if (g_signal.load()) throw Failure{kExitInterrupted, "interrupted"};
  writer->commit();
  std::string preview_path;
  if (o.preview) {
    preview_path = preview.write(ad::join_path(o.output, "preview"), o.have_window ? o.window_lo : 0,
                                 o.have_window ? o.window_hi : 0);
  }
  progress.stop();
  const auto outputs = writer->outputs();
  const double seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  say("done in " + fmt("%.1f", seconds) + " s: " +
      (outputs.size() > 1 ? "'" + outputs.front() + "' .. '" + outputs.back() + "'"
                          : "'" + outputs.front() + "'") +
      (preview_path.empty() ? "" : ", preview '" + preview_path + "'"));
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    const Options o = parse_options(argc, argv);
    return run(o);
  } catch (const Failure& f) {
    std::fprintf(stderr, "fdk-convert: %s%s\n", f.message.c_str(),
                 f.code == kExitUsage ? " (see --help)" : "");
    return f.code;
  } catch (const ad::Error& e) {
    int code = kExitInternal;
    switch (e.kind()) {
      case ad::ErrorKind::kInvalidArgument: code = kExitUsage; break;
      case ad::ErrorKind::kInput: code = kExitInput; break;
      case ad::ErrorKind::kUnsupported: code = kExitInput; break;
      case ad::ErrorKind::kOutput: code = kExitOutput; break;
    }
    std::fprintf(stderr, "fdk-convert: %s\n", e.what());
    return code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fdk-convert: out of memory\n");
    return kExitReconstruction;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-convert: internal error: %s\n", e.what());
    return kExitInternal;
  }
}
