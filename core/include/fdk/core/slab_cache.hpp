// Computed slabs kept in host memory, least recently used first out, so that
// reading a slab twice does not recompute it while memory allows.
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

namespace fdk {

class SlabCache {
 public:
  using Slab = std::shared_ptr<const std::vector<float>>;

  // The slab, or null; marks it most recently used.
  Slab find(int slab);
  // Inserts and then evicts least recently used slabs (never the one just
  // inserted) until the cache holds at most `capacity_bytes`.
  void insert(int slab, Slab data, uint64_t capacity_bytes);
  uint64_t bytes() const { return bytes_; }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int slab;
    Slab data;
  };
  std::list<Entry> entries_;  // most recent first
  uint64_t bytes_ = 0;
};

}  // namespace fdk
