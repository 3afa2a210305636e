#include "fdk/core/slab_cache.hpp"

#include <iterator>

namespace fdk {

SlabCache::Slab SlabCache::find(int slab, bool* was_unread) {
  if (was_unread) *was_unread = false;
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->slab == slab) {
      entries_.splice(entries_.begin(), entries_, it);
      Entry& e = entries_.front();
      if (e.unread) {
        e.unread = false;
        unread_bytes_ -= bytes_of(e);
        if (was_unread) *was_unread = true;
      }
      return e.data;
    }
  return nullptr;
}

bool SlabCache::touch(int slab) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->slab == slab) {
      entries_.splice(entries_.begin(), entries_, it);
      return true;
    }
  return false;
}

void SlabCache::evict(uint64_t incoming, uint64_t capacity_bytes, bool spare_front) {
  auto it = entries_.end();
  while (it != entries_.begin() && bytes_ + incoming > capacity_bytes) {
    --it;
    if (spare_front && it == entries_.begin()) break;
    if (it->unread) continue;
    bytes_ -= bytes_of(*it);
    it = entries_.erase(it);
  }
}

bool SlabCache::make_room(uint64_t incoming, uint64_t capacity_bytes) {
  if (unread_bytes_ + incoming > capacity_bytes) return false;
  evict(incoming, capacity_bytes, false);
  return true;
}

void SlabCache::insert(int slab, Slab data, uint64_t capacity_bytes, bool unread) {
  const uint64_t bytes = data->size() * sizeof(float);
  bytes_ += bytes;
  if (unread) unread_bytes_ += bytes;
  entries_.push_front(Entry{slab, std::move(data), unread});
  evict(0, capacity_bytes, true);
}

}  // namespace fdk
