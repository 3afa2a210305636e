// The extern "C" surface: argument checks that need no state, then the call
// into the core under fdk::capi::guarded.
#include <fdk/fdk.h>

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>

#include "backend_choice.hpp"
#include "fdk/core/per_thread.hpp"
#include "context.hpp"
#include "live_handles.hpp"
#include "struct_size.hpp"

using fdk::capi::guarded;

namespace fdk::capi {

namespace {
// The message of this thread's last failed call without a handle
// (per_thread: a thread_local that is safe with every toolchain).
struct ThreadErrorTag;
std::string& thread_error_message() { return fdk::per_thread<std::string, ThreadErrorTag>(); }
}  // namespace

void set_thread_error(const std::string& message) { thread_error_message() = message; }
const char* thread_error() {
  try {
    return thread_error_message().c_str();
  } catch (...) {
    return "";  // no per-thread string could be made (MinGW: no memory or no slot)
  }
}

void set_error(const fdk_context* ctx, const std::string& message) {
  std::lock_guard<std::mutex> lock(ctx->error_mutex);
  const_cast<fdk_context*>(ctx)->last_error = message;
}

}  // namespace fdk::capi

namespace {

#define FDK_STR2(x) #x
#define FDK_STR(x) FDK_STR2(x)

using fdk::capi::check_out_struct_sizes;
using fdk::capi::copy_out;

// The sizes of structs as 0.1 laid them out, before fields were appended.
constexpr size_t kConfigSize01 = offsetof(fdk_config, outside_fov);
constexpr size_t kPlanInfoSize01 = offsetof(fdk_plan_info, outside_fov);
// And as 0.2 did.
constexpr size_t kConfigSize02 = offsetof(fdk_config, store_policy);
constexpr size_t kPlanInfoSize02 = offsetof(fdk_plan_info, store_policy);
constexpr size_t kStoreInfoSize02 = offsetof(fdk_store_info, views_reduced);
// And as 0.4 did.
constexpr size_t kConfigSize04 = offsetof(fdk_config, hann_cutoff_v);
// And as 0.5 and 0.6 did.
constexpr size_t kConfigSize06 = offsetof(fdk_config, estimate_geometry);
// And as 0.7 did.
constexpr size_t kConfigSize07 = offsetof(fdk_config, preview);
constexpr size_t kProgressSize04 = offsetof(fdk_progress, backprojection_done);

}  // namespace

bool fdk::capi::older_config_size(size_t size) {
  return size == kConfigSize01 || size == kConfigSize02 || size == kConfigSize04 || size == kConfigSize06 ||
         size == kConfigSize07;
}

