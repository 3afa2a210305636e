// The chunks of y planes a resident GPU holds (one_device.hpp): where they
// lie in its memory, the runs one launch covers, the finish's spans
// launched on a thread of their own, and the reads of planes, its own or,
// recomputed, a failed GPU's. Apart because the layout, not the
// arithmetic, is what differs with the number of GPUs.

#include <algorithm>
#include <numeric>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "one_device.hpp"

namespace fdk::cuda {

namespace {

// Groups still waiting at fdk_finish are launched chunk by chunk of y
// planes (a multiple of kPlanesPerThread, so every voxel sees the same
// arithmetic as in a whole-volume launch), by the reads: a chunk is
// downloaded while the next one computes.
constexpr int kFinishChunks = 16;
// The finish launches a 1/kFinishSpanDivisor of the chunks left at once,
// up to kFinishSpanVoxels voxels: (b) on two H200s 0.413 -> 0.406 s end to
// end, on four (page-locked) 0.231 -> 0.225 s (A/B in one call; 2 measured
// no better than 4). Without the cap (c) on four H200s took 1.58 -> 1.90 s:
// its reads, bound by the host's copies, wait for the first span; with it
// (c)'s chunks (2^27 voxels or more) go one by one as before.
constexpr int kFinishSpanDivisor = 4;
constexpr uint64_t kFinishSpanVoxels = uint64_t{1} << 27;

}  // namespace

// Resident, after finish: a thread launches the held groups over spans
// of chunks (finish_span; the launch queue fills up and would hold the
// caller), each chunk's end marked by its event; reads wait for the
// launches they need.
void OneDevice::launch_all_chunks(const ScanModel& model) {
  if (!resident_ || launcher_.joinable()) return;
  launcher_ = std::thread([this, &model] {
    DeviceGuard guard(device_);
    try {
      const int n = static_cast<int>(owned_.size()), half = n / 2;
      // Held plane pairs (the first of held_, as they complete first)
      // serve a plane and its mirror image with one lookup: launched in
      // the lower half's spans for the span and its image together, not
      // in each span for one of them. A voxel still sums the same groups
      // in the same order.
      const int first = chunks_launched_.load();
      const size_t planes = mirrored_slots_ && first == 0 ? held_plane_groups() : 0;
      for (int i = first; i < n;) {
        if (stop_launching_.load() || model.cancelled->load()) break;
        int m = finish_span(model, n - i);
        if (planes > 0 && i < half) m = std::min(m, half - i);
        const Run span = owned_run(model, i, m);
        if (planes > 0 && i < half) {
          const Run both = mirrored_span(model, i, m);
          for (size_t k = 0; k < planes; ++k) launch_item(model, held_[k], nominal_weights_, both);
        }
        for (size_t k = planes; k < held_.size(); ++k) launch_item(model, held_[k], nominal_weights_, span);
        for (int s = i; s < i + m; ++s)
          chunk_ready_[static_cast<size_t>(owned_[static_cast<size_t>(s)])].record(bp_stream_.get());
        const CUevent done = chunk_ready_[static_cast<size_t>(owned_[static_cast<size_t>(i + m - 1)])].get();
        if (planes > 0 && i < half) {
          std::vector<std::array<int, 2>> both = slot_planes(model, i, m), image = slot_planes(model, n - i - m, m);
          both.insert(both.end(), image.begin(), image.end());
          credit_items(model, done, both, held_, 0, planes);
        }
        credit_items(model, done, slot_planes(model, i, m), held_, planes, held_.size());
        i += m;
        std::lock_guard<std::mutex> lock(launch_mutex_);
        chunks_launched_.store(i);
        launched_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(launch_mutex_);
      launch_error_ = std::current_exception();
      launched_.notify_all();
    }
    std::lock_guard<std::mutex> lock(launch_mutex_);
    launcher_done_ = true;
    launched_.notify_all();
  });
}

bool OneDevice::planes_ready(int y0, int y1) const {
  if (!resident_ || !finished_) return false;
  for (int c = y0 / chunk_planes_; c * chunk_planes_ < y1; ++c)
    if (slot_of_chunk_[static_cast<size_t>(c)] >= chunks_launched_.load() ||
        !chunk_ready_[static_cast<size_t>(c)].ready())
      return false;
  return true;
}

// Resident: waits until chunk `chunk` (one of ours) is launched (not computed).
void OneDevice::wait_launched(const ScanModel& model, int chunk) {
  const int slot = slot_of_chunk_[static_cast<size_t>(chunk)];
  std::unique_lock<std::mutex> lock(launch_mutex_);
  while (chunks_launched_.load() <= slot) {
    if (launch_error_) std::rethrow_exception(launch_error_);
    throw_if_cancelled(model);
    if (launcher_done_) fail(FDK_ERROR_INTERNAL, "chunk " + std::to_string(chunk) + " was never launched");
    launched_.wait_for(lock, std::chrono::milliseconds(5));
  }
}

void OneDevice::read_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) {
  if (!resident_) fail(FDK_ERROR_INTERNAL, "a streamed slab is read through the shared prefetch");
  inject_fault(FaultPlan::Read, reads_.fetch_add(1));
  DeviceGuard guard(device_);
  const size_t plane = model.plane_floats();
  const auto start = std::chrono::steady_clock::now();
  // Chunk by chunk: ours are not next to each other on the device.
  for (int y = y0; y < y1;) {
    const int c = y / chunk_planes_, end = std::min(y1, (c + 1) * chunk_planes_);
    if (slot_of_chunk_[static_cast<size_t>(c)] < 0)
      fail(FDK_ERROR_INTERNAL, "planes " + std::to_string(y) + " are not held by GPU " + std::to_string(device_));
    wait_launched(model, c);
    wait_event(download_stream_.get(), chunk_ready_[static_cast<size_t>(c)].get(), "cuStreamWaitEvent (chunk)");
    download(planes_at(model, y), plane * static_cast<size_t>(end - y), out + plane * static_cast<size_t>(y - y0),
             download_stream_.get(), copy_tasks);
    y = end;
  }
  download_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Resident, after finish: planes [y0, y1) of another device's chunk,
// recomputed here from the views this device holds: the same launches,
// in the same order, as on the chunk's own device, so the same bits.
void OneDevice::read_foreign_planes(const ScanModel& model, int y0, int y1, float* out, int copy_tasks) {
  if (!resident_ || !finished_) fail(FDK_ERROR_INTERNAL, "a chunk is recomputed only after the scan");
  inject_fault(FaultPlan::Read, reads_.fetch_add(1));
  DeviceGuard guard(device_);
  const int c = y0 / chunk_planes_;
  if (y1 > (c + 1) * chunk_planes_ || slot_of_chunk_[static_cast<size_t>(c)] >= 0)
    fail(FDK_ERROR_INTERNAL, "bad foreign planes");
  // The launcher thread uses the batch sets and the stream: wait until
  // our own chunks are launched.
  if (!owned_.empty()) wait_launched(model, owned_.back());
  std::lock_guard<std::mutex> lock(foreign_mutex_);
  const size_t plane = model.plane_floats();
  if (foreign_chunk_ != c) {
    foreign_chunk_ = -1;
    foreign_.resize(plane * static_cast<size_t>(chunk_planes_));
    zero_async(foreign_.get(), foreign_.bytes(), bp_stream_.get(), "cuMemsetD8Async (foreign chunk)");
    Run run = chunk_run(model, c);
    run.dest = foreign_.get();
    const std::vector<double>& weights = final_weights_.empty() ? nominal_weights_ : final_weights_;
    for (const HeldItem& item : launched_items_) launch_item(model, item, weights, run);
    for (const HeldItem& item : held_) launch_item(model, item, weights, run);
    foreign_ready_.record(bp_stream_.get());
    foreign_chunk_ = c;
  }
  wait_event(download_stream_.get(), foreign_ready_.get(), "cuStreamWaitEvent (foreign)");
  download(foreign_.get() + plane * static_cast<size_t>(y0 - c * chunk_planes_), plane * static_cast<size_t>(y1 - y0),
           out, download_stream_.get(), copy_tasks);
}

bool OneDevice::all_chunks_ready() const {
  if (!resident_ || !finished_ || chunks_launched_.load() < static_cast<int>(owned_.size())) return false;
  for (int c : owned_)
    if (!chunk_ready_[static_cast<size_t>(c)].ready()) return false;
  return true;
}

// Resident: takes `chunks` (ascending; one evenly spaced run, or two, as
// a dealing in mirror images gives) as this device's part; they lie one
// after the other in volume_.
void OneDevice::hold_chunks(const ScanModel& model, int chunk_planes, const std::vector<int>& chunks) {
  const int ny = model.volume.size[1];
  if (chunk_planes <= 0 || chunk_planes % kPairPlanesPerThread != 0)
    fail(FDK_ERROR_INTERNAL, "bad resident chunk size");
  chunk_planes_ = chunk_planes;
  slot_of_chunk_.assign(static_cast<size_t>((ny + chunk_planes_ - 1) / chunk_planes_), -1);
  owned_.clear();
  all_chunks_ = Run{};
  second_run_ = static_cast<int>(chunks.size());
  for (int c : chunks) {
    const size_t n = owned_.size();
    if (c < 0 || c >= static_cast<int>(slot_of_chunk_.size()) || (n > 0 && c <= owned_.back()))
      fail(FDK_ERROR_INTERNAL, "bad resident chunk list");
    // The first run's step is its first two chunks'; the second run
    // starts where that step breaks and keeps its own.
    const int first = n < static_cast<size_t>(second_run_) ? 0 : second_run_;
    if (n >= static_cast<size_t>(first) + 2 &&
        c - owned_.back() != owned_[static_cast<size_t>(first) + 1] - owned_[static_cast<size_t>(first)]) {
      if (first > 0) fail(FDK_ERROR_INTERNAL, "bad resident chunk list (more than two runs)");
      second_run_ = static_cast<int>(n);
    }
    slot_of_chunk_[static_cast<size_t>(c)] = static_cast<int>(n);
    owned_.push_back(c);
  }
  // Every chunk in one launch during the scan.
  if (!owned_.empty()) all_chunks_ = owned_run(model, 0, static_cast<int>(owned_.size()));
  const int n = static_cast<int>(owned_.size()), last = static_cast<int>(slot_of_chunk_.size()) - 1;
  owned_planes_ = slot_planes(model, 0, n);
  mirrored_slots_ = n % 2 == 0 && ny == (last + 1) * chunk_planes_;
  for (int i = 0; i < n && mirrored_slots_; ++i)
    mirrored_slots_ = owned_[static_cast<size_t>(n - 1 - i)] == last - owned_[static_cast<size_t>(i)];
}

// Resident, mirrored_slots_: the slots [i, i + m) of the lower half and
// their mirror images [n - i - m, n - i) as one launch's two runs.
Run OneDevice::mirrored_span(const ScanModel& model, int i, int m) const {
  const int n = static_cast<int>(owned_.size());
  Run run = owned_run(model, i, m);
  const Run image = owned_run(model, n - i - m, m);
  run.split = run.planes;
  run.y0_b = image.y0;
  run.stride_b = image.stride;
  run.planes += image.planes;
  run.gap = (n - 2 * (i + m)) * chunk_planes_;
  return run;
}

// How many of held_'s first items are groups of plane pairs.
size_t OneDevice::held_plane_groups() const {
  size_t k = 0;
  const auto plane = [&](const HeldItem& item) {
    return !item.views && orbit_kind_[static_cast<size_t>(item.ids.front())] ==
                              static_cast<unsigned char>(MirrorKind::Plane);
  };
  while (k < held_.size() && plane(held_[k])) ++k;
  return k;
}

// Resident: our chunks owned_[first .. first + count) as one launch's run.
Run OneDevice::owned_run(const ScanModel& model, int first, int count) const {
  const auto step = [&](int from, int to) {  // of the slots [from, to)
    return to - from > 1 ? owned_[static_cast<size_t>(from) + 1] - owned_[static_cast<size_t>(from)] : 1;
  };
  const int n = static_cast<int>(owned_.size()), end = first + count;
  const Run last = chunk_run(model, owned_[static_cast<size_t>(end - 1)]);
  // The slots before second_run_ are one evenly spaced run, those from it another.
  const int a_end = first < second_run_ ? std::min(end, second_run_) : end;
  Run run{owned_[static_cast<size_t>(first)] * chunk_planes_, (count - 1) * chunk_planes_ + last.planes,
          chunk_planes_, step(first, first < second_run_ ? second_run_ : n) * chunk_planes_};
  if (a_end < end) {
    run.split = (a_end - first) * chunk_planes_;
    run.y0_b = owned_[static_cast<size_t>(a_end)] * chunk_planes_;
    run.stride_b = step(a_end, n) * chunk_planes_;
  }
  return run;
}

// The finish's chunks launched together when `left` remain: a quarter of
// them at first (at most kFinishSpanVoxels), one by one at the end, so
// that the last reads wait little while most launches stay large (a
// launch per chunk of 32 planes kept each of two H200s busy 0.379 s on
// (b), spans 0.375 s).
int OneDevice::finish_span(const ScanModel& model, int left) const {
  const uint64_t chunk_voxels = static_cast<uint64_t>(model.plane_floats()) * static_cast<uint64_t>(chunk_planes_);
  const int cap = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(left), kFinishSpanVoxels / chunk_voxels));
  return std::max(1, std::min(cap, left / kFinishSpanDivisor));
}

