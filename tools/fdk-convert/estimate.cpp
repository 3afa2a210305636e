// fdk-convert's geometry estimation (see estimate.hpp).
#include "estimate.hpp"

#include <fdk/adapters/files.hpp>
#include <fdk/adapters/geometry_io.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <thread>

#include "inputs.hpp"
#include "ordered_reader.hpp"
#include "outputs.hpp"
#include "status_text.hpp"

namespace ad = fdk::adapters;

namespace fdk_convert {

Estimator::Estimator(const fdk_config& config, const GeometryOrigins& origins) {
  if (const fdk_status s = fdk_estimator_create(&config, &est_); s != FDK_OK) {
    // The geometry is the reconstruction's: a value the library refuses is
    // named by where it came from, as fdk_create's refusal is.
    throw setup_failure(s, fdk_last_create_error(), origins, config);
  }
}

Estimator::~Estimator() { fdk_estimator_destroy(est_); }

void Estimator::push(int index, const float* pixels, const std::string& what) {
  const fdk_status s = fdk_estimator_push(est_, index, pixels, 0);
  if (s == FDK_OK) return;
  const std::string text = fdk_tools::status_text(s, fdk_estimator_last_error(est_));
  if (s == FDK_ERROR_INVALID_ARGUMENT) throw Failure{kExitInput, what + ": " + text};  // its values
  throw Failure{kExitReconstruction, "the geometry estimate of " + what + " failed: " + text};
}

fdk_geometry_estimate Estimator::estimate() {
  fdk_geometry_estimate e;
  fdk_geometry_estimate_init(&e);
  if (const fdk_status s = fdk_estimator_estimate(est_, &e); s != FDK_OK) {
    throw Failure{kExitReconstruction,
                  "the geometry estimate failed: " + fdk_tools::status_text(s, fdk_estimator_last_error(est_))};
  }
  e.basis[sizeof e.basis - 1] = '\0';  // a string whatever the library left
  return e;
}

void push_all_views(const ad::ProjectionSource& source, const Options& o, Estimator* estimator,
                    fdk_tools::Progress* progress, const std::function<void()>& check_stop,
                    size_t* clamped_pixels, int* clamped_views) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const int workers = o.read_threads > 0 ? o.read_threads : static_cast<int>(std::min(4u, hw));
  OrderedReader reader(source, workers, workers + 2);  // as the reconstruction's reader
  const int count = source.count();
  progress->stage("geometry estimate", "views", count);
  for (int i = 0; i < count; ++i) {
    check_stop();
    size_t clamped = 0;
    const float* pixels = reader.get(i, &clamped);
    if (clamped) {
      *clamped_pixels += clamped;
      ++*clamped_views;
    }
    estimator->push(i, pixels, source.describe(i));
    reader.release(i);
    progress->add();
  }
  progress->end_stage();
}

std::string estimate_flags_text(uint32_t flags) {
  std::string out;
  const auto add = [&out](const char* word) { out += (out.empty() ? "" : ", ") + std::string(word); };
  if (flags & FDK_ESTIMATE_OFFSET) add("offset estimated");
  if (flags & FDK_ESTIMATE_TILT) add("tilt estimated");
  if (flags & FDK_ESTIMATE_LOW_STRUCTURE) add("low structure (too little that changes with angle to be sure)");
  if (flags & FDK_ESTIMATE_FEW_PAIRS) add("few pairs (too few views with an opposite view)");
  return out.empty() ? "none (nothing estimated)" : out;
}

namespace {

const char* const kFlagNames[] = {"offset", "tilt", "low_structure", "few_pairs"};

}  // namespace

std::string estimate_text(const fdk_geometry_estimate& e, const std::string& applied) {
  const bool offset = e.flags & FDK_ESTIMATE_OFFSET, tilt = e.flags & FDK_ESTIMATE_TILT;
  return "geometry estimate (" + applied + "):\n" +
         "  offset:     " + fmt("%+.3f", e.offset_u_pixels) + " px = " + fmt("%+.4f", e.offset_u_mm) +
         " mm (sigma " + fmt("%.3f", e.offset_sigma_pixels) + " px)" + (offset ? "" : ", not estimated") + "\n" +
         "  tilt:       " + fmt("%+.3f", e.tilt_deg) + " deg (sigma " + fmt("%.3f", e.tilt_sigma_deg) + " deg)" +
         (tilt ? "" : ", not estimated") + "\n" +
         "  confidence: " + fmt("%.2f", e.confidence) +
         (e.confidence < kMinimumConfidence ? " (below 0.5: not to be applied without a look)" : "") + "\n" +
         "  flags:      " + estimate_flags_text(e.flags) + "\n" +
         "  used:       " + std::to_string(e.views_used) + " views, " + std::to_string(e.view_pairs) +
         " pairs of views, " + std::to_string(e.rows_used) + " rows per view\n" +
         "  basis:      " + e.basis + "\n";
}

