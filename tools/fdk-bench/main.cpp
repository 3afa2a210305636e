// fdk-bench — times a full reconstruction through the public C API.
//
// The cases are those of design/BENCHMARKS.md: circular full scan over 360°,
// SID 1000 mm, SDD 1500 mm, a 256 mm cube centred on the isocentre, square
// detector pixels of 256 * 1.5 / U mm, detector centred. The projections are
// synthetic (smooth Gaussian blobs that orbit like a sinogram, plus a small
// hash noise, never zero), generated once before any timing and kept in host
// memory, so the figures are host-to-host like the peers'.
//
// Per run (one warm-up run, then --repeats timed runs, each on a new context):
//   filter+store  all fdk_push_projection calls (weight, ramp filter, compress)
//   finish        fdk_finish
//   read          all slabs through fdk_read_slab; on the CPU backend the
//                 backprojection runs inside this phase
//   end to end    first push to the last slab copied into host memory
// Backprojection seconds are the read phase; GUPS = N^3 * views / those.
//
// GPUs: --gpus N (default 1) uses CUDA ordinals 0..N-1. With N > 1 the same
// case then runs again on one GPU (same warm-up and repeats, same projections)
// and the scaling is the one-GPU median over the N-GPU median. Per GPU, the
// busy time (backprojection kernels) and slab computations come from
// fdk_get_device_stats. The peak resident host memory (VmHWM) is read after
// each configuration's runs.
//
// fdk-bench-seams is this program over the library's objects linked
// statically (fdk_testable) instead of libfdk.so, for A/B runs of what
// only the CUDA backend's test seams turn (fdk/kernels/test_seams.hpp):
// --plane-pairs on|off. The shipped library has no such knob.
#include <fdk/fdk.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <functional>
#include <thread>
#include <vector>

#include <dirent.h>
#include <unistd.h>

#include "gpu_code_line.hpp"

#ifdef FDK_BENCH_TEST_SEAMS
#include "fdk/kernels/test_seams.hpp"
#endif

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kPi = 3.14159265358979323846;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// ---- options -----------------------------------------------------------------

struct Options {
  std::string case_name;  // a, b, c, d, cpu or "" (explicit)
  int size = 0;           // N: the volume is N^3
  int views = 0;
  int det_u = 0;
  int det_v = 0;
  int backend = FDK_BACKEND_AUTO;
  int precision = FDK_PRECISION_FLOAT32;
  uint64_t budget_host = 0;
  uint64_t budget_gpu = 0;
  int threads = 0;
  int repeats = 3;
  int warmup = 1;
  int slab_thickness = 0;
  int pool = 0;  // distinct projections kept in memory; 0 = automatic
  double rate = 0;  // views per second, as a scanner delivers them; 0 = back to back
  int gpus = 1;     // CUDA ordinals 0..gpus-1 (config.num_devices)
  bool gpus_given = false;
  bool baseline = true;  // with gpus > 1, also run on one GPU
  bool page_locked = false;  // the slab buffer from fdk_alloc_host
  int outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;  // the library's default
  int plane_pairs = -1;  // fdk-bench-seams: 1 on, 0 off, -1 the shipped default
  std::string json;
  std::string commit;
  std::string command_line;
};

struct Case {
  const char* name;
  int size, views, det_u, det_v;
};

constexpr Case kCases[] = {
    {"a", 512, 360, 512, 512},
    {"b", 1024, 1200, 1024, 1012},
    {"c", 2048, 1200, 2048, 2048},
    {"d", 4096, 2400, 4096, 4096},
    {"cpu", 256, 360, 256, 256},
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "fdk-bench: %s (see --help)\n", message.c_str());
  std::exit(2);
}

void print_help() {
  std::printf(
      "usage: fdk-bench [--case a|b|c|d|cpu] [--size N --views K --det U V]\n"
      "                 [--backend auto|cpu|cuda] [--precision f32|f16]\n"
      "                 [--budget-host BYTES] [--budget-gpu BYTES] [--threads N]\n"
      "                 [--slab-thickness PLANES] [--repeats R] [--warmup W]\n"
      "                 [--pool P] [--rate VIEWS_PER_S] [--gpus N] [--no-baseline]\n"
      "                 [--page-locked] [--outside-fov backproject|zero]\n"
      "                 [--json FILE] [--commit TEXT]\n"
      "       fdk-bench-seams [the same] [--plane-pairs on|off]\n"
      "\n"
      "Cases (design/BENCHMARKS.md): a 512^3/360/512x512, b 1024^3/1200/1024x1012,\n"
      "c 2048^3/1200/2048x2048, d 4096^3/2400/4096x4096, cpu 256^3/360/256x256.\n"
      "Geometry: SID 1000 mm, SDD 1500 mm, 256 mm cube centred, detector pixel\n"
      "256*1.5/U mm, views over 360 degrees. Explicit --size/--views/--det override\n"
      "the case's values. Without any, the cpu case runs.\n"
      "BYTES accept suffixes K, M, G, T (powers of 1024, also KiB/MiB/GiB/TiB) and\n"
      "KB, MB, GB, TB (powers of 1000); 0 lets the library choose.\n"
      "--pool P keeps only P distinct projections in memory and pushes view i from\n"
      "pool[i %% P] (default: every view, unless they exceed a quarter of the RAM:\n"
      "then 64, as for case d).\n"
      "--rate R pushes view i no earlier than i/R seconds after the first, like a\n"
      "scanner; 'after last push' is then what a user waits once the scan ends.\n"
      "--gpus N uses CUDA devices 0..N-1 (default 1: a plain run stays on one GPU,\n"
      "where the library alone would take every GPU). With N > 1 the same case also\n"
      "runs on one GPU (same warm-up and repeats) and the scaling 1 GPU / N GPUs of\n"
      "the medians is reported, unless --no-baseline. Per GPU: busy time\n"
      "(backprojection kernels) and slabs computed, medians over the timed runs.\n"
      "The CPU backend has no GPUs: --backend cpu refuses --gpus N > 1.\n"
      "--page-locked reads the slabs into a buffer from fdk_alloc_host (page-locked\n"
      "when a GPU is usable: slabs come by DMA, without the library's bounce buffers);\n"
      "by default into ordinary memory.\n"
      "--outside-fov zero leaves the voxels outside the field of view at 0, not\n"
      "computed (default: backprojected, as rtkfdk; GUPS counts every voxel).\n"
      "--plane-pairs on|off (fdk-bench-seams only, for A/B runs): a resident CUDA\n"
      "volume backprojects its scan's first quarter as plane pairs, or not; the\n"
      "shipped library keeps them off (FaultPlan::plane_pairs).\n"
      "W warm-up runs (default 1; the first is checked for NaN/Inf; --warmup 0 skips\n"
      "it) precede the R timed runs (default 3); medians are reported, and the\n"
      "process's peak resident host memory (VmHWM) after the runs.\n");
}

uint64_t parse_bytes(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno != 0 || !(value >= 0)) {
    usage_error("bad byte count '" + text + "'");
  }
  std::string suffix(end);
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double factor = 1;
  if (suffix.empty() || suffix == "b") factor = 1;
  else if (suffix == "k" || suffix == "kib") factor = 1024.0;
  else if (suffix == "m" || suffix == "mib") factor = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gib") factor = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tib") factor = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "kb") factor = 1e3;
  else if (suffix == "mb") factor = 1e6;
  else if (suffix == "gb") factor = 1e9;
  else if (suffix == "tb") factor = 1e12;
  else usage_error("bad byte suffix in '" + text + "'");
  const double bytes = value * factor;
  if (bytes > 1.8e19) usage_error("byte count too large: '" + text + "'");
  return static_cast<uint64_t>(bytes);
}

