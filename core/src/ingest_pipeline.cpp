#include "ingest_pipeline.hpp"

#include "fdk/core/pixel_check.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include "fdk/core/error.hpp"
#include "fdk/core/preview.hpp"
#include "fdk/core/thread_pool.hpp"
#include "thread_priority.hpp"

namespace fdk {
namespace {

using Clock = std::chrono::steady_clock;
// How long after a read background compression keeps pausing: longer than
// the gap between back-to-back reads, short beside a caller that writes
// each slab to disk before reading the next.
constexpr auto kReadQuiet = std::chrono::milliseconds(50);
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The status and message of a failure.
std::pair<fdk_status, std::string> status_of(std::exception_ptr error) {
  fdk_status code = FDK_ERROR_INTERNAL;
  std::string what = "unknown error";
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    code = e.code();
    what = e.what();
  } catch (const std::bad_alloc&) {
    code = FDK_ERROR_OUT_OF_MEMORY;
    what = "out of memory";
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  return {code, what};
}

// The failure of one view as an fdk::Error that names it.
std::exception_ptr view_error(int view, std::exception_ptr error) {
  auto [code, what] = status_of(error);
  return std::make_exception_ptr(Error(code, "projection " + std::to_string(view) + " was not stored: " + what));
}

// Failures listed in one message, at most this many with their own text.
constexpr size_t kFailuresSpelledOut = 8;

size_t raw_floats(const ScanModel& m) {
  return static_cast<size_t>(m.input_detector.size[0]) * static_cast<size_t>(m.input_detector.size[1]);
}
size_t filtered_floats(const ScanModel& m) {
  return static_cast<size_t>(m.detector.size[0]) * static_cast<size_t>(m.detector.size[1]);
}

// Store workers: compression of one view runs on one thread, so views in
// flight compress side by side. Where the budget makes the store code every
// view, coding sets the scan's pace: (d)'s 64 MiB views take 0.17 CPU-s
// each, and 12 workers held its push to 70 views/s on a 32-core host with
// two H100s (34.4 s), where 32 pushed 134 views/s (17.9 s) with the same
// work (docs/PERFORMANCE.md). Then the host's cores were all busy (the
// workers, the push's copies, the filter thread): more workers than cores
// add threads, not views.
constexpr int kMaxStoreWorkers = 32;

// Tasks the push's copy into staging is split into, at most.
constexpr int kMaxCopyTasks = 32;

uint64_t slot_bytes(const ScanModel& model) { return 4ull * (raw_floats(model) + filtered_floats(model)); }

}  // namespace

IngestPipeline::Options IngestPipeline::sized_for(const ScanModel& model, int num_threads, uint64_t host_budget) {
  Options o;
  o.store_workers = std::max(1, std::min(num_threads, kMaxStoreWorkers));
  const uint64_t bytes = slot_bytes(model);
  o.slots = o.store_workers + 3;
  if (bytes * static_cast<uint64_t>(o.slots) > host_budget / 8)
    o.slots = static_cast<int>(std::max<uint64_t>(2, host_budget / 8 / bytes));
  return o;
}

uint64_t IngestPipeline::staging_bytes(const ScanModel& model, const Options& options, bool keeps_filtered) {
  const uint64_t slots = static_cast<uint64_t>(std::max(1, options.slots));
  const uint64_t workers = static_cast<uint64_t>(std::max(1, options.store_workers));
  if (!keeps_filtered) return slots * slot_bytes(model);
  return slots * 4ull * raw_floats(model) + workers * 4ull * filtered_floats(model);
}

IngestPipeline::IngestPipeline(ScanModel& model, ProjectionStore& store, Backend& backend, Options options,
                               Preview* preview)
    : model_(model),
      store_(store),
      backend_(backend),
      preview_(preview),
      options_(options),
      view_bound_(store.worst_case_view_bytes()),
      keeps_filtered_(backend.keeps_filtered()),
      // The preview takes the views one at a time, on the thread that
      // filtered them.
      lanes_(preview ? 1 : std::max(1, backend.filter_lanes())) {
  const int workers = std::max(1, options_.store_workers);
  slots_.resize(static_cast<size_t>(std::max(1, options_.slots)));
  for (size_t s = 0; s < slots_.size(); ++s) {
    slots_[s].raw = backend_.make_staging(raw_floats(model_));
    free_.push_back(static_cast<int>(s));
    if (!keeps_filtered_) {
      filtered_.push_back(backend_.make_staging(filtered_floats(model_)));
      free_filtered_.push_back(static_cast<int>(s));
    }
  }
  if (keeps_filtered_)
    for (int w = 0; w < workers; ++w) worker_buffers_.push_back(backend_.make_staging(filtered_floats(model_)));
  state_.assign(model_.views.size(), FDK_VIEW_ABSENT);
  failure_.assign(model_.views.size(), FDK_OK);
  try {
    for (int lane = 0; lane < lanes_; ++lane) threads_.emplace_back([this, lane] { filter_loop(lane); });
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { store_loop(w); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_all();
    for (auto& t : threads_) t.join();
    fail(FDK_ERROR_OUT_OF_MEMORY, "cannot start the ingest threads");
  }
}

IngestPipeline::~IngestPipeline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_all();
  for (auto& t : threads_) t.join();
}

void IngestPipeline::wake() {
  { std::lock_guard<std::mutex> lock(mutex_); }
  changed_.notify_all();
}

void IngestPipeline::wake_all() {
  changed_.notify_all();
  filter_wake_.notify_all();
  store_wake_.notify_all();
}

void IngestPipeline::report_failures() {
  if (unreported_.empty()) return;
  std::vector<Failure> failures;
  failures.swap(unreported_);  // reported once, whatever the message costs
  if (failures.size() == 1)
    fail(failures[0].code,
         "projection " + std::to_string(failures[0].view) + " was not stored: " + failures[0].message);
  std::string views;
  for (size_t i = 0; i < failures.size(); ++i)
    views += (i == 0 ? "" : i + 1 == failures.size() ? " and " : ", ") + std::to_string(failures[i].view);
  std::string message = "projections " + views + " were not stored:";
  for (size_t i = 0; i < failures.size() && i < kFailuresSpelledOut; ++i)
    message += (i ? "; " : " ") + std::to_string(failures[i].view) + ": " + failures[i].message;
  if (failures.size() > kFailuresSpelledOut) message += "; ...";
  fail(failures[0].code, message);
}

fdk_view_state IngestPipeline::view_state(int view, fdk_status* failure) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t v = static_cast<size_t>(view);
  if (failure) *failure = static_cast<fdk_status>(failure_[v]);
  return static_cast<fdk_view_state>(state_[v]);
}