Run OneDevice::chunk_run(const ScanModel& model, int chunk) const {
  const int y0 = chunk * chunk_planes_;
  const int planes = std::min(model.volume.size[1], y0 + chunk_planes_) - y0;
  return Run{y0, planes, std::max(1, planes), std::max(1, planes)};
}

// Resident: the planes of our chunks owned_[first .. first + count), as
// ranges of the volume's y (neighbours merged).
std::vector<std::array<int, 2>> OneDevice::slot_planes(const ScanModel& model, int first, int count) const {
  std::vector<std::array<int, 2>> planes;
  for (int s = first; s < first + count; ++s) {
    const Run r = chunk_run(model, owned_[static_cast<size_t>(s)]);
    if (!planes.empty() && planes.back()[1] == r.y0)
      planes.back()[1] = r.y0 + r.planes;
    else
      planes.push_back({r.y0, r.y0 + r.planes});
  }
  return planes;
}

// The distinct views a held item backprojects.
int64_t OneDevice::item_views(const HeldItem& item) const {
  if (item.views) return static_cast<int64_t>(item.ids.size());
  int64_t views = 0;
  for (int q : item.ids) views += orbit_size_[static_cast<size_t>(q)];
  return views;
}

// fdk_progress: items[first, last) launched into `planes` count once
// `done` completes.
void OneDevice::credit_items(const ScanModel& model, CUevent done, const std::vector<std::array<int, 2>>& planes,
                             const std::vector<HeldItem>& items, size_t first, size_t last) {
  int64_t views = 0;
  for (size_t k = first; k < last; ++k) views += item_views(items[k]);
  credit_.after(done, model.meter, planes, views);
}

