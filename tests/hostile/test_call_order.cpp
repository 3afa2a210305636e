// Calls in the wrong order or with bad out-arguments, at every stage of a
// handle's life: the exact status, a message, and afterwards the volume of
// the good views the reference's bit for bit (or, after fdk_cancel,
// CANCELLED from every call that works).
#include <climits>
#include <cstdint>
#include <memory>

#include "api_harness.hpp"

namespace {

using hostile::After;
using hostile::ApiRow;
using hostile::kHalf;
using hostile::kViews;
using hostile::MessageFrom;
using hostile::Stage;

constexpr int kSlabs = 4;                        // 16 planes in slabs of 4
constexpr size_t kSlabBytes = 4 * 16 * 16 * 4;  // 4 planes of 16 x 16 floats

const Stage kStages[] = {Stage::kFresh, Stage::kHalfPushed, Stage::kAllPushed, Stage::kFinished};
const char* stage_name(Stage s) {
  switch (s) {
    case Stage::kFresh: return "fresh";
    case Stage::kHalfPushed: return "half";
    case Stage::kAllPushed: return "all_pushed";
    case Stage::kFinished: return "finished";
  }
  return "?";
}

std::string int_name(int64_t v) {
  if (v == INT_MIN) return "INT_MIN";
  if (v == INT_MAX) return "INT_MAX";
  return v < 0 ? "minus" + std::to_string(-v) : std::to_string(v);
}

// The queries that fill a caller's struct, by name.
struct Query {
  const char* name;
  std::function<fdk_status(fdk_context*, uint32_t size, bool null)> call;
};

template <class Info>
fdk_status query_with(fdk_status (*fn)(const fdk_context*, Info*), fdk_context* c, uint32_t size, bool null) {
  Info info{};
  info.struct_size = size;
  return fn(c, null ? nullptr : &info);
}

const Query kQueries[] = {
    {"fdk_progress", [](fdk_context* c, uint32_t s, bool n) { return query_with(fdk_get_progress, c, s, n); }},
    {"fdk_store_info", [](fdk_context* c, uint32_t s, bool n) { return query_with(fdk_get_store_info, c, s, n); }},
    {"fdk_plan_info", [](fdk_context* c, uint32_t s, bool n) { return query_with(fdk_get_plan_info, c, s, n); }},
    {"fdk_timings", [](fdk_context* c, uint32_t s, bool n) { return query_with(fdk_get_timings, c, s, n); }},
    {"fdk_device_stats", [](fdk_context* c, uint32_t s, bool n) { return query_with(fdk_get_device_stats, c, s, n); }},
    {"fdk_slab_info", [](fdk_context* c, uint32_t s, bool n) {
       fdk_slab_info info{};
       info.struct_size = s;
       return fdk_get_slab_info(c, 0, n ? nullptr : &info);
     }},
};

std::vector<ApiRow> call_order_rows() {
  std::vector<ApiRow> rows;
  const fdk_status kInv = FDK_ERROR_INVALID_ARGUMENT;
  static std::vector<float> scratch(kSlabBytes / 4 + 16);  // read into by the rows; lives for the process
  float* buffer = scratch.data();

  // Every call with a NULL handle.
  const std::pair<const char*, std::function<fdk_status()>> null_calls[] = {
      {"push", [] { return hostile::push_good(nullptr, 0); }},
      {"finish", [] { return fdk_finish(nullptr); }},
      {"read_slab", [buffer] { return fdk_read_slab(nullptr, 0, buffer, kSlabBytes); }},
      {"slab_count", [] { int32_t n = 0; return fdk_slab_count(nullptr, &n); }},
      {"slab_info", [] { fdk_slab_info i{}; i.struct_size = sizeof i; return fdk_get_slab_info(nullptr, 0, &i); }},
      {"slab_ready", [] { int32_t r = 0; return fdk_slab_ready(nullptr, 0, &r); }},
      {"set_progress_callback", [] { return fdk_set_progress_callback(nullptr, nullptr, nullptr); }},
      {"get_progress", [] { fdk_progress p{}; p.struct_size = sizeof p; return fdk_get_progress(nullptr, &p); }},
      {"cancel", [] { return fdk_cancel(nullptr); }},
      {"store_info", [] { fdk_store_info i{}; i.struct_size = sizeof i; return fdk_get_store_info(nullptr, &i); }},
      {"plan_info", [] { fdk_plan_info i{}; i.struct_size = sizeof i; return fdk_get_plan_info(nullptr, &i); }},
      {"timings", [] { fdk_timings t{}; t.struct_size = sizeof t; return fdk_get_timings(nullptr, &t); }},
      {"device_stats", [] { fdk_device_stats d{}; d.struct_size = sizeof d; return fdk_get_device_stats(nullptr, &d); }},
      {"get_preview_info", [] { fdk_preview_info i; fdk_preview_info_init(&i); return fdk_get_preview_info(nullptr, &i); }},
      {"read_preview", [buffer] { return fdk_read_preview(nullptr, buffer, kSlabBytes, nullptr); }},
      {"read_preview_slices", [] { fdk_preview_slices s{}; s.struct_size = sizeof s; return fdk_read_preview_slices(nullptr, &s, nullptr); }},
  };
  for (const auto& call : null_calls) {
    auto fn = call.second;
    rows.push_back({std::string("ctx_NULL_") + call.first, Stage::kHalfPushed, [fn](fdk_context*) { return fn(); }, kInv,
                    "ctx is NULL", MessageFrom::kCreate});
  }

  // The live preview of a reconstruction made without one, at every stage:
  // refused with the reason, the handle untouched.
  for (Stage stage : kStages) {
    rows.push_back({std::string("read_preview_without_preview_") + stage_name(stage), stage,
                    [buffer](fdk_context* c) { return fdk_read_preview(c, buffer, kSlabBytes, nullptr); },
                    FDK_ERROR_INVALID_STATE, "preview = 0"});
    rows.push_back({std::string("read_preview_slices_without_preview_") + stage_name(stage), stage,
                    [](fdk_context* c) {
                      fdk_preview_slices s{};
                      s.struct_size = sizeof s;
                      return fdk_read_preview_slices(c, &s, nullptr);
                    },
                    FDK_ERROR_INVALID_STATE, "preview = 0"});
  }

  // Out-pointers NULL and struct sizes wrong, at every stage.
  for (Stage stage : kStages) {
    const std::string at = std::string("_") + stage_name(stage);
    for (const Query& q : kQueries) {
      auto call = q.call;
      rows.push_back({std::string(q.name) + "_NULL" + at, stage, [call](fdk_context* c) { return call(c, 0, true); }, kInv,
                      std::string(q.name) + " is NULL"});
      for (uint32_t size : {0u, 1u, 4u, UINT32_MAX}) {
        rows.push_back({std::string(q.name) + "_struct_size_" + std::to_string(size) + at, stage,
                        [call, size](fdk_context* c) { return call(c, size, false); }, FDK_ERROR_STRUCT_SIZE,
                        std::string(q.name) + "->struct_size"});
      }
    }
    rows.push_back({"slab_count_NULL" + at, stage, [](fdk_context* c) { return fdk_slab_count(c, nullptr); }, kInv,
                    "count is NULL"});
    for (int64_t slab : {int64_t(-1), int64_t(kSlabs), int64_t(INT_MAX), int64_t(INT_MIN)}) {
      rows.push_back({"slab_info_" + int_name(slab) + at, stage,
                      [slab](fdk_context* c) {
                        fdk_slab_info i{};
                        i.struct_size = sizeof i;
                        return fdk_get_slab_info(c, static_cast<int32_t>(slab), &i);
                      },
                      FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab)});
    }
    rows.push_back({"slab_ready_NULL" + at, stage, [](fdk_context* c) { return fdk_slab_ready(c, 0, nullptr); }, kInv,
                    "ready is NULL"});
  }