namespace {

const fdk::Reconstruction& recon_of(const fdk_context* ctx) { return *ctx->recon; }

void preview_info_to_c(const fdk::PreviewState& s, fdk_preview_info* info);

void check_slice(const float* p, size_t bytes, uint64_t floats, const char* name) {
  if (p && bytes < 4 * floats)
    fdk::fail(FDK_ERROR_INVALID_ARGUMENT,
              std::string(name) + "_bytes is " + std::to_string(bytes) + ": " + name + " needs " + std::to_string(4 * floats));
}

void read_preview_slices(fdk::Preview& preview, const fdk_preview_slices* slices, fdk_preview_info* info) {
  check_out_struct_sizes(slices, "fdk_preview_slices");
  if (info) check_out_struct_sizes(info, "fdk_preview_info");
  const fdk_volume& g = preview.grid();
  const uint64_t nx = static_cast<uint64_t>(g.size[0]), ny = static_cast<uint64_t>(g.size[1]),
                 nz = static_cast<uint64_t>(g.size[2]);
  check_slice(slices->x_slice, slices->x_slice_bytes, nz * ny, "x_slice");
  check_slice(slices->y_slice, slices->y_slice_bytes, nx * nz, "y_slice");
  check_slice(slices->z_slice, slices->z_slice_bytes, nx * ny, "z_slice");
  const fdk::PreviewState state = preview.read_slices({slices->at[0], slices->at[1], slices->at[2]},
                                                      slices->x_slice, slices->y_slice, slices->z_slice);
  if (info) preview_info_to_c(state, info);
}

void preview_info_to_c(const fdk::PreviewState& s, fdk_preview_info* info) {
  fdk_preview_info full{};
  full.struct_size = sizeof full;
  full.volume = s.volume;
  full.views = s.views;
  full.views_announced = s.views_announced;
  full.coverage = s.coverage;
  full.flags = s.flags;
  full.on_gpu = s.on_gpu ? 1 : 0;
  full.memory_bytes = s.memory_bytes;
  *info = full;
}

using Live = fdk::capi::LiveHandles<fdk_context>;
constexpr const char* kNotLive = "not a live fdk handle: destroyed or never created";

// The start of every call on a handle: FDK_OK with `scope` entered (counted
// for fdk_destroy), or the status to return. A NULL or dead handle is
// reported thread-locally, since there is no handle to hold the message.
// The registry's lock is held while the call is counted, so fdk_destroy,
// which unregisters the handle before freeing it, waits for the call.
fdk_status enter_call(const fdk_context* ctx, std::optional<fdk::capi::CallScope>* scope) noexcept {
  fdk_status refused = FDK_OK;
  const fdk_status status = guarded(nullptr, [&] {
    if (!ctx) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    const bool live = Live::of_process().while_live(ctx, [&] {
      scope->emplace(ctx);
      if (!(*scope)->entered()) {
        refused = guarded(ctx, [] { fdk::fail(FDK_ERROR_INVALID_STATE, "the handle is being destroyed"); });
      }
    });
    if (!live) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, kNotLive);
  });
  return status != FDK_OK ? status : refused;
}

}  // namespace

extern "C" {

unsigned fdk_version(void) { return FDK_VERSION_NUMBER; }

const char* fdk_version_string(void) {
  return FDK_STR(FDK_VERSION_MAJOR) "." FDK_STR(FDK_VERSION_MINOR) "." FDK_STR(FDK_VERSION_PATCH);
}

const char* fdk_status_string(fdk_status status) { return fdk::status_name(status); }

fdk_scan* fdk_scan_init(fdk_scan* scan) {
  if (!scan) return scan;
  std::memset(scan, 0, sizeof(*scan));
  scan->struct_size = sizeof(*scan);
  scan->kind = FDK_SCAN_UNIFORM;
  scan->arc_deg = 360.0;
  return scan;
}

fdk_config* fdk_config_init_sized(fdk_config* config, size_t struct_size) {
  if (!config) return config;
  // Only a layout some header declared: writing more than the caller's
  // struct would overwrite whatever follows it. Every field with a default
  // other than zero lies in the 0.1 layout.
  if (struct_size != sizeof(fdk_config) && !fdk::capi::older_config_size(struct_size)) return nullptr;
  std::memset(config, 0, struct_size);
  config->struct_size = static_cast<uint32_t>(struct_size);
  fdk_scan_init(&config->scan);
  config->window = FDK_WINDOW_RAM_LAK;
  config->cutoff = 1.0;
  config->short_scan = FDK_AUTO;
  config->offset_detector = FDK_AUTO;
  config->backend = FDK_BACKEND_AUTO;
  config->precision = FDK_PRECISION_FLOAT32;
  return config;
}

// The symbol that programs built against 0.6 or older headers call: until
// 0.7 it wrote the library's whole struct, 8 bytes past a 0.6 caller's.
// Frozen at the 0.5/0.6 layout (a 0.1-0.4 caller's struct is smaller still:
// those were already overrun by 0.5 and 0.6, and cannot be told apart here).
fdk_config*(fdk_config_init)(fdk_config* config) { return fdk_config_init_sized(config, kConfigSize06); }

fdk_status fdk_create(const fdk_config* config, fdk_context** out) {
  if (out) *out = nullptr;
  return guarded(nullptr, [&] {
    if (!out) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (!config) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "config is NULL");
    // An older caller's struct ends before the appended fields: read only
    // its bytes, the rest keeps fdk_config_init's defaults.
    fdk_config full;
    if (fdk::capi::older_config_size(config->struct_size)) {
      const size_t size = config->struct_size;
      fdk_config_init(&full);
      std::memcpy(&full, config, size);
      full.struct_size = sizeof full;
      config = &full;
    }
    auto ctx = std::make_unique<fdk_context>();
    ctx->recon = std::make_unique<fdk::Reconstruction>(*config, fdk::capi::choose_backend);
    Live::of_process().add(ctx.get());
    *out = ctx.release();
  });
}

