// Several GPUs: the volume is the same bits whatever the number of GPUs, a
// GPU that fails hands its work to the others (or the error says that every
// GPU failed), and fdk_slab_ready answers without blocking. On a machine with
// one GPU the "GPUs" are workers on that device (listed several times in
// fdk_config.devices), which exercises the same scheduling; with two or more
// GPUs the real ones are checked too. Failures are injected, and the
// scheduling knobs turned, through the CUDA backend's test seams
// (fdk/kernels/test_seams.hpp), which only this static link of the library
// (fdk_testable) can set: libfdk.so has none. Every test skips, saying
// "skipped: no GPU", where no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fdk/core/partition.hpp"
#include "fdk/core/reconstruction.hpp"
#include "fdk/kernels/cuda_backend.hpp"
#include "fdk/kernels/test_seams.hpp"
#include "multi_gpu_support.hpp"
#include "small_scan.hpp"

using fdk::cuda::FaultPlan;
using fdk::cuda::ScopedFaultPlan;
using fdk_test::SmallScan;
using namespace fdk_test::multi_gpu;

namespace {

// A failure written "<worker>:<alloc|kernel|scan|read>[:<after>]" (see
// FaultPlan); a malformed one fails the test.
FaultPlan fault_plan(const char* text) {
  FaultPlan plan;
  char kind[16] = {};
  if (std::sscanf(text, "%d:%15[a-z]:%d", &plan.worker, kind, &plan.after) < 2) ADD_FAILURE() << "bad fault " << text;
  const std::pair<const char*, FaultPlan::Kind> kinds[] = {
      {"alloc", FaultPlan::Alloc}, {"kernel", FaultPlan::Kernel}, {"scan", FaultPlan::Scan}, {"read", FaultPlan::Read}};
  for (const auto& k : kinds)
    if (std::strcmp(kind, k.first) == 0) plan.kind = k.second;
  EXPECT_NE(plan.kind, FaultPlan::None) << "bad fault " << text;
  return plan;
}

// Injects the failure `text` into the contexts created while it lives.
struct InjectedFault {
  explicit InjectedFault(const char* text) : scope(fault_plan(text)) {}
  ScopedFaultPlan scope;
};

// Mirror pairs for a resident volume (the library takes quads where they
// serve as many views): the tests of the pairs' path.
FaultPlan with_resident_pairs() {
  FaultPlan plan;
  plan.resident_pairs = true;
  return plan;
}

FaultPlan with_packed_sets_limit(int limit) {
  FaultPlan plan = with_resident_pairs();
  plan.packed_sets_limit = limit;
  return plan;
}

FaultPlan with_direct_reads_only() {
  FaultPlan plan;
  plan.direct_reads_only = true;
  return plan;
}

FaultPlan with_plane_pairs(bool on, bool hold_groups) {
  FaultPlan plan = with_resident_pairs();
  plan.plane_pairs = on;
  plan.hold_groups = hold_groups;
  return plan;
}

int workers_with_slabs(const fdk_device_stats& s) {
  int n = 0;
  for (int i = 0; i < s.num_devices; ++i) n += s.slabs_computed[i] > 0 ? 1 : 0;
  return n;
}

// Worker sets to compare with one worker: the same GPU two and three
// times, and the real GPUs where there are several.
std::vector<std::vector<int>> device_sets() {
  std::vector<std::vector<int>> sets{{0, 0}, {0, 0, 0}};
  if (gpu_count() >= 2) sets.push_back({0, 1});
  if (gpu_count() >= 4) sets.push_back({0, 1, 2, 3});
  return sets;
}

constexpr uint64_t kStreamBudget = 4u << 20;  // a 64^3 volume then streams in several slabs

// A resident run with one injected failure (FaultPlan) on `devices`:
// worker `failed` should be the only one marked failed.
struct FaultCase {
  std::vector<int> devices;
  const char* fault;
  int failed;
  std::string label() const { return describe(devices) + " " + fault; }
};

// The same bits as `one`, and only the faulty worker marked failed.
void expect_recovered(const FaultCase& k, const std::vector<float>& one, const std::vector<float>& volume,
                      const fdk_device_stats& stats) {
  EXPECT_TRUE(same_bits(one, volume)) << k.label();
  ASSERT_EQ(stats.num_devices, static_cast<int>(k.devices.size())) << k.label();
  for (int i = 0; i < stats.num_devices; ++i)
    EXPECT_EQ(stats.failed[i], i == k.failed ? 1 : 0) << k.label() << " worker " << i;
  std::printf("[gpu] resident on %s: same bits as on one GPU: %s\n", k.label().c_str(),
              same_bits(one, volume) ? "yes" : "NO");
}

}  // namespace

