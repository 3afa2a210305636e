// fdk-scan-sim and fdk-convert end to end: the simulator's TIFF folder
// through the converter to TIFF slices (and the other outputs), checking the
// phantom's brain value; and every bad input giving its documented exit
// code, a message naming the file, and no output that looks complete.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <fdk/phantom.hpp>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>

#include "sim.hpp"
#include "test_support.hpp"
#include "tool_run.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::TempDir;

namespace {

using Result = fdk_adapter_test::ToolResult;

Result run(const std::string& args, const std::string& log_dir) {
  return fdk_adapter_test::run_tool(args, log_dir);
}

const std::string kSim = FDK_SCAN_SIM_PATH;
const std::string kConvert = FDK_CONVERT_PATH;

// The scan of these tests: 96 x 96 pixels of 0.8 mm, 120 views.
fdk_sim::ScannerModel model() {
  fdk_sim::ScannerModel m;
  m.columns = m.rows = 96;
  m.views = 120;
  return m;
}
const char* kSimArgs = " --views 120 --detector 96 --threads 2";
const int kN = 64;           // volume 64^3
const double kVoxel = 0.75;  // mm
const char* kVolumeArgs = " --volume-size 64,64,64 --voxel-size 0.75 --threads 2 --quiet";

// Mean of the central brain region of a volume given plane by plane, over
// the voxels that are pure brain at least 2.5 voxels from every surface.
class BrainRegion {
 public:
  BrainRegion() {
    const fdk_sim::Scanner scanner(model());
    phantom_ = scanner.phantom();
    const double scale = scanner.phantom_scale();
    const int half = std::max(2, static_cast<int>(0.2 * scale / kVoxel));
    lo_ = kN / 2 - half;
    hi_ = kN / 2 + half;
    brain_ = phantom_[0].density + phantom_[1].density;
  }
  double origin() const { return -0.5 * (kN - 1) * kVoxel; }
  void add_plane(int y, const float* plane) {  // kN x kN, x fastest, then z
    if (y < lo_ || y >= hi_) return;
    for (int z = lo_; z < hi_; ++z) {
      for (int x = lo_; x < hi_; ++x) {
        const double px = origin() + x * kVoxel, py = origin() + y * kVoxel,
                     pz = origin() + z * kVoxel;
        if (std::fabs(fdk::phantom::density_at(phantom_, px, py, pz) - brain_) > 1e-9) continue;
        bool clear = true;
        for (const auto& e : phantom_) {
          if (fdk::phantom::distance_to_surface(e, px, py, pz) < 2.5 * kVoxel) clear = false;
        }
        if (!clear) continue;
        sum_ += plane[z * kN + x];
        ++count_;
      }
    }
  }
  // The brain's density as reconstructed (divided by the simulator's mu).
  double value() const { return count_ ? sum_ / count_ / model().mu : NAN; }
  size_t count() const { return count_; }

