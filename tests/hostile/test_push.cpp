// fdk_push_projection with hostile arguments, half way through a scan: the
// exact status, a message naming the argument, the handle still usable, and
// the volume of the good views the reference's, bit for bit.
#include <cfloat>
#include <climits>
#include <cstdint>
#include <memory>

#include "api_harness.hpp"

namespace {

using hostile::After;
using hostile::ApiRow;
using hostile::kDet;
using hostile::kHalf;
using hostile::kViews;
using hostile::MessageFrom;
using hostile::NamedDouble;
using hostile::Stage;

constexpr size_t kRow = sizeof(float) * kDet;  // 96 bytes

// View `v`'s good pixels copied into rows `pitch` bytes apart, the padding
// filled with `padding`.
std::shared_ptr<std::vector<float>> padded(int v, size_t pitch, float padding) {
  auto out = std::make_shared<std::vector<float>>(pitch / 4 * kDet, padding);
  for (int j = 0; j < kDet; ++j)
    std::memcpy(out->data() + j * (pitch / 4), hostile::scan().pixels(v) + j * kDet, kRow);
  return out;
}

// View `v` with pixel (column, row) set to `value`.
std::shared_ptr<std::vector<float>> with_pixel(int v, int column, int row, float value) {
  auto out = std::make_shared<std::vector<float>>(hostile::scan().pixels(v), hostile::scan().pixels(v) + kDet * kDet);
  (*out)[static_cast<size_t>(row * kDet + column)] = value;
  return out;
}

fdk_view configured_view(int v) {
  fdk_view view = hostile::scan().config.scan.uniform;
  view.gantry_angle_deg = 360.0 * v / kViews;
  return view;
}

std::string size_name(size_t v) {
  if (v == SIZE_MAX) return "SIZE_MAX";
  return std::to_string(v);
}

struct NamedFloat {
  const char* name;
  float value;
  const char* needle;
};

std::vector<ApiRow> push_rows() {
  std::vector<ApiRow> rows;
  const fdk_status kInv = FDK_ERROR_INVALID_ARGUMENT;
  const int k = kHalf;  // the next view to arrive

  rows.push_back({"ctx_NULL", Stage::kHalfPushed, [k](fdk_context*) { return hostile::push_good(nullptr, k); }, kInv, "ctx",
                  MessageFrom::kCreate});
  rows.push_back({"pixels_NULL", Stage::kHalfPushed,
                  [k](fdk_context* c) { return fdk_push_projection(c, k, nullptr, kRow, nullptr); }, kInv, "pixels is NULL"});
  rows.push_back({"pixels_NULL_pitch_0", Stage::kHalfPushed,
                  [k](fdk_context* c) { return fdk_push_projection(c, k, nullptr, 0, nullptr); }, kInv, "pixels is NULL"});

  // Indices outside [0, num_views).
  for (int64_t index : {int64_t(-1), int64_t(INT_MIN), int64_t(INT_MAX), int64_t(kViews), int64_t(kViews + 1),
                        int64_t(1000), int64_t(INT_MIN + 1)}) {
    const std::string n = index == INT_MIN ? "INT_MIN" : index == INT_MAX ? "INT_MAX" : index == INT_MIN + 1 ? "INT_MIN_plus1"
                          : index < 0 ? "minus" + std::to_string(-index) : std::to_string(index);
    rows.push_back({"index_" + n, Stage::kHalfPushed,
                    [index](fdk_context* c) {
                      return fdk_push_projection(c, static_cast<int32_t>(index), hostile::scan().pixels(0), kRow, nullptr);
                    },
                    FDK_ERROR_OUT_OF_RANGE, "projection index " + std::to_string(index)});
    rows.push_back({"index_" + n + "_pixels_NULL", Stage::kHalfPushed,
                    [index](fdk_context* c) { return fdk_push_projection(c, static_cast<int32_t>(index), nullptr, kRow, nullptr); },
                    FDK_ERROR_OUT_OF_RANGE, "projection index"});
  }

  // Duplicates: the stored view wins, whatever the second push holds.
  for (int v = 0; v < kHalf; ++v) {
    rows.push_back({"duplicate_" + std::to_string(v) + "_same_pixels", Stage::kHalfPushed,
                    [v](fdk_context* c) { return hostile::push_good(c, v); }, FDK_ERROR_DUPLICATE,
                    "projection " + std::to_string(v) + " was already pushed"});
    auto other = std::make_shared<std::vector<float>>(kDet * kDet, 7.0f);
    rows.push_back({"duplicate_" + std::to_string(v) + "_other_pixels", Stage::kHalfPushed,
                    [v, other](fdk_context* c) { return fdk_push_projection(c, v, other->data(), kRow, nullptr); },
                    FDK_ERROR_DUPLICATE, "already pushed"});
  }
  for (int v : {0, kHalf - 1}) {
    auto nan = with_pixel(v, 3, 3, std::numeric_limits<float>::quiet_NaN());
    rows.push_back({"duplicate_" + std::to_string(v) + "_NaN_pixel", Stage::kHalfPushed,
                    [v, nan](fdk_context* c) { return fdk_push_projection(c, v, nan->data(), kRow, nullptr); },
                    FDK_ERROR_DUPLICATE, "already pushed"});
    auto view = std::make_shared<fdk_view>(configured_view(v));
    view->sdd = 900;
    rows.push_back({"duplicate_" + std::to_string(v) + "_other_geometry", Stage::kHalfPushed,
                    [v, view](fdk_context* c) { return fdk_push_projection(c, v, hostile::scan().pixels(v), kRow, view.get()); },
                    FDK_ERROR_DUPLICATE, "already pushed"});
  }
  // Every view pushed: any index again is a duplicate.
  for (int v : {0, kViews / 2, kViews - 1})
    rows.push_back({"all_pushed_duplicate_" + std::to_string(v), Stage::kAllPushed,
                    [v](fdk_context* c) { return hostile::push_good(c, v); }, FDK_ERROR_DUPLICATE, "already pushed"});

  // Pitches shorter than a row or not a multiple of 4.
  for (size_t pitch : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(4), size_t(5), kRow - 4, kRow - 1, kRow + 1,
                       kRow + 2, kRow + 3, 2 * kRow + 2, size_t(4097), SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 2}) {
    rows.push_back({"pitch_" + size_name(pitch), Stage::kHalfPushed,
                    [k, pitch](fdk_context* c) { return fdk_push_projection(c, k, hostile::scan().pixels(k), pitch, nullptr); },
                    kInv, "row_pitch_bytes " + std::to_string(pitch)});
  }
  // Pitches beyond the row, the padding full of garbage the library must not read.
  for (size_t pitch : {kRow + 4, kRow + 64, 2 * kRow, size_t(4096), size_t(1) << 16}) {
    for (const NamedFloat& pad : {NamedFloat{"NaN", std::numeric_limits<float>::quiet_NaN(), ""},
                                  NamedFloat{"Inf", std::numeric_limits<float>::infinity(), ""},
                                  NamedFloat{"FLT_MAX", FLT_MAX, ""}}) {
      auto data = padded(k, pitch, pad.value);
      ApiRow row("pitch_" + std::to_string(pitch) + "_padding_" + pad.name, Stage::kHalfPushed,
                 [k, pitch, data](fdk_context* c) { return fdk_push_projection(c, k, data->data(), pitch, nullptr); },
                 FDK_OK, "", MessageFrom::kNone);
      row.accepted = 1;
      rows.push_back(row);
    }
  }
  // With a padded pitch, a bad pixel inside a row is still found, at its place.
  for (int row_index : {0, kDet / 2, kDet - 1}) {
    auto data = padded(k, 2 * kRow, 0.0f);
    (*data)[static_cast<size_t>(row_index) * (2 * kRow / 4) + kDet - 1] = std::numeric_limits<float>::quiet_NaN();
    rows.push_back({"pitch_192_NaN_in_row_" + std::to_string(row_index), Stage::kHalfPushed,
                    [k, data](fdk_context* c) { return fdk_push_projection(c, k, data->data(), 2 * kRow, nullptr); }, kInv,
                    "at column " + std::to_string(kDet - 1) + ", row " + std::to_string(row_index)});
  }

