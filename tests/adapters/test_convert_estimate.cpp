// fdk-convert's geometry estimation (issue 41): --estimate-geometry prints
// the estimate (in words, or as a JSON event), --write-geometry writes the
// corrected views as RTK XML by the tool's rules, --apply-estimate
// reconstructs with them. The scans are simulated exactly (fdk_phantom) with
// a known error: the true detector sits 3 pixels off along u while the
// geometry file says 0. These tests check the plumbing; the last one checks
// that the estimate fixes the volume.
#include <fdk/adapters/geometry_io.hpp>
#include <fdk/fdk.h>
#include <fdk/phantom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <limits>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tool_run.hpp"

namespace ad = fdk::adapters;
using fdk_adapter_test::TempDir;

namespace {

const std::string kConvert = FDK_CONVERT_PATH;

fdk_adapter_test::ToolResult run(const std::string& command, const TempDir& dir) {
  return fdk_adapter_test::run_tool(command, dir.path());
}

// The simulated scan: 64 x 64 pixels of 0.8 mm, SID 500, SDD 800, a full
// turn; the volume 48^3 voxels of 0.5 mm centred on the axis.
constexpr double kSid = 500, kSdd = 800;
constexpr double kTrueOffsetPixels = 3.0;

// The detector (square, `pixels` of `pitch` mm) and the volume (`volume`^3
// voxels of `voxel` mm centred on the axis).
struct Shape {
  int pixels;
  double pitch;
  int volume;
  double voxel;
};
constexpr Shape kCoarse{64, 0.8, 48, 0.5};
// Twice as fine: a head 20 mm across spans 80 columns, enough for the views'
// sum to pin a tilt.
constexpr Shape kFine{128, 0.4, 80, 0.3};

std::vector<fdk::phantom::Ellipsoid> phantom() { return fdk::phantom::modified_shepp_logan_3d(10.0); }

std::vector<fdk_view> circle(int views, double projection_offset_x, double in_plane_angle_deg = 0.0) {
  std::vector<fdk_view> out(static_cast<size_t>(views));
  for (int i = 0; i < views; ++i) {
    fdk_view& v = out[static_cast<size_t>(i)];
    std::memset(&v, 0, sizeof v);
    v.gantry_angle_deg = 360.0 * i / views;
    v.sid = kSid;
    v.sdd = kSdd;
    v.projection_offset_x = projection_offset_x;
    v.in_plane_angle_deg = in_plane_angle_deg;
  }
  return out;
}

// Writes dir/proj.mha (line integrals of the phantom seen by the true
// views, float32, the detector also turned by `tilt_deg` in its plane) and
// dir/nominal.xml (the same views with no offset nor tilt); the arguments
// that read them, without OUTPUT_DIR.
std::string make_scan(const TempDir& dir, int views, double tilt_deg = 0.0, const Shape& shape = kCoarse) {
  const int n = shape.pixels;
  const std::vector<fdk_view> truth = circle(views, kTrueOffsetPixels * shape.pitch, tilt_deg);
  fdk_detector detector{};
  detector.size[0] = detector.size[1] = n;
  detector.spacing[0] = detector.spacing[1] = shape.pitch;
  detector.origin[0] = detector.origin[1] = -(n - 1) / 2.0 * shape.pitch;
  std::vector<float> stack(static_cast<size_t>(n) * n * views);
  for (int i = 0; i < views; ++i) {
    fdk::phantom::project_view(phantom(), truth[static_cast<size_t>(i)], detector,
                               stack.data() + static_cast<size_t>(i) * n * n);
  }
  {
    std::ofstream f(dir / "proj.mha", std::ios::binary);
    f << "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
      << "ElementSpacing = " << shape.pitch << " " << shape.pitch << " 1\nDimSize = " << n << " " << n << " "
      << views << "\nElementType = MET_FLOAT\nElementDataFile = LOCAL\n";
    f.write(reinterpret_cast<const char*>(stack.data()), static_cast<std::streamsize>(stack.size() * sizeof(float)));
  }
  ad::write_rtk_geometry(dir / "nominal.xml", circle(views, 0.0));
  const double origin = -(shape.volume - 1) / 2.0 * shape.voxel;
  std::ostringstream grid;
  grid << " --volume-size " << shape.volume << " --voxel-size " << shape.voxel << " --volume-origin " << origin << ","
       << origin << "," << origin;
  return kConvert + " " + (dir / "proj.mha") + " --pixel-size " + std::to_string(shape.pitch) + grid.str() +
         " --threads 2 --read-threads 2";
}

// A number of the "estimate" event (NaN when absent).
double json_field(const std::string& out, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("\"" + key + "\":(-?[0-9.eE+-]+)"))) return NAN;
  return std::stod(m[1]);
}
std::string json_basis(const std::string& out) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("\"event\":\"estimate\".*\"basis\":\"([^\"]*)\""))) return "";
  return m[1];
}