// Resident: where plane y (in one of our chunks) is in volume_.
float* OneDevice::planes_at(const ScanModel& model, int y) {
  const int c = y / chunk_planes_;
  const size_t local = static_cast<size_t>(slot_of_chunk_[static_cast<size_t>(c)]) * chunk_planes_ +
                       static_cast<size_t>(y - c * chunk_planes_);
  return volume_.get() + model.plane_floats() * local;
}

int resident_chunk_planes(int ny, int devices) {
  // Chunks cut along the threads' plane runs, so every voxel sees the same
  // arithmetic as in a whole-volume launch.
  static_assert(kPairPlanesPerThread % kPlanesPerThread == 0, "chunks must suit every kernel");
  const int chunks = kFinishChunks * std::max(1, devices);
  return static_cast<int>(
      round_up(static_cast<size_t>((ny + chunks - 1) / chunks), static_cast<size_t>(kPairPlanesPerThread)));
}

int partial_chunk_planes(int y0, int y1, int ny, int devices) {
  // Every end of the range inside the volume must fall on a chunk boundary.
  const int ends = y1 < ny ? std::gcd(y0, y1) : y0;
  const int target = resident_chunk_planes(y1 - y0, devices);
  for (int planes = target / kPairPlanesPerThread * kPairPlanesPerThread; planes >= kPairPlanesPerThread;
       planes -= kPairPlanesPerThread)
    if (ends % planes == 0) return planes;
  return 0;
}

}  // namespace fdk::cuda
