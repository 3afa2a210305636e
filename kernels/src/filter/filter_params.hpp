// The FFT filter kernels' parameters, passed by value through cuLaunchKernel:
// the host (g++ or MinGW g++) and the device (nvcc) must lay them out alike,
// so every field has a fixed width, device addresses travel as uint64_t, and
// the layout is asserted field by field: a compiler that disagrees fails the
// build instead of the launch.
#pragma once
#include <cstddef>
#include <cstdint>

namespace fdk::cuda {

// Enough for any length below 2^31 made of 2, 3 and 5 (at most 19 threes).
constexpr int kMaxRadices = 24;

// fdk_filter_rows: weight, pad, ramp-filter and crop detector rows, two rows
// per block as the real and imaginary parts of one complex FFT.
struct RowFilterParams {
  uint64_t raw;            // const float*: input row j at raw + j * in_pitch, in_width floats
  uint64_t column_weight;  // const float[width]
  uint64_t column_u2;      // const float[width]
  uint64_t response;       // const float[n / 2 + 1], already divided by n
  uint64_t twiddles;       // const float[2 n]: exp(-2 pi i k / n), re then im
  uint64_t out;            // float*: output row j at out + j * out_pitch, width floats
  uint64_t scratch;        // 0: shared memory; else float[gridDim.x * 4 n] (fft_plan.hpp)
  uint64_t in_pitch;       // floats
  uint64_t out_pitch;      // floats
  int32_t in_width;
  int32_t width;
  int32_t rows;
  int32_t n;               // FFT length (RampFilter::padded_length)
  int32_t pad;             // truncation samples each side (RampFilter::pad_samples)
  int32_t column_offset;   // detector column i reads input column i - column_offset
  int32_t num_radices;
  float v_origin;          // v of row 0 relative to the principal point
  float v_spacing;
  float sdd2;              // source-to-detector distance squared
  int32_t radices[kMaxRadices];
};

static_assert(sizeof(RowFilterParams) == 208, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, raw) == 0, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, column_weight) == 8, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, column_u2) == 16, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, response) == 24, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, twiddles) == 32, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, out) == 40, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, scratch) == 48, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, in_pitch) == 56, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, out_pitch) == 64, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, in_width) == 72, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, width) == 76, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, rows) == 80, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, n) == 84, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, pad) == 88, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, column_offset) == 92, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, num_radices) == 96, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, v_origin) == 100, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, v_spacing) == 104, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, sdd2) == 108, "RowFilterParams layout");
static_assert(offsetof(RowFilterParams, radices) == 112, "RowFilterParams layout");

// fdk_filter_columns: the window along v (VerticalWindow), two columns per
// block, in place.
struct ColumnFilterParams {
  uint64_t data;       // float*: row r at data + r * pitch, columns floats used
  uint64_t response;   // const float[n / 2 + 1] gains, already divided by n
  uint64_t twiddles;   // const float[2 n]
  uint64_t scratch;    // 0: shared memory; else float[gridDim.x * 4 n]
  uint64_t pitch;      // floats
  int32_t columns;
  int32_t rows;
  int32_t n;           // VerticalWindow::padded_length
  int32_t num_radices;
  int32_t radices[kMaxRadices];
};

static_assert(sizeof(ColumnFilterParams) == 152, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, data) == 0, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, response) == 8, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, twiddles) == 16, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, scratch) == 24, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, pitch) == 32, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, columns) == 40, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, rows) == 44, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, n) == 48, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, num_radices) == 52, "ColumnFilterParams layout");
static_assert(offsetof(ColumnFilterParams, radices) == 56, "ColumnFilterParams layout");

}  // namespace fdk::cuda
