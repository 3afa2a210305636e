// Extreme sizes and values at the C ABI: every one is refused with a status
// and a message naming the field and its allowed range, or reconstructed
// correctly; never undefined behaviour, a crash or a silently wrong volume.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The message names the status, the field and the range.
void expect_message(const std::string& msg, fdk_status status, const char* field, const char* range) {
  EXPECT_NE(msg.find(fdk_status_string(status)), std::string::npos) << msg;
  EXPECT_NE(msg.find(field), std::string::npos) << "message '" << msg << "' lacks '" << field << "'";
  EXPECT_NE(msg.find(range), std::string::npos) << "message '" << msg << "' lacks '" << range << "'";
}

std::vector<float> reconstruct(const SmallScan& scan) {
  Handle h;
  EXPECT_EQ(fdk_create(&scan.config, &h.ctx), FDK_OK) << fdk_last_create_error();
  if (!h.ctx) return {};
  for (int v = 0; v < scan.views(); ++v)
    EXPECT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_EQ(fdk_finish(h.ctx), FDK_OK) << fdk_last_error(h.ctx);
  std::vector<float> volume;
  EXPECT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK) << fdk_last_error(h.ctx);
  return volume;
}

// One value of one field, refused at fdk_create.
struct Case {
  const char* field;  // as the message names it
  double value;
  const char* range;  // as the message writes it
};

void expect_refused(const SmallScan& scan, void (*set)(fdk_config&, double), const Case& c) {
  SCOPED_TRACE(std::string(c.field) + " = " + std::to_string(c.value));
  fdk_config config = scan.config;
  set(config, c.value);
  fdk_context* ctx = reinterpret_cast<fdk_context*>(0x1);
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(ctx, nullptr);
  expect_message(fdk_last_create_error(), FDK_ERROR_INVALID_ARGUMENT, c.field, c.range);
  fdk_destroy(ctx);
}

}  // namespace

// A pitch of 2^63 passed the old checks (a multiple of 4, at least a row)
// and the ingest read row j at pixels + j * pitch: a segfault. Pitches whose
// last row would lie beyond the address space are refused, naming
// row_pitch_bytes and the bound, and the handle takes the view afterwards.
TEST(Limits, RowPitchBeyondTheAddressSpaceIsRefused) {
  SmallScan scan(16, 8, 16);
  Handle h;
  ASSERT_EQ(fdk_create(&scan.config, &h.ctx), FDK_OK) << fdk_last_create_error();
  const size_t rows = static_cast<size_t>(scan.config.detector.size[1]);
  const size_t row_bytes = scan.pitch();
  const size_t max_span = static_cast<size_t>(std::numeric_limits<ptrdiff_t>::max());
  // The largest accepted pitch has its last row end at PTRDIFF_MAX bytes.
  const size_t largest = (max_span - row_bytes) / (rows - 1) / 4 * 4;
  const size_t pitches[] = {size_t{1} << 63, std::numeric_limits<size_t>::max() & ~size_t{3},
                            (std::numeric_limits<size_t>::max() / (rows - 1) + 1 + 3) / 4 * 4, largest + 4};
  for (size_t pitch : pitches) {
    SCOPED_TRACE(pitch);
    EXPECT_EQ(fdk_push_projection(h.ctx, 0, scan.pixels(0), pitch, nullptr), FDK_ERROR_INVALID_ARGUMENT);
    expect_message(fdk_last_error(h.ctx), FDK_ERROR_INVALID_ARGUMENT, "row_pitch_bytes", "PTRDIFF_MAX");
  }
  // Nothing was stored: every view goes in once and the volume is the clean one's.
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(h.ctx);
  ASSERT_EQ(fdk_finish(h.ctx), FDK_OK);
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK);
  EXPECT_EQ(volume, reconstruct(scan));
}

