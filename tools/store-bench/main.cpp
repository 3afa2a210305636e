// store-bench — micro-benchmark of the compressed projection store on one
// core: ProjectionStore::compress and read_rows over a synthetic filtered view.
//
// The view imitates what the store really holds: line integrals of smooth
// Gaussian blobs plus Gaussian noise, ramp filtered (Hann) by the library's
// own CPU filter, so values of both signs with smooth structure and noisy
// low mantissa bytes. Throughput is counted in float32 input bytes
// (width * height * 4), whatever the precision, on one thread; the float32
// round trip is checked bit for bit and the view against
// worst_case_view_bytes().
//
//   store-bench [--width 1024] [--height 1012] [--noise 2e-3 | --photons N0]
//               [--seconds 2] [--band-rows 16] [--precision f32|f16|both]
//               [--fill VIEWS [--threads N]]
//
// --noise is relative to the peak line integral: 1e-3..4e-3 gives the
// compression ratio seen on real scans (about 1.1 with zstd over all four
// byte planes); 1e-6 is close to float rounding, a noise-free simulation.
// --photons replaces it with a simulated acquisition: N0 unattenuated
// photons a pixel, Poisson counts through the same bodies (line integrals up
// to about 3, 5 % transmission), log-converted as a scanner does (counts
// below 1 clamped to 1); 1e4..1e5 is a typical flat-panel dose.
// The line integrals are scaled so the filtered values span about 1e-3..1e1.
// Each precision is timed coded (what a scan that would not fit its budget
// uncoded gets) and uncoded (byte-shuffled as it is).
// --fill instead codes VIEWS copies of the view into one store on N threads
// at once (all cores by default), as a scan's store workers do, and commits
// them: views/s and the CPU seconds a view, user and system (page faults,
// mappings), in memory this process never used before. Run it in a fresh
// process: the first scan of a process is what a scanner's software gets.
#include <fdk/core/projection_store.hpp>
#include <fdk/core/ramp_filter.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifndef _WIN32
#include <sys/resource.h>
#endif

namespace {

struct Options {
  int width = 1024;
  int height = 1012;
  double noise = 2e-3;
  double photons = 0;  // > 0: Poisson counts instead of Gaussian noise
  double seconds = 2.0;
  int band_rows = 16;
  std::string precision = "both";
  int fill = 0;  // > 0: views to store on `threads` threads
  int threads = 0;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--width N] [--height N] [--noise REL | --photons N0] [--seconds S]\n"
               "          [--band-rows N] [--precision f32|f16|both] [--fill VIEWS [--threads N]]\n",
               argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const char* v = argv[++i];
    if (a == "--width") o.width = std::atoi(v);
    else if (a == "--height") o.height = std::atoi(v);
    else if (a == "--noise") o.noise = std::atof(v);
    else if (a == "--photons") o.photons = std::atof(v);
    else if (a == "--seconds") o.seconds = std::atof(v);
    else if (a == "--band-rows") o.band_rows = std::atoi(v);
    else if (a == "--precision") o.precision = v;
    else if (a == "--fill") o.fill = std::atoi(v);
    else if (a == "--threads") o.threads = std::atoi(v);
    else usage(argv[0]);
  }
  const bool known = o.precision == "f32" || o.precision == "f16" || o.precision == "both";
  if (o.width < 1 || o.height < 1 || o.band_rows < 1 || o.seconds <= 0 || o.photons < 0 || !known ||
      o.fill < 0 || o.threads < 0)
    usage(argv[0]);
  if (o.threads == 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return o;
}

struct Blob {
  double amplitude, cu, cv, su, sv;  // centre and sigma as fractions of the size
};

// Line integrals of a body and a few inserts, plus Gaussian noise (or from
// Poisson counts of `photons` a pixel), then the ramp filter: the filtered
// projection the store sees.
std::vector<float> filtered_view(int width, int height, double noise, double photons) {
  constexpr double kScale = 200;  // puts the filtered values at about 1e-3..1e1
  const Blob blobs[] = {{1.60, 0.50, 0.50, 0.28, 0.30}, {0.55, 0.62, 0.40, 0.06, 0.08},
                        {0.40, 0.30, 0.62, 0.04, 0.05}, {0.30, 0.55, 0.55, 0.09, 0.04},
                        {0.25, 0.20, 0.35, 0.03, 0.10}};
  std::mt19937 rng(1234);
  std::normal_distribution<double> gauss(0.0, noise * 1.6);
  std::vector<float> v(static_cast<size_t>(width) * height);
  for (int j = 0; j < height; ++j)
    for (int i = 0; i < width; ++i) {
      double p = 0.05;
      for (const Blob& b : blobs) {
        const double du = (i + 0.5 - b.cu * width) / (b.su * width);
        const double dv = (j + 0.5 - b.cv * height) / (b.sv * height);
        p += b.amplitude * std::exp(-0.5 * (du * du + dv * dv));
      }
      if (photons > 0) {
        std::poisson_distribution<long long> counts(photons * std::exp(-p));
        p = -std::log(static_cast<double>(std::max<long long>(1, counts(rng))) / photons);
      } else {
        p += gauss(rng);
      }
      v[static_cast<size_t>(j) * width + i] = static_cast<float>(kScale * p);
    }
  fdk::RampFilterParams params;
  params.width = width;
  params.pixel_spacing = 256.0 * 1.5 / width;  // fdk-bench's detector
  params.window = FDK_WINDOW_HANN;
  fdk::RampFilter(params).filter_rows(v.data(), height, static_cast<size_t>(width));
  return v;
}

