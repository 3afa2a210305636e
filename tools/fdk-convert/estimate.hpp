// fdk-convert's geometry estimation (--estimate-geometry, --apply-estimate,
// --write-geometry): the estimator fed with the same line integrals the
// reconstruction gets, the estimate in words, as a JSON event and as a
// preview caption line, the corrected views, and the corrected RTK geometry
// file, written by the tool's rules (never over an input, an existing file
// only with --force, under a temporary name until the run has succeeded).
#pragma once

#include <fdk/adapters/files.hpp>
#include <fdk/adapters/projection_source.hpp>
#include <fdk/fdk.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "options.hpp"
#include "progress.hpp"
#include "provenance.hpp"

namespace fdk_convert {

// Below this confidence an estimate is not applied without --force-estimate
// (fdk.h: "below 0.5 the estimate is not to be applied without a look").
constexpr double kMinimumConfidence = 0.5;

// Owns an fdk_estimator made from the run's configuration (only its
// geometry and detector count).
class Estimator {
 public:
  // Throws what setup_failure makes of a refused geometry (2 a flag, 3 a
  // file), Failure(kExitReconstruction) otherwise.
  Estimator(const fdk_config& config, const GeometryOrigins& origins);
  ~Estimator();
  Estimator(const Estimator&) = delete;
  Estimator& operator=(const Estimator&) = delete;
  // View `index` (line integrals, contiguous rows); `what` names it in a
  // failure (a non-finite pixel is unusable input, 3).
  void push(int index, const float* pixels, const std::string& what);
  fdk_geometry_estimate estimate();

 private:
  fdk_estimator* est_ = nullptr;
};

// Pass 1 of --apply-estimate, and the whole of an estimate-only run: reads
// every view of `source` (the same decoding and corrections as the
// reconstruction's reader) into `estimator`, as a "geometry estimate"
// progress stage. `check_stop` throws when the run must stop; the count of
// pixels clamped by the transmission floor is added to *clamped_pixels and
// of views with any to *clamped_views.
void push_all_views(const fdk::adapters::ProjectionSource& source, const Options& o, Estimator* estimator,
                    fdk_tools::Progress* progress, const std::function<void()>& check_stop,
                    size_t* clamped_pixels, int* clamped_views);

// The estimate in words for stdout: offset in pixels and mm with its sigma,
// tilt with its sigma, confidence, flags, what it used, the basis. `applied`
// says what the run does with it.
std::string estimate_text(const fdk_geometry_estimate& e, const std::string& applied);
// The same as one "estimate" event of --progress json.
std::string estimate_json(const fdk_geometry_estimate& e, bool applied);
// The flags in words ("offset estimated, tilt estimated").
std::string estimate_flags_text(uint32_t flags);
// The preview caption's line: "estimate: offset +2.31 px, tilt 0.12 deg
// (confidence 0.93)" and whether it was applied.
std::string estimate_caption(const fdk_geometry_estimate& e, bool applied);

// Throws Failure(kExitReconstruction) naming the confidence and the basis
// when the estimate is below kMinimumConfidence and `force` is off; `what`
// names what would apply it ("--apply-estimate").
void check_confidence(const fdk_geometry_estimate& e, bool force, const std::string& what);

// Every view of `scan` (uniform or per view; not matrices) as RTK
// parameters.
std::vector<fdk_view> views_of(const fdk_scan& scan);
// `views` corrected by the estimate (fdk_apply_geometry_estimate).
std::vector<fdk_view> corrected_views(const fdk_geometry_estimate& e, const std::vector<fdk_view>& views);
// `config` with its scan corrected: a uniform scan stays uniform (its shared
// view corrected), a per-view scan points into *storage.
fdk_config corrected_config(const fdk_config& config, const fdk_geometry_estimate& e,
                            std::vector<fdk_view>* storage);

// --write-geometry's rules before any work: not an input (replaced or
// joined; exit 2 whatever --force says), not a folder, not an existing file
// without --force (exit 2).
void check_geometry_output(const Options& o);

// The corrected geometry file, written under its temporary name; publish()
// gives it its final name (after the volume's, when there is one), and
// a run that fails before leaves no file.
class GeometryOutput {
 public:
  GeometryOutput(const std::string& path, const std::vector<fdk_view>& views);
  void publish();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<fdk::adapters::OutputFile> file_;
};

// The estimate where the user reads it: in words on stdout, or as an
// "estimate" event with --progress json.
void report_estimate(fdk_tools::Progress& progress, const fdk_geometry_estimate& e, const std::string& applied_text,
                     bool applied);
// Whether the run will apply an estimate (or refuse it, check_confidence).
bool will_apply(const fdk_geometry_estimate& e, const Options& o);
// fdk-convert PROJECTIONS --estimate-geometry: one pass over the views into
// an estimator, the estimate on stdout, the corrected geometry file if
// asked; no library context, no volume, no output folder. `check_stop`
// throws when the run must stop.
int run_estimate_only(const Options& o, const fdk::adapters::ProjectionSource& source, const fdk_config& config,
                      const GeometryOrigins& origins, std::chrono::steady_clock::time_point t_start,
                      const std::function<void()>& check_stop);

}  // namespace fdk_convert