  // Reading and polling before fdk_finish.
  for (Stage stage : {Stage::kFresh, Stage::kHalfPushed, Stage::kAllPushed}) {
    const std::string at = std::string("_") + stage_name(stage);
    for (int64_t slab : {int64_t(0), int64_t(kSlabs - 1), int64_t(-1), int64_t(kSlabs)}) {
      rows.push_back({"read_slab_" + int_name(slab) + "_before_finish" + at, stage,
                      [buffer, slab](fdk_context* c) { return fdk_read_slab(c, static_cast<int32_t>(slab), buffer, kSlabBytes); },
                      FDK_ERROR_INVALID_STATE, "fdk_read_slab before fdk_finish"});
      rows.push_back({"slab_ready_" + int_name(slab) + "_before_finish" + at, stage,
                      [slab](fdk_context* c) {
                        int32_t ready = 7;
                        const fdk_status s = fdk_slab_ready(c, static_cast<int32_t>(slab), &ready);
                        EXPECT_EQ(ready, 0) << "written 0 on failure";
                        return s;
                      },
                      FDK_ERROR_INVALID_STATE, "fdk_slab_ready before fdk_finish"});
    }
    rows.push_back({"read_slab_NULL_before_finish" + at, stage,
                    [](fdk_context* c) { return fdk_read_slab(c, 0, nullptr, kSlabBytes); }, FDK_ERROR_INVALID_STATE,
                    "before fdk_finish"});
  }

