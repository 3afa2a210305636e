// fdk/adapters/geometry_io.hpp — scan geometry in and out:
//   - RTK's XML geometry files (RTKThreeDCircularGeometry, versions 2 and 3),
//     read and written;
//   - a small INI scan description (and the same values from command-line
//     flags, merged on top);
//   - a default volume from the detector and the magnification.
//
// Parsers are hand-written (no XML library): they accept exactly what RTK
// writes and reads plus the usual XML trimmings (declaration, DOCTYPE,
// comments, CDATA, character references), bound their nesting depth and
// input size, and throw Error(kInput) with the file name, the line and the
// problem for anything else.
#ifndef FDK_ADAPTERS_GEOMETRY_IO_HPP
#define FDK_ADAPTERS_GEOMETRY_IO_HPP

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fdk/fdk.h"

namespace fdk {
namespace adapters {

// ---- RTK XML ----------------------------------------------------------------------
// Reading follows RTK's reader: every parameter element sets a value that
// persists for all later projections (so a value before the first
// <Projection> is global, and one inside a <Projection> applies from there
// on); each </Projection> adds one view. Defaults are RTK's (0), so
// SourceToIsocenterDistance and SourceToDetectorDistance must appear (a
// parallel geometry, SDD 0, is refused). Element names are case-insensitive,
// "Angle" is read as GantryAngle, and angles are in degrees. A <Matrix>
// is information: when present it must agree with the parameters to 0.001,
// as RTK requires. Collimation elements are ignored; a non-zero
// RadiusCylindricalDetector is refused (flat panels only). A value outside
// the library's ranges (fdk.h: distances, offsets, angles, SDD / SID) is
// refused here, naming the file, the line and the element, rather than by
// fdk_create, which cannot name them.
std::vector<fdk_view> parse_rtk_geometry(const std::string& xml,
                                         const std::string& name);
std::vector<fdk_view> read_rtk_geometry(const std::string& path);

// Writes version 3 as RTK does: a parameter shared by every view once at the
// top (omitted when 0 for offsets and tilt angles), the others and the
// gantry angle in each <Projection>, angles in degrees normalised to
// [0, 360), and each view's 3x4 <Matrix>.
std::string format_rtk_geometry(const std::vector<fdk_view>& views);
// Throws Error(kOutput); written under a temporary name, then renamed.
void write_rtk_geometry(const std::string& path, const std::vector<fdk_view>& views);

// RTK's projection matrix of a view (row-major 3x4): homogeneous world
// (x, y, z, 1) to (u*w, v*w, w), u and v in detector coordinates.
std::array<double, 12> rtk_matrix(const fdk_view& view);

// ---- INI scan description ------------------------------------------------------------
// Keys (sections give the prefix: "[detector]\nsize = 512 512" is
// "detector.size"); scan keys may be written without their section:
//   scan.sid, scan.sdd                 distances (mm)
//   scan.views                         number of projections
//   scan.start_angle                   gantry angle of the first view (deg)
//   scan.arc                           angle covered; step = arc / views (deg)
//   scan.direction                     ccw | cw | +1 | -1 (increasing or
//                                      decreasing gantry angle)
//   scan.projection_offset = X Y, scan.source_offset = X Y
//   scan.in_plane_angle, scan.out_of_plane_angle (deg)
//   detector.pixel_size = U [V]        pixel pitch (mm)
//   detector.size = COLUMNS ROWS       of the processed projections
//   detector.origin = U V              centre of pixel (0, 0); default centred
//   volume.size = NX NY NZ, volume.spacing = S | SX SY SZ,
//   volume.origin = X Y Z              centre of voxel (0, 0, 0)
// '#' and ';' start comments; unknown keys and bad values are errors, and so
// are values the library would refuse (fdk.h's ranges, value_ranges.hpp):
// angles beyond [-1e6, 1e6] degrees, an arc outside (0, 360], sid and sdd
// outside [1e-6, 1e9], pixel and voxel sizes outside [1e-6, 1e6], offsets
// and origins beyond [-1e9, 1e9], volume sizes beyond 65536 and detector
// sizes outside [2, 65536] per axis. A NUL byte anywhere refuses the file (both parsers),
// naming its line and byte offset.
struct ScanDescription {
  std::optional<double> sid, sdd, start_angle, arc, in_plane_angle, out_of_plane_angle;
  std::optional<int> views;
  std::optional<int> direction;  // +1 or -1
  std::optional<std::array<double, 2>> projection_offset, source_offset, pixel_size,
      detector_origin;
  std::optional<std::array<int, 2>> detector_size;
  std::optional<std::array<int, 3>> volume_size;
  std::optional<std::array<double, 3>> volume_spacing, volume_origin;

  // Where each set value came from, by key ("scan.sid" -> "'scan.ini'
  // line 4" or "--sid"; "volume.size" -> "'v.mha' (--like), DimSize"):
  // messages about a value the library refuses name what the user gave.
  // set() records it; a caller that fills a field itself may too.
  std::map<std::string, std::string> sources;

  // Every value set in `over` replaces this one's (and its source).
  void merge(const ScanDescription& over);
  // The source of `key`, "" when unknown or unset.
  std::string source(const std::string& key) const;
  // Sets one key from its text value ("scan.sid", "1000"); false for an
  // unknown key; throws Error(kInvalidArgument) for a bad value, naming
  // `where` ("scan.ini line 4" or "--sid").
  bool set(const std::string& key, const std::string& value, const std::string& where);
};

ScanDescription parse_scan_ini(const std::string& text, const std::string& name);
ScanDescription read_scan_ini(const std::string& path);
std::string format_scan_ini(const ScanDescription& description);

// The views of a uniform description: views[i] has gantry angle
// start + direction * i * arc / count. Needs sid and sdd.
fdk_scan uniform_scan(const ScanDescription& description, int count);

// ---- default volume -----------------------------------------------------------------
// Voxels of the detector pixel size divided by the magnification SDD/SID
// (x and z from the u pitch, y from the v pitch); x and z span the circle
// that the views' fan reaches (the larger of the two edge rays' distances
// to the axis, which is the half-fan circle with an offset detector); y
// spans the detector's height at the isocentre. Uses the first view's
// distances and offsets.
fdk_volume default_volume(const fdk_detector& detector, const fdk_view& view);

// A detector centred on the principal ray: origin -(size - 1) / 2 * spacing.
fdk_detector centred_detector(int columns, int rows, double pitch_u, double pitch_v);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_GEOMETRY_IO_HPP