TEST(MultiGpu, ResidentVolumeIsTheSameBitsOnEveryNumberOfGpus) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  const Outcome one = reconstruct(on_devices(scan.config, {0}, 0), scan);
  ASSERT_FALSE(one.volume.empty());
  EXPECT_EQ(one.stats.num_devices, 1);
  for (const auto& set : device_sets()) {
    const Outcome many = reconstruct(on_devices(scan.config, set, 0), scan);
    EXPECT_TRUE(same_bits(one.volume, many.volume)) << describe(set);
    ASSERT_EQ(many.stats.num_devices, static_cast<int>(set.size()));
    for (size_t i = 0; i < set.size(); ++i) {
      EXPECT_EQ(many.stats.ordinal[i], set[i]);
      EXPECT_GT(many.stats.busy_seconds[i], 0.0) << "GPU worker " << i << " did no backprojection";
      EXPECT_EQ(many.stats.failed[i], 0);
    }
    std::printf("[gpu] resident on %s: same bits as on one GPU: %s\n", describe(set).c_str(),
                same_bits(one.volume, many.volume) ? "yes" : "NO");
  }
}

// A resident device packs each group of mirror pairs once, as it completes,
// into a set reserved at set-up; without a set (no room) a group is packed
// at each launch. Both give the same bits, on one GPU and on several, with
// none, some or all of the groups packed early (FaultPlan::packed_sets_limit
// caps the sets). 400 views make 200 pairs: four groups, the last one partial.
TEST(MultiGpu, GroupsPackedEarlyOrAtEachLaunchGiveTheSameBits) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 400, 96);
  const Outcome all = [&] {
    const ScopedFaultPlan pairs(with_resident_pairs());
    return reconstruct(on_devices(scan.config, {0}, 0), scan);
  }();
  ASSERT_FALSE(all.volume.empty());
  std::vector<std::vector<int>> sets{{0}, {0, 0}};
  if (gpu_count() >= 2) sets.push_back({0, 1});
  for (const int limit : {0, 2}) {
    const ScopedFaultPlan capped_sets(with_packed_sets_limit(limit));
    for (const auto& set : sets) {
      const Outcome capped = reconstruct(on_devices(scan.config, set, 0), scan);
      EXPECT_TRUE(same_bits(all.volume, capped.volume)) << describe(set) << " with at most " << limit << " sets";
      std::printf("[gpu] resident on %s, at most %d groups packed early: same bits as all packed early: %s\n",
                  describe(set).c_str(), limit, same_bits(all.volume, capped.volume) ? "yes" : "NO");
    }
  }
}

namespace {

// Relative L2 of the two volumes to the CPU backend's of `scan`.
std::pair<double, double> distances_to_cpu(const SmallScan& scan, const Outcome& a, const Outcome& b) {
  fdk_config cpu = scan.config;
  cpu.backend = FDK_BACKEND_CPU;
  const Outcome reference = reconstruct(cpu, scan);
  return {fdk_test::relative_l2(a.volume, reference.volume), fdk_test::relative_l2(b.volume, reference.volume)};
}

}  // namespace

// A resident volume takes quads where they serve as many views as mirror
// pairs (a square grid, a full scan): other bits than the pairs' path, as
// close to the CPU backend, and on a grid that is not square (no quads)
// still the pairs.
TEST(MultiGpu, AResidentVolumeTakesQuadsWhereTheyServeAsManyViews) {
  SKIP_WITHOUT_GPU();
  for (const bool square : {true, false}) {
    SmallScan scan(64, 120, 96);
    if (!square) {
      scan.config.volume.size[0] = 48;
      scan.reproject();
    }
    const Outcome quads = reconstruct(on_devices(scan.config, {0}, 0), scan);
    const Outcome pairs = [&] {
      const ScopedFaultPlan plan(with_resident_pairs());
      return reconstruct(on_devices(scan.config, {0}, 0), scan);
    }();
    ASSERT_FALSE(quads.volume.empty());
    const auto [e_quads, e_pairs] = distances_to_cpu(scan, quads, pairs);
    EXPECT_EQ(same_bits(quads.volume, pairs.volume), !square) << (square ? "square" : "not square");
    EXPECT_LE(e_quads, 1e-3);
    EXPECT_LE(e_pairs, 1e-3);
    std::printf("[gpu] resident, %s grid: the default %s the pairs' bits; relative L2 to CPU %.3g, pairs %.3g\n",
                square ? "square" : "48 x 64", same_bits(quads.volume, pairs.volume) ? "has" : "differs from",
                e_quads, e_pairs);
  }
}

// Streamed slabs take quads too where they serve as many views as mirror
// pairs: other bits than the pairs' path, as close to the CPU backend, and
// the first slab still comes from the scan (by quads); on a grid that is
// not square (no quads) the pairs stay.
TEST(MultiGpu, AStreamedVolumeTakesQuadsWhereTheyServeAsManyViews) {
  SKIP_WITHOUT_GPU();
  for (const bool square : {true, false}) {
    SmallScan scan(128, 24, 64);  // every view in a mirror pair; a thin volume's windows fit one slab buffer
    if (!square) {
      scan.config.volume.size[0] = 96;
      scan.reproject();
    }
    const fdk_config config = on_devices(scan.config, {0}, 6u << 20);
    const Outcome quads = reconstruct(config, scan);
    const Outcome pairs = [&] {
      FaultPlan plan;
      plan.stream_pairs = true;
      const ScopedFaultPlan scope(plan);
      return reconstruct(config, scan);
    }();
    ASSERT_GT(quads.slabs, 2);
    const auto [e_quads, e_pairs] = distances_to_cpu(scan, quads, pairs);
    EXPECT_EQ(same_bits(quads.volume, pairs.volume), !square) << (square ? "square" : "not square");
    EXPECT_EQ(quads.stats.slabs_computed[0], quads.slabs - 1) << "the first slab comes from the scan";
    EXPECT_EQ(pairs.stats.slabs_computed[0], pairs.slabs - 1) << "pairs: the first slab comes from the scan";
    // 24 views: the texture unit's 8-bit interpolation weights cost more
    // than with many views (EarlySlabDuringTheScanIsBitIdenticalToAStreamedOne).
    EXPECT_LE(e_quads, 2.5e-3);
    EXPECT_LE(e_pairs, 2.5e-3);
    std::printf("[gpu] streamed, %s grid: the default %s the pairs' bits, %d of %d slabs after the scan (pairs "
                "%d); relative L2 to CPU %.3g, pairs %.3g\n",
                square ? "square" : "96 x 64", same_bits(quads.volume, pairs.volume) ? "has" : "differs from",
                quads.stats.slabs_computed[0], quads.slabs, pairs.stats.slabs_computed[0], e_quads, e_pairs);
  }
}

