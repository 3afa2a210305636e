// Every misuse returns its documented status, says why, and leaves the handle
// usable with its stored projections intact: after all of them the volume is
// bit-identical to a clean run.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "small_scan.hpp"

using fdk_test::SmallScan;

namespace {

struct Handle {
  fdk_context* ctx = nullptr;
  ~Handle() { fdk_destroy(ctx); }
};

std::vector<float> clean_volume(const SmallScan& scan) {
  Handle h;
  EXPECT_EQ(fdk_create(&scan.config, &h.ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  EXPECT_EQ(fdk_finish(h.ctx), FDK_OK);
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK);
  return volume;
}

int views_stored(const fdk_context* ctx) {
  fdk_store_info info{};
  info.struct_size = sizeof(info);
  EXPECT_EQ(fdk_get_store_info(ctx, &info), FDK_OK);
  return info.views_stored;
}

// Views pushed and not refused (some may still be on their way to the store).
int views_accepted(const fdk_context* ctx) {
  fdk_progress p{};
  p.struct_size = sizeof(p);
  EXPECT_EQ(fdk_get_progress(ctx, &p), FDK_OK);
  return p.views_pushed;
}

// The message names the status and is not empty beyond it.
void expect_message(const fdk_context* ctx, fdk_status status, const char* needle) {
  const std::string msg = ctx ? fdk_last_error(ctx) : fdk_last_create_error();
  EXPECT_NE(msg.find(fdk_status_string(status)), std::string::npos) << msg;
  EXPECT_NE(msg.find(needle), std::string::npos) << "message '" << msg << "' lacks '" << needle << "'";
}

}  // namespace

TEST(Misuse, NullArgumentsWithoutHandle) {
  SmallScan scan(16, 8, 16);
  fdk_context* ctx = reinterpret_cast<fdk_context*>(0x1);
  EXPECT_EQ(fdk_create(nullptr, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  expect_message(nullptr, FDK_ERROR_INVALID_ARGUMENT, "config");
  EXPECT_EQ(fdk_create(&scan.config, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(nullptr, FDK_ERROR_INVALID_ARGUMENT, "out");
  EXPECT_EQ(fdk_push_projection(nullptr, 0, scan.pixels(0), scan.pitch(), nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_finish(nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_read_slab(nullptr, 0, nullptr, 0), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_cancel(nullptr), FDK_ERROR_INVALID_ARGUMENT);
  int32_t count = 0;
  EXPECT_EQ(fdk_slab_count(nullptr, &count), FDK_ERROR_INVALID_ARGUMENT);
  int32_t ready = 7;
  EXPECT_EQ(fdk_slab_ready(nullptr, 0, &ready), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(nullptr, FDK_ERROR_INVALID_ARGUMENT, "ctx");
  fdk_device_stats stats{};
  stats.struct_size = sizeof(stats);
  EXPECT_EQ(fdk_get_device_stats(nullptr, &stats), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(fdk_last_error(nullptr), "");
  fdk_destroy(nullptr);  // NULL-safe
  EXPECT_EQ(fdk_config_init(nullptr), nullptr);
}

// fdk_alloc_host's buffers: aligned, usable for reads, and freed once;
// bad arguments and foreign pointers get a status and a message, never a
// crash or a corrupted heap.
TEST(Misuse, HostBuffersAreCheckedOnAllocationAndFree) {
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(fdk_alloc_host(0, &p), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(p, nullptr);
  EXPECT_NE(std::string(fdk_last_create_error()).find("bytes is 0"), std::string::npos);
  EXPECT_EQ(fdk_alloc_host(64, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_alloc_host(SIZE_MAX, &p), FDK_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(p, nullptr);

  // A slab read into one is the same as into ordinary memory.
  const SmallScan scan;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  fdk_slab_info info{};
  info.struct_size = sizeof(info);
  ASSERT_EQ(fdk_get_slab_info(ctx, 0, &info), FDK_OK);
  std::vector<float> ordinary(info.byte_size / sizeof(float));
  ASSERT_EQ(fdk_read_slab(ctx, 0, ordinary.data(), info.byte_size), FDK_OK);
  void* buffer = nullptr;
  ASSERT_EQ(fdk_alloc_host(info.byte_size, &buffer), FDK_OK) << fdk_last_create_error();
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 64, 0u);
  ASSERT_EQ(fdk_read_slab(ctx, 0, static_cast<float*>(buffer), info.byte_size), FDK_OK);
  EXPECT_EQ(std::memcmp(buffer, ordinary.data(), info.byte_size), 0);
  fdk_destroy(ctx);

  EXPECT_EQ(fdk_free_host(nullptr), FDK_OK);
  std::vector<float> foreign(16);
  EXPECT_EQ(fdk_free_host(foreign.data()), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_create_error()).find("not allocated by fdk_alloc_host"), std::string::npos);
  EXPECT_EQ(fdk_free_host(buffer), FDK_OK);
  EXPECT_EQ(fdk_free_host(buffer), FDK_ERROR_INVALID_ARGUMENT);  // freed already
}

TEST(Misuse, StatusStringsArePinned) {
  EXPECT_EQ(FDK_OK, 0);
  EXPECT_EQ(FDK_ERROR_INVALID_ARGUMENT, 1);
  EXPECT_EQ(FDK_ERROR_OUT_OF_RANGE, 2);
  EXPECT_EQ(FDK_ERROR_INVALID_STATE, 3);
  EXPECT_EQ(FDK_ERROR_DUPLICATE, 4);
  EXPECT_EQ(FDK_ERROR_BUDGET, 5);
  EXPECT_EQ(FDK_ERROR_OUT_OF_MEMORY, 6);
  EXPECT_EQ(FDK_ERROR_BACKEND_UNAVAILABLE, 7);
  EXPECT_EQ(FDK_ERROR_DEVICE, 8);
  EXPECT_EQ(FDK_ERROR_CANCELLED, 9);
  EXPECT_EQ(FDK_ERROR_UNSUPPORTED, 10);
  EXPECT_EQ(FDK_ERROR_STRUCT_SIZE, 11);
  EXPECT_EQ(FDK_ERROR_INTERNAL, 12);
  for (int s = 0; s <= 12; ++s)
    EXPECT_EQ(std::string(fdk_status_string(static_cast<fdk_status>(s))).rfind("FDK_", 0), 0u);
  EXPECT_STREQ(fdk_status_string(static_cast<fdk_status>(999)), "FDK_ERROR_UNKNOWN_STATUS");
  EXPECT_EQ(fdk_version(), static_cast<unsigned>(FDK_VERSION_NUMBER));
}

TEST(Misuse, BadConfigurationsAreRejectedWithTheirField) {
  const SmallScan scan(16, 8, 16);
  struct Case {
    const char* name;
    void (*mutate)(fdk_config&);
    fdk_status status;
    const char* needle;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  static double s_nan;
  s_nan = nan;
  const Case cases[] = {
      {"struct_size", [](fdk_config& c) { c.struct_size = 8; }, FDK_ERROR_STRUCT_SIZE, "fdk_config_init"},
      {"scan struct_size", [](fdk_config& c) { c.scan.struct_size = 0; }, FDK_ERROR_STRUCT_SIZE, "scan"},
      {"volume size", [](fdk_config& c) { c.volume.size[1] = 0; }, FDK_ERROR_INVALID_ARGUMENT, "volume y size"},
      {"volume spacing NaN", [](fdk_config& c) { c.volume.spacing[0] = s_nan; }, FDK_ERROR_INVALID_ARGUMENT, "volume x spacing"},
      {"volume spacing <0", [](fdk_config& c) { c.volume.spacing[2] = -1; }, FDK_ERROR_INVALID_ARGUMENT, "volume z spacing"},
      {"detector rows", [](fdk_config& c) { c.detector.size[1] = 1; }, FDK_ERROR_INVALID_ARGUMENT, "detector v"},
      {"detector origin", [](fdk_config& c) { c.detector.origin[0] = s_nan; }, FDK_ERROR_INVALID_ARGUMENT, "detector u"},
      {"window", [](fdk_config& c) { c.window = 99; }, FDK_ERROR_INVALID_ARGUMENT, "window"},
      {"cutoff", [](fdk_config& c) { c.cutoff = 0; }, FDK_ERROR_INVALID_ARGUMENT, "cutoff"},
      {"padding", [](fdk_config& c) { c.truncation_padding = 2; }, FDK_ERROR_INVALID_ARGUMENT, "truncation_padding"},
      {"short_scan", [](fdk_config& c) { c.short_scan = 7; }, FDK_ERROR_INVALID_ARGUMENT, "short_scan"},
      {"backend", [](fdk_config& c) { c.backend = 5; }, FDK_ERROR_INVALID_ARGUMENT, "backend"},
      {"devices", [](fdk_config& c) { c.num_devices = 17; }, FDK_ERROR_INVALID_ARGUMENT, "num_devices"},
      {"precision", [](fdk_config& c) { c.precision = 3; }, FDK_ERROR_INVALID_ARGUMENT, "precision"},
      {"threads", [](fdk_config& c) { c.num_threads = -1; }, FDK_ERROR_INVALID_ARGUMENT, "num_threads"},
      {"num_views", [](fdk_config& c) { c.scan.num_views = 0; }, FDK_ERROR_INVALID_ARGUMENT, "num_views"},
      {"arc", [](fdk_config& c) { c.scan.arc_deg = 0; }, FDK_ERROR_INVALID_ARGUMENT, "arc_deg"},
      {"sid", [](fdk_config& c) { c.scan.uniform.sid = -5; }, FDK_ERROR_INVALID_ARGUMENT, "SID"},
      {"sdd NaN", [](fdk_config& c) { c.scan.uniform.sdd = s_nan; }, FDK_ERROR_INVALID_ARGUMENT, "SDD"},
      {"views NULL", [](fdk_config& c) { c.scan.kind = FDK_SCAN_VIEWS; }, FDK_ERROR_INVALID_ARGUMENT, "scan.views"},
      {"matrices NULL", [](fdk_config& c) { c.scan.kind = FDK_SCAN_MATRICES; }, FDK_ERROR_INVALID_ARGUMENT, "scan.matrices"},
      {"scan kind", [](fdk_config& c) { c.scan.kind = 9; }, FDK_ERROR_INVALID_ARGUMENT, "scan.kind"},
      {"first angle 1e300", [](fdk_config& c) { c.scan.first_angle_deg = 1e300; }, FDK_ERROR_INVALID_ARGUMENT,
       "scan.first_angle_deg is 1e+300 degrees"},
      {"in-plane angle 1e7", [](fdk_config& c) { c.scan.uniform.in_plane_angle_deg = -1e7; }, FDK_ERROR_INVALID_ARGUMENT,
       "[-1e6, 1e6]"},
      {"half fan, axis off the detector",
       [](fdk_config& c) { c.offset_detector = FDK_ON; c.detector.origin[0] = 2 * c.detector.spacing[0]; },
       FDK_ERROR_INVALID_ARGUMENT, "offset_detector"},
      {"outside_fov", [](fdk_config& c) { c.outside_fov = 2; }, FDK_ERROR_INVALID_ARGUMENT, "outside_fov"},
      {"arc < 180", [](fdk_config& c) { c.scan.arc_deg = 90; }, FDK_ERROR_INVALID_ARGUMENT, "180"},
      {"host budget", [](fdk_config& c) { c.host_memory_budget = 1024; }, FDK_ERROR_BUDGET, "budget"},
      {"slab too thick", [](fdk_config& c) { c.host_memory_budget = 30000; c.slab_thickness = 16; }, FDK_ERROR_BUDGET, "budget"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    fdk_config config = scan.config;
    c.mutate(config);
    fdk_context* ctx = nullptr;
    EXPECT_EQ(fdk_create(&config, &ctx), c.status);
    EXPECT_EQ(ctx, nullptr);
    expect_message(nullptr, c.status, c.needle);
    fdk_destroy(ctx);
  }
}

// A caller compiled against 0.1 passes its smaller structs: fdk_create
// reads only what its fdk_config holds (the appended fields take their
// defaults) and fdk_get_plan_info writes only what its fdk_plan_info holds.
TEST(Misuse, CallersOfTheFirstLayoutStillWork) {
  const SmallScan scan(16, 8, 16);
  const size_t config01 = offsetof(fdk_config, outside_fov), plan01 = offsetof(fdk_plan_info, outside_fov);
  // The old struct, followed by bytes that are no valid outside_fov.
  std::vector<unsigned char> buffer(sizeof(fdk_config) + 64, 0xAB);
  std::memcpy(buffer.data(), &scan.config, config01);
  reinterpret_cast<fdk_config*>(buffer.data())->struct_size = static_cast<uint32_t>(config01);
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(reinterpret_cast<const fdk_config*>(buffer.data()), &ctx), FDK_OK) << fdk_last_create_error();
  std::vector<unsigned char> out(sizeof(fdk_plan_info) + 64, 0xCD);
  reinterpret_cast<fdk_plan_info*>(out.data())->struct_size = static_cast<uint32_t>(plan01);
  EXPECT_EQ(fdk_get_plan_info(ctx, reinterpret_cast<fdk_plan_info*>(out.data())), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(reinterpret_cast<fdk_plan_info*>(out.data())->struct_size, plan01);
  EXPECT_GE(reinterpret_cast<fdk_plan_info*>(out.data())->num_slabs, 1);
  for (size_t i = plan01; i < out.size(); ++i) ASSERT_EQ(out[i], 0xCD) << "byte " << i << " written";
  fdk_plan_info full{};
  full.struct_size = sizeof full;
  ASSERT_EQ(fdk_get_plan_info(ctx, &full), FDK_OK);
  EXPECT_EQ(full.outside_fov, FDK_OUTSIDE_FOV_BACKPROJECT);
  fdk_destroy(ctx);
  // Any other size is still refused.
  fdk_plan_info odd{};
  odd.struct_size = static_cast<uint32_t>(plan01 + 4);
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  EXPECT_EQ(fdk_get_plan_info(ctx, &odd), FDK_ERROR_STRUCT_SIZE);
  fdk_destroy(ctx);
}

// Where CUDA cannot be had (no CUDA backend in the build, no NVIDIA driver
// or one too old, no device),
// asking for it is refused with a message naming the reason; where it can,
// the context runs on it.
TEST(Misuse, CudaRequestIsRefusedClearlyOrHonoured) {
  SmallScan scan(16, 8, 16);
  scan.config.backend = FDK_BACKEND_CUDA;
  fdk_context* ctx = nullptr;
  const fdk_status s = fdk_create(&scan.config, &ctx);
  if (s == FDK_OK) {
    fdk_plan_info plan{};
    plan.struct_size = sizeof(plan);
    EXPECT_EQ(fdk_get_plan_info(ctx, &plan), FDK_OK);
    EXPECT_EQ(plan.backend, FDK_BACKEND_CUDA);
    fdk_destroy(ctx);
    return;
  }
  EXPECT_EQ(s, FDK_ERROR_BACKEND_UNAVAILABLE);
  EXPECT_EQ(ctx, nullptr);
  const std::string msg = fdk_last_create_error();
  EXPECT_TRUE(msg.find("CUDA") != std::string::npos || msg.find("NVIDIA driver") != std::string::npos) << msg;
#ifdef FDK_TEST_CUDA_BUILT
  // The backend is in the build: the reason is the machine's, and the same
  // fdk_get_backend_info gives.
  EXPECT_EQ(msg.find("no CUDA backend"), std::string::npos) << msg;
  fdk_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(fdk_get_backend_info(&info), FDK_OK);
  EXPECT_EQ(info.cuda_built, 1);
  EXPECT_EQ(info.cuda_usable, 0);
  EXPECT_NE(msg.find(info.message), std::string::npos) << msg << " / " << info.message;
  const char* no_driver = std::getenv("FDK_TEST_EXPECT_NO_CUDA_DRIVER");
  if (no_driver && std::string(no_driver) == "1") {
    EXPECT_NE(msg.find("the NVIDIA driver is not installed"), std::string::npos) << msg;
  }
#else
  EXPECT_NE(msg.find("no CUDA backend"), std::string::npos) << msg;
#endif
}

TEST(Misuse, EveryBadCallLeavesTheHandleAndStoreIntact) {
  const SmallScan scan;
  const std::vector<float> reference = clean_volume(scan);

  Handle h;
  ASSERT_EQ(fdk_create(&scan.config, &h.ctx), FDK_OK) << fdk_last_create_error();
  const int n = scan.views();
  // Read and finish before anything arrived.
  std::vector<float> buffer(32 * 32 * 32);
  EXPECT_EQ(fdk_read_slab(h.ctx, 0, buffer.data(), buffer.size() * 4), FDK_ERROR_INVALID_STATE);
  expect_message(h.ctx, FDK_ERROR_INVALID_STATE, "before fdk_finish");
  EXPECT_EQ(fdk_finish(h.ctx), FDK_ERROR_INVALID_STATE);
  expect_message(h.ctx, FDK_ERROR_INVALID_STATE, "before any projection");

  for (int v = 0; v < n / 2; ++v)
    ASSERT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(views_accepted(h.ctx), n / 2);

  std::vector<float> bad(scan.projections[static_cast<size_t>(n / 2)]);
  const int nu = scan.config.detector.size[0];
  EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, nullptr, scan.pitch(), nullptr), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "pixels is NULL");
  EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, bad.data(), scan.pitch() - 4, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "row_pitch_bytes");
  EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, bad.data(), scan.pitch() + 2, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  bad[static_cast<size_t>(3 * nu + 5)] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, bad.data(), scan.pitch(), nullptr), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "column 5, row 3");
  bad[static_cast<size_t>(3 * nu + 5)] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, bad.data(), scan.pitch(), nullptr), FDK_ERROR_INVALID_ARGUMENT);
  // Finite but absurd: near FLT_MAX the filter's sums overflowed into a NaN
  // volume that fdk_finish called OK.
  for (float huge : {std::numeric_limits<float>::max(), -3e20f}) {
    bad[static_cast<size_t>(3 * nu + 5)] = huge;
    EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, bad.data(), scan.pitch(), nullptr), FDK_ERROR_INVALID_ARGUMENT);
    expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "[-1e20, 1e20]");
  }
  bad[static_cast<size_t>(3 * nu + 5)] = scan.projections[static_cast<size_t>(n / 2)][static_cast<size_t>(3 * nu + 5)];
  EXPECT_EQ(fdk_push_projection(h.ctx, -1, scan.pixels(0), scan.pitch(), nullptr), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(fdk_push_projection(h.ctx, n, scan.pixels(0), scan.pitch(), nullptr), FDK_ERROR_OUT_OF_RANGE);
  expect_message(h.ctx, FDK_ERROR_OUT_OF_RANGE, "index");
  EXPECT_EQ(fdk_push_projection(h.ctx, 0, scan.pixels(0), scan.pitch(), nullptr), FDK_ERROR_DUPLICATE);
  expect_message(h.ctx, FDK_ERROR_DUPLICATE, "already pushed");
  fdk_view broken{};
  broken.sid = 0;
  broken.sdd = 750;
  EXPECT_EQ(fdk_push_projection(h.ctx, n / 2, scan.pixels(n / 2), scan.pitch(), &broken), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "SID");
  fdk_slab_info info{};
  EXPECT_EQ(fdk_get_slab_info(h.ctx, 0, &info), FDK_ERROR_STRUCT_SIZE);
  info.struct_size = sizeof(info);
  EXPECT_EQ(fdk_get_slab_info(h.ctx, 99, &info), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(views_accepted(h.ctx), n / 2);  // nothing half-taken

  for (int v = n / 2; v < n; ++v)
    ASSERT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(h.ctx);
  ASSERT_EQ(fdk_finish(h.ctx), FDK_OK);
  EXPECT_EQ(views_stored(h.ctx), n);  // finish waits for the background stores
  EXPECT_EQ(fdk_finish(h.ctx), FDK_ERROR_INVALID_STATE);
  expect_message(h.ctx, FDK_ERROR_INVALID_STATE, "already");
  EXPECT_EQ(fdk_push_projection(h.ctx, 0, scan.pixels(0), scan.pitch(), nullptr), FDK_ERROR_INVALID_STATE);
  expect_message(h.ctx, FDK_ERROR_INVALID_STATE, "after fdk_finish");
  EXPECT_EQ(fdk_read_slab(h.ctx, -1, buffer.data(), buffer.size() * 4), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(fdk_read_slab(h.ctx, 0, nullptr, buffer.size() * 4), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_read_slab(h.ctx, 0, buffer.data(), 16), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "buffer_bytes");

  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK);
  ASSERT_EQ(volume.size(), reference.size());
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), volume.size() * 4), 0);
}

TEST(Misuse, StoreOutgrowingTheBudgetIsRefusedAndTheRestStillWorks) {
  SmallScan scan;
  scan.config.slab_thickness = scan.config.volume.size[1];
  // The smallest budget the planner accepts (to 4 KiB), and one view's size.
  uint64_t minimal = 4096;
  fdk_context* ctx = nullptr;
  for (;; minimal += 4096) {
    scan.config.host_memory_budget = minimal;
    const fdk_status s = fdk_create(&scan.config, &ctx);
    if (s == FDK_OK) break;
    ASSERT_EQ(s, FDK_ERROR_BUDGET);
    ASSERT_LT(minimal, 64ull << 20);
  }
  fdk_destroy(ctx);
  scan.config.host_memory_budget = 0;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  ASSERT_EQ(fdk_push_projection(ctx, 0, scan.pixels(0), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);  // the view is stored by then
  fdk_store_info store{};
  store.struct_size = sizeof(store);
  ASSERT_EQ(fdk_get_store_info(ctx, &store), FDK_OK);
  fdk_destroy(ctx);

  // Room for about three compressed views beyond the plan's reserve.
  scan.config.host_memory_budget = minimal + 3 * store.stored_bytes;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  int accepted = 0;
  fdk_status last = FDK_OK;
  for (int v = 0; v < scan.views() && last == FDK_OK; ++v) {
    last = fdk_push_projection(ctx, v, scan.pixels(v), scan.pitch(), nullptr);
    if (last == FDK_OK) ++accepted;
  }
  EXPECT_EQ(last, FDK_ERROR_BUDGET) << fdk_last_error(ctx);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("host memory budget"), std::string::npos);
  EXPECT_GE(accepted, 1);
  EXPECT_LT(accepted, scan.views());
  EXPECT_EQ(views_accepted(ctx), accepted);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK);  // fewer views than announced: legal
  EXPECT_EQ(views_stored(ctx), accepted);  // finish waited for the background stores
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(ctx, volume), FDK_OK) << fdk_last_error(ctx);
  fdk_destroy(ctx);
}