int parse_int(const std::string& text, const char* what, int min_value) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno != 0 || value < min_value ||
      value > 1000000000L) {
    usage_error(std::string("bad value for ") + what + ": '" + text + "'");
  }
  return static_cast<int>(value);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) {
    if (i) o.command_line += ' ';
    o.command_line += argv[i];
  }
  bool explicit_size = false, explicit_views = false, explicit_det = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&](const char* what) -> std::string {
      if (i + 1 >= argc) usage_error(std::string("missing value for ") + what);
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      print_help();
      std::exit(0);
    } else if (arg == "--case") {
      o.case_name = next("--case");
    } else if (arg == "--size") {
      o.size = parse_int(next("--size"), "--size", 1);
      explicit_size = true;
    } else if (arg == "--views") {
      o.views = parse_int(next("--views"), "--views", 1);
      explicit_views = true;
    } else if (arg == "--det") {
      o.det_u = parse_int(next("--det"), "--det U", 1);
      o.det_v = parse_int(next("--det"), "--det V", 1);
      explicit_det = true;
    } else if (arg == "--backend") {
      const std::string v = next("--backend");
      if (v == "auto") o.backend = FDK_BACKEND_AUTO;
      else if (v == "cpu") o.backend = FDK_BACKEND_CPU;
      else if (v == "cuda") o.backend = FDK_BACKEND_CUDA;
      else usage_error("bad --backend '" + v + "'");
    } else if (arg == "--precision") {
      const std::string v = next("--precision");
      if (v == "f32" || v == "float32") o.precision = FDK_PRECISION_FLOAT32;
      else if (v == "f16" || v == "float16") o.precision = FDK_PRECISION_FLOAT16;
      else usage_error("bad --precision '" + v + "'");
    } else if (arg == "--budget-host") {
      o.budget_host = parse_bytes(next("--budget-host"));
    } else if (arg == "--budget-gpu") {
      o.budget_gpu = parse_bytes(next("--budget-gpu"));
    } else if (arg == "--threads") {
      o.threads = parse_int(next("--threads"), "--threads", 0);
    } else if (arg == "--repeats") {
      o.repeats = parse_int(next("--repeats"), "--repeats", 1);
    } else if (arg == "--warmup" || arg == "--warmups") {
      o.warmup = parse_int(next("--warmup"), "--warmup", 0);
    } else if (arg == "--gpus") {
      o.gpus = parse_int(next("--gpus"), "--gpus", 1);
      if (o.gpus > FDK_MAX_DEVICES) {
        usage_error("--gpus " + std::to_string(o.gpus) + ": at most " +
                    std::to_string(FDK_MAX_DEVICES) + " (FDK_MAX_DEVICES)");
      }
      o.gpus_given = true;
    } else if (arg == "--no-baseline") {
      o.baseline = false;
    } else if (arg == "--page-locked") {
      o.page_locked = true;
    } else if (arg == "--outside-fov") {
      const std::string v = next("--outside-fov");
      if (v == "backproject") o.outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;
      else if (v == "zero") o.outside_fov = FDK_OUTSIDE_FOV_ZERO;
      else usage_error("bad --outside-fov '" + v + "'");
    } else if (arg == "--slab-thickness") {
      o.slab_thickness = parse_int(next("--slab-thickness"), "--slab-thickness", 0);
    } else if (arg == "--pool") {
      o.pool = parse_int(next("--pool"), "--pool", 1);
    } else if (arg == "--rate") {
      const std::string text = next("--rate");
      char* end = nullptr;
      o.rate = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !(o.rate > 0)) usage_error("bad --rate '" + text + "'");
    } else if (arg == "--plane-pairs") {
      const std::string v = next("--plane-pairs");
      if (v == "on") o.plane_pairs = 1;
      else if (v == "off") o.plane_pairs = 0;
      else usage_error("bad --plane-pairs '" + v + "' (on or off)");
#ifndef FDK_BENCH_TEST_SEAMS
      usage_error("--plane-pairs is a test seam of the CUDA backend, which libfdk does not have: "
                  "use fdk-bench-seams");
#endif
    } else if (arg == "--json") {
      o.json = next("--json");
    } else if (arg == "--commit") {
      o.commit = next("--commit");
    } else {
      usage_error("unknown option '" + arg + "'");
    }
  }
  if (o.backend == FDK_BACKEND_CPU && o.gpus > 1) {
    usage_error("--gpus " + std::to_string(o.gpus) +
                " asks for GPUs, but --backend cpu has none (leave --gpus out or use "
                "--backend cuda)");
  }
  if (o.case_name.empty() && !explicit_size && !explicit_views && !explicit_det) {
    o.case_name = "cpu";
  }
  if (!o.case_name.empty()) {
    const Case* found = nullptr;
    for (const Case& c : kCases) {
      if (o.case_name == c.name) found = &c;
    }
    if (!found) usage_error("unknown --case '" + o.case_name + "'");
    if (!explicit_size) o.size = found->size;
    if (!explicit_views) o.views = found->views;
    if (!explicit_det) {
      o.det_u = found->det_u;
      o.det_v = found->det_v;
    }
    if (explicit_size || explicit_views || explicit_det) o.case_name += "+custom";
  } else {
    if (!explicit_size || !explicit_views || !explicit_det) {
      usage_error("without --case give all of --size, --views and --det");
    }
    o.case_name = "custom";
  }
  return o;
}

// ---- synthetic projections ---------------------------------------------------

uint32_t hash3(uint32_t a, uint32_t b, uint32_t c) {
  // A small integer mix (after Bob Jenkins' final()); deterministic everywhere.
  a -= c; a ^= (c << 4) | (c >> 28); c += b;
  b -= a; b ^= (a << 6) | (a >> 26); a += c;
  c -= b; c ^= (b << 8) | (b >> 24); b += a;
  a -= c; a ^= (c << 16) | (c >> 16); c += b;
  b -= a; b ^= (a << 19) | (a >> 13); a += c;
  c -= b; c ^= (b << 4) | (b >> 28); b += a;
  return c;
}

struct Blob {
  double amplitude;  // peak line integral
  double orbit;      // radius of its sinusoid, as a fraction of the width
  double phase;      // radians
  double centre_v;   // row centre, as a fraction of the height
  double sigma_u;    // as a fraction of the width
  double sigma_v;    // as a fraction of the height
};

constexpr Blob kBlobs[] = {
    {1.60, 0.00, 0.0, 0.50, 0.28, 0.30},  // the body: wide, on the axis
    {0.55, 0.18, 0.3, 0.40, 0.06, 0.08},
    {0.40, 0.25, 2.1, 0.62, 0.04, 0.05},
    {0.30, 0.10, 4.0, 0.55, 0.09, 0.04},
    {0.25, 0.30, 5.2, 0.35, 0.03, 0.10},
};

