#include "ingest_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <new>

#include "fdk/core/error.hpp"
#include "fdk/core/thread_pool.hpp"

namespace fdk {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The failure of one view as an fdk::Error that names it.
std::exception_ptr view_error(int view, std::exception_ptr error) {
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
  return std::make_exception_ptr(Error(code, "projection " + std::to_string(view) + " was not stored: " + what));
}

size_t raw_floats(const ScanModel& m) {
  return static_cast<size_t>(m.input_detector.size[0]) * static_cast<size_t>(m.input_detector.size[1]);
}
size_t filtered_floats(const ScanModel& m) {
  return static_cast<size_t>(m.detector.size[0]) * static_cast<size_t>(m.detector.size[1]);
}

}  // namespace

uint64_t IngestPipeline::slot_bytes(const ScanModel& model) {
  return 4ull * (raw_floats(model) + filtered_floats(model));
}

IngestPipeline::IngestPipeline(ScanModel& model, ProjectionStore& store, Backend& backend, Options options)
    : model_(model),
      store_(store),
      backend_(backend),
      options_(options),
      view_bound_(store.worst_case_view_bytes()) {
  slots_.resize(static_cast<size_t>(std::max(1, options_.slots)));
  for (size_t s = 0; s < slots_.size(); ++s) {
    slots_[s].raw = backend_.make_staging(raw_floats(model_));
    slots_[s].filtered = backend_.make_staging(filtered_floats(model_));
    free_.push_back(static_cast<int>(s));
  }
  claimed_.assign(model_.views.size(), 0);
  try {
    threads_.emplace_back([this] { filter_loop(); });
    for (int w = 0; w < std::max(1, options_.store_workers); ++w) threads_.emplace_back([this] { store_loop(); });
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    for (auto& t : threads_) t.join();
    fail(FDK_ERROR_OUT_OF_MEMORY, "cannot start the ingest threads");
  }
}

IngestPipeline::~IngestPipeline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_) t.join();
}

void IngestPipeline::rethrow_deferred() {
  if (!deferred_) return;
  std::exception_ptr e = deferred_;
  deferred_ = nullptr;
  std::rethrow_exception(e);
}

void IngestPipeline::push(int view, const ViewGeometry& geometry, const IndexMatrix& matrix, const float* pixels,
                          size_t pitch_bytes, ThreadPool& pool) {
  int index;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    rethrow_deferred();
    if (claimed_[static_cast<size_t>(view)])
      fail(FDK_ERROR_DUPLICATE, "projection " + std::to_string(view) + " was already pushed");
    changed_.wait(lock, [&] { return !free_.empty(); });
    index = free_.back();
    free_.pop_back();
  }
  Slot& slot = slots_[static_cast<size_t>(index)];
  const auto give_back = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(index);
    changed_.notify_all();
  };

  // Copy into staging and find the first non-finite pixel, rows in parallel.
  const int nu = model_.input_detector.size[0], nv = model_.input_detector.size[1];
  const int chunks = std::min(nv, 4 * pool.size());
  std::vector<int64_t> first_bad(static_cast<size_t>(chunks), -1);
  float* raw = slot.raw->data();
  pool.parallel_for(chunks, [&](int c, int) {
    for (int j = nv * c / chunks; j < nv * (c + 1) / chunks; ++j) {
      float* dst = raw + static_cast<size_t>(j) * nu;
      std::memcpy(dst, reinterpret_cast<const char*>(pixels) + static_cast<size_t>(j) * pitch_bytes,
                  sizeof(float) * static_cast<size_t>(nu));
      bool finite = true;
      for (int i = 0; i < nu; ++i) finite &= std::isfinite(dst[i]);
      if (!finite) {
        for (int i = 0; i < nu; ++i)
          if (!std::isfinite(dst[i])) {
            first_bad[static_cast<size_t>(c)] = static_cast<int64_t>(j) * nu + i;
            return;
          }
      }
    }
  });
  for (int64_t bad : first_bad)
    if (bad >= 0) {
      give_back();
      fail(FDK_ERROR_INVALID_ARGUMENT, "projection " + std::to_string(view) + " has a non-finite pixel at column " +
                                           std::to_string(bad % nu) + ", row " + std::to_string(bad / nu));
    }

  model_.views[static_cast<size_t>(view)] = geometry;
  model_.matrices[static_cast<size_t>(view)] = matrix;
  slot.view = view;
  slot.filtered_ok = false;
  slot.done = false;
  slot.error = nullptr;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // In the background only while the worst case of every view in flight
    // still fits; otherwise this push waits and learns its own outcome.
    slot.reserved = store_.stored_bytes() + reserved_bytes_ + view_bound_ <= options_.store_limit;
    slot.waited_on = !slot.reserved;
    if (slot.reserved) reserved_bytes_ += view_bound_;
    claimed_[static_cast<size_t>(view)] = 1;
    ++in_flight_;
    accepted_.fetch_add(1);
    to_filter_.push_back(index);
    changed_.notify_all();
    if (!slot.waited_on) return;
    changed_.wait(lock, [&] { return slot.done; });
    free_.push_back(index);
    changed_.notify_all();
    if (slot.error) std::rethrow_exception(slot.error);
  }
}

