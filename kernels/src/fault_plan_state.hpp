// Where the process-wide FaultPlan (fdk/kernels/test_seams.hpp) is kept:
// defined in device_faults.cpp, which the backend links; written only by
// set_fault_plan (test_seams.cpp), which the shipped library does not.
#pragma once
#include <mutex>

#include "fdk/kernels/test_seams.hpp"

namespace fdk::cuda {

namespace fault_plan_state {
extern std::mutex mutex;
extern FaultPlan plan;
}  // namespace fault_plan_state

// The plan a new CUDA context takes (once, at fdk_create): the default
// plan in the shipped library.
FaultPlan current_fault_plan();

}  // namespace fdk::cuda