  // Pixel values at several places.
  const NamedFloat values[] = {
      {"NaN", std::numeric_limits<float>::quiet_NaN(), "non-finite pixel"},
      {"minusNaN", -std::numeric_limits<float>::quiet_NaN(), "non-finite pixel"},
      {"sNaN", std::numeric_limits<float>::signaling_NaN(), "non-finite pixel"},
      {"plusInf", std::numeric_limits<float>::infinity(), "non-finite pixel"},
      {"minusInf", -std::numeric_limits<float>::infinity(), "non-finite pixel"},
      {"FLT_MAX", FLT_MAX, "[-1e20, 1e20]"},
      {"minusFLT_MAX", -FLT_MAX, "[-1e20, 1e20]"},
      {"1e30", 1e30f, "[-1e20, 1e20]"},
      {"minus1e30", -1e30f, "[-1e20, 1e20]"},
      {"2e20", 2e20f, "[-1e20, 1e20]"},
      {"minus2e20", -2e20f, "[-1e20, 1e20]"},
  };
  const int places[][2] = {{0, 0}, {kDet - 1, 0}, {0, kDet - 1}, {kDet - 1, kDet - 1}, {12, 11}, {5, 3}};
  for (const NamedFloat& value : values) {
    for (const auto& place : places) {
      auto data = with_pixel(k, place[0], place[1], value.value);
      rows.push_back({std::string("pixel_") + value.name + "_at_" + std::to_string(place[0]) + "_" + std::to_string(place[1]),
                      Stage::kHalfPushed, [k, data](fdk_context* c) { return fdk_push_projection(c, k, data->data(), kRow, nullptr); },
                      kInv,
                      std::string(value.needle) + "\n" + "at column " + std::to_string(place[0]) + ", row " +
                          std::to_string(place[1])});
    }
  }
  // A whole view of NaN, and the last view of the scan broken.
  {
    auto nan = std::make_shared<std::vector<float>>(kDet * kDet, std::numeric_limits<float>::quiet_NaN());
    rows.push_back({"pixels_all_NaN", Stage::kHalfPushed,
                    [k, nan](fdk_context* c) { return fdk_push_projection(c, k, nan->data(), kRow, nullptr); }, kInv,
                    "at column 0, row 0"});
    auto last = with_pixel(kViews - 1, 1, 1, std::numeric_limits<float>::infinity());
    rows.push_back({"last_view_Inf", Stage::kHalfPushed,
                    [last](fdk_context* c) { return fdk_push_projection(c, kViews - 1, last->data(), kRow, nullptr); }, kInv,
                    "projection 15 has a non-finite pixel"});
  }

