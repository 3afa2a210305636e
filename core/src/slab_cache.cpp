#include "fdk/core/slab_cache.hpp"

namespace fdk {

SlabCache::Slab SlabCache::find(int slab) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->slab == slab) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().data;
    }
  return nullptr;
}

void SlabCache::insert(int slab, Slab data, uint64_t capacity_bytes) {
  bytes_ += data->size() * sizeof(float);
  entries_.push_front(Entry{slab, std::move(data)});
  while (entries_.size() > 1 && bytes_ > capacity_bytes) {
    bytes_ -= entries_.back().data->size() * sizeof(float);
    entries_.pop_back();
  }
}

}  // namespace fdk
