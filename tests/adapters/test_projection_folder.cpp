// A folder of TIFF projections: order, patterns, multi-page files, dark and
// flat fields, bad-pixel maps, and the errors for inconsistent folders.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/projection_folder.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>

#include "test_support.hpp"
#include "tiff_test_files.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::what_of;
using fdk_adapter_test::RawTiffLayout;
using fdk_adapter_test::TempDir;
using fdk_adapter_test::write_raw_tiff;

namespace {

std::vector<double> constant(int w, int h, double v) {
  return std::vector<double>(static_cast<size_t>(w) * h, v);
}

constexpr int kW = 12, kH = 8;
constexpr double kDark = 100, kFlat = 10100;

// Raw uint16 projection i: transmission exp(-0.05 * (i + 1)) everywhere.
std::vector<double> raw_projection(int i) {
  return constant(kW, kH, std::round(kDark + (kFlat - kDark) * std::exp(-0.05 * (i + 1))));
}

double expected_line_integral(int i) {
  const double raw = std::round(kDark + (kFlat - kDark) * std::exp(-0.05 * (i + 1)));
  return -std::log((raw - kDark) / (kFlat - kDark));
}

}  // namespace

TEST(ProjectionFolder, NaturalOrderMultiPageDarkAndFlat) {
  TempDir dir;
  std::filesystem::create_directories(dir / "proj");
  std::filesystem::create_directories(dir / "dark");
  // p0 .. p10 single pages, then p11.tif with two pages (11 and 12).
  for (int i = 0; i <= 10; ++i) {
    write_raw_tiff(dir / ("proj/p" + std::to_string(i) + ".tif"), kW, kH, {raw_projection(i)});
  }
  write_raw_tiff(dir / "proj/p11.tif", kW, kH, {raw_projection(11), raw_projection(12)});
  fdk_adapter_test::write_text(dir / "proj/readme.txt", "not a projection");
  // Dark: two frames in a folder averaging to kDark; flat: a 3-page file.
  write_raw_tiff(dir / "dark/d1.tif", kW, kH, {constant(kW, kH, kDark - 10)});
  write_raw_tiff(dir / "dark/d2.tif", kW, kH, {constant(kW, kH, kDark + 10)});
  write_raw_tiff(dir / "flat.tif", kW, kH,
                 {constant(kW, kH, kFlat - 50), constant(kW, kH, kFlat), constant(kW, kH, kFlat + 50)});
  ProjectionFolderOptions o;
  o.dark = dir / "dark";
  o.flat = dir / "flat.tif";
  ProjectionFolder f(dir / "proj", o);
  EXPECT_EQ(f.count(), 13);
  EXPECT_TRUE(f.raw());
  EXPECT_EQ(f.dark_frames(), 2);
  EXPECT_EQ(f.flat_frames(), 3);
  EXPECT_EQ(f.sample_type(), SampleType::kUInt16);
  EXPECT_NE(f.describe(12).find("p11.tif' page 1"), std::string::npos) << f.describe(12);
  ProjectionFolder::Workspace ws;
  std::vector<float> out(kW * kH);
  for (int i = 0; i < f.count(); ++i) {
    EXPECT_EQ(f.read(i, out.data(), ws), 0u);
    EXPECT_NEAR(out[0], expected_line_integral(i), 1e-5) << f.describe(i);
    EXPECT_NEAR(out[kW * kH - 1], expected_line_integral(i), 1e-5);
  }
}

