#include "host_cores.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#ifdef __linux__
#include <sched.h>
#include <unistd.h>
#endif

namespace fdk::mpi {

std::vector<int32_t> host_identity() {
  std::string name;
#ifdef __linux__
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) name = host;
  // Containers may share a host name; the boot tells their kernels apart.
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (std::getline(boot, id)) name += "/" + id;
#endif
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  int32_t words[2];
  std::memcpy(words, &h, sizeof h);
  return {words[0], words[1]};
}

int bound_cores() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int allowed = CPU_COUNT(&set);
    if (allowed > 0 && allowed < static_cast<int>(std::thread::hardware_concurrency())) return allowed;
  }
#endif
  return 0;
}

int share_of_host(int host_cores, int bound_cores, int ranks_on_host) {
  if (bound_cores > 0) return bound_cores;
  return std::max(1, std::max(1, host_cores) / std::max(1, ranks_on_host));
}

int default_threads(int ranks_on_host) {
  return share_of_host(static_cast<int>(std::thread::hardware_concurrency()), bound_cores(), ranks_on_host);
}

}  // namespace fdk::mpi
