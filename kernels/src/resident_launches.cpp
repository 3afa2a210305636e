// Backprojection launches into a resident run (one_device.hpp): quads and
// mirror pairs packed into half-precision texels, groups packed once as
// they complete into sets reserved for them, and views outside orbits
// straight from their projections. What one launch does, whoever decided
// to launch it.

#include <vector>

#include "one_device.hpp"

namespace fdk::cuda {

BatchSet& OneDevice::next_set() {
  BatchSet& set = sets_[next_set_];
  next_set_ ^= 1;
  set.wait();
  return set;
}

// True when next_set() would not wait for the GPU.
bool OneDevice::next_set_free() const { return sets_[static_cast<size_t>(next_set_)].free(); }

// `max_src` (nullable): each view's largest |value| (launch_pack_half).
void OneDevice::pack_quad(const float* const src[4], const float* const max_src[4], const float scale[4], BatchSet& set,
                          int slot, int rows) {
  const size_t q = static_cast<size_t>(slot);
  launch_pack_half(src, max_src, pitch_, scale, set.quad_max.get() + slot, set.slot(q), quad_pitch_ / kTexelBytes,
                   columns_, rows, set_rows_, bp_stream_.get());
}

// The launch fields every quad batch shares.
void OneDevice::prepare_quads(QuadBatch& batch, BatchSet& set) {
  batch.quad_max = set.quad_max.get();
  clear_scales(set, bp_stream_.get());
}

void OneDevice::set_quad_textures(QuadBatch& batch, const BatchSet& set, int slot) {
  batch.tex[slot] = set.quad_tex[static_cast<size_t>(slot)].get();
}

// Resident: quads `group` into the planes of `run`.
void OneDevice::launch_group(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                             const Run& run) {
  if (group.empty() || run.planes <= 0) return;
  if (pairs_) return launch_pair_group(model, group, weights, run);
  BatchSet& set = next_set();
  after_filters(bp_stream_.get());
  QuadBatch batch{};
  batch.count = static_cast<int>(group.size());
  prepare_quads(batch, set);
  for (int s = 0; s < batch.count; ++s) {
    const auto& quad = orbits_[static_cast<size_t>(group[static_cast<size_t>(s)])];
    const float* src[4];
    float scale[4];
    for (int c = 0; c < 4; ++c) {
      src[c] = projections_.get() + static_cast<size_t>(quad[c]) * view_stride_;
      scale[c] = static_cast<float>(weights[static_cast<size_t>(quad[c])]);
    }
    pack_quad(src, nullptr, scale, set, s, rows_);
    const double sid = model.views[static_cast<size_t>(quad[0])].sid;
    fill_terms(batch.view[s], model.matrices[static_cast<size_t>(quad[0])], static_cast<float>(sid * sid), 0);
    set_quad_textures(batch, set, s);
  }
  batch.g = slab_geometry(model, run);
  clock_.begin(bp_stream_.get());
  launch_quads(batch, run_target(model, run), mask_.get(), bp_stream_.get());
  clock_.end(bp_stream_.get());
  set.done.record(bp_stream_.get());
  set.used = true;
}

// Resident: mirror pairs `group` into the planes of `run`.
void OneDevice::launch_pair_group(const ScanModel& model, const std::vector<int>& group,
                                  const std::vector<double>& weights, const Run& run) {
  BatchSet& set = next_set();
  PairBatch batch{};
  pack_pairs(model, group, weights, set, batch, bp_stream_.get());
  launch_packed_pairs(model, batch, run);
  set.done.record(bp_stream_.get());
  set.used = true;
}

// Packs mirror pairs `group` into `set` (on the backprojection stream)
// and fills `batch` for them but for its geometry.
void OneDevice::pack_pairs(const ScanModel& model, const std::vector<int>& group, const std::vector<double>& weights,
                           BatchSet& set, PairBatch& batch, CUstream stream) {
  after_filters(stream);
  batch.count = static_cast<int>(group.size());
  batch.pair_max = set.quad_max.get();
  batch.kind = orbit_kind_[static_cast<size_t>(group.front())];
  for (int q : group)
    if (orbit_kind_[static_cast<size_t>(q)] != batch.kind) fail(FDK_ERROR_INTERNAL, "a group mixes mirror kinds");
  clear_scales(set, stream);
  const bool plane = batch.kind == static_cast<int>(MirrorKind::Plane);
  PackPairBatch pack = pack_batch(set, batch.count);
  pack.flip_rows = plane ? 1 : 0;
  for (int s = 0; s < batch.count; ++s) {
    const auto& pair = orbits_[static_cast<size_t>(group[static_cast<size_t>(s)])];
    PackPair& p = pack.pair[s];
    // A view that is its own mirror is looked up twice per voxel; a plane
    // pair's view once per voxel.
    const float share = pair[0] == pair[1] && !plane ? 0.5f : 1.0f;
    for (int c = 0; c < 2; ++c) {
      p.src[c] = projections_.get() + static_cast<size_t>(pair[c]) * view_stride_;
      p.scale[c] = share * static_cast<float>(weights[static_cast<size_t>(pair[c])]);
    }
    p.rows = rows_;
    const double sid = model.views[static_cast<size_t>(pair[0])].sid;
    fill_terms(batch.view[s], model.matrices[static_cast<size_t>(pair[0])], static_cast<float>(sid * sid), 0);
    batch.tex[s] = set.quad_tex[static_cast<size_t>(s)].get();
  }
  launch_pack_pairs(pack, stream);
}

// The fields of a pair packing every pair of `set` shares.
PackPairBatch OneDevice::pack_batch(BatchSet& set, int count) const {
  PackPairBatch pack{};
  pack.count = count;
  pack.src_pitch = pitch_;
  pack.dst_pitch = quad_pitch_ / kPairTexelBytes;
  pack.columns = columns_;
  pack.texture_rows = set_rows_;
  pack.pair_max = set.quad_max.get();
  for (int s = 0; s < count; ++s) pack.pair[s].texels = set.slot(static_cast<size_t>(s));
  return pack;
}

void OneDevice::launch_packed_pairs(const ScanModel& model, PairBatch& batch, const Run& run) {
  batch.g = slab_geometry(model, run);
  clock_.begin(bp_stream_.get());
  launch_pairs(batch, run_target(model, run), mask_.get(), bp_stream_.get());
  clock_.end(bp_stream_.get());
}

// Resident: packs a group of pairs as it completes into a set reserved
// at set-up, so that the finish's chunks only launch. The rotating sets
// would pack each group again for every chunk of the finish, work that
// does not shrink with the GPU count (on a stream of its own the packing
// measured the same as here on the backprojection's). Without a set left
// the group is packed when launched.
void OneDevice::pack_on_completion(const ScanModel& model, HeldItem& item) {
  if (next_packed_ >= packed_groups_.size()) return;
  PackedGroup& g = *packed_groups_[next_packed_];
  pack_pairs(model, item.ids, nominal_weights_, g.set, g.batch, bp_stream_.get());
  item.packed = static_cast<int>(next_packed_++);
}

void OneDevice::launch_item(const ScanModel& model, const HeldItem& item, const std::vector<double>& weights,
                            const Run& run) {
  if (item.packed >= 0) {  // packed with the nominal weights, which `weights` are here
    launch_packed_pairs(model, packed_groups_[static_cast<size_t>(item.packed)]->batch, run);
    return;
  }
  if (item.views)
    launch_views(model, item.ids, weights, run);
  else
    launch_group(model, item.ids, weights, run);
}

// Resident: views outside complete quads, straight from their projections.
void OneDevice::launch_views(const ScanModel& model, const std::vector<int>& views, const std::vector<double>& weights,
                             const Run& run) {
  if (views.empty() || run.planes <= 0) return;
  after_filters(bp_stream_.get());
  GenericBatch batch{};
  batch.count = static_cast<int>(views.size());
  for (int s = 0; s < batch.count; ++s) {
    const int v = views[static_cast<size_t>(s)];
    TextureObject& tex = view_tex_[static_cast<size_t>(v)];
    if (!tex.get())
      tex.make_pitch2d(projections_.get() + static_cast<size_t>(v) * view_stride_, kFloat1,
                       columns_, rows_, pitch_ * sizeof(float));
    const double sid = model.views[static_cast<size_t>(v)].sid;
    fill_terms(batch.view[s], model.matrices[static_cast<size_t>(v)],
               static_cast<float>(weights[static_cast<size_t>(v)] * sid * sid), 0);
    batch.tex[s] = tex.get();
  }
  batch.g = slab_geometry(model, run);
  clock_.begin(bp_stream_.get());
  launch_generic(batch, run_target(model, run), mask_.get(), bp_stream_.get());
  clock_.end(bp_stream_.get());
}

}  // namespace fdk::cuda
