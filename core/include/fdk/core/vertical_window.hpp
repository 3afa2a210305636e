// rtkfdk's --hannY: a Hann window along the detector's v axis. RTK builds a
// 2-D kernel, the ramp along u times the window along v, and convolves the
// view zero-padded in v; the kernel is separable, so here the columns of the
// row-filtered view are convolved along v on their own, with RTK's padded
// length and RTK's rounding of the cut, which gives RTK's kernel exactly.
#pragma once

#include <memory>
#include <vector>

namespace fdk {

class VerticalWindow {
 public:
  // rows: detector rows; cutoff: fdk_config.hann_cutoff_v, in (0, 1].
  VerticalWindow(int rows, double cutoff);
  ~VerticalWindow();
  VerticalWindow(const VerticalWindow&) = delete;
  VerticalWindow& operator=(const VerticalWindow&) = delete;

  // RTK's padded height: the smallest power of two >= 2 * rows (RTK pads
  // to a size whose greatest prime factor is 2 unless built with FFTW, and
  // the itk-rtk wheels are not), so the circular convolution never wraps.
  int padded_length() const;
  // Gain at frequency bins 0..padded_length()/2: 0.5 (1 + cos(pi j / ncut))
  // below ncut = round((padded/2 + 1) * cutoff), 0 from there on.
  const std::vector<float>& frequency_response() const;

  // Smooths columns [col0, col1) of a view of `rows` rows, row r at
  // data + r * row_stride floats, in place. Thread-safe (own scratch per
  // call), so disjoint column ranges may run in parallel.
  void filter_columns(float* data, int col0, int col1, size_t row_stride) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fdk
