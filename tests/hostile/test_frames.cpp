// libfdk_frames (fdk/fdk_frames.h) with hostile configurations and frames:
// the documented status, a message, and the volume of the good frames the
// same bits as without the hostile call.
#include <fdk/fdk_frames.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <memory>

#include "hostile_support.hpp"

namespace {

using hostile::kDet;
using hostile::kHalf;
using hostile::kViews;

constexpr double kI0 = 30000;
constexpr size_t kRowF = sizeof(float) * kDet;
constexpr size_t kRowU = sizeof(uint16_t) * kDet;

enum class Mode { kLineIntegrals, kRaw };  // float line integrals, or uint16 counts with I0

// The raw counts of view v: I0 exp(-p), rounded.
const std::vector<uint16_t>& raw_frame(int v) {
  static const std::vector<std::vector<uint16_t>> frames = [] {
    std::vector<std::vector<uint16_t>> out;
    for (int i = 0; i < kViews; ++i) {
      out.emplace_back(kDet * kDet);
      for (int k = 0; k < kDet * kDet; ++k)
        out.back()[static_cast<size_t>(k)] = static_cast<uint16_t>(std::lround(kI0 * std::exp(-hostile::scan().pixels(i)[k])));
    }
    return out;
  }();
  return frames[static_cast<size_t>(v)];
}

fdk_frames_config frames_config(Mode mode) {
  fdk_frames_config c;
  fdk_frames_config_init(&c);
  c.width = c.height = kDet;
  if (mode == Mode::kLineIntegrals) {
    c.line_integrals = 1;
  } else {
    c.i0 = kI0;
  }
  return c;
}

struct FramesHandle {
  fdk_frames* f = nullptr;
  FramesHandle() = default;
  FramesHandle(const FramesHandle&) = delete;
  FramesHandle& operator=(const FramesHandle&) = delete;
  ~FramesHandle() { fdk_frames_destroy(f); }
};

fdk_status push_good(fdk_frames* f, Mode mode, int v) {
  const double angle = 360.0 * v / kViews;
  if (mode == Mode::kRaw) return fdk_frames_push_u16(f, v, angle, 0.1 * v, raw_frame(v).data(), kRowU, -1);
  return fdk_frames_push_f32(f, v, angle, 0.1 * v, hostile::scan().pixels(v), kRowF, -1);
}

std::vector<float> read_volume(fdk_frames* f) {
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(fdk_frames_context(f), volume), FDK_OK);
  return volume;
}

// Every good frame through a fresh adapter.
std::vector<float> reconstruct(Mode mode) {
  FramesHandle h;
  const fdk_frames_config fc = frames_config(mode);
  EXPECT_EQ(fdk_frames_create(&hostile::scan().config, &fc, &h.f), FDK_OK) << fdk_frames_last_create_error();
  if (!h.f) return {};
  for (int v = 0; v < kViews; ++v) EXPECT_EQ(push_good(h.f, mode, v), FDK_OK) << fdk_frames_last_error(h.f);
  EXPECT_EQ(fdk_frames_finish(h.f), FDK_OK) << fdk_frames_last_error(h.f);
  return read_volume(h.f);
}

const std::vector<float>& reference(Mode mode) {
  static const std::vector<float> line = reconstruct(Mode::kLineIntegrals);
  static const std::vector<float> raw = reconstruct(Mode::kRaw);
  return mode == Mode::kRaw ? raw : line;
}

::testing::AssertionResult same_as(const std::vector<float>& got, Mode mode) {
  const std::vector<float>& want = reference(mode);
  if (want.empty() || got.size() != want.size())
    return ::testing::AssertionFailure() << got.size() << " voxels, reference " << want.size();
  if (std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) != 0)
    return ::testing::AssertionFailure() << "the volume differs from the reference";
  return ::testing::AssertionSuccess();
}

// ---- fdk_frames_create ---------------------------------------------------------------

struct FramesCreateRow {
  std::string name;
  Mode mode;
  std::function<void(fdk_config&, fdk_frames_config&)> mutate;
  fdk_status status;
  std::string needle;
  std::string pending;
};
void PrintTo(const FramesCreateRow& r, std::ostream* os) { *os << r.name; }