void fdk_destroy(fdk_context* ctx) {
  if (!ctx) return;
  try {
    Live& live = Live::of_process();
    bool leave = false;
    const bool was_live = live.while_live(ctx, [&] {
      // From the handle's own progress callback the call that invoked it is
      // still on this thread's stack: freeing the handle under it would
      // crash it, and waiting for it would never end.
      if (ctx->recon->in_own_callback()) {
        fdk::capi::set_error(ctx, std::string(fdk_status_string(FDK_ERROR_INVALID_STATE)) +
                                      ": fdk_destroy from the handle's own progress callback does nothing");
        leave = true;
        return;
      }
      std::lock_guard<std::mutex> lock(ctx->calls_mutex);
      leave = ctx->destroying;  // another thread's fdk_destroy frees it
      ctx->destroying = true;
    });
    if (!was_live || leave) return;  // a dead pointer (destroyed, or never a handle): nothing
    // Calls in progress on other threads are cancelled and waited for.
    std::unique_lock<std::mutex> lock(ctx->calls_mutex);
    if (ctx->calls > 0) {
      ctx->recon->cancel();
      ctx->calls_done.wait(lock, [&] { return ctx->calls == 0; });
    }
    lock.unlock();
    live.remove(ctx);
    delete ctx;
  } catch (...) {
    // Nothing may escape the ABI (a failure to lock leaks the handle).
  }
}

const char* fdk_last_error(const fdk_context* ctx) {
  if (!ctx) return "";
  // The handle's message may be replaced by another thread's failing call
  // at any time: the caller reads a copy of its own, taken under the lock.
  struct CopyTag;
  try {
    std::string& copy = fdk::per_thread<std::string, CopyTag>();
    const bool live = Live::of_process().while_live(ctx, [&] {
      try {
        std::lock_guard<std::mutex> lock(ctx->error_mutex);
        copy = ctx->last_error;
      } catch (...) {
        copy.clear();  // out of memory: no message, the status still says it
      }
    });
    // A dead handle's own message went with it: the thread's, which the
    // call that was given the dead handle set.
    if (!live) return fdk::capi::thread_error();
    return copy.c_str();
  } catch (...) {
    return "";  // no per-thread string could be made
  }
}

const char* fdk_last_create_error(void) { return fdk::capi::thread_error(); }

// Calls on a handle: a NULL or dead handle is reported thread-locally (see
// enter_call). Each call is counted for fdk_destroy.
#define FDK_WITH_CTX(ctx, body)                                                   \
  do {                                                                            \
    std::optional<fdk::capi::CallScope> scope_;                                   \
    if (const fdk_status refused_ = enter_call((ctx), &scope_); refused_ != FDK_OK) \
      return refused_;                                                            \
    return guarded((ctx), [&] body);                                              \
  } while (0)

fdk_status fdk_push_projection(fdk_context* ctx, int32_t index, const float* pixels,
                               size_t row_pitch_bytes, const fdk_view* view) {
  FDK_WITH_CTX(ctx, { ctx->recon->push(index, pixels, row_pitch_bytes, view); });
}

fdk_status fdk_finish(fdk_context* ctx) { FDK_WITH_CTX(ctx, { ctx->recon->finish(); }); }

fdk_status fdk_slab_count(const fdk_context* ctx, int32_t* count) {
  FDK_WITH_CTX(ctx, {
    if (!count) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "count is NULL");
    *count = recon_of(ctx).slab_count();
  });
}

fdk_status fdk_get_slab_info(const fdk_context* ctx, int32_t slab, fdk_slab_info* info) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(info, "fdk_slab_info");
    *info = recon_of(ctx).slab_info(slab);
  });
}

fdk_status fdk_read_slab(fdk_context* ctx, int32_t slab, float* buffer, size_t buffer_bytes) {
  FDK_WITH_CTX(ctx, { ctx->recon->read_slab(slab, buffer, buffer_bytes); });
}

