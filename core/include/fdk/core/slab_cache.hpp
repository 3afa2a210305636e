// Computed slabs kept in host memory, least recently used first out, so that
// reading a slab twice does not recompute it while memory allows.
//
// A slab computed ahead of its read (fdk_slab_ready) is inserted unread and
// is never evicted until a read has taken it: only slabs the caller already
// has make room for others (they are recomputed when read again).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

namespace fdk {

class SlabCache {
 public:
  using Slab = std::shared_ptr<const std::vector<float>>;

  // The slab, or null; marks it most recently used and read (evictable).
  // *was_unread (when given) says whether this was its first read.
  Slab find(int slab, bool* was_unread = nullptr);
  // Whether the slab is cached; marks it most recently used, read or not.
  bool touch(int slab);
  // Evicts read slabs, least recently used first, until `incoming` more
  // bytes fit within `capacity_bytes`; false (evicting nothing) when the
  // unread ones leave too little room.
  bool make_room(uint64_t incoming, uint64_t capacity_bytes);
  // Inserts as most recently used (`unread`: computed ahead of its read),
  // then evicts least recently used read slabs (never the one just
  // inserted) until the cache holds at most `capacity_bytes` or only unread
  // slabs are left to evict.
  void insert(int slab, Slab data, uint64_t capacity_bytes, bool unread = false);
  uint64_t bytes() const { return bytes_; }
  uint64_t unread_bytes() const { return unread_bytes_; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int slab;
    Slab data;
    bool unread;
  };
  static uint64_t bytes_of(const Entry& e) { return e.data->size() * sizeof(float); }
  // Evicts read entries from the least recently used end, sparing the most
  // recent one when `spare_front`, while bytes_ + incoming > capacity.
  void evict(uint64_t incoming, uint64_t capacity_bytes, bool spare_front);

  std::list<Entry> entries_;  // most recent first
  uint64_t bytes_ = 0;
  uint64_t unread_bytes_ = 0;
};

}  // namespace fdk
