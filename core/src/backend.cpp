#include "fdk/core/backend.hpp"

#include <new>
#include <vector>

#include "fdk/core/error.hpp"
#include "fdk/core/preview.hpp"

namespace fdk {
namespace {

class HostStaging final : public StagingBuffer {
 public:
  explicit HostStaging(size_t floats) : data_(floats) {}
  float* data() override { return data_.data(); }

 private:
  std::vector<float> data_;
};

}  // namespace

void throw_if_cancelled(const ScanModel& model) {
  if (model.cancelled && model.cancelled->load(std::memory_order_relaxed))
    fail(FDK_ERROR_CANCELLED, "cancelled by fdk_cancel");
}

std::unique_ptr<StagingBuffer> Backend::make_staging(size_t floats) const {
  try {
    return std::make_unique<HostStaging>(floats);
  } catch (const std::bad_alloc&) {
    fail(FDK_ERROR_OUT_OF_MEMORY, "out of host memory for projection staging");
  }
}

std::unique_ptr<PreviewSink> Backend::make_preview_sink(const ScanModel&, const fdk_volume&) { return nullptr; }

}  // namespace fdk
