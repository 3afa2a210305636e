// The extern "C" surface of libfdk_mpi: argument checks, then the rank's
// composition root (Rank), every failure a status and a message.
#include <fdk/fdk_mpi.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "fdk/core/per_thread.hpp"
#include "live_handles.hpp"
#include "rank.hpp"
#include "run_guarded.hpp"
#include "struct_size.hpp"

struct fdk_mpi_context {
  std::unique_ptr<fdk::mpi::Rank> rank;
  std::mutex op_mutex;  // the calls that communicate, one at a time
  mutable std::mutex error_mutex;
  std::string last_error;
};

namespace {

struct CreateErrorTag;
std::string& create_error() { return fdk::per_thread<std::string, CreateErrorTag>(); }
struct ErrorCopyTag;

using Live = fdk::capi::LiveHandles<fdk_mpi_context>;
constexpr const char* kNotLive = "not a live fdk_mpi handle: destroyed or never created";

template <class Body>
fdk_status guarded(const fdk_mpi_context* ctx, Body&& body) noexcept {
  return fdk::capi::run_guarded(std::forward<Body>(body), [ctx](const std::string& full) {
    if (!ctx) {
      create_error() = full;
      return;
    }
    std::lock_guard<std::mutex> lock(ctx->error_mutex);
    const_cast<fdk_mpi_context*>(ctx)->last_error = full;
  });
}

// Every entry point given a handle but fdk_mpi_destroy: a NULL or dead
// handle is INVALID_ARGUMENT with the message kept per thread (there is no
// handle to hold it), never a use after free.
template <class Body>
fdk_status on_live(const fdk_mpi_context* ctx, Body&& body) noexcept {
  bool live = false;
  const fdk_status refused = guarded(nullptr, [&] {
    if (!ctx) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    if (!Live::of_process().contains(ctx)) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, kNotLive);
    live = true;
  });
  return live ? guarded(ctx, std::forward<Body>(body)) : refused;
}

void require(bool ok, const char* what) {
  if (!ok) fdk::fail(FDK_ERROR_INVALID_ARGUMENT, what);
}

using fdk::capi::check_out_struct_sizes;

// fdk_mpi_rank_info as 0.8 laid it out.
constexpr size_t kRankInfoSize08 = offsetof(fdk_mpi_rank_info, shared_memory_ranks);

}  // namespace

