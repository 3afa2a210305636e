// fdk-bench's look-ups of the host (memory, names, models, peak resident
// set), kept out of main.cpp because they are Linux plumbing, not benchmark.
#include "host_info.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <dirent.h>
#include <unistd.h>

namespace fdk_bench {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 4) {
    bytes /= 1024.0;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.2f %s", bytes, units[unit]);
  return buffer;
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm_utc{};
  gmtime_r(&now, &tm_utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {0};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "";
  return buffer;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = colon + 1;
        while (start < line.size() && line[start] == ' ') ++start;
        return line.substr(start);
      }
    }
  }
  return "";
}

// GPU model names from the NVIDIA driver's procfs, without any CUDA call:
// /proc/driver/nvidia/gpus/<pci id>/information holds "Model:  NVIDIA H200".
std::vector<std::string> gpu_models() {
  std::vector<std::string> models;
  DIR* dir = opendir("/proc/driver/nvidia/gpus");
  if (!dir) return models;
  std::vector<std::string> entries;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') entries.push_back(entry->d_name);
  }
  closedir(dir);
  std::sort(entries.begin(), entries.end());
  for (const std::string& entry : entries) {
    std::ifstream in("/proc/driver/nvidia/gpus/" + entry + "/information");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("Model:", 0) == 0) {
        size_t start = 6;
        while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
        models.push_back(line.substr(start));
      }
    }
  }
  return models;
}

// The peak resident set of this process (VmHWM in /proc/self/status), bytes;
// 0 when unknown.
uint64_t peak_resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      unsigned long long kib = 0;
      if (std::sscanf(line.c_str() + 6, "%llu", &kib) == 1) return kib * 1024ull;
    }
  }
  return 0;
}

// Lowers VmHWM to the present resident set ("5" into /proc/self/clear_refs,
// Linux 4.0 on), so that a configuration's peak is its own; false when the
// kernel or the container refuses.
bool reset_peak_resident() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace fdk_bench