  // After fdk_finish.
  rows.push_back({"finish_twice", Stage::kFinished, [](fdk_context* c) { return fdk_finish(c); }, FDK_ERROR_INVALID_STATE,
                  "fdk_finish was already called"});
  rows.push_back({"finish_three_times", Stage::kFinished,
                  [](fdk_context* c) {
                    EXPECT_EQ(fdk_finish(c), FDK_ERROR_INVALID_STATE);
                    return fdk_finish(c);
                  },
                  FDK_ERROR_INVALID_STATE, "already called"});
  for (int64_t index : {int64_t(0), int64_t(kViews - 1), int64_t(-1), int64_t(kViews), int64_t(INT_MIN)}) {
    rows.push_back({"push_" + int_name(index) + "_after_finish", Stage::kFinished,
                    [index](fdk_context* c) {
                      return fdk_push_projection(c, static_cast<int32_t>(index), hostile::scan().pixels(0),
                                                 hostile::scan().pitch(), nullptr);
                    },
                    FDK_ERROR_INVALID_STATE, "after fdk_finish"});
  }
  rows.push_back({"push_NULL_pixels_after_finish", Stage::kFinished,
                  [](fdk_context* c) { return fdk_push_projection(c, 0, nullptr, 0, nullptr); }, FDK_ERROR_INVALID_STATE,
                  "after fdk_finish"});
  for (int64_t slab : {int64_t(-1), int64_t(kSlabs), int64_t(INT_MAX), int64_t(INT_MIN)}) {
    rows.push_back({"read_slab_" + int_name(slab), Stage::kFinished,
                    [buffer, slab](fdk_context* c) { return fdk_read_slab(c, static_cast<int32_t>(slab), buffer, kSlabBytes); },
                    FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab) + " is outside [0, 4)"});
    rows.push_back({"slab_ready_" + int_name(slab), Stage::kFinished,
                    [slab](fdk_context* c) {
                      int32_t ready = 7;
                      const fdk_status s = fdk_slab_ready(c, static_cast<int32_t>(slab), &ready);
                      EXPECT_EQ(ready, 0) << "written 0 on failure";
                      return s;
                    },
                    FDK_ERROR_OUT_OF_RANGE, "slab " + std::to_string(slab)});
  }
  for (int slab : {0, kSlabs - 1}) {
    rows.push_back({"read_slab_" + std::to_string(slab) + "_NULL_buffer", Stage::kFinished,
                    [slab](fdk_context* c) { return fdk_read_slab(c, slab, nullptr, kSlabBytes); }, kInv, "buffer is NULL"});
    for (size_t bytes : {size_t(0), size_t(1), size_t(4), kSlabBytes - 4, kSlabBytes - 1}) {
      rows.push_back({"read_slab_" + std::to_string(slab) + "_buffer_bytes_" + std::to_string(bytes), Stage::kFinished,
                      [buffer, slab, bytes](fdk_context* c) {
                        const float canary = buffer[kSlabBytes / 4];
                        const fdk_status s = fdk_read_slab(c, slab, buffer, bytes);
                        EXPECT_EQ(std::memcmp(&canary, &buffer[kSlabBytes / 4], 4), 0);
                        return s;
                      },
                      kInv, "buffer_bytes " + std::to_string(bytes)});
    }
  }

  // fdk_cancel at every stage, then each call.
  for (Stage stage : kStages) {
    const std::string at = std::string("_") + stage_name(stage);
    rows.push_back({"cancel" + at, stage, [](fdk_context* c) { return fdk_cancel(c); }, FDK_OK, "", MessageFrom::kNone,
                    After::kCancelled});
    rows.push_back({"cancel_twice" + at, stage,
                    [](fdk_context* c) {
                      EXPECT_EQ(fdk_cancel(c), FDK_OK);
                      return fdk_cancel(c);
                    },
                    FDK_OK, "", MessageFrom::kNone, After::kCancelled});
    const std::pair<const char*, std::function<fdk_status(fdk_context*)>> after_cancel[] = {
        {"push", [](fdk_context* c) { return hostile::push_good(c, kViews - 1); }},
        {"push_bad_index", [](fdk_context* c) { return fdk_push_projection(c, -1, hostile::scan().pixels(0), hostile::scan().pitch(), nullptr); }},
        {"push_NULL_pixels", [](fdk_context* c) { return fdk_push_projection(c, 0, nullptr, 4, nullptr); }},
        {"finish", [](fdk_context* c) { return fdk_finish(c); }},
        {"read_slab", [buffer](fdk_context* c) { return fdk_read_slab(c, 0, buffer, kSlabBytes); }},
        {"read_slab_bad_index", [buffer](fdk_context* c) { return fdk_read_slab(c, 99, buffer, kSlabBytes); }},
        {"slab_ready", [](fdk_context* c) { int32_t r = 7; return fdk_slab_ready(c, 0, &r); }},
    };
    for (const auto& call : after_cancel) {
      auto fn = call.second;
      rows.push_back({std::string("cancel_then_") + call.first + at, stage,
                      [fn](fdk_context* c) {
                        EXPECT_EQ(fdk_cancel(c), FDK_OK);
                        return fn(c);
                      },
                      FDK_ERROR_CANCELLED, "cancelled", MessageFrom::kHandle, After::kCancelled});
    }
  }

  // Inside the progress callback, only fdk_get_progress and fdk_cancel.
  rows.push_back({"callback_gets_progress", Stage::kHalfPushed,
                  [](fdk_context* c) {
                    struct Seen { fdk_context* ctx; fdk_status status = FDK_ERROR_INTERNAL; int calls = 0; };
                    static Seen seen;
                    seen = Seen{c};
                    EXPECT_EQ(fdk_set_progress_callback(c, [](void* u, const fdk_progress*) {
                      auto* s = static_cast<Seen*>(u);
                      fdk_progress p{};
                      p.struct_size = sizeof p;
                      s->status = fdk_get_progress(s->ctx, &p);
                      ++s->calls;
                    }, &seen), FDK_OK);
                    const fdk_status pushed = hostile::push_good(c, kHalf);
                    EXPECT_EQ(fdk_set_progress_callback(c, nullptr, nullptr), FDK_OK);
                    EXPECT_GE(seen.calls, 1);
                    EXPECT_EQ(seen.status, FDK_OK);
                    return pushed;
                  },
                  FDK_OK, "", MessageFrom::kNone, After::kVolume, "", 1});
  rows.push_back({"callback_cancels", Stage::kHalfPushed,
                  [](fdk_context* c) {
                    EXPECT_EQ(fdk_set_progress_callback(c, [](void* u, const fdk_progress*) {
                      fdk_cancel(static_cast<fdk_context*>(u));
                    }, c), FDK_OK);
                    return hostile::push_good(c, kHalf);
                  },
                  FDK_OK, "", MessageFrom::kNone, After::kCancelled});
  return rows;
}

