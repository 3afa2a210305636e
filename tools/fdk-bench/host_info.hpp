// What fdk-bench reports about the machine and its own memory, apart from
// the benchmark: procfs and libc look-ups, no CUDA call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fdk_bench {

uint64_t physical_memory_bytes();
std::string human_bytes(double bytes);
double gib(double bytes);
std::string utc_now();
std::string host_name();
std::string cpu_model();
// GPU model names from the NVIDIA driver's procfs, without any CUDA call.
std::vector<std::string> gpu_models();
// The peak resident set of this process (VmHWM), bytes; 0 when unknown.
uint64_t peak_resident_bytes();
// Lowers VmHWM to the present resident set; false when refused.
bool reset_peak_resident();

}  // namespace fdk_bench
