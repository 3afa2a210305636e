// What check_no_test_seams.cmake must reject (its self-test): a library that
// looks up a test knob in the environment and carries a test seam setter.
#include <cstdlib>

namespace fdk::cuda {
struct FaultPlan {
  int kind = 0;
};
static FaultPlan g_plan;
void set_fault_plan(const FaultPlan& plan) { g_plan = plan; }
}  // namespace fdk::cuda

extern "C" int fdk_seamed_probe() { return std::getenv("FDK_TEST_FAULT") ? 1 : fdk::cuda::g_plan.kind; }