// Calibration frames that outlive the rows.
const float* constant_frame(float value) {
  static std::vector<std::unique_ptr<std::vector<float>>> keep;
  keep.push_back(std::make_unique<std::vector<float>>(kDet * kDet, value));
  return keep.back()->data();
}

std::vector<FramesCreateRow> frames_create_rows() {
  std::vector<FramesCreateRow> rows;
  const fdk_status kInv = FDK_ERROR_INVALID_ARGUMENT;
  const Mode kL = Mode::kLineIntegrals, kR = Mode::kRaw;
  auto frames_field = [&](const std::string& name, Mode mode, std::function<void(fdk_frames_config&)> m, fdk_status s,
                          const std::string& needle) {
    rows.push_back({name, mode, [m](fdk_config&, fdk_frames_config& f) { m(f); }, s, needle, ""});
  };
  for (uint32_t size : {0u, 4u, uint32_t(sizeof(fdk_frames_config) - 4), uint32_t(sizeof(fdk_frames_config) + 4), UINT32_MAX})
    frames_field("frames_struct_size_" + std::to_string(size), kL, [size](fdk_frames_config& f) { f.struct_size = size; },
                 FDK_ERROR_STRUCT_SIZE, "fdk_frames_config");
  for (uint32_t size : {0u, uint32_t(sizeof(fdk_config) + 4), UINT32_MAX})
    rows.push_back({"config_struct_size_" + std::to_string(size), kL,
                    [size](fdk_config& c, fdk_frames_config&) { c.struct_size = size; }, FDK_ERROR_STRUCT_SIZE, "fdk_config", ""});
  for (int64_t w : {int64_t(0), int64_t(-1), int64_t(INT_MIN), int64_t(INT_MAX)}) {
    const std::string n = w == INT_MIN ? "INT_MIN" : w == INT_MAX ? "INT_MAX" : w < 0 ? "minus1" : "0";
    frames_field("width_" + n, kL, [w](fdk_frames_config& f) { f.width = static_cast<int32_t>(w); }, kInv, "frame size");
    frames_field("height_" + n, kL, [w](fdk_frames_config& f) { f.height = static_cast<int32_t>(w); }, kInv, "frame size");
  }
  frames_field("width_height_2_pow_16", kL, [](fdk_frames_config& f) { f.width = f.height = 1 << 16; }, kInv, "frame size");
  // Sizes that do not become the reconstruction's detector.
  frames_field("width_25", kL, [](fdk_frames_config& f) { f.width = 25; }, kInv, "after crop and binning");
  frames_field("height_23", kL, [](fdk_frames_config& f) { f.height = 23; }, kInv, "after crop and binning");
  for (int64_t q : {int64_t(0), int64_t(-1), int64_t(65537), int64_t(INT_MAX), int64_t(INT_MIN)})
    frames_field("queue_capacity_" + (q < 0 ? "minus" + std::to_string(-q) : std::to_string(q)), kL,
                 [q](fdk_frames_config& f) { f.queue_capacity = static_cast<int32_t>(q); }, kInv, "queue_capacity");
  // Crop and binning that do not fit.
  const int crops[][4] = {{-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}, {0, 0, 0, -1}, {kDet, 0, 0, 0},
                          {0, kDet, 0, 0}, {1, 0, kDet, 0}, {0, 1, 0, kDet}, {INT_MAX, 0, 0, 0}, {0, 0, INT_MAX, 0}};
  for (const auto& c : crops) {
    const int x = c[0], y = c[1], w = c[2], h = c[3];
    auto num = [](int v) { return v == INT_MAX ? std::string("INT_MAX") : v < 0 ? "minus" + std::to_string(-v) : std::to_string(v); };
    frames_field("crop_" + num(x) + "_" + num(y) + "_" + num(w) + "_" + num(h), kL,
                 [x, y, w, h](fdk_frames_config& f) { f.crop[0] = x; f.crop[1] = y; f.crop[2] = w; f.crop[3] = h; }, kInv,
                 "crop");
  }
  for (int64_t b : {int64_t(0), int64_t(-1), int64_t(kDet + 1), int64_t(INT_MAX), int64_t(INT_MIN)}) {
    const std::string n = b == INT_MAX ? "INT_MAX" : b == INT_MIN ? "INT_MIN" : b < 0 ? "minus1" : std::to_string(b);
    frames_field("bin_u_" + n, kL, [b](fdk_frames_config& f) { f.bin[0] = static_cast<int32_t>(b); }, kInv, "binning");
    frames_field("bin_v_" + n, kL, [b](fdk_frames_config& f) { f.bin[1] = static_cast<int32_t>(b); }, kInv, "binning");
  }
  // Raw frames: the correction's inputs.
  frames_field("raw_without_flat_or_i0", kR, [](fdk_frames_config& f) { f.i0 = 0; }, kInv, "flat field or i0");
  for (const hostile::NamedDouble& v : {hostile::NamedDouble{"NaN", hostile::nan_value()}, {"minus1", -1.0}, {"minusInf", -hostile::inf_value()}})
    frames_field(std::string("i0_") + v.name, kR, [v](fdk_frames_config& f) { f.i0 = v.value; }, kInv, "i0");
  for (const hostile::NamedDouble& v : {hostile::NamedDouble{"0", 0.0}, {"minus1", -1.0}, {"1", 1.0}, {"2", 2.0},
                                        {"NaN", hostile::nan_value()}, {"Inf", hostile::inf_value()}})
    frames_field(std::string("min_transmission_") + v.name, kR, [v](fdk_frames_config& f) { f.min_transmission = v.value; },
                 kInv, "minimum transmission");
  frames_field("dark_level_above_i0", kR, [](fdk_frames_config& f) { f.dark_level = 2 * kI0; }, kInv, "I0");
  frames_field("dark_level_NaN", kR, [](fdk_frames_config& f) { f.dark_level = hostile::nan_value(); }, kInv, "I0");
  const float* zero = constant_frame(0.0f);
  const float* nan = constant_frame(std::numeric_limits<float>::quiet_NaN());
  const float* inf = constant_frame(std::numeric_limits<float>::infinity());
  const float* saturated = constant_frame(65535.0f);
  const float* thousand = constant_frame(1000.0f);
  frames_field("flat_zero", kR, [zero](fdk_frames_config& f) { f.flat = zero; }, kInv, "flat");
  frames_field("flat_NaN", kR, [nan](fdk_frames_config& f) { f.flat = nan; }, kInv, "flat");
  frames_field("flat_Inf", kR, [inf](fdk_frames_config& f) { f.flat = inf; }, kInv, "flat");
  frames_field("flat_saturated", kR, [saturated](fdk_frames_config& f) { f.flat = saturated; }, kInv, "flat");
  frames_field("flat_equal_to_dark", kR, [thousand](fdk_frames_config& f) { f.flat = thousand; f.dark = thousand; }, kInv,
               "flat");
  frames_field("flat_below_dark_level", kR, [thousand](fdk_frames_config& f) { f.flat = thousand; f.dark_level = 2000; },
               kInv, "flat");
  frames_field("dark_NaN", kR, [nan, thousand](fdk_frames_config& f) { f.flat = thousand; f.dark = nan; }, kInv, "flat");
  frames_field("dark_without_raw", kL, [thousand](fdk_frames_config& f) { f.dark = thousand; }, kInv, "line integrals");
  frames_field("flat_without_raw", kL, [thousand](fdk_frames_config& f) { f.flat = thousand; }, kInv, "line integrals");
  rows.push_back({"use_encoder_angle_with_matrices", kL,
                  [](fdk_config& c, fdk_frames_config& f) {
                    static std::vector<double> m(12 * kViews, 1.0);
                    c.scan.kind = FDK_SCAN_MATRICES;
                    c.scan.matrices = m.data();
                    f.use_encoder_angle = 1;
                  },
                  FDK_ERROR_UNSUPPORTED, "use_encoder_angle", ""});
  // The reconstruction's own errors come through with fdk_create's status.
  rows.push_back({"config_num_views_0", kL, [](fdk_config& c, fdk_frames_config&) { c.scan.num_views = 0; }, kInv,
                  "num_views", ""});
  rows.push_back({"config_views_NULL", kL,
                  [](fdk_config& c, fdk_frames_config&) { c.scan.kind = FDK_SCAN_VIEWS; c.scan.views = nullptr; }, kInv,
                  "scan.views", ""});
  rows.push_back({"config_sid_NaN", kL, [](fdk_config& c, fdk_frames_config&) { c.scan.uniform.sid = hostile::nan_value(); },
                  kInv, "SID", ""});
  rows.push_back({"config_host_budget_1", kL, [](fdk_config& c, fdk_frames_config&) { c.host_memory_budget = 1; },
                  FDK_ERROR_BUDGET, "budget", ""});
  rows.push_back({"config_window_99", kL, [](fdk_config& c, fdk_frames_config&) { c.window = 99; }, kInv, "window", ""});
  return rows;
}