// Slabs read into page-locked memory (fdk_alloc_host) go straight from the
// GPUs by DMA, without the bounce buffers (FaultPlan::direct_reads_only
// makes a bounced download fail): the same bytes as a read into ordinary memory,
// and nothing written past the slab. Resident on one GPU
// and on several (a read spans several GPUs' chunks), and streamed.
TEST(MultiGpu, SlabsReadIntoPageLockedMemoryAreTheSameBytes) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  std::vector<std::pair<std::vector<int>, uint64_t>> cases{{{0}, 0}, {{0}, kStreamBudget}};
  for (const auto& set : device_sets()) cases.push_back({set, 0});
  for (const auto& [set, budget] : cases) {
    const fdk_config config = on_devices(scan.config, set, budget);
    const Outcome ordinary = reconstruct(config, scan);
    ASSERT_FALSE(ordinary.volume.empty());
    // Every download of this context must go straight by DMA: one through
    // the bounce buffers fails the read.
    fdk_context* ctx = nullptr;
    {
      const ScopedFaultPlan direct(with_direct_reads_only());
      ctx = fdk_test::finished_scan(config, scan);
    }
    ASSERT_NE(ctx, nullptr);
    int32_t slabs = 0;
    ASSERT_EQ(fdk_slab_count(ctx, &slabs), FDK_OK);
    const size_t bytes = ordinary.volume.size() * sizeof(float);
    void* memory = nullptr;
    ASSERT_EQ(fdk_alloc_host(bytes + 64, &memory), FDK_OK) << fdk_last_create_error();
    float* volume = static_cast<float*>(memory);
    std::memset(memory, 0x7f, bytes + 64);
    size_t at = 0;
    for (int32_t i = 0; i < slabs; ++i) {
      fdk_slab_info info{};
      info.struct_size = sizeof(info);
      ASSERT_EQ(fdk_get_slab_info(ctx, i, &info), FDK_OK);
      ASSERT_EQ(fdk_read_slab(ctx, i, volume + at, info.byte_size), FDK_OK) << fdk_last_error(ctx);
      at += info.byte_size / sizeof(float);
    }
    ASSERT_EQ(at * sizeof(float), bytes);
    const bool same = std::memcmp(volume, ordinary.volume.data(), bytes) == 0;
    const unsigned char* tail = static_cast<const unsigned char*>(memory) + bytes;
    EXPECT_TRUE(same) << describe(set) << (budget ? " streamed" : " resident");
    EXPECT_TRUE(std::all_of(tail, tail + 64, [](unsigned char c) { return c == 0x7f; })) << "written past the volume";
    std::printf("[gpu] %s on %s: read into page-locked memory, same bytes: %s\n", budget ? "streamed" : "resident",
                describe(set).c_str(), same ? "yes" : "NO");
    EXPECT_EQ(fdk_free_host(memory), FDK_OK);
    fdk_destroy(ctx);
  }
}

// A volume whose height is not a whole number of chunks (its last chunk is
// short, and with several GPUs the GPUs hold every other chunk), and a
// short scan, whose views outside mirror pairs are launched in the order
// they arrive, between the groups of pairs.
TEST(MultiGpu, ShortScanWithAShortLastChunkIsTheSameBitsOnEveryNumberOfGpus) {
  SKIP_WITHOUT_GPU();
  SmallScan scan(64, 1, 96);
  scan.config.volume.size[1] = 72;
  scan.config.scan.num_views = 100;
  scan.config.scan.arc_deg = 240;
  scan.projections.assign(100, std::vector<float>(96 * 96));
  scan.reproject();
  const Outcome one = reconstruct(on_devices(scan.config, {0}, 0), scan);
  ASSERT_FALSE(one.volume.empty());
  ASSERT_EQ(one.volume.size(), 64u * 72u * 64u);
  for (const auto& set : device_sets()) {
    const Outcome many = reconstruct(on_devices(scan.config, set, 0), scan);
    EXPECT_TRUE(same_bits(one.volume, many.volume)) << describe(set);
    std::printf("[gpu] short scan, 72 planes, resident on %s: same bits as on one GPU: %s\n", describe(set).c_str(),
                same_bits(one.volume, many.volume) ? "yes" : "NO");
  }
}

