// fdk-convert's host memory advice (see budget.hpp).
#include "budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fdk_convert {

// A --host-memory value of at least `bytes`, rounded up to two significant
// figures in the largest of K, M, G that it reaches. Below 1 MiB it is
// written in K: "0.1M" read as a megabyte scale hid that the budget is a
// few KiB. The text is read back as --host-memory reads it (the value times
// the unit, truncated) and raised until that holds `bytes`, so following
// the advice never gives less than the library's planner asked for.
std::string size_flag(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  const double unit = b >= 1024.0 * 1024 * 1024 ? 1024.0 * 1024 * 1024 : b >= 1024.0 * 1024 ? 1024.0 * 1024 : 1024.0;
  const char* suffix = unit >= 1024.0 * 1024 * 1024 ? "G" : unit >= 1024.0 * 1024 ? "M" : "K";
  double v = b / unit;
  const double step = std::pow(10.0, std::floor(std::log10(std::max(v, 1.0))) - 1);
  v = std::ceil(v / step - 1e-9) * step;
  while (static_cast<uint64_t>(v * unit) < bytes) v += step;
  char text[32];
  std::snprintf(text, sizeof text, "%.10g%s", v, suffix);
  return text;
}

std::string budget_text(uint64_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  double unit = 1024.0;
  int u = 0;
  while (u < 5 && static_cast<double>(bytes) >= unit * 1024.0) {
    unit *= 1024.0;
    ++u;
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.4g", static_cast<double>(bytes) / unit);
  const bool exact = std::fabs(std::strtod(text, nullptr) * unit - static_cast<double>(bytes)) < 1.0;
  std::string out = std::string(text) + " " + kUnits[u];
  if (!exact) out += " (" + std::to_string(bytes) + " bytes)";
  return out;
}

// The smallest host budget, within 2 %, whose plan reaches `fit` (the
// library's fdk_store_fit: FITS or LIKELY) for `config`, asking the
// library's own planner; 0 when none below 64 TiB does (or the library
// refuses the configuration for another reason).
uint64_t smallest_fitting_host_budget(fdk_config config, int32_t fit) {
  auto reaches = [&](uint64_t budget) {
    config.host_memory_budget = budget;
    fdk_context* ctx = nullptr;
    if (fdk_create(&config, &ctx) != FDK_OK) return false;
    fdk_plan_info plan{};
    plan.struct_size = sizeof plan;
    const bool ok = fdk_get_plan_info(ctx, &plan) == FDK_OK && plan.store_fit <= fit;
    fdk_destroy(ctx);
    return ok;
  };
  uint64_t lo = std::max<uint64_t>(config.host_memory_budget, 1) , hi = lo;
  const uint64_t limit = uint64_t{64} << 40;
  while (!reaches(hi)) {
    lo = hi;
    if (hi >= limit) return 0;
    hi = std::max<uint64_t>(hi * 2, uint64_t{16} << 20);
  }
  while (hi - lo > hi / 50) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (reaches(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

// What would hold the scan: "; --host-memory A holds ... , B every view as
// float32; or make the views smaller (--bin, --crop)".
std::string budget_advice(const fdk_config& config) {
  fdk_config reduce = config, strict = config;
  reduce.store_policy = FDK_STORE_REDUCE_PRECISION;
  strict.store_policy = FDK_STORE_STRICT;
  // FITS is the worst case of every view: float16 where needed under
  // REDUCE_PRECISION, float32 under STRICT.
  const uint64_t any = smallest_fitting_host_budget(reduce, FDK_STORE_FITS);
  const uint64_t f32 = smallest_fitting_host_budget(strict, FDK_STORE_FITS);
  std::string advice;
  if (any) advice += "; --host-memory " + size_flag(any) + " holds every view for certain (as float16 where needed)";
  if (f32 && (!any || size_flag(f32) != size_flag(any))) {
    advice += ", --host-memory " + size_flag(f32) + " every view as float32";
  }
  return advice + "; or make the views smaller (--bin, --crop)";
}

}  // namespace fdk_convert
