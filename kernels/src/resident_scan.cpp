// A resident volume during the scan and at its finish (one_device.hpp):
// each filtered view is counted into its orbit, complete orbits form groups
// launched while the GPU keeps up (held for the finish when it is behind),
// and the finish either keeps what the scan computed or starts again from
// the filtered views still on the device. The bookkeeping that fixes the
// order of every voxel's sum, apart from the launches themselves.

#include <string>
#include <utility>
#include <vector>

#include "one_device.hpp"

namespace fdk::cuda {

// Runs on the ingest filter thread, in push order: complete quads are
// backprojected into the resident volume in batches.
void OneDevice::view_filtered(const ScanModel& model, int view) {
  if (!resident_) return;  // streaming: the GPU that filtered it sent the windows (CudaBackend)
  inject_fault(FaultPlan::Scan, views_seen_++);
  DeviceGuard guard(device_);
  if (!same_geometry(model.views[static_cast<size_t>(view)], nominal_views_[static_cast<size_t>(view)]))
    geometry_changed_ = true;
  if (counted_[static_cast<size_t>(view)]) return;  // pushed again after a drop: finish recomputes
  counted_[static_cast<size_t>(view)] = 1;
  dirty_ = true;  // cleared once this view is accounted for
  const int q = orbit_of_view_[static_cast<size_t>(view)];
  if (q >= 0) {
    if (++orbit_arrivals_[static_cast<size_t>(q)] == orbit_size_[static_cast<size_t>(q)]) {
      // A group holds orbits of one kind (one kernel per launch).
      const int kind = orbit_kind_[static_cast<size_t>(q)];
      const bool plane = kind == static_cast<int>(MirrorKind::Plane);
      std::vector<int>& pending = pending_orbits_[static_cast<size_t>(kind)];
      pending.push_back(q);
      const bool last_plane = plane && --plane_orbits_left_ == 0;
      int& formed = groups_formed_[static_cast<size_t>(kind)];
      if (static_cast<int>(pending.size()) == group_target(kind, formed) || last_plane) {
        ++formed;
        // Launched while the GPU keeps up; held for fdk_finish's chunked
        // launches when it is behind. Groups stay the same either way,
        // so every voxel sums the same groups in the same order.
        held_.push_back({false, std::move(pending)});
        if (pairs_) pack_on_completion(model, held_.back());
        pending.clear();
      }
    }
  } else {
    // Views outside complete orbits queue with the groups, so that their
    // place in every voxel's sum is fixed by arrival, not by timing.
    pending_views_.push_back(view);
    if (static_cast<int>(pending_views_.size()) == kMaxBatchViews) {
      held_.push_back({true, std::move(pending_views_)});
      pending_views_.clear();
    }
  }
  // Looked at with every view, not only when a group completes: in the
  // quarters of a scan where no pair completes the GPU would otherwise
  // idle with groups held.
  while (!held_.empty() && !role_.fault.hold_groups && !gpu_behind()) {
    launch_item(model, held_.front(), nominal_weights_, all_chunks_);
    launched_items_.push_back(held_.front());
    scan_launches_[next_scan_launch_].record(bp_stream_.get());
    credit_items(model, scan_launches_[next_scan_launch_].get(), owned_planes_, held_, 0, 1);
    next_scan_launch_ ^= 1;
    held_.erase(held_.begin());
  }
  dirty_ = false;
}

void OneDevice::finish(const ScanModel& model) {
  if (resident_) throw_if_failed();
  DeviceGuard guard(device_);
  if (!resident_) {
    early_done_ = finish_early(model);
    compute_mask(model, false);
    synchronize(bp_stream_.get(), "cuStreamSynchronize (mask)");
    finished_ = true;
    return;
  }
  bool all_arrived = true;
  for (unsigned char a : model.arrived) all_arrived &= a != 0;
  if (all_arrived && !geometry_changed_ && !dirty_ && !dropped_.load()) {
    if (!pending_views_.empty()) held_.push_back({true, std::move(pending_views_)});
    for (auto& pending : pending_orbits_) {
      if (pending.empty()) continue;
      held_.push_back({false, std::move(pending)});
      if (pairs_) pack_on_completion(model, held_.back());
      pending.clear();
    }
    pending_views_.clear();
    // The held groups go chunk by chunk from launch_all_chunks.
    chunks_launched_ = 0;
    finished_ = true;
    return;
  } else {
    // held_ groups are launched again below from the arrivals.
    held_.clear();
    launched_items_.clear();
    final_weights_ = model.view_weights;
    // The weights the views were accumulated with are not the final ones:
    // start again from the filtered projections still on the device.
    synchronize(bp_stream_.get(), "cuStreamSynchronize");
    // fdk_progress: our planes count again from 0 (what the scan computed
    // into them stays counted until the new launches pass it).
    credit_.drain();
    if (model.meter)
      for (const auto& p : owned_planes_) model.meter->restart(p[0], p[1]);
    for (auto& pending : pending_orbits_) pending.clear();
    pending_views_.clear();
    zero_async(volume_.get(), volume_.bytes(), bp_stream_.get(), "cuMemsetD8Async (volume)");
    compute_mask(model, false);
    for (size_t q = 0; q < orbits_.size(); ++q) {
      bool complete = true;
      for (int v : orbits_[q]) complete &= v < 0 || model.arrived[static_cast<size_t>(v)] != 0;
      if (complete) {
        const int kind = orbit_kind_[q];
        pending_orbits_[static_cast<size_t>(kind)].push_back(static_cast<int>(q));
        if (static_cast<int>(pending_orbits_[static_cast<size_t>(kind)].size()) == group_size_)
          flush_orbits(model, kind, model.view_weights);
      } else {
        for (int v : orbits_[q])
          if (v >= 0 && model.arrived[static_cast<size_t>(v)]) add_view(model, v, model.view_weights);
      }
    }
    for (int v : model.view_order)
      if (orbit_of_view_[static_cast<size_t>(v)] < 0) add_view(model, v, model.view_weights);
    for (int kind = 0; kind < kMirrorKinds; ++kind) flush_orbits(model, kind, model.view_weights);
    flush_views(model, model.view_weights);
  }
  // Everything is launched: each chunk is final once the stream reaches it.
  for (int c : owned_) chunk_ready_[static_cast<size_t>(c)].record(bp_stream_.get());
  if (!owned_.empty())
    credit_items(model, chunk_ready_[static_cast<size_t>(owned_.back())].get(), owned_planes_, launched_items_, 0,
                 launched_items_.size());
  chunks_launched_ = static_cast<int>(owned_.size());
  finished_ = true;
}

// Resident: backproject the complete orbits of `kind` queued so far into the volume.
void OneDevice::flush_orbits(const ScanModel& model, int kind, const std::vector<double>& weights) {
  std::vector<int>& pending = pending_orbits_[static_cast<size_t>(kind)];
  if (!pending.empty()) launched_items_.push_back({false, pending});
  launch_group(model, pending, weights, all_chunks_);
  pending.clear();
}

void OneDevice::throw_if_failed() const {
  if (failed_.load())
    fail(FDK_ERROR_DEVICE, "GPU " + std::to_string(device_) + " (worker " + std::to_string(role_.worker) +
                               ") failed earlier");
}

// Orbits per group: the first group of plane pairs is small (16), so that
// the GPUs start after the scan's first views, the others group_size_,
// where a launch's reading and writing its planes weighs little.
// `index`: the group's place among the groups of its kind. Measured on
// (b), one H200, kernels: first groups of 16, 16, 32 0.790 s; 16 0.779 s;
// none smaller 0.782 s. FaultPlan::ramp_pair_groups: the other kinds'
// first groups 8, 16 and 32 (one H200: kernels +3.7 % on (c), +5 % on (b);
// off).
int OneDevice::group_target(int kind, int index) const {
  constexpr int kFirstPlaneGroup = 16;
  constexpr int kFirstRampGroup = 8, kRampGroups = 3;  // 8, 16, 32
  if (kind == static_cast<int>(MirrorKind::Plane))
    return index > 0 ? group_size_ : std::min(kFirstPlaneGroup, group_size_);
  if (!role_.fault.ramp_pair_groups || index >= kRampGroups) return group_size_;
  return std::min(kFirstRampGroup << index, group_size_);
}

void OneDevice::add_view(const ScanModel& model, int view, const std::vector<double>& weights) {
  pending_views_.push_back(view);
  if (static_cast<int>(pending_views_.size()) == kMaxBatchViews) flush_views(model, weights);
}

void OneDevice::flush_views(const ScanModel& model, const std::vector<double>& weights) {
  if (!pending_views_.empty()) launched_items_.push_back({true, pending_views_});
  launch_views(model, pending_views_, weights, all_chunks_);
  pending_views_.clear();
}

}  // namespace fdk::cuda