// A detector shorter than the volume's cone: the corners of a slab project
// below it, where a streamed window's texture must read what a whole
// projection's does (its last row), never rows an earlier batch left there.
SmallScan short_detector() {
  SmallScan scan(64, 120, 96);
  scan.config.detector.size[1] = 60;
  scan.config.detector.origin[1] = -0.5 * (60 - 1) * scan.config.detector.spacing[1];
  scan.projections.assign(120, std::vector<float>(96 * 60));
  scan.reproject();
  return scan;
}

TEST(MultiGpu, StreamedVolumeIsTheSameBitsOnEveryNumberOfGpus) {
  SKIP_WITHOUT_GPU();
  for (const SmallScan& scan : {SmallScan(64, 120, 96), short_detector()}) {
    const Outcome one = reconstruct(on_devices(scan.config, {0}, kStreamBudget), scan);
    ASSERT_GT(one.slabs, 3);
    for (const auto& set : device_sets()) {
      const Outcome many = reconstruct(on_devices(scan.config, set, kStreamBudget), scan);
      // The plan may cut thinner slabs for several GPUs (those shared out
      // after the scan split evenly: plan_slabs); the bits stay.
      EXPECT_GE(many.slabs, one.slabs);
      EXPECT_TRUE(same_bits(one.volume, many.volume)) << describe(set);
      int computed = 0;
      for (int i = 0; i < many.stats.num_devices; ++i) computed += many.stats.slabs_computed[i];
      EXPECT_GE(computed,
                many.slabs - static_cast<int>(set.size()));  // a slab per GPU may come from the scan
      EXPECT_GE(workers_with_slabs(many.stats), 2) << "the slabs were not shared out";
      std::printf(
          "[gpu] streamed (%d slabs, detector %d rows) on %s: same "
          "bits: %s; slabs per GPU:",
          many.slabs, scan.config.detector.size[1], describe(set).c_str(),
          same_bits(one.volume, many.volume) ? "yes" : "NO");
      for (int i = 0; i < many.stats.num_devices; ++i) std::printf(" %d", many.stats.slabs_computed[i]);
      std::printf("\n");
    }
  }
}

// Streaming: every GPU backprojects one of the first slabs during the
// scan (every view in an orbit; a float16 store too), from windows the GPU that
// filtered each view sends it (every GPU filters: a lane of views each),
// so that none waits for the views idle: after the scan the
// workers compute only the slabs left (slabs_computed counts those), and
// the volume is the same bits as on one GPU. (Whether the rest split
// evenly is the planner's: SlabPlanner.SlabsSharedOutAfterTheScanSplit
// EvenlyOverTheGpus; this thin volume's alignment allows 8 slabs only.)
TEST(MultiGpu, EveryGpuComputesASlabDuringTheScan) {
  SKIP_WITHOUT_GPU();
  // 24 views: quads; 26: mirror pairs, no quads. A thin volume's windows
  // fit one slab buffer.
  for (const auto& [views, precision] : {std::pair{24, FDK_PRECISION_FLOAT32}, std::pair{26, FDK_PRECISION_FLOAT32},
                                         std::pair{24, FDK_PRECISION_FLOAT16}}) {
    SmallScan scan(128, views, 64);
    scan.config.precision = precision;
    const uint64_t budget = 6u << 20;
    const Outcome one = reconstruct(on_devices(scan.config, {0}, budget), scan);
    ASSERT_GT(one.slabs, 2);
    EXPECT_EQ(one.stats.slabs_computed[0], one.slabs - 1) << "one GPU: the first slab comes from the scan";
    for (const auto& set : device_sets()) {
      const Outcome many = reconstruct(on_devices(scan.config, set, budget), scan);
      const int workers = static_cast<int>(set.size());
      ASSERT_GT(many.slabs, workers) << describe(set);
      int computed = 0;
      for (int i = 0; i < many.stats.num_devices; ++i) computed += many.stats.slabs_computed[i];
      EXPECT_EQ(computed, many.slabs - workers) << describe(set) << ": slabs computed during the scan";
      EXPECT_TRUE(same_bits(one.volume, many.volume)) << describe(set);
      std::printf("[gpu] early slabs (%d views, float%d) on %s: %d slabs, %d after the scan; same bits as on one "
                  "GPU: %s\n",
                  views, precision == FDK_PRECISION_FLOAT16 ? 16 : 32, describe(set).c_str(), many.slabs, computed, same_bits(one.volume, many.volume) ? "yes" : "NO");
    }
  }
}