// A volume reaching to 1e-7 mm in front of the source: its corner projects
// about 5e10 rows away in view 0. The old code converted that row to int
// (undefined behaviour; INT_MIN on x86), found no detector rows for the
// slab and left the view out of it: the volume came out wrong with FDK_OK.
// The voxels it shares with a volume that stays clear of the source must
// have the same values.
TEST(Limits, VolumeReachingTheSourcePlaneGetsEveryView) {
  SmallScan near(16, 24, 48);
  fdk_config& c = near.config;
  c.volume.size[0] = 1;  // one column at x = 0: every corner stays in front of the source in every view
  c.volume.spacing[0] = 0.01;
  c.volume.origin[0] = 0;
  c.volume.size[1] = 8;
  c.volume.spacing[1] = 4;  // planes from y = -16 to 16 (edges)
  c.volume.origin[1] = -14;
  c.volume.size[2] = 8;
  c.volume.spacing[2] = (532.0 - 1e-7) / 8;  // edges from z = -32 to 500 - 1e-7 (the source at 500)
  c.volume.origin[2] = -32 + 0.5 * c.volume.spacing[2];
  near.reproject();
  SmallScan clear = near;
  clear.config.volume.size[2] = 4;  // the same voxels for z indices 0..3
  const std::vector<float> a = reconstruct(near), b = reconstruct(clear);
  ASSERT_EQ(a.size(), 8u * 8u);
  ASSERT_EQ(b.size(), 8u * 4u);
  double largest = 0;
  for (float x : b) largest = std::max(largest, std::abs(double(x)));
  ASSERT_GT(largest, 0);
  for (int y = 0; y < 8; ++y)
    for (int z = 0; z < 4; ++z) {
      SCOPED_TRACE("y " + std::to_string(y) + ", z " + std::to_string(z));
      const double va = a[static_cast<size_t>(y * 8 + z)], vb = b[static_cast<size_t>(y * 4 + z)];
      EXPECT_TRUE(std::isfinite(va));
      EXPECT_NEAR(va, vb, 1e-5 * largest);
    }
}

TEST(Limits, VolumeValuesOutsideTheirRangeAreRefusedWithFieldAndRange) {
  const SmallScan scan(16, 8, 16);
  static const char* const spacing_field[3] = {"volume x spacing", "volume y spacing", "volume z spacing"};
  static const char* const origin_field[3] = {"volume x origin", "volume y origin", "volume z origin"};
  using Set = void (*)(fdk_config&, double);
  const Set spacing[3] = {[](fdk_config& c, double v) { c.volume.spacing[0] = v; },
                          [](fdk_config& c, double v) { c.volume.spacing[1] = v; },
                          [](fdk_config& c, double v) { c.volume.spacing[2] = v; }};
  const Set origin[3] = {[](fdk_config& c, double v) { c.volume.origin[0] = v; },
                         [](fdk_config& c, double v) { c.volume.origin[1] = v; },
                         [](fdk_config& c, double v) { c.volume.origin[2] = v; }};
  for (int a = 0; a < 3; ++a) {
    for (double v : {0.0, -1.0, kNan, kInf, -kInf, 1e300, 1e-300, 2e6, 5e-7})
      expect_refused(scan, spacing[a], {spacing_field[a], v, "[1e-6, 1e6]"});
    for (double v : {kNan, kInf, -kInf, 1e300, -2e9})
      expect_refused(scan, origin[a], {origin_field[a], v, "[-1e9, 1e9]"});
  }
}

TEST(Limits, DetectorValuesOutsideTheirRangeAreRefusedWithFieldAndRange) {
  const SmallScan scan(16, 8, 16);
  using Set = void (*)(fdk_config&, double);
  const Set spacing[2] = {[](fdk_config& c, double v) { c.detector.spacing[0] = v; },
                          [](fdk_config& c, double v) { c.detector.spacing[1] = v; }};
  const Set origin[2] = {[](fdk_config& c, double v) { c.detector.origin[0] = v; },
                         [](fdk_config& c, double v) { c.detector.origin[1] = v; }};
  static const char* const spacing_field[2] = {"detector u (columns) spacing", "detector v (rows) spacing"};
  static const char* const origin_field[2] = {"detector u (columns) origin", "detector v (rows) origin"};
  for (int a = 0; a < 2; ++a) {
    for (double v : {0.0, -1.0, kNan, kInf, 1e300, 1e-300})
      expect_refused(scan, spacing[a], {spacing_field[a], v, "[1e-6, 1e6]"});
    for (double v : {kNan, -kInf, 1e300, 2e9})
      expect_refused(scan, origin[a], {origin_field[a], v, "[-1e9, 1e9]"});
  }
}

