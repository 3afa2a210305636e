// The rule that says which of the binary's GPU code a device runs
// (fdk_get_backend_info), on the runtime's answers for real and future
// GPUs; no GPU needed.
#include <gtest/gtest.h>

#include "gpu_code.hpp"

namespace {

using fdk::cuda::classify_gpu_code;

const std::vector<int> kFat = {75, 80, 86, 89, 90, 100, 120};
const std::vector<int> kFatPtx = {120};

TEST(GpuCode, ADeviceOfABuiltArchitectureRunsItsMachineCode) {
  const auto h200 = classify_gpu_code(90, true, 90, kFat, kFatPtx);
  EXPECT_EQ(h200.code, FDK_GPU_CODE_SASS);
  EXPECT_EQ(h200.arch, 90);
  EXPECT_EQ(h200.compute_capability, 90);
}

TEST(GpuCode, ALaterMinorVersionRunsTheCubinOfItsMajor) {
  // An RTX A2000 (8.6) on a build of 80 only, a B300 (10.3) on sm_100.
  const auto ampere = classify_gpu_code(86, true, 80, {75, 80}, {80});
  EXPECT_EQ(ampere.code, FDK_GPU_CODE_SASS);
  EXPECT_EQ(ampere.arch, 80);
  const auto b300 = classify_gpu_code(103, true, 100, kFat, kFatPtx);
  EXPECT_EQ(b300.code, FDK_GPU_CODE_SASS);
  EXPECT_EQ(b300.arch, 100);
}

TEST(GpuCode, AGpuNewerThanTheBuildIsJitCompiledFromTheNewestPtx) {
  // The runtime reports the device's own architecture after a JIT.
  const auto future = classify_gpu_code(130, true, 130, kFat, kFatPtx);
  EXPECT_EQ(future.code, FDK_GPU_CODE_JIT);
  EXPECT_EQ(future.arch, 120);
  // A build of sm_90 with its PTX on a Blackwell: JIT from compute_90.
  const auto blackwell = classify_gpu_code(120, true, 120, {90}, {90});
  EXPECT_EQ(blackwell.code, FDK_GPU_CODE_JIT);
  EXPECT_EQ(blackwell.arch, 90);
  // Same major, but the cubin's minor is above the device's: not loadable,
  // so what ran was JIT-compiled (from PTX 80).
  const auto jit = classify_gpu_code(86, true, 86, {89}, {80});
  EXPECT_EQ(jit.code, FDK_GPU_CODE_JIT);
  EXPECT_EQ(jit.arch, 80);
}

TEST(GpuCode, AGpuOlderThanTheBuildHasNone) {
  // A V100 (7.0): the runtime finds no image.
  const auto volta = classify_gpu_code(70, false, 0, kFat, kFatPtx);
  EXPECT_EQ(volta.code, FDK_GPU_CODE_NONE);
  EXPECT_EQ(volta.arch, 0);
  EXPECT_EQ(volta.compute_capability, 70);
}

TEST(GpuCode, TheBuildListsWhatCMakeCompiled) {
  const auto& sass = fdk::cuda::sass_architectures();
  ASSERT_FALSE(sass.empty());
  EXPECT_TRUE(std::is_sorted(sass.begin(), sass.end()));
#ifdef FDK_TEST_DEFAULT_CUDA_ARCHS
  // The default build, which the README's commands and the packages make:
  // SASS from Turing to Blackwell and PTX of the newest.
  EXPECT_EQ(sass, kFat);
  EXPECT_EQ(fdk::cuda::ptx_architectures(), kFatPtx);
#endif
}

}  // namespace