std::string estimate_json(const fdk_geometry_estimate& e, bool applied) {
  using fdk_tools::json_number;
  std::string flags;
  for (int b = 0; b < 4; ++b) {
    if (e.flags & (1u << b)) flags += (flags.empty() ? "" : ",") + fdk_tools::json_string(kFlagNames[b]);
  }
  return "{\"event\":\"estimate\",\"offset_u_pixels\":" + json_number(e.offset_u_pixels) +
         ",\"offset_u_mm\":" + json_number(e.offset_u_mm) +
         ",\"offset_sigma_pixels\":" + json_number(e.offset_sigma_pixels) +
         ",\"tilt_deg\":" + json_number(e.tilt_deg) + ",\"tilt_sigma_deg\":" + json_number(e.tilt_sigma_deg) +
         ",\"confidence\":" + json_number(e.confidence) + ",\"view_pairs\":" + std::to_string(e.view_pairs) +
         ",\"views_used\":" + std::to_string(e.views_used) + ",\"rows_used\":" + std::to_string(e.rows_used) +
         ",\"flags\":[" + flags + "],\"basis\":" + fdk_tools::json_string(e.basis) +
         ",\"applied\":" + (applied ? "true" : "false") + "}";
}

std::string estimate_caption(const fdk_geometry_estimate& e, bool applied) {
  return std::string(applied ? "estimate applied" : "estimate (not applied)") + ": offset " +
         fmt("%+.2f", e.offset_u_pixels) + " px, tilt " + fmt("%.2f", e.tilt_deg) + " deg (confidence " +
         fmt("%.2f", e.confidence) + ")";
}

void check_confidence(const fdk_geometry_estimate& e, bool force, const std::string& what) {
  if (e.confidence >= kMinimumConfidence || force) return;
  throw Failure{kExitReconstruction,
                what + ": the geometry estimate's confidence is " + fmt("%.2f", e.confidence) +
                    ", below 0.5, so it is not applied (basis: " + e.basis +
                    "); look at it and give --force-estimate to apply it anyway"};
}

std::vector<fdk_view> views_of(const fdk_scan& scan) {
  std::vector<fdk_view> views(static_cast<size_t>(std::max(0, scan.num_views)));
  for (size_t i = 0; i < views.size(); ++i) {
    if (scan.kind == FDK_SCAN_VIEWS) {
      views[i] = scan.views[i];
    } else {  // fdk.h: the angle step is arc / num_views
      views[i] = scan.uniform;
      views[i].gantry_angle_deg = scan.first_angle_deg + static_cast<double>(i) * scan.arc_deg / scan.num_views;
    }
  }
  return views;
}

namespace {

fdk_view corrected(const fdk_geometry_estimate& e, const fdk_view& view) {
  fdk_view out = view;
  if (const fdk_status s = fdk_apply_geometry_estimate(&e, &view, &out); s != FDK_OK) {
    throw Failure{kExitInternal, "fdk_apply_geometry_estimate failed: " +
                                     fdk_tools::status_text(s, fdk_status_string(s))};
  }
  return out;
}

}  // namespace

std::vector<fdk_view> corrected_views(const fdk_geometry_estimate& e, const std::vector<fdk_view>& views) {
  std::vector<fdk_view> out;
  out.reserve(views.size());
  for (const fdk_view& v : views) out.push_back(corrected(e, v));
  return out;
}

fdk_config corrected_config(const fdk_config& config, const fdk_geometry_estimate& e,
                            std::vector<fdk_view>* storage) {
  fdk_config out = config;
  if (config.scan.kind == FDK_SCAN_VIEWS) {
    *storage = corrected_views(e, views_of(config.scan));
    out.scan.views = storage->data();
  } else {
    out.scan.uniform = corrected(e, config.scan.uniform);
  }
  return out;
}