// One view: rows x cols floats, contiguous. Separable blobs, so the cost is a
// multiply-add per blob and pixel.
void make_projection(int view, int num_views, int cols, int rows, float* out) {
  const double angle = 2.0 * kPi * view / num_views;
  constexpr int kNumBlobs = sizeof(kBlobs) / sizeof(kBlobs[0]);
  std::vector<float> gu(static_cast<size_t>(kNumBlobs) * cols);
  std::vector<float> gv(static_cast<size_t>(kNumBlobs) * rows);
  for (int b = 0; b < kNumBlobs; ++b) {
    const Blob& blob = kBlobs[b];
    const double cu = cols * (0.5 + blob.orbit * std::sin(angle + blob.phase));
    const double cv = rows * blob.centre_v;
    const double su = blob.sigma_u * cols, sv = blob.sigma_v * rows;
    for (int u = 0; u < cols; ++u) {
      const double d = (u + 0.5 - cu) / su;
      gu[static_cast<size_t>(b) * cols + u] =
          static_cast<float>(blob.amplitude * std::exp(-0.5 * d * d));
    }
    for (int v = 0; v < rows; ++v) {
      const double d = (v + 0.5 - cv) / sv;
      gv[static_cast<size_t>(b) * rows + v] = static_cast<float>(std::exp(-0.5 * d * d));
    }
  }
  constexpr float kBase = 0.05f;      // never zero
  constexpr float kNoise = 0.004f;    // hash noise amplitude
  for (int v = 0; v < rows; ++v) {
    float* row = out + static_cast<size_t>(v) * cols;
    for (int u = 0; u < cols; ++u) row[u] = kBase;
    for (int b = 0; b < kNumBlobs; ++b) {
      const float wv = gv[static_cast<size_t>(b) * rows + v];
      if (wv < 1e-7f) continue;
      const float* g = &gu[static_cast<size_t>(b) * cols];
      for (int u = 0; u < cols; ++u) row[u] += wv * g[u];
    }
    for (int u = 0; u < cols; ++u) {
      const uint32_t h = hash3(static_cast<uint32_t>(view), static_cast<uint32_t>(v),
                               static_cast<uint32_t>(u) ^ 0x9e3779b9u);
      row[u] += kNoise * (static_cast<float>(h >> 8) * (1.0f / 16777216.0f));
    }
  }
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

// ---- small helpers -------------------------------------------------------------

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
  return buffer;
}

const char* backend_name(int backend) {
  switch (backend) {
    case FDK_BACKEND_AUTO: return "auto";
    case FDK_BACKEND_CPU: return "cpu";
    case FDK_BACKEND_CUDA: return "cuda";
    default: return "unknown";
  }
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm_utc{};
  gmtime_r(&now, &tm_utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {0};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = colon + 1;
        while (start < line.size() && line[start] == ' ') ++start;
        return line.substr(start);
      }
    }
  }
  return "";
}

// GPU model names from the NVIDIA driver's procfs, without any CUDA call:
// /proc/driver/nvidia/gpus/<pci id>/information holds "Model:  NVIDIA H200".
std::vector<std::string> gpu_models() {
  std::vector<std::string> models;
  DIR* dir = opendir("/proc/driver/nvidia/gpus");
  if (!dir) return models;
  std::vector<std::string> entries;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') entries.push_back(entry->d_name);
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end());
  for (const std::string& entry : entries) {
    std::ifstream in("/proc/driver/nvidia/gpus/" + entry + "/information");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Model:", 0) == 0) {
        size_t start = 6;
        while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
        models.push_back(line.substr(start));
      }
    }
  }
  return models;
}

// "STATUS_NAME: message", without repeating the name when the library's
// message already starts with it.
std::string describe(fdk_status status, const char* message) {
  const std::string name = fdk_status_string(status);
  const std::string text = message ? message : "";
  if (text.empty()) return name;
  if (text.compare(0, name.size(), name) == 0) return text;
  return name + ": " + text;
}

// ---- the benchmark ---------------------------------------------------------------

struct RunTimes {
  double create_s = 0;
  double push_s = 0;
  double finish_s = 0;
  double read_s = 0;
  double end_to_end_s = 0;
  double after_last_push_s = 0;  // the last push's return to the last slab read
  double destroy_s = 0;
  // The library's own accounting (fdk_get_timings).
  double filter_s = 0, store_s = 0, kernel_s = 0, upload_s = 0, download_s = 0;
};

struct Outcome {
  fdk_plan_info plan{};
  fdk_store_info store{};
  int32_t slab_count = 0;
};

[[noreturn]] void fail_create(fdk_status status) {
  std::fprintf(stderr, "fdk-bench: fdk_create failed: %s\n",
               describe(status, fdk_last_create_error()).c_str());
  std::exit(1);
}

void check(fdk_status status, fdk_context* ctx, const char* what) {
  if (status == FDK_OK) return;
  std::fprintf(stderr, "fdk-bench: %s failed: %s\n", what,
               describe(status, fdk_last_error(ctx)).c_str());
  fdk_destroy(ctx);
  std::exit(1);
}

// gpus: CUDA ordinals 0..gpus-1; left at the library's default (every usable
// GPU) on the CPU backend, which ignores it.
fdk_config make_config(const Options& o, int gpus) {
  fdk_config config;
  fdk_config_init(&config);
  const double extent = 256.0;  // mm, the cube
  const double voxel = extent / o.size;
  for (int axis = 0; axis < 3; ++axis) {
    config.volume.size[axis] = o.size;
    config.volume.spacing[axis] = voxel;
    config.volume.origin[axis] = -0.5 * extent + 0.5 * voxel;
  }
  const double pixel = 256.0 * 1.5 / o.det_u;
  config.detector.size[0] = o.det_u;
  config.detector.size[1] = o.det_v;
  config.detector.spacing[0] = pixel;
  config.detector.spacing[1] = pixel;
  config.detector.origin[0] = -0.5 * (o.det_u - 1) * pixel;
  config.detector.origin[1] = -0.5 * (o.det_v - 1) * pixel;
  config.scan.kind = FDK_SCAN_UNIFORM;
  config.scan.num_views = o.views;
  config.scan.first_angle_deg = 0.0;
  config.scan.arc_deg = 360.0;
  config.scan.uniform.sid = 1000.0;
  config.scan.uniform.sdd = 1500.0;
  config.backend = o.backend;
  if (o.backend != FDK_BACKEND_CPU) {
    config.num_devices = gpus;
    for (int d = 0; d < gpus; ++d) config.devices[d] = d;
  }
  config.precision = o.precision;
  config.outside_fov = o.outside_fov;
  config.host_memory_budget = o.budget_host;
  config.gpu_memory_budget = o.budget_gpu;
  config.num_threads = o.threads;
  config.slab_thickness = o.slab_thickness;
  return config;
}

struct VolumeCheck {
  uint64_t non_finite = 0;
  double sum = 0;
  float min = 0, max = 0;
  uint64_t count = 0;
};

void scan_piece(const float* data, size_t n, VolumeCheck& check_result) {
  for (size_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) {
      ++check_result.non_finite;
      continue;
    }
    if (check_result.count == 0) check_result.min = check_result.max = v;
    check_result.min = std::min(check_result.min, v);
    check_result.max = std::max(check_result.max, v);
    check_result.sum += v;
    ++check_result.count;
  }
}