TEST(Limits, ScanValuesOutsideTheirRangeAreRefusedWithFieldAndRange) {
  const SmallScan scan(16, 8, 16);
  using Set = void (*)(fdk_config&, double);
  const Set sid = [](fdk_config& c, double v) { c.scan.uniform.sid = v; };
  const Set sdd = [](fdk_config& c, double v) { c.scan.uniform.sdd = v; };
  for (double v : {0.0, -5.0, kNan, kInf, 1e300, 1e-300, 2e9})
    expect_refused(scan, sid, {"SID", v, "[1e-6, 1e9]"});
  for (double v : {0.0, -5.0, kNan, -kInf, 1e300, 1e-300})
    expect_refused(scan, sdd, {"SDD", v, "[1e-6, 1e9]"});
  // Both within range, but a detector a thousand times nearer than the
  // isocentre, or a magnification of more than a million.
  expect_refused(scan, sdd, {"SDD / SID", 0.4, "[1e-3, 1e6]"});
  expect_refused(scan, [](fdk_config& c, double v) { c.scan.uniform.sid = v; c.scan.uniform.sdd = 1e3; },
                 {"SDD / SID", 1e-4, "[1e-3, 1e6]"});
  const Set offsets[4] = {[](fdk_config& c, double v) { c.scan.uniform.source_offset_x = v; },
                          [](fdk_config& c, double v) { c.scan.uniform.source_offset_y = v; },
                          [](fdk_config& c, double v) { c.scan.uniform.projection_offset_x = v; },
                          [](fdk_config& c, double v) { c.scan.uniform.projection_offset_y = v; }};
  static const char* const offset_field[4] = {"source offset x", "source offset y", "projection offset x",
                                              "projection offset y"};
  for (int k = 0; k < 4; ++k)
    for (double v : {kNan, kInf, 1e300, -2e9}) expect_refused(scan, offsets[k], {offset_field[k], v, "[-1e9, 1e9]"});
  for (double v : {kNan, kInf, 1e300, -2e6}) {
    expect_refused(scan, [](fdk_config& c, double x) { c.scan.uniform.in_plane_angle_deg = x; },
                   {"in-plane angle", v, "[-1e6, 1e6]"});
    expect_refused(scan, [](fdk_config& c, double x) { c.scan.uniform.out_of_plane_angle_deg = x; },
                   {"out-of-plane angle", v, "[-1e6, 1e6]"});
    expect_refused(scan, [](fdk_config& c, double x) { c.scan.first_angle_deg = x; },
                   {"scan.first_angle_deg", v, "[-1e6, 1e6]"});
  }
  for (double v : {0.0, kNan, kInf, 1e300, -361.0})
    expect_refused(scan, [](fdk_config& c, double x) { c.scan.arc_deg = x; }, {"scan.arc_deg", v, "[-360, 360]"});
  // The uniform scan's shared view is named as such.
  expect_refused(scan, sid, {"scan.uniform", kNan, "[1e-6, 1e9]"});
}

TEST(Limits, FilterValuesOutsideTheirRangeAreRefusedWithFieldAndRange) {
  const SmallScan scan(16, 8, 16);
  for (double v : {0.0, -1.0, kNan, kInf, 1.5})
    expect_refused(scan, [](fdk_config& c, double x) { c.cutoff = x; }, {"cutoff", v, "(0, 1]"});
  for (double v : {-1.0, kNan, -kInf, 2.0, 1e300})
    expect_refused(scan, [](fdk_config& c, double x) { c.truncation_padding = x; },
                   {"truncation_padding", v, "[0, 1]"});
}

