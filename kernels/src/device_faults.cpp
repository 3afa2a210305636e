// The test seams (fdk/kernels/test_seams.hpp) as the shipped library sees
// them: the process-wide FaultPlan, which stays the default unless a test
// links the setter (test_seams.cpp, never part of libfdk.so), and the
// places where a device fails on purpose. Apart so that everything a test
// can change about a device is in one file, and none of it comes from the
// environment.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "fault_plan_state.hpp"
#include "one_device.hpp"

namespace fdk::cuda {

namespace fault_plan_state {
std::mutex mutex;
FaultPlan plan;
}  // namespace fault_plan_state

FaultPlan current_fault_plan() {
  std::lock_guard<std::mutex> lock(fault_plan_state::mutex);
  return fault_plan_state::plan;
}

int checked_ordinal(const DeviceRole& role) {
  if (role.fault.kind == FaultPlan::Alloc && role.fault.worker == role.worker)
    fail(FDK_ERROR_OUT_OF_MEMORY, "injected allocation failure on GPU " + std::to_string(role.ordinal) +
                                      " (worker " + std::to_string(role.worker) + ", a test's FaultPlan)");
  return role.ordinal;
}

// FaultPlan Scan and Read: this device fails at the `count`th event of
// `kind` and from then on (a failed device stays failed).
void OneDevice::inject_fault(FaultPlan::Kind kind, int count) {
  throw_if_failed();
  const FaultPlan& f = role_.fault;
  if (f.kind != kind || f.worker != role_.worker || count < f.after) return;
  failed_ = true;
  fail(FDK_ERROR_DEVICE, "injected failure on GPU " + std::to_string(device_) + " (worker " +
                             std::to_string(role_.worker) + ", a test's FaultPlan)");
}

// FaultPlan Kernel: a streamed slab fails once this device has computed
// `after` of them (the worker then retires).
void OneDevice::inject_slab_fault() {
  if (role_.fault.kind == FaultPlan::Kernel && role_.fault.worker == role_.worker &&
      slabs_computed_.load() >= role_.fault.after)
    fail(FDK_ERROR_DEVICE, "injected kernel failure on GPU " + std::to_string(device_) + " (worker " +
                               std::to_string(role_.worker) + ", a test's FaultPlan)");
}

namespace {
void CUDA_CB sleep_for_ms(void* ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<std::intptr_t>(ms)));
}
}  // namespace

// FaultPlan early_group_hold_ms: the backprojection stream waits that long
// on a host function (run by the driver's thread) before the group.
void OneDevice::hold_early_group() {
  const int ms = role_.fault.early_group_hold_ms;
  if (ms <= 0) return;
  check(cu().cuLaunchHostFunc(bp_stream_.get(), sleep_for_ms, reinterpret_cast<void*>(static_cast<std::intptr_t>(ms))),
        "cuLaunchHostFunc (a test's hold)");
}

// FaultPlan staging_hold_ms: pinning a batch set's staging takes that much
// longer, on the thread that pins it.
void OneDevice::hold_staging() const {
  if (role_.fault.staging_hold_ms > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(role_.fault.staging_hold_ms));
}

}  // namespace fdk::cuda
