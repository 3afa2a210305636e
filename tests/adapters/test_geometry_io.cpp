// RTK XML geometry (read, write, matrices), the INI scan description and
// the default volume.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/geometry_io.hpp>
#include <fdk/phantom.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "test_support.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::what_of;

namespace {

fdk_view make_view(double g, double sid, double sdd) {
  fdk_view v{};
  v.gantry_angle_deg = g;
  v.sid = sid;
  v.sdd = sdd;
  return v;
}

// Two views in the layout RTK's writer produces (global values first, then
// one <Projection> each with its matrix), SID 1000, SDD 1536, projection
// offset x 3; the matrices are RTK's formula worked by hand.
const char* kRtkFile = R"(<?xml version="1.0"?>
<!DOCTYPE RTKGEOMETRY>
<RTKThreeDCircularGeometry version="3">
  <SourceToIsocenterDistance>1000</SourceToIsocenterDistance>
  <SourceToDetectorDistance>1536</SourceToDetectorDistance>
  <ProjectionOffsetX>3</ProjectionOffsetX>
  <Projection>
    <GantryAngle>0</GantryAngle>
    <Matrix>
                  -1536                   0                  -3                3000
                      0               -1536                   0                   0
                      0                   0                   1               -1000
    </Matrix>
  </Projection>
  <Projection>
    <GantryAngle>90</GantryAngle>
    <Matrix>
                     -3                   0                1536                3000
                      0               -1536                   0                   0
                      1                   0 6.12323399573677e-17               -1000
    </Matrix>
  </Projection>
</RTKThreeDCircularGeometry>
)";

}  // namespace

TEST(RtkMatrix, MapsAWorldPointToWhereItsRayMeetsTheDetector) {
  fdk_view views[3] = {make_view(30, 1000, 1500), make_view(-75, 800, 1300),
                       make_view(200, 950, 1400)};
  views[1].source_offset_x = 4;
  views[1].source_offset_y = -3;
  views[1].projection_offset_x = 12;
  views[1].projection_offset_y = -7;
  views[2].in_plane_angle_deg = 2;
  views[2].out_of_plane_angle_deg = -3;
  views[2].projection_offset_x = -20;
  for (const fdk_view& v : views) {
    const auto m = rtk_matrix(v);
    const double x[3] = {31.0, -17.0, 44.0};
    const double w = m[8] * x[0] + m[9] * x[1] + m[10] * x[2] + m[11];
    const double u = (m[0] * x[0] + m[1] * x[1] + m[2] * x[2] + m[3]) / w;
    const double vv = (m[4] * x[0] + m[5] * x[1] + m[6] * x[2] + m[7]) / w;
    // The detector point (u, v) in world coordinates, from the phantom
    // library's independent geometry.
    fdk_detector d{};
    d.size[0] = d.size[1] = 1;
    d.spacing[0] = d.spacing[1] = 1;
    d.origin[0] = u;
    d.origin[1] = vv;
    double s[3], p[3];
    fdk::phantom::source_position(v, s);
    fdk::phantom::pixel_position(v, d, 0, 0, p);
    // Source, point and detector point are collinear.
    const double a[3] = {x[0] - s[0], x[1] - s[1], x[2] - s[2]};
    const double b[3] = {p[0] - s[0], p[1] - s[1], p[2] - s[2]};
    const double cross[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                             a[0] * b[1] - a[1] * b[0]};
    const double norm = std::sqrt(cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2]);
    const double scale = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) *
                         std::sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    EXPECT_LT(norm / scale, 1e-12) << "gantry " << v.gantry_angle_deg;
  }
}

TEST(RtkXml, ReadsRtksLayoutAndChecksItsMatrices) {
  const auto views = parse_rtk_geometry(kRtkFile, "rtk.xml");
  ASSERT_EQ(views.size(), 2u);
  EXPECT_DOUBLE_EQ(views[0].sid, 1000);
  EXPECT_DOUBLE_EQ(views[1].sdd, 1536);
  EXPECT_DOUBLE_EQ(views[1].gantry_angle_deg, 90);
  EXPECT_DOUBLE_EQ(views[1].projection_offset_x, 3);
  EXPECT_DOUBLE_EQ(views[1].source_offset_x, 0);
}