fdk_status fdk_slab_ready(fdk_context* ctx, int32_t slab, int32_t* ready) {
  FDK_WITH_CTX(ctx, {
    if (!ready) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "ready is NULL");
    *ready = 0;
    *ready = ctx->recon->slab_ready(slab) ? 1 : 0;
  });
}

fdk_status fdk_set_progress_callback(fdk_context* ctx, fdk_progress_fn callback, void* user_data) {
  FDK_WITH_CTX(ctx, { ctx->recon->set_progress_callback(callback, user_data); });
}

fdk_status fdk_get_progress(const fdk_context* ctx, fdk_progress* progress) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(progress, "fdk_progress", {kProgressSize04});
    copy_out(recon_of(ctx).progress(), progress);
  });
}

fdk_status fdk_get_geometry_estimate(fdk_context* ctx, fdk_geometry_estimate* estimate) {
  FDK_WITH_CTX(ctx, {
    fdk::capi::check_estimate_struct(estimate);
    fdk::capi::estimate_to_c(recon_of(ctx).geometry_estimate(), estimate);
  });
}

fdk_preview_info* fdk_preview_info_init(fdk_preview_info* info) {
  if (!info) return info;
  std::memset(info, 0, sizeof(*info));
  info->struct_size = sizeof(*info);
  return info;
}

fdk_status fdk_get_preview_info(fdk_context* ctx, fdk_preview_info* info) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(info, "fdk_preview_info");
    preview_info_to_c(recon_of(ctx).preview().state(), info);
  });
}

fdk_status fdk_read_preview(fdk_context* ctx, float* buffer, size_t buffer_bytes, fdk_preview_info* info) {
  FDK_WITH_CTX(ctx, {
    if (info) check_out_struct_sizes(info, "fdk_preview_info");
    fdk::Preview& preview = recon_of(ctx).preview();
    if (!buffer) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "buffer is NULL");
    const uint64_t need = 4 * fdk::grid_voxels(preview.grid());
    if (buffer_bytes < need)
      fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "buffer_bytes is " + std::to_string(buffer_bytes) +
                                                ": the preview volume needs " + std::to_string(need));
    const fdk::PreviewState state = preview.read(buffer);
    if (info) preview_info_to_c(state, info);
  });
}

fdk_status fdk_read_preview_slices(fdk_context* ctx, const fdk_preview_slices* slices, fdk_preview_info* info) {
  FDK_WITH_CTX(ctx, { read_preview_slices(recon_of(ctx).preview(), slices, info); });
}

fdk_status fdk_cancel(fdk_context* ctx) { FDK_WITH_CTX(ctx, { ctx->recon->cancel(); }); }

fdk_status fdk_get_store_info(const fdk_context* ctx, fdk_store_info* info) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(info, "fdk_store_info", {kStoreInfoSize02});
    copy_out(recon_of(ctx).store_info(), info);
  });
}

fdk_status fdk_get_plan_info(const fdk_context* ctx, fdk_plan_info* info) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(info, "fdk_plan_info", {kPlanInfoSize01, kPlanInfoSize02});
    copy_out(recon_of(ctx).plan_info(), info);
  });
}

fdk_status fdk_get_view_state(const fdk_context* ctx, int32_t index, int32_t* state, int32_t* failure) {
  if (state) *state = FDK_VIEW_ABSENT;
  if (failure) *failure = FDK_OK;
  FDK_WITH_CTX(ctx, {
    if (!state) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "state is NULL");
    fdk_status lost = FDK_OK;
    *state = recon_of(ctx).view_state(index, &lost);
    if (failure) *failure = lost;
  });
}

fdk_status fdk_get_timings(const fdk_context* ctx, fdk_timings* timings) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(timings, "fdk_timings");
    *timings = ctx->recon->timings();
  });
}

fdk_status fdk_get_device_stats(const fdk_context* ctx, fdk_device_stats* stats) {
  FDK_WITH_CTX(ctx, {
    check_out_struct_sizes(stats, "fdk_device_stats");
    *stats = ctx->recon->device_stats();
  });
}

}  // extern "C"
