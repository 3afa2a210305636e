// The geometry estimate's C entry points: the estimator alone
// (fdk_estimator_*) and the correction of a view. The estimate of a
// reconstruction that keeps one is api.cpp's fdk_get_geometry_estimate.
#include <fdk/fdk.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "context.hpp"
#include "fdk/core/geometry.hpp"
#include "fdk/core/geometry_estimator.hpp"
#include "live_handles.hpp"

struct fdk_estimator {
  std::unique_ptr<fdk::GeometryEstimator> estimator;
  fdk_detector detector{};
  std::string last_error;
};

namespace {

using LiveEstimators = fdk::capi::LiveHandles<fdk_estimator>;
constexpr const char* kNotLive = "not a live fdk_estimator: destroyed or never created";

}  // namespace

namespace fdk::capi {

void check_estimate_struct(const fdk_geometry_estimate* e) {
  if (!e) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "estimate is NULL");
  if (e->struct_size != sizeof(fdk_geometry_estimate))
    fdk::fail(FDK_ERROR_STRUCT_SIZE,
              "estimate->struct_size must be sizeof(fdk_geometry_estimate): init it with fdk_geometry_estimate_init");
}

void estimate_to_c(const fdk::GeometryEstimate& from, fdk_geometry_estimate* to) {
  fdk_geometry_estimate_init(to);
  to->offset_u_mm = from.offset_u_mm;
  to->offset_u_pixels = from.offset_u_pixels;
  to->tilt_deg = from.tilt_deg;
  to->offset_sigma_pixels = from.offset_sigma_pixels;
  to->tilt_sigma_deg = from.tilt_sigma_deg;
  to->confidence = from.confidence;
  to->view_pairs = from.view_pairs;
  to->views_used = from.views_used;
  to->rows_used = from.rows_used;
  to->flags = from.flags;
  const size_t n = std::min(from.basis.size(), sizeof(to->basis) - 1);
  std::memcpy(to->basis, from.basis.data(), n);
  to->basis[n] = '\0';
}

}  // namespace fdk::capi

namespace {

// Runs `body` on a live estimator; its failures become the estimator's
// message (or the thread's, for a NULL or dead one).
template <class Body>
fdk_status on_estimator(fdk_estimator* e, Body&& body) noexcept {
  if (!e || !LiveEstimators::of_process().contains(e))
    return fdk::capi::guarded(nullptr, [&] {
      fdk::fail(FDK_ERROR_INVALID_ARGUMENT, e ? kNotLive : "estimator is NULL");
    });
  return fdk::capi::run_guarded([&] { body(*e); },
                                [e](const std::string& full) {
                                  try {
                                    e->last_error = full;
                                  } catch (...) {
                                  }
                                });
}

// The config's size as this library knows it; older sizes carry no
// estimate-related field the estimator reads.
fdk_config full_config(const fdk_config* config) {
  if (!config) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "config is NULL");
  fdk_config full;
  fdk_config_init(&full);
  // The sizes fdk_create takes, no other: a size between two known layouts
  // or past this library's would read fields that are not there.
  const size_t size = config->struct_size;
  if (size != sizeof full && !fdk::capi::older_config_size(size))
    fdk::fail(FDK_ERROR_STRUCT_SIZE, "fdk_config.struct_size is " + std::to_string(size) + ", this library knows " +
                                         std::to_string(sizeof full) +
                                         " and older headers' sizes: initialise it with fdk_config_init");
  std::memcpy(&full, config, size);
  full.struct_size = sizeof full;
  return full;
}

}  // namespace

