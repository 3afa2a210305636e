// fdk-convert on projection stacks: the simulator's scan rewritten as a
// MetaImage (uint16 with dark/flat stacks; float32 line integrals, plain and
// compressed), a detached big-endian NRRD and a raw file reconstructs the
// very volume the TIFF folder gives; the stack's spacing and origin are the
// geometry (an RTK-style stack + RTK XML needs no other flag); --like and
// rtkfdk's volume flag names give the same grid; a DXchange HDF5 file
// (when built with HDF5) with its own dark and white frames does too.
#include <fdk/adapters/image_stack.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <sys/wait.h>
#if FDK_HAVE_HDF5
#include <hdf5.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "stack_test_files.hpp"
#include "test_support.hpp"
#include "tool_run.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::bytes_of;
using fdk_adapter_test::deflate_bytes;
using fdk_adapter_test::mha_header;
using fdk_adapter_test::TempDir;
using fdk_adapter_test::write_bytes;

namespace {

using Result = fdk_adapter_test::ToolResult;

Result run(const std::string& args, const std::string& log_dir) {
  return fdk_adapter_test::run_tool(args, log_dir);
}

const std::string kSim = FDK_SCAN_SIM_PATH;
const std::string kConvert = FDK_CONVERT_PATH;
constexpr int kD = 96, kViews = 120;
const char* kSimArgs = " --views 120 --detector 96 --threads 2 --multipage";
const char* kOut = " --volume-size 48,48,48 --voxel-size 1 --threads 2 --format mha --no-preview";

// Every page of a multi-page TIFF, as stored.
template <typename T>
std::vector<T> pages(const std::string& path, int* count) {
  TiffReader r(path);
  std::vector<T> out;
  *count = r.page_count();
  for (int p = 0; p < *count; ++p) {
    const auto v = r.read_page(p);
    for (float x : v) out.push_back(static_cast<T>(x));
  }
  return out;
}

std::string volume_of(const std::string& folder) {
  const std::string file = fdk_adapter_test::read_all(folder + "/volume.mha");
  const size_t end = file.find("ElementDataFile = LOCAL\n");
  return end == std::string::npos ? "" : file.substr(end + 24);
}

// The centred detector's origin, printed exactly.
std::string centred(double pitch) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", -0.5 * (kD - 1) * pitch);
  return b;
}

}  // namespace