// (c) every other call from inside the progress callback is refused
// (today: a deadlock; never run unskipped before the fix).
// (d) a failed fdk_finish changes nothing.
std::vector<ApiRow> pending_call_order_rows() {
  std::vector<ApiRow> rows;
  const std::string pending_c = "pending: (c) an API call on the handle from inside its progress callback -> INVALID_STATE";
  const std::pair<const char*, std::function<fdk_status(fdk_context*)>> reentrant[] = {
      {"push", [](fdk_context* c) { return hostile::push_good(c, kViews - 1); }},
      {"finish", [](fdk_context* c) { return fdk_finish(c); }},
      {"read_slab", [](fdk_context* c) { std::vector<float> b(kSlabBytes / 4); return fdk_read_slab(c, 0, b.data(), kSlabBytes); }},
      {"slab_ready", [](fdk_context* c) { int32_t r = 0; return fdk_slab_ready(c, 0, &r); }},
      {"get_timings", [](fdk_context* c) { fdk_timings t{}; t.struct_size = sizeof t; return fdk_get_timings(c, &t); }},
      {"get_device_stats", [](fdk_context* c) { fdk_device_stats d{}; d.struct_size = sizeof d; return fdk_get_device_stats(c, &d); }},
  };
  for (const auto& call : reentrant) {
    auto fn = call.second;
    rows.push_back({std::string("callback_calls_") + call.first, Stage::kHalfPushed,
                    [fn](fdk_context* c) {
                      struct Seen { fdk_context* ctx; std::function<fdk_status(fdk_context*)> fn; fdk_status status = FDK_OK; int calls = 0; };
                      static Seen seen;
                      seen = Seen{c, fn};
                      EXPECT_EQ(fdk_set_progress_callback(c, [](void* u, const fdk_progress*) {
                        auto* s = static_cast<Seen*>(u);
                        if (s->calls++ == 0) s->status = s->fn(s->ctx);
                      }, &seen), FDK_OK);
                      EXPECT_EQ(hostile::push_good(c, kHalf), FDK_OK);
                      fdk_set_progress_callback(c, nullptr, nullptr);
                      EXPECT_EQ(seen.calls, 1);
                      return seen.status;
                    },
                    FDK_ERROR_INVALID_STATE, "progress callback", MessageFrom::kHandle, After::kVolume, pending_c, 1});
  }
  const std::string pending_d = "pending: (d) a failed fdk_finish changes no state";
  rows.push_back({"finish_before_any_push", Stage::kFresh, [](fdk_context* c) { return fdk_finish(c); },
                  FDK_ERROR_INVALID_STATE, "before any projection", MessageFrom::kHandle, After::kVolume, pending_d});
  rows.push_back({"finish_twice_before_any_push", Stage::kFresh,
                  [](fdk_context* c) {
                    EXPECT_EQ(fdk_finish(c), FDK_ERROR_INVALID_STATE);
                    return fdk_finish(c);
                  },
                  FDK_ERROR_INVALID_STATE, "before any projection", MessageFrom::kHandle, After::kVolume, pending_d});
  rows.push_back({"finish_after_only_refused_pushes", Stage::kFresh,
                  [](fdk_context* c) {
                    EXPECT_EQ(fdk_push_projection(c, 0, nullptr, 96, nullptr), FDK_ERROR_INVALID_ARGUMENT);
                    EXPECT_EQ(fdk_push_projection(c, -1, hostile::scan().pixels(0), hostile::scan().pitch(), nullptr), FDK_ERROR_OUT_OF_RANGE);
                    return fdk_finish(c);
                  },
                  FDK_ERROR_INVALID_STATE, "before any projection", MessageFrom::kHandle, After::kVolume, pending_d});
  return rows;
}

class CallOrder : public ::testing::TestWithParam<ApiRow> {};
class CallOrderPending : public ::testing::TestWithParam<ApiRow> {};

TEST_P(CallOrder, HasItsStatusAndLeavesTheVolume) { hostile::run_api_row(GetParam()); }

TEST_P(CallOrderPending, HasItsStatusAndLeavesTheVolume) {
  HOSTILE_SKIP_IF_PENDING(GetParam());
  hostile::run_api_row(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Hostile, CallOrder, ::testing::ValuesIn(call_order_rows()), hostile::row_name<ApiRow>);
INSTANTIATE_TEST_SUITE_P(Hostile, CallOrderPending, ::testing::ValuesIn(pending_call_order_rows()),
                         hostile::row_name<ApiRow>);

// The NULL handle's message is "" and fdk_destroy(NULL) is harmless.
TEST(CallOrderNull, LastErrorAndDestroyOfNull) {
  EXPECT_STREQ(fdk_last_error(nullptr), "");
  fdk_destroy(nullptr);
  EXPECT_TRUE(hostile::same_volume(hostile::reconstruct(hostile::scan().config)));
}

}  // namespace