namespace {

// Slab thickness of `config`'s plan (fdk_get_plan_info), 0 if it cannot be made.
int planned_thickness(const fdk_config& config) {
  fdk_context* ctx = nullptr;
  if (fdk_create(&config, &ctx) != FDK_OK) return 0;
  fdk_plan_info info{};
  info.struct_size = sizeof(info);
  const int t = fdk_get_plan_info(ctx, &info) == FDK_OK ? info.slab_thickness : 0;
  fdk_destroy(ctx);
  return t;
}

// The tall volume (4 MiB) with the projections does not fit: it streams.
constexpr uint64_t kTallStreamBudget = 8u << 20;

// `scan` with a volume of 256 thin planes (the same height), so that
// streamed slabs of up to 32 planes are allowed (at least 8 slabs).
SmallScan tall(SmallScan scan) {
  scan.config.volume.size[1] = 256;
  scan.config.volume.spacing[1] = 64.0 / 256;
  scan.config.volume.origin[1] = -32.0 + 0.5 * 64.0 / 256;
  return scan;
}

// A detector whose centre is off the rotation axis by 6 columns: no mirror
// pairs, so streamed slabs go by quads.
SmallScan off_centre_detector() {
  SmallScan scan(64, 120, 96);
  scan.config.detector.origin[0] += 6 * scan.config.detector.spacing[0];
  scan.reproject();
  return scan;
}

}  // namespace

// Plane pairs (FaultPlan::plane_pairs; off without them): 256 planes in 16
// chunks; two to four workers hold chunks dealt in mirror images (c with
// 15 - c), two evenly spaced runs each, where a plane pair of the scan's
// first quarter updates both its planes in one launch; three take them in
// turn, and a plane pair's planes then lie on two workers. The same bits on
// every number of workers, other bits than with mirror pairs alone (the
// path is taken), and the CPU backend's volume within float32 accuracy.
TEST(MultiGpu, PlanePairsGiveTheSameBitsOnEveryNumberOfGpus) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan = tall(SmallScan(64, 120, 96));
  const Outcome pairs = [&] {
    const ScopedFaultPlan off(with_plane_pairs(false, false));
    return reconstruct(on_devices(scan.config, {0}, 0), scan);
  }();
  ASSERT_FALSE(pairs.volume.empty());
  std::optional<ScopedFaultPlan> plan;
  plan.emplace(with_plane_pairs(true, false));
  const Outcome one = reconstruct(on_devices(scan.config, {0}, 0), scan);
  ASSERT_FALSE(one.volume.empty());
  EXPECT_FALSE(same_bits(one.volume, pairs.volume)) << "the plane pairs' path was not taken";
  auto sets = device_sets();
  sets.push_back({0, 0, 0, 0});
  for (const auto& set : sets) {
    const Outcome many = reconstruct(on_devices(scan.config, set, 0), scan);
    EXPECT_TRUE(same_bits(one.volume, many.volume)) << describe(set);
    EXPECT_EQ(many.slabs, one.slabs);
    std::printf("[gpu] plane pairs, tall resident on %s: same bits as on one GPU: %s\n", describe(set).c_str(),
                same_bits(one.volume, many.volume) ? "yes" : "NO");
  }
  // Every group held for the finish, whose spans of the lower half take
  // the plane pairs for their mirror images too (on one, two and four
  // workers; on three each span its own).
  plan.reset();
  plan.emplace(with_plane_pairs(true, true));
  sets.insert(sets.begin(), std::vector<int>{0});
  for (const auto& set : sets) {
    const Outcome held = reconstruct(on_devices(scan.config, set, 0), scan);
    EXPECT_TRUE(same_bits(one.volume, held.volume)) << "held, " << describe(set);
    std::printf("[gpu] plane pairs, every group held for the finish on %s: same bits: %s\n", describe(set).c_str(),
                same_bits(one.volume, held.volume) ? "yes" : "NO");
  }
  plan.reset();
  // And the physics: the CPU backend's volume.
  fdk_config cpu = scan.config;
  cpu.backend = FDK_BACKEND_CPU;
  std::vector<float> reference;
  fdk_context* ctx = fdk_test::finished_scan(cpu, scan);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(fdk_test::read_volume(ctx, reference), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
  const double err = fdk_test::relative_l2(one.volume, reference);
  const double base = fdk_test::relative_l2(pairs.volume, reference);
  std::printf("[gpu] tall resident: relative L2 to CPU %.3g with plane pairs, %.3g without\n", err, base);
  EXPECT_LE(err, 1e-3);
}

// Ramped first groups (FaultPlan::ramp_pair_groups; off without them): a
// resident volume's first groups of each kind of mirror pair are 8, 16 and
// 32 pairs. Every GPU forms the same groups from the views in push order,
// so the volume is the same bits on every number of workers, also with
// every group held for the finish; other bits than without them (the path
// is taken: 120 views give fewer than 64 pairs of a kind).
TEST(MultiGpu, RampedFirstGroupsGiveTheSameBitsOnEveryNumberOfGpus) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan = tall(SmallScan(64, 120, 96));
  const Outcome plain = [&] {
    const ScopedFaultPlan pairs(with_resident_pairs());
    return reconstruct(on_devices(scan.config, {0}, 0), scan);
  }();
  ASSERT_FALSE(plain.volume.empty());
  FaultPlan ramp = with_resident_pairs();
  ramp.ramp_pair_groups = true;
  std::optional<ScopedFaultPlan> plan;
  plan.emplace(ramp);
  const Outcome one = reconstruct(on_devices(scan.config, {0}, 0), scan);
  ASSERT_FALSE(one.volume.empty());
  EXPECT_FALSE(same_bits(one.volume, plain.volume)) << "the ramped groups' path was not taken";
  EXPECT_LE(fdk_test::relative_l2(one.volume, plain.volume), 1e-5);
  auto sets = device_sets();
  for (const auto& set : sets) {
    const Outcome many = reconstruct(on_devices(scan.config, set, 0), scan);
    EXPECT_TRUE(same_bits(one.volume, many.volume)) << describe(set);
    std::printf("[gpu] ramped first groups on %s: same bits as on one GPU: %s\n", describe(set).c_str(),
                same_bits(one.volume, many.volume) ? "yes" : "NO");
  }
  ramp.hold_groups = true;
  plan.reset();
  plan.emplace(ramp);
  sets.insert(sets.begin(), std::vector<int>{0});
  for (const auto& set : sets) {
    const Outcome held = reconstruct(on_devices(scan.config, set, 0), scan);
    EXPECT_TRUE(same_bits(one.volume, held.volume)) << "held, " << describe(set);
    std::printf("[gpu] ramped first groups, every group held for the finish on %s: same bits: %s\n",
                describe(set).c_str(), same_bits(one.volume, held.volume) ? "yes" : "NO");
  }
}

