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
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gpu_code_line.hpp"
#include "host_info.hpp"
#include "json_report.hpp"
#include "options.hpp"
#include "series.hpp"
#include "synthetic_projections.hpp"

#ifdef FDK_BENCH_TEST_SEAMS
#include "fdk/kernels/test_seams.hpp"
#endif

using namespace fdk_bench;

namespace {

// ---- small helpers -------------------------------------------------------------

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
    {"estimate", "estimate", &RunTimes::estimate_s},
    {"preview (read)", "preview", &RunTimes::preview_s},
    {"  filter (library)", "lib_filter", &RunTimes::filter_s},
    {"  store (library)", "lib_store", &RunTimes::store_s},
    {"  backprojection", "lib_backprojection", &RunTimes::kernel_s},
    {"  upload (library)", "lib_upload", &RunTimes::upload_s},
    {"  download (library)", "lib_download", &RunTimes::download_s},
};

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
  if (o.plane_pairs >= 0 || o.ramp_groups >= 0 || o.resident_pairs >= 0 || o.stream_pairs >= 0) {
    fdk::cuda::FaultPlan plan;
    plan.plane_pairs = o.plane_pairs == 1;
    plan.ramp_pair_groups = o.ramp_groups == 1;
    plan.resident_pairs = o.resident_pairs == 1;
    plan.stream_pairs = o.stream_pairs == 1;
    fdk::cuda::set_fault_plan(plan);
    std::printf("fdk-bench-seams: plane pairs %s, ramped first groups %s, resident pairs %s, streamed pairs %s "
                "(test seams; the shipped library keeps all four off)\n",
                plan.plane_pairs ? "on" : "off", plan.ramp_pair_groups ? "on" : "off",
                plan.resident_pairs ? "on" : "off", plan.stream_pairs ? "on" : "off");
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
    if (row.field == &RunTimes::estimate_s && !o.estimate_geometry) continue;
    if (row.field == &RunTimes::preview_s && !o.preview) continue;
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