 private:
  std::vector<fdk::phantom::Ellipsoid> phantom_;
  int lo_, hi_;
  double brain_, sum_ = 0;
  size_t count_ = 0;
};

void expect_brain(const BrainRegion& b, double tolerance = 0.03) {
  ASSERT_GT(b.count(), 100u);
  std::printf("brain value %.4f (phantom 1.02) over %zu voxels\n", b.value(), b.count());
  EXPECT_NEAR(b.value(), 1.02, tolerance * 1.02) << "brain value " << b.value();
}

bool any_part_files(const std::string& folder) {
  for (const auto& name : fdk_adapter_test::names_in(folder)) {
    if (name.find(".part") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST(ToolsEndToEnd, SimulatedFolderToTiffSlicesKeepsTheBrainValue) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs, dir.path()).code, 0);
  ASSERT_TRUE(std::filesystem::exists(dir / "scan/projections/proj_0119.tif"));
  ASSERT_TRUE(std::filesystem::exists(dir / "scan/geometry.xml"));
  // RTK geometry for the views, the pixel size as a flag.
  const Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") +
                           " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                           " --geometry " + (dir / "scan/geometry.xml") + " --pixel-size 0.8" +
                           kVolumeArgs,
                       dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // --quiet
  BrainRegion brain;
  for (int y = 0; y < kN; ++y) {
    TiffReader reader(dir / ("out/" + slice_file_name("slice", y, kN)));
    TiffPageInfo info;
    const auto plane = reader.read_page(0, &info);
    ASSERT_EQ(info.width, kN);
    ASSERT_EQ(info.height, kN);
    ASSERT_EQ(info.type, SampleType::kFloat32);
    brain.add_plane(y, plane.data());
  }
  expect_brain(brain);
  EXPECT_TRUE(std::filesystem::exists(dir / "out/preview.png") ||
              std::filesystem::exists(dir / "out/preview.pgm"));
  EXPECT_FALSE(any_part_files(dir / "out"));
}

// rtkfdk's window options reach the library: --hann F is --filter hann
// --cutoff F to the bit, and --hann-y smooths the slices.
TEST(ToolsEndToEnd, HannOptionsAsRtkfdkSpellsThem) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + " --views 36 --detector 48 --threads 2", dir.path()).code, 0);
  auto slice = [&](const std::string& out, const std::string& extra) {
    const Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / out) + " --dark " +
                             (dir / "scan/dark") + " --flat " + (dir / "scan/flat") + " --geometry " +
                             (dir / "scan/geometry.xml") + " --pixel-size 1.6 --volume-size 24,24,24" +
                             " --voxel-size 1.5 --threads 2 --quiet" + extra,
                         dir.path());
    EXPECT_EQ(r.code, 0) << r.err;
    TiffReader reader(dir / (out + "/" + slice_file_name("slice", 12, 24)));
    TiffPageInfo info;
    return reader.read_page(0, &info);
  };
  const auto plain = slice("plain", "");
  // 48 columns pad to 128 in RTK: its cut is round(65 * 0.6) = 39 bins, 78/128 of Nyquist.
  EXPECT_EQ(slice("hann", " --hann 0.6"), slice("filter", " --filter hann --cutoff 0.609375"));
  EXPECT_NE(slice("hann", " --hann 0.6 --force"), plain);
  EXPECT_EQ(slice("hann0", " --hann 0"), plain);
  EXPECT_NE(slice("hann_y", " --hann-y 0.5"), plain);
}

// An RTK XML geometry and TIFF projections whose resolution tags give the
// pixel pitch (as fdk-scan-sim writes them) need no other flag; without the
// tags the missing pixel size is named, with where it could have come from.
TEST(ToolsEndToEnd, RtkXmlAndTiffTagsNeedNoOtherFlag) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs, dir.path()).code, 0);
  const Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") + " --dark " +
                           (dir / "scan/dark") + " --flat " + (dir / "scan/flat") + " --geometry " +
                           (dir / "scan/geometry.xml") + " --threads 2 --progress none",
                       dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("from the TIFF resolution tags"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("half fan: off"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field of view:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("store: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the scan fits"), std::string::npos) << r.err;
  // The same pixels without the tags.
  std::filesystem::create_directories(dir / "untagged");
  for (int i = 0; i < 120; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "proj_%04d.tif", i);
    TiffReader in(dir / ("scan/projections/" + std::string(name)));
    TiffPageInfo info;
    const auto pixels = in.read_page(0, &info);
    EXPECT_GT(info.pixel_size_x_mm, 0.0);
    std::vector<uint16_t> samples(pixels.begin(), pixels.end());
    TiffWriter out(dir / ("untagged/" + std::string(name)), TiffWriteOptions{});
    out.add_page(info.width, info.height, SampleType::kUInt16, samples.data());
    out.commit();
  }
  const Result missing = run(kConvert + " " + (dir / "untagged") + " " + (dir / "out2") + " --dark " +
                                 (dir / "scan/dark") + " --flat " + (dir / "scan/flat") + " --geometry " +
                                 (dir / "scan/geometry.xml") + " --threads 2 --quiet",
                             dir.path());
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("pixel size is not given"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("resolution tags"), std::string::npos) << missing.err;
}

