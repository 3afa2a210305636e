// The geometry estimate at the C ABI (suite EstimateAbi): the estimator's
// handle, a reconstruction that keeps an estimate, the correction of a view,
// and every misuse answered with a status and a message. The estimate's
// accuracy is tests/unit/test_geometry_estimator.cpp's.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "small_scan.hpp"

namespace {

using fdk_test::SmallScan;

fdk_geometry_estimate fresh_estimate() {
  fdk_geometry_estimate e;
  fdk_geometry_estimate_init(&e);
  return e;
}

TEST(EstimateAbi, InitSetsTheSizeAndZeroes) {
  fdk_geometry_estimate e;
  std::memset(&e, 0xab, sizeof e);
  EXPECT_EQ(fdk_geometry_estimate_init(&e), &e);
  EXPECT_EQ(e.struct_size, sizeof e);
  EXPECT_EQ(e.confidence, 0.0);
  EXPECT_EQ(e.basis[0], '\0');
  EXPECT_EQ(fdk_geometry_estimate_init(nullptr), nullptr);
}

TEST(EstimateAbi, EstimatorTakesEveryViewAndAnswers) {
  SmallScan scan;
  fdk_estimator* est = nullptr;
  ASSERT_EQ(fdk_estimator_create(&scan.config, &est), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_estimator_push(est, v, scan.pixels(v), v % 2 ? 0 : scan.pitch()), FDK_OK)
        << fdk_estimator_last_error(est);
  fdk_geometry_estimate e = fresh_estimate();
  ASSERT_EQ(fdk_estimator_estimate(est, &e), FDK_OK) << fdk_estimator_last_error(est);
  EXPECT_EQ(e.struct_size, sizeof e);
  EXPECT_GE(e.confidence, 0.0);
  EXPECT_LE(e.confidence, 1.0);
  EXPECT_GT(e.rows_used, 0);
  EXPECT_GT(std::strlen(e.basis), 0u);
  EXPECT_LT(std::strlen(e.basis), sizeof e.basis);
  EXPECT_STREQ(fdk_estimator_last_error(est), "");
  fdk_estimator_destroy(est);
  fdk_estimator_destroy(est);  // twice: nothing
  fdk_estimator_destroy(nullptr);
}

TEST(EstimateAbi, EstimatorRefusesBadInputAndStaysUsable) {
  SmallScan scan;
  fdk_estimator* est = nullptr;
  ASSERT_EQ(fdk_estimator_create(&scan.config, &est), FDK_OK);
  EXPECT_EQ(fdk_estimator_push(est, -1, scan.pixels(0), 0), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(fdk_estimator_last_error(est)).find("-1"), std::string::npos);
  EXPECT_EQ(fdk_estimator_push(est, scan.views(), scan.pixels(0), 0), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(fdk_estimator_push(est, 0, nullptr, 0), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_estimator_push(est, 0, scan.pixels(0), 3), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_estimator_push(est, 0, scan.pixels(0), 6), FDK_ERROR_INVALID_ARGUMENT);
  std::vector<float> bad(scan.projections[0]);
  bad[bad.size() / 2 + 3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fdk_estimator_push(est, 0, bad.data(), 0), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_estimator_last_error(est)).find("non-finite"), std::string::npos);
  fdk_geometry_estimate e = fresh_estimate();
  e.struct_size = 8;
  EXPECT_EQ(fdk_estimator_estimate(est, &e), FDK_ERROR_STRUCT_SIZE);
  EXPECT_EQ(fdk_estimator_estimate(est, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  // Still usable: a good view goes in, and an estimate comes out.
  EXPECT_EQ(fdk_estimator_push(est, 0, scan.pixels(0), 0), FDK_OK);
  e = fresh_estimate();
  EXPECT_EQ(fdk_estimator_estimate(est, &e), FDK_OK);
  fdk_estimator_destroy(est);
}

TEST(EstimateAbi, DeadOrNullEstimatorIsAStatus) {
  SmallScan scan;
  fdk_estimator* est = nullptr;
  ASSERT_EQ(fdk_estimator_create(&scan.config, &est), FDK_OK);
  fdk_estimator_destroy(est);
  fdk_geometry_estimate e = fresh_estimate();
  EXPECT_EQ(fdk_estimator_push(est, 0, scan.pixels(0), 0), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("not a live"), std::string::npos);
  EXPECT_EQ(fdk_estimator_estimate(est, &e), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_estimator_push(nullptr, 0, scan.pixels(0), 0), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_estimator_estimate(nullptr, &e), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(fdk_estimator_last_error(nullptr), "");
}

TEST(EstimateAbi, CreateRefusesWhatCannotBeEstimated) {
  SmallScan scan;
  fdk_estimator* est = reinterpret_cast<fdk_estimator*>(1);
  EXPECT_EQ(fdk_estimator_create(nullptr, &est), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(est, nullptr);
  EXPECT_EQ(fdk_estimator_create(&scan.config, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  // Matrices only: no RTK parameters to correct.
  fdk_config m = scan.config;
  std::vector<double> matrices(12 * static_cast<size_t>(scan.views()), 0.0);
  m.scan.kind = FDK_SCAN_MATRICES;
  m.scan.matrices = matrices.data();
  EXPECT_EQ(fdk_estimator_create(&m, &est), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("RTK parameters"), std::string::npos);
  fdk_config bad = scan.config;
  bad.scan.uniform.sid = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(fdk_estimator_create(&bad, &est), FDK_ERROR_INVALID_ARGUMENT);
  bad = scan.config;
  bad.scan.num_views = 1;
  EXPECT_EQ(fdk_estimator_create(&bad, &est), FDK_ERROR_INVALID_ARGUMENT);
  bad = scan.config;
  bad.struct_size = 4;
  EXPECT_EQ(fdk_estimator_create(&bad, &est), FDK_ERROR_STRUCT_SIZE);
}

TEST(EstimateAbi, ReconstructionKeepsAnEstimateOnlyWhenAsked) {
  SmallScan scan;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_geometry_estimate e = fresh_estimate();
  EXPECT_EQ(fdk_get_geometry_estimate(ctx, &e), FDK_ERROR_INVALID_STATE);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("estimate_geometry"), std::string::npos);
  fdk_destroy(ctx);

  fdk_config c = scan.config;
  c.estimate_geometry = 2;
  EXPECT_EQ(fdk_create(&c, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("estimate_geometry"), std::string::npos);
  c.estimate_geometry = 1;
  ASSERT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v) ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  EXPECT_EQ(fdk_get_geometry_estimate(ctx, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(fdk_get_geometry_estimate(ctx, &e), FDK_OK) << fdk_last_error(ctx);
  EXPECT_GT(e.rows_used, 0);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  ASSERT_EQ(fdk_get_geometry_estimate(ctx, &e), FDK_OK);
  // The estimate does not change the reconstruction: the same volume as without it.
  std::vector<float> with, without;
  ASSERT_EQ(fdk_test::read_volume(ctx, with), FDK_OK);
  fdk_destroy(ctx);
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  for (int v = 0; v < scan.views(); ++v) ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  ASSERT_EQ(fdk_test::read_volume(ctx, without), FDK_OK);
  fdk_destroy(ctx);
  EXPECT_EQ(with, without);
}

TEST(EstimateAbi, AnOlderConfigGetsNoEstimate) {
  SmallScan scan;
  fdk_config c = scan.config;
  c.estimate_geometry = 1;  // beyond a 0.6 caller's struct: not read
  c.struct_size = offsetof(fdk_config, estimate_geometry);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_geometry_estimate e = fresh_estimate();
  EXPECT_EQ(fdk_get_geometry_estimate(ctx, &e), FDK_ERROR_INVALID_STATE);
  fdk_destroy(ctx);
}

// The estimator takes the config sizes fdk_create takes (this header's and
// the older headers'), no other: one between two known layouts, or past this
// library's, would be read as fields that are not there.
TEST(EstimateAbi, CreateTakesTheConfigSizesFdkCreateTakes) {
  SmallScan scan;
  fdk_estimator* est = nullptr;
  for (size_t size : {sizeof(fdk_config), offsetof(fdk_config, preview), offsetof(fdk_config, estimate_geometry),
                      offsetof(fdk_config, outside_fov)}) {
    fdk_config c = scan.config;
    c.struct_size = static_cast<uint32_t>(size);
    EXPECT_EQ(fdk_estimator_create(&c, &est), FDK_OK) << size << ": " << fdk_last_create_error();
    fdk_estimator_destroy(est);
    est = nullptr;
  }
  for (size_t size : {sizeof(fdk_config) + 8, sizeof(fdk_config) - 4, offsetof(fdk_config, outside_fov) + 2}) {
    fdk_config c = scan.config;
    c.struct_size = static_cast<uint32_t>(size);
    EXPECT_EQ(fdk_estimator_create(&c, &est), FDK_ERROR_STRUCT_SIZE) << size;
    EXPECT_EQ(est, nullptr);
    EXPECT_NE(std::string(fdk_last_create_error()).find("struct_size is " + std::to_string(size)), std::string::npos)
        << fdk_last_create_error();
  }
}

TEST(EstimateAbi, ApplyCorrectsOffsetAndTiltOnly) {
  fdk_geometry_estimate e = fresh_estimate();
  e.offset_u_mm = 1.25;
  e.tilt_deg = -0.3;
  fdk_view v{};
  v.gantry_angle_deg = 30;
  v.sid = 1000;
  v.sdd = 1500;
  v.projection_offset_x = 2;
  v.projection_offset_y = 3;
  v.in_plane_angle_deg = 0.1;
  fdk_view out{};
  ASSERT_EQ(fdk_apply_geometry_estimate(&e, &v, &out), FDK_OK);
  EXPECT_DOUBLE_EQ(out.projection_offset_x, 3.25);
  EXPECT_DOUBLE_EQ(out.in_plane_angle_deg, 0.1 - 0.3);
  EXPECT_EQ(out.projection_offset_y, 3);
  EXPECT_EQ(out.gantry_angle_deg, 30);
  EXPECT_EQ(out.sid, 1000);
  ASSERT_EQ(fdk_apply_geometry_estimate(&e, &v, &v), FDK_OK);  // in place
  EXPECT_DOUBLE_EQ(v.projection_offset_x, 3.25);
  EXPECT_EQ(fdk_apply_geometry_estimate(nullptr, &v, &out), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_apply_geometry_estimate(&e, nullptr, &out), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_apply_geometry_estimate(&e, &v, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  e.tilt_deg = std::numeric_limits<double>::infinity();
  EXPECT_EQ(fdk_apply_geometry_estimate(&e, &v, &out), FDK_ERROR_INVALID_ARGUMENT);
  e = fresh_estimate();
  e.struct_size = 3;
  EXPECT_EQ(fdk_apply_geometry_estimate(&e, &v, &out), FDK_ERROR_STRUCT_SIZE);
}

}  // namespace
