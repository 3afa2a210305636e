// How a volume is shared among processes (libfdk_mpi's ranks), MPI-free so
// that it is unit-tested here: each rank owns a contiguous range of y planes
// in proportion to its capacity, and needs of every view only the band of
// detector rows that its planes project onto.
#pragma once
#include <array>
#include <vector>

#include <fdk/fdk.h>

#include "fdk/core/geometry.hpp"
#include "fdk/core/reconstruction.hpp"

namespace fdk {

// One process's part of the volume (Reconstruction's optional argument).
struct Part {
  int plane_begin = 0, plane_end = 0;  // [begin, end), not empty
};

// Splits planes [0, planes) into one contiguous range per entry of
// `capacity`, in order, each as close to its share as whole units of `unit`
// planes allow (the last unit may be short). Entries <= 0 get an empty
// range; so do the last ones when there are fewer units than ranks with
// capacity. `max_planes` (optional, per rank) caps a rank's planes (its
// budget): the others share what it cannot take. Throws fdk::Error:
// INVALID_ARGUMENT when no entry is > 0 or a capacity is not finite,
// BUDGET when the caps together hold fewer planes than the volume has.
std::vector<std::array<int, 2>> split_planes(int planes, int unit, const std::vector<double>& capacity,
                                             const std::vector<int>& max_planes = {});

// The detector rows [first, end) that planes [y0, y1) need from a view with
// index matrix `m`: rows_for_slab's window, with one more row on each side
// for the CPU backprojector's two-row minimum; every row when the view is
// filtered along v too (whole_columns: fdk_config.hann_cutoff_v), and none
// ({0, 0}) when y0 == y1.
std::array<int, 2> rows_needed(const IndexMatrix& m, const fdk_volume& volume, int detector_rows, int y0, int y1,
                               bool whole_columns);

// The union of rows_needed over the views (empty: {0, 0}).
std::array<int, 2> rows_needed(const std::vector<IndexMatrix>& matrices, const fdk_volume& volume, int detector_rows,
                               int y0, int y1, bool whole_columns);

// The geometry a sender needs to cut views into the ranks' row bands,
// without a reconstruction of its own (a rank with no planes also pushes).
class ScanRows {
 public:
  // Validates the configuration as fdk_create does; throws fdk::Error.
  explicit ScanRows(const fdk_config& config);
  const Settings& settings() const { return settings_; }
  int num_views() const { return static_cast<int>(matrices_.size()); }
  int detector_rows() const { return detector_.size[1]; }
  const IndexMatrix& configured(int view) const { return matrices_[static_cast<size_t>(view)]; }
  // A measured geometry's matrix, checked as a push checks it.
  IndexMatrix matrix(const fdk_view& view) const;
  // rows_needed for planes [y0, y1).
  std::array<int, 2> rows(const IndexMatrix& m, int y0, int y1) const;
  std::array<int, 2> rows(int y0, int y1) const;  // over the configured views

 private:
  Settings settings_;
  fdk_detector detector_{};  // as filtered (rows as pushed)
  std::vector<IndexMatrix> matrices_;
};

}  // namespace fdk
