// The asynchronous push path: a push returns before its view is filtered,
// finish waits for every view, a failure after a push returned is reported
// by the next call (naming the view, which may be pushed again), staging is
// bounded, and destroying or cancelling with views in flight is clean.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <mutex>
#include <thread>

#include "fdk/core/cpu_backend.hpp"
#include "fdk/core/error.hpp"
#include "fdk/core/reconstruction.hpp"
#include "small_scan.hpp"

namespace {

using fdk_test::SmallScan;
using namespace std::chrono_literals;

// Whether `view` is in `list`, taking it out: a listed view fails once.
bool take_listed(std::vector<int>& list, int view) {
  const auto at = std::find(list.begin(), list.end(), view);
  if (at == list.end()) return false;
  list.erase(at);
  return true;
}

// The CPU backend, with a gate that holds filter() and a view whose first
// filtering fails.
struct Injection {
  std::mutex m;
  std::condition_variable cv;
  bool open = true;
  int filtering = 0;  // filter() calls inside the gate
  int fail_view = -1;
  std::vector<int> fail_views;  // each fails its first filtering too
  std::chrono::milliseconds even_view_delay{0};  // even views filtered this late
  std::atomic<int> dropped{0};

  void close() {
    std::lock_guard<std::mutex> lock(m);
    open = false;
  }
  void release() {
    std::lock_guard<std::mutex> lock(m);
    open = true;
    cv.notify_all();
  }
  bool wait_filtering(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(m);
    return cv.wait_for(lock, timeout, [&] { return filtering > 0; });
  }
};

// A backend that hands every call to another (the CPU backend); the tests'
// backends below change filter() (and view_dropped) only.
class ForwardingBackend : public fdk::Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<fdk::Backend> inner) : inner_(std::move(inner)) {}
  fdk_backend kind() const override { return inner_->kind(); }
  bool works_on_host_cores() const override { return inner_->works_on_host_cores(); }
  void filter(const fdk::ScanModel& model, int view, const fdk::ViewGeometry& g, const float* pixels, size_t pitch,
              float* filtered, int lane) override {
    inner_->filter(model, view, g, pixels, pitch, filtered, lane);
  }
  void backproject(const fdk::ScanModel& m, int y0, int y1, float* out) override { inner_->backproject(m, y0, y1, out); }
  uint64_t host_work_bytes(const fdk::ScanModel& m, int planes) const override {
    return inner_->host_work_bytes(m, planes);
  }
  void finish(const fdk::ScanModel& m) override { inner_->finish(m); }
  std::unique_ptr<fdk::PreviewSink> make_preview_sink(const fdk::ScanModel& m, const fdk_volume& grid) override {
    return inner_->make_preview_sink(m, grid);
  }

 private:
  std::unique_ptr<fdk::Backend> inner_;
};

class InjectingBackend final : public ForwardingBackend {
 public:
  InjectingBackend(std::unique_ptr<fdk::Backend> inner, Injection& in) : ForwardingBackend(std::move(inner)), in_(in) {}
  void filter(const fdk::ScanModel& model, int view, const fdk::ViewGeometry& g, const float* pixels, size_t pitch,
              float* filtered, int lane) override {
    {
      std::unique_lock<std::mutex> lock(in_.m);
      ++in_.filtering;
      in_.cv.notify_all();
      in_.cv.wait(lock, [&] { return in_.open; });
      --in_.filtering;
      if (view == in_.fail_view) {
        in_.fail_view = -1;
        fdk::fail(FDK_ERROR_DEVICE, "injected device failure");
      }
      if (take_listed(in_.fail_views, view)) fdk::fail(FDK_ERROR_DEVICE, "injected device failure");
    }
    if (view % 2 == 0) std::this_thread::sleep_for(in_.even_view_delay);
    ForwardingBackend::filter(model, view, g, pixels, pitch, filtered, lane);
  }
  void view_dropped(const fdk::ScanModel&, int) override { ++in_.dropped; }

 private:
  Injection& in_;
};

std::unique_ptr<fdk::Reconstruction> make(const SmallScan& scan, Injection& in) {
  return std::make_unique<fdk::Reconstruction>(scan.config, [&](const fdk::ScanModel& m, const fdk::Settings& s) {
    return std::make_unique<InjectingBackend>(fdk::make_cpu_backend(m, s.num_threads), in);
  });
}