TEST(ProjectionFolder, PatternAndCalibrationFilesInTheSameFolder) {
  TempDir dir;
  for (int i = 0; i < 3; ++i) {
    write_raw_tiff(dir / ("proj_" + std::to_string(i) + ".tif"), kW, kH, {raw_projection(i)});
  }
  write_raw_tiff(dir / "flat.tif", kW, kH, {constant(kW, kH, kFlat)});
  write_raw_tiff(dir / "other_0.tif", 3, 3, {constant(3, 3, 1)});
  ProjectionFolderOptions o;
  o.flat = dir / "flat.tif";
  o.preprocess.dark_level = kDark;
  // Without a pattern other_0.tif (3 x 3) is a stray file: a clear error.
  const std::string msg = what_of([&] { ProjectionFolder f(dir.path(), o); });
  EXPECT_NE(msg.find("other_0.tif' is 3 x 3 uint16"), std::string::npos) << msg;
  EXPECT_NE(msg.find("all projections must share"), std::string::npos) << msg;
  o.pattern = "proj_*.tif";
  ProjectionFolder f(dir.path(), o);
  EXPECT_EQ(f.count(), 3);
  // The flat itself is never a projection even when the pattern matches it.
  o.pattern = "*.tif";
  std::filesystem::remove(dir / "other_0.tif");
  EXPECT_EQ(ProjectionFolder(dir.path(), o).count(), 3);
}