// In a fixed number of pieces, summed in order, so that the mean does not
// depend on the machine; on threads, because one thread took 0.23 s per
// 256 MiB slab of (c), 30 s of device time per warm-up.
void scan_slab(const float* data, size_t n, VolumeCheck& check_result) {
  constexpr size_t kPieces = 16;
  std::vector<VolumeCheck> part(kPieces);
  std::vector<std::thread> threads;
  for (size_t p = 0; p < kPieces; ++p) {
    const size_t a = n * p / kPieces, b = n * (p + 1) / kPieces;
    try {
      threads.emplace_back(scan_piece, data + a, b - a, std::ref(part[p]));
    } catch (...) {
      scan_piece(data + a, b - a, part[p]);  // no thread to be had
    }
  }
  for (std::thread& t : threads) t.join();
  for (const VolumeCheck& r : part) {
    if (r.count > 0) {
      if (check_result.count == 0) check_result.min = r.min, check_result.max = r.max;
      check_result.min = std::min(check_result.min, r.min);
      check_result.max = std::max(check_result.max, r.max);
    }
    check_result.non_finite += r.non_finite;
    check_result.sum += r.sum;
    check_result.count += r.count;
  }
}

// ---- host memory ---------------------------------------------------------------

// The peak resident set of this process (VmHWM in /proc/self/status), bytes;
// 0 when unknown.
uint64_t peak_resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      unsigned long long kib = 0;
      if (std::sscanf(line.c_str() + 6, "%llu", &kib) == 1) return kib * 1024ull;
    }
  }
  return 0;
}

// Lowers VmHWM to the present resident set ("5" into /proc/self/clear_refs,
// Linux 4.0 on), so that a configuration's peak is its own; false when the
// kernel or the container refuses.
bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

// ---- one configuration: warm-up and timed runs ----------------------------------

struct Series {
  int gpus = 0;  // config.num_devices asked for; 0 on the CPU backend
  std::vector<RunTimes> runs;
  std::vector<fdk_device_stats> devices;  // one per timed run
  bool device_stats_ok = true;
  Outcome outcome;
  VolumeCheck volume_check;
  bool checked = false;          // the first warm-up's volume was scanned
  uint64_t peak_resident = 0;    // VmHWM after the runs
  bool peak_reset = false;       // VmHWM was lowered before the runs
};

struct Projections {
  std::vector<std::unique_ptr<float[]>> views;  // view i is pushed from views[i % pool]
  int pool = 0;
  size_t row_pitch = 0;
};

// The one slab-sized buffer every read goes to (slabs stream out and are
// discarded), reused across runs and configurations: ordinary memory, or
// with --page-locked from fdk_alloc_host.
class SlabBuffer {
 public:
  explicit SlabBuffer(bool page_locked) : page_locked_(page_locked) {}
  ~SlabBuffer() { release(); }
  SlabBuffer(const SlabBuffer&) = delete;
  SlabBuffer& operator=(const SlabBuffer&) = delete;
  // Grows to `bytes` (touched), or exits after reporting why it cannot.
  void reserve(uint64_t bytes) {
    if (bytes <= bytes_) return;
    release();
    const size_t floats = static_cast<size_t>(bytes / sizeof(float));
    if (page_locked_) {
      void* p = nullptr;
      const fdk_status s = fdk_alloc_host(floats * sizeof(float), &p);
      if (s != FDK_OK) {
        std::fprintf(stderr, "fdk-bench: fdk_alloc_host failed: %s\n", describe(s, fdk_last_create_error()).c_str());
        std::exit(1);
      }
      data_ = static_cast<float*>(p);
    } else {
      ordinary_.assign(floats, 1.0f);
      data_ = ordinary_.data();
    }
    std::fill(data_, data_ + floats, 1.0f);
    bytes_ = floats * sizeof(float);
  }
  float* data() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  bool page_locked() const { return page_locked_; }

 private:
  void release() {
    if (page_locked_ && data_) fdk_free_host(data_);
    ordinary_.clear();
    ordinary_.shrink_to_fit();
    data_ = nullptr;
    bytes_ = 0;
  }
  bool page_locked_;
  std::vector<float> ordinary_;
  float* data_ = nullptr;
  uint64_t bytes_ = 0;
};

// Runs o.warmup + o.repeats reconstructions on new contexts. label prefixes
// the per-run lines ("" or "baseline "). Returns false after a failure it
// has reported.
bool run_series(const Options& o, int gpus, const char* label, const Projections& p,
                SlabBuffer& slab_buffer, Series& series) {
  const fdk_config config = make_config(o, gpus);
  series.gpus = o.backend == FDK_BACKEND_CPU ? 0 : gpus;
  series.peak_reset = reset_peak_resident();
  const int total_runs = o.warmup + o.repeats;

  for (int run = 0; run < total_runs; ++run) {
    const bool warmup = run < o.warmup;
    const bool check_values = run == 0 && o.warmup > 0;  // never inside a timed run
    RunTimes t;

    const auto c0 = Clock::now();
    fdk_context* ctx = nullptr;
    const fdk_status created = fdk_create(&config, &ctx);
    const auto c1 = Clock::now();
    if (created != FDK_OK) fail_create(created);
    t.create_s = seconds_between(c0, c1);

    fdk_plan_info plan{};
    plan.struct_size = sizeof plan;
    check(fdk_get_plan_info(ctx, &plan), ctx, "fdk_get_plan_info");
    if (plan.backend == FDK_BACKEND_CPU && gpus > 1) {
      std::fprintf(stderr,
                   "fdk-bench: --gpus %d: the library chose the CPU backend (no usable CUDA "
                   "device), which has no GPUs\n",
                   gpus);
      fdk_destroy(ctx);
      return false;
    }
    if (plan.backend == FDK_BACKEND_CPU) series.gpus = 0;
    int32_t slabs = 0;
    check(fdk_slab_count(ctx, &slabs), ctx, "fdk_slab_count");
    std::vector<fdk_slab_info> infos(static_cast<size_t>(slabs));
    uint64_t largest = 0;
    for (int32_t s = 0; s < slabs; ++s) {
      infos[static_cast<size_t>(s)].struct_size = sizeof(fdk_slab_info);
      check(fdk_get_slab_info(ctx, s, &infos[static_cast<size_t>(s)]), ctx, "fdk_get_slab_info");
      largest = std::max(largest, infos[static_cast<size_t>(s)].byte_size);
    }
    slab_buffer.reserve(largest);

    const auto p0 = Clock::now();
    for (int view = 0; view < o.views; ++view) {
      if (o.rate > 0) std::this_thread::sleep_until(p0 + std::chrono::duration<double>(view / o.rate));
      const float* pixels = p.views[static_cast<size_t>(view % p.pool)].get();
      const fdk_status s = fdk_push_projection(ctx, view, pixels, p.row_pitch, nullptr);
      if (s != FDK_OK) {
        std::fprintf(stderr, "fdk-bench: fdk_push_projection(view %d) failed: %s\n", view,
                     describe(s, fdk_last_error(ctx)).c_str());
        fdk_destroy(ctx);
        return false;
      }
    }
    const auto p1 = Clock::now();
    check(fdk_finish(ctx), ctx, "fdk_finish");
    const auto f1 = Clock::now();
    for (int32_t s = 0; s < slabs; ++s) {
      const fdk_slab_info& info = infos[static_cast<size_t>(s)];
      const fdk_status st = fdk_read_slab(ctx, s, slab_buffer.data(), slab_buffer.bytes());
      if (st != FDK_OK) {
        std::fprintf(stderr, "fdk-bench: fdk_read_slab(%d) failed: %s\n", s,
                     describe(st, fdk_last_error(ctx)).c_str());
        fdk_destroy(ctx);
        return false;
      }
      if (check_values) {
        scan_slab(slab_buffer.data(), static_cast<size_t>(info.byte_size / sizeof(float)),
                  series.volume_check);
      }
    }
    const auto r1 = Clock::now();
    t.push_s = seconds_between(p0, p1);
    t.finish_s = seconds_between(p1, f1);
    t.read_s = seconds_between(f1, r1);
    t.end_to_end_s = seconds_between(p0, r1);
    t.after_last_push_s = seconds_between(p1, r1);

    Outcome& outcome = series.outcome;
    outcome.plan = plan;
    outcome.slab_count = slabs;
    outcome.store = fdk_store_info{};
    outcome.store.struct_size = sizeof outcome.store;
    check(fdk_get_store_info(ctx, &outcome.store), ctx, "fdk_get_store_info");
    fdk_timings timings{};
    timings.struct_size = sizeof timings;
    check(fdk_get_timings(ctx, &timings), ctx, "fdk_get_timings");
    t.filter_s = timings.filter_seconds;
    t.store_s = timings.store_seconds;
    t.kernel_s = timings.backproject_seconds;
    t.upload_s = timings.upload_seconds;
    t.download_s = timings.download_seconds;
    fdk_device_stats stats{};
    stats.struct_size = sizeof stats;
    const fdk_status ds = fdk_get_device_stats(ctx, &stats);
    if (ds != FDK_OK) {
      if (series.device_stats_ok) {
        std::fprintf(stderr, "fdk-bench: fdk_get_device_stats failed: %s (no per-GPU figures)\n",
                     describe(ds, fdk_last_error(ctx)).c_str());
      }
      series.device_stats_ok = false;
      stats = fdk_device_stats{};
      stats.struct_size = sizeof stats;
    }
    stats.num_devices = std::max(0, std::min<int32_t>(stats.num_devices, FDK_MAX_DEVICES));

    const auto d0 = Clock::now();
    fdk_destroy(ctx);
    t.destroy_s = seconds_between(d0, Clock::now());

    std::printf("%s%s %d: filter+store %.3f s, finish %.3f s, read %.3f s, end to end %.3f s\n",
                label, warmup ? "warm-up" : "run", warmup ? run + 1 : run - o.warmup + 1,
                t.push_s, t.finish_s, t.read_s, t.end_to_end_s);
    std::fflush(stdout);
    if (check_values) {
      series.checked = true;
      if (series.volume_check.non_finite != 0) {
        std::fprintf(stderr, "fdk-bench: the volume holds %llu NaN/Inf voxels\n",
                     static_cast<unsigned long long>(series.volume_check.non_finite));
        return false;
      }
    }
    if (!warmup) {
      series.runs.push_back(t);
      series.devices.push_back(stats);
    }
  }
  series.peak_resident = peak_resident_bytes();
  return true;
}