void IngestPipeline::push(int view, const ViewGeometry& geometry, const IndexMatrix& matrix, const float* pixels,
                          size_t pitch_bytes, ThreadPool& pool, int row_begin, int row_end) {
  int index;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    report_failures();
    const uint8_t state = state_[static_cast<size_t>(view)];
    if (state == FDK_VIEW_PENDING || state == FDK_VIEW_STORED)
      fail(FDK_ERROR_DUPLICATE, "projection " + std::to_string(view) + " was already pushed");
    changed_.wait(lock, [&] { return !free_.empty() || (model_.cancelled && model_.cancelled->load()); });
    throw_if_cancelled(model_);
    index = free_.back();
    free_.pop_back();
  }
  Slot& slot = slots_[static_cast<size_t>(index)];

  // Copy into staging and find the first non-finite pixel, rows in parallel.
  const int nu = model_.input_detector.size[0], nv = row_end - row_begin;
  // At least 128 KiB per task, so that a small view is copied by a few
  // threads without waking the whole pool, and at most kMaxCopyTasks tasks:
  // waking more threads costs more than they add once the copy is bound by
  // the memory bus (measured on a 64-core host: a 4 MiB view in 0.35 ms with
  // 64 tasks, 0.15 ms with 32).
  const size_t bytes = sizeof(float) * static_cast<size_t>(nu) * static_cast<size_t>(nv);
  const int chunks =
      static_cast<int>(std::clamp<size_t>(bytes >> 17, 1, std::min({nv, pool.size(), kMaxCopyTasks})));
  std::vector<int64_t> first_bad(static_cast<size_t>(chunks), -1);
  float* raw = slot.raw->data();
  // Rows this process was not given: zero, so that no backend filters
  // what an earlier view left in the slot. Only those an earlier push
  // wrote: an MPI rank's bands are the same rows view after view, and
  // zeroing the rest of a 4096-row slot every time (one thread) took as
  // long as copying the band (docs/DISTRIBUTED.md).
  const size_t row_floats = static_cast<size_t>(nu);
  const int height = model_.input_detector.size[1];
  auto zero_rows = [&](int begin, int end) {
    begin = std::max(begin, 0);
    end = std::min(end, height);
    if (begin < end)
      std::memset(raw + row_floats * static_cast<size_t>(begin), 0,
                  sizeof(float) * row_floats * static_cast<size_t>(end - begin));
  };
  zero_rows(slot.dirty_begin, std::min(slot.dirty_end, row_begin));
  zero_rows(std::max(slot.dirty_begin, row_end), slot.dirty_end);
  slot.dirty_begin = row_begin;
  slot.dirty_end = row_end;
  raw += row_floats * static_cast<size_t>(row_begin);
  pool.parallel_for(chunks, [&](int c, int) {
    for (int j = nv * c / chunks; j < nv * (c + 1) / chunks; ++j) {
      float* dst = raw + static_cast<size_t>(j) * nu;
      std::memcpy(dst, reinterpret_cast<const char*>(pixels) + static_cast<size_t>(j) * pitch_bytes,
                  sizeof(float) * static_cast<size_t>(nu));
      if (!all_acceptable(dst, nu)) {
        for (int i = 0; i < nu; ++i)
          if (!acceptable(dst[i])) {
            first_bad[static_cast<size_t>(c)] = static_cast<int64_t>(j) * nu + i;
            return;
          }
      }
    }
  });
  for (int64_t bad : first_bad)
    if (bad >= 0) {
      const float value = raw[bad];
      {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(index);
        changed_.notify_all();
      }
      fail_bad_pixel(view, value, static_cast<int>(bad % nu), static_cast<int>(bad / nu) + row_begin);
    }

  model_.views[static_cast<size_t>(view)] = geometry;
  model_.matrices[static_cast<size_t>(view)] = matrix;
  model_.row_windows[static_cast<size_t>(view)] = {row_begin, row_end};
  auto job = std::make_shared<Job>();
  job->view = view;
  job->slot = index;
  std::unique_lock<std::mutex> lock(mutex_);
  // In the background only while the worst case of every view in flight
  // still fits; otherwise this push waits and learns its own outcome.
  job->reserved = store_.stored_bytes() + reserved_bytes_ + view_bound_ <= options_.store_limit;
  job->waited_on = !job->reserved;
  if (job->reserved) reserved_bytes_ += view_bound_;
  state_[static_cast<size_t>(view)] = FDK_VIEW_PENDING;
  failure_[static_cast<size_t>(view)] = FDK_OK;
  ++filtering_;
  ++in_flight_;
  accepted_.fetch_add(1);
  to_filter_.push_back(job);
  filter_wake_.notify_one();
  if (job->waited_on) {
    ++waiting_pushes_;
    store_wake_.notify_all();  // the store runs now (store_may_run)
  }
  if (!job->waited_on) return;
  changed_.wait(lock, [&] { return job->done; });
  --waiting_pushes_;
  if (job->error) {
    // Handed over, not shared: the job may be released last by a worker,
    // and the exception must not be freed there while this thread's caller
    // still reads its message (ordered only by the C++ runtime's reference
    // count, which ThreadSanitizer does not see).
    const std::exception_ptr error = std::move(job->error);
    std::rethrow_exception(error);
  }
}