TEST(ToolsEndToEnd, MultiPageInputIniGeometryMetaImageAndBigTiffOutputs) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs + " --multipage", dir.path()).code, 0);
  ASSERT_TRUE(std::filesystem::exists(dir / "scan/projections/proj.tif"));
  const std::string common = kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") +
                             " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                             " --geometry " + (dir / "scan/scan.ini") + kVolumeArgs;
  Result r = run(common + " --format mha --no-preview", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  {
    const std::string file = fdk_adapter_test::read_all(dir / "out/volume.mha");
    const size_t end = file.find("ElementDataFile = LOCAL\n");
    ASSERT_NE(end, std::string::npos);
    const size_t header = end + std::strlen("ElementDataFile = LOCAL\n");
    ASSERT_EQ(file.size(), header + 4u * kN * kN * kN);
    EXPECT_NE(file.find("DimSize = 64 64 64"), std::string::npos);
    // (x, y, z) order, as rtkfdk writes: plane y gathers row y of every z.
    BrainRegion brain;
    std::vector<float> plane(kN * kN);
    for (int y = 0; y < kN; ++y) {
      for (int z = 0; z < kN; ++z) {
        std::memcpy(plane.data() + z * kN, file.data() + header + 4u * (z * kN + y) * kN, 4u * kN);
      }
      brain.add_plane(y, plane.data());
    }
    expect_brain(brain);
    // The same voxels in the .mhd + .raw pair and in the NRRD.
    const std::string voxels = file.substr(header);
    // Each format replaces the folder's earlier result (--force): one result per folder.
    r = run(common + " --format mhd --no-preview --force", dir.path());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(fdk_adapter_test::read_all(dir / "out/volume.raw"), voxels);
    EXPECT_NE(fdk_adapter_test::read_all(dir / "out/volume.mhd").find("ElementDataFile = volume.raw\n"),
              std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir / "out/volume.mha"));
    r = run(common + " --format nrrd --no-preview --force", dir.path());
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string nrrd = fdk_adapter_test::read_all(dir / "out/volume.nrrd");
    ASSERT_GT(nrrd.size(), voxels.size());
    EXPECT_EQ(nrrd.substr(nrrd.size() - voxels.size()), voxels);
    EXPECT_NE(nrrd.find("sizes: 64 64 64\n"), std::string::npos);
  }
  r = run(common + " --format bigtiff --output-type uint16 --window 0,0.04 --compression deflate --force",
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  {
    TiffReader reader(dir / "out/volume.tif");
    ASSERT_EQ(reader.page_count(), kN);
    BrainRegion brain;
    for (int y = 0; y < kN; ++y) {
      TiffPageInfo info;
      auto plane = reader.read_page(y, &info);
      ASSERT_EQ(info.type, SampleType::kUInt16);
      for (float& v : plane) v = static_cast<float>(v / 65535.0 * 0.04);
      brain.add_plane(y, plane.data());
    }
    expect_brain(brain);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out/volume.nrrd"));
  // Running again without --force refuses to replace the output.
  r = run(common + " --format mha", dir.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
}

// The README's sample (scripts/run-sample.sh) must show the phantom's inner
// structures: at its dose, flat-field frames and phantom, the large feature
// ellipsoid (density 0.1 above the brain) stands out of the voxel noise, and
// a crop or binning of the sample works (no detector.size in its scan.ini).
// The same dose with the original phantom (contrast 0.01 of a skull of 2)
// leaves the feature inside the noise, so the check can fail.
TEST(ToolsEndToEnd, SampleSettingsShowTheInnerStructures) {
  struct Measured {
    double contrast, noise;
  };
  auto measure = [](bool modified) {
    TempDir dir;
    fdk_sim::ScannerModel m = model();
    m.modified_phantom = modified;
    m.mu = 0.05;
    const std::string phantom = modified ? " --phantom modified" : " --phantom shepp-logan";
    EXPECT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs + phantom +
                      " --mu 0.05 --flat-frames 32 --dark-frames 16",
                  dir.path())
                  .code,
              0);
    const Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") +
                             " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                             " --geometry " + (dir / "scan/scan.ini") + kVolumeArgs + " --no-preview",
                         dir.path());
    EXPECT_EQ(r.code, 0) << r.err;
    const fdk_sim::Scanner scanner(m);
    const auto& ph = scanner.phantom();
    const double brain = ph[0].density + ph[1].density, feature = brain + ph[4].density;
    const double origin = -0.5 * (kN - 1) * kVoxel;
    double sum[2] = {0, 0}, sum2[2] = {0, 0};
    size_t count[2] = {0, 0};
    for (int y = 0; y < kN; ++y) {
      TiffReader reader(dir / ("out/" + slice_file_name("slice", y, kN)));
      TiffPageInfo info;
      const auto plane = reader.read_page(0, &info);
      for (int z = 0; z < kN; ++z) {
        for (int x = 0; x < kN; ++x) {
          const double px = origin + x * kVoxel, py = origin + y * kVoxel, pz = origin + z * kVoxel;
          const double d = fdk::phantom::density_at(ph, px, py, pz);
          const int k = std::fabs(d - brain) < 1e-9 ? 0 : std::fabs(d - feature) < 1e-9 ? 1 : -1;
          if (k < 0) continue;
          bool clear = true;
          for (const auto& e : ph) {
            if (fdk::phantom::distance_to_surface(e, px, py, pz) < 2.5 * kVoxel) clear = false;
          }
          if (!clear) continue;
          const double v = plane[static_cast<size_t>(z) * kN + x];
          sum[k] += v;
          sum2[k] += v * v;
          ++count[k];
        }
      }
    }
    EXPECT_GT(count[0], 100u);
    EXPECT_GT(count[1], 100u);
    const double mean0 = sum[0] / count[0], mean1 = sum[1] / count[1];
    return Measured{mean1 - mean0, std::sqrt(std::max(0.0, sum2[0] / count[0] - mean0 * mean0))};
  };
  const Measured modified = measure(true), original = measure(false);
  std::printf("feature contrast / voxel noise: modified %.3g / %.3g, original %.3g / %.3g\n",
              modified.contrast, modified.noise, original.contrast, original.noise);
  EXPECT_NEAR(modified.contrast, 0.1 * 0.05, 0.3 * 0.1 * 0.05);  // the phantom's 0.1 of mu
  EXPECT_GT(modified.contrast, 2 * modified.noise);
  EXPECT_LT(std::fabs(original.contrast), original.noise);

  // Binning the sample's projections works (its scan.ini does not pin the
  // detector size).
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs + " --phantom modified", dir.path()).code, 0);
  const Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") + " --dark " +
                           (dir / "scan/dark") + " --flat " + (dir / "scan/flat") + " --geometry " +
                           (dir / "scan/scan.ini") + " --bin 2 --crop 0,0,96,90" + kVolumeArgs,
                       dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(ToolsEndToEnd, DefaultVolumeCoversTheFieldOfView) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs + " --line-integrals", dir.path()).code, 0);
  const Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") +
                           " --geometry " + (dir / "scan/scan.ini") +
                           " --format mha --threads 2 --progress lines",
                       dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  // Magnification 1.6: voxel 0.5 mm; progress lines and the summary on stderr.
  EXPECT_NE(r.err.find("line integrals"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("voxels of 0.5 x 0.5 x 0.5 mm (default: the field of view)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("views/s"), std::string::npos) << r.err;
  const std::string file = fdk_adapter_test::read_all(dir / "out/volume.mha");
  EXPECT_NE(file.find("ElementSpacing = 0.5 0.5 0.5"), std::string::npos);
}

TEST(ToolsExitCodes, BadInputsAreNamedAndLeaveNoOutput) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + " --views 12 --detector 32 --threads 2", dir.path()).code, 0);
  const std::string proj = dir / "scan/projections";
  const std::string calib = " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                            " --geometry " + (dir / "scan/scan.ini") + " --threads 2 --quiet";
  auto convert = [&](const std::string& input, const std::string& extra) {
    return run(kConvert + " " + input + " " + (dir / "out") + calib + extra, dir.path());
  };
  // Sanity: the good folder converts.
  ASSERT_EQ(convert(proj, "").code, 0);
  std::filesystem::remove_all(dir / "out");

  struct Case {
    const char* what;
    std::function<void()> setup;
    std::string input, extra;
    int code;
    std::string message;
    bool bare = false;  // without the dark, flat and INI (line-integral input)
  };
  const std::string bad = dir / "bad";
  auto fresh_copy = [&] {
    std::filesystem::remove_all(bad);
    std::filesystem::copy(proj, bad);
  };
  std::vector<Case> cases = {
      {"missing folder", [] {}, dir / "nope", "", 3, "nope"},
      {"truncated TIFF",
       [&] {
         fresh_copy();
         const std::string p = bad + "/proj_0005.tif";
         const std::string bytes = fdk_adapter_test::read_all(p);
         fdk_adapter_test::write_text(p, bytes.substr(0, bytes.size() / 3));
       },
       bad, "", 3, "proj_0005.tif"},
      {"mixed sizes",
       [&] {
         fresh_copy();
         std::filesystem::copy_file(dir / "scan/projections/proj_0000.tif", bad + "/proj_0100.tif");
         const std::vector<float> small(16 * 16, 1.0f);
         write_tiff_float(bad + "/proj_0007.tif", 16, 16, {small.data()});
       },
       bad, "", 3, "proj_0007.tif' is 16 x 16 float32"},
      {"missing dark", [] {}, proj, " --dark " + (dir / "no_dark"), 3, "no_dark"},
      {"zero flat",
       [&] {
         const std::vector<float> zero(32 * 32, 0.0f);
         write_tiff_float(dir / "zero_flat.tif", 32, 32, {zero.data()});
       },
       proj, " --flat " + (dir / "zero_flat.tif"), 3, "zero_flat.tif"},
      {"flat of another size",
       [&] {
         const std::vector<float> f(40 * 32, 1000.0f);
         write_tiff_float(dir / "big_flat.tif", 40, 32, {f.data()});
       },
       proj, " --flat " + (dir / "big_flat.tif"), 3, "big_flat.tif' is 40 x 32"},
      {"non-finite value",
       [&] {
         fresh_copy();
         std::vector<float> nan(32 * 32, 30000.0f);
         nan[33] = std::nanf("");
         std::filesystem::remove(bad + "/proj_0003.tif");
         write_tiff_float(bad + "/proj_0003.tif", 32, 32, {nan.data()});
       },
       bad, " --input raw", 3, "proj_0003.tif"},
      {"geometry views mismatch", [] {}, proj, " --views 13", 3, "announces 13 views"},
      {"corrupt geometry",
       [&] { fdk_adapter_test::write_text(dir / "g.xml", "<RTKThreeDCircularGeometry version=\"3\">"); },
       proj, " --geometry " + (dir / "g.xml"), 3, "g.xml"},
      {"unwritable output", [&] { fdk_adapter_test::write_text(dir / "out", "a file"); }, proj,
       "", 4, "out"},
      {"dangling symlink among the projections (was skipped: 11 views spread over 360 deg)",
       [&] {
         fresh_copy();
         std::filesystem::remove(bad + "/proj_0004.tif");
         std::filesystem::create_symlink("lost.tif", bad + "/proj_0004.tif");
       },
       bad, " --views 11", 3, "proj_0004.tif' matches '*.tif;*.tiff' but is a dangling symbolic link"},
      {"a folder named like a projection (was skipped)",
       [&] {
         fresh_copy();
         std::filesystem::create_directory(bad + "/proj_0012.tif");
       },
       bad, "", 3, "proj_0012.tif' matches '*.tif;*.tiff' but is a folder"},
      {"NUL byte in the INI (was read as 'sid = 500')",
       [&] {
         const std::string ini = fdk_adapter_test::read_all(dir / "scan/scan.ini");
         std::string with_nul = ini;
         const size_t at = with_nul.find("sid = ");
         ASSERT_NE(at, std::string::npos);
         const size_t eol = with_nul.find('\n', at);
         with_nul.insert(eol, std::string("\0junk", 5));
         fdk_adapter_test::write_text(dir / "nul.ini", with_nul);
       },
       proj, " --geometry " + (dir / "nul.ini"), 3, "nul.ini' line"},
      {"INI arc beyond 360 (was 5)",
       [&] { fdk_adapter_test::write_text(dir / "arc.ini", "arc = 720\n"); },
       proj, " --geometry " + (dir / "arc.ini"), 3, "arc.ini' line 1: arc = '720'"},
      {"projections one pixel wide (was 5)",
       [&] {
         std::filesystem::remove_all(bad);
         std::filesystem::create_directories(bad);
         const std::vector<float> column(32, 0.1f);
         for (int i = 0; i < 12; ++i) {
           write_tiff_float(bad + "/p" + std::to_string(i) + ".tif", 1, 32, {column.data()});
         }
       },
       bad, " --input line-integral --sid 500 --sdd 800 --pixel-size 0.8 --quiet", 3,
       "are 1 x 32 pixels: the detector must have 2 to 65536", true},
      {"a line integral of 1e30 (was 5)",
       [&] {
         fresh_copy();
         std::vector<float> huge(32 * 32, 0.1f);
         huge[40] = 1e30f;
         std::filesystem::remove(bad + "/proj_0003.tif");
         write_tiff_float(bad + "/proj_0003.tif", 32, 32, {huge.data()});
         for (int i = 0; i < 12; ++i) {
           if (i == 3) continue;
           char name[32];
           std::snprintf(name, sizeof name, "/proj_%04d.tif", i);
           std::vector<float> ok(32 * 32, 0.1f);
           std::filesystem::remove(bad + name);
           write_tiff_float(bad + name, 32, 32, {ok.data()});
         }
       },
       bad, " --input line-integral --sid 500 --sdd 800 --pixel-size 0.8 --quiet", 3,
       "proj_0003.tif': FDK_ERROR_INVALID_ARGUMENT", true},
      {"bad option", [] {}, proj, " --frobnicate", 2, "--frobnicate"},
      {"uint16 without window", [] {}, proj, " --output-type uint16", 2, "--window"},
      {"bad crop", [] {}, proj, " --crop 30,30,10,10", 2, "crop"},
  };
  for (Case& c : cases) {
    c.setup();
    const Result r = c.bare ? run(kConvert + " " + c.input + " " + (dir / "out") + c.extra, dir.path())
                            : convert(c.input, c.extra);
    EXPECT_EQ(r.code, c.code) << c.what << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.what << ": " << r.err;
    EXPECT_NE(r.err.find("fdk-convert: "), std::string::npos) << c.what;
    if (std::filesystem::is_directory(dir / "out")) {
      EXPECT_TRUE(fdk_adapter_test::names_in(dir / "out").empty()) << c.what;
    }
    std::filesystem::remove_all(dir / "out");
  }
}

