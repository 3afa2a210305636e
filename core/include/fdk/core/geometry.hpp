// Per-view geometry in RTK's circular parameters, from either those
// parameters or a 3x4 projection matrix, and the one matrix per view that the
// backprojectors use (voxel index -> detector index).
#pragma once
#include <fdk/fdk.h>

#include <array>
#include <string>
#include <vector>

namespace fdk {

// RTK's ThreeDCircularProjectionGeometry for one view: the rotated frame is
// rot * world; in it the source is at (sox, soy, sid) and the detector origin
// at (pox, poy, sid - sdd).
struct ViewGeometry {
  std::array<double, 9> rot{};  // row-major
  double sid = 0, sdd = 0;
  double sox = 0, soy = 0, pox = 0, poy = 0;
  double angle = 0;  // gantry angle, radians in [0, 2pi): detector normal about y
  // Azimuth of the source about y, radians in [0, 2pi), measured as the
  // gantry angle (equal to it for a source on the central ray): the FDK
  // integral's variable, so the angular weights follow it (as RTK's do).
  double source_angle = 0;

  // The foot of the source's perpendicular on the detector, in detector
  // physical coordinates: where the cosine weight peaks. Not where the
  // rotation axis projects when the source is displaced (detector_u(0)).
  double principal_u() const { return sox - pox; }
  double principal_v() const { return soy - poy; }

  // Redundancy (half-fan, Parker) is a matter of fan angles measured from
  // the ray through the rotation axis, the centre of the source's circle.
  // These follow RTK's ToUntiltedCoordinateAtIsocenter: the coordinate at
  // which the ray through detector coordinate u meets a virtual detector
  // through the isocentre, normal to the source-to-axis ray; the fan angle
  // is atan(untilted / source_radius). Computed in the rotated frame, so
  // tilts are taken as RTK takes them (column by column).
  double source_radius() const;            // hypot(sid, sox): source to axis
  double untilted_u(double u) const;       // detector u -> untilted coordinate
  double detector_u(double untilted) const;  // its inverse
  double fan_angle(double u) const;        // radians, > 0 towards +u
};

// Validates (every value within its range of value_ranges.hpp) and
// converts; throws fdk::Error whose message starts with `prefix` (which
// view: "scan.views[3]: ").
ViewGeometry view_from_parameters(const fdk_view& view, const std::string& prefix = "");
// Decomposes an RTK-form matrix (any non-zero scale); throws fdk::Error with
// FDK_ERROR_INVALID_ARGUMENT when it is not a flat-panel perspective matrix
// or its parameters leave their ranges.
ViewGeometry view_from_matrix(const double* m12, const std::string& prefix = "");
// RTK's matrix of a view (physical coordinates), for tests and round trips.
std::array<double, 12> rtk_matrix(const ViewGeometry& g);
// The nominal views of a scan description; throws fdk::Error.
std::vector<ViewGeometry> scan_views(const fdk_scan& scan);
// The same views as RTK parameters (checked as scan_views does); a
// matrices-only scan has none: INVALID_ARGUMENT naming `what` needs them.
std::vector<fdk_view> scan_parameters(const fdk_scan& scan, const std::string& what);

// Maps voxel index (i, j, k, 1) to (column * w, row * w, w), column/row being
// detector pixel indices and w = sid - Zr the depth along the principal ray
// (> 0 in front of the source). The backprojection weight is (sid / w)^2.
struct IndexMatrix {
  std::array<double, 12> m{};
  double sid = 0;
  // True when column and w do not depend on the y index (no tilt): the
  // backprojector then reuses them along y.
  bool y_separable() const;
};

IndexMatrix index_matrix(const ViewGeometry& g, const fdk_volume& volume,
                         const fdk_detector& detector);

// Detector rows [first, last] (clamped to the detector; first > last when
// none) touched by voxel planes [y0, y1) of the volume, from the projections
// of the slab's eight corners (a perspective map keeps convex hulls), widened
// by one row for interpolation.
std::array<int, 2> rows_for_slab(const IndexMatrix& p, const fdk_volume& volume,
                                 int detector_rows, int y0, int y1);

}  // namespace fdk