TEST(ToolsStacks, RawUint16StacksReconstructLikeTheTiffFolder) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs, dir.path()).code, 0);
  int n = 0, nd = 0, nf = 0;
  const auto proj = pages<uint16_t>(dir / "scan/projections/proj.tif", &n);
  const auto dark = pages<uint16_t>(dir / "scan/dark/dark.tif", &nd);
  const auto flat = pages<uint16_t>(dir / "scan/flat/flat.tif", &nf);
  ASSERT_EQ(n, kViews);
  const std::string geo = " --geometry " + (dir / "scan/geometry.xml");
  const std::string tiff_cal = " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat");
  Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "ref") + tiff_cal + geo + kOut,
                 dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string ref = volume_of(dir / "ref");
  ASSERT_EQ(ref.size(), 4u * 48 * 48 * 48);

  // RTK-style MetaImage stacks: spacing and origin in the header, no flag.
  const std::string geom = "ElementSpacing = 0.8 0.8 1\nOffset = " + centred(0.8) + " " + centred(0.8) + " 0\n";
  write_bytes(dir / "proj.mha", mha_header(kD, kD, n, "MET_USHORT", geom) + bytes_of(proj));
  write_bytes(dir / "dark.mha", mha_header(kD, kD, nd, "MET_USHORT", geom) + bytes_of(dark));
  write_bytes(dir / "flat.nrrd", "NRRD0004\ntype: uint16\ndimension: 3\nsizes: 96 96 " + std::to_string(nf) +
                                     "\nendian: little\nencoding: raw\n\n" + bytes_of(flat));
  const std::string stack_cal = " --dark " + (dir / "dark.mha") + " --flat " + (dir / "flat.nrrd");
  r = run(kConvert + " " + (dir / "proj.mha") + " " + (dir / "mha") + stack_cal + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("pitch and origin in the MetaImage header"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pixel size: 0.8 x 0.8 mm, from the MetaImage header"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("detector origin: -38, -38 mm (raw pixel (0,0)), from the MetaImage header"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dark: 4 frames, flat: 8 frames"), std::string::npos) << r.err;
  EXPECT_TRUE(volume_of(dir / "mha") == ref) << "MetaImage stack differs from the TIFF folder";

  // One multi-page TIFF file as PROJECTIONS, dark and flat folders.
  r = run(kConvert + " " + (dir / "scan/projections/proj.tif") + " " + (dir / "one") + tiff_cal + geo + kOut,
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "one") == ref);

  // A stack dark/flat with TIFF projections.
  r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "mixed") + stack_cal + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "mixed") == ref);

  // A detached big-endian NRRD with a byte skip and a TIFF dark/flat.
  write_bytes(dir / "proj.raw", std::string(12, 'h') + bytes_of(proj, true));
  write_bytes(dir / "proj.nhdr", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 96 96 120\nendian: big\n"
                                 "encoding: raw\nspacings: 0.8 0.8 nan\nbyte skip: 12\ndata file: proj.raw\n");
  r = run(kConvert + " " + (dir / "proj.nhdr") + " " + (dir / "nrrd") + tiff_cal + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("pitch in the NRRD header"), std::string::npos) << r.err;
  EXPECT_TRUE(volume_of(dir / "nrrd") == ref);

  // A raw file: layout and pitch on the command line.
  r = run(kConvert + " " + (dir / "proj.raw") + " " + (dir / "raw") + tiff_cal + geo + kOut +
              " --raw 96,96,120 --raw-type uint16 --raw-offset 12 --raw-endian big --pixel-size 0.8",
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "raw") == ref);

  // The header's origin is the detector's: a shifted Offset equals
  // --detector-origin on the TIFF folder, and differs from the centred one.
  const std::string shifted = "ElementSpacing = 0.8 0.8 1\nOffset = -35 -38 0\n";
  write_bytes(dir / "shift.mha", mha_header(kD, kD, n, "MET_USHORT", shifted) + bytes_of(proj));
  r = run(kConvert + " " + (dir / "shift.mha") + " " + (dir / "shift") + stack_cal + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "shift_ref") + tiff_cal + geo + kOut +
              " --detector-origin -35,-38",
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "shift") == volume_of(dir / "shift_ref"));
  EXPECT_FALSE(volume_of(dir / "shift") == ref);
  // ... and --detector-origin overrides the header.
  r = run(kConvert + " " + (dir / "shift.mha") + " " + (dir / "over") + stack_cal + geo + kOut +
              " --detector-origin " + centred(0.8) + "," + centred(0.8),
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "over") == ref);

  // --like the reference volume, and rtkfdk's flag names, give its grid.
  r = run(kConvert + " " + (dir / "proj.mha") + " " + (dir / "like") + stack_cal + geo +
              " --threads 2 --format mha --no-preview --like " + (dir / "ref/volume.mha") + " --progress none",
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "like") == ref);
  EXPECT_NE(r.err.find("(--like '"), std::string::npos) << r.err;
  r = run(kConvert + " " + (dir / "proj.mha") + " " + (dir / "rtk") + stack_cal + geo +
              " --threads 2 --format mha --no-preview --dimension 48 --spacing 1 --origin -23.5,-23.5,-23.5",
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "rtk") == ref);
  // Explicit flags override --like per field: another spacing, same size.
  r = run(kConvert + " " + (dir / "proj.mha") + " " + (dir / "like2") + stack_cal + geo +
              " --threads 2 --format mha --no-preview --like " + (dir / "ref/volume.mha") + " --spacing 0.5",
          dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("48 x 48 x 48 voxels of 0.5 x 0.5 x 0.5 mm"), std::string::npos) << r.err;
}

