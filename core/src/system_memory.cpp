#include "fdk/core/system_memory.hpp"

#if defined(_WIN32)
#include "windows_api.hpp"
#else
#include <unistd.h>
#endif

namespace fdk {

uint64_t physical_memory_bytes() {
#if defined(_WIN32)
  MEMORYSTATUSEX status;
  status.dwLength = sizeof(status);
  return GlobalMemoryStatusEx(&status) ? static_cast<uint64_t>(status.ullTotalPhys) : 0;
#else
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : 0;
#endif
}

}  // namespace fdk