TEST(RtkXml, ValuesPersistFromWhereTheyAreSet) {
  const auto views = parse_rtk_geometry(R"(<RTKThreeDCircularGeometry version="2">
      <SourceToIsocenterDistance>1000</SourceToIsocenterDistance>
      <SourceToDetectorDistance>1500</SourceToDetectorDistance>
      <Projection><Angle>0</Angle></Projection>
      <Projection><GantryAngle>10</GantryAngle><sourcetoisocenterdistance>990</sourcetoisocenterdistance></Projection>
      <Projection><GantryAngle>20</GantryAngle><!-- SID stays 990 --></Projection>
    </RTKThreeDCircularGeometry>)",
                                        "x.xml");
  ASSERT_EQ(views.size(), 3u);
  EXPECT_DOUBLE_EQ(views[0].sid, 1000);
  EXPECT_DOUBLE_EQ(views[1].sid, 990);
  EXPECT_DOUBLE_EQ(views[2].sid, 990);
  EXPECT_DOUBLE_EQ(views[2].gantry_angle_deg, 20);
}

TEST(RtkXml, RoundTripAndGlobals) {
  std::vector<fdk_view> views;
  for (int i = 0; i < 7; ++i) {
    fdk_view v = make_view(i * 51.4285714285714, 1000.0 + 0.1 * i, 1536.0);
    v.projection_offset_x = -12.5;
    v.source_offset_y = i * 0.01;
    v.in_plane_angle_deg = i == 3 ? 359.5 : 0.0;
    views.push_back(v);
  }
  const std::string text = format_rtk_geometry(views);
  // Shared values once, at the top; varying ones per projection.
  EXPECT_EQ(text.find("<SourceToDetectorDistance>1536</SourceToDetectorDistance>"),
            text.rfind("<SourceToDetectorDistance>"));
  EXPECT_LT(text.find("<ProjectionOffsetX>-12.5</ProjectionOffsetX>"), text.find("<Projection>"));
  EXPECT_EQ(text.find("SourceOffsetX"), std::string::npos);  // 0 everywhere: omitted
  EXPECT_GT(text.find("<SourceToIsocenterDistance>"), text.find("<Projection>"));
  const auto back = parse_rtk_geometry(text, "round.xml");  // also checks the matrices
  ASSERT_EQ(back.size(), views.size());
  for (size_t i = 0; i < views.size(); ++i) {
    EXPECT_NEAR(back[i].gantry_angle_deg, std::fmod(views[i].gantry_angle_deg, 360.0), 1e-12);
    EXPECT_EQ(back[i].sid, views[i].sid);
    EXPECT_EQ(back[i].sdd, views[i].sdd);
    EXPECT_EQ(back[i].projection_offset_x, views[i].projection_offset_x);
    EXPECT_EQ(back[i].source_offset_y, views[i].source_offset_y);
    EXPECT_EQ(back[i].in_plane_angle_deg, views[i].in_plane_angle_deg);
  }
  // Negative angles are written normalised to [0, 360), as RTK does.
  std::vector<fdk_view> neg = {make_view(-90, 1000, 1500)};
  EXPECT_NE(format_rtk_geometry(neg).find("<GantryAngle>270</GantryAngle>"), std::string::npos);
}

TEST(RtkXml, WritesAFile) {
  fdk_adapter_test::TempDir dir;
  std::vector<fdk_view> views = {make_view(0, 1000, 1500), make_view(180, 1000, 1500)};
  write_rtk_geometry(dir / "g.xml", views);
  EXPECT_EQ(read_rtk_geometry(dir / "g.xml").size(), 2u);
  EXPECT_THROW(write_rtk_geometry(dir / "missing/g.xml", views), Error);
}