TEST(ToolsStacks, FloatLineIntegralStacksPlainAndCompressed) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs + " --line-integrals", dir.path()).code, 0);
  int n = 0;
  const auto proj = pages<float>(dir / "scan/projections/proj.tif", &n);
  const std::string geo = " --geometry " + (dir / "scan/geometry.xml");
  Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "ref") + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string ref = volume_of(dir / "ref");
  ASSERT_EQ(ref.size(), 4u * 48 * 48 * 48);
  const std::string geom = "ElementSpacing = 0.8 0.8 1\nOffset = " + centred(0.8) + " " + centred(0.8) + " 0\n";
  write_bytes(dir / "p.mha", mha_header(kD, kD, n, "MET_FLOAT", geom) + bytes_of(proj));
  r = run(kConvert + " " + (dir / "p.mha") + " " + (dir / "plain") + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("line integrals"), std::string::npos) << r.err;
  EXPECT_TRUE(volume_of(dir / "plain") == ref);
#if FDK_HAVE_ZLIB
  write_bytes(dir / "z.mha", mha_header(kD, kD, n, "MET_FLOAT", geom + "CompressedData = True\n") +
                                 deflate_bytes(bytes_of(proj)));
  r = run(kConvert + " " + (dir / "z.mha") + " " + (dir / "z") + geo + kOut + " --read-threads 3", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "z") == ref);
#endif
  // A single multi-page TIFF file as PROJECTIONS.
  r = run(kConvert + " " + (dir / "scan/projections/proj.tif") + " " + (dir / "one") + geo + kOut, dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(volume_of(dir / "one") == ref);
}

