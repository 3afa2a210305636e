#include "fft_plan.hpp"

#include <fdk/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "fft_stages.hpp"

namespace fdk::cuda {
namespace {

constexpr double kPi = 3.14159265358979323846;

int count_factor(int& n, int f) {
  int k = 0;
  while (n % f == 0) {
    n /= f;
    ++k;
  }
  return k;
}

template <class Params>
void fill(Params& params, const FftPlan& plan) {
  if (plan.radices.size() > static_cast<size_t>(kMaxRadices))
    fail(FDK_ERROR_INTERNAL, "FFT filter: " + std::to_string(plan.n) + " needs too many passes");
  params.n = plan.n;
  params.num_radices = static_cast<int32_t>(plan.radices.size());
  std::fill(std::begin(params.radices), std::end(params.radices), 0);
  std::copy(plan.radices.begin(), plan.radices.end(), params.radices);
}

}  // namespace

FftPlan make_fft_plan(int n) {
  if (n < 1) fail(FDK_ERROR_INTERNAL, "FFT filter: length " + std::to_string(n) + " below 1");
  int rest = n;
  const int twos = count_factor(rest, 2), threes = count_factor(rest, 3), fives = count_factor(rest, 5);
  if (rest != 1)
    fail(FDK_ERROR_INTERNAL, "FFT filter: length " + std::to_string(n) + " has a prime factor above 5");
  FftPlan plan;
  plan.n = n;
  // Radix 8 where it can: fewer passes, so fewer barriers and round trips
  // through memory; 2^(3q+1) as 8^(q-1) 4 4 rather than 8^q 2.
  int eights = twos / 3, fours = 0, pairs = 0;
  if (twos % 3 == 2) fours = 1;
  if (twos % 3 == 1) {
    if (eights > 0) {
      --eights;
      fours = 2;
    } else {
      pairs = 1;
    }
  }
  plan.radices.insert(plan.radices.end(), static_cast<size_t>(eights), 8);
  plan.radices.insert(plan.radices.end(), static_cast<size_t>(fours), 4);
  plan.radices.insert(plan.radices.end(), static_cast<size_t>(pairs), 2);
  plan.radices.insert(plan.radices.end(), static_cast<size_t>(fives), 5);
  plan.radices.insert(plan.radices.end(), static_cast<size_t>(threes), 3);
  plan.twiddles.resize(2 * static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) {
    const double angle = -2.0 * kPi * static_cast<double>(k) / static_cast<double>(n);
    plan.twiddles[2 * static_cast<size_t>(k)] = static_cast<float>(std::cos(angle));
    plan.twiddles[2 * static_cast<size_t>(k) + 1] = static_cast<float>(std::sin(angle));
  }
  return plan;
}

bool fits_in_registers(const FftPlan& plan, int threads) {
  if (threads < 1 || threads > kFilterMaxThreads) return false;
  for (int radix : plan.radices) {
    const int64_t butterflies = plan.n / radix;
    if ((butterflies + threads - 1) / threads > max_butterflies(radix)) return false;
  }
  return true;
}

FilterLaunch filter_launch(const FftPlan& plan, uint64_t max_shared_bytes) {
  FilterLaunch launch;
  const uint64_t bytes = static_cast<uint64_t>(plan.n) * sizeof(Complex);
  // Enough threads for about 16 values each (half the registers: loads in
  // flight without idling most of a small block), at least two warps.
  int threads = 64;
  while (threads < kFilterMaxThreads && static_cast<int64_t>(threads) * 16 < plan.n) threads *= 2;
  while (threads < kFilterMaxThreads && !fits_in_registers(plan, threads)) threads *= 2;
  if (bytes <= max_shared_bytes && fits_in_registers(plan, threads)) {
    launch.threads = threads;
    launch.shared_bytes = static_cast<uint32_t>(bytes);
    return launch;
  }
  launch.threads = kFilterMaxThreads;
  launch.scratch_bytes_per_block = 2 * bytes;
  return launch;
}

void set_plan(RowFilterParams& params, const FftPlan& plan) { fill(params, plan); }
void set_plan(ColumnFilterParams& params, const FftPlan& plan) { fill(params, plan); }

}  // namespace fdk::cuda
