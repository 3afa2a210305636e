// The partition of a volume among ranks (core/partition, MPI-free): plane
// ranges in proportion to capacity, the rows a range needs, and a
// Reconstruction of part of the volume, given only those rows of each view,
// against the whole volume's reconstruction, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "fdk/core/cpu_backend.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/partition.hpp"
#include "fdk/core/reconstruction.hpp"
#include "small_scan.hpp"

namespace {

using Ranges = std::vector<std::array<int, 2>>;

TEST(SplitPlanes, SharesFollowCapacityInWholeUnits) {
  EXPECT_EQ(fdk::split_planes(100, 1, {1, 1}), (Ranges{{0, 50}, {50, 100}}));
  EXPECT_EQ(fdk::split_planes(100, 1, {1, 3}), (Ranges{{0, 25}, {25, 100}}));
  EXPECT_EQ(fdk::split_planes(100, 8, {1, 1, 1}), (Ranges{{0, 32}, {32, 72}, {72, 100}}));
  // A rank without capacity gets nothing, the others share everything.
  EXPECT_EQ(fdk::split_planes(10, 1, {1, 0, 1}), (Ranges{{0, 5}, {0, 0}, {5, 10}}));
  EXPECT_EQ(fdk::split_planes(10, 1, {-1, 2}), (Ranges{{0, 0}, {0, 10}}));
  // More ranks than units: some ranks get none, every plane is given once.
  const auto r = fdk::split_planes(3, 1, {1, 1, 1, 1, 1});
  int covered = 0, empty = 0;
  for (const auto& p : r) {
    EXPECT_LE(p[0], p[1]);
    if (p[0] == p[1]) ++empty;
    covered += p[1] - p[0];
  }
  EXPECT_EQ(covered, 3);
  EXPECT_EQ(empty, 2);
  EXPECT_THROW(fdk::split_planes(10, 1, {0, 0}), fdk::Error);
  EXPECT_THROW(fdk::split_planes(10, 1, {1, std::nan("")}), fdk::Error);
}

TEST(SplitPlanes, ARanksBudgetCapsItsShareAndTheOthersTakeTheRest) {
  constexpr int kNone = std::numeric_limits<int>::max();
  EXPECT_EQ(fdk::split_planes(100, 1, {1, 1}, {20, kNone}), (Ranges{{0, 20}, {20, 100}}));
  EXPECT_EQ(fdk::split_planes(100, 10, {1, 1, 1}, {kNone, 10, kNone}), (Ranges{{0, 50}, {50, 60}, {60, 100}}));
  // Caps that do not bind change nothing.
  EXPECT_EQ(fdk::split_planes(100, 1, {1, 3}, {60, 90}), (Ranges{{0, 25}, {25, 100}}));
  // Together too small: BUDGET.
  try {
    fdk::split_planes(100, 1, {1, 1}, {10, 10});
    FAIL() << "caps holding 20 of 100 planes were accepted";
  } catch (const fdk::Error& e) {
    EXPECT_EQ(e.code(), FDK_ERROR_BUDGET);
  }
}

TEST(SplitPlanes, RangesAreContiguousAndCoverTheVolume) {
  for (int planes : {1, 7, 64, 1000})
    for (int unit : {1, 4, 16})
      for (int ranks = 1; ranks <= 6; ++ranks) {
        std::vector<double> capacity;
        for (int r = 0; r < ranks; ++r) capacity.push_back(1.0 + r % 3);
        int next = 0;
        for (const auto& p : fdk::split_planes(planes, unit, capacity)) {
          if (p[0] == p[1]) continue;
          EXPECT_EQ(p[0], next);
          EXPECT_TRUE(p[0] % unit == 0);
          next = p[1];
        }
        EXPECT_EQ(next, planes) << planes << " " << unit << " " << ranks;
      }
}

TEST(RowsNeeded, ABandWithinTheDetectorThatGrowsWithThePlanes) {
  fdk_test::SmallScan scan(32, 8, 48);
  const fdk::ScanRows rows(scan.config);
  const auto all = rows.rows(0, 32);
  const auto top = rows.rows(0, 8);
  const auto bottom = rows.rows(24, 32);
  EXPECT_GE(top[0], 0);
  EXPECT_LE(all[1], 48);
  EXPECT_LT(top[1], bottom[1]);
  EXPECT_LT(top[0], bottom[0]);
  EXPECT_LE(all[0], top[0]);
  EXPECT_GE(all[1], bottom[1]);
  EXPECT_LT(top[1] - top[0], 48);  // a quarter of the planes needs less than the whole detector
  EXPECT_EQ(rows.rows(5, 5), (std::array<int, 2>{0, 0}));
  scan.config.hann_cutoff_v = 0.5;  // filtered along v: whole columns
  EXPECT_EQ(fdk::ScanRows(scan.config).rows(0, 8), (std::array<int, 2>{0, 48}));
}

std::unique_ptr<fdk::Backend> cpu(const fdk::ScanModel& m, const fdk::Settings& s) {
  return fdk::make_cpu_backend(m, s.num_threads);
}

// Planes [y0, y1) reconstructed by a part given only the rows it needs.
std::vector<float> part_volume(const fdk_test::SmallScan& scan, int y0, int y1) {
  fdk::Reconstruction part(scan.config, cpu, fdk::Part{y0, y1});
  const fdk::ScanRows rows(scan.config);
  for (int v = 0; v < scan.views(); ++v) {
    const auto r = rows.rows(rows.configured(v), y0, y1);
    part.push_rows(v, r[0], r[1], scan.pixels(v) + static_cast<size_t>(r[0]) * scan.config.detector.size[0], scan.pitch(),
                   nullptr);
  }
  part.finish();
  std::vector<float> out;
  for (int s = 0; s < part.slab_count(); ++s) {
    const auto info = part.slab_info(s);
    EXPECT_GE(info.y_begin, y0);
    EXPECT_LE(info.y_end, y1);
    std::vector<float> slab(info.byte_size / 4);
    part.read_slab(s, slab.data(), info.byte_size);
    out.insert(out.end(), slab.begin(), slab.end());
  }
  return out;
}

std::vector<float> whole_volume(const fdk_test::SmallScan& scan) {
  fdk::Reconstruction whole(scan.config, cpu);
  for (int v = 0; v < scan.views(); ++v) whole.push(v, scan.pixels(v), scan.pitch(), nullptr);
  whole.finish();
  std::vector<float> out;
  for (int s = 0; s < whole.slab_count(); ++s) {
    const auto info = whole.slab_info(s);
    std::vector<float> slab(info.byte_size / 4);
    whole.read_slab(s, slab.data(), info.byte_size);
    out.insert(out.end(), slab.begin(), slab.end());
  }
  return out;
}

void expect_parts_make_the_whole(const fdk_test::SmallScan& scan, const Ranges& parts) {
  const auto whole = whole_volume(scan);
  std::vector<float> joined;
  for (const auto& p : parts) {
    const auto v = part_volume(scan, p[0], p[1]);
    joined.insert(joined.end(), v.begin(), v.end());
  }
  ASSERT_EQ(joined.size(), whole.size());
  EXPECT_EQ(std::memcmp(joined.data(), whole.data(), whole.size() * 4), 0) << "not bit-identical";
}

// Bit for bit with the same slabs: the CPU's untilted sweep steps along a
// slab from its first plane, so a voxel's rounding depends on where its
// slab starts (parts start on multiples of slab_thickness, as libfdk_mpi
// splits them).
TEST(PartialReconstruction, PartsGivenOnlyTheirRowsMakeTheWholeVolumeBitForBit) {
  fdk_test::SmallScan scan(32, 24, 48);
  scan.config.slab_thickness = 5;
  expect_parts_make_the_whole(scan, {{0, 10}, {10, 15}, {15, 32}});
}

TEST(PartialReconstruction, TiltsOffsetsAShortScanAndAHalfFanToo) {
  fdk_test::SmallScan scan(32, 30, 48);
  scan.config.scan.arc_deg = 220;
  scan.config.scan.uniform.out_of_plane_angle_deg = 4;
  scan.config.scan.uniform.projection_offset_y = 3;
  scan.config.scan.uniform.projection_offset_x = 9;
  scan.config.offset_detector = FDK_ON;
  scan.config.slab_thickness = 8;
  scan.reproject();
  expect_parts_make_the_whole(scan, {{0, 16}, {16, 32}});
}

TEST(PartialReconstruction, TheHannWindowAlongVNeedsWholeColumns) {
  fdk_test::SmallScan scan(32, 16, 48);
  scan.config.hann_cutoff_v = 0.6;
  scan.config.slab_thickness = 4;
  expect_parts_make_the_whole(scan, {{0, 20}, {20, 32}});
}

TEST(PartialReconstruction, RowsAPartWasNotGivenAreAnErrorNotGarbage) {
  fdk_test::SmallScan scan(32, 8, 48);
  fdk::Reconstruction part(scan.config, cpu, fdk::Part{0, 8});
  for (int v = 0; v < scan.views(); ++v)  // the wrong band: the bottom rows only
    part.push_rows(v, 40, 48, scan.pixels(v) + 40 * 48, scan.pitch(), nullptr);
  part.finish();
  std::vector<float> slab(part.slab_info(0).byte_size / 4);
  try {
    part.read_slab(0, slab.data(), slab.size() * 4);
    FAIL() << "read rows it was never given";
  } catch (const fdk::Error& e) {
    EXPECT_EQ(e.code(), FDK_ERROR_INTERNAL);
    EXPECT_NE(std::string(e.what()).find("outside its band of rows"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fdk::Reconstruction(scan.config, cpu, fdk::Part{8, 8}), fdk::Error);
  EXPECT_THROW(fdk::Reconstruction(scan.config, cpu, fdk::Part{0, 33}), fdk::Error);
  EXPECT_THROW(part.push_rows(0, 5, 5, scan.pixels(0), scan.pitch(), nullptr), fdk::Error);
}

}  // namespace