std::vector<float> volume_of(fdk::Reconstruction& r) {
  std::vector<float> volume;
  for (int s = 0; s < r.slab_count(); ++s) {
    const fdk_slab_info info = r.slab_info(s);
    std::vector<float> slab(info.byte_size / 4);
    r.read_slab(s, slab.data(), info.byte_size);
    volume.insert(volume.end(), slab.begin(), slab.end());
  }
  return volume;
}

std::vector<float> clean_volume(const SmallScan& scan) {
  Injection in;
  auto r = make(scan, in);
  for (int v = 0; v < scan.views(); ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
  r->finish();
  return volume_of(*r);
}

fdk_status code_of(const std::function<void()>& call, std::string* message = nullptr) {
  try {
    call();
  } catch (const fdk::Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return FDK_OK;
}

TEST(Ingest, PushReturnsBeforeFilteringAndFinishWaits) {
  const SmallScan scan;
  Injection in;
  auto r = make(scan, in);
  in.close();
  // Returns although filter() is held (a synchronous push would not).
  auto pushing = std::async(std::launch::async, [&] { r->push(0, scan.pixels(0), scan.pitch(), nullptr); });
  ASSERT_TRUE(in.wait_filtering(5s));
  if (pushing.wait_for(2s) != std::future_status::ready) {
    in.release();
    pushing.get();
    FAIL() << "the push waited for filtering";
  }
  pushing.get();
  EXPECT_EQ(r->store_info().views_stored, 0);
  EXPECT_EQ(r->progress().views_pushed, 1);
  auto finishing = std::async(std::launch::async, [&] { r->finish(); });
  EXPECT_EQ(finishing.wait_for(100ms), std::future_status::timeout);  // waits for view 0
  in.release();
  finishing.get();
  EXPECT_EQ(r->store_info().views_stored, 1);
}

TEST(Ingest, StagingIsBoundedAPushWaitsForAFreeSlot) {
  const SmallScan scan;
  Injection in;
  auto r = make(scan, in);
  in.close();
  // The filter holds one view; the other slots fill; then a push must wait.
  std::atomic<int> returned{0};
  auto pushing = std::async(std::launch::async, [&] {
    for (int v = 0; v < scan.views(); ++v) {
      r->push(v, scan.pixels(v), scan.pitch(), nullptr);
      ++returned;
    }
  });
  ASSERT_TRUE(in.wait_filtering(5s));
  std::this_thread::sleep_for(200ms);
  const int before = returned.load();
  EXPECT_GE(before, 2);
  EXPECT_LT(before, scan.views());
  in.release();
  pushing.get();
  r->finish();
  EXPECT_EQ(r->store_info().views_stored, scan.views());
}

TEST(Ingest, ABackgroundFailureIsReportedOnceNamingTheViewWhichMayBePushedAgain) {
  const SmallScan scan;
  const std::vector<float> reference = clean_volume(scan);
  Injection in;
  in.fail_view = 3;
  auto r = make(scan, in);
  // Filtering held until every push has returned (five views fit the
  // staging), so the failure can only surface at finish.
  in.close();
  for (int v = 0; v < 5; ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
  in.release();
  std::string message;
  EXPECT_EQ(code_of([&] { r->finish(); }, &message), FDK_ERROR_DEVICE);
  EXPECT_NE(message.find("projection 3 was not stored"), std::string::npos) << message;
  EXPECT_NE(message.find("injected device failure"), std::string::npos) << message;
  EXPECT_EQ(r->store_info().views_stored, 4);
  EXPECT_EQ(r->progress().views_pushed, 4);
  // Reported once; the view is free to come again.
  r->push(3, scan.pixels(3), scan.pitch(), nullptr);
  EXPECT_EQ(code_of([&] { r->push(3, scan.pixels(3), scan.pitch(), nullptr); }), FDK_ERROR_DUPLICATE);
  for (int v = 5; v < scan.views(); ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
  r->finish();
  const std::vector<float> volume = volume_of(*r);
  ASSERT_EQ(volume.size(), reference.size());
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), 4 * volume.size()), 0);
}

TEST(Ingest, AFailureSurfacesAtTheNextPushWhichThenDidNothing) {
  const SmallScan scan;
  Injection in;
  in.fail_view = 0;
  auto r = make(scan, in);
  r->push(0, scan.pixels(0), scan.pitch(), nullptr);
  // Wait until view 0 has failed in the background.
  for (int i = 0; i < 500 && r->progress().views_pushed != 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(r->progress().views_pushed, 0);
  std::string message;
  EXPECT_EQ(code_of([&] { r->push(1, scan.pixels(1), scan.pitch(), nullptr); }, &message), FDK_ERROR_DEVICE);
  EXPECT_NE(message.find("projection 0"), std::string::npos) << message;
  r->push(1, scan.pixels(1), scan.pitch(), nullptr);  // now taken
  r->push(0, scan.pixels(0), scan.pitch(), nullptr);
  r->finish();
  EXPECT_EQ(r->store_info().views_stored, 2);
}

// Two views lost in the background: both are reported (by one call, each
// named), both are FAILED with their status, and a finish called again
// reconstructs from the others (only the first was reported before: the
// second view vanished from the volume while every call said OK).
TEST(Ingest, EveryBackgroundFailureIsReportedNotOnlyTheFirst) {
  const SmallScan scan;
  std::vector<float> reference;
  {
    Injection clean;
    auto r = make(scan, clean);
    for (int v = 0; v < scan.views(); ++v)
      if (v != 3 && v != 4) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
    r->finish();
    reference = volume_of(*r);
  }
  Injection in;
  in.fail_views = {3, 4};
  auto r = make(scan, in);
  in.close();  // both fail after their pushes returned
  for (int v = 0; v < 5; ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
  in.release();
  std::string message;
  EXPECT_EQ(code_of([&] { r->finish(); }, &message), FDK_ERROR_DEVICE);
  EXPECT_NE(message.find("projections 3 and 4 were not stored"), std::string::npos) << message;
  for (int v : {3, 4}) {
    fdk_status lost = FDK_OK;
    EXPECT_EQ(r->view_state(v, &lost), FDK_VIEW_FAILED) << v;
    EXPECT_EQ(lost, FDK_ERROR_DEVICE) << v;
  }
  fdk_status lost = FDK_ERROR_INTERNAL;
  EXPECT_EQ(r->view_state(2, &lost), FDK_VIEW_STORED);
  EXPECT_EQ(lost, FDK_OK);
  EXPECT_EQ(r->view_state(5, nullptr), FDK_VIEW_ABSENT);
  for (int v = 5; v < scan.views(); ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
  r->finish();  // reported already: the volume leaves them out
  EXPECT_EQ(r->view_state(4, nullptr), FDK_VIEW_FAILED);
  const std::vector<float> volume = volume_of(*r);
  ASSERT_EQ(volume.size(), reference.size());
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), 4 * volume.size()), 0);
}

// A finish refused (nothing pushed yet) changes nothing: a view that fails
// later is still reported by the next finish (the refused finish had sealed
// the pipeline, which then dropped the failure and said OK).
TEST(Ingest, AFinishRefusedBeforeAnyPushSealsNothing) {
  const SmallScan scan;
  Injection in;
  in.fail_view = 2;
  auto r = make(scan, in);
  EXPECT_EQ(code_of([&] { r->finish(); }), FDK_ERROR_INVALID_STATE);
  in.close();
  for (int v = 0; v < 5; ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
  in.release();
  std::string message;
  EXPECT_EQ(code_of([&] { r->finish(); }, &message), FDK_ERROR_DEVICE);
  EXPECT_NE(message.find("projection 2 was not stored"), std::string::npos) << message;
  r->push(2, scan.pixels(2), scan.pitch(), nullptr);
  r->finish();
  EXPECT_EQ(r->store_info().views_stored, 5);
}

// A backend that, like the CUDA backend's uploads to several GPUs, still
// reads a view's staging after filter() returned, several views at once,
// until wait_uploaded().
struct LateReads {
  std::mutex m;
  std::vector<std::vector<float>> copies;  // what each view's late read saw
  int in_flight = 0, most_in_flight = 0, waited = 0;
  std::chrono::milliseconds read_filtered_delay{0};  // per view the store reads back
  bool keeps_volume = false;                          // like a resident GPU volume
};

class LateReadingBackend final : public fdk::Backend {
 public:
  LateReadingBackend(const fdk::ScanModel& m, LateReads& reads)
      : floats_(static_cast<size_t>(m.input_detector.size[0]) * static_cast<size_t>(m.input_detector.size[1])),
        plane_(m.plane_floats()),
        reads_(reads),
        readers_(m.views.size()) {
    reads_.copies.assign(m.views.size(), {});
  }
  ~LateReadingBackend() override {
    for (auto& t : readers_)
      if (t.joinable()) t.join();
  }
  fdk_backend kind() const override { return FDK_BACKEND_CPU; }
  void filter(const fdk::ScanModel&, int view, const fdk::ViewGeometry&, const float* pixels, size_t,
              float*, int) override {
    {
      std::lock_guard<std::mutex> lock(reads_.m);
      reads_.most_in_flight = std::max(reads_.most_in_flight, ++reads_.in_flight);
    }
    readers_[static_cast<size_t>(view)] = std::thread([this, view, pixels] {
      std::this_thread::sleep_for(3ms);
      std::lock_guard<std::mutex> lock(reads_.m);
      reads_.copies[static_cast<size_t>(view)].assign(pixels, pixels + floats_);
    });
  }
  int uploads_in_flight() const override { return 3; }
  void wait_uploaded(int view) noexcept override {
    readers_[static_cast<size_t>(view)].join();
    std::lock_guard<std::mutex> lock(reads_.m);
    --reads_.in_flight;
    ++reads_.waited;
  }
  bool keeps_filtered() const override { return true; }
  bool keeps_volume() const override { return reads_.keeps_volume; }
  void read_filtered(const fdk::ScanModel&, int view, float* out) override {
    std::this_thread::sleep_for(reads_.read_filtered_delay);
    std::lock_guard<std::mutex> lock(reads_.m);
    const auto& c = reads_.copies[static_cast<size_t>(view)];
    std::copy(c.begin(), c.end(), out);
  }
  void backproject(const fdk::ScanModel&, int y0, int y1, float* out) override {
    std::fill(out, out + plane_ * static_cast<size_t>(y1 - y0), 0.0f);
  }
  uint64_t host_work_bytes(const fdk::ScanModel&, int) const override { return 0; }

 private:
  size_t floats_, plane_;
  LateReads& reads_;
  std::vector<std::thread> readers_;
};

TEST(Ingest, AStagingSlotIsReusedOnlyOnceTheBackendStoppedReadingIt) {
  const SmallScan scan;
  LateReads reads;
  {
    fdk::Reconstruction r(scan.config, [&](const fdk::ScanModel& m, const fdk::Settings&) {
      return std::make_unique<LateReadingBackend>(m, reads);
    });
    for (int v = 0; v < scan.views(); ++v) r.push(v, scan.pixels(v), scan.pitch(), nullptr);
    r.finish();
    // Every late read is over once finish returns.
    std::lock_guard<std::mutex> lock(reads.m);
    EXPECT_EQ(reads.waited, scan.views());
    EXPECT_EQ(reads.in_flight, 0);
  }
  // Reads overlapped, and each saw its own view, not a later push's.
  EXPECT_GE(reads.most_in_flight, 2);
  EXPECT_LE(reads.most_in_flight, 4);  // uploads_in_flight() + the view being issued
  for (int v = 0; v < scan.views(); ++v) {
    const auto& c = reads.copies[static_cast<size_t>(v)];
    ASSERT_EQ(c.size(), scan.projections[static_cast<size_t>(v)].size()) << "view " << v;
    EXPECT_TRUE(std::equal(c.begin(), c.end(), scan.pixels(v))) << "view " << v << " was overwritten";
  }
}

// A backend that counts, at filter(), nonzero pixels outside the rows the
// view was pushed with: staging must hold zeros there, whatever an earlier
// view left in the slot.
class RowWindowCheck final : public ForwardingBackend {
 public:
  RowWindowCheck(std::unique_ptr<fdk::Backend> inner, std::atomic<int>& stale, std::atomic<int>& filtered)
      : ForwardingBackend(std::move(inner)), stale_(stale), filtered_(filtered) {}
  void filter(const fdk::ScanModel& model, int view, const fdk::ViewGeometry& g, const float* pixels, size_t pitch,
              float* filtered, int lane) override {
    const auto rows = model.rows_of(view);
    for (int j = 0; j < model.input_detector.size[1]; ++j) {
      if (j >= rows[0] && j < rows[1]) continue;
      const float* row = reinterpret_cast<const float*>(reinterpret_cast<const char*>(pixels) + pitch * static_cast<size_t>(j));
      for (int i = 0; i < model.input_detector.size[0]; ++i) stale_ += row[i] != 0.0f ? 1 : 0;
    }
    ++filtered_;
    ForwardingBackend::filter(model, view, g, pixels, pitch, filtered, lane);
  }

 private:
  std::atomic<int>& stale_;
  std::atomic<int>& filtered_;
};

// An MPI rank pushes bands; a slot is zeroed only where an earlier push
// wrote outside the new band (its rows are the same view after view).
// Bands that grow, shrink, move and return to the whole view, all of ones,
// through the few slots of a small scan: no row outside a band is nonzero.
TEST(Ingest, ABandSeesZerosOutsideItsRowsWhateverTheSlotHeldBefore) {
  const SmallScan scan;
  const int nu = scan.config.detector.size[0], nv = scan.config.detector.size[1];
  const std::vector<float> ones(static_cast<size_t>(nu) * static_cast<size_t>(nv), 1.0f);
  const std::array<int, 2> bands[] = {{0, nv}, {nv / 4, nv / 2}, {0, nv / 3}, {nv / 2, nv}, {nv / 4, nv / 2},
                                      {1, nv - 1}, {nv - 3, nv}, {0, 2}, {0, nv}, {nv / 3, 2 * nv / 3}};
  std::atomic<int> stale{0}, filtered{0};
  {
    fdk::Reconstruction r(scan.config, [&](const fdk::ScanModel& m, const fdk::Settings& s) {
      return std::make_unique<RowWindowCheck>(fdk::make_cpu_backend(m, s.num_threads), stale, filtered);
    });
    for (int v = 0; v < scan.views(); ++v) {
      const auto band = bands[static_cast<size_t>(v) % (sizeof bands / sizeof bands[0])];
      r.push_rows(v, band[0], band[1], ones.data() + static_cast<size_t>(band[0]) * static_cast<size_t>(nu),
                  sizeof(float) * static_cast<size_t>(nu), nullptr);
    }
    r.settle();
  }
  EXPECT_EQ(filtered.load(), scan.views());
  EXPECT_EQ(stale.load(), 0) << "pixels left from an earlier view outside a band";
}

// Reads come back to back; compression between them took the bus and the
// cores from the next read (the store of a kept volume fills after finish).
TEST(Ingest, TheStoreOfAKeptVolumeWaitsWhileSlabsAreReadBackToBack) {
  const SmallScan scan(32, 48);
  LateReads reads;
  reads.read_filtered_delay = 5ms;  // each view takes the store a while
  reads.keeps_volume = true;        // every read goes to the backend (no cache)
  fdk::Reconstruction r(scan.config, [&](const fdk::ScanModel& m, const fdk::Settings&) {
    return std::make_unique<LateReadingBackend>(m, reads);
  });
  for (int v = 0; v < scan.views(); ++v) r.push(v, scan.pixels(v), scan.pitch(), nullptr);
  r.finish();
  const fdk_slab_info info = r.slab_info(0);
  std::vector<float> slab(info.byte_size / 4);
  const auto read_for = [&](std::chrono::milliseconds span) {
    const auto end = std::chrono::steady_clock::now() + span;
    while (std::chrono::steady_clock::now() < end) r.read_slab(0, slab.data(), info.byte_size);
  };
  read_for(30ms);  // views begun before the first read are done by now
  const int before = r.store_info().views_stored;
  read_for(150ms);
  EXPECT_EQ(r.store_info().views_stored, before) << "views were compressed between back-to-back reads";
  EXPECT_LT(before, scan.views());
  // Once the reads pause, the store fills.
  for (int i = 0; i < 500 && r.store_info().views_stored < scan.views(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(r.store_info().views_stored, scan.views());
}

TEST(Ingest, DestroyAndCancelWithViewsInFlightAreClean) {
  const SmallScan scan;
  {
    Injection in;
    auto r = make(scan, in);
    in.close();
    for (int v = 0; v < 3; ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
    ASSERT_TRUE(in.wait_filtering(5s));
    std::thread opener([&] {
      std::this_thread::sleep_for(50ms);
      in.release();
    });
    r.reset();  // waits for the view being filtered, drops the queued ones
    opener.join();
  }
  {
    Injection in;
    auto r = make(scan, in);
    in.close();
    for (int v = 0; v < 3; ++v) r->push(v, scan.pixels(v), scan.pitch(), nullptr);
    ASSERT_TRUE(in.wait_filtering(5s));
    r->cancel();
    in.release();
    EXPECT_EQ(code_of([&] { r->finish(); }), FDK_ERROR_CANCELLED);
    EXPECT_EQ(r->progress().views_pushed, 3);  // views in flight are not taken back
    EXPECT_EQ(code_of([&] { r->push(5, scan.pixels(5), scan.pitch(), nullptr); }), FDK_ERROR_CANCELLED);
  }
}


// Every view pushed; the store's report after finish.
// The even views are filtered late: with two filter threads the odd ones
// overtake them into the store.
fdk_store_info store_after_scan(const SmallScan& scan, const fdk_config& config) {
  Injection in;
  in.even_view_delay = 15ms;
  fdk::Reconstruction r(config, [&](const fdk::ScanModel& m, const fdk::Settings& s) {
    return std::make_unique<InjectingBackend>(fdk::make_cpu_backend(m, s.num_threads), in);
  });
  for (int v = 0; v < scan.views(); ++v) r.push(v, scan.pixels(v), scan.pitch(), nullptr);
  r.finish();
  return r.store_info();
}

// Near the budget a push waits for its view, which then holds no
// reservation. It used to be stored as soon as it was filtered, measured
// against the worst case the reserved views still in flight might take, and
// could fail with BUDGET although those views, once stored (at float16 by
// then), left it room: the last view of a scan, under load (CI's
// AddressSanitizer pass). It now waits for them. The views that overtake
// here make that order certain rather than rare.
TEST(Ingest, AViewWithoutAReservationIsStoredAfterTheReservedOnes) {
  SmallScan scan(32, 32, 48);
  scan.config.slab_thickness = scan.config.volume.size[1];
  scan.config.num_threads = 2;
  const fdk_store_info plain = store_after_scan(scan, scan.config);
  uint64_t minimal = 0;
  for (uint64_t budget = 4096; budget < (64u << 20) && minimal == 0; budget += 4096) {
    fdk_config c = scan.config;
    c.host_memory_budget = budget;
    const fdk_status s = code_of([&] {
      fdk::Reconstruction probe(c, [&](const fdk::ScanModel& m, const fdk::Settings&) {
        return fdk::make_cpu_backend(m, 2);
      });
    });
    if (s == FDK_OK) minimal = budget;
  }
  ASSERT_GT(minimal, 0u);
  fdk_config coded = scan.config;
  coded.host_memory_budget = minimal + plain.stored_bytes * 99 / 100;
  const fdk_store_info full = store_after_scan(scan, coded);
  // Budgets from 62 to 86 % of the coded float32 scan: where the room left
  // at the end lies between what the last views need and the worst case
  // of one of them depends on the sizes, so take many.
  for (int percent = 62; percent <= 86; percent += 1) {
    fdk_config tight = scan.config;
    tight.host_memory_budget = minimal + full.stored_bytes * static_cast<uint64_t>(percent) / 100;
    fdk_store_info reduced{};
    std::string message;
    const fdk_status s = code_of([&] { reduced = store_after_scan(scan, tight); }, &message);
    ASSERT_EQ(s, FDK_OK) << percent << " %: " << message;
    EXPECT_EQ(reduced.views_stored, scan.views());
  }
}

// A backend whose filter() takes two views at once (as a streamed volume's
// GPUs do): the first calls wait, a while, for the other lane to be inside too.
struct LaneLog {
  std::mutex m;
  std::condition_variable cv;
  int inside = 0, most_inside = 0;
  std::vector<int> calls_on_lane = std::vector<int>(2, 0);
  int bad_lane = 0;
  std::vector<int> fail_views;  // each fails its first filtering
};

class TwoLaneBackend final : public ForwardingBackend {
 public:
  TwoLaneBackend(std::unique_ptr<fdk::Backend> inner, LaneLog& log) : ForwardingBackend(std::move(inner)), log_(log) {}
  int filter_lanes() const override { return 2; }
  void filter(const fdk::ScanModel& model, int view, const fdk::ViewGeometry& g, const float* pixels, size_t pitch,
              float* filtered, int lane) override {
    {
      std::unique_lock<std::mutex> lock(log_.m);
      if (lane < 0 || lane > 1) {
        ++log_.bad_lane;
      } else {
        ++log_.calls_on_lane[static_cast<size_t>(lane)];
      }
      log_.most_inside = std::max(log_.most_inside, ++log_.inside);
      log_.cv.notify_all();
      // The first calls only: on one lane each waits in vain.
      if (log_.calls_on_lane[0] + log_.calls_on_lane[1] <= 3)
        log_.cv.wait_for(lock, 300ms, [&] { return log_.most_inside >= 2; });
      if (take_listed(log_.fail_views, view)) {
        --log_.inside;
        fdk::fail(FDK_ERROR_DEVICE, "injected device failure");
      }
    }
    // The CPU backend's filter is not meant for two threads at once.
    {
      std::lock_guard<std::mutex> lock(inner_mutex_);
      ForwardingBackend::filter(model, view, g, pixels, pitch, filtered, 0);
    }
    std::lock_guard<std::mutex> lock(log_.m);
    --log_.inside;
  }

 private:
  LaneLog& log_;
  std::mutex inner_mutex_;
};

// The pipeline filters on every lane the backend offers, and the result is
// the one lane's; with a live preview on, it keeps to one lane.
TEST(Ingest, ABackendWithTwoFilterLanesFiltersTwoViewsAtOnce) {
  const SmallScan scan;
  const std::vector<float> expected = clean_volume(scan);
  for (const int preview : {0, 1}) {
    SCOPED_TRACE(preview ? "with a preview" : "no preview");
    fdk_config config = scan.config;
    config.preview = preview;
    LaneLog log;
    fdk::Reconstruction r(config, [&](const fdk::ScanModel& m, const fdk::Settings& s) {
      return std::make_unique<TwoLaneBackend>(fdk::make_cpu_backend(m, s.num_threads), log);
    });
    for (int v = 0; v < scan.views(); ++v) r.push(v, scan.pixels(v), scan.pitch(), nullptr);
    r.finish();
    EXPECT_EQ(volume_of(r), expected);
    std::lock_guard<std::mutex> lock(log.m);
    EXPECT_EQ(log.bad_lane, 0);
    EXPECT_EQ(log.calls_on_lane[0] + log.calls_on_lane[1], scan.views());
    if (preview) {
      EXPECT_EQ(log.most_inside, 1);
      EXPECT_EQ(log.calls_on_lane[1], 0);
    } else {
      EXPECT_EQ(log.most_inside, 2);
      EXPECT_GT(log.calls_on_lane[1], 0);
    }
  }
}

// Failures on either lane are each reported, naming the view, and the
// views pushed again make the volume of a clean scan.
TEST(Ingest, EveryFailureOnEitherLaneIsReportedAndTheViewsMayComeAgain) {
  const SmallScan scan;
  const std::vector<float> expected = clean_volume(scan);
  LaneLog log;
  log.fail_views = {2, 3, 7};
  fdk::Reconstruction r(scan.config, [&](const fdk::ScanModel& m, const fdk::Settings& s) {
    return std::make_unique<TwoLaneBackend>(fdk::make_cpu_backend(m, s.num_threads), log);
  });
  std::string message;
  // A push that reports failures (of other views) does nothing else: again.
  auto push = [&](int v) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      if (code_of([&] { r.push(v, scan.pixels(v), scan.pitch(), nullptr); }, &message) == FDK_OK) return;
      EXPECT_NE(message.find("injected device failure"), std::string::npos) << message;
    }
    ADD_FAILURE() << "view " << v << " was never taken";
  };
  for (int v = 0; v < scan.views(); ++v) push(v);
  // Until a finish takes: the views failed so far come again (a finish
  // that reports failures seals nothing).
  std::vector<int> failed;
  for (int round = 0; round < 3; ++round) {
    for (int v = 0; v < scan.views(); ++v) {
      fdk_status why = FDK_OK;
      if (r.view_state(v, &why) != FDK_VIEW_FAILED) continue;
      EXPECT_EQ(why, FDK_ERROR_DEVICE);
      failed.push_back(v);
      push(v);
    }
    if (code_of([&] { r.finish(); }, &message) == FDK_OK) break;
    EXPECT_NE(message.find("injected device failure"), std::string::npos) << message;
  }
  std::sort(failed.begin(), failed.end());
  EXPECT_EQ(failed, (std::vector<int>{2, 3, 7}));
  EXPECT_EQ(volume_of(r), expected);
  std::lock_guard<std::mutex> lock(log.m);
  EXPECT_EQ(log.most_inside, 2);
}

}  // namespace
