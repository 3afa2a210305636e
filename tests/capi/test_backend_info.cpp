// fdk_get_backend_info: the checks of its argument, and what it says about
// the build and the machine; the GPU's own answer is in tests/gpu.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "small_scan.hpp"

namespace {

// Set where the machine has no NVIDIA driver and the test must see that
// (.ci/windows.sh under Wine); elsewhere what the machine has is read, not
// assumed.
bool expect_no_cuda_driver() {
  const char* v = std::getenv("FDK_TEST_EXPECT_NO_CUDA_DRIVER");
  return v && std::string(v) == "1";
}

TEST(BackendInfo, RefusesNullAndAWrongStructSize) {
  EXPECT_EQ(fdk_get_backend_info(nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("fdk_backend_info is NULL"), std::string::npos);
  fdk_backend_info info{};
  info.struct_size = sizeof info - 4;
  info.num_devices = 77;
  EXPECT_EQ(fdk_get_backend_info(&info), FDK_ERROR_STRUCT_SIZE);
  EXPECT_EQ(info.num_devices, 77);  // a refused call writes nothing
}

// A caller built against 0.4/0.5 passes the struct as it ended then (at
// message): it is answered up to there and nothing past it is written.
TEST(BackendInfo, AnswersA05CallerWithinItsSmallerStruct) {
  constexpr uint32_t size05 = offsetof(fdk_backend_info, driver_version);
  fdk_backend_info info{};
  std::memset(&info, 0x5a, sizeof info);
  info.struct_size = size05;
  ASSERT_EQ(fdk_get_backend_info(&info), FDK_OK) << fdk_last_create_error();
  EXPECT_EQ(info.struct_size, size05);
  EXPECT_LT(std::strlen(info.message), sizeof info.message);
  EXPECT_EQ(info.driver_version, 0x5a5a5a5a) << "a 0.5 caller's memory past its struct was written";
  EXPECT_EQ(info.driver_required, 0x5a5a5a5a);
}

TEST(BackendInfo, SaysWhatTheBuildCarriesAndWhyCudaIsNotUsedHere) {
  fdk_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(fdk_get_backend_info(&info), FDK_OK);
  EXPECT_EQ(info.struct_size, sizeof info);
  // For the log (.ci/windows.sh shows this line).
  std::printf("backend info: cuda_built=%d cuda_usable=%d driver_version=%d driver_required=%d devices=%d: \"%s\"\n",
              info.cuda_built, info.cuda_usable, info.driver_version, info.driver_required, info.num_devices,
              info.message);
#ifdef FDK_TEST_CUDA_BUILT
  EXPECT_EQ(info.cuda_built, 1);
  // The carried code's driver floor (the major version of the nvcc that
  // made the fatbin: 13000 for CUDA 13.0, NVIDIA driver 580), and what this
  // machine's driver is (0 where there is none, as on CI).
  EXPECT_GE(info.driver_required, 13000);
#ifdef FDK_TEST_CUDA_DRIVER_REQUIRED
  EXPECT_EQ(info.driver_required, FDK_TEST_CUDA_DRIVER_REQUIRED);
#endif
  if (info.cuda_usable) {
    EXPECT_GE(info.driver_version, info.driver_required);
  } else {
    // Why, in words a user can act on: every reason names the driver or
    // the device (no driver, a stub, too old, no GPU, no code for it).
    const std::string why = info.message;
    EXPECT_TRUE(why.find("NVIDIA driver") != std::string::npos || why.find("CUDA device") != std::string::npos)
        << why;
  }
  if (expect_no_cuda_driver()) {
    EXPECT_EQ(info.cuda_usable, 0);
    EXPECT_EQ(info.driver_version, 0);
    EXPECT_EQ(info.num_devices, 0);
    EXPECT_NE(std::string(info.message).find("the NVIDIA driver is not installed"), std::string::npos)
        << info.message;
#ifdef _WIN32
    EXPECT_NE(std::string(info.message).find("nvcuda.dll"), std::string::npos) << info.message;
#endif
  }
  ASSERT_GT(info.num_sass, 0);
  for (int i = 1; i < info.num_sass; ++i) EXPECT_LT(info.sass[i - 1], info.sass[i]);
#ifdef FDK_TEST_DEFAULT_CUDA_ARCHS
  // The fat binary of the packages and the README's commands.
  const int expected[] = {75, 80, 86, 89, 90, 100, 120};
  ASSERT_EQ(info.num_sass, 7);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(info.sass[i], expected[i]);
  EXPECT_EQ(info.ptx, 120);
#endif
#else
  EXPECT_EQ(info.cuda_built, 0);
  EXPECT_EQ(info.num_sass, 0);
  EXPECT_EQ(info.driver_required, 0);
  EXPECT_NE(std::string(info.message).find("no CUDA backend"), std::string::npos);
#endif
  ASSERT_LT(std::strlen(info.message), sizeof info.message);
  if (!info.cuda_usable) {
    EXPECT_GT(std::strlen(info.message), 0u) << "CUDA unusable must say why";
  } else {
    EXPECT_GT(info.num_devices, 0);
    EXPECT_EQ(info.message[0], '\0');
  }
  for (int d = 0; d < info.num_devices && d < FDK_MAX_DEVICES; ++d) {
    EXPECT_GE(info.code[d], FDK_GPU_CODE_NONE);
    EXPECT_LE(info.code[d], FDK_GPU_CODE_JIT);
  }
}

TEST(BackendInfo, AgreesWithTheAutoBackendChoice) {
  fdk_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(fdk_get_backend_info(&info), FDK_OK);
  fdk_test::SmallScan scan(8, 4, 8);  // backend AUTO
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  ASSERT_EQ(fdk_get_plan_info(ctx, &plan), FDK_OK);
  EXPECT_EQ(plan.backend, info.cuda_usable ? FDK_BACKEND_CUDA : FDK_BACKEND_CPU);
  if (expect_no_cuda_driver()) {
    EXPECT_EQ(plan.backend, FDK_BACKEND_CPU);
  }
  fdk_destroy(ctx);
}

// An explicit CUDA request where CUDA cannot be used is refused with the
// reason fdk_get_backend_info gives (never a silent CPU run).
TEST(BackendInfo, ACudaRequestIsRefusedWithItsReasonWhereCudaIsUnusable) {
  fdk_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(fdk_get_backend_info(&info), FDK_OK);
  if (info.cuda_usable) GTEST_SKIP() << "CUDA is usable here";
  fdk_test::SmallScan scan(8, 4, 8);
  scan.config.backend = FDK_BACKEND_CUDA;
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(ctx, nullptr);
  ASSERT_GT(std::strlen(info.message), 0u);
  EXPECT_NE(std::string(fdk_last_create_error()).find(info.message), std::string::npos)
      << "refused with \"" << fdk_last_create_error() << "\", while fdk_get_backend_info says \"" << info.message
      << "\"";
  if (ctx) fdk_destroy(ctx);
}

}  // namespace