// fdk_slab_ready and fdk_get_device_stats: every misuse has its status and
// message, and none of them disturbs the reconstruction.
TEST(Misuse, SlabReadyAndDeviceStatsRefuseMisuse) {
  SmallScan scan;
  scan.config.slab_thickness = 8;
  const std::vector<float> reference = clean_volume(scan);
  Handle h;
  ASSERT_EQ(fdk_create(&scan.config, &h.ctx), FDK_OK) << fdk_last_create_error();
  int32_t ready = 7;
  // Before fdk_finish (also before any projection).
  EXPECT_EQ(fdk_slab_ready(h.ctx, 0, &ready), FDK_ERROR_INVALID_STATE);
  expect_message(h.ctx, FDK_ERROR_INVALID_STATE, "before fdk_finish");
  EXPECT_EQ(fdk_slab_ready(h.ctx, 0, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "ready is NULL");

  fdk_device_stats stats{};
  EXPECT_EQ(fdk_get_device_stats(h.ctx, &stats), FDK_ERROR_STRUCT_SIZE);
  expect_message(h.ctx, FDK_ERROR_STRUCT_SIZE, "fdk_device_stats");
  EXPECT_EQ(fdk_get_device_stats(h.ctx, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(h.ctx, FDK_ERROR_INVALID_ARGUMENT, "fdk_device_stats is NULL");
  stats.struct_size = sizeof(stats) + 8;
  EXPECT_EQ(fdk_get_device_stats(h.ctx, &stats), FDK_ERROR_STRUCT_SIZE);
  // Any time, also before fdk_finish: no GPU on the CPU backend.
  std::memset(&stats, 0xff, sizeof(stats));
  stats.struct_size = sizeof(stats);
  ASSERT_EQ(fdk_get_device_stats(h.ctx, &stats), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_EQ(stats.struct_size, sizeof(stats));
  EXPECT_EQ(stats.num_devices, 0);
  EXPECT_EQ(stats.ordinal[0], 0);
  EXPECT_EQ(stats.busy_seconds[0], 0.0);

  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK);
  EXPECT_EQ(fdk_slab_ready(h.ctx, 0, &ready), FDK_ERROR_INVALID_STATE);
  ASSERT_EQ(fdk_finish(h.ctx), FDK_OK);
  int32_t count = 0;
  ASSERT_EQ(fdk_slab_count(h.ctx, &count), FDK_OK);
  ASSERT_EQ(count, 4);
  ready = 7;
  EXPECT_EQ(fdk_slab_ready(h.ctx, -1, &ready), FDK_ERROR_OUT_OF_RANGE);
  expect_message(h.ctx, FDK_ERROR_OUT_OF_RANGE, "slab -1");
  EXPECT_EQ(fdk_slab_ready(h.ctx, count, &ready), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(ready, 0);  // written 0 on failure
  EXPECT_EQ(fdk_slab_ready(h.ctx, 0, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(fdk_slab_ready(h.ctx, 1, &ready), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_TRUE(ready == 0 || ready == 1) << ready;
  ASSERT_EQ(fdk_get_device_stats(h.ctx, &stats), FDK_OK);
  EXPECT_EQ(stats.num_devices, 0);

  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK) << fdk_last_error(h.ctx);
  ASSERT_EQ(volume.size(), reference.size());
  EXPECT_EQ(std::memcmp(volume.data(), reference.data(), volume.size() * 4), 0);

  // After fdk_cancel: CANCELLED, while the statistics still answer.
  ASSERT_EQ(fdk_cancel(h.ctx), FDK_OK);
  EXPECT_EQ(fdk_slab_ready(h.ctx, 0, &ready), FDK_ERROR_CANCELLED);
  expect_message(h.ctx, FDK_ERROR_CANCELLED, "cancelled");
  EXPECT_EQ(fdk_get_device_stats(h.ctx, &stats), FDK_OK);
}

// fdk_get_view_state: ABSENT before a push and after a refused one, STORED
// once finish has waited for it; bad arguments refused with their name.
TEST(Misuse, ViewStateIsQueriedAndItsMisuseRefused) {
  SmallScan scan;
  fdk_context* ctx = nullptr;
  ASSERT_EQ(fdk_create(&scan.config, &ctx), FDK_OK);
  int32_t state = -1, failure = -1;
  ASSERT_EQ(fdk_get_view_state(ctx, 0, &state, &failure), FDK_OK);
  EXPECT_EQ(state, FDK_VIEW_ABSENT);
  EXPECT_EQ(failure, FDK_OK);
  std::vector<float> bad(scan.pixels(1), scan.pixels(1) + scan.config.detector.size[0] * scan.config.detector.size[1]);
  bad[5] = std::nanf("");
  EXPECT_EQ(fdk_push_projection(ctx, 1, bad.data(), scan.pitch(), nullptr), FDK_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(fdk_push_projection(ctx, 0, scan.pixels(0), scan.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(ctx), FDK_OK);
  ASSERT_EQ(fdk_get_view_state(ctx, 0, &state, nullptr), FDK_OK);
  EXPECT_EQ(state, FDK_VIEW_STORED);
  ASSERT_EQ(fdk_get_view_state(ctx, 1, &state, &failure), FDK_OK);
  EXPECT_EQ(state, FDK_VIEW_ABSENT);
  EXPECT_EQ(fdk_get_view_state(ctx, scan.views(), &state, nullptr), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(fdk_get_view_state(ctx, -1, &state, nullptr), FDK_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("projection index -1"), std::string::npos) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_get_view_state(ctx, 0, nullptr, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_last_error(ctx)).find("state is NULL"), std::string::npos);
  EXPECT_EQ(fdk_get_view_state(nullptr, 0, &state, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  fdk_destroy(ctx);
}

// Announced views beyond what the host budget's bookkeeping holds fail at
// fdk_create, at once (1e8 views ran until the OOM killer ended the
// process; 2e6 views held 1 GB under a 64 MiB budget).
TEST(Misuse, ViewsBeyondTheBudgetFailAtCreateAtOnce) {
  for (int views : {100000000, 2000000, 200000}) {
    SmallScan scan(16, 4, 16);
    scan.config.scan.num_views = views;
    scan.config.host_memory_budget = 64ull << 20;
    const auto t0 = std::chrono::steady_clock::now();
    fdk_context* ctx = nullptr;
    EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_ERROR_BUDGET) << views;
    EXPECT_EQ(ctx, nullptr);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0) << views;
    const std::string message = fdk_last_create_error();
    EXPECT_NE(message.find("num_views " + std::to_string(views)), std::string::npos) << message;
    EXPECT_NE(message.find("bookkeeping"), std::string::npos) << message;
  }
  SmallScan scan(16, 4, 16);
  scan.config.scan.num_views = 20000;  // fits: the budget holds them
  scan.config.host_memory_budget = 64ull << 20;
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&scan.config, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_destroy(ctx);
}

// The smallest budget fdk_create accepts stores the first projection (it
// used to accept budgets whose store could not hold one view, and the first
// push failed with BUDGET).
TEST(Misuse, ABudgetAcceptedAtCreateHoldsAView) {
  SmallScan scan;
  scan.config.slab_thickness = scan.config.volume.size[1];
  fdk_context* ctx = nullptr;
  for (uint64_t budget = 4096;; budget += 4096) {
    scan.config.host_memory_budget = budget;
    const fdk_status s = fdk_create(&scan.config, &ctx);
    if (s == FDK_OK) break;
    ASSERT_EQ(s, FDK_ERROR_BUDGET);
    ASSERT_LT(budget, 64ull << 20);
  }
  EXPECT_EQ(fdk_push_projection(ctx, 0, scan.pixels(0), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(ctx);
  EXPECT_EQ(fdk_finish(ctx), FDK_OK);
  fdk_destroy(ctx);
}