void check_geometry_output(const Options& o) {
  if (o.write_geometry.empty()) return;
  const std::string& path = o.write_geometry;
  const size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? std::string(".") : path.substr(0, slash == 0 ? 1 : slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || ad::is_directory(path)) usage_error("--write-geometry '" + path + "' is a folder");
  // An input stays as it was, whatever --force says: the corrected
  // geometry next to the nominal one, never instead of it.
  const InputSet::Clash clash = InputSet::of(o).first_clash(folder, {name});
  if (!clash.input.empty()) {
    usage_error("--write-geometry '" + path + "' would " + (clash.joins ? "join " : "replace ") + clash.input +
                ": write it elsewhere");
  }
  if (ad::is_regular_file(path) && !o.force) {
    usage_error("--write-geometry '" + path + "' exists (--force to replace it)");
  }
}

GeometryOutput::GeometryOutput(const std::string& path, const std::vector<fdk_view>& views) : path_(path) {
  const std::string text = ad::format_rtk_geometry(views);
  file_ = std::make_unique<ad::OutputFile>(path);
  file_->write(text.data(), text.size());
  file_->commit(/*defer_rename=*/true);  // complete, but under its temporary name
}

void GeometryOutput::publish() { file_->rename_to_final(); }

// The estimate where the user reads it: in words on stdout (the run's
// result when it only estimates, so --quiet keeps it), or as an "estimate"
// event with --progress json (stdout then holds only JSON lines).
void report_estimate(fdk_tools::Progress& progress, const fdk_geometry_estimate& e, const std::string& applied_text,
                     bool applied) {
  if (progress.json()) {
    progress.event(estimate_json(e, applied));
    return;
  }
  std::fputs(estimate_text(e, applied_text).c_str(), stdout);
  fdk_tools::flush_checked(stdout);
}

// Whether the run will apply an estimate (or refuse it, check_confidence).
bool will_apply(const fdk_geometry_estimate& e, const Options& o) {
  return e.confidence >= kMinimumConfidence || o.force_estimate;
}

// fdk-convert PROJECTIONS --estimate-geometry: one pass over the views into
// an estimator, the estimate on stdout, the corrected geometry file if
// asked; no library context, no volume, no output folder.
int run_estimate_only(const Options& o, const fdk::adapters::ProjectionSource& source, const fdk_config& config,
                      const GeometryOrigins& origins, std::chrono::steady_clock::time_point t_start,
                      const std::function<void()>& check_stop) {
  Estimator estimator(config, origins);
  fdk_tools::Progress progress(o.progress);
  size_t clamped_total = 0;
  int clamped_views = 0;
  push_all_views(source, o, &estimator, &progress, check_stop, &clamped_total, &clamped_views);
  const fdk_geometry_estimate e = estimator.estimate();
  if (clamped_total && !o.quiet) {
    progress.message("note: " + std::to_string(clamped_total) + " pixels in " + std::to_string(clamped_views) +
                     " projections had a transmission below the clamp (" +
                     fmt("%g", o.folder.preprocess.min_transmission) + ") and were clamped");
  }
  const bool write = !o.write_geometry.empty();
  report_estimate(progress, e,
                  write && will_apply(e, o) ? "applied to '" + o.write_geometry + "'"
                  : write                   ? "not applied: confidence below 0.5"
                                            : "not applied: no --write-geometry",
                  write && will_apply(e, o));
  if (write) {
    check_confidence(e, o.force_estimate, "--write-geometry '" + o.write_geometry + "'");
    GeometryOutput out(o.write_geometry, corrected_views(e, views_of(config.scan)));
    check_stop();
    out.publish();
    if (!o.quiet) progress.message("corrected geometry: '" + o.write_geometry + "'");
  }
  progress.stop();
  check_stop();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  progress.event("{\"event\":\"done\",\"seconds\":" + fdk_tools::json_number(seconds) + ",\"outputs\":[" +
                 (write ? fdk_tools::json_string(o.write_geometry) : std::string()) + "],\"preview\":null}");
  return kExitOk;
}

}  // namespace fdk_convert