void IngestPipeline::settle_locked(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [&] { return filtering_ == 0 && (keeps_filtered_ || in_flight_ == 0); });
  report_failures();
}

void IngestPipeline::settle() {
  std::unique_lock<std::mutex> lock(mutex_);
  settle_locked(lock);
}

void IngestPipeline::seal() {
  std::unique_lock<std::mutex> lock(mutex_);
  settle_locked(lock);
  if (accepted_.load() == 0) fail(FDK_ERROR_INVALID_STATE, "fdk_finish before any projection was pushed");
  sealed_ = true;
  store_wake_.notify_all();
}

IngestPipeline::ReadGuard::ReadGuard(IngestPipeline& p) : p_(p) {
  std::lock_guard<std::mutex> lock(p_.mutex_);
  ++p_.readers_;
}

IngestPipeline::ReadGuard::~ReadGuard() {
  std::lock_guard<std::mutex> lock(p_.mutex_);
  --p_.readers_;
  p_.last_read_end_ = Clock::now();
  p_.store_wake_.notify_all();
}

double IngestPipeline::filter_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return filter_seconds_;
}

double IngestPipeline::store_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return store_seconds_;
}

void IngestPipeline::filter_loop(int lane) {
  // Views filtered whose staging a backend may still be uploading from
  // (uploads_in_flight()): their slots come back once the upload is done,
  // oldest first, and at once when there is nothing else to filter (a push
  // may be waiting for a slot).
  const size_t lag = keeps_filtered_ ? static_cast<size_t>(std::max(0, backend_.uploads_in_flight())) : 0;
  std::deque<JobPtr> uploading;
  for (;;) {
    JobPtr job;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // A view is taken with a filtered buffer to write (where the backend
      // does not keep the views), so a lane never waits holding one.
      const auto ready = [&] { return !to_filter_.empty() && (keeps_filtered_ || !free_filtered_.empty()); };
      if (uploading.empty()) filter_wake_.wait(lock, [&] { return stop_ || ready(); });
      stopping = stop_;
      if (!stop_ && ready()) {
        job = to_filter_.front();
        to_filter_.pop_front();
        if (!keeps_filtered_) {
          job->filtered = free_filtered_.back();
          free_filtered_.pop_back();
        }
      }
    }
    if (!job) {
      for (; !uploading.empty(); uploading.pop_front()) upload_done(uploading.front());
      if (stopping) return;
      continue;
    }
    const Slot& slot = slots_[static_cast<size_t>(job->slot)];
    const auto start = Clock::now();
    try {
      throw_if_cancelled(model_);
      const int v = job->view;
      float* filtered = keeps_filtered_ ? nullptr : filtered_[static_cast<size_t>(job->filtered)]->data();
      backend_.filter(model_, v, model_.views[static_cast<size_t>(v)], slot.raw->data(),
                      sizeof(float) * static_cast<size_t>(model_.input_detector.size[0]), filtered, lane);
      job->filtered_ok = true;
      backend_.view_filtered(model_, v);
      if (preview_) preview_->add(model_, v, filtered);
    } catch (...) {
      job->error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      filter_seconds_ += seconds_since(start);
      if (job->filtered_ok) model_.arrived[static_cast<size_t>(job->view)] = 1;
    }
    if (keeps_filtered_ && job->filtered_ok) {
      uploading.push_back(job);
      for (; uploading.size() > lag; uploading.pop_front()) upload_done(uploading.front());
    } else {
      filtering_done(job);
    }
  }
}