// ---- summaries of a series --------------------------------------------------------

std::vector<double> collect(const Series& s, double RunTimes::*field) {
  std::vector<double> v;
  for (const RunTimes& r : s.runs) v.push_back(r.*field);
  return v;
}

double median_of(const Series& s, double RunTimes::*field) { return median(collect(s, field)); }

// Per GPU, in the library's order: medians over the timed runs.
struct DeviceSummary {
  std::vector<int> ordinal;
  std::vector<double> busy_s;      // median busy_seconds
  std::vector<double> slabs;       // median slabs_computed
  std::vector<int> failed;         // 1 if it failed in any timed run
  double busiest_s = 0;            // the largest median busy time
  double total_s = 0;              // their sum
};

DeviceSummary summarize_devices(const Series& s) {
  DeviceSummary d;
  if (s.devices.empty()) return d;
  int n = FDK_MAX_DEVICES;
  for (const fdk_device_stats& st : s.devices) n = std::min(n, static_cast<int>(st.num_devices));
  for (int i = 0; i < n; ++i) {
    std::vector<double> busy, slabs;
    int failed = 0;
    for (const fdk_device_stats& st : s.devices) {
      busy.push_back(st.busy_seconds[i]);
      slabs.push_back(st.slabs_computed[i]);
      failed = std::max(failed, static_cast<int>(st.failed[i] != 0));
    }
    d.ordinal.push_back(s.devices.front().ordinal[i]);
    d.busy_s.push_back(median(busy));
    d.slabs.push_back(median(slabs));
    d.failed.push_back(failed);
    d.busiest_s = std::max(d.busiest_s, d.busy_s.back());
    d.total_s += d.busy_s.back();
  }
  return d;
}

std::string gpu_count_text(int gpus) {
  return std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
}

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

// Kernel rate from the busiest GPU's median busy time (the GPUs backproject
// side by side); the library's backprojection seconds when no GPU reports.
double kernel_gups(const Series& s, const DeviceSummary& d, double n3k) {
  const double seconds = d.busiest_s > 0 ? d.busiest_s : median_of(s, &RunTimes::kernel_s);
  return seconds > 0 ? n3k / seconds / 1e9 : 0;
}

struct Row {
  const char* name;
  const char* key;
  double RunTimes::*field;
};

constexpr Row kRows[] = {
    {"create (plan)", "create", &RunTimes::create_s},
    {"filter+store (push)", "filter_store", &RunTimes::push_s},
    {"finish", "finish", &RunTimes::finish_s},
    {"read (all slabs)", "read", &RunTimes::read_s},
    {"end to end", "end_to_end", &RunTimes::end_to_end_s},
    {"after last push", "after_last_push", &RunTimes::after_last_push_s},
    {"destroy", "destroy", &RunTimes::destroy_s},
    {"  filter (library)", "lib_filter", &RunTimes::filter_s},
    {"  store (library)", "lib_store", &RunTimes::store_s},
    {"  backprojection", "lib_backprojection", &RunTimes::kernel_s},
    {"  upload (library)", "lib_upload", &RunTimes::upload_s},
    {"  download (library)", "lib_download", &RunTimes::download_s},
};

template <typename T>
void json_array(std::ostringstream& j, const std::vector<T>& values) {
  j << "[";
  for (size_t i = 0; i < values.size(); ++i) j << (i ? ", " : "") << json_number(values[i]);
  j << "]";
}

