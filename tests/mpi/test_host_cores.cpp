// A rank's default threads (capi/mpi/src/host_cores.hpp): its share of the
// host's cores, or the cores it is bound to. No MPI needed.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "host_cores.hpp"

namespace {

int host_cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// Restores the thread's affinity when a test narrowed it.
class AffinityGuard {
 public:
  AffinityGuard() { sched_getaffinity(0, sizeof saved_, &saved_); }
  ~AffinityGuard() { sched_setaffinity(0, sizeof saved_, &saved_); }

 private:
  cpu_set_t saved_;
};

bool unbound() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) >= host_cores();
}

}  // namespace

TEST(HostCores, AShareIsTheBoundCoresElseTheHostsDividedNeverNone) {
  EXPECT_EQ(fdk::mpi::share_of_host(32, 0, 1), 32);
  EXPECT_EQ(fdk::mpi::share_of_host(32, 0, 2), 16);
  EXPECT_EQ(fdk::mpi::share_of_host(32, 0, 3), 10);
  EXPECT_EQ(fdk::mpi::share_of_host(32, 4, 2), 4);   // bound: its cores, however many share the host
  EXPECT_EQ(fdk::mpi::share_of_host(2, 0, 3), 1);    // more ranks than cores
  EXPECT_EQ(fdk::mpi::share_of_host(0, 0, 0), 1);    // nothing known
}

TEST(HostCores, RanksOnOneHostShareItsCores) {
  if (!unbound()) GTEST_SKIP() << "skipped: this test runs bound to some of the host's cores";
  const int cores = host_cores();
  EXPECT_EQ(fdk::mpi::bound_cores(), 0);
  EXPECT_EQ(fdk::mpi::default_threads(1), cores);
  EXPECT_EQ(fdk::mpi::default_threads(2), std::max(1, cores / 2));
  EXPECT_EQ(fdk::mpi::default_threads(4 * cores), 1);  // never none
  EXPECT_EQ(fdk::mpi::default_threads(0), cores);      // a count that cannot be: as one rank
}

TEST(HostCores, ARankBoundToFewerCoresTakesThose) {
  if (host_cores() < 2) GTEST_SKIP() << "skipped: one core, nothing to bind to fewer of";
  AffinityGuard restore;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(fdk::mpi::bound_cores(), 1);
  EXPECT_EQ(fdk::mpi::default_threads(1), 1);
  EXPECT_EQ(fdk::mpi::default_threads(8), 1);
}

TEST(HostCores, OneHostIsNamedTheSameEachTimeFromWhatItReads) {
  const auto a = fdk::mpi::host_identity(), b = fdk::mpi::host_identity();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a, b);
  // Not the hash of nothing (FNV-1a's basis): a host whose name and boot
  // were not read would share its identity with every other such host.
  const uint64_t basis = 1469598103934665603ull;
  int32_t nothing[2];
  std::memcpy(nothing, &basis, sizeof basis);
  EXPECT_NE(a, (std::vector<int32_t>{nothing[0], nothing[1]}));
}
