// Size arithmetic that says when it does not fit (fdk/core/checked.hpp), and
// the geometry's integer conversions at the edges of what doubles hold.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "fdk/core/checked.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/geometry.hpp"

namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const fdk::Error& e) {
    EXPECT_EQ(e.code(), FDK_ERROR_INVALID_ARGUMENT);
    return e.what();
  }
  ADD_FAILURE() << "no fdk::Error";
  return "";
}

}  // namespace

TEST(Checked, MultiplyAndAddSayWhenTheResultDoesNotFit) {
  uint64_t out = 7;
  EXPECT_TRUE(fdk::multiply_fits<uint64_t>(0, kMax64, &out));
  EXPECT_EQ(out, 0u);
  EXPECT_TRUE(fdk::multiply_fits<uint64_t>(uint64_t{1} << 32, (uint64_t{1} << 32) - 1, &out));
  EXPECT_EQ(out, (uint64_t{1} << 32) * ((uint64_t{1} << 32) - 1));
  out = 7;
  EXPECT_FALSE(fdk::multiply_fits<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32, &out));
  EXPECT_EQ(out, 7u);  // untouched
  // Three int32 extents of 2^31 - 1: about 1e28 voxels, beyond 64 bits.
  const uint64_t extent = 2147483647u;
  uint64_t xy = 0, xyz = 0;
  ASSERT_TRUE(fdk::multiply_fits(extent, extent, &xy));
  EXPECT_FALSE(fdk::multiply_fits(xy, extent, &xyz));

  EXPECT_TRUE(fdk::add_fits<uint64_t>(kMax64 - 1, 1, &out));
  EXPECT_EQ(out, kMax64);
  EXPECT_FALSE(fdk::add_fits<uint64_t>(kMax64, 1, &out));
  EXPECT_FALSE(fdk::add_fits<uint64_t>(kMax64 / 2 + 1, kMax64 / 2 + 1, &out));
  size_t s = 0;
  EXPECT_FALSE(fdk::multiply_fits<size_t>(std::numeric_limits<size_t>::max(), 2, &s));
}

TEST(Checked, ThrowingFormsNameTheQuantity) {
  EXPECT_EQ(fdk::checked_multiply<uint64_t>(3, 5, "x"), 15u);
  EXPECT_EQ(fdk::checked_add<uint64_t>(3, 5, "x"), 8u);
  std::string msg = message_of([] { fdk::checked_multiply<uint64_t>(uint64_t{1} << 40, uint64_t{1} << 40, "bytes of a slab"); });
  EXPECT_NE(msg.find("bytes of a slab"), std::string::npos) << msg;
  EXPECT_NE(msg.find("18446744073709551615"), std::string::npos) << msg;
  msg = message_of([] { fdk::checked_add<uint64_t>(kMax64, 2, "host budget"); });
  EXPECT_NE(msg.find("host budget"), std::string::npos) << msg;
}

TEST(Checked, ClampToIntNeverConvertsOutOfRange) {
  EXPECT_EQ(fdk::clamp_to_int(3.7, 0, 10, -1), 3);
  EXPECT_EQ(fdk::clamp_to_int(-3.7, -5, 10, 0), -3);
  EXPECT_EQ(fdk::clamp_to_int(1e300, 0, 10, -1), 10);
  EXPECT_EQ(fdk::clamp_to_int(-1e300, 0, 10, -1), 0);
  EXPECT_EQ(fdk::clamp_to_int(3e9, -1, 2147483647, 0), 2147483647);
  EXPECT_EQ(fdk::clamp_to_int(std::numeric_limits<double>::infinity(), 0, 10, -1), 10);
  EXPECT_EQ(fdk::clamp_to_int(std::numeric_limits<double>::quiet_NaN(), 0, 10, -1), -1);
}

// A voxel just in front of the source projects billions of rows away: the
// row window of its slab is then the whole detector (the rows it reaches
// run off both ends), not empty. The old code converted the row to int
// directly (undefined; x86 gives INT_MIN) and returned first > last: the
// view was left out of the slab and the volume came out wrong with FDK_OK.
TEST(Checked, RowWindowOfASlabReachingTheSourcePlaneIsTheWholeDetector) {
  fdk_view v{};
  v.sid = 500;
  v.sdd = 750;
  const fdk::ViewGeometry g = fdk::view_from_parameters(v);
  fdk_volume vol{};
  vol.size[0] = 1;
  vol.size[1] = 8;
  vol.size[2] = 8;
  vol.spacing[0] = 0.5;
  vol.spacing[1] = 250;
  vol.spacing[2] = (532.0 - 1e-4) / 8;
  vol.origin[0] = 0;
  vol.origin[1] = -875;
  vol.origin[2] = -32 + 0.5 * vol.spacing[2];  // voxel edges from z = -32 to 1e-4 short of the source
  fdk_detector det{};
  det.size[0] = det.size[1] = 48;
  det.spacing[0] = det.spacing[1] = 2.5;
  det.origin[0] = det.origin[1] = -0.5 * 47 * 2.5;
  const fdk::IndexMatrix m = fdk::index_matrix(g, vol, det);
  const auto rows = fdk::rows_for_slab(m, vol, 48, 0, 8);
  EXPECT_EQ(rows[0], 0);
  EXPECT_EQ(rows[1], 47);
  // A slab that projects wholly off the detector still has no rows.
  vol.origin[2] = -32;
  vol.spacing[2] = 1;
  vol.origin[1] = 3000;
  vol.spacing[1] = 1;
  const auto none = fdk::rows_for_slab(fdk::index_matrix(g, vol, det), vol, 48, 0, 8);
  EXPECT_GT(none[0], none[1]);
}