  // Per-push geometry with hostile fields.
  const NamedDouble non_finite[] = {{"NaN", hostile::nan_value()}, {"plusInf", hostile::inf_value()}, {"minusInf", -hostile::inf_value()}};
  const NamedDouble bad_angles[] = {{"1e7", 1e7}, {"minus1e7", -1e7}, {"1e300", 1e300}, {"minus1e300", -1e300}};
  const NamedDouble not_positive[] = {{"0", 0.0}, {"minus1", -1.0}, {"minus1e300", -1e300}, {"minusDenormal", -hostile::denormal_value()}};
  auto add_view_row = [&](const hostile::ViewField& f, const NamedDouble& value) {
    auto view = std::make_shared<fdk_view>(configured_view(k));
    (*view).*(f.member) = value.value;
    rows.push_back({std::string("view_") + f.name + "_" + value.name, Stage::kHalfPushed,
                    [k, view](fdk_context* c) { return fdk_push_projection(c, k, hostile::scan().pixels(k), kRow, view.get()); },
                    kInv, f.needle});
  };
  for (const hostile::ViewField& f : hostile::kViewFields) {
    for (const NamedDouble& v : non_finite) add_view_row(f, v);
    if (f.angle)
      for (const NamedDouble& v : bad_angles) add_view_row(f, v);
    if (f.distance)
      for (const NamedDouble& v : not_positive) add_view_row(f, v);
  }
  // A bad view with a bad index: the index is reported.
  {
    auto view = std::make_shared<fdk_view>(configured_view(k));
    view->sid = hostile::nan_value();
    rows.push_back({"view_NaN_index_minus1", Stage::kHalfPushed,
                    [view](fdk_context* c) { return fdk_push_projection(c, -1, hostile::scan().pixels(0), kRow, view.get()); },
                    FDK_ERROR_OUT_OF_RANGE, "projection index -1"});
  }
  return rows;
}