TEST(RtkXml, ErrorsNameTheFileLineAndProblem) {
  struct Case {
    const char* xml;
    const char* expect;
  } cases[] = {
      {"<Other version=\"3\"/>", "not an RTK geometry file"},
      {"<RTKThreeDCircularGeometry><Projection/></RTKThreeDCircularGeometry>", "no version"},
      {"<RTKThreeDCircularGeometry version=\"1\"></RTKThreeDCircularGeometry>", "version 1"},
      {"<RTKThreeDCircularGeometry version=\"3\">\n<SourceToIsocenterDistance>10a</SourceToIsocenterDistance>"
       "</RTKThreeDCircularGeometry>",
       "line 2: <SourceToIsocenterDistance> '10a' is not a number"},
      {"<RTKThreeDCircularGeometry version=\"3\">\n\n<Projection>\n</RTKThreeDCircularGeometry>",
       "line 4: </RTKThreeDCircularGeometry> does not close <Projection> (line 3)"},
      {"<RTKThreeDCircularGeometry version=\"3\">\n<Projection>", "never closed"},
      {"<RTKThreeDCircularGeometry version=\"3\"></RTKThreeDCircularGeometry>", "no <Projection>"},
      {"<RTKThreeDCircularGeometry version=\"3\"><SourceToDetectorDistance>1</SourceToDetectorDistance>"
       "<Projection/></RTKThreeDCircularGeometry>",
       "projection 0: SourceToIsocenterDistance must be given"},
      {"<RTKThreeDCircularGeometry version=\"3\"><SourceToIsocenterDistance>1</SourceToIsocenterDistance>"
       "<Projection/></RTKThreeDCircularGeometry>",
       "parallel geometry"},
      {"<RTKThreeDCircularGeometry version=\"3\"><SourceToIsocenterDistance>1000</SourceToIsocenterDistance>"
       "<SourceToDetectorDistance>1500</SourceToDetectorDistance><Projection><GantryAngle>0</GantryAngle>"
       "<Matrix>1 2 3 4 5 6 7 8 9 10 11 12</Matrix></Projection></RTKThreeDCircularGeometry>",
       "the <Matrix> does not match"},
      {"<RTKThreeDCircularGeometry version=\"3\"><Projection><Matrix>1 2</Matrix></Projection>"
       "</RTKThreeDCircularGeometry>",
       "12 numbers"},
      {"<RTKThreeDCircularGeometry version=\"3\"><RadiusCylindricalDetector>500</RadiusCylindricalDetector>"
       "</RTKThreeDCircularGeometry>",
       "cylindrical"},
      {"<RTKThreeDCircularGeometry version=\"3\">&bogus;</RTKThreeDCircularGeometry>", "unknown entity"},
      {"", "no XML element"},
      {"<a/><b/>", "second root"},
  };
  for (const Case& c : cases) {
    const std::string msg = what_of([&] { parse_rtk_geometry(c.xml, "geo.xml"); });
    EXPECT_NE(msg.find("geo.xml"), std::string::npos) << c.xml << " -> " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.xml << " -> " << msg;
  }
  // Deep nesting is bounded.
  std::string deep = "<RTKThreeDCircularGeometry version=\"3\">";
  for (int i = 0; i < 1000; ++i) deep += "<a>";
  EXPECT_NE(what_of([&] { parse_rtk_geometry(deep, "deep.xml"); }).find("nested too deep"),
            std::string::npos);
}

TEST(ScanIni, ParsesSectionsAndComments) {
  const auto d = parse_scan_ini(R"(# a scanner
sid = 1000        ; comment
[scan]
sdd = 1500
views = 720
start_angle = -90
arc = 200
direction = cw
projection_offset = 2.5, -1
[detector]
pixel_size = 0.2
size = 1024 768
[volume]
size = 256 128 256
spacing = 0.5
origin = -64 -32 -64
)",
                                "scan.ini");
  EXPECT_DOUBLE_EQ(*d.sid, 1000);
  EXPECT_DOUBLE_EQ(*d.sdd, 1500);
  EXPECT_EQ(*d.views, 720);
  EXPECT_DOUBLE_EQ(*d.start_angle, -90);
  EXPECT_EQ(*d.direction, -1);
  EXPECT_DOUBLE_EQ((*d.projection_offset)[1], -1);
  EXPECT_DOUBLE_EQ((*d.pixel_size)[1], 0.2);
  EXPECT_EQ((*d.detector_size)[1], 768);
  EXPECT_EQ((*d.volume_size)[1], 128);
  EXPECT_DOUBLE_EQ((*d.volume_spacing)[2], 0.5);
  const fdk_scan s = uniform_scan(d, 720);
  EXPECT_EQ(s.kind, FDK_SCAN_UNIFORM);
  EXPECT_DOUBLE_EQ(s.arc_deg, -200);
  EXPECT_DOUBLE_EQ(s.first_angle_deg, -90);
  EXPECT_DOUBLE_EQ(s.uniform.projection_offset_x, 2.5);
  // Format and parse back.
  const auto again = parse_scan_ini(format_scan_ini(d), "again.ini");
  EXPECT_EQ(format_scan_ini(again), format_scan_ini(d));
}