// A MetaImage volume written by fdk-convert --format mha: its voxels (x
// fastest, then y, then z, as ITK orders them).
std::vector<float> read_mha(const std::string& path) {
  const std::string text = fdk_adapter_test::read_all(path);
  const std::string marker = "ElementDataFile = LOCAL\n";
  const size_t at = text.find(marker);
  if (at == std::string::npos) return {};
  const size_t start = at + marker.size();
  std::vector<float> v((text.size() - start) / sizeof(float));
  std::memcpy(v.data(), text.data() + start, v.size() * sizeof(float));
  return v;
}

// Root-mean-square difference between a reconstruction (read_mha) and the
// phantom, over the voxels of the central cylinder (radius 8 mm, |y| < 6 mm,
// where every view sees the object) at least 1 mm from every surface.
double rms_error(const std::vector<float>& volume, const Shape& shape = kCoarse) {
  const auto objects = phantom();
  const int nv = shape.volume;
  const double voxel = shape.voxel, origin = -(nv - 1) / 2.0 * voxel;
  if (volume.size() != static_cast<size_t>(nv) * nv * nv) return INFINITY;
  double sum = 0;
  long n = 0;
  for (int z = 0; z < nv; ++z) {
    for (int y = 0; y < nv; ++y) {
      for (int x = 0; x < nv; ++x) {
        const double px = origin + x * voxel, py = origin + y * voxel, pz = origin + z * voxel;
        if (px * px + pz * pz > 64.0 || std::fabs(py) > 6.0) continue;
        // Away from the surfaces, where even the true geometry's volume is
        // blurred by the voxel and the filter: the error that stays there is
        // the geometry's.
        bool near_surface = false;
        for (const auto& e : objects) {
          near_surface = near_surface || fdk::phantom::distance_to_surface(e, px, py, pz) < 1.0;
        }
        if (near_surface) continue;
        const double d = volume[(static_cast<size_t>(z) * nv + y) * nv + x] -
                         fdk::phantom::density_at(objects, px, py, pz);
        sum += d * d;
        ++n;
      }
    }
  }
  return n ? std::sqrt(sum / n) : INFINITY;
}

