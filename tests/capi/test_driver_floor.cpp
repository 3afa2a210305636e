// What a machine without a usable NVIDIA driver gets (suite DriverFloor):
// run against a stand-in libcuda.so.1 (fake_driver/) that answers as a
// driver too old for the carried code, the toolkit's stub, a driver with
// no device, or one that sees no GPU (FDK_FAKE_DRIVER, set by ctest). In
// each case AUTO reconstructs on the CPU, fdk_get_backend_info says why in
// words a user can act on and reports the driver's version, and an explicit
// CUDA request is refused with the same reason.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "small_scan.hpp"

namespace {

std::string mode() {
  const char* m = std::getenv("FDK_FAKE_DRIVER");
  return m ? m : "";
}

// The words the message must hold for the mode.
std::string expected_words() {
  const std::string m = mode();
  if (m == "old") return "supports CUDA 12.4; this build of fdk needs CUDA 13.0 (NVIDIA driver 580 or newer)";
  if (m == "stub") return "the CUDA toolkit's stub, not the NVIDIA driver";
  if (m == "nodevice") return "no CUDA device";
  if (m == "nogpu") return "no CUDA device";
  return "?";
}

TEST(DriverFloor, BackendInfoSaysWhyAndGivesTheDriversVersion) {
  if (mode().empty()) GTEST_SKIP() << "run by ctest with FDK_FAKE_DRIVER set";
  fdk_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(fdk_get_backend_info(&info), FDK_OK);
  EXPECT_EQ(info.cuda_built, 1);
  EXPECT_EQ(info.cuda_usable, 0);
  EXPECT_EQ(info.num_devices, 0);
  EXPECT_EQ(info.driver_required, 13000);
  EXPECT_EQ(info.driver_version, mode() == "old" ? 12040 : 13000);
  EXPECT_NE(std::string(info.message).find(expected_words()), std::string::npos) << info.message;
}

TEST(DriverFloor, AutoReconstructsOnTheCpu) {
  if (mode().empty()) GTEST_SKIP() << "run by ctest with FDK_FAKE_DRIVER set";
  fdk_test::SmallScan scan(16, 12, 24);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  ASSERT_EQ(fdk_get_plan_info(ctx, &plan), FDK_OK);
  EXPECT_EQ(plan.backend, FDK_BACKEND_CPU);
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
}

TEST(DriverFloor, AnExplicitCudaRequestIsRefusedWithTheReason) {
  if (mode().empty()) GTEST_SKIP() << "run by ctest with FDK_FAKE_DRIVER set";
  fdk_test::SmallScan scan(16, 12, 24);
  scan.config.backend = FDK_BACKEND_CUDA;
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_NE(std::string(fdk_last_create_error()).find(expected_words()), std::string::npos)
      << fdk_last_create_error();
  void* p = nullptr;
  ASSERT_EQ(fdk_alloc_host(4096, &p), FDK_OK);  // ordinary memory: no driver to pin it
  EXPECT_EQ(fdk_free_host(p), FDK_OK);
}

}  // namespace