// A streamed voxel's bits do not depend on its slab's bounds (its texture
// window and the scale the window is packed with), so neither on the slab
// plan, which depends on the GPU count when the host budget binds. Mirror
// pairs (the first slab during the scan), float16 storage, quads, and a
// short scan with views outside pairs (the generic kernel).
TEST(MultiGpu, StreamedVolumeIsTheSameBitsWhateverTheSlabPlan) {
  SKIP_WITHOUT_GPU();
  SmallScan half = SmallScan(64, 120, 96);
  half.config.precision = FDK_PRECISION_FLOAT16;
  SmallScan short_scan(64, 1, 96);
  short_scan.config.scan.num_views = 100;
  short_scan.config.scan.arc_deg = 240;
  short_scan.projections.assign(100, std::vector<float>(96 * 96));
  short_scan.reproject();
  const std::vector<std::pair<const char*, SmallScan>> scans{{"pairs", tall(SmallScan(64, 120, 96))},
                                                             {"float16", tall(half)},
                                                             {"quads", tall(off_centre_detector())},
                                                             {"short scan", tall(short_scan)}};
  for (const auto& [name, scan] : scans) {
    fdk_config c = on_devices(scan.config, {0}, kTallStreamBudget);
    c.slab_thickness = 16;
    const Outcome base = reconstruct(c, scan);
    ASSERT_EQ(base.slabs, 16) << name;
    for (int thickness : {32, 24, 5, 0}) {
      c.slab_thickness = thickness;
      const Outcome other = reconstruct(c, scan);
      if (thickness) {
        EXPECT_EQ(other.slabs, (256 + thickness - 1) / thickness) << name;
      }
      EXPECT_TRUE(same_bits(base.volume, other.volume)) << name << ", slabs of " << thickness;
      std::printf("[gpu] streamed %s in %d slabs (thickness %d) against 16 slabs of 16: same bits: %s\n", name,
                  other.slabs, thickness, same_bits(base.volume, other.volume) ? "yes" : "NO");
    }
  }
  // A host budget under which three GPUs plan thinner slabs than one (each
  // GPU's staging counts): the same bits all the same.
  const SmallScan scan = tall(SmallScan(64, 120, 96));
  for (uint64_t budget = 8u << 20; budget <= (256u << 20); budget += 4u << 20) {
    fdk_config one = on_devices(scan.config, {0}, kTallStreamBudget);
    fdk_config three = on_devices(scan.config, {0, 0, 0}, kTallStreamBudget);
    one.host_memory_budget = three.host_memory_budget = budget;
    const int t1 = planned_thickness(one), t3 = planned_thickness(three);
    // Slabs of one plane would leave the store almost nothing.
    if (t1 < 2 || t3 < 2 || t1 == t3) continue;
    const Outcome a = reconstruct(one, scan), b = reconstruct(three, scan);
    EXPECT_TRUE(same_bits(a.volume, b.volume));
    std::printf("[gpu] host budget %llu MiB: slabs of %d on one GPU, of %d on {0,0,0}: same bits: %s\n",
                static_cast<unsigned long long>(budget >> 20), t1, t3, same_bits(a.volume, b.volume) ? "yes" : "NO");
    return;
  }
  FAIL() << "no host budget between 8 and 256 MiB plans differently on one and three GPUs (has the staging changed?)";
}

TEST(MultiGpu, AGpuFailingDuringTheReadsHandsItsSlabsToTheOthers) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  const Outcome one = reconstruct(on_devices(scan.config, {0}, kStreamBudget), scan);
  InjectedFault fault("1:kernel:1");  // the second GPU fails after one slab
  const Outcome many = reconstruct(on_devices(scan.config, {0, 0}, kStreamBudget), scan);
  EXPECT_TRUE(same_bits(one.volume, many.volume));
  EXPECT_EQ(many.stats.failed[0], 0);
  EXPECT_EQ(many.stats.failed[1], 1);
  EXPECT_LE(many.stats.slabs_computed[1], 1);
}

