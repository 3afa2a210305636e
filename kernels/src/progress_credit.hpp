// fdk_progress.backprojection_done for a volume resident on the GPUs: a
// launch's views count into its planes once the GPU has run the launch, not
// when it was queued. A view filtered during the scan may wait in a held
// group until fdk_finish, and the finish's spans run for seconds after the
// last push (four H200s, (c): the count reached its total 1.4 s before the
// GPUs were done when views were counted as they were filtered).
// Internal to kernels/: not a header of the library's interface.
#pragma once
#include <cuda.h>

#include <array>
#include <cstdint>
#include <vector>

#include "device_resources.hpp"
#include "fdk/core/backprojection_meter.hpp"

namespace fdk::cuda {

// A host function on a stream of its own, behind the launch's event, does
// the counting, so the backprojection stream never waits for the host.
class ProgressCredit {
 public:
  // Once `done` (an event recorded after the launches) completes, `views`
  // views count into each of `planes` ([y0, y1) of the volume) in `meter`;
  // a null meter counts nothing. Any thread.
  void after(CUevent done, BackprojectionMeter* meter, std::vector<std::array<int, 2>> planes, int64_t views);
  // The counts queued so far are made (before the meter goes). Our device's
  // context must be current.
  void drain() noexcept;

 private:
  Stream stream_{0};
};

}  // namespace fdk::cuda