// Every bad command line and option value exits 2 (as documented), with the
// option named and nothing written. The ones marked "was 5" reached the
// library's fdk_create and exited 5 ("the reconstruction failed") before.
TEST(ToolsExitCodes, EveryBadArgumentExits2NamingIt) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + " --views 12 --detector 32 --threads 2", dir.path()).code, 0);
  const std::string proj = dir / "scan/projections";
  const std::string good = " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                           " --geometry " + (dir / "scan/scan.ini") + " --quiet";
  // Without the INI (it fixes the detector size): flags alone.
  const std::string flags_only = " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                                 " --sid 500 --sdd 800 --pixel-size 0.8 --quiet";
  struct Case {
    std::string args;  // after PROJECTIONS_DIR OUTPUT_DIR and the good options
    std::string message;
  };
  const std::vector<Case> cases = {
      // was 5: the library refused them at fdk_create
      {" --cutoff 0", "--cutoff"},
      {" --cutoff 1.5", "--cutoff"},
      {" --padding -0.5", "--padding"},
      {" --padding 3", "--padding"},
      {" --threads 2000", "--threads"},
      {" --arc 720", "--arc"},
      {" --start-angle 1e7", "--start-angle"},
      {" --in-plane-angle 1e7", "--in-plane-angle"},
      {" --out-of-plane-angle -1e9", "--out-of-plane-angle"},
      {" --volume-size 70000,10,10", "--volume-size"},
      {" --voxel-size 0.00001", "--voxel-size"},
      {flags_only + " --bin 32", "--crop/--bin leave 1 x 1"},
      {flags_only + " --crop 0,0,1,32", "--crop/--bin leave 1 x 32"},
      // were 2 already
      {" --frobnicate", "--frobnicate"},
      {" --sid", "missing value for --sid"},
      {" extra_positional", "unexpected argument 'extra_positional'"},
      {" --sid 0", "--sid"},
      {" --sdd -1", "--sdd"},
      {" --views 0", "--views"},
      {" --views 1.5", "--views"},
      {" --arc 0", "--arc"},
      {" --direction up", "--direction"},
      {" --projection-offset 1", "--projection-offset"},
      {" --source-offset a,b", "--source-offset"},
      {" --pixel-size 0", "--pixel-size"},
      {" --detector-origin 1", "--detector-origin"},
      {" --volume-size 0,1,1", "--volume-size"},
      {" --voxel-size 0", "--voxel-size"},
      {" --voxel-size 1,2", "--voxel-size"},
      {" --volume-origin 1,2", "--volume-origin"},
      {" --geometry a --geometry b", "--geometry given more than twice"},
      {" --i0 0", "--i0"},
      {" --dark-level x", "--dark-level"},
      {" --input foo", "--input"},
      {" --min-transmission 1", "--min-transmission"},
      {" --crop 1,2,3", "--crop"},
      {" --crop -1,0,4,4", "--crop"},
      {" --crop 30,30,10,10", "crop"},
      {" --bin 0", "--bin"},
      {" --bin 2000", "--bin"},
      {" --read-threads 0", "--read-threads"},
      {" --filter foo", "--filter"},
      {" --hann 1.5", "--hann"},
      {" --hann-y -0.1", "--hann-y"},
      {" --hann-y nan", "--hann-y"},
      {" --short-scan maybe", "--short-scan"},
      {" --offset-detector x", "--offset-detector"},
      {" --outside-fov x", "--outside-fov"},
      {" --backend gpu", "--backend"},
      {" --gpus x", "--gpus"},
      {" --gpus -1", "--gpus"},
      {" --host-memory 0", "--host-memory"},
      {" --host-memory 12Q", "--host-memory"},
      {" --gpu-memory -5", "--gpu-memory"},
      {" --precision float64", "--precision"},
      {" --threads -1", "--threads"},
      {" --slab-thickness -1", "--slab-thickness"},
      {" --format png", "--format"},
      {" --output-type int8", "--output-type"},
      {" --output-type uint16", "--window"},
      {" --window 1,0", "--window"},
      {" --window 1", "--window"},
      {" --prefix a/b", "--prefix"},
      {" --prefix ''", "--prefix"},
      {" --compression zip", "--compression"},
      {" --format stack --compression lzw", "uncompressed"},
      {" --progress fancy", "--progress"},
  };
  for (const Case& c : cases) {
    const bool own_geometry = c.args.rfind(flags_only, 0) == 0;
    const Result r = run(kConvert + " " + proj + " " + (dir / "out") + " --threads 2" +
                             (own_geometry ? "" : good) + c.args,
                         dir.path());
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    if (std::filesystem::is_directory(dir / "out")) {
      EXPECT_TRUE(fdk_adapter_test::names_in(dir / "out").empty()) << c.args;
    }
    std::filesystem::remove_all(dir / "out");
  }
  // No positional arguments at all, and only one.
  EXPECT_EQ(run(kConvert, dir.path()).code, 2);
  EXPECT_EQ(run(kConvert + " " + proj, dir.path()).code, 2);
  // An existing output without --force.
  ASSERT_EQ(run(kConvert + " " + proj + " " + (dir / "out") + good + " --threads 2", dir.path()).code, 0);
  const Result again = run(kConvert + " " + proj + " " + (dir / "out") + good + " --threads 2", dir.path());
  EXPECT_EQ(again.code, 2) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
}

