// The handles a library has made and not yet freed (libfdk's fdk_context,
// libfdk_mpi's fdk_mpi_context), so that a pointer that is not one of them
// (destroyed already, or never made) is refused with a status instead of
// being used: destroying a handle twice, or calling it after destroy, was a
// use after free that crashed or hung a job.
//
// The limit: an address freed and then given to a later handle is that
// later handle; nothing here can tell the two apart.
#pragma once

#include <mutex>
#include <unordered_set>

namespace fdk::capi {

template <class Handle>
class LiveHandles {
 public:
  void add(const Handle* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    handles_.insert(h);
  }
  // False when `h` was not live: the caller must not free it.
  bool remove(const Handle* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    return handles_.erase(h) > 0;
  }
  bool contains(const Handle* h) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return handles_.count(h) > 0;
  }
  // Runs `f` while `h` is certainly live (remove() waits for it) and
  // returns true, or returns false without running it. `f` must be short
  // and must not call back into the registry.
  template <class F>
  bool while_live(const Handle* h, F&& f) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (handles_.count(h) == 0) return false;
    f();
    return true;
  }

  // The process's registry of one handle type, never destroyed: a call
  // made during static destruction (another static's destructor) still
  // finds it.
  static LiveHandles& of_process() {
    static LiveHandles* const live = new LiveHandles;
    return *live;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const Handle*> handles_;
};

}  // namespace fdk::capi
