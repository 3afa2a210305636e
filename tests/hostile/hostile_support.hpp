// The shared frame of the hostile-input suite: one small scan, its reference
// volume (built once per process), the comparison, and the naming and
// skipping of table rows.
//
// Every table row is one gtest case (a parameter), so ctest lists and runs
// each row on its own. Rows whose behaviour other work is changing live in
// tables marked pending: they state the NEW behaviour and skip with
// "pending: <what>" until that work is merged. Rows that state the behaviour
// the library should have where today's is plainly wrong (found by this
// suite, not yet planned) skip with "defect: <what>".
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "pending.hpp"
#include "small_scan.hpp"

namespace hostile {

// 16^3 voxels, 16 views, 24 x 24 pixels, CPU backend, 2 threads, slabs of
// 4 planes (so slab indices have a range to get wrong).
inline const fdk_test::SmallScan& scan() {
  static const fdk_test::SmallScan s = [] {
    fdk_test::SmallScan small(16, 16, 24);
    small.config.slab_thickness = 4;
    return small;
  }();
  return s;
}

constexpr int kViews = 16;
constexpr int kHalf = kViews / 2;
constexpr int kDet = 24;

struct Handle {
  fdk_context* ctx = nullptr;
  Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { fdk_destroy(ctx); }
};

inline fdk_status push_good(fdk_context* ctx, int v) {
  return fdk_push_projection(ctx, v, scan().pixels(v), scan().pitch(), nullptr);
}

// All views in order, finish, every slab: the volume (empty on a failure,
// which is reported).
inline std::vector<float> reconstruct(const fdk_config& config) {
  Handle h;
  std::vector<float> volume;
  const fdk_status s = fdk_create(&config, &h.ctx);
  EXPECT_EQ(s, FDK_OK) << fdk_last_create_error();
  if (s != FDK_OK) return volume;
  for (int v = 0; v < kViews; ++v) EXPECT_EQ(push_good(h.ctx, v), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_EQ(fdk_finish(h.ctx), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK) << fdk_last_error(h.ctx);
  return volume;
}

// The volume of the good views with no hostile call, once per process.
inline const std::vector<float>& reference() {
  static const std::vector<float> volume = reconstruct(scan().config);
  return volume;
}

// Bit for bit (NaN payloads included): memcmp, not ==.
inline ::testing::AssertionResult same_volume(const std::vector<float>& got) {
  const std::vector<float>& want = reference();
  if (want.empty()) return ::testing::AssertionFailure() << "no reference volume";
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "volume of " << got.size() << " voxels, reference " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "voxel " << i << " is " << got[i] << ", reference " << want[i];
  }
  return ::testing::AssertionSuccess();
}

// The message names the status and holds `needle`.
inline ::testing::AssertionResult message_has(const std::string& msg, fdk_status status,
                                              const std::string& needle) {
  if (msg.empty()) return ::testing::AssertionFailure() << "empty message";
  if (msg.find(fdk_status_string(status)) == std::string::npos)
    return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << fdk_status_string(status) << "'";
  if (msg.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message '" << msg << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

// A gtest-safe name (letters, digits, '_') from a row's name.
inline std::string identifier(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out.empty() ? std::string("unnamed") : out;
}

template <typename Row>
std::string row_name(const ::testing::TestParamInfo<Row>& info) {
  return identifier(info.param.name);
}

#define HOSTILE_SKIP_IF_PENDING(row)                                           \
  do {                                                                         \
    if (hostile::skipped((row).pending)) GTEST_SKIP() << (row).pending;        \
  } while (0)

// Hostile values of the doubles, with names for the rows.
struct NamedDouble {
  const char* name;
  double value;
};

inline double nan_value() { return std::numeric_limits<double>::quiet_NaN(); }
inline double inf_value() { return std::numeric_limits<double>::infinity(); }
inline double denormal_value() { return std::numeric_limits<double>::denorm_min(); }

// The fields of one fdk_view (in the config's scan.uniform, or pushed with
// a projection), the words their messages use, and what they measure.
struct ViewField {
  const char* name;
  double fdk_view::*member;
  const char* needle;
  bool angle;
  bool distance;
};
inline const ViewField kViewFields[] = {
    {"gantry_angle", &fdk_view::gantry_angle_deg, "gantry angle", true, false},
    {"sid", &fdk_view::sid, "SID", false, true},
    {"sdd", &fdk_view::sdd, "SDD", false, true},
    {"source_offset_x", &fdk_view::source_offset_x, "source offset x", false, false},
    {"source_offset_y", &fdk_view::source_offset_y, "source offset y", false, false},
    {"projection_offset_x", &fdk_view::projection_offset_x, "projection offset x", false, false},
    {"projection_offset_y", &fdk_view::projection_offset_y, "projection offset y", false, false},
    {"in_plane_angle", &fdk_view::in_plane_angle_deg, "in-plane angle", true, false},
    {"out_of_plane_angle", &fdk_view::out_of_plane_angle_deg, "out-of-plane angle", true, false},
};

}  // namespace hostile