// A resident GPU that fails during the scan retires: the others go on, and
// its chunks are recomputed, when read, by a GPU left, from the filtered
// views every GPU holds, with the same bits. "scan:5" fails worker 0 while
// it filters view 5 (its turn: the view is filtered again by another GPU);
// the others fail where they account for a view (a backprojection launch).
TEST(MultiGpu, AResidentGpuFailingDuringTheScanHandsItsChunksToTheOthers) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  const Outcome one = reconstruct(on_devices(scan.config, {0}, 0), scan);
  ASSERT_FALSE(one.volume.empty());
  std::vector<FaultCase> cases{{{0, 0}, "1:scan:40", 1}, {{0, 0}, "0:scan:5", 0}, {{0, 0, 0}, "2:scan:0", 2}};
  if (gpu_count() >= 2) cases.push_back({{0, 1}, "1:scan:70", 1});
  for (const FaultCase& k : cases) {
    InjectedFault fault(k.fault);
    const Outcome many = reconstruct(on_devices(scan.config, k.devices, 0), scan);
    expect_recovered(k, one.volume, many.volume, many.stats);
  }
}

// The same when a resident GPU fails while its chunks are read: the read
// starts again, the failed GPU's chunks recomputed by another; a slab that
// spans them is then ready once that GPU has computed its own chunks.
TEST(MultiGpu, AResidentGpuFailingDuringTheReadsHandsItsChunksToTheOthers) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  const Outcome one = reconstruct(on_devices(scan.config, {0}, 0), scan);
  ASSERT_FALSE(one.volume.empty());
  std::vector<FaultCase> cases{{{0, 0}, "1:read:1", 1}, {{0, 0, 0}, "0:read:0", 0}};
  if (gpu_count() >= 2) cases.push_back({{0, 1}, "0:read:1", 0});
  for (const FaultCase& k : cases) {
    InjectedFault fault(k.fault);
    fdk_context* ctx = fdk_test::finished_scan(on_devices(scan.config, k.devices, 0), scan);
    ASSERT_NE(ctx, nullptr);
    std::vector<float> volume;
    EXPECT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
    fdk_device_stats stats{};
    stats.struct_size = sizeof(stats);
    ASSERT_EQ(fdk_get_device_stats(ctx, &stats), FDK_OK);
    expect_recovered(k, one.volume, volume, stats);
    int32_t ready = 0;
    EXPECT_EQ(fdk_slab_ready(ctx, 0, &ready), FDK_OK);
    EXPECT_EQ(ready, 1);
    // Read again: the recomputed chunks give the same bytes.
    std::vector<float> again;
    EXPECT_EQ(fdk_test::read_volume(ctx, again), FDK_OK) << fdk_last_error(ctx);
    EXPECT_TRUE(same_bits(one.volume, again)) << k.label() << " (read again)";
    fdk_destroy(ctx);
  }
}

TEST(MultiGpu, AGpuFailingAtSetUpIsLeftOut) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  for (uint64_t budget : {uint64_t{0}, kStreamBudget}) {
    const Outcome one = reconstruct(on_devices(scan.config, {0}, budget), scan);
    InjectedFault fault("0:alloc");
    const Outcome many = reconstruct(on_devices(scan.config, {0, 0}, budget), scan);
    EXPECT_TRUE(same_bits(one.volume, many.volume)) << (budget ? "streamed" : "resident");
    ASSERT_EQ(many.stats.num_devices, 2);
    EXPECT_EQ(many.stats.failed[0], 1);
    EXPECT_EQ(many.stats.failed[1], 0);
    EXPECT_EQ(many.stats.busy_seconds[0], 0.0);
  }
}

TEST(MultiGpu, WhenEveryGpuFailsTheErrorSaysSo) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  {
    InjectedFault fault("0:alloc");
    const fdk_config c = on_devices(scan.config, {0}, 0);
    fdk_context* ctx = nullptr;
    EXPECT_EQ(fdk_create(&c, &ctx), FDK_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(fdk_last_create_error()).find("every GPU failed"), std::string::npos)
        << fdk_last_create_error();
    fdk_destroy(ctx);
  }
  {
    // Streaming on one GPU that fails at its first slab: the reads fail
    // with the device error, never a silent zero slab.
    InjectedFault fault("0:kernel:0");
    const fdk_config c = on_devices(scan.config, {0}, kStreamBudget);
    fdk_context* ctx = nullptr;
    ASSERT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
    for (int v = 0; v < scan.views(); ++v)
      ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
    ASSERT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
    fdk_slab_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(fdk_get_slab_info(ctx, 1, &info), FDK_OK);
    std::vector<float> slab(info.byte_size / 4);
    EXPECT_EQ(fdk_read_slab(ctx, 1, slab.data(), info.byte_size), FDK_ERROR_DEVICE);
    EXPECT_NE(std::string(fdk_last_error(ctx)).find("injected kernel failure"), std::string::npos)
        << fdk_last_error(ctx);
    fdk_destroy(ctx);
  }
  {
    // A resident volume whose only GPU fails during the scan: the error
    // comes from a push or from fdk_finish, and no read succeeds afterwards.
    InjectedFault fault("0:scan:10");
    const fdk_config c = on_devices(scan.config, {0}, 0);
    fdk_context* ctx = nullptr;
    ASSERT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
    std::string first_error;
    for (int v = 0; v < scan.views(); ++v)
      if (fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr) != FDK_OK && first_error.empty())
        first_error = fdk_last_error(ctx);
    if (fdk_finish(ctx) != FDK_OK && first_error.empty()) first_error = fdk_last_error(ctx);
    EXPECT_NE(first_error.find("injected failure"), std::string::npos) << first_error;
    std::vector<float> volume;
    EXPECT_NE(fdk_test::read_volume(ctx, volume), FDK_OK);
    fdk_destroy(ctx);
  }
}