void IngestPipeline::upload_done(const JobPtr& job) {
  backend_.wait_uploaded(job->view);
  filtering_done(job);
}

void IngestPipeline::filtering_done(const JobPtr& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  --filtering_;
  if (job->error) {
    complete(*job);
    return;
  }
  // The pushed pixels are no longer read: the backend holds the view now
  // (it is in the volume), or its filtered buffer does until it is stored.
  release_slot(*job);
  if (keeps_filtered_) state_[static_cast<size_t>(job->view)] = FDK_VIEW_STORED;
  to_store_.push_back(job);
  changed_.notify_all();  // a push may wait for a slot, seal for filtering_
  store_wake_.notify_one();
}

void IngestPipeline::store_loop(int worker) {
  float* buffer = keeps_filtered_ ? worker_buffers_[static_cast<size_t>(worker)]->data() : nullptr;
  // With the filtered views kept by the backend nobody waits for the store:
  // let pushes and reads have the cores first.
  if (keeps_filtered_) lower_this_thread_priority();
  for (;;) {
    JobPtr job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      auto next = to_store_.end();
      for (;;) {
        if (stop_) return;
        auto resume = Clock::time_point::max();
        if (store_may_run(Clock::now(), &resume)) {
          next = next_storable();
          if (next != to_store_.end()) break;
        }
        if (resume == Clock::time_point::max())
          store_wake_.wait(lock);
        else
          store_wake_.wait_until(lock, resume);
      }
      job = *next;
      to_store_.erase(next);
    }
    try {
      store_one(*job, buffer);
    } catch (...) {
      job->error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    complete(*job);
  }
}

