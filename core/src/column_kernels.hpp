// The CPU backprojector's innermost loops, built for several instruction
// sets and chosen once at load time (so the library runs on any x86-64 and
// uses AVX2 gathers where present).
#pragma once

namespace fdk {

struct ColumnKernels {
  // col[h] = weight * (a[h] + fu * (b[h] - a[h])) for h in [0, count).
  void (*interpolate)(float* col, const float* a, const float* b, float fu, float weight, int count);
  // dst[t] += linear interpolation of col at r0 + dr * t, for t in
  // [t0, t1]; the position is clamped to [0, last + 1]. dst must have room
  // (and belong to the caller) up to the multiple of 8 past t1, because
  // vector lanes outside [t0, t1] add exact zeros.
  void (*accumulate)(float* dst, const float* col, float r0, float dr, int t0, int t1, int last);
};

const ColumnKernels& column_kernels();

// Voxel columns are stored with this many floats of stride granularity.
constexpr int kColumnPad = 8;

}  // namespace fdk
