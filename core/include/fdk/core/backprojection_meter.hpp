// fdk_progress.backprojection_done/_total: the backprojection's work in
// (view x y plane) units, counted while slabs are computed. Backends report
// what they have added to which planes from any thread; fdk_get_progress
// reads it without waiting. Each slab's credit is the most work reported
// for it since its computation (re)started, capped at its share of the
// total, so the sum only grows and a slab computed again from its start
// adds nothing until it passes what was credited before.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace fdk {

class BackprojectionMeter {
 public:
  // The slab plan ([y0, y1) of each, ascending and contiguous) and the
  // views expected (the announced ones until finish).
  BackprojectionMeter(const std::vector<std::array<int, 2>>& slabs, int views);

  // fdk_finish: the views that arrived.
  void set_views(int views) { views_.store(views); }
  // `views` more views backprojected into planes [y0, y1). Any thread.
  void add(int y0, int y1, int64_t views);
  // Planes [y0, y1) (whole slabs) are computed from every view.
  void complete(int y0, int y1);
  // The slabs that overlap [y0, y1) are computed again from their start:
  // their reports count from 0 (their credit stays).
  void restart(int y0, int y1);

  int64_t done() const;
  int64_t total() const { return views_.load() * planes_; }

 private:
  void raise_credit(size_t slab, int64_t target);
  // The slabs that overlap [y0, y1): [first, last).
  std::array<size_t, 2> overlapping(int y0, int y1) const;

  std::vector<std::array<int, 2>> slabs_;
  int64_t planes_ = 0;
  std::atomic<int64_t> views_{0};
  std::unique_ptr<std::atomic<int64_t>[]> reported_;  // per slab: the reports since its last restart
  std::unique_ptr<std::atomic<int64_t>[]> credit_;    // per slab: what counts in done()
  std::atomic<int64_t> done_{0};                      // the sum of credit_
};

}  // namespace fdk
