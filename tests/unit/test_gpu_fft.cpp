// The CUDA backend's own FFT filter, run on the CPU: the same FDK_HD stages
// the kernels run (kernels/src/filter/fft_stages.hpp), driven as a block drives
// them, against KissFFT and against the CPU filters (RampFilter,
// VerticalWindow). No GPU needed; built with or without CUDA.
#include <fdk/core/error.hpp>
#include <fdk/core/ramp_filter.hpp>
#include <fdk/core/vertical_window.hpp>
#include <kiss_fft.h>
#include <kiss_fftr.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "filter/fft_plan.hpp"
#include "filter/fft_stages.hpp"
#include "filter/filter_params.hpp"

namespace {

using fdk::cuda::Complex;
using fdk::cuda::FftPlan;
using fdk::cuda::FilterLaunch;

constexpr uint64_t kLargeShared = uint64_t{1} << 40;  // no shared-memory limit: the register rule decides

bool smooth235(int n) {
  for (int f : {2, 3, 5})
    while (n % f == 0) n /= f;
  return n == 1;
}

uint64_t addr(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

const Complex* twiddles(const FftPlan& plan) { return reinterpret_cast<const Complex*>(plan.twiddles.data()); }

// One in-place pass of a block of `threads`: every thread's loads, then
// (after the barrier) every thread's stores.
template <int R>
void emulate_pass_in_place(Complex* buf, const fdk::cuda::FftPass& pass, const Complex* tw, int threads) {
  std::vector<fdk::cuda::PassRegisters> regs(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) fdk::cuda::stage_load<R>(buf, pass, tw, t, threads, regs[static_cast<size_t>(t)]);
  for (int t = 0; t < threads; ++t) fdk::cuda::stage_store<R>(buf, pass, t, threads, regs[static_cast<size_t>(t)]);
}

template <int R>
void emulate_pass_out_of_place(const Complex* src, Complex* dst, const fdk::cuda::FftPass& pass, const Complex* tw,
                               int threads) {
  for (int t = 0; t < threads; ++t) fdk::cuda::pass_out_of_place<R>(src, dst, pass, tw, t, threads);
}

// The forward FFT as the shared path (in place, registers) or the global
// path (ping-pong) runs it; the result ends in buf either way.
void emulate_fft(std::vector<Complex>& buf, const FftPlan& plan, const FilterLaunch& launch) {
  const Complex* tw = twiddles(plan);
  std::vector<Complex> other(launch.shared_bytes ? 0 : buf.size());
  int ns = 1;
  for (int radix : plan.radices) {
    const fdk::cuda::FftPass pass = fdk::cuda::make_pass(plan.n, ns, radix);
    if (launch.shared_bytes) {
      switch (radix) {
        case 2: emulate_pass_in_place<2>(buf.data(), pass, tw, launch.threads); break;
        case 3: emulate_pass_in_place<3>(buf.data(), pass, tw, launch.threads); break;
        case 4: emulate_pass_in_place<4>(buf.data(), pass, tw, launch.threads); break;
        case 5: emulate_pass_in_place<5>(buf.data(), pass, tw, launch.threads); break;
        default: emulate_pass_in_place<8>(buf.data(), pass, tw, launch.threads); break;
      }
    } else {
      switch (radix) {
        case 2: emulate_pass_out_of_place<2>(buf.data(), other.data(), pass, tw, launch.threads); break;
        case 3: emulate_pass_out_of_place<3>(buf.data(), other.data(), pass, tw, launch.threads); break;
        case 4: emulate_pass_out_of_place<4>(buf.data(), other.data(), pass, tw, launch.threads); break;
        case 5: emulate_pass_out_of_place<5>(buf.data(), other.data(), pass, tw, launch.threads); break;
        default: emulate_pass_out_of_place<8>(buf.data(), other.data(), pass, tw, launch.threads); break;
      }
      buf.swap(other);
    }
    ns *= radix;
  }
}

// The kernels' sequence per pair: FFT, conj(H X), FFT; the conjugate of
// the filtered pair is left in buf (the stores undo the conjugation).
void emulate_filter(std::vector<Complex>& buf, const FftPlan& plan, const FilterLaunch& launch,
                    const std::vector<float>& response) {
  emulate_fft(buf, plan, launch);
  fdk::cuda::apply_response_conj(buf.data(), plan.n, response.data(), 0, 1);
  emulate_fft(buf, plan, launch);
}

FilterLaunch global_path(int threads) {
  FilterLaunch launch;
  launch.threads = threads;
  return launch;
}

// Every length the CPU filters (so the GPU's, which takes theirs) choose:
// RampFilter 2 m for every 5-smooth m (kiss_fftr_next_fast_size_real of
// 2 (width + 2 pad)); VerticalWindow the powers of two >= 2.
std::vector<int> planner_lengths(int limit) {
  std::set<int> lengths;
  for (int m = 1; 2 * m <= limit; ++m) {
    const int n = kiss_fftr_next_fast_size_real(2 * m);
    if (n <= limit) lengths.insert(n);
  }
  for (int n = 2; n <= limit; n *= 2) lengths.insert(n);
  return {lengths.begin(), lengths.end()};
}

double max_error_vs_kiss(const FftPlan& plan, const FilterLaunch& launch, unsigned seed) {
  const int n = plan.n;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<Complex> buf(static_cast<size_t>(n));
  std::vector<kiss_fft_cpx> in(static_cast<size_t>(n)), ref(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    buf[static_cast<size_t>(k)] = Complex{dist(rng), dist(rng)};
    in[static_cast<size_t>(k)].r = buf[static_cast<size_t>(k)].re;
    in[static_cast<size_t>(k)].i = buf[static_cast<size_t>(k)].im;
  }
  kiss_fft_cfg cfg = kiss_fft_alloc(n, 0, nullptr, nullptr);
  kiss_fft(cfg, in.data(), ref.data());
  kiss_fft_free(cfg);
  emulate_fft(buf, plan, launch);
  double peak = 0, err = 0;
  for (int k = 0; k < n; ++k) {
    const kiss_fft_cpx& r = ref[static_cast<size_t>(k)];
    const Complex& z = buf[static_cast<size_t>(k)];
    peak = std::max(peak, std::hypot(static_cast<double>(r.r), static_cast<double>(r.i)));
    err = std::max(err, std::hypot(static_cast<double>(z.re) - r.r, static_cast<double>(z.im) - r.i));
  }
  return err / peak;
}

TEST(GpuFft, PlannerLengthsAreTwiceFiveSmoothOrPowersOfTwo) {
  const std::vector<int> lengths = planner_lengths(1 << 17);
  std::set<int> expected;
  for (int m = 1; 2 * m <= (1 << 17); ++m)
    if (smooth235(m)) expected.insert(2 * m);
  EXPECT_EQ(std::set<int>(lengths.begin(), lengths.end()), expected);
  for (int width : {1, 2, 3, 17, 100, 1000, 2048})
    for (double pad : {0.0, 0.25, 1.0}) {
      fdk::RampFilterParams rp;
      rp.width = width;
      rp.truncation_padding = pad;
      const int n = fdk::RampFilter(rp).padded_length();
      EXPECT_TRUE(expected.count(n)) << n;
    }
  for (int rows : {1, 2, 3, 100, 1000, 4096}) {
    const int n = fdk::VerticalWindow(rows, 0.5).padded_length();
    EXPECT_TRUE(expected.count(n)) << n;
  }
}

TEST(GpuFft, PlanRadicesAndTwiddles) {
  for (int n : {1, 2, 3, 4, 5, 8, 16, 30, 64, 1000, 4096, 3 * 3 * 5 * 5 * 64}) {
    const FftPlan plan = fdk::cuda::make_fft_plan(n);
    int product = 1;
    for (int r : plan.radices) {
      EXPECT_TRUE(r == 2 || r == 3 || r == 4 || r == 5 || r == 8) << r;
      product *= r;
    }
    EXPECT_EQ(product, n);
    ASSERT_EQ(plan.twiddles.size(), 2 * static_cast<size_t>(n));
    EXPECT_EQ(plan.twiddles[0], 1.0f);
    if (n % 4 == 0) {
      EXPECT_NEAR(plan.twiddles[2 * static_cast<size_t>(n / 4) + 1], -1.0f, 1e-7);  // w^(n/4) = -i
    }
    fdk::cuda::RowFilterParams rows{};
    fdk::cuda::set_plan(rows, plan);
    EXPECT_EQ(rows.n, n);
    EXPECT_EQ(rows.num_radices, static_cast<int>(plan.radices.size()));
  }
  for (int bad : {0, -4, 7, 14, 2 * 11, 3 * 49}) {
    try {
      fdk::cuda::make_fft_plan(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const fdk::Error& e) {
      EXPECT_EQ(e.code(), FDK_ERROR_INTERNAL);
    }
  }
  // No length below 2^31 takes more than 19 passes (3^19); the params hold 24.
  FftPlan many;
  many.radices.assign(fdk::cuda::kMaxRadices, 2);
  fdk::cuda::ColumnFilterParams columns{};
  EXPECT_NO_THROW(fdk::cuda::set_plan(columns, many));
  many.radices.push_back(2);
  EXPECT_THROW(fdk::cuda::set_plan(columns, many), fdk::Error);
}

TEST(GpuFft, LaunchPicksSharedMemoryWhileItFits) {
  // An H100's opt-in limit: 227 KiB a block.
  constexpr uint64_t h100 = 227 * 1024;
  for (int n : planner_lengths(1 << 17)) {
    const FftPlan plan = fdk::cuda::make_fft_plan(n);
    const FilterLaunch launch = fdk::cuda::filter_launch(plan, h100);
    EXPECT_GE(launch.threads, 64);
    EXPECT_LE(launch.threads, fdk::cuda::kFilterMaxThreads);
    if (launch.shared_bytes) {
      EXPECT_EQ(launch.shared_bytes, 8u * static_cast<uint32_t>(n));
      EXPECT_EQ(launch.scratch_bytes_per_block, 0u);
      EXPECT_TRUE(fdk::cuda::fits_in_registers(plan, launch.threads)) << n;
    } else {
      EXPECT_EQ(launch.scratch_bytes_per_block, 16u * static_cast<uint64_t>(n));
      EXPECT_TRUE(8u * static_cast<uint64_t>(n) > h100 || !fdk::cuda::fits_in_registers(plan, 512)) << n;
    }
    if (n <= 8192) {
      EXPECT_NE(launch.shared_bytes, 0u) << n;  // every width up to 4096 unpadded
    }
  }
  EXPECT_EQ(fdk::cuda::filter_launch(fdk::cuda::make_fft_plan(4096), 16 * 1024).shared_bytes, 0u);
}

// Every planner length up to 2^17 on both paths, against KissFFT.
TEST(GpuFft, StockhamMatchesKissFftForEveryPlannerLength) {
  double worst_shared = 0, worst_global = 0;
  int worst_n = 0, shared_lengths = 0, lengths = 0;
  for (int n : planner_lengths(1 << 17)) {
    const FftPlan plan = fdk::cuda::make_fft_plan(n);
    const FilterLaunch launch = fdk::cuda::filter_launch(plan, kLargeShared);
    if (launch.shared_bytes) {
      const double e = max_error_vs_kiss(plan, launch, static_cast<unsigned>(n));
      EXPECT_LE(e, 1e-5) << "shared path, n " << n << ", " << launch.threads << " threads";
      if (e > worst_shared) {
        worst_shared = e;
        worst_n = n;
      }
      ++shared_lengths;
    }
    const double e = max_error_vs_kiss(plan, global_path(fdk::cuda::kFilterMaxThreads), static_cast<unsigned>(n) + 1);
    EXPECT_LE(e, 1e-5) << "global path, n " << n;
    worst_global = std::max(worst_global, e);
    ++lengths;
  }
  std::printf("%d lengths (%d on the shared path): worst error / peak %.3g shared (n %d), %.3g global\n", lengths,
              shared_lengths, worst_shared, worst_n, worst_global);
}

// Every thread count a block may have, where the registers hold the passes.
TEST(GpuFft, EveryFittingThreadCountGivesTheSameTransform) {
  for (int n : {2, 6, 10, 64, 90, 250, 1000, 3072, 6144, 12800, 16384}) {
    const FftPlan plan = fdk::cuda::make_fft_plan(n);
    for (int threads : {32, 64, 96, 128, 256, 512}) {
      if (!fdk::cuda::fits_in_registers(plan, threads)) continue;
      FilterLaunch launch;
      launch.threads = threads;
      launch.shared_bytes = 8u * static_cast<uint32_t>(n);
      EXPECT_LE(max_error_vs_kiss(plan, launch, 7), 1e-5) << n << " " << threads;
    }
  }
}

struct RowCase {
  int width, rows;
  double padding;
  fdk_window window;
  double cutoff;
};

// The fused row-pair filter (weight, pad, FFT, response, inverse, crop)
// against weighting as the kernel's formula says, then RampFilter.
double row_case_error(const RowCase& c, const FilterLaunch* forced) {
  fdk::RampFilterParams rp;
  rp.width = c.width;
  rp.pixel_spacing = 0.7;
  rp.window = c.window;
  rp.cutoff = c.cutoff;
  rp.truncation_padding = c.padding;
  const fdk::RampFilter ramp(rp);
  const int n = ramp.padded_length();
  const FftPlan plan = fdk::cuda::make_fft_plan(n);
  const FilterLaunch launch = forced ? *forced : fdk::cuda::filter_launch(plan, kLargeShared);
  std::vector<float> response(ramp.frequency_response());
  for (float& r : response) r /= static_cast<float>(n);

  // The detector's columns [offset, offset + in_width) hold input pixels
  // (a narrower input, shifted), the rest read as zero.
  const int offset = c.width > 4 ? 2 : 0;
  const int in_width = c.width > 4 ? c.width - 3 : c.width;
  const size_t in_pitch = static_cast<size_t>(in_width) + 5, out_pitch = static_cast<size_t>(c.width) + 3;
  std::mt19937 rng(static_cast<unsigned>(c.width * 131 + c.rows));
  std::uniform_real_distribution<float> pixel(0.5f, 2.0f), weight(0.8f, 1.2f), u2(0.0f, 50.0f);
  std::vector<float> raw(in_pitch * static_cast<size_t>(c.rows)), cw(static_cast<size_t>(c.width)),
      cu2(static_cast<size_t>(c.width));
  for (float& x : raw) x = pixel(rng);
  for (float& x : cw) x = weight(rng);
  for (float& x : cu2) x = u2(rng);
  constexpr float kSentinel = -12345.0f;
  std::vector<float> out(out_pitch * static_cast<size_t>(c.rows), kSentinel);

  fdk::cuda::RowFilterParams p{};
  p.raw = addr(raw.data());
  p.column_weight = addr(cw.data());
  p.column_u2 = addr(cu2.data());
  p.response = addr(response.data());
  p.twiddles = addr(plan.twiddles.data());
  p.out = addr(out.data());
  p.in_pitch = in_pitch;
  p.out_pitch = out_pitch;
  p.in_width = in_width;
  p.width = c.width;
  p.rows = c.rows;
  p.pad = ramp.pad_samples();
  p.column_offset = offset;
  p.v_origin = -3.5f;
  p.v_spacing = 0.25f;
  p.sdd2 = 1000.0f * 1000.0f / 64.0f;
  fdk::cuda::set_plan(p, plan);

  std::vector<Complex> buf(static_cast<size_t>(n));
  for (int pair = 0; pair < (c.rows + 1) / 2; ++pair) {
    fdk::cuda::load_row_pair(p, 2 * pair, buf.data(), 0, 1);
    emulate_filter(buf, plan, launch, response);
    fdk::cuda::store_row_pair(p, 2 * pair, buf.data(), 0, 1);
  }

  std::vector<float> ref(static_cast<size_t>(c.width) * static_cast<size_t>(c.rows));
  for (int j = 0; j < c.rows; ++j) {
    const double v = p.v_origin + j * static_cast<double>(p.v_spacing);
    for (int i = 0; i < c.width; ++i) {
      const int ii = i - offset;
      const double x = ii >= 0 && ii < in_width ? raw[static_cast<size_t>(j) * in_pitch + static_cast<size_t>(ii)] : 0.0;
      ref[static_cast<size_t>(j) * c.width + i] =
          static_cast<float>(x * cw[static_cast<size_t>(i)] / std::sqrt(p.sdd2 + v * v + cu2[static_cast<size_t>(i)]));
    }
  }
  ramp.filter_rows(ref.data(), c.rows, static_cast<size_t>(c.width));

  double worst = 0;
  for (int j = 0; j < c.rows; ++j) {
    double peak = 0, err = 0;
    for (int i = 0; i < c.width; ++i) {
      const double r = ref[static_cast<size_t>(j) * c.width + i];
      peak = std::max(peak, std::fabs(r));
      err = std::max(err, std::fabs(out[static_cast<size_t>(j) * out_pitch + i] - r));
    }
    for (size_t i = static_cast<size_t>(c.width); i < out_pitch; ++i)
      EXPECT_EQ(out[static_cast<size_t>(j) * out_pitch + i], kSentinel) << "wrote past the row";
    EXPECT_LE(err, 1e-5 * peak) << "width " << c.width << " rows " << c.rows << " row " << j << " n " << n;
    worst = std::max(worst, err / peak);
  }
  return worst;
}

TEST(GpuFft, FusedRowPairFilterMatchesRampFilter) {
  double worst = 0;
  const fdk_window windows[] = {FDK_WINDOW_RAM_LAK, FDK_WINDOW_SHEPP_LOGAN, FDK_WINDOW_COSINE, FDK_WINDOW_HAMMING,
                                FDK_WINDOW_HANN};
  int k = 0;
  for (int width : {1, 2, 3, 17, 100, 1000, 2048})
    for (int rows : {1, 2, 5, 8})
      for (double padding : {0.0, 0.3, 1.0}) {
        const fdk_window w = windows[k++ % 5];
        worst = std::max(worst, row_case_error({width, rows, padding, w, k % 3 ? 1.0 : 0.6}, nullptr));
      }
  std::printf("fused rows, shared path: worst error / row peak %.3g\n", worst);
}

TEST(GpuFft, FusedRowPairFilterOnTheGlobalPath) {
  double worst = 0;
  const FilterLaunch global = global_path(fdk::cuda::kFilterMaxThreads);
  for (int width : {1, 17, 1000, 2048})
    for (int rows : {3, 4})
      worst = std::max(worst, row_case_error({width, rows, 0.5, FDK_WINDOW_SHEPP_LOGAN, 1.0}, &global));
  // Long enough that filter_launch itself picks the global path.
  worst = std::max(worst, row_case_error({12000, 3, 1.0, FDK_WINDOW_HANN, 1.0}, nullptr));
  std::printf("fused rows, global path: worst error / row peak %.3g\n", worst);
}

double column_case_error(int columns, int rows, double cutoff, const FilterLaunch* forced) {
  const fdk::VerticalWindow window(rows, cutoff);
  const int n = window.padded_length();
  const FftPlan plan = fdk::cuda::make_fft_plan(n);
  const FilterLaunch launch = forced ? *forced : fdk::cuda::filter_launch(plan, kLargeShared);
  std::vector<float> response(window.frequency_response());
  for (float& r : response) r /= static_cast<float>(n);
  const size_t pitch = static_cast<size_t>(columns) + 4;
  std::mt19937 rng(static_cast<unsigned>(columns * 7 + rows));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> data(pitch * static_cast<size_t>(rows));
  for (float& x : data) x = dist(rng);
  std::vector<float> ref(data);
  window.filter_columns(ref.data(), 0, columns, pitch);

  fdk::cuda::ColumnFilterParams p{};
  p.data = addr(data.data());
  p.response = addr(response.data());
  p.twiddles = addr(plan.twiddles.data());
  p.pitch = pitch;
  p.columns = columns;
  p.rows = rows;
  fdk::cuda::set_plan(p, plan);
  std::vector<Complex> buf(static_cast<size_t>(n));
  for (int pair = 0; pair < (columns + 1) / 2; ++pair) {
    fdk::cuda::load_column_pair(p, 2 * pair, buf.data(), 0, 1);
    emulate_filter(buf, plan, launch, response);
    fdk::cuda::store_column_pair(p, 2 * pair, buf.data(), 0, 1);
  }
  double worst = 0;
  for (int c = 0; c < columns; ++c) {
    double peak = 0, err = 0;
    for (int r = 0; r < rows; ++r) {
      const size_t at = static_cast<size_t>(r) * pitch + static_cast<size_t>(c);
      peak = std::max(peak, std::fabs(static_cast<double>(ref[at])));
      err = std::max(err, std::fabs(static_cast<double>(data[at]) - ref[at]));
    }
    EXPECT_LE(err, 1e-5 * peak) << "columns " << columns << " rows " << rows << " column " << c;
    worst = std::max(worst, err / peak);
  }
  for (int r = 0; r < rows; ++r)
    for (size_t c = static_cast<size_t>(columns); c < pitch; ++c)
      EXPECT_EQ(data[static_cast<size_t>(r) * pitch + c], ref[static_cast<size_t>(r) * pitch + c]) << "wrote past the view";
  return worst;
}

TEST(GpuFft, FusedColumnPairFilterMatchesVerticalWindow) {
  double worst = 0;
  for (int columns : {1, 2, 3, 17, 100})
    for (int rows : {1, 2, 3, 17, 100, 1000, 2048})
      for (double cutoff : {1.0, 0.5, 0.1}) worst = std::max(worst, column_case_error(columns, rows, cutoff, nullptr));
  const FilterLaunch global = global_path(fdk::cuda::kFilterMaxThreads);
  for (int rows : {3, 100, 2048}) worst = std::max(worst, column_case_error(5, rows, 0.5, &global));
  std::printf("fused columns: worst error / column peak %.3g\n", worst);
}

}  // namespace
