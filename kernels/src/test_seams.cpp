// The setter of the test seams (fdk/kernels/test_seams.hpp). An object
// file of its own: nothing in libfdk.so refers to it, so the linker leaves
// it out of the shipped library, and only programs that call it (tests,
// linked against fdk_testable) contain it.
#include <mutex>

#include "fault_plan_state.hpp"
#include "fdk/kernels/test_seams.hpp"

namespace fdk::cuda {

void set_fault_plan(const FaultPlan& plan) {
  std::lock_guard<std::mutex> lock(fault_plan_state::mutex);
  fault_plan_state::plan = plan;
}

ScopedFaultPlan::ScopedFaultPlan(const FaultPlan& plan) : previous_(current_fault_plan()) { set_fault_plan(plan); }

ScopedFaultPlan::~ScopedFaultPlan() { set_fault_plan(previous_); }

}  // namespace fdk::cuda