// (a): a pitch whose last row lies beyond what an address can hold is
// refused (today it is dereferenced: a crash).
std::vector<ApiRow> pending_push_rows() {
  std::vector<ApiRow> rows;
  const int k = kHalf;
  const std::string pending = "pending: (a) row_pitch_bytes whose (rows-1)*pitch+row overflows or exceeds PTRDIFF_MAX -> INVALID_ARGUMENT";
  const size_t ptrdiff_max = static_cast<size_t>(PTRDIFF_MAX);
  for (size_t pitch : {size_t(1) << 62, size_t(1) << 63, SIZE_MAX & ~size_t(3), ptrdiff_max & ~size_t(3),
                       size_t(1) << 61, ((ptrdiff_max / (kDet - 1)) + 4) & ~size_t(3), (SIZE_MAX / (kDet - 1) + 4) & ~size_t(3),
                       (size_t(1) << 62) + kRow}) {
    rows.push_back({"pitch_" + std::to_string(pitch), Stage::kHalfPushed,
                    [k, pitch](fdk_context* c) { return fdk_push_projection(c, k, hostile::scan().pixels(k), pitch, nullptr); },
                    FDK_ERROR_INVALID_ARGUMENT, "row_pitch_bytes", MessageFrom::kHandle, After::kVolume, pending});
  }
  // (b) carried to the per-push geometry: absurd distances and offsets.
  const std::string pending_b = "pending: (b) absurd distances and offsets (1e300, 1e-300) refused, here in a per-push fdk_view";
  struct Absurd {
    const char* field;
    double fdk_view::*member;
    const char* needle;
    double value;
    const char* value_name;
  };
  const Absurd absurd[] = {
      {"sid", &fdk_view::sid, "SID", 1e300, "1e300"},
      {"sid", &fdk_view::sid, "SID", 1e-300, "1e_300"},
      {"sdd", &fdk_view::sdd, "SDD", 1e300, "1e300"},
      {"sdd", &fdk_view::sdd, "SDD", 1e-300, "1e_300"},
      {"source_offset_x", &fdk_view::source_offset_x, "source offset x", 1e300, "1e300"},
      {"projection_offset_y", &fdk_view::projection_offset_y, "projection offset y", -1e300, "minus1e300"},
  };
  for (const Absurd& a : absurd) {
    auto view = std::make_shared<fdk_view>(configured_view(k));
    (*view).*(a.member) = a.value;
    rows.push_back({std::string("view_") + a.field + "_" + a.value_name, Stage::kHalfPushed,
                    [k, view](fdk_context* c) { return fdk_push_projection(c, k, hostile::scan().pixels(k), kRow, view.get()); },
                    FDK_ERROR_INVALID_ARGUMENT, a.needle, MessageFrom::kHandle, After::kVolume, pending_b});
  }
  return rows;
}

class Push : public ::testing::TestWithParam<ApiRow> {};
class PushPending : public ::testing::TestWithParam<ApiRow> {};

TEST_P(Push, IsRefusedAndLeavesTheVolume) {
  // A needle of two parts (separated by '\n') must hold both.
  ApiRow row = GetParam();
  const size_t split = row.needle.find('\n');
  if (split == std::string::npos) {
    hostile::run_api_row(row);
    return;
  }
  const std::string second = row.needle.substr(split + 1);
  row.needle = row.needle.substr(0, split);
  hostile::run_api_row(row);
  // The place of the bad pixel, checked on a fresh handle the same way.
  hostile::Handle h;
  ASSERT_EQ(fdk_create(&hostile::scan().config, &h.ctx), FDK_OK);
  ASSERT_EQ(row.action(h.ctx), row.status);
  EXPECT_TRUE(hostile::message_has(fdk_last_error(h.ctx), row.status, second));
}

TEST_P(PushPending, IsRefusedAndLeavesTheVolume) {
  HOSTILE_SKIP_IF_PENDING(GetParam());
  hostile::run_api_row(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Hostile, Push, ::testing::ValuesIn(push_rows()), hostile::row_name<ApiRow>);
INSTANTIATE_TEST_SUITE_P(Hostile, PushPending, ::testing::ValuesIn(pending_push_rows()), hostile::row_name<ApiRow>);

}  // namespace