bool has_part_file(const std::string& folder) {
  for (const std::string& name : fdk_adapter_test::names_in(folder)) {
    if (name.find(".part") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

// --estimate-geometry without OUTPUT_DIR: the estimate's fields on stdout, no
// volume; with --progress json one "estimate" event between the stage and
// "done".
TEST(ConvertEstimate, EstimateOnlyPrintsTheFields) {
  TempDir dir;
  const std::string convert = make_scan(dir, 90) + " --geometry " + (dir / "nominal.xml");
  const auto before = fdk_adapter_test::names_in(dir.path());
  const auto r = run(convert + " --estimate-geometry", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* field : {"geometry estimate", "offset:", " px = ", " mm (sigma ", "tilt:", " deg (sigma ",
                            "confidence:", "flags:", "used:", " views, ", "basis:"}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field << " in\n" << r.out;
  }
  EXPECT_EQ(fdk_adapter_test::names_in(dir.path()), before) << "an estimate-only run writes nothing";

  const auto json = run(convert + " --estimate-geometry --progress json --quiet", dir);
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(json.err, "");
  std::vector<std::string> lines;
  std::istringstream in(json.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_GE(lines.size(), 2u) << json.out;
  EXPECT_EQ(lines.back().rfind("{\"event\":\"done\",", 0), 0u) << lines.back();
  const std::string& event = lines[lines.size() - 2];
  EXPECT_EQ(event.rfind("{\"event\":\"estimate\",", 0), 0u) << event;
  for (const char* key : {"offset_u_pixels", "offset_u_mm", "offset_sigma_pixels", "tilt_deg", "tilt_sigma_deg",
                          "confidence", "view_pairs", "views_used", "rows_used"}) {
    EXPECT_FALSE(std::isnan(json_field(event, key))) << key << " in " << event;
  }
  EXPECT_NE(event.find("\"flags\":["), std::string::npos) << event;
  EXPECT_NE(event.find("\"applied\":false"), std::string::npos) << event;
  EXPECT_FALSE(json_basis(event).empty()) << event;
  // Some views of the 90, each of which has an opposite one in a full turn.
  EXPECT_LE(json_field(event, "views_used"), 90) << event;
  EXPECT_GT(json_field(event, "views_used"), 0) << event;
}

// --write-geometry: a valid RTK file whose views are the nominal ones plus
// the estimate; never over an input, an existing file only with --force, no
// temporary left by a refusal or a failure.
TEST(ConvertEstimate, WriteGeometryByTheToolsRules) {
  TempDir dir;
  const std::string convert = make_scan(dir, 90) + " --geometry " + (dir / "nominal.xml") + " --estimate-geometry";
  const std::string out = dir / "corrected.xml";
  const auto probe = run(convert + " --progress json", dir);
  ASSERT_EQ(probe.code, 0) << probe.err;
  const double confidence = json_field(probe.out, "confidence");

  // Below 0.5 it is refused (exit 5, naming the confidence and the basis),
  // and nothing is written.
  const auto unforced = run(convert + " --write-geometry " + out, dir);
  if (confidence < 0.5) {
    EXPECT_EQ(unforced.code, 5) << unforced.err;
    EXPECT_NE(unforced.err.find("confidence"), std::string::npos) << unforced.err;
    EXPECT_NE(unforced.err.find("--force-estimate"), std::string::npos) << unforced.err;
    EXPECT_NE(unforced.err.find(json_basis(probe.out)), std::string::npos) << unforced.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  } else {
    EXPECT_EQ(unforced.code, 0) << unforced.err;
    std::filesystem::remove(out);
  }
  EXPECT_FALSE(has_part_file(dir.path()));

  const auto written = run(convert + " --write-geometry " + out + " --force-estimate --progress json", dir);
  ASSERT_EQ(written.code, 0) << written.err;
  EXPECT_NE(written.out.find("\"applied\":true"), std::string::npos) << written.out;
  EXPECT_NE(written.out.find("\"outputs\":[\"" + out + "\"]"), std::string::npos) << written.out;
  const double offset_mm = json_field(written.out, "offset_u_mm"), tilt = json_field(written.out, "tilt_deg");
  const std::vector<fdk_view> nominal = ad::read_rtk_geometry(dir / "nominal.xml");
  const std::vector<fdk_view> corrected = ad::read_rtk_geometry(out);
  ASSERT_EQ(corrected.size(), nominal.size());
  for (size_t i = 0; i < corrected.size(); ++i) {
    EXPECT_NEAR(corrected[i].projection_offset_x, nominal[i].projection_offset_x + offset_mm, 1e-5) << i;
    EXPECT_NEAR(std::remainder(corrected[i].in_plane_angle_deg - nominal[i].in_plane_angle_deg - tilt, 360.0), 0,
                1e-5)
        << i;
    EXPECT_NEAR(std::remainder(corrected[i].gantry_angle_deg - nominal[i].gantry_angle_deg, 360.0), 0, 1e-9) << i;
    EXPECT_EQ(corrected[i].sid, nominal[i].sid);
    EXPECT_EQ(corrected[i].sdd, nominal[i].sdd);
  }
  const std::string first = fdk_adapter_test::read_all(out);

  // An existing file: only with --force.
  const auto exists = run(convert + " --write-geometry " + out + " --force-estimate", dir);
  EXPECT_EQ(exists.code, 2) << exists.err;
  EXPECT_NE(exists.err.find("--force"), std::string::npos) << exists.err;
  EXPECT_NE(exists.err.find(out), std::string::npos) << exists.err;
  EXPECT_EQ(run(convert + " --write-geometry " + out + " --force-estimate --force", dir).code, 0);
  EXPECT_EQ(fdk_adapter_test::read_all(out), first);

  // An input: never, --force or not, by any name.
  const std::string nominal_text = fdk_adapter_test::read_all(dir / "nominal.xml");
  for (const std::string& target : {dir / "nominal.xml", dir / "./nominal.xml", dir / "proj.mha"}) {
    const auto clash = run(convert + " --write-geometry " + target + " --force-estimate --force", dir);
    EXPECT_EQ(clash.code, 2) << target << ": " << clash.err;
    EXPECT_NE(clash.err.find("would replace"), std::string::npos) << clash.err;
  }
  EXPECT_EQ(fdk_adapter_test::read_all(dir / "nominal.xml"), nominal_text);

  // A folder that does not exist: exit 4, nothing left.
  const auto unwritable = run(convert + " --write-geometry " + (dir / "missing/corrected.xml") + " --force-estimate", dir);
  EXPECT_EQ(unwritable.code, 4) << unwritable.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "missing"));
  EXPECT_FALSE(has_part_file(dir.path()));
}

// --apply-estimate reconstructs with the corrected geometry: the volume of a
// run given the corrected geometry file; a failure after the estimate leaves
// neither volume nor geometry file.
TEST(ConvertEstimate, ApplyEstimateEqualsTheCorrectedGeometryFile) {
  TempDir dir;
  const std::string convert = make_scan(dir, 90);
  const std::string nominal = convert + " --geometry " + (dir / "nominal.xml");
  ASSERT_EQ(run(nominal + " --estimate-geometry --force-estimate --write-geometry " + (dir / "corrected.xml"), dir).code,
            0);
  const auto applied = run(nominal + " " + (dir / "applied") +
                               " --apply-estimate --force-estimate --format mha --progress json --quiet",
                           dir);
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_NE(applied.out.find("\"event\":\"estimate\""), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("\"applied\":true"), std::string::npos) << applied.out;
  EXPECT_NE(applied.out.find("\"stage\":\"geometry estimate\""), std::string::npos) << applied.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "applied/preview.png") || std::filesystem::exists(dir / "applied/preview.pgm"));
  const auto fixed = run(convert + " --geometry " + (dir / "corrected.xml") + " " + (dir / "fixed") +
                             " --format mha --quiet",
                         dir);
  ASSERT_EQ(fixed.code, 0) << fixed.err;
  const std::vector<float> a = read_mha(dir / "applied/volume.mha"), b = read_mha(dir / "fixed/volume.mha");
  ASSERT_EQ(a.size(), static_cast<size_t>(kCoarse.volume) * kCoarse.volume * kCoarse.volume);
  ASSERT_EQ(a.size(), b.size());
  double largest = 0, diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, std::fabs(static_cast<double>(b[i])));
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  EXPECT_LE(diff, 1e-5 * largest) << "largest " << largest;

  // The preview cannot be written (test hook): exit 4, and neither the
  // volume nor the corrected geometry is left under its final name.
  const auto failed = run("FDK_CONVERT_FAIL_PREVIEW=1 " + nominal + " " + (dir / "failed") +
                              " --apply-estimate --force-estimate --write-geometry " + (dir / "g.xml") + " --quiet",
                          dir);
  EXPECT_EQ(failed.code, 4) << failed.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "g.xml"));
  EXPECT_FALSE(has_part_file(dir.path()));
  EXPECT_TRUE(!std::filesystem::exists(dir / "failed") || fdk_adapter_test::names_in(dir / "failed").empty());
}