TEST(ProjectionFolder, MixedSampleTypesAndMissingFiles) {
  TempDir dir;
  write_raw_tiff(dir / "a1.tif", kW, kH, {raw_projection(0)});
  RawTiffLayout f32;
  f32.bits = 32;
  f32.format = SAMPLEFORMAT_IEEEFP;
  write_raw_tiff(dir / "a2.tif", kW, kH, {raw_projection(1)}, f32);
  ProjectionFolderOptions o;
  o.preprocess.i0 = kFlat;
  std::string msg = what_of([&] { ProjectionFolder f(dir.path(), o); });
  EXPECT_NE(msg.find("a2.tif' is 12 x 8 float32 but"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a1.tif' is 12 x 8 uint16"), std::string::npos) << msg;
  msg = what_of([&] { ProjectionFolder f(dir / "nothing_here", o); });
  EXPECT_NE(msg.find("nothing_here"), std::string::npos) << msg;
  o.pattern = "*.png";
  msg = what_of([&] { ProjectionFolder f(dir.path(), o); });
  EXPECT_NE(msg.find("no projection files matching '*.png'"), std::string::npos) << msg;
}

TEST(ProjectionFolder, RawWithoutFlatOrI0IsRefused) {
  TempDir dir;
  write_raw_tiff(dir / "p.tif", kW, kH, {raw_projection(0)});
  const std::string msg = what_of([&] { ProjectionFolder f(dir.path(), {}); });
  EXPECT_NE(msg.find("raw intensities (uint16)"), std::string::npos) << msg;
}

TEST(ProjectionFolder, MismatchedOrMissingDarkAndFlat) {
  TempDir dir;
  std::filesystem::create_directories(dir / "proj");
  write_raw_tiff(dir / "proj/p.tif", kW, kH, {raw_projection(0)});
  write_raw_tiff(dir / "dark.tif", kW + 1, kH, {constant(kW + 1, kH, kDark)});
  write_raw_tiff(dir / "flat.tif", kW, kH, {constant(kW, kH, kFlat)});
  ProjectionFolderOptions o;
  o.dark = dir / "dark.tif";
  o.flat = dir / "flat.tif";
  std::string msg = what_of([&] { ProjectionFolder f(dir / "proj", o); });
  EXPECT_NE(msg.find("dark field '" + (dir / "dark.tif") + "' is 13 x 8"), std::string::npos) << msg;
  o.dark = dir / "no_dark";
  msg = what_of([&] { ProjectionFolder f(dir / "proj", o); });
  EXPECT_NE(msg.find("no_dark' does not exist"), std::string::npos) << msg;
  // Dark frames of different sizes inside one folder.
  std::filesystem::create_directories(dir / "darks");
  write_raw_tiff(dir / "darks/d1.tif", kW, kH, {constant(kW, kH, kDark)});
  write_raw_tiff(dir / "darks/d2.tif", kW, kH + 2, {constant(kW, kH + 2, kDark)});
  o.dark = dir / "darks";
  msg = what_of([&] { ProjectionFolder f(dir / "proj", o); });
  EXPECT_NE(msg.find("d2.tif' is 12 x 10"), std::string::npos) << msg;
}

TEST(ProjectionFolder, ZeroFlatIsAnErrorNamingTheFlat) {
  TempDir dir;
  std::filesystem::create_directories(dir / "proj");
  write_raw_tiff(dir / "proj/p.tif", kW, kH, {raw_projection(0)});
  write_raw_tiff(dir / "flat.tif", kW, kH, {constant(kW, kH, 0)});
  ProjectionFolderOptions o;
  o.flat = dir / "flat.tif";
  o.preprocess.dark_level = kDark;
  const std::string msg = what_of([&] { ProjectionFolder f(dir / "proj", o); });
  EXPECT_NE(msg.find("flat field '" + (dir / "flat.tif") + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("96 of 96 pixels"), std::string::npos) << msg;
  // A saturated flat (uint16 65535 everywhere) likewise.
  write_raw_tiff(dir / "flat.tif", kW, kH, {constant(kW, kH, 65535)});
  EXPECT_NE(what_of([&] { ProjectionFolder f(dir / "proj", o); }).find("96 saturated"),
            std::string::npos);
}

TEST(ProjectionFolder, NonFiniteAndCorruptProjectionsNameTheFile) {
  TempDir dir;
  RawTiffLayout f32;
  f32.bits = 32;
  f32.format = SAMPLEFORMAT_IEEEFP;
  auto img = constant(kW, kH, 0.5);
  write_raw_tiff(dir / "p1.tif", kW, kH, {img}, f32);
  img[3 * kW + 5] = std::nan("");
  write_raw_tiff(dir / "p2.tif", kW, kH, {img}, f32);
  ProjectionFolder f(dir.path(), {});
  EXPECT_FALSE(f.raw());  // float without calibration: line integrals
  ProjectionFolder::Workspace ws;
  std::vector<float> out(kW * kH);
  f.read(0, out.data(), ws);
  EXPECT_FLOAT_EQ(out[7], 0.5f);
  const std::string msg = what_of([&] { f.read(1, out.data(), ws); });
  EXPECT_NE(msg.find("p2.tif': pixel (5, 3) is NaN"), std::string::npos) << msg;
  // A file replaced by garbage after the scan.
  fdk_adapter_test::write_text(dir / "p1.tif", "garbage");
  EXPECT_NE(what_of([&] { f.read(0, out.data(), ws); }).find("p1.tif"), std::string::npos);
  // Garbage at scan time.
  EXPECT_NE(what_of([&] { ProjectionFolder g(dir.path(), {}); }).find("p1.tif' is not a readable TIFF"),
            std::string::npos);
}

TEST(ProjectionFolder, BadPixelMapAndCropAndBinning) {
  TempDir dir;
  std::filesystem::create_directories(dir / "proj");
  auto img = constant(kW, kH, 1000);
  img[2 * kW + 3] = 0;  // a dead pixel: would be clamped
  write_raw_tiff(dir / "proj/p.tif", kW, kH, {img});
  auto mask = constant(kW, kH, 0);
  mask[2 * kW + 3] = 1;
  RawTiffLayout u8;
  u8.bits = 8;
  write_raw_tiff(dir / "bad.tif", kW, kH, {mask}, u8);
  fdk_adapter_test::write_text(dir / "bad.txt", "3 2\n");
  for (const char* map : {"bad.tif", "bad.txt"}) {
    ProjectionFolderOptions o;
    o.preprocess.i0 = 2000;
    o.bad_pixels = dir / map;
    o.preprocess.crop = Region{2, 1, 8, 6};
    o.preprocess.bin_u = o.preprocess.bin_v = 2;
    ProjectionFolder f(dir / "proj", o);
    EXPECT_EQ(f.width(), 4);
    EXPECT_EQ(f.height(), 3);
    EXPECT_EQ(f.preprocessor().report().bad_from_map, 1u);
    ProjectionFolder::Workspace ws;
    std::vector<float> out(12);
    EXPECT_EQ(f.read(0, out.data(), ws), 0u) << map;  // nothing clamped
    for (float v : out) EXPECT_NEAR(v, std::log(2.0), 1e-6) << map;
  }
}

// A projection that cannot be read is an error naming it and why, never a
// skipped file: skipping one spread the scan's angles over the others (a
// silently damaged reconstruction). Dangling links, folders and pipes used
// to be skipped; empty and unreadable files failed, less clearly.
TEST(ProjectionFolder, AnUnreadableEntryIsAnErrorNeverASkippedProjection) {
  struct Case {
    const char* what;
    std::function<void(const std::string&)> make;  // makes p2.tif unreadable
    const char* message;
  };
  std::vector<Case> cases = {
      {"dangling symlink",
       [](const std::string& p) { std::filesystem::create_symlink("gone.tif", p); },
       "p2.tif' matches '*.tif;*.tiff' but is a dangling symbolic link (to 'gone.tif'"},
      {"folder", [](const std::string& p) { std::filesystem::create_directory(p); },
       "p2.tif' matches '*.tif;*.tiff' but is a folder, not a file"},
      {"link to a folder",
       [](const std::string& p) {
         std::filesystem::create_directory(p + ".d");
         std::filesystem::create_symlink(p + ".d", p);
       },
       "p2.tif' matches '*.tif;*.tiff' but is a folder, not a file"},
      {"named pipe", [](const std::string& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); },
       "p2.tif' matches '*.tif;*.tiff' but is not a regular file"},
      {"empty file", [](const std::string& p) { fdk_adapter_test::write_text(p, ""); },
       "p2.tif' matches '*.tif;*.tiff' but is empty (0 bytes)"},
  };
  if (::geteuid() != 0) {  // root reads a file of mode 000 all the same
    cases.push_back({"permission denied",
                     [](const std::string& p) {
                       write_raw_tiff(p, kW, kH, {raw_projection(2)});
                       std::filesystem::permissions(p, std::filesystem::perms::none);
                     },
                     "p2.tif' matches '*.tif;*.tiff' but cannot be read: Permission denied"});
  }
  for (const Case& c : cases) {
    TempDir dir;
    for (int i : {0, 1, 3, 4}) {
      write_raw_tiff(dir / ("p" + std::to_string(i) + ".tif"), kW, kH, {raw_projection(i)});
    }
    c.make(dir / "p2.tif");
    ProjectionFolderOptions o;
    o.preprocess.i0 = kFlat;
    o.preprocess.dark_level = kDark;
    int count = -1;
    const std::string msg = what_of([&] { count = ProjectionFolder(dir.path(), o).count(); });
    EXPECT_NE(msg.find(dir / c.message), std::string::npos)
        << c.what << ": " << (msg.empty() ? "no error, " + std::to_string(count) + " projections" : msg);
  }
}

// Calibration folders are listed the same way: a dangling dark frame is an
// error, not a dark field averaged from fewer frames.
TEST(ProjectionFolder, AnUnreadableCalibrationFrameIsAnError) {
  TempDir dir;
  std::filesystem::create_directories(dir / "proj");
  std::filesystem::create_directories(dir / "dark");
  write_raw_tiff(dir / "proj/p0.tif", kW, kH, {raw_projection(0)});
  write_raw_tiff(dir / "dark/d0.tif", kW, kH, {constant(kW, kH, kDark)});
  std::filesystem::create_symlink("missing.tif", dir / "dark/d1.tif");
  ProjectionFolderOptions o;
  o.dark = dir / "dark";
  o.preprocess.i0 = kFlat;
  const std::string msg = what_of([&] { ProjectionFolder f(dir / "proj", o); });
  EXPECT_NE(msg.find("d1.tif' matches '*.tif;*.tiff' but is a dangling symbolic link"),
            std::string::npos)
      << msg;
}
