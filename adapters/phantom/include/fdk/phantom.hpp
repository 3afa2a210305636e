// fdk/phantom.hpp — analytic ellipsoid phantoms and their exact cone-beam
// projections: the physical truth the reconstruction is tested against.
//
// Written independently of the library core: it shares only the public types
// of fdk/fdk.h (fdk_config, fdk_view, fdk_detector) and re-derives the
// geometry from RTK's ThreeDCircularProjectionGeometry definition:
//
//   rotated frame r = M_R * world, M_R = Rz(-in_plane) * Rx(-out_of_plane)
//                                        * Ry(-gantry)
//   with Ry(a) = [[cos a, 0, sin a], [0, 1, 0], [-sin a, 0, cos a]],
//        Rx(a) = [[1, 0, 0], [0, cos a, -sin a], [0, sin a, cos a]],
//        Rz(a) = [[cos a, -sin a, 0], [sin a, cos a, 0], [0, 0, 1]];
//   source (rotated frame)           = (source_offset_x, source_offset_y, sid)
//   detector point (u, v) (rotated)  = (u + projection_offset_x,
//                                       v + projection_offset_y, sid - sdd)
//   and pixel (i, j) has (u, v) = detector.origin + (i, j) * detector.spacing.
//
// So at gantry 0 the source is on +z and u runs along +x; at gantry 90 the
// source is at world (+sid, 0, 0).
#ifndef FDK_PHANTOM_HPP
#define FDK_PHANTOM_HPP

#include <vector>

#include "fdk/fdk.h"

namespace fdk {
namespace phantom {

// An ellipsoid: semi-axes along its own x, y, z axes, rotated by angle_deg
// about the y axis (a point p is inside when q = Ry(angle)^T (p - center)
// satisfies sum (q_i / semi_axes_i)^2 <= 1), adding `density` inside.
struct Ellipsoid {
  double center[3];
  double semi_axes[3];
  double angle_deg;  // rotation about the y axis (the rotation axis)
  double density;
};

// The 3D Shepp-Logan head phantom: the ellipsoids of Kak & Slaney's 3D table
// (Principles of Computerized Tomographic Imaging, p. 102) with the ORIGINAL
// Shepp-Logan densities 2.0, -0.98, -0.02, -0.02, 0.01 x 6 (skull 2.0,
// brain 1.02, the two large dark ellipsoids 1.00, the others 1.03).
// Kak-Slaney's head axis z is our y (the rotation axis); the map
// (x, y, z)_KS -> (x, z, -y)_ours is a proper rotation, so the in-plane
// angles stay the same and the axial slices (x across, z down) show the
// classic picture upright. Every length of the unit table is multiplied by
// `scale`: the skull's semi-axes are (0.69, 0.90, 0.92) * scale along our
// (x, y, z). Entry order is the table's: [0] skull, [1] brain, [2] and [3]
// the large dark ellipsoids, [4] the large 1.03 one, [5..9] the small ones.
std::vector<Ellipsoid> shepp_logan_3d(double scale);

// The same ellipsoids with Toft's "modified" (higher-contrast) densities
// 1.0, -0.8, -0.2, -0.2, 0.1 x 6: skull 1.0, brain 0.2, the two large dark
// ellipsoids 0.0, the others 0.3. The interior structures differ from the
// brain by 10 % of the skull (0.5 % in the original), so they stay visible
// in a noisy scan: the phantom of the README's sample.
std::vector<Ellipsoid> modified_shepp_logan_3d(double scale);

// True when (x, y, z) lies inside or on the ellipsoid.
bool contains(const Ellipsoid& e, double x, double y, double z);

// Sum of the densities of the ellipsoids containing (x, y, z).
double density_at(const std::vector<Ellipsoid>& phantom, double x, double y,
                  double z);

// Euclidean distance from (x, y, z) to the surface of `e` (inside or
// outside; 0 on the surface). Exact up to rounding.
double distance_to_surface(const Ellipsoid& e, double x, double y, double z);

// Length of the part of the segment from `from` to `to` inside `e`.
double chord_length(const Ellipsoid& e, const double from[3],
                    const double to[3]);

// The RTK parameters of view `view` of `config`: FDK_SCAN_UNIFORM gives
// scan.uniform with gantry angle first_angle_deg + view * arc_deg / num_views;
// FDK_SCAN_VIEWS gives scan.views[view]. Throws std::out_of_range for a bad
// index and std::invalid_argument for FDK_SCAN_MATRICES or a NULL views.
fdk_view view_of(const fdk_config& config, int view);

// World coordinates of the source and of the centre of detector pixel (i, j)
// for `view` (the geometry above).
void source_position(const fdk_view& view, double out[3]);
void pixel_position(const fdk_view& view, const fdk_detector& detector,
                    int i, int j, double out[3]);

// Exact line integrals (sum over ellipsoids of chord length times density)
// along the segment from the source to the centre of each detector pixel,
// written as detector.size[1] rows of detector.size[0] floats, contiguous.
// Units: the geometry's length unit times density.
void project(const std::vector<Ellipsoid>& phantom, const fdk_config& config,
             int view, float* out);
void project_view(const std::vector<Ellipsoid>& phantom, const fdk_view& view,
                  const fdk_detector& detector, float* out);

}  // namespace phantom
}  // namespace fdk

#endif  // FDK_PHANTOM_HPP