TEST(ToolsExitCodes, FullDiskMidWriteRemovesEverything) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + " --views 12 --detector 32 --threads 2", dir.path()).code, 0);
  for (const char* format : {"tiff", "stack", "bigtiff", "mha", "mhd", "nrrd"}) {
    const Result r =
        run(std::string("FDK_CONVERT_FAIL_AFTER_BYTES=20000 ") + kConvert + " " +
                (dir / "scan/projections") + " " + (dir / "out") + " --dark " + (dir / "scan/dark") +
                " --flat " + (dir / "scan/flat") + " --geometry " + (dir / "scan/scan.ini") +
                " --threads 2 --quiet --format " + format,
            dir.path());
    EXPECT_EQ(r.code, 4) << format << ": " << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_TRUE(fdk_adapter_test::names_in(dir / "out").empty()) << format;
  }
}

TEST(ToolsHelp, HelpShowsExamplesAndExitCodes) {
  TempDir dir;
  const std::string out = dir / "help.txt";
  ASSERT_EQ(std::system((kConvert + " --help > " + out).c_str()), 0);
  const std::string help = fdk_adapter_test::read_all(out);
  EXPECT_NE(help.find("Examples:"), std::string::npos);
  EXPECT_NE(help.find("Exit codes:"), std::string::npos);
  EXPECT_NE(help.find("--gpus"), std::string::npos);
  ASSERT_EQ(std::system((kSim + " --help > " + out).c_str()), 0);
  EXPECT_NE(fdk_adapter_test::read_all(out).find("fdk-convert"), std::string::npos);
}
