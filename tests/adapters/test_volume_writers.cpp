// TIFF slice stacks and the multi-page BigTIFF: names, values, tags,
// windows, and failures that leave nothing behind.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <tiffio.h>

#include <cmath>
#include <cstring>

#include "test_support.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::TempDir;

namespace {

fdk_volume volume(int nx, int ny, int nz) {
  fdk_volume v{};
  v.size[0] = nx;
  v.size[1] = ny;
  v.size[2] = nz;
  v.spacing[0] = 0.25;
  v.spacing[1] = 0.5;
  v.spacing[2] = 0.125;
  v.origin[0] = v.origin[1] = v.origin[2] = -1;
  return v;
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.001f * static_cast<float>(i) - 0.3f;
  return v;
}

}  // namespace

TEST(SliceStack, OneFilePerPlaneZeroPaddedWithResolution) {
  TempDir dir;
  const fdk_volume v = volume(6, 12, 5);
  const auto data = ramp(6 * 12 * 5);
  auto w = make_tiff_slice_writer(dir.path(), "slice", v, {});
  w->write_planes(0, 7, data.data());
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path())[0].find(".part") != std::string::npos);
  w->write_planes(7, 12, data.data() + 7 * 30);
  w->commit();
  const auto names = fdk_adapter_test::names_in(dir.path());
  ASSERT_EQ(names.size(), 12u);
  EXPECT_EQ(names[0], "slice_0000.tif");
  EXPECT_EQ(names[11], "slice_0011.tif");
  EXPECT_EQ(slice_file_name("s", 5, 123456), "s_000005.tif");
  for (int y : {0, 11}) {
    TiffReader r(dir / slice_file_name("slice", y, 12));
    TiffPageInfo info;
    const auto img = r.read_page(0, &info);
    EXPECT_EQ(info.width, 6);
    EXPECT_EQ(info.height, 5);
    EXPECT_EQ(info.type, SampleType::kFloat32);
    EXPECT_EQ(0, std::memcmp(img.data(), data.data() + y * 30, 30 * 4));
  }
  TIFF* t = TIFFOpen((dir / "slice_0003.tif").c_str(), "r");
  ASSERT_TRUE(t);
  float xres = 0, yres = 0;
  uint16_t unit = 0;
  char* description = nullptr;
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres));
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres));
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_RESOLUTIONUNIT, &unit));
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_IMAGEDESCRIPTION, &description));
  EXPECT_FLOAT_EQ(xres, 40.0f);  // 0.25 mm -> 40 per cm
  EXPECT_FLOAT_EQ(yres, 80.0f);  // z: 0.125 mm
  EXPECT_EQ(unit, RESUNIT_CENTIMETER);
  EXPECT_NE(std::string(description).find("plane y = 3 at 0.5 mm"), std::string::npos) << description;
  TIFFClose(t);
}

TEST(SliceStack, Uint16WithWindow) {
  TempDir dir;
  const fdk_volume v = volume(4, 1, 2);
  VolumeWriterOptions o;
  o.type = VoxelType::kUInt16;
  o.window_lo = 0;
  o.window_hi = 2;
  const float plane[8] = {-1, 0, 0.5f, 1, 1.5f, 2, 3, std::nanf("")};
  auto w = make_tiff_slice_writer(dir.path(), "s", v, o, TiffWriteOptions::Compression::kDeflate);
  w->write_planes(0, 1, plane);
  w->commit();
  TiffReader r(dir / "s_0000.tif");
  TiffPageInfo info;
  const auto img = r.read_page(0, &info);
  EXPECT_EQ(info.type, SampleType::kUInt16);
  const float expect[8] = {0, 0, 16384, 32768, 49151, 65535, 65535, 0};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(img[i], expect[i]) << i;
}

TEST(SliceStack, InjectedFullDiskRemovesEverything) {
  TempDir dir;
  const fdk_volume v = volume(16, 10, 16);
  const auto data = ramp(16 * 10 * 16);
  WriteFaultInjection fault;
  fault.fail_after_bytes = 5 * 1024 + 100;  // in the 5th slice
  VolumeWriterOptions o;
  o.fault = &fault;
  {
    auto w = make_tiff_slice_writer(dir.path(), "slice", v, o);
    try {
      w->write_planes(0, 10, data.data());
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutput);
      EXPECT_NE(std::string(e.what()).find("slice_000"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).empty());
  // Abandoned without commit: nothing either.
  {
    auto w = make_tiff_slice_writer(dir.path(), "slice", v, {});
    w->write_planes(0, 4, data.data());
  }
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).empty());
  EXPECT_THROW(make_tiff_slice_writer(dir / "missing", "slice", v, {}), Error);
}

TEST(BigTiff, OneMultiPageFile) {
  TempDir dir;
  const fdk_volume v = volume(7, 6, 3);
  const auto data = ramp(7 * 6 * 3);
  auto w = make_bigtiff_writer(dir / "vol.tif", v, {}, TiffWriteOptions::Compression::kLzw);
  w->write_planes(0, 2, data.data());
  w->write_planes(2, 6, data.data() + 2 * 21);
  EXPECT_FALSE(std::filesystem::exists(dir / "vol.tif"));
  w->commit();
  const std::string bytes = fdk_adapter_test::read_all(dir / "vol.tif");
  ASSERT_GT(bytes.size(), 4u);
  EXPECT_EQ(bytes[2], 43);  // BigTIFF magic
  TiffReader r(dir / "vol.tif");
  ASSERT_EQ(r.page_count(), 6);
  for (int y = 0; y < 6; ++y) {
    const auto img = r.read_page(y);
    EXPECT_EQ(0, std::memcmp(img.data(), data.data() + y * 21, 21 * 4)) << y;
  }
  {
    WriteFaultInjection fault;
    fault.fail_after_bytes = 300;
    VolumeWriterOptions o;
    o.fault = &fault;
    auto f = make_bigtiff_writer(dir / "full.tif", v, o);
    EXPECT_THROW(f->write_planes(0, 6, data.data()), Error);
  }
  EXPECT_EQ(fdk_adapter_test::names_in(dir.path()), std::vector<std::string>{"vol.tif"});
}
