// fdk_create with every field of fdk_config, fdk_scan, fdk_volume and
// fdk_detector set to hostile values: the exact status, *out NULL, a message
// naming the field, and a good context created afterwards still
// reconstructing the reference volume bit for bit.
#include <chrono>
#include <climits>
#include <cstddef>
#include <memory>

#include <fdk/adapters/geometry_io.hpp>

#include "hostile_support.hpp"

namespace {

using hostile::NamedDouble;

struct CreateRow {
  std::string name;
  std::function<void(fdk_config&)> mutate;
  fdk_status status;
  std::string needle;   // in fdk_last_create_error()
  std::string pending;  // "" = runs
};

void PrintTo(const CreateRow& r, std::ostream* os) { *os << r.name; }

const NamedDouble kNonFinite[] = {
    {"NaN", hostile::nan_value()}, {"plusInf", hostile::inf_value()}, {"minusInf", -hostile::inf_value()}};
// Not > 0 (spacings, distances).
const NamedDouble kNotPositive[] = {{"0", 0.0},          {"minus1", -1.0},           {"minus1e300", -1e300},
                                    {"INT_MIN", INT_MIN}, {"minusDenormal", -hostile::denormal_value()}};
// Finite and positive but absurd: planned (b) refuses them at fdk_create.
const NamedDouble kAbsurdPositive[] = {{"1e300", 1e300}, {"1e_300", 1e-300}, {"denormal", hostile::denormal_value()}};
const NamedDouble kAbsurdSigned[] = {{"1e300", 1e300}, {"minus1e300", -1e300}};
const NamedDouble kBadAngles[] = {{"1e7", 1e7}, {"minus1e7", -1e7}, {"1e300", 1e300}, {"minus1e300", -1e300},
                                  {"INT_MIN", INT_MIN}};

const char* const kAxis[3] = {"x", "y", "z"};
const char* const kDetAxis[2] = {"u", "v"};

const std::string kPendingB = "pending: (b) absurd sizes, spacings, origins and distances refused at fdk_create";

// A double field given by a pointer-to-member path, as a setter.
using DoubleField = std::function<double&(fdk_config&)>;

void add_double_rows(std::vector<CreateRow>& rows, const std::string& field, const DoubleField& at,
                     const NamedDouble* values, size_t count, fdk_status status, const std::string& needle,
                     const std::string& pending = "") {
  for (size_t i = 0; i < count; ++i) {
    const double v = values[i].value;
    rows.push_back({field + "_" + values[i].name, [at, v](fdk_config& c) { at(c) = v; }, status, needle, pending});
  }
}

template <size_t N>
void add_double_rows(std::vector<CreateRow>& rows, const std::string& field, const DoubleField& at,
                     const NamedDouble (&values)[N], fdk_status status, const std::string& needle,
                     const std::string& pending = "") {
  add_double_rows(rows, field, at, values, N, status, needle, pending);
}

using IntField = std::function<int32_t&(fdk_config&)>;

void add_int_rows(std::vector<CreateRow>& rows, const std::string& field, const IntField& at,
                  std::initializer_list<int64_t> values, fdk_status status, const std::string& needle) {
  for (int64_t v : values) {
    const std::string vn = v == INT_MIN ? "INT_MIN" : v == INT_MAX ? "INT_MAX" : v < 0 ? "minus" + std::to_string(-v) : std::to_string(v);
    rows.push_back({field + "_" + vn, [at, v](fdk_config& c) { at(c) = static_cast<int32_t>(v); }, status, needle, ""});
  }
}

using hostile::ViewField;
using hostile::kViewFields;

// A FDK_SCAN_VIEWS scan of the small scan's views with `view` broken by `breaker`.
std::function<void(fdk_config&)> views_scan_with(int view, std::function<void(fdk_view&)> breaker) {
  return [view, breaker](fdk_config& c) {
    static thread_local std::vector<fdk_view> views;
    views.assign(static_cast<size_t>(c.scan.num_views), c.scan.uniform);
    for (int i = 0; i < c.scan.num_views; ++i) views[static_cast<size_t>(i)].gantry_angle_deg = 360.0 * i / c.scan.num_views;
    breaker(views[static_cast<size_t>(view)]);
    c.scan.kind = FDK_SCAN_VIEWS;
    c.scan.views = views.data();
  };
}

// A FDK_SCAN_MATRICES scan whose every matrix is `m` (12 doubles), or a good
// identity-like one with entry `entry` set to `value`.
std::function<void(fdk_config&)> matrices_scan(std::vector<double> m) {
  return [m](fdk_config& c) {
    static thread_local std::vector<double> all;
    all.clear();
    for (int i = 0; i < c.scan.num_views; ++i) all.insert(all.end(), m.begin(), m.end());
    c.scan.kind = FDK_SCAN_MATRICES;
    c.scan.matrices = all.data();
  };
}

// RTK's matrix of the small scan's view 0 (SID 500, SDD 750, no offsets).
std::vector<double> good_matrix() {
  const auto m = fdk::adapters::rtk_matrix(hostile::scan().config.scan.uniform);
  return std::vector<double>(m.begin(), m.end());
}

std::vector<CreateRow> create_rows() {
  std::vector<CreateRow> rows;
  const fdk_status kInv = FDK_ERROR_INVALID_ARGUMENT;

  // struct sizes
  for (uint32_t size : {0u, 4u, uint32_t(sizeof(fdk_config) - 2), uint32_t(sizeof(fdk_config) + 4), UINT32_MAX})
    rows.push_back({"config_struct_size_" + std::to_string(size), [size](fdk_config& c) { c.struct_size = size; },
                    FDK_ERROR_STRUCT_SIZE, "fdk_config.struct_size", ""});
  for (uint32_t size : {0u, 1u, uint32_t(sizeof(fdk_scan) - 8), uint32_t(sizeof(fdk_scan) + 8), UINT32_MAX})
    rows.push_back({"scan_struct_size_" + std::to_string(size), [size](fdk_config& c) { c.scan.struct_size = size; },
                    FDK_ERROR_STRUCT_SIZE, "scan.struct_size", ""});

  // volume
  for (int a = 0; a < 3; ++a) {
    const std::string axis = kAxis[a];
    add_int_rows(rows, "volume_size_" + axis, [a](fdk_config& c) -> int32_t& { return c.volume.size[a]; },
                 {0, -1, INT_MIN, INT_MAX, 65537}, kInv, "volume " + axis + " size");
    const DoubleField spacing = [a](fdk_config& c) -> double& { return c.volume.spacing[a]; };
    add_double_rows(rows, "volume_spacing_" + axis, spacing, kNonFinite, kInv, "volume " + axis + " spacing");
    add_double_rows(rows, "volume_spacing_" + axis, spacing, kNotPositive, kInv, "volume " + axis + " spacing");
    const DoubleField origin = [a](fdk_config& c) -> double& { return c.volume.origin[a]; };
    add_double_rows(rows, "volume_origin_" + axis, origin, kNonFinite, kInv, "volume " + axis + " origin");
  }
  // detector
  for (int a = 0; a < 2; ++a) {
    const std::string axis = kDetAxis[a];
    add_int_rows(rows, "detector_size_" + axis, [a](fdk_config& c) -> int32_t& { return c.detector.size[a]; },
                 {0, 1, -1, INT_MIN, INT_MAX, 65537}, kInv, "detector " + axis);
    const DoubleField spacing = [a](fdk_config& c) -> double& { return c.detector.spacing[a]; };
    add_double_rows(rows, "detector_spacing_" + axis, spacing, kNonFinite, kInv, "detector " + axis);
    add_double_rows(rows, "detector_spacing_" + axis, spacing, kNotPositive, kInv, "detector " + axis);
    const DoubleField origin = [a](fdk_config& c) -> double& { return c.detector.origin[a]; };
    add_double_rows(rows, "detector_origin_" + axis, origin, kNonFinite, kInv, "detector " + axis);
  }

  // scan
  add_int_rows(rows, "scan_kind", [](fdk_config& c) -> int32_t& { return c.scan.kind; }, {-1, 3, INT_MAX, INT_MIN}, kInv,
               "scan.kind");
  add_int_rows(rows, "scan_num_views", [](fdk_config& c) -> int32_t& { return c.scan.num_views; }, {0, -1, INT_MIN}, kInv,
               "scan.num_views");
  const DoubleField first = [](fdk_config& c) -> double& { return c.scan.first_angle_deg; };
  add_double_rows(rows, "scan_first_angle", first, kNonFinite, kInv, "scan.first_angle_deg");
  add_double_rows(rows, "scan_first_angle", first, kBadAngles, kInv, "scan.first_angle_deg");
  const DoubleField arc = [](fdk_config& c) -> double& { return c.scan.arc_deg; };
  add_double_rows(rows, "scan_arc", arc, kNonFinite, kInv, "scan.arc_deg");
  const NamedDouble bad_arcs[] = {{"0", 0.0},        {"361", 361.0},     {"minus361", -361.0},
                                  {"1e300", 1e300},  {"minus1e300", -1e300}, {"minus0", -0.0}};
  add_double_rows(rows, "scan_arc", arc, bad_arcs, kInv, "scan.arc_deg");
  // Too short for a reconstruction (below 180 degrees plus the fan).
  const NamedDouble short_arcs[] = {{"90", 90.0}, {"minus90", -90.0}, {"denormal", hostile::denormal_value()}};
  add_double_rows(rows, "scan_arc", arc, short_arcs, kInv, "180");
  for (const ViewField& f : kViewFields) {
    auto member = f.member;
    const DoubleField at = [member](fdk_config& c) -> double& { return c.scan.uniform.*member; };
    const std::string field = std::string("uniform_") + f.name;
    if (std::string(f.name) == "gantry_angle") continue;  // ignored in a uniform scan (first_angle_deg rules)
    add_double_rows(rows, field, at, kNonFinite, kInv, f.needle);
    if (f.angle) add_double_rows(rows, field, at, kBadAngles, kInv, f.needle);
    if (f.distance) add_double_rows(rows, field, at, kNotPositive, kInv, f.needle);
  }
  rows.push_back({"scan_views_NULL", [](fdk_config& c) { c.scan.kind = FDK_SCAN_VIEWS; c.scan.views = nullptr; }, kInv,
                  "scan.views", ""});
  rows.push_back({"scan_matrices_NULL", [](fdk_config& c) { c.scan.kind = FDK_SCAN_MATRICES; c.scan.matrices = nullptr; },
                  kInv, "scan.matrices", ""});
  // One broken view among good ones in a FDK_SCAN_VIEWS scan.
  for (const ViewField& f : kViewFields) {
    auto member = f.member;
    for (int view : {0, 7, 15}) {
      rows.push_back({std::string("views_") + std::to_string(view) + "_" + f.name + "_NaN",
                      views_scan_with(view, [member](fdk_view& v) { v.*member = hostile::nan_value(); }), kInv, f.needle, ""});
    }
    if (f.angle)
      rows.push_back({std::string("views_9_") + f.name + "_1e300",
                      views_scan_with(9, [member](fdk_view& v) { v.*member = 1e300; }), kInv, f.needle, ""});
    if (f.distance) {
      rows.push_back({std::string("views_9_") + f.name + "_0",
                      views_scan_with(9, [member](fdk_view& v) { v.*member = 0; }), kInv, f.needle, ""});
      rows.push_back({std::string("views_9_") + f.name + "_minusInf",
                      views_scan_with(9, [member](fdk_view& v) { v.*member = -hostile::inf_value(); }), kInv, f.needle,
                      ""});
    }
  }
  // Projection matrices that are no flat-panel perspective.
  rows.push_back({"matrices_zero", matrices_scan(std::vector<double>(12, 0.0)), kInv, "projection matrix", ""});
  for (int entry : {0, 5, 10, 11}) {
    auto m = good_matrix();
    m[static_cast<size_t>(entry)] = hostile::nan_value();
    rows.push_back({"matrices_entry" + std::to_string(entry) + "_NaN", matrices_scan(m), kInv, "projection matrix", ""});
    m[static_cast<size_t>(entry)] = hostile::inf_value();
    rows.push_back({"matrices_entry" + std::to_string(entry) + "_Inf", matrices_scan(m), kInv, "projection matrix", ""});
  }
  {
    auto skew = good_matrix();
    skew[1] = 100;  // u depends on y: a skewed detector
    rows.push_back({"matrices_skewed", matrices_scan(skew), kInv, "projection matrix", ""});
    auto mirror = good_matrix();
    mirror[0] = 750;  // u mirrored
    rows.push_back({"matrices_mirrored", matrices_scan(mirror), kInv, "projection matrix", ""});
    auto behind = good_matrix();
    behind[11] = 500;  // the source behind the isocentre
    rows.push_back({"matrices_source_behind", matrices_scan(behind), kInv, "projection matrix", ""});
  }

  // filtering and execution
  add_int_rows(rows, "window", [](fdk_config& c) -> int32_t& { return c.window; }, {-1, 5, INT_MAX, INT_MIN}, kInv, "window");
  const DoubleField cutoff = [](fdk_config& c) -> double& { return c.cutoff; };
  add_double_rows(rows, "cutoff", cutoff, kNonFinite, kInv, "cutoff");
  const NamedDouble bad_cutoffs[] = {{"0", 0.0}, {"minus1", -1.0}, {"1p0000001", 1.0000001}, {"1e300", 1e300},
                                     {"minusDenormal", -hostile::denormal_value()}};
  add_double_rows(rows, "cutoff", cutoff, bad_cutoffs, kInv, "cutoff");
  const DoubleField padding = [](fdk_config& c) -> double& { return c.truncation_padding; };
  add_double_rows(rows, "padding", padding, kNonFinite, kInv, "truncation_padding");
  const NamedDouble bad_padding[] = {{"minus1", -1.0}, {"1p5", 1.5}, {"1e300", 1e300}, {"minusDenormal", -hostile::denormal_value()}};
  add_double_rows(rows, "padding", padding, bad_padding, kInv, "truncation_padding");
  add_int_rows(rows, "short_scan", [](fdk_config& c) -> int32_t& { return c.short_scan; }, {-1, 3, INT_MAX, INT_MIN}, kInv,
               "short_scan");
  add_int_rows(rows, "offset_detector", [](fdk_config& c) -> int32_t& { return c.offset_detector; },
               {-1, 3, INT_MAX, INT_MIN}, kInv, "offset_detector");
  add_int_rows(rows, "backend", [](fdk_config& c) -> int32_t& { return c.backend; }, {-1, 3, INT_MAX, INT_MIN}, kInv,
               "backend");
  add_int_rows(rows, "num_devices", [](fdk_config& c) -> int32_t& { return c.num_devices; }, {-1, 17, INT_MAX, INT_MIN},
               kInv, "num_devices");
  for (int64_t d : {int64_t(-1), int64_t(INT_MIN)}) {
    rows.push_back({"devices0_" + std::string(d == -1 ? "minus1" : "INT_MIN"),
                    [d](fdk_config& c) { c.num_devices = 1; c.devices[0] = static_cast<int32_t>(d); }, kInv, "devices", ""});
  }
  add_int_rows(rows, "precision", [](fdk_config& c) -> int32_t& { return c.precision; }, {-1, 2, INT_MAX, INT_MIN}, kInv,
               "precision");
  add_int_rows(rows, "num_threads", [](fdk_config& c) -> int32_t& { return c.num_threads; }, {-1, 1025, INT_MAX, INT_MIN},
               kInv, "num_threads");
  add_int_rows(rows, "slab_thickness", [](fdk_config& c) -> int32_t& { return c.slab_thickness; }, {-1, INT_MIN}, kInv,
               "slab_thickness");
  add_int_rows(rows, "outside_fov", [](fdk_config& c) -> int32_t& { return c.outside_fov; }, {-1, 2, INT_MAX, INT_MIN},
               kInv, "outside_fov");
  for (uint64_t budget : {uint64_t(1), uint64_t(1024), uint64_t(4096)}) {
    rows.push_back({"host_budget_" + std::to_string(budget), [budget](fdk_config& c) { c.host_memory_budget = budget; },
                    FDK_ERROR_BUDGET, "host memory budget", ""});
  }
  // Half fan forced on where the ray through the axis misses the detector.
  rows.push_back({"offset_detector_on_axis_off_detector",
                  [](fdk_config& c) { c.offset_detector = FDK_ON; c.detector.origin[0] = 2 * c.detector.spacing[0]; },
                  kInv, "offset_detector", ""});
  return rows;
}

// Rows whose new behaviour other work brings (planned (b)).
std::vector<CreateRow> pending_create_rows() {
  std::vector<CreateRow> rows;
  const fdk_status kInv = FDK_ERROR_INVALID_ARGUMENT;
  for (int a = 0; a < 3; ++a) {
    const std::string axis = kAxis[a];
    add_double_rows(rows, "volume_spacing_" + axis, [a](fdk_config& c) -> double& { return c.volume.spacing[a]; },
                    kAbsurdPositive, kInv, "volume " + axis + " spacing", kPendingB);
    add_double_rows(rows, "volume_origin_" + axis, [a](fdk_config& c) -> double& { return c.volume.origin[a]; },
                    kAbsurdSigned, kInv, "volume " + axis + " origin", kPendingB);
  }
  for (int a = 0; a < 2; ++a) {
    const std::string axis = kDetAxis[a];
    add_double_rows(rows, "detector_spacing_" + axis, [a](fdk_config& c) -> double& { return c.detector.spacing[a]; },
                    kAbsurdPositive, kInv, "detector " + axis, kPendingB);
    add_double_rows(rows, "detector_origin_" + axis, [a](fdk_config& c) -> double& { return c.detector.origin[a]; },
                    kAbsurdSigned, kInv, "detector " + axis, kPendingB);
  }
  for (const ViewField& f : kViewFields) {
    if (f.angle) continue;
    auto member = f.member;
    const DoubleField at = [member](fdk_config& c) -> double& { return c.scan.uniform.*member; };
    if (f.distance)
      add_double_rows(rows, std::string("uniform_") + f.name, at, kAbsurdPositive, kInv, f.needle, kPendingB);
    else
      add_double_rows(rows, std::string("uniform_") + f.name, at, kAbsurdSigned, kInv, f.needle, kPendingB);
  }
  // Sizes whose products overflow: every axis at the largest int.
  rows.push_back({"volume_size_INT_MAX_cubed",
                  [](fdk_config& c) { c.volume.size[0] = c.volume.size[1] = c.volume.size[2] = INT_MAX; }, kInv,
                  "volume", kPendingB});
  rows.push_back({"detector_size_INT_MAX_squared",
                  [](fdk_config& c) { c.detector.size[0] = c.detector.size[1] = INT_MAX; }, kInv, "detector", kPendingB});
  // Per-view bookkeeping beyond the host budget: BUDGET, fast (checked below).
  rows.push_back({"num_views_1e8_budget_64MiB",
                  [](fdk_config& c) { c.scan.num_views = 100000000; c.host_memory_budget = 64ull << 20; }, FDK_ERROR_BUDGET,
                  "budget", "pending: (b) num_views beyond the host budget's per-view bookkeeping -> BUDGET, fast"});
  rows.push_back({"num_views_INT_MAX_budget_64MiB",
                  [](fdk_config& c) { c.scan.num_views = INT_MAX; c.host_memory_budget = 64ull << 20; }, FDK_ERROR_BUDGET,
                  "budget", "pending: (b) num_views beyond the host budget's per-view bookkeeping -> BUDGET, fast"});
  return rows;
}

class Create : public ::testing::TestWithParam<CreateRow> {};
class CreatePending : public ::testing::TestWithParam<CreateRow> {};

void run_create_row(const CreateRow& row) {
  fdk_config config = hostile::scan().config;
  row.mutate(config);
  fdk_context* ctx = reinterpret_cast<fdk_context*>(uintptr_t(1));
  const auto t0 = std::chrono::steady_clock::now();
  const fdk_status s = fdk_create(&config, &ctx);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(s, row.status) << fdk_last_create_error();
  EXPECT_EQ(ctx, nullptr);
  if (s != FDK_OK) {
    EXPECT_TRUE(hostile::message_has(fdk_last_create_error(), row.status, row.needle));
  }
  if (s == FDK_OK) fdk_destroy(ctx);
  EXPECT_LT(seconds, 2.0) << "a refusal is decided before any work";
  // Nothing of the failed create lingers: a good context gives the reference.
  EXPECT_TRUE(hostile::same_volume(hostile::reconstruct(hostile::scan().config)));
}

TEST_P(Create, IsRefusedWithItsStatusAndField) { run_create_row(GetParam()); }

TEST_P(CreatePending, IsRefusedWithItsStatusAndField) {
  HOSTILE_SKIP_IF_PENDING(GetParam());
  run_create_row(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Hostile, Create, ::testing::ValuesIn(create_rows()), hostile::row_name<CreateRow>);
INSTANTIATE_TEST_SUITE_P(Hostile, CreatePending, ::testing::ValuesIn(pending_create_rows()),
                         hostile::row_name<CreateRow>);

// NULL arguments of fdk_create itself (not a field).
TEST(CreateArguments, NullConfigAndNullOut) {
  fdk_context* ctx = reinterpret_cast<fdk_context*>(uintptr_t(1));
  EXPECT_EQ(fdk_create(nullptr, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_TRUE(hostile::message_has(fdk_last_create_error(), FDK_ERROR_INVALID_ARGUMENT, "config"));
  EXPECT_EQ(fdk_create(&hostile::scan().config, nullptr), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(hostile::message_has(fdk_last_create_error(), FDK_ERROR_INVALID_ARGUMENT, "out"));
  EXPECT_TRUE(hostile::same_volume(hostile::reconstruct(hostile::scan().config)));
}

// The premise of every comparison: the same views give the same bits.
TEST(Reference, IsDeterministic) {
  const std::vector<float>& first = hostile::reference();
  ASSERT_EQ(first.size(), 16u * 16u * 16u);
  for (int run = 0; run < 3; ++run) EXPECT_TRUE(hostile::same_volume(hostile::reconstruct(hostile::scan().config)));
  // And it is not trivially equal: a changed view changes it.
  fdk_test::SmallScan other(16, 16, 24);
  other.config.slab_thickness = 4;
  hostile::Handle h;
  ASSERT_EQ(fdk_create(&other.config, &h.ctx), FDK_OK);
  std::vector<float> changed(other.pixels(3), other.pixels(3) + 24 * 24);
  changed[300] += 1.0f;
  for (int v = 0; v < hostile::kViews; ++v)
    ASSERT_EQ(fdk_push_projection(h.ctx, v, v == 3 ? changed.data() : other.pixels(v), other.pitch(), nullptr), FDK_OK);
  ASSERT_EQ(fdk_finish(h.ctx), FDK_OK);
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK);
  EXPECT_FALSE(hostile::same_volume(volume));
}

}  // namespace
