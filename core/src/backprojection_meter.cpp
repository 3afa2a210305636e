#include "fdk/core/backprojection_meter.hpp"

#include <algorithm>
#include <cstdint>

namespace fdk {

BackprojectionMeter::BackprojectionMeter(const std::vector<std::array<int, 2>>& slabs, int views)
    : slabs_(slabs),
      views_(views),
      reported_(new std::atomic<int64_t>[slabs.size()]),
      credit_(new std::atomic<int64_t>[slabs.size()]) {
  for (size_t s = 0; s < slabs_.size(); ++s) {
    reported_[s].store(0);
    credit_[s].store(0);
    planes_ += slabs_[s][1] - slabs_[s][0];
  }
}

std::array<size_t, 2> BackprojectionMeter::overlapping(int y0, int y1) const {
  const auto first = std::upper_bound(slabs_.begin(), slabs_.end(), y0,
                                      [](int y, const std::array<int, 2>& s) { return y < s[1]; });
  const auto last = std::lower_bound(first, slabs_.end(), y1,
                                     [](const std::array<int, 2>& s, int y) { return s[0] < y; });
  return {static_cast<size_t>(first - slabs_.begin()), static_cast<size_t>(last - slabs_.begin())};
}

void BackprojectionMeter::raise_credit(size_t slab, int64_t target) {
  const int64_t cap = views_.load() * (slabs_[slab][1] - slabs_[slab][0]);
  target = std::min(target, cap);
  int64_t credit = credit_[slab].load();
  while (credit < target && !credit_[slab].compare_exchange_weak(credit, target)) {
  }
  if (credit < target) done_.fetch_add(target - credit);
}

void BackprojectionMeter::add(int y0, int y1, int64_t views) {
  if (views <= 0 || y1 <= y0) return;
  const auto range = overlapping(y0, y1);
  for (size_t s = range[0]; s < range[1]; ++s) {
    const int64_t planes = std::min(y1, slabs_[s][1]) - std::max(y0, slabs_[s][0]);
    const int64_t units = views * planes;
    raise_credit(s, reported_[s].fetch_add(units) + units);
  }
}

void BackprojectionMeter::complete(int y0, int y1) {
  const auto range = overlapping(y0, y1);
  for (size_t s = range[0]; s < range[1]; ++s) raise_credit(s, INT64_MAX);
}

void BackprojectionMeter::restart(int y0, int y1) {
  const auto range = overlapping(y0, y1);
  for (size_t s = range[0]; s < range[1]; ++s) reported_[s].store(0);
}

int64_t BackprojectionMeter::done() const { return std::min(done_.load(), total()); }

}  // namespace fdk