TEST(MultiGpu, SlabReadyNeverBlocksAndTheSlabComesReady) {
  SKIP_WITHOUT_GPU();
  const SmallScan scan(64, 120, 96);
  for (uint64_t budget : {uint64_t{0}, kStreamBudget}) {
    const fdk_config c = on_devices(scan.config, {0, 0}, budget);
    fdk_context* ctx = nullptr;
    ASSERT_EQ(fdk_create(&c, &ctx), FDK_OK) << fdk_last_create_error();
    for (int v = 0; v < scan.views(); ++v)
      ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
    ASSERT_EQ(fdk_finish(ctx), FDK_OK) << fdk_last_error(ctx);
    int32_t slabs = 0;
    ASSERT_EQ(fdk_slab_count(ctx, &slabs), FDK_OK);
    const int last = slabs - 1;  // beyond the read-ahead window when streamed
    int32_t ready = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto before = std::chrono::steady_clock::now();
      ASSERT_EQ(fdk_slab_ready(ctx, last, &ready), FDK_OK) << fdk_last_error(ctx);
      EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(200)) << "fdk_slab_ready blocked";
      if (ready) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    EXPECT_EQ(ready, 1) << (budget ? "streamed" : "resident");
    fdk_slab_info info{};
    info.struct_size = sizeof(info);
    ASSERT_EQ(fdk_get_slab_info(ctx, last, &info), FDK_OK);
    std::vector<float> slab(info.byte_size / 4);
    EXPECT_EQ(fdk_read_slab(ctx, last, slab.data(), info.byte_size), FDK_OK) << fdk_last_error(ctx);
    fdk_destroy(ctx);
  }
}

// libfdk_mpi's ranks: a Reconstruction of part of the volume (fdk::Part),
// given only the rows its planes need, on the CUDA backend, resident (its
// own chunks of the whole volume's grid) and streamed, against the whole
// volume's planes in the same mode.

namespace {

std::vector<float> planes_of(const SmallScan& scan, int y0, int y1, bool whole) {
  const auto cuda = [](const fdk::ScanModel& m, const fdk::Settings& s) { return fdk::cuda::make_cuda_backend(m, s); };
  std::unique_ptr<fdk::Reconstruction> r =
      whole ? std::make_unique<fdk::Reconstruction>(scan.config, cuda)
            : std::make_unique<fdk::Reconstruction>(scan.config, cuda, fdk::Part{y0, y1});
  const fdk::ScanRows rows(scan.config);
  const int nu = scan.config.detector.size[0];
  for (int v = 0; v < scan.views(); ++v) {
    const auto band = whole ? std::array<int, 2>{0, scan.config.detector.size[1]} : rows.rows(rows.configured(v), y0, y1);
    r->push_rows(v, band[0], band[1], scan.pixels(v) + static_cast<size_t>(band[0]) * nu, scan.pitch(), nullptr);
  }
  r->finish();
  const size_t plane = static_cast<size_t>(scan.config.volume.size[0]) * static_cast<size_t>(scan.config.volume.size[2]);
  std::vector<float> out;
  for (int s = 0; s < r->slab_count(); ++s) {
    const auto info = r->slab_info(s);
    if (info.y_end <= y0 || info.y_begin >= y1) continue;
    std::vector<float> slab(info.byte_size / 4);
    r->read_slab(s, slab.data(), info.byte_size);
    const int a = std::max(y0, info.y_begin), b = std::min(y1, info.y_end);
    out.insert(out.end(), slab.begin() + static_cast<std::ptrdiff_t>(plane * (a - info.y_begin)),
               slab.begin() + static_cast<std::ptrdiff_t>(plane * (b - info.y_begin)));
  }
  return out;
}

TEST(MultiGpu, ARanksPartOfTheVolumeIsTheWholeVolumesPlanesBitForBit) {
  SKIP_WITHOUT_GPU();
  for (const uint64_t gpu_budget : {uint64_t{0}, uint64_t{6} << 20}) {  // resident, then streamed
    SmallScan scan(64, 40, 64);
    scan.config.backend = FDK_BACKEND_CUDA;
    scan.config.num_devices = 1;
    scan.config.slab_thickness = 16;
    scan.config.gpu_memory_budget = gpu_budget;
    for (const auto& part : {std::array<int, 2>{0, 32}, std::array<int, 2>{32, 64}, std::array<int, 2>{16, 48}}) {
      const auto whole = planes_of(scan, part[0], part[1], true);
      const auto mine = planes_of(scan, part[0], part[1], false);
      ASSERT_EQ(whole.size(), mine.size());
      EXPECT_EQ(std::memcmp(whole.data(), mine.data(), whole.size() * 4), 0)
          << "planes [" << part[0] << ", " << part[1] << ") differ, gpu budget " << gpu_budget;
    }
  }
}

}  // namespace