extern "C" {

fdk_mpi_config* fdk_mpi_config_init(fdk_mpi_config* config) {
  if (!config) return config;
  std::memset(config, 0, sizeof *config);
  config->struct_size = sizeof *config;
  config->root = FDK_MPI_EVERY_RANK;
  return config;
}

fdk_status fdk_mpi_create(const fdk_config* config, const fdk_mpi_config* mpi_config, MPI_Comm comm,
                          fdk_mpi_context** out) {
  return guarded(nullptr, [&] {
    if (out) *out = nullptr;
    // Argument errors are this rank's verdict in the first exchange (the
    // others then fail at once, naming it), not a return before it.
    std::unique_ptr<fdk::Error> early;
    fdk_mpi_config mpi;
    fdk_mpi_config_init(&mpi);
    const auto refuse = [&](fdk_status code, const std::string& why) {
      if (!early) early = std::make_unique<fdk::Error>(code, why);
    };
    if (!out) refuse(FDK_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (!mpi_config)
      refuse(FDK_ERROR_INVALID_ARGUMENT, "mpi_config is NULL");
    else if (mpi_config->struct_size != sizeof(fdk_mpi_config))
      refuse(FDK_ERROR_STRUCT_SIZE, "mpi_config->struct_size must be sizeof(fdk_mpi_config): init it with fdk_mpi_config_init");
    else
      mpi = *mpi_config;
    if (mpi.max_in_flight_bytes == 0) mpi.max_in_flight_bytes = uint64_t{256} << 20;
    if (mpi.timeout_s == 0) mpi.timeout_s = 120;
    if (!(mpi.timeout_s > 0 && mpi.timeout_s <= 1e6)) {
      refuse(FDK_ERROR_INVALID_ARGUMENT, "fdk_mpi_config.timeout_s must lie within (0, 1e6]");
      mpi.timeout_s = 120;  // still bounds the exchange that reports it
    }
    if (!std::isfinite(mpi.capacity)) refuse(FDK_ERROR_INVALID_ARGUMENT, "fdk_mpi_config.capacity is not finite");
    // A rank holds only its band of each view's rows; the estimate needs
    // rows across the whole detector (fdk_estimator does it from files).
    if (config && config->struct_size == sizeof(fdk_config) && config->estimate_geometry != 0)
      refuse(FDK_ERROR_INVALID_ARGUMENT,
             "estimate_geometry is not supported under libfdk_mpi: a rank holds only its band of each view's rows; "
             "estimate with fdk_estimator before the distributed run");
    // Each rank filters only its band of rows: no rank has whole views.
    if (config && config->struct_size == sizeof(fdk_config) && config->preview != 0)
      refuse(FDK_ERROR_INVALID_ARGUMENT,
             "preview is not supported under libfdk_mpi: a rank holds only its band of each view's rows");
    auto ctx = std::make_unique<fdk_mpi_context>();
    ctx->rank = std::make_unique<fdk::mpi::Rank>(config, mpi, comm, early.get());
    Live::of_process().add(ctx.get());
    *out = ctx.release();
  });
}

void fdk_mpi_destroy(fdk_mpi_context* ctx) {
  if (!ctx) return;
  try {
    if (!Live::of_process().remove(ctx)) return;  // destroyed already, or never a handle
    std::lock_guard<std::mutex> lock(ctx->op_mutex);
    ctx->rank.reset();
  } catch (...) {
  }
  delete ctx;
}

const char* fdk_mpi_last_error(const fdk_mpi_context* ctx) {
  if (!ctx) return "";
  try {
    // A dead handle's own message went with it: the thread's, which the
    // call that was given the dead handle set.
    if (!Live::of_process().contains(ctx)) return create_error().c_str();
    std::string& copy = fdk::per_thread<std::string, ErrorCopyTag>();
    std::lock_guard<std::mutex> lock(ctx->error_mutex);
    copy = ctx->last_error;
    return copy.c_str();
  } catch (...) {
    return "";
  }
}

const char* fdk_mpi_last_create_error(void) {
  try {
    return create_error().c_str();
  } catch (...) {
    return "";
  }
}

fdk_status fdk_mpi_push_projection(fdk_mpi_context* ctx, int32_t index, const float* pixels, size_t row_pitch_bytes,
                                   const fdk_view* view) {
  return on_live(ctx, [&] {
    std::lock_guard<std::mutex> lock(ctx->op_mutex);
    ctx->rank->push(index, pixels, row_pitch_bytes, view);
  });
}

fdk_status fdk_mpi_finish(fdk_mpi_context* ctx) {
  return on_live(ctx, [&] {
    std::lock_guard<std::mutex> lock(ctx->op_mutex);
    ctx->rank->finish();
  });
}

fdk_status fdk_mpi_slab_count(const fdk_mpi_context* ctx, int32_t* count) {
  return on_live(ctx, [&] {
    require(count != nullptr, "count is NULL");
    *count = ctx->rank->slab_count();
  });
}

fdk_status fdk_mpi_get_slab_info(const fdk_mpi_context* ctx, int32_t slab, fdk_slab_info* info) {
  return on_live(ctx, [&] {
    check_out_struct_sizes(info, "info");
    *info = ctx->rank->slab_info(slab);
  });
}

fdk_status fdk_mpi_slab_owner(const fdk_mpi_context* ctx, int32_t slab, int32_t* rank) {
  return on_live(ctx, [&] {
    require(rank != nullptr, "rank is NULL");
    *rank = ctx->rank->owner(slab);
  });
}

fdk_status fdk_mpi_get_rank_info(const fdk_mpi_context* ctx, int32_t rank, fdk_mpi_rank_info* info) {
  return on_live(ctx, [&] {
    check_out_struct_sizes(info, "info", {kRankInfoSize08});
    fdk::capi::copy_out(ctx->rank->rank_info(rank), info);
  });
}

fdk_status fdk_mpi_read_slab(fdk_mpi_context* ctx, int32_t slab, float* buffer, size_t buffer_bytes) {
  return on_live(ctx, [&] { ctx->rank->read_slab(slab, buffer, buffer_bytes); });
}

fdk_status fdk_mpi_get_progress(const fdk_mpi_context* ctx, fdk_progress* progress) {
  return on_live(ctx, [&] {
    check_out_struct_sizes(progress, "progress");
    *progress = ctx->rank->progress();
  });
}

fdk_status fdk_mpi_cancel(fdk_mpi_context* ctx) {
  return on_live(ctx, [&] { ctx->rank->cancel(); });
}

}  // extern "C"