std::deque<IngestPipeline::JobPtr>::iterator IngestPipeline::next_storable() {
  // A view without a reservation (its push waits for it: the budget is
  // near) is measured against the room the reserved views in flight may
  // still take, their worst case; stored first, it could fail although the
  // others, stored, leave it room (a race that failed the last view of a
  // scan under load). So it waits until no other view holds a reservation:
  // those progress without it (filtered on other threads, stored first
  // here), and its own push, waiting, adds none meanwhile.
  for (auto it = to_store_.begin(); it != to_store_.end(); ++it)
    if ((*it)->reserved || reserved_bytes_ == 0) return it;
  return to_store_.end();
}

bool IngestPipeline::store_may_run(Clock::time_point now, Clock::time_point* resume) const {
  // Reads have the cores and the bus first.
  if (sealed_ && readers_ > 0) return false;
  if (sealed_ && now < last_read_end_ + kReadQuiet) {
    *resume = last_read_end_ + kReadQuiet;
    return false;
  }
  // A backend that keeps the filtered views never reads the store back, so
  // compressing them waits for the scan's end: during it the cores and the
  // memory bus serve the pushes. A push that waits for its own view (the
  // budget is near) needs the store at once.
  return !keeps_filtered_ || sealed_ || waiting_pushes_ > 0;
}

void IngestPipeline::store_one(Job& job, float* worker_buffer) {
  throw_if_cancelled(model_);
  const auto start = Clock::now();
  const float* data;
  if (keeps_filtered_) {
    backend_.read_filtered(model_, job.view, worker_buffer);
    data = worker_buffer;
  } else {
    data = filtered_[static_cast<size_t>(job.filtered)]->data();
  }
  const bool may_reduce = options_.reduce_precision && store_.precision() == FDK_PRECISION_FLOAT32;
  bool reduce = false;
  if (may_reduce) {
    std::lock_guard<std::mutex> lock(mutex_);
    reduce = !full_precision_fits();
  }
  const auto rows = model_.rows_of(job.view);
  CompressedView compressed =
      store_.compress(data, nullptr, reduce ? FDK_PRECISION_FLOAT16 : store_.precision(), rows);
  std::unique_lock<std::mutex> lock(mutex_);
  // Room left for this view: what the others in flight reserved stays theirs.
  const uint64_t others = reserved_bytes_ - (job.reserved ? view_bound_ : 0);
  if (may_reduce && !reduce && store_.stored_bytes() + others + compressed.bytes() > options_.store_limit) {
    // The estimate let it through at float32 but it does not fit: the
    // policy's last resort before BUDGET is this view at float16.
    lock.unlock();
    compressed = store_.compress(data, nullptr, FDK_PRECISION_FLOAT16, rows);
    lock.lock();
  }
  store_seconds_ += seconds_since(start);
  const uint64_t used = store_.stored_bytes() + others;
  if (used + compressed.bytes() > options_.store_limit)
    fail(FDK_ERROR_BUDGET, "the compressed projections would exceed the host memory budget (" +
                               std::to_string(options_.store_limit >> 20) +
                               " MiB for them after the slab reserve and the staging)");
  const uint64_t bytes = compressed.bytes();
  const bool full = compressed.precision == FDK_PRECISION_FLOAT32;
  store_.commit(job.view, std::move(compressed));
  if (full) {
    full_bytes_ += bytes;
    ++full_views_;
  }
}