class FramesCreate : public ::testing::TestWithParam<FramesCreateRow> {};

TEST_P(FramesCreate, IsRefusedAndLeavesTheNextAdapterAlone) {
  const FramesCreateRow& row = GetParam();
  HOSTILE_SKIP_IF_PENDING(row);
  fdk_config config = hostile::scan().config;
  fdk_frames_config fc = frames_config(row.mode);
  row.mutate(config, fc);
  fdk_frames* f = reinterpret_cast<fdk_frames*>(uintptr_t(1));
  const fdk_status s = fdk_frames_create(&config, &fc, &f);
  EXPECT_EQ(s, row.status) << fdk_frames_last_create_error();
  EXPECT_EQ(f, nullptr);
  if (s != FDK_OK) {
    const std::string msg = fdk_frames_last_create_error();
    EXPECT_NE(msg.find(row.needle), std::string::npos) << "message '" << msg << "' lacks '" << row.needle << "'";
  } else {
    fdk_frames_destroy(f);
  }
  EXPECT_TRUE(same_as(reconstruct(row.mode), row.mode));
}

INSTANTIATE_TEST_SUITE_P(Hostile, FramesCreate, ::testing::ValuesIn(frames_create_rows()),
                         hostile::row_name<FramesCreateRow>);

TEST(FramesCreateArguments, NullArguments) {
  const fdk_frames_config fc = frames_config(Mode::kLineIntegrals);
  fdk_frames* f = reinterpret_cast<fdk_frames*>(uintptr_t(1));
  EXPECT_EQ(fdk_frames_create(nullptr, &fc, &f), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(fdk_frames_create(&hostile::scan().config, nullptr, &f), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(fdk_frames_create(&hostile::scan().config, &fc, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fdk_frames_last_create_error()).find("NULL"), std::string::npos);
  EXPECT_EQ(fdk_frames_config_init(nullptr), nullptr);
  fdk_frames_destroy(nullptr);
  EXPECT_EQ(fdk_frames_context(nullptr), nullptr);
  EXPECT_TRUE(same_as(reconstruct(Mode::kLineIntegrals), Mode::kLineIntegrals));
}

// The adapter hands the same pixels to the same library: its volume of line
// integrals is the C ABI's reference.
TEST(FramesReference, LineIntegralsGiveTheLibrarysVolume) {
  EXPECT_TRUE(hostile::same_volume(reference(Mode::kLineIntegrals)));
  EXPECT_FALSE(reference(Mode::kRaw).empty());
}

// ---- pushes and call order -------------------------------------------------------------

enum class FStage { kFresh, kHalfPushed, kFinished };
enum class FAfter { kVolume, kCancelled };

struct FramesRow {
  std::string name;
  Mode mode;
  FStage stage;
  std::function<fdk_status(fdk_frames*)> action;
  fdk_status status;
  std::string needle;  // in fdk_frames_last_error (or the create error for a NULL handle)
  FAfter after = FAfter::kVolume;
  std::string pending = "";
  int accepted = 0;  // good frames [kHalf, kHalf + accepted) the action pushed
  bool null_handle = false;
};
void PrintTo(const FramesRow& r, std::ostream* os) { *os << r.name; }

int frames_received(fdk_frames* f) {
  fdk_frames_stats st{};
  st.struct_size = sizeof st;
  EXPECT_EQ(fdk_frames_get_stats(f, &st), FDK_OK);
  return st.frames_received;
}

void run_frames_row(const FramesRow& row) {
  FramesHandle h;
  const fdk_frames_config fc = frames_config(row.mode);
  ASSERT_EQ(fdk_frames_create(&hostile::scan().config, &fc, &h.f), FDK_OK) << fdk_frames_last_create_error();
  const int before = row.stage == FStage::kFresh ? 0 : row.stage == FStage::kHalfPushed ? kHalf : kViews;
  for (int v = 0; v < before; ++v) ASSERT_EQ(push_good(h.f, row.mode, v), FDK_OK) << fdk_frames_last_error(h.f);
  if (row.stage == FStage::kFinished) {
    ASSERT_EQ(fdk_frames_finish(h.f), FDK_OK) << fdk_frames_last_error(h.f);
  }
  const fdk_status s = row.action(h.f);
  ASSERT_EQ(s, row.status) << fdk_frames_last_error(h.f);
  if (s != FDK_OK && !row.null_handle) {
    const std::string msg = fdk_frames_last_error(h.f);
    EXPECT_NE(msg.find(row.needle), std::string::npos) << "message '" << msg << "' lacks '" << row.needle << "'";
  }
  if (row.after == FAfter::kCancelled) {
    EXPECT_EQ(push_good(h.f, row.mode, kViews - 1), FDK_ERROR_CANCELLED);
    EXPECT_EQ(fdk_frames_finish(h.f), FDK_ERROR_CANCELLED);
    fdk_frames_stats st{};
    st.struct_size = sizeof st;
    EXPECT_EQ(fdk_frames_get_stats(h.f, &st), FDK_OK);
    return;
  }
  if (row.stage != FStage::kFinished) {
    EXPECT_EQ(frames_received(h.f), before + row.accepted);
    for (int v = before + row.accepted; v < kViews; ++v)
      ASSERT_EQ(push_good(h.f, row.mode, v), FDK_OK) << "frame " << v << ": " << fdk_frames_last_error(h.f);
    ASSERT_EQ(fdk_frames_finish(h.f), FDK_OK) << fdk_frames_last_error(h.f);
  }
  fdk_frames_stats st{};
  st.struct_size = sizeof st;
  ASSERT_EQ(fdk_frames_get_stats(h.f, &st), FDK_OK);
  EXPECT_EQ(st.frames_reconstructed, kViews);
  EXPECT_EQ(st.missing, 0);
  EXPECT_TRUE(same_as(read_volume(h.f), row.mode));
}

std::shared_ptr<std::vector<float>> float_frame_with(int v, int column, int row, float value) {
  auto out = std::make_shared<std::vector<float>>(hostile::scan().pixels(v), hostile::scan().pixels(v) + kDet * kDet);
  (*out)[static_cast<size_t>(row * kDet + column)] = value;
  return out;
}

std::vector<FramesRow> frames_rows() {
  std::vector<FramesRow> rows;
  const fdk_status kInv = FDK_ERROR_INVALID_ARGUMENT;
  const Mode kL = Mode::kLineIntegrals, kR = Mode::kRaw;
  const int k = kHalf;
  const double angle = 360.0 * k / kViews;

  // NULL handle and NULL pixels.
  rows.push_back({"push_f32_NULL_handle", kL, FStage::kHalfPushed,
                  [k](fdk_frames*) { return push_good(nullptr, Mode::kLineIntegrals, k); }, kInv, "", FAfter::kVolume, "", 0, true});
  rows.push_back({"push_u16_NULL_handle", kR, FStage::kHalfPushed,
                  [k](fdk_frames*) { return push_good(nullptr, Mode::kRaw, k); }, kInv, "", FAfter::kVolume, "", 0, true});
  rows.push_back({"finish_NULL_handle", kL, FStage::kHalfPushed, [](fdk_frames*) { return fdk_frames_finish(nullptr); }, kInv,
                  "", FAfter::kVolume, "", 0, true});
  rows.push_back({"cancel_NULL_handle", kL, FStage::kHalfPushed, [](fdk_frames*) { return fdk_frames_cancel(nullptr); }, kInv,
                  "", FAfter::kVolume, "", 0, true});
  rows.push_back({"push_f32_NULL_pixels", kL, FStage::kHalfPushed,
                  [k, angle](fdk_frames* f) { return fdk_frames_push_f32(f, k, angle, 0, nullptr, kRowF, -1); }, kInv,
                  "pixels is NULL"});
  rows.push_back({"push_u16_NULL_pixels", kR, FStage::kHalfPushed,
                  [k, angle](fdk_frames* f) { return fdk_frames_push_u16(f, k, angle, 0, nullptr, kRowU, -1); }, kInv,
                  "pixels is NULL"});
  // Pitches.
  for (size_t pitch : {size_t(0), size_t(1), size_t(3), kRowF - 4, kRowF + 2, size_t(SIZE_MAX)})
    rows.push_back({"push_f32_pitch_" + (pitch == SIZE_MAX ? std::string("SIZE_MAX") : std::to_string(pitch)), kL,
                    FStage::kHalfPushed,
                    [k, angle, pitch](fdk_frames* f) {
                      return fdk_frames_push_f32(f, k, angle, 0, hostile::scan().pixels(k), pitch, -1);
                    },
                    kInv, "row_pitch_bytes"});
  for (size_t pitch : {size_t(0), size_t(1), kRowU - 2, kRowU + 1, size_t(SIZE_MAX)})
    rows.push_back({"push_u16_pitch_" + (pitch == SIZE_MAX ? std::string("SIZE_MAX") : std::to_string(pitch)), kR,
                    FStage::kHalfPushed,
                    [k, angle, pitch](fdk_frames* f) { return fdk_frames_push_u16(f, k, angle, 0, raw_frame(k).data(), pitch, -1); },
                    kInv, "row_pitch_bytes"});
  // Indices.
  for (int64_t index : {int64_t(-1), int64_t(kViews), int64_t(INT_MAX), int64_t(INT_MIN)}) {
    const std::string n = index == INT_MAX ? "INT_MAX" : index == INT_MIN ? "INT_MIN" : index < 0 ? "minus1" : std::to_string(index);
    rows.push_back({"push_f32_index_" + n, kL, FStage::kHalfPushed,
                    [index](fdk_frames* f) {
                      return fdk_frames_push_f32(f, static_cast<int32_t>(index), 0, 0, hostile::scan().pixels(0), kRowF, -1);
                    },
                    FDK_ERROR_OUT_OF_RANGE, "frame index"});
    rows.push_back({"push_u16_index_" + n, kR, FStage::kHalfPushed,
                    [index](fdk_frames* f) {
                      return fdk_frames_push_u16(f, static_cast<int32_t>(index), 0, 0, raw_frame(0).data(), kRowU, -1);
                    },
                    FDK_ERROR_OUT_OF_RANGE, "frame index"});
  }
  // Non-finite samples at several places (float frames, both modes of the
  // reconstruction's input: line integrals here).
  const std::pair<const char*, float> non_finite[] = {{"NaN", std::numeric_limits<float>::quiet_NaN()},
                                                      {"plusInf", std::numeric_limits<float>::infinity()},
                                                      {"minusInf", -std::numeric_limits<float>::infinity()}};
  const int places[][2] = {{0, 0}, {kDet - 1, 0}, {0, kDet - 1}, {kDet - 1, kDet - 1}, {7, 13}};
  for (const auto& value : non_finite) {
    for (const auto& place : places) {
      auto data = float_frame_with(k, place[0], place[1], value.second);
      rows.push_back({std::string("push_f32_") + value.first + "_at_" + std::to_string(place[0]) + "_" + std::to_string(place[1]),
                      kL, FStage::kHalfPushed,
                      [k, angle, data](fdk_frames* f) { return fdk_frames_push_f32(f, k, angle, 0, data->data(), kRowF, -1); },
                      kInv,
                      "pixel (" + std::to_string(place[0]) + ", " + std::to_string(place[1]) + ") is not finite"});
    }
  }
  // Encoder angle and timestamp not finite.
  for (const hostile::NamedDouble& v : {hostile::NamedDouble{"NaN", hostile::nan_value()}, {"plusInf", hostile::inf_value()},
                                        {"minusInf", -hostile::inf_value()}}) {
    rows.push_back({std::string("push_angle_") + v.name, kL, FStage::kHalfPushed,
                    [k, v](fdk_frames* f) { return fdk_frames_push_f32(f, k, v.value, 0, hostile::scan().pixels(k), kRowF, -1); },
                    kInv, "not finite"});
    rows.push_back({std::string("push_timestamp_") + v.name, kR, FStage::kHalfPushed,
                    [k, angle, v](fdk_frames* f) { return fdk_frames_push_u16(f, k, angle, v.value, raw_frame(k).data(), kRowU, -1); },
                    kInv, "not finite"});
  }
  // Samples beyond [-1e20, 1e20] and encoder angles beyond [-1e6, 1e6]
  // degrees: the library's ranges. Found by this suite: they passed the
  // adapter's push, the library refused them on the worker thread and the
  // error latched (every later push and the finish failed: one bad frame
  // lost the scan). Now refused at the push, the frame not taken; the run
  // then pushes the good frame and the rest and checks the volume.
  const std::pair<const char*, float> huge[] = {{"1e30", 1e30f}, {"minusFLT_MAX", -FLT_MAX}, {"2e20", 2e20f}};
  for (const auto& value : huge) {
    auto data = float_frame_with(k, 4, 4, value.second);
    rows.push_back({std::string("push_f32_") + value.first, kL, FStage::kHalfPushed,
                    [k, angle, data](fdk_frames* f) { return fdk_frames_push_f32(f, k, angle, 0, data->data(), kRowF, -1); },
                    kInv, "1e20"});
  }
  for (double bad_angle : {1e300, -1.5e6})
    rows.push_back({std::string("push_encoder_angle_") + (bad_angle > 0 ? "1e300" : "minus1p5e6"), kL, FStage::kHalfPushed,
                    [k, bad_angle](fdk_frames* f) {
                      return fdk_frames_push_f32(f, k, bad_angle, 0, hostile::scan().pixels(k), kRowF, -1);
                    },
                    kInv, "angle"});
  // A pitch whose rows overflow an address ((rows-1) * pitch + row wraps or
  // exceeds PTRDIFF_MAX): the copy's y * pitch segfaulted.
  for (size_t pitch : {size_t(1) << 62, SIZE_MAX & ~size_t(3), size_t(PTRDIFF_MAX / (kDet - 1) + 4) & ~size_t(3)})
    rows.push_back({"push_f32_pitch_" + std::to_string(pitch), kL, FStage::kHalfPushed,
                    [k, angle, pitch](fdk_frames* f) {
                      return fdk_frames_push_f32(f, k, angle, 0, hostile::scan().pixels(k), pitch, -1);
                    },
                    kInv, "row_pitch_bytes"});
  // Duplicates are ignored and counted: the first frame stays.
  for (int v : {0, 3, kHalf - 1}) {
    auto garbage = std::make_shared<std::vector<float>>(kDet * kDet, 5.0f);
    rows.push_back({"duplicate_" + std::to_string(v) + "_other_pixels", kL, FStage::kHalfPushed,
                    [v, garbage](fdk_frames* f) {
                      const fdk_status s = fdk_frames_push_f32(f, v, 0, 0, garbage->data(), kRowF, -1);
                      fdk_frames_stats st{};
                      st.struct_size = sizeof st;
                      EXPECT_EQ(fdk_frames_get_stats(f, &st), FDK_OK);
                      EXPECT_EQ(st.duplicates, 1);
                      return s;
                    },
                    FDK_OK, ""});
    auto nan = float_frame_with(v, 2, 2, std::numeric_limits<float>::quiet_NaN());
    rows.push_back({"duplicate_" + std::to_string(v) + "_NaN_pixel", kL, FStage::kHalfPushed,
                    [v, nan](fdk_frames* f) { return fdk_frames_push_f32(f, v, 0, 0, nan->data(), kRowF, -1); }, FDK_OK, ""});
    auto zeros = std::make_shared<std::vector<uint16_t>>(kDet * kDet, uint16_t(0));
    rows.push_back({"duplicate_" + std::to_string(v) + "_u16_zeros", kR, FStage::kHalfPushed,
                    [v, zeros](fdk_frames* f) { return fdk_frames_push_u16(f, v, 0, 0, zeros->data(), kRowU, -1); }, FDK_OK, ""});
  }
  // Call order.
  rows.push_back({"finish_twice", kL, FStage::kFinished, [](fdk_frames* f) { return fdk_frames_finish(f); },
                  FDK_ERROR_INVALID_STATE, "called twice"});
  rows.push_back({"push_after_finish", kL, FStage::kFinished, [](fdk_frames* f) { return push_good(f, Mode::kLineIntegrals, 0); },
                  FDK_ERROR_INVALID_STATE, "after fdk_frames_finish"});
  rows.push_back({"finish_before_any_frame", kL, FStage::kFresh, [](fdk_frames* f) { return fdk_frames_finish(f); },
                  FDK_ERROR_INVALID_STATE, "no frame arrived"});
  for (FStage stage : {FStage::kFresh, FStage::kHalfPushed, FStage::kFinished}) {
    const std::string at = stage == FStage::kFresh ? "_fresh" : stage == FStage::kHalfPushed ? "_half" : "_finished";
    rows.push_back({"cancel" + at, kL, stage, [](fdk_frames* f) { return fdk_frames_cancel(f); }, FDK_OK, "", FAfter::kCancelled});
    rows.push_back({"cancel_then_push" + at, kL, stage,
                    [](fdk_frames* f) {
                      EXPECT_EQ(fdk_frames_cancel(f), FDK_OK);
                      return push_good(f, Mode::kLineIntegrals, 1);
                    },
                    FDK_ERROR_CANCELLED, "cancelled", FAfter::kCancelled});
    rows.push_back({"cancel_then_finish" + at, kL, stage,
                    [](fdk_frames* f) {
                      EXPECT_EQ(fdk_frames_cancel(f), FDK_OK);
                      return fdk_frames_finish(f);
                    },
                    FDK_ERROR_CANCELLED, "cancelled", FAfter::kCancelled});
    rows.push_back({"stats_NULL" + at, kL, stage, [](fdk_frames* f) { return fdk_frames_get_stats(f, nullptr); }, kInv, "NULL"});
    for (uint32_t size : {0u, 4u, UINT32_MAX})
      rows.push_back({"stats_struct_size_" + std::to_string(size) + at, kL, stage,
                      [size](fdk_frames* f) {
                        fdk_frames_stats st{};
                        st.struct_size = size;
                        return fdk_frames_get_stats(f, &st);
                      },
                      FDK_ERROR_STRUCT_SIZE, "fdk_frames_stats"});
    rows.push_back({"missing_NULL_count" + at, kL, stage,
                    [](fdk_frames* f) { int32_t i[4]; return fdk_frames_missing(f, i, 4, nullptr); }, kInv, "NULL"});
    rows.push_back({"missing_negative_capacity" + at, kL, stage,
                    [](fdk_frames* f) { int32_t i[4], n = 0; return fdk_frames_missing(f, i, -1, &n); }, kInv, "capacity"});
    rows.push_back({"missing_NULL_indices_capacity_4" + at, kL, stage,
                    [](fdk_frames* f) { int32_t n = 0; return fdk_frames_missing(f, nullptr, 4, &n); }, kInv, "NULL"});
  }
  return rows;
}

class FramesPush : public ::testing::TestWithParam<FramesRow> {};

TEST_P(FramesPush, HasItsStatusAndLeavesTheVolume) { run_frames_row(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Hostile, FramesPush, ::testing::ValuesIn(frames_rows()), hostile::row_name<FramesRow>);

}  // namespace