TEST(ToolsStacks, BadStacksExit3NamingTheFileAndBadRawOptionsExit2) {
  TempDir dir;
  write_bytes(dir / "bad.mha", mha_header(8, 8, 4, "MET_USHORT", "ElementNumberOfChannels = 3\n") +
                                   std::string(8 * 8 * 4 * 2 * 3, '\0'));
  Result r = run(kConvert + " " + (dir / "bad.mha") + " " + (dir / "out") + " --sid 500 --sdd 800 --i0 1000",
                 dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("bad.mha"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ElementNumberOfChannels"), std::string::npos) << r.err;
  write_bytes(dir / "short.mha", mha_header(8, 8, 4, "MET_USHORT", "") + std::string(100, '\0'));
  r = run(kConvert + " " + (dir / "short.mha") + " " + (dir / "out") + " --sid 500 --sdd 800 --i0 1000", dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("short.mha' is"), std::string::npos) << r.err;
  // No spacing in the header and no --pixel-size: named.
  write_bytes(dir / "nospacing.mha", mha_header(8, 8, 4, "MET_USHORT", "") + std::string(8 * 8 * 4 * 2, '\1'));
  r = run(kConvert + " " + (dir / "nospacing.mha") + " " + (dir / "out") + " --sid 500 --sdd 800 --i0 1000",
          dir.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("pixel size is not given"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the MetaImage header"), std::string::npos) << r.err;
  r = run(kConvert + " " + (dir / "nospacing.mha") + " " + (dir / "out") + " --raw 8,8,4", dir.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--raw needs --raw-type"), std::string::npos) << r.err;
  r = run(kConvert + " x y --raw 8,8 --raw-type uint16", dir.path());
  EXPECT_EQ(r.code, 2) << r.err;
  r = run(kConvert + " x y --raw-offset 10", dir.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--raw-offset and --raw-endian describe a raw file"), std::string::npos) << r.err;
  r = run(kConvert + " x y --raw 8,8,4 --raw-type uint64", dir.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--raw-type"), std::string::npos) << r.err;
  // A raw file too short for its layout.
  r = run(kConvert + " " + (dir / "nospacing.mha") + " " + (dir / "out") +
              " --raw 64,64,64 --raw-type float32 --pixel-size 1 --sid 500 --sdd 800",
          dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("nospacing.mha' is"), std::string::npos) << r.err;
  // --like with a rotated volume.
  write_bytes(dir / "rot.mha", "NDims = 3\nDimSize = 4 4 4\nTransformMatrix = 0 1 0 -1 0 0 0 0 1\n"
                               "ElementType = MET_FLOAT\nElementDataFile = LOCAL\n");
  r = run(kConvert + " " + (dir / "nospacing.mha") + " " + (dir / "out") +
              " --pixel-size 1 --sid 500 --sdd 800 --i0 1000 --like " + (dir / "rot.mha"),
          dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("rot.mha': its TransformMatrix"), std::string::npos) << r.err;
}

#if FDK_HAVE_HDF5
namespace {

// A DXchange file: big-endian uint16 datasets, /exchange/data chunked per
// view and deflated.
void write_dxchange(const std::string& path, const std::vector<std::pair<std::string, const std::vector<uint16_t>*>>& sets) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t g = H5Gcreate2(f, "/exchange", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (const auto& s : sets) {
    const hsize_t d[3] = {s.second->size() / (kD * kD), kD, kD};
    const hid_t space = H5Screate_simple(3, d, nullptr);
    const hid_t props = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk[3] = {1, kD, kD};
    H5Pset_chunk(props, 3, chunk);
    H5Pset_deflate(props, 4);
    const hid_t set = H5Dcreate2(f, s.first.c_str(), H5T_STD_U16BE, space, H5P_DEFAULT, props, H5P_DEFAULT);
    H5Dwrite(set, H5T_NATIVE_USHORT, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.second->data());
    H5Dclose(set);
    H5Pclose(props);
    H5Sclose(space);
  }
  H5Gclose(g);
  H5Fclose(f);
}

}  // namespace

TEST(ToolsStacks, DXchangeHdf5WithItsOwnDarkAndWhite) {
  TempDir dir;
  ASSERT_EQ(run(kSim + " " + (dir / "scan") + kSimArgs, dir.path()).code, 0);
  int n = 0, nd = 0, nf = 0;
  const auto proj = pages<uint16_t>(dir / "scan/projections/proj.tif", &n);
  const auto dark = pages<uint16_t>(dir / "scan/dark/dark.tif", &nd);
  const auto flat = pages<uint16_t>(dir / "scan/flat/flat.tif", &nf);
  const std::string geo = " --geometry " + (dir / "scan/geometry.xml");
  Result r = run(kConvert + " " + (dir / "scan/projections") + " " + (dir / "ref") + " --dark " +
                     (dir / "scan/dark") + " --flat " + (dir / "scan/flat") + geo + kOut,
                 dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string ref = volume_of(dir / "ref");
  ASSERT_EQ(ref.size(), 4u * 48 * 48 * 48);
  write_dxchange(dir / "scan.h5", {{"/exchange/data", &proj}, {"/exchange/data_dark", &dark},
                                   {"/exchange/data_white", &flat}});
  r = run(kConvert + " " + (dir / "scan.h5") + " " + (dir / "h5") + geo + kOut + " --pixel-size 0.8", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("dark: 4 frames, flat: 8 frames, dark from /exchange/data_dark, flat from "
                       "/exchange/data_white"), std::string::npos) << r.err;
  EXPECT_TRUE(volume_of(dir / "h5") == ref);
  // No /exchange/data: named.
  write_dxchange(dir / "other.h5", {{"/exchange/other", &dark}});
  r = run(kConvert + " " + (dir / "other.h5") + " " + (dir / "x") + geo + kOut + " --pixel-size 0.8", dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("other.h5' has no dataset /exchange/data"), std::string::npos) << r.err;
  write_bytes(dir / "junk.h5", "not HDF5 at all");
  r = run(kConvert + " " + (dir / "junk.h5") + " " + (dir / "x") + geo + kOut + " --pixel-size 0.8", dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("junk.h5' cannot be opened as an HDF5 file"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("HDF5-DIAG"), std::string::npos) << r.err;  // HDF5 prints nothing
}
#else
TEST(ToolsStacks, Hdf5IsRefusedWithoutHdf5) {
  TempDir dir;
  write_bytes(dir / "scan.h5", "whatever");
  const Result r = run(kConvert + " " + (dir / "scan.h5") + " " + (dir / "x") + " --sid 500 --sdd 800", dir.path());
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("unsupported, this build has no HDF5"), std::string::npos) << r.err;
}
#endif