// The preview's height in pixels (PNG's IHDR, or PGM's header), 0 when
// unreadable: a caption line more makes it taller.
int preview_height(const std::string& folder) {
  const std::string png = fdk_adapter_test::read_all(folder + "/preview.png");
  if (png.size() > 24) {
    const auto* b = reinterpret_cast<const unsigned char*>(png.data());
    return (b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23];
  }
  std::istringstream pgm(fdk_adapter_test::read_all(folder + "/preview.pgm"));
  std::string magic;
  int w = 0, h = 0;
  pgm >> magic >> w >> h;
  return magic == "P5" ? h : 0;
}

// --estimate-geometry with OUTPUT_DIR: the nominal reconstruction, the
// estimate of the same pass reported and in the preview's caption, not
// applied.
TEST(ConvertEstimate, EstimateWithOutputDirKeepsTheNominalVolume) {
  TempDir dir;
  const std::string convert = make_scan(dir, 90) + " --geometry " + (dir / "nominal.xml") + " --format mha";
  const auto plain = run(convert + " " + (dir / "plain") + " --quiet", dir);
  ASSERT_EQ(plain.code, 0) << plain.err;
  const auto reported = run(convert + " " + (dir / "reported") + " --estimate-geometry --progress json --quiet", dir);
  ASSERT_EQ(reported.code, 0) << reported.err;
  EXPECT_NE(reported.out.find("\"event\":\"estimate\""), std::string::npos) << reported.out;
  EXPECT_NE(reported.out.find("\"applied\":false"), std::string::npos) << reported.out;
  EXPECT_EQ(reported.out.find("\"stage\":\"geometry estimate\""), std::string::npos)
      << "no second pass: " << reported.out;
  EXPECT_EQ(fdk_adapter_test::read_all(dir / "plain/volume.mha"), fdk_adapter_test::read_all(dir / "reported/volume.mha"));
  EXPECT_GT(preview_height(dir / "reported"), preview_height(dir / "plain")) << "the caption's estimate line";
  const auto text = run(convert + " " + (dir / "text") + " --estimate-geometry --quiet", dir);
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("geometry estimate (not applied"), std::string::npos) << text.out;
}