void IngestPipeline::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return in_flight_ == 0; });
  rethrow_deferred();
}

double IngestPipeline::filter_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return filter_seconds_;
}

double IngestPipeline::store_seconds() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return store_seconds_;
}

void IngestPipeline::filter_loop() {
  for (;;) {
    int index;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !to_filter_.empty(); });
      if (stop_) return;
      index = to_filter_.front();
      to_filter_.pop_front();
    }
    Slot& slot = slots_[static_cast<size_t>(index)];
    const auto start = Clock::now();
    try {
      throw_if_cancelled(model_);
      const int v = slot.view;
      backend_.filter(model_, v, model_.views[static_cast<size_t>(v)], slot.raw->data(),
                      sizeof(float) * static_cast<size_t>(model_.input_detector.size[0]), slot.filtered->data());
      slot.filtered_ok = true;
      backend_.view_filtered(model_, v);
    } catch (...) {
      slot.error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    filter_seconds_ += seconds_since(start);
    to_store_.push_back(index);
    changed_.notify_all();
  }
}

void IngestPipeline::store_loop() {
  for (;;) {
    int index;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !to_store_.empty(); });
      if (stop_) return;
      index = to_store_.front();
      to_store_.pop_front();
    }
    Slot& slot = slots_[static_cast<size_t>(index)];
    if (!slot.error) {
      try {
        store_one(slot);
      } catch (...) {
        slot.error = std::current_exception();
      }
    }
    if (slot.error && slot.filtered_ok) {
      try {
        backend_.view_dropped(model_, slot.view);
      } catch (...) {
      }
    }
    complete(slot);
  }
}

void IngestPipeline::store_one(Slot& slot) {
  throw_if_cancelled(model_);
  const auto start = Clock::now();
  CompressedView compressed = store_.compress(slot.filtered->data(), nullptr);
  std::lock_guard<std::mutex> lock(mutex_);
  store_seconds_ += seconds_since(start);
  // Room left for this view: what the others in flight reserved stays theirs.
  const uint64_t others = reserved_bytes_ - (slot.reserved ? view_bound_ : 0);
  const uint64_t used = store_.stored_bytes() + others;
  if (used + compressed.bytes() > options_.store_limit)
    fail(FDK_ERROR_BUDGET, "the compressed projections would exceed the host memory budget (" +
                               std::to_string(options_.store_limit >> 20) +
                               " MiB for them after the slab reserve and the staging)");
  store_.commit(slot.view, std::move(compressed));
  model_.arrived[static_cast<size_t>(slot.view)] = 1;
}

void IngestPipeline::complete(Slot& slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (slot.reserved) reserved_bytes_ -= view_bound_;
  slot.reserved = false;
  --in_flight_;
  if (slot.error) {
    slot.error = view_error(slot.view, slot.error);
    claimed_[static_cast<size_t>(slot.view)] = 0;
    accepted_.fetch_sub(1);
  }
  slot.done = true;
  const int index = static_cast<int>(&slot - slots_.data());
  if (!slot.waited_on) {
    if (slot.error && !deferred_) deferred_ = slot.error;
    free_.push_back(index);
  }
  changed_.notify_all();
}

}  // namespace fdk
