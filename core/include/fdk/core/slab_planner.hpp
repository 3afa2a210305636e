// Cuts the volume into y-slabs whose working set fits the host budget, and
// reports an infeasible budget before any work starts.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace fdk {

struct SlabPlan {
  int thickness = 0;                     // planes of every slab but maybe the last
  std::vector<std::array<int, 2>> slabs; // [y_begin, y_end)
  uint64_t reserve_bytes = 0;            // host memory held back for one slab's work
};

// `work_bytes(planes)` is the backend's working memory for a slab of that
// many planes, the slab itself excluded. A slab needs work_bytes(T) plus T
// planes for its result; the rest of the budget is for the compressed store
// and for caching further slabs. With requested_thickness 0 the thickness is
// the largest that keeps a slab within preferred_bytes and its reserve
// within half the budget, then evened out over the slabs. Throws fdk::Error
// (FDK_ERROR_BUDGET) when not even one plane fits.
// `max_thickness` caps the slab (the backend's device memory); a requested
// thickness above it is an error. Automatic slabs stay within
// `preferred_bytes` (the backend's wish), and when they can hold `align`
// planes their thickness is a multiple of it, so that every slab starts on
// a multiple (Backend::slab_alignment).
// Streamed slabs are shared out after the scan among `workers` GPUs, but
// the first `during_scan` of them are computed while the views arrive: the
// automatic plan thins its slabs until the ones shared out are a multiple
// of `workers`, so that no GPU computes one slab more than another after
// the scan (c8 on two GPUs: 10 slabs, 1 during the scan, 5 and 4 after).
SlabPlan plan_slabs(int planes_total, uint64_t plane_bytes, uint64_t host_budget, int requested_thickness,
                    int max_thickness, uint64_t preferred_bytes, const std::function<uint64_t(int)>& work_bytes,
                    int align = 1, int workers = 1, int during_scan = 0);

}  // namespace fdk