TEST(ScanIni, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"sid = 1000\nsdi = 5\n", "line 2: unknown key 'sdi'"},
      {"sid = -1\n", "line 1: sid = '-1': must be > 0"},
      {"sid = abc\n", "expected 1 number"},
      {"views = 10.5\n", "must be an integer"},
      {"[detector]\nsize = 100\n", "expected 2 numbers"},
      {"[volume]\nspacing = 1 2\n", "expected 1 or 3 numbers"},
      {"direction = up\n", "ccw"},
      {"[lens]\n", "unknown section"},
      {"just text\n", "expected 'key = value'"},
  };
  for (const Case& c : cases) {
    const std::string msg = what_of([&] { parse_scan_ini(c.text, "s.ini"); });
    EXPECT_NE(msg.find("s.ini"), std::string::npos) << c.text << " -> " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.text << " -> " << msg;
  }
}

TEST(ScanIni, MergeLetsFlagsWin) {
  ScanDescription file = parse_scan_ini("sid = 1000\nsdd = 1500\nviews = 10\n", "f");
  ScanDescription flags;
  flags.set("sdd", "1600", "--sdd");
  flags.set("detector.pixel-size", "0.1 0.2", "--pixel-size");
  file.merge(flags);
  EXPECT_DOUBLE_EQ(*file.sid, 1000);
  EXPECT_DOUBLE_EQ(*file.sdd, 1600);
  EXPECT_DOUBLE_EQ((*file.pixel_size)[1], 0.2);
  EXPECT_THROW(uniform_scan(ScanDescription{}, 10), Error);
}

TEST(DefaultVolume, VoxelIsPixelOverMagnificationAndCoversTheFieldOfView) {
  const fdk_detector det = centred_detector(200, 100, 0.4, 0.4);
  const fdk_view v = make_view(0, 500, 1000);  // magnification 2
  const fdk_volume vol = default_volume(det, v);
  EXPECT_DOUBLE_EQ(vol.spacing[0], 0.2);
  EXPECT_DOUBLE_EQ(vol.spacing[1], 0.2);
  // Half-width 40 mm at 1000 mm: the edge ray passes the axis at
  // 500 * sin(atan(40 / 1000)) = 19.98 mm.
  const double r = 500.0 * std::sin(std::atan(40.0 / 1000.0));
  EXPECT_EQ(vol.size[0], static_cast<int>(std::ceil(2 * r / 0.2)));
  EXPECT_EQ(vol.size[0], vol.size[2]);
  EXPECT_EQ(vol.size[1], 100);  // 40 mm tall / 2 / 0.2
  EXPECT_NEAR(vol.origin[0] + 0.5 * (vol.size[0] - 1) * vol.spacing[0], 0.0, 1e-12);
  EXPECT_NEAR(vol.origin[1] + 0.5 * (vol.size[1] - 1) * vol.spacing[1], 0.0, 1e-12);
  // A detector shifted sideways (offset detector) reaches further.
  fdk_view off = v;
  off.projection_offset_x = 30;
  EXPECT_GT(default_volume(det, off).size[0], vol.size[0]);
  // Shifted up: the volume follows, at the isocentre's scale.
  fdk_view up = v;
  up.projection_offset_y = 10;
  EXPECT_NEAR(default_volume(det, up).origin[1] - vol.origin[1], 5.0, 1e-9);
}

