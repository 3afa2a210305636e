#include "fingerprint.hpp"

#include <cstring>

namespace fdk::mpi {

namespace {

// FNV-1a over values fed one by one (never over a struct's padding).
class Hash {
 public:
  template <class T>
  Hash& add(const T& value) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (unsigned char b : bytes) h_ = (h_ ^ b) * 16777619u;
    return *this;
  }
  Hash& add(const fdk_view& v) {
    return add(v.gantry_angle_deg).add(v.sid).add(v.sdd).add(v.source_offset_x).add(v.source_offset_y)
        .add(v.projection_offset_x).add(v.projection_offset_y).add(v.in_plane_angle_deg).add(v.out_of_plane_angle_deg);
  }
  int32_t word() const {
    int32_t w;
    std::memcpy(&w, &h_, sizeof w);
    return w;
  }

 private:
  uint32_t h_ = 2166136261u;
};

}  // namespace

const std::vector<std::string>& fingerprint_groups() {
  static const std::vector<std::string> groups = {
      "volume", "detector", "scan", "filter (window, cutoff, weights, padding, hann_cutoff_v)",
      "precision, store_policy or outside_fov", "slab_thickness", "fdk_mpi_config.root"};
  return groups;
}

std::vector<int32_t> fingerprint(const fdk_config& c, const fdk_scan& caller_scan, const fdk_mpi_config& mpi) {
  Hash volume, detector, scan, filter, store, slabs, root;
  for (int i = 0; i < 3; ++i) volume.add(c.volume.size[i]).add(c.volume.spacing[i]).add(c.volume.origin[i]);
  for (int i = 0; i < 2; ++i) detector.add(c.detector.size[i]).add(c.detector.spacing[i]).add(c.detector.origin[i]);
  scan.add(c.scan.kind).add(c.scan.num_views).add(c.scan.first_angle_deg).add(c.scan.arc_deg).add(c.scan.uniform);
  if (c.scan.kind == FDK_SCAN_VIEWS && caller_scan.views)
    for (int v = 0; v < c.scan.num_views; ++v) scan.add(caller_scan.views[v]);
  if (c.scan.kind == FDK_SCAN_MATRICES && caller_scan.matrices)
    for (int64_t i = 0; i < 12 * static_cast<int64_t>(c.scan.num_views); ++i) scan.add(caller_scan.matrices[i]);
  filter.add(c.window).add(c.cutoff).add(c.short_scan).add(c.offset_detector).add(c.truncation_padding)
      .add(c.hann_cutoff_v);
  store.add(c.precision).add(c.store_policy).add(c.outside_fov);
  slabs.add(c.slab_thickness);
  root.add(mpi.root);
  return {volume.word(), detector.word(), scan.word(), filter.word(), store.word(), slabs.word(), root.word()};
}

}  // namespace fdk::mpi
