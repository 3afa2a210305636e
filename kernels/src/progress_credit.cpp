#include "progress_credit.hpp"

#include <memory>
#include <utility>

namespace fdk::cuda {

namespace {

struct Credit {
  BackprojectionMeter* meter;
  std::vector<std::array<int, 2>> planes;
  int64_t views;
};

// Run by the driver's thread: it may not call the driver, and the meter
// takes reports from any thread.
void CUDA_CB count_credit(void* data) {
  const std::unique_ptr<Credit> credit(static_cast<Credit*>(data));
  for (const auto& p : credit->planes) credit->meter->add(p[0], p[1], credit->views);
}

}  // namespace

void ProgressCredit::after(CUevent done, BackprojectionMeter* meter, std::vector<std::array<int, 2>> planes,
                           int64_t views) {
  if (!meter || views <= 0 || planes.empty()) return;
  wait_event(stream_.get(), done, "cuStreamWaitEvent (progress)");
  auto credit = std::make_unique<Credit>(Credit{meter, std::move(planes), views});
  check(cu().cuLaunchHostFunc(stream_.get(), count_credit, credit.get()), "cuLaunchHostFunc (progress)");
  credit.release();  // count_credit owns it now
}

void ProgressCredit::drain() noexcept { cu().cuStreamSynchronize(stream_.get()); }

}  // namespace fdk::cuda