bool IngestPipeline::full_precision_fits() const {
  // No float32 view stored yet: no ratio to go by, and the plan guaranteed
  // room for one view's worst case.
  if (full_views_ == 0) return true;
  // A margin for the ratio's spread from view to view.
  constexpr double kMargin = 1.02;
  const double per_view = static_cast<double>(full_bytes_) / full_views_;
  const double remaining = static_cast<double>(model_.views.size()) - store_.views_stored();
  const double need = static_cast<double>(store_.stored_bytes()) + kMargin * per_view * remaining;
  return need <= static_cast<double>(options_.store_limit);
}

void IngestPipeline::release_slot(Job& job) {
  if (job.slot >= 0) free_.push_back(job.slot);
  job.slot = -1;
}

void IngestPipeline::release_filtered(Job& job) {
  if (job.filtered < 0) return;
  free_filtered_.push_back(job.filtered);
  job.filtered = -1;
  filter_wake_.notify_all();  // a lane may wait for a buffer to write
}

void IngestPipeline::complete(Job& job) {
  if (job.reserved) {
    reserved_bytes_ -= view_bound_;
    store_wake_.notify_all();  // a view without a reservation may wait for this
  }
  job.reserved = false;
  release_slot(job);
  release_filtered(job);
  --in_flight_;
  if (!job.error && !keeps_filtered_) state_[static_cast<size_t>(job.view)] = FDK_VIEW_STORED;
  if (job.error) {
    const auto [code, what] = status_of(job.error);
    job.error = view_error(job.view, job.error);
    // Once sealed, the view is in the volume already: it only misses from
    // the store (which a resident volume does not read). Once cancelled,
    // nothing can be pushed again: the counts stay as the caller left them.
    const bool cancelled = model_.cancelled && model_.cancelled->load();
    if (!sealed_ && !cancelled) {
      // A waiting push reports its own failure: the view was not taken.
      state_[static_cast<size_t>(job.view)] = job.waited_on ? FDK_VIEW_ABSENT : FDK_VIEW_FAILED;
      failure_[static_cast<size_t>(job.view)] = static_cast<uint8_t>(code);
      accepted_.fetch_sub(1);
      if (job.filtered_ok) {
        model_.arrived[static_cast<size_t>(job.view)] = 0;
        try {
          backend_.view_dropped(model_, job.view);
        } catch (...) {
        }
      }
      if (!job.waited_on) {
        try {
          unreported_.push_back(Failure{job.view, code, what});
        } catch (...) {
          // Out of memory: the view's state still says FAILED.
        }
      }
    } else if (!sealed_) {
      state_[static_cast<size_t>(job.view)] = FDK_VIEW_FAILED;
      failure_[static_cast<size_t>(job.view)] = static_cast<uint8_t>(code);
    }
    if (!sealed_ && cancelled && job.waited_on) {
      // Its push is still waiting and returns the cancel: the caller was
      // told the view was not taken, so it does not count as pushed.
      accepted_.fetch_sub(1);
    }
  }
  job.done = true;
  changed_.notify_all();
}

}  // namespace fdk
