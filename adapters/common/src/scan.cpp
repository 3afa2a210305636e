// The uniform scan of an INI description (see fdk/adapters/geometry_io.hpp).
// Apart from the rest of geometry_io.cpp because it calls into libfdk
// (fdk_scan_init): the parsers stay free of any library, for the fuzzers.
#include "fdk/adapters/error.hpp"
#include "fdk/adapters/geometry_io.hpp"

namespace fdk {
namespace adapters {

fdk_scan uniform_scan(const ScanDescription& d, int count) {
  if (!d.sid) fail(ErrorKind::kInvalidArgument, "the source-to-isocentre distance (sid) is not given");
  if (!d.sdd) fail(ErrorKind::kInvalidArgument, "the source-to-detector distance (sdd) is not given");
  if (count < 1) fail(ErrorKind::kInvalidArgument, "no views");
  fdk_scan s;
  fdk_scan_init(&s);
  s.kind = FDK_SCAN_UNIFORM;
  s.num_views = count;
  s.first_angle_deg = d.start_angle.value_or(0.0);
  s.arc_deg = d.direction.value_or(1) * d.arc.value_or(360.0);
  s.uniform.sid = *d.sid;
  s.uniform.sdd = *d.sdd;
  if (d.projection_offset) {
    s.uniform.projection_offset_x = (*d.projection_offset)[0];
    s.uniform.projection_offset_y = (*d.projection_offset)[1];
  }
  if (d.source_offset) {
    s.uniform.source_offset_x = (*d.source_offset)[0];
    s.uniform.source_offset_y = (*d.source_offset)[1];
  }
  s.uniform.in_plane_angle_deg = d.in_plane_angle.value_or(0.0);
  s.uniform.out_of_plane_angle_deg = d.out_of_plane_angle.value_or(0.0);
  return s;
}

}  // namespace adapters
}  // namespace fdk