// The per-view geometries (a FDK_SCAN_VIEWS list, matrices, or a view
// pushed with its measured geometry) take the same ranges, and the message
// says which view.
TEST(Limits, ViewsListsMatricesAndPushedViewsTakeTheSameRanges) {
  SmallScan scan(16, 8, 16);
  std::vector<fdk_view> views(8);
  for (int v = 0; v < 8; ++v) views[static_cast<size_t>(v)] = fdk::phantom::view_of(scan.config, v);
  views[3].sdd = 1e300;
  fdk_config config = scan.config;
  config.scan.kind = FDK_SCAN_VIEWS;
  config.scan.views = views.data();
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(fdk_last_create_error(), FDK_ERROR_INVALID_ARGUMENT, "scan.views[3]: SDD", "[1e-6, 1e9]");
  fdk_destroy(ctx);
  ctx = nullptr;

  // A matrix of RTK's form whose source sits 1e12 from the isocentre.
  std::vector<double> matrices(12 * 8, 0.0);
  for (int v = 0; v < 8; ++v) {
    // RTK's matrix of gantry angle a without offsets: K * Ry(-a) | (0, 0, -sid), K = diag(-sdd, -sdd, 1).
    const double a = -v * 2 * 3.14159265358979323846 / 8, sid = v == 5 ? 1e12 : 500, sdd = 750;
    const double rot[9] = {std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)};
    const double k[3] = {-sdd, -sdd, 1};
    double* m = matrices.data() + 12 * v;
    for (int r = 0; r < 3; ++r)
      for (int col = 0; col < 3; ++col) m[r * 4 + col] = k[r] * rot[r * 3 + col];
    m[11] = -sid;
  }
  config = scan.config;
  config.scan.kind = FDK_SCAN_MATRICES;
  config.scan.matrices = matrices.data();
  EXPECT_EQ(fdk_create(&config, &ctx), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(fdk_last_create_error(), FDK_ERROR_INVALID_ARGUMENT, "scan.matrices[5]: SID", "[1e-6, 1e9]");
  fdk_destroy(ctx);

  Handle h;
  ASSERT_EQ(fdk_create(&scan.config, &h.ctx), FDK_OK) << fdk_last_create_error();
  fdk_view bad = fdk::phantom::view_of(scan.config, 0);
  bad.projection_offset_y = 1e300;
  EXPECT_EQ(fdk_push_projection(h.ctx, 0, scan.pixels(0), scan.pitch(), &bad), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(fdk_last_error(h.ctx), FDK_ERROR_INVALID_ARGUMENT, "view: projection offset y", "[-1e9, 1e9]");
  bad = fdk::phantom::view_of(scan.config, 0);
  bad.sid = 1e-300;
  EXPECT_EQ(fdk_push_projection(h.ctx, 0, scan.pixels(0), scan.pitch(), &bad), FDK_ERROR_INVALID_ARGUMENT);
  expect_message(fdk_last_error(h.ctx), FDK_ERROR_INVALID_ARGUMENT, "view: SID", "[1e-6, 1e9]");
  // The handle is intact.
  for (int v = 0; v < scan.views(); ++v)
    ASSERT_EQ(fdk_push_projection(h.ctx, v, scan.pixels(v), scan.pitch(), nullptr), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_EQ(fdk_finish(h.ctx), FDK_OK);
}

// Scans at the edges of the accepted ranges reconstruct to finite volumes:
// the ranges keep every computation finite. The geometry of the small scan
// scaled to the smallest and the largest lengths accepted, with line
// integrals of a real scan's size.
TEST(Limits, ScansAtTheEdgesOfTheRangesGiveFiniteVolumes) {
  for (double scale : {1.5e-7, 1e5}) {
    SCOPED_TRACE(scale);
    SmallScan scan(8, 8, 16);
    fdk_config& c = scan.config;
    for (int a = 0; a < 3; ++a) {
      c.volume.spacing[a] *= scale;
      c.volume.origin[a] *= scale;
    }
    for (int a = 0; a < 2; ++a) {
      c.detector.spacing[a] *= scale;
      c.detector.origin[a] *= scale;
    }
    c.scan.uniform.sid *= scale;
    c.scan.uniform.sdd *= scale;
    for (auto& p : scan.projections)
      for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<float>(100.0 * ((i * 7919) % 13) / 13.0);
    const std::vector<float> volume = reconstruct(scan);
    ASSERT_EQ(volume.size(), 8u * 8u * 8u);
    for (float x : volume) ASSERT_TRUE(std::isfinite(x));
  }
}

// Planes 1e-6 apart seen through rows 1e6 wide: along y a voxel column's
// row moves by about 1e-12 rows a plane, so the planes that fall on the
// row window reach ~1e11, beyond int. The CPU backprojector converted them
// to int directly (undefined behaviour). The planes lie within a millionth
// of a row of each other: they must all hold the same values.
TEST(Limits, PlanesThatBarelyMoveOnTheDetectorAreAllBackprojected) {
  SmallScan scan(8, 8, 16);
  fdk_config& c = scan.config;
  c.volume.spacing[1] = 1e-6;
  c.volume.origin[1] = -3.5e-6;
  c.detector.spacing[1] = 1e6;
  c.detector.origin[1] = -0.5 * 15 * 1e6;
  for (auto& p : scan.projections)
    for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<float>(1.0 + (i * 7919) % 13);
  const std::vector<float> volume = reconstruct(scan);
  ASSERT_EQ(volume.size(), 8u * 8u * 8u);
  double largest = 0;
  for (float x : volume) largest = std::max(largest, std::abs(double(x)));
  ASSERT_GT(largest, 0);
  for (size_t y = 1; y < 8; ++y)
    for (size_t i = 0; i < 64; ++i) ASSERT_NEAR(volume[y * 64 + i], volume[i], 1e-5 * largest) << "plane " << y;
}
