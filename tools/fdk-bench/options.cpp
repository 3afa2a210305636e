// fdk-bench's options, cases and usage text, kept together so the cases of
// design/BENCHMARKS.md and the help that names them change in one place.
// Built into fdk-bench and fdk-bench-seams alike: FDK_BENCH_TEST_SEAMS
// decides whether --plane-pairs is accepted.
#include "options.hpp"

#include "cases.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fdk_bench {
namespace {

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
      "                 [--estimate-geometry] [--preview] [--timeline SECONDS]\n"
      "                 [--json FILE] [--commit TEXT]\n"
      "       fdk-bench-seams [the same] [--plane-pairs on|off] [--ramp-groups on|off]\n"
      "                       [--resident-pairs on|off]\n"
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
      "--estimate-geometry keeps the geometry estimate's rows while views are pushed\n"
      "(fdk_config.estimate_geometry) and, after the last slab is read, times\n"
      "fdk_get_geometry_estimate ('estimate': what is left of the estimate that\n"
      "fdk_finish started); keeping the rows costs in the push phase and computing\n"
      "the estimate alongside the backprojection, so compare with a run without it\n"
      "(scripts/gpu-estimate-cost.sh).\n"
      "--preview reconstructs the live preview alongside (fdk_config.preview, the\n"
      "default grid) and reads it whole once after fdk_finish, before the slabs, as\n"
      "an operator would ('preview': that read; it is inside end to end). Compare\n"
      "with a run without it for the preview's cost (scripts/gpu-preview-cost.sh).\n"
      "--timeline S samples each run every S seconds from its first push: the views\n"
      "pushed, those stored (filtered into the store, or into a resident volume),\n"
      "the share of the backprojection done and the slabs done, printed after the\n"
      "run with each change: where a push stalls or a GPU idles. The sampler asks\n"
      "only fdk_get_progress and fdk_get_view_state (of the views in flight).\n"
      "--plane-pairs on|off (fdk-bench-seams only, for A/B runs): a resident CUDA\n"
      "volume backprojects its scan's first quarter as plane pairs, or not; the\n"
      "shipped library keeps them off (FaultPlan::plane_pairs).\n"
      "--ramp-groups on|off (fdk-bench-seams only): a resident CUDA volume's first\n"
      "groups of mirror pairs are 8, 16 and 32 pairs, or all the library's size\n"
      "(FaultPlan::ramp_pair_groups; off in the shipped library).\n"
      "--resident-pairs on|off (fdk-bench-seams only): a resident CUDA volume takes\n"
      "mirror pairs where they serve as many views as quads, or quads (the shipped\n"
      "library's choice; FaultPlan::resident_pairs).\n"
      "--stream-pairs on|off (fdk-bench-seams only): streamed CUDA slabs take mirror\n"
      "pairs where they serve as many views as quads, or quads (the shipped\n"
      "library's choice; FaultPlan::stream_pairs).\n"
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

// A number in [min_value, max_value] (NaN never is).
double parse_number(const std::string& text, const char* what, double min_value, double max_value) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(value >= min_value) || !(value <= max_value))
    usage_error(std::string("bad value for ") + what + ": '" + text + "'");
  return value;
}

// A test seam's on|off (fdk-bench-seams only): 1 or 0.
int parse_seam(const std::string& option, const std::string& value) {
  if (value != "on" && value != "off") usage_error("bad " + option + " '" + value + "' (on or off)");
#ifndef FDK_BENCH_TEST_SEAMS
  usage_error(option + " is a test seam of the CUDA backend, which libfdk does not have: use fdk-bench-seams");
#endif
  return value == "on" ? 1 : 0;
}

}  // namespace

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
    } else if (arg == "--estimate-geometry") {
      o.estimate_geometry = true;
    } else if (arg == "--preview") {
      o.preview = true;
    } else if (arg == "--outside-fov") {
      const std::string v = next("--outside-fov");
      if (v == "backproject") o.outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;
      else if (v == "zero") o.outside_fov = FDK_OUTSIDE_FOV_ZERO;
      else usage_error("bad --outside-fov '" + v + "'");
    } else if (arg == "--slab-thickness") {
      o.slab_thickness = parse_int(next("--slab-thickness"), "--slab-thickness", 0);
    } else if (arg == "--pool") {
      o.pool = parse_int(next("--pool"), "--pool", 1);
    } else if (arg == "--timeline") {
      o.timeline = parse_number(next("--timeline"), "--timeline (seconds, 0.001 to 3600)", 0.001, 3600);
    } else if (arg == "--rate") {
      o.rate = parse_number(next("--rate"), "--rate", std::nextafter(0.0, 1.0), HUGE_VAL);
    } else if (arg == "--plane-pairs") {
      o.plane_pairs = parse_seam(arg, next("--plane-pairs"));
    } else if (arg == "--ramp-groups") {
      o.ramp_groups = parse_seam(arg, next("--ramp-groups"));
    } else if (arg == "--resident-pairs") {
      o.resident_pairs = parse_seam(arg, next("--resident-pairs"));
    } else if (arg == "--stream-pairs") {
      o.stream_pairs = parse_seam(arg, next("--stream-pairs"));
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

}  // namespace fdk_bench