// A NUL byte used to hide the rest of a value from strtod ("1000\0junk" was
// read as 1000, in both parsers): now the file is refused, naming the file,
// the line and the byte offset.
TEST(GeometryFiles, NulBytesAreRefusedWithLineAndByteOffset) {
  using namespace std::string_literals;
  const std::string ini = "sid = 1000\nsdd = 1500\0junk\nviews = 10\n"s;
  std::string msg = what_of([&] { parse_scan_ini(ini, "s.ini"); });
  EXPECT_NE(msg.find("'s.ini' line 2 (byte offset 21): a NUL byte"), std::string::npos) << msg;
  const std::string xml =
      "<RTKThreeDCircularGeometry version=\"3\">\n"
      "<SourceToIsocenterDistance>1000\0x</SourceToIsocenterDistance>\n"
      "<SourceToDetectorDistance>1500</SourceToDetectorDistance>\n"
      "<Projection><GantryAngle>0</GantryAngle></Projection>\n"
      "</RTKThreeDCircularGeometry>\n"s;
  msg = what_of([&] { parse_rtk_geometry(xml, "g.xml"); });
  EXPECT_NE(msg.find("geometry 'g.xml' line 2 (byte offset 71): a NUL byte"), std::string::npos)
      << msg;
  // From files: the message names the path.
  fdk_adapter_test::TempDir dir;
  fdk_adapter_test::write_text(dir / "scan.ini", ini);
  fdk_adapter_test::write_text(dir / "geometry.xml", xml);
  EXPECT_NE(what_of([&] { read_scan_ini(dir / "scan.ini"); }).find(dir / "scan.ini"),
            std::string::npos);
  EXPECT_NE(what_of([&] { read_rtk_geometry(dir / "geometry.xml"); }).find(dir / "geometry.xml"),
            std::string::npos);
  // Without the NUL both parse.
  std::string clean_ini = ini, clean_xml = xml;
  clean_ini.erase(clean_ini.find('\0'), 5);
  clean_xml.erase(clean_xml.find('\0'), 2);
  EXPECT_DOUBLE_EQ(*parse_scan_ini(clean_ini, "s.ini").sdd, 1500);
  EXPECT_DOUBLE_EQ(parse_rtk_geometry(clean_xml, "g.xml")[0].sid, 1000);
}

// Values the library would refuse at fdk_create are refused where they are
// read, naming the file and line (fdk-convert: exit 3 for a file, 2 for a
// flag, instead of 5 from the library).
TEST(GeometryFiles, ValuesBeyondTheLibrarysLimitsAreRefusedWhereRead) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"sid = 1000\narc = 720\n", "line 2: arc = '720': must lie in (0, 360] degrees"},
      {"start_angle = 1e7\n", "line 1: start_angle = '1e7': must lie within [-1e6, 1e6] degrees"},
      {"in_plane_angle = -2e6\n", "must lie within [-1e6, 1e6] degrees"},
      {"out_of_plane_angle = 1e9\n", "must lie within [-1e6, 1e6] degrees"},
      {"[volume]\nsize = 70000 10 10\n", "line 2: volume.size = '70000 10 10': must be an integer in [1, 65536]"},
      {"[detector]\nsize = 1 10\n", "must be an integer in [2, 65536]"},
      {"[detector]\nsize = 65537 10\n", "must be an integer in [2, 65536]"},
  };
  for (const Case& c : cases) {
    const std::string msg = what_of([&] { parse_scan_ini(c.text, "s.ini"); });
    EXPECT_NE(msg.find("'s.ini' line"), std::string::npos) << c.text << " -> " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.text << " -> " << msg;
  }
  const std::string xml =
      "<RTKThreeDCircularGeometry version=\"3\">\n"
      "<SourceToIsocenterDistance>1000</SourceToIsocenterDistance>\n"
      "<SourceToDetectorDistance>1500</SourceToDetectorDistance>\n"
      "<Projection><GantryAngle>1e7</GantryAngle></Projection>\n"
      "</RTKThreeDCircularGeometry>\n";
  const std::string msg = what_of([&] { parse_rtk_geometry(xml, "g.xml"); });
  EXPECT_NE(msg.find("'g.xml' line 4: <GantryAngle> 10000000 degrees: it must lie within"),
            std::string::npos)
      << msg;
}