double now() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// Runs f until `seconds` have passed (at least twice); returns seconds per call.
template <class F>
double time_per_call(double seconds, F&& f) {
  f();  // warm-up: thread-local contexts, page faults
  int calls = 0;
  const double t0 = now();
  double t = t0;
  do {
    f();
    ++calls;
    t = now();
  } while (t - t0 < seconds || calls < 2);
  return (t - t0) / calls;
}

void describe(const std::vector<float>& v) {
  std::vector<float> mag(v.size());
  for (size_t i = 0; i < v.size(); ++i) mag[i] = std::fabs(v[i]);
  std::sort(mag.begin(), mag.end());
  size_t negative = 0;
  for (float x : v) negative += x < 0;
  std::printf("data: |x| percentiles 5%% %.3g, 50%% %.3g, 95%% %.3g, max %.3g; %.0f%% negative\n",
              mag[mag.size() / 20], mag[mag.size() / 2], mag[mag.size() * 19 / 20], mag.back(),
              100.0 * static_cast<double>(negative) / static_cast<double>(v.size()));
}

int bench(const Options& o, fdk_precision precision, bool coded, const std::vector<float>& view) {
  fdk::ProjectionStore store(o.width, o.height, 1, precision, o.band_rows);
  store.set_coded(coded);
  const double mb = static_cast<double>(view.size()) * 4.0 / 1e6;
  fdk::CompressedView last;
  const double tc = time_per_call(o.seconds, [&] { last = store.compress(view.data()); });
  const uint64_t bytes = last.bytes();
  if (bytes > store.worst_case_view_bytes()) {
    std::printf("FAIL: %llu bytes above the worst case %llu\n",
                static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(store.worst_case_view_bytes()));
    return 1;
  }
  store.commit(0, std::move(last));
  std::vector<float> out(view.size());
  const double td = time_per_call(o.seconds, [&] { store.read_rows(0, 0, o.height, out.data()); });
  const bool f32 = precision == FDK_PRECISION_FLOAT32;
  if (f32 && std::memcmp(out.data(), view.data(), view.size() * sizeof(float)) != 0) {
    std::printf("FAIL: float32 round trip is not bit-exact\n");
    return 1;
  }
  std::printf("%s %-7s  ratio %.4f  compress %7.1f MB/s  decompress %7.1f MB/s  (%llu bytes)\n",
              f32 ? "float32" : "float16", coded ? "coded" : "uncoded", static_cast<double>(view.size()) * 4.0 / bytes,
              mb / tc, mb / td, static_cast<unsigned long long>(bytes));
  return 0;
}

// This process's CPU seconds (user, system) and page faults so far; zeros
// where getrusage is missing (Windows).
struct Usage {
  double user = 0, sys = 0;
  long faults = 0;
};
Usage usage() {
  Usage u;
#ifndef _WIN32
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  u.user = seconds(r.ru_utime);
  u.sys = seconds(r.ru_stime);
  u.faults = r.ru_minflt;
#endif
  return u;
}

// --fill: the store of a scan, coded on many threads into memory the
// process never had.
int fill(const Options& o, fdk_precision precision, const std::vector<float>& view) {
  fdk::ProjectionStore store(o.width, o.height, o.fill, precision, o.band_rows);
  const Usage before = usage();
  const double t0 = now();
  std::vector<std::thread> workers;
  for (int t = 0; t < o.threads; ++t)
    workers.emplace_back([&, t] {
      for (int v = t; v < o.fill; v += o.threads) store.commit(v, store.compress(view.data()));
    });
  for (auto& w : workers) w.join();
  const double seconds = now() - t0;
  const Usage after = usage();
  const double user = after.user - before.user, sys = after.sys - before.sys;
  std::printf("%s fill  %d views on %d threads: %.3f s, %.1f views/s, ratio %.4f; CPU a view %.1f ms user, %.1f ms "
              "system; %ld page faults\n",
              precision == FDK_PRECISION_FLOAT32 ? "float32" : "float16", o.fill, o.threads, seconds, o.fill / seconds,
              static_cast<double>(store.raw_bytes()) / static_cast<double>(store.stored_bytes()), 1e3 * user / o.fill,
              1e3 * sys / o.fill, after.faults - before.faults);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::vector<float> view = filtered_view(o.width, o.height, o.noise, o.photons);
  const std::string cores = o.fill > 0 ? std::to_string(o.threads) + " threads" : "one core";
  if (o.photons > 0)
    std::printf("view %d x %d, band rows %d, Poisson counts of %g photons, %s\n", o.width, o.height,
                o.band_rows, o.photons, cores.c_str());
  else
    std::printf("view %d x %d, band rows %d, noise %g, %s\n", o.width, o.height, o.band_rows, o.noise, cores.c_str());
  describe(view);
  int rc = 0;
  try {
    if (o.fill > 0) return fill(o, o.precision == "f16" ? FDK_PRECISION_FLOAT16 : FDK_PRECISION_FLOAT32, view);
    for (const bool coded : {true, false}) {
      if (o.precision == "f32" || o.precision == "both") rc |= bench(o, FDK_PRECISION_FLOAT32, coded, view);
      if (o.precision == "f16" || o.precision == "both") rc |= bench(o, FDK_PRECISION_FLOAT16, coded, view);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "store-bench: %s\n", e.what());
    return 1;
  }
  return rc;
}