// Below confidence 0.5 --apply-estimate refuses (exit 5) after printing the
// estimate, and leaves no volume.
TEST(ConvertEstimate, LowConfidenceIsNotAppliedWithoutForce) {
  TempDir dir;
  const std::string convert = make_scan(dir, 8) + " --geometry " + (dir / "nominal.xml");
  const auto probe = run(convert + " --estimate-geometry --progress json", dir);
  ASSERT_EQ(probe.code, 0) << probe.err;
  // Eight views 45 degrees apart: no two see the same rays, confidence 0.
  ASSERT_LT(json_field(probe.out, "confidence"), 0.5) << probe.out;
  const auto r = run(convert + " " + (dir / "out") + " --apply-estimate", dir);
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_NE(r.out.find("confidence:"), std::string::npos) << "the estimate is printed first: " << r.out;
  EXPECT_NE(r.err.find("--apply-estimate: the geometry estimate's confidence is"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(json_basis(probe.out)), std::string::npos) << r.err;
  EXPECT_TRUE(!std::filesystem::exists(dir / "out") || fdk_adapter_test::names_in(dir / "out").empty());
}

// Combinations that would do nothing or cannot be done: exit 2 before any
// work.
TEST(ConvertEstimate, BadCombinationsAreUsageErrors) {
  TempDir dir;
  const std::string convert = make_scan(dir, 8) + " --geometry " + (dir / "nominal.xml");
  struct Case {
    std::string args, message;
  } cases[] = {
      {" " + (dir / "out") + " --write-geometry " + (dir / "g.xml"), "--write-geometry writes the estimated geometry"},
      {" " + (dir / "out") + " --force-estimate", "--force-estimate applies"},
      {" --estimate-geometry --force-estimate", "--force-estimate applies"},
      {" --apply-estimate", "--apply-estimate reconstructs: expected PROJECTIONS and OUTPUT_DIR"},
      {"", "--estimate-geometry to only estimate"},
      {" --estimate-geometry --write-geometry " + dir.path(), "is a folder"},
  };
  for (const Case& c : cases) {
    const auto r = run(convert + c.args, dir);
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  EXPECT_FALSE(std::filesystem::exists(dir / "g.xml"));
}

// The help and the docs name the flags.
TEST(ConvertEstimate, HelpAndDocsNameTheFlags) {
  TempDir dir;
  const auto help = run(kConvert + " --help", dir);
  ASSERT_EQ(help.code, 0);
  const std::string docs = fdk_adapter_test::read_all(std::string(FDK_DOCS_DIR) + "/ADAPTERS.md");
  for (const char* flag : {"--estimate-geometry", "--apply-estimate", "--write-geometry", "--force-estimate"}) {
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
    EXPECT_NE(docs.find(flag), std::string::npos) << flag;
  }
}

// The end to end: a scan whose geometry file has the wrong centre of
// rotation is fixed by fdk-convert --apply-estimate with no other flag.
TEST(ConvertEstimate, WrongCentreOfRotationIsFixedByApplyEstimate) {
  TempDir dir;
  const std::string convert = make_scan(dir, 180);
  const auto probe = run(convert + " --geometry " + (dir / "nominal.xml") + " --estimate-geometry --progress json", dir);
  ASSERT_EQ(probe.code, 0) << probe.err;
  EXPECT_NEAR(json_field(probe.out, "offset_u_pixels"), kTrueOffsetPixels, 0.5) << probe.out;
  ad::write_rtk_geometry(dir / "true.xml", circle(180, kTrueOffsetPixels * kCoarse.pitch));
  const auto reconstruct = [&](const std::string& geometry, const std::string& name, const std::string& extra) {
    const auto r = run(convert + " --geometry " + (dir / geometry) + " " + (dir / name) + " --format mha --quiet" + extra,
                       dir);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    if (r.code != 0) return std::numeric_limits<double>::infinity();  // no volume to read
    return rms_error(read_mha(dir / (name + "/volume.mha")));
  };
  const double nominal = reconstruct("nominal.xml", "nominal", "");
  const double applied = reconstruct("nominal.xml", "applied", " --apply-estimate");
  const double truth = reconstruct("true.xml", "truth", "");
  std::printf("rms error: nominal geometry %.4g, --apply-estimate %.4g, true geometry %.4g\n", nominal, applied, truth);
  EXPECT_LT(applied, 0.5 * nominal);
  // Issue 41: within 5 % of the true geometry's error against the phantom.
  EXPECT_LT(applied, 1.05 * truth);
}

// The same with the detector also turned by 1 degree in its plane. This
// coarse scan (a head 20 mm across on 64 pixels of 0.8 mm) leaves the tilt
// to the pixel grid: the estimate either reports it within 0.05 degree or
// says it did not pin it (tilt 0, no "tilt" flag), never a wrong tilt as if
// it were sure; --apply-estimate then still fixes the centre of rotation.
TEST(ConvertEstimate, ATiltTheScanCannotPinIsNotApplied) {
  constexpr double kTrueTiltDeg = 1.0;
  TempDir dir;
  const std::string convert = make_scan(dir, 180, kTrueTiltDeg);
  const auto probe = run(convert + " --geometry " + (dir / "nominal.xml") + " --estimate-geometry --progress json", dir);
  ASSERT_EQ(probe.code, 0) << probe.err;
  EXPECT_NEAR(json_field(probe.out, "offset_u_pixels"), kTrueOffsetPixels, 0.1) << probe.out;
  const double tilt = json_field(probe.out, "tilt_deg");
  if (probe.out.find("\"tilt\"]") != std::string::npos || probe.out.find("\"tilt\",") != std::string::npos) {
    EXPECT_NEAR(tilt, kTrueTiltDeg, 0.05) << probe.out;
  } else {
    EXPECT_EQ(tilt, 0.0) << probe.out;
    EXPECT_GT(json_field(probe.out, "tilt_sigma_deg"), 0.05) << probe.out;
  }
  const auto reconstruct = [&](const std::string& name, const std::string& extra) {
    const auto r = run(convert + " --geometry " + (dir / "nominal.xml") + " " + (dir / name) + " --format mha --quiet" +
                           extra,
                       dir);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    if (r.code != 0) return std::numeric_limits<double>::infinity();
    return rms_error(read_mha(dir / (name + "/volume.mha")));
  };
  const double nominal = reconstruct("nominal", "");
  const double applied = reconstruct("applied", " --apply-estimate");
  std::printf("rms error with a 1 deg tilt: nominal geometry %.4g, --apply-estimate %.4g (tilt %s)\n", nominal, applied,
              tilt == 0.0 ? "not applied" : "applied");
  EXPECT_LT(applied, 0.5 * nominal);
}

// Issue 41's bar for a tilt, end to end: the detector turned by 1 degree
// in its plane and 3 pixels off, on the finer scan (the mirror symmetry of
// the views' sum pins the tilt); --apply-estimate with
// no other flag reconstructs within 5 % of the true geometry's error
// against the phantom, and the tilt it applied is within 0.05 degree.
TEST(ConvertEstimate, TiltAndCentreOfRotationFixedByApplyEstimate) {
  constexpr double kTrueTiltDeg = 1.0;
  // 360 views: with 180 the views' sum is too coarse in angle to be
  // symmetric to 0.05 degree, and the estimate declines the tilt (sigma 0.10).
  constexpr int kViews = 360;
  TempDir dir;
  const std::string convert = make_scan(dir, kViews, kTrueTiltDeg, kFine);
  const auto probe = run(convert + " --geometry " + (dir / "nominal.xml") + " --estimate-geometry --progress json", dir);
  ASSERT_EQ(probe.code, 0) << probe.err;
  EXPECT_NEAR(json_field(probe.out, "offset_u_pixels"), kTrueOffsetPixels, 0.1) << probe.out;
  EXPECT_NEAR(json_field(probe.out, "tilt_deg"), kTrueTiltDeg, 0.05) << probe.out;
  ad::write_rtk_geometry(dir / "true.xml", circle(kViews, kTrueOffsetPixels * kFine.pitch, kTrueTiltDeg));
  const auto reconstruct = [&](const std::string& geometry, const std::string& name, const std::string& extra) {
    const auto r = run(convert + " --geometry " + (dir / geometry) + " " + (dir / name) + " --format mha --quiet" + extra,
                       dir);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    if (r.code != 0) return std::numeric_limits<double>::infinity();
    return rms_error(read_mha(dir / (name + "/volume.mha")), kFine);
  };
  const double nominal = reconstruct("nominal.xml", "nominal", "");
  const double applied = reconstruct("nominal.xml", "applied", " --apply-estimate");
  const double truth = reconstruct("true.xml", "truth", "");
  std::printf("rms error with a 1 deg tilt and 3 px: nominal geometry %.4g, --apply-estimate %.4g, true geometry %.4g\n",
              nominal, applied, truth);
  EXPECT_LT(applied, 0.5 * nominal);
  EXPECT_LT(applied, 1.05 * truth);
}
