// Physical memory of the machine, for the default host budget.
#pragma once
#include <cstdint>

namespace fdk {

// Bytes of physical memory, or 0 when the platform does not say.
uint64_t physical_memory_bytes();

}  // namespace fdk
