// Whether a CUDA device is usable here, for the GPU tests (label gpu), which
// skip, saying "skipped: no GPU", where none is: never a false pass.
#pragma once
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include "small_scan.hpp"

namespace fdk_test {

inline bool gpu_usable() {
  static const bool usable = [] {
    SmallScan scan(8, 4, 8);
    scan.config.backend = FDK_BACKEND_CUDA;
    fdk_context* ctx = nullptr;
    const fdk_status s = fdk_create(&scan.config, &ctx);
    fdk_destroy(ctx);
    return s == FDK_OK;
  }();
  return usable;
}

}  // namespace fdk_test

#define SKIP_WITHOUT_GPU() \
  if (!fdk_test::gpu_usable()) GTEST_SKIP() << "skipped: no GPU"
