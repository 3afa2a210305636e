// fdk-bench's runs of one configuration: each on a new context, timed phase
// by phase, the first warm-up's volume checked for NaN/Inf outside the timing.
#include "series.hpp"

#include <cmath>
#include <functional>
#include <optional>
#include <thread>

#include "cases.hpp"
#include "host_info.hpp"
#include "timeline.hpp"

namespace fdk_bench {

namespace {

[[noreturn]] void fail_create(fdk_status status) {
  std::fprintf(stderr, "fdk-bench: fdk_create failed: %s\n",
               fdk_tools::status_text(status, fdk_last_create_error()).c_str());
  std::exit(1);
}

void check(fdk_status status, fdk_context* ctx, const char* what) {
  if (status == FDK_OK) return;
  std::fprintf(stderr, "fdk-bench: %s failed: %s\n", what,
               fdk_tools::status_text(status, fdk_last_error(ctx)).c_str());
  fdk_destroy(ctx);
  std::exit(1);
}

// gpus: CUDA ordinals 0..gpus-1; left at the library's default (every usable
// GPU) on the CPU backend, which ignores it.
fdk_config make_config(const Options& o, int gpus) {
  fdk_config config = case_geometry(o.size, o.views, o.det_u, o.det_v);
  config.backend = o.backend;
  if (o.backend != FDK_BACKEND_CPU) {
    config.num_devices = gpus;
    for (int d = 0; d < gpus; ++d) config.devices[d] = d;
  }
  config.precision = o.precision;
  config.outside_fov = o.outside_fov;
  config.estimate_geometry = o.estimate_geometry ? 1 : 0;
  config.preview = o.preview ? 1 : 0;
  config.host_memory_budget = o.budget_host;
  config.gpu_memory_budget = o.budget_gpu;
  config.num_threads = o.threads;
  config.slab_thickness = o.slab_thickness;
  return config;
}

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

}  // namespace

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
    std::vector<float> preview;
    if (o.preview) {
      fdk_preview_info info;
      fdk_preview_info_init(&info);
      check(fdk_get_preview_info(ctx, &info), ctx, "fdk_get_preview_info");
      preview.resize(static_cast<size_t>(info.volume.size[0]) * info.volume.size[1] * info.volume.size[2]);
    }

    const auto p0 = Clock::now();
    std::optional<Timeline> timeline;
    if (o.timeline > 0) timeline.emplace(ctx, o.views, o.timeline, p0);
    for (int view = 0; view < o.views; ++view) {
      if (o.rate > 0) std::this_thread::sleep_until(p0 + std::chrono::duration<double>(view / o.rate));
      const float* pixels = p.views[static_cast<size_t>(view % p.pool)].get();
      const fdk_status s = fdk_push_projection(ctx, view, pixels, p.row_pitch, nullptr);
      if (s != FDK_OK) {
        std::fprintf(stderr, "fdk-bench: fdk_push_projection(view %d) failed: %s\n", view,
                     fdk_tools::status_text(s, fdk_last_error(ctx)).c_str());
        fdk_destroy(ctx);
        return false;
      }
    }
    const auto p1 = Clock::now();
    check(fdk_finish(ctx), ctx, "fdk_finish");
    const auto f1 = Clock::now();
    if (o.preview) {
      // What an operator looks at first: the whole preview, complete.
      fdk_preview_info info;
      fdk_preview_info_init(&info);
      check(fdk_read_preview(ctx, preview.data(), preview.size() * sizeof(float), &info), ctx, "fdk_read_preview");
      const auto v1 = Clock::now();
      t.preview_s = seconds_between(f1, v1);
      if (check_values)
        std::printf("preview: %dx%dx%d, %d views, coverage %.3f, flags %u, on %s\n", info.volume.size[0],
                    info.volume.size[1], info.volume.size[2], info.views, info.coverage, info.flags,
                    info.on_gpu ? "the GPU" : "the CPU");
    }
    const auto s0 = Clock::now();
    for (int32_t s = 0; s < slabs; ++s) {
      const fdk_slab_info& info = infos[static_cast<size_t>(s)];
      const fdk_status st = fdk_read_slab(ctx, s, slab_buffer.data(), slab_buffer.bytes());
      if (st != FDK_OK) {
        std::fprintf(stderr, "fdk-bench: fdk_read_slab(%d) failed: %s\n", s,
                     fdk_tools::status_text(st, fdk_last_error(ctx)).c_str());
        fdk_destroy(ctx);
        return false;
      }
      if (check_values) {
        scan_slab(slab_buffer.data(), static_cast<size_t>(info.byte_size / sizeof(float)),
                  series.volume_check);
      }
    }
    const auto r1 = Clock::now();
    if (timeline) timeline->stop();
    t.push_s = seconds_between(p0, p1);
    t.finish_s = seconds_between(p1, f1);
    t.read_s = seconds_between(s0, r1);  // the slabs; a preview read before them is preview_s
    t.end_to_end_s = seconds_between(p0, r1);
    t.after_last_push_s = seconds_between(p1, r1);

    if (o.estimate_geometry) {
      fdk_geometry_estimate estimate;
      fdk_geometry_estimate_init(&estimate);
      const auto e0 = Clock::now();
      check(fdk_get_geometry_estimate(ctx, &estimate), ctx, "fdk_get_geometry_estimate");
      t.estimate_s = seconds_between(e0, Clock::now());
      if (check_values)
        std::printf("geometry estimate: offset %+.3f px, tilt %+.4f deg, confidence %.2f (%s)\n",
                    estimate.offset_u_pixels, estimate.tilt_deg, estimate.confidence, estimate.basis);
    }

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
                     fdk_tools::status_text(ds, fdk_last_error(ctx)).c_str());
      }
      series.device_stats_ok = false;
      stats = fdk_device_stats{};
      stats.struct_size = sizeof stats;
    }
    stats.num_devices = std::max(0, std::min<int32_t>(stats.num_devices, FDK_MAX_DEVICES));

    const auto d0 = Clock::now();
    fdk_destroy(ctx);
    t.destroy_s = seconds_between(d0, Clock::now());

    const char* kind = warmup ? "warm-up" : "run";
    const int number = warmup ? run + 1 : run - o.warmup + 1;
    std::printf("%s%s %d: filter+store %.3f s, finish %.3f s, read %.3f s, end to end %.3f s\n", label, kind,
                number, t.push_s, t.finish_s, t.read_s, t.end_to_end_s);
    if (timeline) timeline->print(label, kind, number);
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

}  // namespace fdk_bench
