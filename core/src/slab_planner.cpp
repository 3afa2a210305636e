#include "fdk/core/slab_planner.hpp"

#include <algorithm>
#include <string>

#include "fdk/core/byte_text.hpp"
#include "fdk/core/error.hpp"

namespace fdk {
namespace {

// Budgets as the caller gave them (a 1 KiB budget must not read "1 MiB").
std::string mib(uint64_t bytes) { return byte_text(bytes); }

}  // namespace

SlabPlan plan_slabs(int planes_total, uint64_t plane_bytes, uint64_t host_budget, int requested_thickness,
                    int max_thickness, uint64_t preferred_bytes, const std::function<uint64_t(int)>& work_bytes,
                    int align, int workers, int during_scan) {
  if (max_thickness < 1)
    fail(FDK_ERROR_BUDGET, "the GPU memory budget does not hold even one volume plane");
  const auto reserve = [&](int planes) {
    return work_bytes(planes) + plane_bytes * static_cast<uint64_t>(planes);
  };
  if (reserve(1) > host_budget)
    fail(FDK_ERROR_BUDGET, "host memory budget " + mib(host_budget) +
                               " is too small: one volume plane with its working memory needs " +
                               mib(reserve(1)));
  int thickness;
  if (requested_thickness > 0) {
    thickness = std::min(requested_thickness, planes_total);
    if (thickness > max_thickness)
      fail(FDK_ERROR_BUDGET, "slabs of " + std::to_string(thickness) + " planes exceed the GPU memory budget (at most " +
                                 std::to_string(max_thickness) + " planes fit)");
    if (reserve(thickness) > host_budget)
      fail(FDK_ERROR_BUDGET, "host memory budget " + mib(host_budget) + " is too small for slabs of " +
                                 std::to_string(thickness) + " planes (" + mib(reserve(thickness)) +
                                 " needed)");
  } else {
    thickness = 1;
    while (thickness < std::min(planes_total, max_thickness)) {
      const int next = std::min({planes_total, max_thickness, thickness * 2});
      if (plane_bytes * static_cast<uint64_t>(next) > preferred_bytes || reserve(next) > host_budget / 2)
        break;
      thickness = next;
    }
    const bool aligned = align > 1 && thickness >= align;
    if (aligned) thickness -= thickness % align;
    // Even out: the same number of slabs, as equal as possible (on the
    // alignment, which keeps the thickness within the one just found).
    const auto evened = [&](int count) {
      const int t = (planes_total + count - 1) / count;
      return aligned ? (t + align - 1) / align * align : t;
    };
    const int count = (planes_total + thickness - 1) / thickness;
    thickness = evened(count);
    // Several GPUs: a few more, thinner slabs so that those shared out
    // after the scan split evenly (thinner fits every budget the thicker
    // did). Not for one slab (nothing is shared out) nor beyond a few
    // tries (the alignment may not allow it).
    const int shared = workers > 1 && count > 1 ? workers : 1;
    for (int c = count; shared > 1 && c < count + 2 * shared; ++c) {
      const int t = evened(c);
      const int slabs = (planes_total + t - 1) / t;
      if (slabs > during_scan && (slabs - during_scan) % shared == 0) {
        thickness = t;
        break;
      }
    }
  }
  SlabPlan plan;
  plan.thickness = thickness;
  for (int y = 0; y < planes_total; y += thickness)
    plan.slabs.push_back({y, std::min(planes_total, y + thickness)});
  plan.reserve_bytes = reserve(thickness);
  return plan;
}

}  // namespace fdk