extern "C" {

fdk_geometry_estimate* fdk_geometry_estimate_init(fdk_geometry_estimate* estimate) {
  if (!estimate) return estimate;
  std::memset(estimate, 0, sizeof *estimate);
  estimate->struct_size = sizeof *estimate;
  return estimate;
}

fdk_status fdk_estimator_create(const fdk_config* config, fdk_estimator** out) {
  if (out) *out = nullptr;
  return fdk::capi::guarded(nullptr, [&] {
    if (!out) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "out is NULL");
    const fdk_config full = full_config(config);
    for (int a = 0; a < 2; ++a)
      if (full.detector.size[a] < 2 || full.detector.size[a] > 65536)
        fdk::fail(FDK_ERROR_INVALID_ARGUMENT, std::string("detector ") + (a ? "v (rows)" : "u (columns)") +
                                                  " size is " + std::to_string(full.detector.size[a]) +
                                                  ": it must lie within [2, 65536]");
    auto e = std::make_unique<fdk_estimator>();
    e->detector = full.detector;
    e->estimator = std::make_unique<fdk::GeometryEstimator>(fdk::scan_parameters(full.scan, "a geometry estimate"),
                                                            full.detector);
    LiveEstimators::of_process().add(e.get());
    *out = e.release();
  });
}

fdk_status fdk_estimator_push(fdk_estimator* estimator, int32_t index, const float* pixels, size_t row_pitch_bytes) {
  return on_estimator(estimator, [&](fdk_estimator& e) {
    e.last_error.clear();
    const int views = e.estimator->num_views();
    if (index < 0 || index >= views)
      fdk::fail(FDK_ERROR_OUT_OF_RANGE,
                "projection index " + std::to_string(index) + " is outside [0, " + std::to_string(views) + ")");
    if (!pixels) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "pixels is NULL");
    const size_t nu = static_cast<size_t>(e.detector.size[0]), nv = static_cast<size_t>(e.detector.size[1]);
    const size_t pitch = row_pitch_bytes ? row_pitch_bytes : nu * sizeof(float);
    if (pitch < nu * sizeof(float) || pitch % sizeof(float) != 0)
      fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "row_pitch_bytes " + std::to_string(row_pitch_bytes) +
                                                " must be 0 or a multiple of 4 and at least 4 * " + std::to_string(nu));
    for (size_t r = 0; r < nv; ++r) {
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(pixels) + r * pitch);
      for (size_t i = 0; i < nu; ++i)
        if (!std::isfinite(row[i]))
          fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "projection " + std::to_string(index) + " has a non-finite pixel (" +
                                                    std::to_string(row[i]) + ") at column " + std::to_string(i) +
                                                    ", row " + std::to_string(r));
    }
    e.estimator->add_view(index, pixels, pitch);
  });
}

fdk_status fdk_estimator_estimate(fdk_estimator* estimator, fdk_geometry_estimate* estimate) {
  return on_estimator(estimator, [&](fdk_estimator& e) {
    e.last_error.clear();
    fdk::capi::check_estimate_struct(estimate);
    fdk::capi::estimate_to_c(e.estimator->estimate(), estimate);
  });
}

const char* fdk_estimator_last_error(const fdk_estimator* estimator) {
  if (!estimator) return "";
  if (!LiveEstimators::of_process().contains(estimator)) return fdk_last_create_error();
  return estimator->last_error.c_str();
}

void fdk_estimator_destroy(fdk_estimator* estimator) {
  if (!estimator) return;
  try {
    if (!LiveEstimators::of_process().remove(estimator)) return;  // destroyed already, or never a handle
  } catch (...) {
    return;
  }
  delete estimator;
}

fdk_status fdk_apply_geometry_estimate(const fdk_geometry_estimate* estimate, const fdk_view* view, fdk_view* out) {
  return fdk::capi::guarded(nullptr, [&] {
    fdk::capi::check_estimate_struct(estimate);
    if (!view) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "view is NULL");
    if (!out) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (!std::isfinite(estimate->offset_u_mm) || !std::isfinite(estimate->tilt_deg))
      fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "the estimate's offset_u_mm or tilt_deg is not finite");
    fdk::GeometryEstimate e;
    e.offset_u_mm = estimate->offset_u_mm;
    e.tilt_deg = estimate->tilt_deg;
    *out = fdk::GeometryEstimator::apply(*view, e);
  });
}

}  // extern "C"