// The keys a configuration's figures share between the top level (the
// configuration asked for) and "baseline"; each line ends with ",\n".
void json_series(std::ostringstream& j, const Series& s, double n3k, const char* indent) {
  const DeviceSummary d = summarize_devices(s);
  const double read_s = median_of(s, &RunTimes::read_s);
  const double e2e_s = median_of(s, &RunTimes::end_to_end_s);
  const double mean = s.volume_check.count ? s.volume_check.sum / s.volume_check.count : 0;
  j << indent << "\"gpus_used\": " << s.gpus << ",\n";
  j << indent << "\"volume_check\": {\"checked\": " << (s.checked ? "true" : "false")
    << ", \"min\": " << json_number(s.volume_check.min)
    << ", \"max\": " << json_number(s.volume_check.max) << ", \"mean\": " << json_number(mean)
    << ", \"non_finite\": " << s.volume_check.non_finite << "},\n";
  j << indent << "\"median_s\": {";
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; ++i) {
    j << (i ? ", " : "") << "\"" << kRows[i].key << "\": " << json_number(median_of(s, kRows[i].field));
  }
  j << "},\n";
  j << indent << "\"runs_s\": {";
  for (size_t i = 0; i < sizeof kRows / sizeof kRows[0]; ++i) {
    j << (i ? ", " : "") << "\"" << kRows[i].key << "\": ";
    json_array(j, collect(s, kRows[i].field));
  }
  j << "},\n";
  j << indent << "\"device_stats\": {\"available\": " << (s.device_stats_ok ? "true" : "false")
    << ", \"ordinal\": ";
  json_array(j, d.ordinal);
  j << ", \"busy_s_median\": ";
  json_array(j, d.busy_s);
  j << ", \"slabs_computed_median\": ";
  json_array(j, d.slabs);
  j << ", \"failed\": ";
  json_array(j, d.failed);
  j << ", \"busy_s_runs\": [";
  for (size_t r = 0; r < s.devices.size(); ++r) {
    const fdk_device_stats& st = s.devices[r];
    j << (r ? ", " : "");
    json_array(j, std::vector<double>(st.busy_seconds, st.busy_seconds + st.num_devices));
  }
  j << "], \"slabs_computed_runs\": [";
  for (size_t r = 0; r < s.devices.size(); ++r) {
    const fdk_device_stats& st = s.devices[r];
    j << (r ? ", " : "");
    json_array(j, std::vector<int>(st.slabs_computed, st.slabs_computed + st.num_devices));
  }
  j << "], \"failed_runs\": [";
  for (size_t r = 0; r < s.devices.size(); ++r) {
    const fdk_device_stats& st = s.devices[r];
    j << (r ? ", " : "");
    json_array(j, std::vector<int>(st.failed, st.failed + st.num_devices));
  }
  j << "], \"busiest_s\": " << json_number(d.busiest_s) << ", \"total_s\": "
    << json_number(d.total_s) << "},\n";
  j << indent << "\"host_peak_resident_bytes\": " << s.peak_resident << ",\n";
  j << indent << "\"host_peak_since\": \"" << (s.peak_reset ? "these runs" : "process start")
    << "\",\n";
  j << indent << "\"backprojection_s\": " << json_number(read_s) << ",\n";
  j << indent << "\"gups\": " << json_number(read_s > 0 ? n3k / read_s / 1e9 : 0) << ",\n";
  j << indent << "\"end_to_end_s\": " << json_number(e2e_s) << ",\n";
  j << indent << "\"gups_end_to_end\": " << json_number(e2e_s > 0 ? n3k / e2e_s / 1e9 : 0) << ",\n";
  j << indent << "\"kernel_gups\": " << json_number(kernel_gups(s, d, n3k)) << ",\n";
}

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
#ifdef FDK_BENCH_TEST_SEAMS
  if (o.plane_pairs >= 0) {
    fdk::cuda::FaultPlan plan;
    plan.plane_pairs = o.plane_pairs == 1;
    fdk::cuda::set_fault_plan(plan);
    std::printf("fdk-bench-seams: plane pairs %s (a test seam; the shipped library keeps them off)\n",
                plan.plane_pairs ? "on" : "off");
  }
