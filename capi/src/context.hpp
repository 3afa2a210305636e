// What an fdk_context handle is, and the one place where C++ failures become
// status codes and messages.
#pragma once
#include <fdk/fdk.h>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "fdk/core/error.hpp"
#include "fdk/core/reconstruction.hpp"
#include "run_guarded.hpp"

struct fdk_context {
  std::unique_ptr<fdk::Reconstruction> recon;
  mutable std::mutex error_mutex;
  std::string last_error;
  // Calls in progress on the handle, so that fdk_destroy from another
  // thread cancels them and waits for them to return instead of freeing
  // what they use (which hung a push waiting for a staging slot).
  mutable std::mutex calls_mutex;
  mutable std::condition_variable calls_done;
  mutable int calls = 0;
  mutable bool destroying = false;
};

namespace fdk::capi {

// The sizes of fdk_config that older headers declared: fdk_create and
// fdk_estimator_create read them with the appended fields' defaults.
bool older_config_size(size_t size);

// Thread-local message for failures without a handle (fdk_create).
void set_thread_error(const std::string& message);
void set_error(const fdk_context* ctx, const std::string& message);

// fdk_geometry_estimate in and out (estimate_api.cpp): struct_size checked,
// the core's estimate copied, the basis cut to the field.
void check_estimate_struct(const fdk_geometry_estimate* estimate);
void estimate_to_c(const fdk::GeometryEstimate& from, fdk_geometry_estimate* to);

// Counts one API call on a handle for fdk_destroy (see fdk_context::calls).
class CallScope {
 public:
  explicit CallScope(const fdk_context* ctx) : ctx_(ctx) {
    std::lock_guard<std::mutex> lock(ctx_->calls_mutex);
    entered_ = !ctx_->destroying;
    if (entered_) ++ctx_->calls;
  }
  ~CallScope() {
    if (!entered_) return;
    std::lock_guard<std::mutex> lock(ctx_->calls_mutex);
    if (--ctx_->calls == 0) ctx_->calls_done.notify_all();
  }
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  // False once fdk_destroy has begun: the call must do nothing.
  bool entered() const { return entered_; }

 private:
  const fdk_context* ctx_;
  bool entered_ = false;
};

// Runs `body`, mapping every exception to a status and recording its
// message on the handle (or thread-locally when ctx is null). Never throws.
template <class Body>
fdk_status guarded(const fdk_context* ctx, Body&& body) noexcept {
  return run_guarded(std::forward<Body>(body), [ctx](const std::string& full) {
    if (ctx)
      set_error(ctx, full);
    else
      set_thread_error(full);
  });
}

}  // namespace fdk::capi
