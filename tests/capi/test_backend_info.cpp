// fdk_get_backend_info: the checks of its argument, and what it says about
// the build and the machine; the GPU's own answer is in tests/gpu.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "small_scan.hpp"

namespace {

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
#ifdef FDK_TEST_CUDA_BUILT
  EXPECT_EQ(info.cuda_built, 1);
  // The carried code's driver floor, and what this machine's driver is
  // (0 where there is none, as on CI).
  EXPECT_GE(info.driver_required, 13000);
  if (info.cuda_usable) {
    EXPECT_GE(info.driver_version, info.driver_required);
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
  fdk_destroy(ctx);
}

}  // namespace