#endif

  Projections projections;
  const size_t pixels_per_view = static_cast<size_t>(o.det_u) * o.det_v;
  const double bytes_per_view = 4.0 * static_cast<double>(pixels_per_view);
  // Every view when they fit in a quarter of the RAM; else (case d) 64
  // distinct views pushed cyclically, so that the bench's own memory stays
  // small next to the library's host budget (64 views of 4096^2: 4 GiB).
  constexpr int kLargePool = 64;
  int pool = o.pool;
  if (pool == 0) {
    const double cap = 0.25 * static_cast<double>(physical_memory_bytes());
    pool = o.views;
    if (cap > 0 && bytes_per_view * o.views > cap) {
      pool = std::max(1, std::min(kLargePool, static_cast<int>(cap / bytes_per_view)));
    }
  }
  pool = std::min(pool, o.views);
  projections.pool = pool;
  projections.row_pitch = static_cast<size_t>(o.det_u) * sizeof(float);

  std::printf("fdk-bench: fdk %s, case %s: volume %d^3 (%.4g mm voxels), %d views over 360 deg, "
              "detector %d x %d (%.4g mm pixels), SID 1000 mm, SDD 1500 mm\n",
              fdk_version_string(), o.case_name.c_str(), o.size, 256.0 / o.size, o.views, o.det_u,
              o.det_v, 256.0 * 1.5 / o.det_u);
  std::printf("generating %d synthetic projection%s (%s) ...\n", pool, pool == 1 ? "" : "s",
              human_bytes(bytes_per_view * pool).c_str());
  std::fflush(stdout);

  // Projections: generated once, before any timing; view i is pushed from
  // projections[i % pool].
  const auto g0 = Clock::now();
  projections.views.resize(static_cast<size_t>(pool));
  {
    std::atomic<int> next{0};
    const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < workers; ++t) {
      threads.emplace_back([&] {
        for (int view = next++; view < pool; view = next++) {
          projections.views[static_cast<size_t>(view)].reset(new float[pixels_per_view]);
          make_projection(view, o.views, o.det_u, o.det_v,
                          projections.views[static_cast<size_t>(view)].get());
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }
  const double generation_s = seconds_between(g0, Clock::now());
  std::printf("generated in %.2f s\n", generation_s);

  const bool with_baseline = o.gpus > 1 && o.baseline;
  SlabBuffer slab_buffer(o.page_locked);  // one slab, reused: slabs stream out
  Series main_series, base;
  if (with_baseline) std::printf("== %s\n", gpu_count_text(o.gpus).c_str());
  if (!run_series(o, o.gpus, "", projections, slab_buffer, main_series)) return 1;
  if (with_baseline) {
    std::printf("== 1 GPU (baseline)\n");
    if (!run_series(o, 1, "baseline ", projections, slab_buffer, base)) return 1;
  }

  // ---- report ----------------------------------------------------------------------
  const double n3k = std::pow(static_cast<double>(o.size), 3) * o.views;
  const double backprojection_s = median_of(main_series, &RunTimes::read_s);
  const double end_to_end_s = median_of(main_series, &RunTimes::end_to_end_s);
  const double gups = backprojection_s > 0 ? n3k / backprojection_s / 1e9 : 0;
  const double gups_e2e = end_to_end_s > 0 ? n3k / end_to_end_s / 1e9 : 0;
  const Outcome& outcome = main_series.outcome;
  const int used_backend = outcome.plan.backend;
  const fdk_store_info& store = outcome.store;
  const VolumeCheck& volume_check = main_series.volume_check;
  const double mean = volume_check.count ? volume_check.sum / volume_check.count : 0;
  const DeviceSummary devices = summarize_devices(main_series);
  std::string ordinals;
  for (int ordinal : devices.ordinal) ordinals += (ordinals.empty() ? "" : ", ") + std::to_string(ordinal);

  std::printf("\n");
  std::printf("backend         %s (requested %s), precision %s, %d threads",
              backend_name(used_backend), backend_name(o.backend),
              o.precision == FDK_PRECISION_FLOAT16 ? "f16" : "f32", outcome.plan.num_threads);
  if (used_backend == FDK_BACKEND_CUDA) {
    std::printf(", %s (%s %s)", gpu_count_text(o.gpus).c_str(),
                devices.ordinal.size() == 1 ? "ordinal" : "ordinals",
                ordinals.empty() ? "unknown" : ordinals.c_str());
  }
  std::printf(", outside the field of view %s (%llu voxels)\n",
              outcome.plan.outside_fov == FDK_OUTSIDE_FOV_ZERO ? "zero" : "backprojected",
              static_cast<unsigned long long>(outcome.plan.voxels_outside_fov));
  if (used_backend == FDK_BACKEND_CUDA) std::printf("gpu code        %s\n", gpu_code_line().c_str());
  std::printf("plan            %d slab%s of %d planes (y), host budget %s, gpu budget %s\n",
              outcome.slab_count, outcome.slab_count == 1 ? "" : "s", outcome.plan.slab_thickness,
              human_bytes(static_cast<double>(outcome.plan.host_memory_budget)).c_str(),
              outcome.plan.gpu_memory_budget
                  ? human_bytes(static_cast<double>(outcome.plan.gpu_memory_budget)).c_str()
                  : "-");
  static const char* const kFit[] = {"fits", "likely", "unlikely"};
  std::printf("store           %d views (%d as float16 by the policy), raw %s, stored %s, ratio %.3f; "
              "limit %s, plan: %s\n",
              store.views_stored, store.views_reduced, human_bytes(static_cast<double>(store.raw_bytes)).c_str(),
              human_bytes(static_cast<double>(store.stored_bytes)).c_str(), store.ratio,
              human_bytes(static_cast<double>(outcome.plan.store_limit)).c_str(),
              outcome.plan.store_fit >= 0 && outcome.plan.store_fit <= 2 ? kFit[outcome.plan.store_fit] : "?");
  const std::vector<std::string> gpus = gpu_models();
  std::string gpu_list;
  for (const std::string& g : gpus) gpu_list += (gpu_list.empty() ? "" : ", ") + g;
  std::printf("machine         %s; %s\n", cpu_model().c_str(),
              gpus.empty() ? "no NVIDIA GPU seen" : gpu_list.c_str());
  std::printf("projections     %d distinct in host memory%s, generated in %.2f s\n", pool,
              pool < o.views ? " (pushed cyclically)" : "", generation_s);
  if (o.rate > 0)
    std::printf("pushes          paced at %.1f views/s (a %.2f s scan)\n", o.rate, o.views / o.rate);
  else
    std::printf("pushes          back to back\n");
  if (main_series.checked) {
    std::printf("volume check    warm-up run: min %.4g, max %.4g, mean %.4g, no NaN/Inf\n",
                volume_check.min, volume_check.max, mean);
  } else {
    std::printf("volume check    skipped (no warm-up run)\n");
  }
  const double slab_buffer_bytes = static_cast<double>(slab_buffer.bytes());
  std::printf("host peak resident %.2f GiB (budget %.2f GiB; the peak counts the bench's "
              "projections %.2f GiB and slab buffer %.2f GiB%s, the budget does not)\n",
              gib(static_cast<double>(main_series.peak_resident)),
              gib(static_cast<double>(outcome.plan.host_memory_budget)),
              gib(bytes_per_view * pool), gib(slab_buffer_bytes),
              slab_buffer.page_locked() ? " from fdk_alloc_host" : "");
  std::printf("\n%-22s %10s %10s %10s   (%d run%s after %d warm-up)\n", "phase", "median s",
              "min s", "max s", o.repeats, o.repeats == 1 ? "" : "s", o.warmup);
  for (const Row& row : kRows) {
    const std::vector<double> v = collect(main_series, row.field);
    std::printf("%-22s %10.3f %10.3f %10.3f\n", row.name, median(v),
                *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()));
  }
  std::printf("\nbackprojection  %.3f s (the read phase%s) -> %.2f GUPS\n", backprojection_s,
              used_backend == FDK_BACKEND_CPU
                  ? "; on the CPU backend the backprojection runs inside fdk_read_slab"
                  : "; slabs resident during acquisition may be backprojected while pushing",
              gups);
  std::printf("end to end      %.3f s (first push to last slab read) -> %.2f GUPS\n",
              end_to_end_s, gups_e2e);
  const double kernel_s = median_of(main_series, &RunTimes::kernel_s);
  std::printf("kernel          %.3f s (%s) -> %.2f GUPS\n", kernel_s,
              used_backend == FDK_BACKEND_CPU ? "CPU backprojector, wall time"
                                              : "backprojection kernels, device events",
              kernel_s > 0 ? n3k / kernel_s / 1e9 : 0.0);
  std::printf("GUPS = N^3 x views / seconds, counting every voxel of the %d^3 cube (also those a "
              "backend skips outside the field of view)\n",
              o.size);

  if (!devices.ordinal.empty()) {
    std::printf("\nper GPU (medians over the %d timed run%s; busy = backprojection kernels, "
                "device events; slabs = slab computations from the store)\n",
                o.repeats, o.repeats == 1 ? "" : "s");
    for (size_t i = 0; i < devices.ordinal.size(); ++i) {
      std::printf("gpu %d  busy %.3f s  slabs %s  share %.1f%%%s\n", devices.ordinal[i],
                  devices.busy_s[i], number_text(devices.slabs[i]).c_str(),
                  100.0 * ratio(devices.busy_s[i], devices.total_s),
                  devices.failed[i] ? "  FAILED (its work went to the others)" : "");
    }
    std::printf("gpus busy       sum %.3f s, busiest %.3f s -> %.2f GUPS (N^3 x views / the "
                "busiest GPU's busy time)\n",
                devices.total_s, devices.busiest_s, kernel_gups(main_series, devices, n3k));
  } else if (used_backend == FDK_BACKEND_CUDA) {
    std::printf("\nper GPU         no figures (fdk_get_device_stats reported no GPU)\n");
  }

  if (with_baseline) {
    const DeviceSummary base_devices = summarize_devices(base);
    const std::string n_text = gpu_count_text(o.gpus);
    std::printf("\nbaseline        1 GPU (ordinal 0), %d run%s after %d warm-up, same projections "
                "and budgets; host peak resident %.2f GiB\n",
                o.repeats, o.repeats == 1 ? "" : "s", o.warmup,
                gib(static_cast<double>(base.peak_resident)));
    std::printf("  %-22s %10s %10s %9s\n", "medians", n_text.c_str(), "1 GPU", "scaling");
    struct Compare {
      const char* name;
      double RunTimes::*field;
    };
    const Compare compares[] = {
        {"end to end s", &RunTimes::end_to_end_s},
        {"filter+store (push) s", &RunTimes::push_s},
        {"after last push s", &RunTimes::after_last_push_s},
        {"read (all slabs) s", &RunTimes::read_s},
    };
    for (const Compare& c : compares) {
      const double n_s = median_of(main_series, c.field), one_s = median_of(base, c.field);
      std::printf("  %-22s %10.3f %10.3f %8.2fx\n", c.name, n_s, one_s, ratio(one_s, n_s));
    }
    if (devices.busiest_s > 0 && base_devices.busiest_s > 0) {
      std::printf("  %-22s %10.3f %10.3f %8.2fx\n", "busiest GPU busy s", devices.busiest_s,
                  base_devices.busiest_s, ratio(base_devices.busiest_s, devices.busiest_s));
    }
    const double n_gups = kernel_gups(main_series, devices, n3k);
    const double one_gups = kernel_gups(base, base_devices, n3k);
    std::printf("  %-22s %10.2f %10.2f %8.2fx\n", "kernel GUPS (busiest)", n_gups, one_gups,
                ratio(n_gups, one_gups));
    if (main_series.checked && base.checked) {
      const VolumeCheck& b = base.volume_check;
      const double base_mean = b.count ? b.sum / b.count : 0;
      const bool same = b.min == volume_check.min && b.max == volume_check.max &&
                        base_mean == mean && b.count == volume_check.count;
      std::printf("  volume check: %s\n",
                  same ? "the 1-GPU warm-up volume has the same min, max and mean"
                       : ("the 1-GPU warm-up volume differs: min " + number_text(b.min) +
                          ", max " + number_text(b.max) + ", mean " + number_text(base_mean))
                             .c_str());
    }
    std::printf("scaling  %s vs 1: end to end %.2fx, read %.2fx, after last push %.2fx, kernel "
                "(busiest GPU) %.2fx\n",
                n_text.c_str(),
                ratio(median_of(base, &RunTimes::end_to_end_s), end_to_end_s),
                ratio(median_of(base, &RunTimes::read_s), backprojection_s),
                ratio(median_of(base, &RunTimes::after_last_push_s),
                      median_of(main_series, &RunTimes::after_last_push_s)),
                ratio(n_gups, one_gups));
  }

  if (!o.json.empty()) {
    std::ostringstream j;
    j << "{\n";
    j << "  \"tool\": \"fdk-bench\",\n";
    j << "  \"fdk_version\": \"" << json_escape(fdk_version_string()) << "\",\n";
    j << "  \"date\": \"" << utc_now() << "\",\n";
    j << "  \"commit\": \"" << json_escape(o.commit) << "\",\n";
    j << "  \"command\": \"" << json_escape(o.command_line) << "\",\n";
    j << "  \"host\": \"" << json_escape(host_name()) << "\",\n";
    j << "  \"cpu\": \"" << json_escape(cpu_model()) << "\",\n";
    j << "  \"gpus\": [";
    for (size_t i = 0; i < gpus.size(); ++i) j << (i ? ", " : "") << "\"" << json_escape(gpus[i]) << "\"";
    j << "],\n";
    j << "  \"case\": \"" << json_escape(o.case_name) << "\",\n";
    j << "  \"geometry\": {\"size\": " << o.size << ", \"views\": " << o.views
      << ", \"det_u\": " << o.det_u << ", \"det_v\": " << o.det_v
      << ", \"voxel_mm\": " << json_number(256.0 / o.size)
      << ", \"pixel_mm\": " << json_number(256.0 * 1.5 / o.det_u)
      << ", \"sid_mm\": 1000, \"sdd_mm\": 1500, \"arc_deg\": 360},\n";
    j << "  \"backend_requested\": \"" << backend_name(o.backend) << "\",\n";
    j << "  \"backend\": \"" << backend_name(used_backend) << "\",\n";
    j << "  \"precision\": \"" << (o.precision == FDK_PRECISION_FLOAT16 ? "f16" : "f32")
      << "\",\n";
    j << "  \"threads\": " << outcome.plan.num_threads << ",\n";
    j << "  \"host_memory_budget\": " << outcome.plan.host_memory_budget << ",\n";
    j << "  \"gpu_memory_budget\": " << outcome.plan.gpu_memory_budget << ",\n";
    j << "  \"slab_count\": " << outcome.slab_count << ",\n";
    j << "  \"slab_thickness\": " << outcome.plan.slab_thickness << ",\n";
    j << "  \"short_scan\": " << outcome.plan.short_scan << ",\n";
    j << "  \"offset_detector\": " << outcome.plan.offset_detector << ",\n";
    j << "  \"outside_fov\": \"" << (outcome.plan.outside_fov == FDK_OUTSIDE_FOV_ZERO ? "zero" : "backproject")
      << "\",\n";
    j << "  \"voxels_outside_fov\": " << outcome.plan.voxels_outside_fov << ",\n";
    j << "  \"distinct_projections\": " << pool << ",\n";
    j << "  \"projection_bytes\": " << json_number(bytes_per_view * pool) << ",\n";
    j << "  \"generation_s\": " << json_number(generation_s) << ",\n";
    j << "  \"slab_buffer_bytes\": " << json_number(slab_buffer_bytes) << ",\n";
    j << "  \"slab_buffer_from_fdk_alloc_host\": " << (slab_buffer.page_locked() ? "true" : "false") << ",\n";
    j << "  \"push_rate_views_per_s\": " << json_number(o.rate) << ",\n";
    j << "  \"store\": {\"views\": " << store.views_stored << ", \"raw_bytes\": "
      << store.raw_bytes << ", \"stored_bytes\": " << store.stored_bytes
      << ", \"ratio\": " << json_number(store.ratio) << ", \"views_reduced\": " << store.views_reduced
      << ", \"rel_error_bound\": " << json_number(store.rel_error_bound)
      << ", \"abs_error_bound_factor\": " << json_number(store.abs_error_bound_factor) << "},\n";
    j << "  \"warmup_runs\": " << o.warmup << ",\n";
    j << "  \"repeats\": " << o.repeats << ",\n";
    json_series(j, main_series, n3k, "  ");
    j << "  \"backprojection_note\": \""
      << (used_backend == FDK_BACKEND_CPU
              ? "read phase; on the CPU backend the backprojection runs inside fdk_read_slab"
              : "read phase; slabs resident during acquisition may be backprojected while pushing")
      << "\",\n";
    j << "  \"kernel_gups_note\": \"N^3 x views / the busiest GPU's median busy time (the "
         "library's backprojection seconds when no GPU reports)\",\n";
    if (with_baseline) {
      j << "  \"baseline\": {\n";
      json_series(j, base, n3k, "    ");
      j << "    \"host_memory_budget\": " << base.outcome.plan.host_memory_budget << ",\n";
      j << "    \"slab_count\": " << base.outcome.slab_count << "\n";
      j << "  },\n";
      const DeviceSummary base_devices = summarize_devices(base);
      j << "  \"scaling\": {\"gpus\": " << o.gpus << ", \"note\": \"1-GPU median / " << o.gpus
        << "-GPU median (kernel: GUPS ratio)\"";
      for (const char* key : {"end_to_end", "read", "after_last_push", "filter_store"}) {
        for (const Row& row : kRows) {
          if (std::strcmp(row.key, key) == 0) {
            j << ", \"" << key << "\": "
              << json_number(ratio(median_of(base, row.field), median_of(main_series, row.field)));
          }
        }
      }
      j << ", \"kernel\": "
        << json_number(ratio(kernel_gups(main_series, devices, n3k),
                             kernel_gups(base, base_devices, n3k)))
        << "}\n";
    } else {
      j << "  \"baseline\": null,\n";
      j << "  \"scaling\": null\n";
    }
    j << "}\n";
    std::ofstream out(o.json, std::ios::binary | std::ios::trunc);
    out << j.str();
    out.close();
    if (!out) {
      std::fprintf(stderr, "fdk-bench: cannot write %s\n", o.json.c_str());
      return 1;
    }
    std::printf("json            %s\n", o.json.c_str());
  }
  return 0;
}
