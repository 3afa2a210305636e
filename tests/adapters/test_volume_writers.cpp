// TIFF slice stacks, the multi-page BigTIFF and the ImageJ stack: names,
// values, ImageJ's tags and description, windows, and failures that leave
// nothing behind.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <tiffio.h>

#include <cmath>
#include <cstdio>
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
  EXPECT_FLOAT_EQ(xres, 4.0f);  // 0.25 mm -> 4 per mm, as ImageJ writes
  EXPECT_FLOAT_EQ(yres, 8.0f);  // z: 0.125 mm
  EXPECT_EQ(unit, RESUNIT_NONE);
  const std::string d = description;
  // ImageJ's keys first; its display range: this plane's min..max.
  const float* p3 = data.data() + 3 * 30;
  char range[128];
  std::snprintf(range, sizeof range, "min=%.10g\nmax=%.10g\n", p3[0], p3[29]);
  EXPECT_EQ(d.rfind("ImageJ=1.11a\nimages=1\nunit=mm\nspacing=0.5\nloop=false\n", 0), 0u) << d;
  EXPECT_NE(d.find(range), std::string::npos) << d;
  // x = (px - xorigin) * 0.25 = -1 at px 0; plane 3 sits at y = -1 + 3 * 0.5.
  EXPECT_NE(d.find("xorigin=4\nyorigin=8\nzorigin=-1\n"), std::string::npos) << d;
  EXPECT_NE(d.find("fdk_volume_size=6 12 5\n"), std::string::npos) << d;
  EXPECT_NE(d.find("fdk_first_plane=3\nfdk_first_plane_y=0.5\n"), std::string::npos) << d;
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

// Two range writers (two ranks' shares) write the files one writer writes,
// byte for byte; each commits only its own range, and planes outside it are
// refused.
TEST(SliceStack, RangesWriteTheSameFilesAsTheWholeStack) {
  TempDir whole, parts;
  const fdk_volume v = volume(6, 9, 5);
  const auto data = ramp(6 * 9 * 5);
  auto w = make_tiff_slice_writer(whole.path(), "slice", v, {});
  w->write_planes(0, 9, data.data());
  w->commit();
  auto low = make_tiff_slice_range_writer(parts.path(), "slice", v, {}, TiffWriteOptions::Compression::kNone, 0, 4);
  auto high = make_tiff_slice_range_writer(parts.path(), "slice", v, {}, TiffWriteOptions::Compression::kNone, 4, 9);
  EXPECT_THROW(high->write_planes(0, 4, data.data()), Error);  // not its planes
  high->write_planes(4, 9, data.data() + 4 * 30);
  EXPECT_THROW(low->write_planes(0, 5, data.data()), Error);  // beyond its range
  low->write_planes(0, 4, data.data());
  high->commit();
  EXPECT_EQ(high->outputs().front(), parts / "slice_0004.tif");
  low->commit();
  const auto names = fdk_adapter_test::names_in(whole.path());
  ASSERT_EQ(names, fdk_adapter_test::names_in(parts.path()));
  for (const std::string& name : names) {
    std::FILE* a = std::fopen((whole / name).c_str(), "rb");
    std::FILE* b = std::fopen((parts / name).c_str(), "rb");
    ASSERT_TRUE(a && b) << name;
    int ca, cb;
    do {
      ca = std::fgetc(a);
      cb = std::fgetc(b);
    } while (ca == cb && ca != EOF);
    std::fclose(a);
    std::fclose(b);
    EXPECT_EQ(ca, cb) << name << " differs";
  }
  EXPECT_THROW(make_tiff_slice_range_writer(parts.path(), "s", v, {}, TiffWriteOptions::Compression::kNone, 3, 10),
               Error);
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

namespace {

std::string tag_text(const std::string& path, int page, ttag_t tag) {
  TIFF* t = TIFFOpen(path.c_str(), "r");
  if (!t) return "";
  char* text = nullptr;
  std::string out;
  if (TIFFSetDirectory(t, static_cast<tdir_t>(page)) && TIFFGetField(t, tag, &text) && text) {
    out = text;
  }
  TIFFClose(t);
  return out;
}

}  // namespace

TEST(BigTiff, CarriesImageJMetadataWithoutADisplayRangeUnlessWindowed) {
  TempDir dir;
  const fdk_volume v = volume(7, 6, 3);
  const auto data = ramp(7 * 6 * 3);
  auto w = make_bigtiff_writer(dir / "a.tif", v, {});
  w->write_planes(0, 6, data.data());
  w->commit();
  const std::string d = tag_text(dir / "a.tif", 0, TIFFTAG_IMAGEDESCRIPTION);
  EXPECT_EQ(d.rfind("ImageJ=1.11a\nimages=6\nslices=6\nunit=mm\nspacing=0.5\n", 0), 0u) << d;
  EXPECT_EQ(d.find("min="), std::string::npos) << d;
  VolumeWriterOptions o;
  o.window_lo = -0.25;
  o.window_hi = 0.5;
  o.display_window = true;
  auto w2 = make_bigtiff_writer(dir / "b.tif", v, o);
  w2->write_planes(0, 6, data.data());
  w2->commit();
  EXPECT_NE(tag_text(dir / "b.tif", 0, TIFFTAG_IMAGEDESCRIPTION).find("min=-0.25\nmax=0.5\n"),
            std::string::npos);
}

TEST(ImageJStack, ClassicTiffWithContiguousPlanesThatEveryReaderReads) {
  TempDir dir;
  const fdk_volume v = volume(6, 12, 5);
  const auto data = ramp(6 * 12 * 5);
  const std::string path = dir / "vol.tif";
  auto w = make_imagej_stack_writer(path, v, {});
  w->write_planes(0, 5, data.data());
  EXPECT_THROW(w->write_planes(6, 7, data.data()), Error);  // a gap
  w->write_planes(5, 12, data.data() + 5 * 30);
  EXPECT_FALSE(std::filesystem::exists(path));
  w->commit();
  const std::string bytes = fdk_adapter_test::read_all(path);
  ASSERT_GT(bytes.size(), 8u + 12 * 120);
  EXPECT_EQ(bytes[2], 42);  // classic TIFF
  // What ImageJ reads: every plane back to back from the first strip.
  EXPECT_EQ(0, std::memcmp(bytes.data() + 8, data.data(), data.size() * 4));
  // What libtiff reads: every directory.
  TiffReader r(path);
  ASSERT_EQ(r.page_count(), 12);
  for (int y = 0; y < 12; ++y) {
    TiffPageInfo info;
    const auto img = r.read_page(y, &info);
    ASSERT_EQ(info.width, 6);
    ASSERT_EQ(info.height, 5);
    EXPECT_EQ(0, std::memcmp(img.data(), data.data() + y * 30, 30 * 4)) << y;
  }
  TIFF* t = TIFFOpen(path.c_str(), "r");
  ASSERT_TRUE(t);
  float xres = 0, yres = 0;
  uint16_t unit = 0;
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres));
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres));
  EXPECT_TRUE(TIFFGetField(t, TIFFTAG_RESOLUTIONUNIT, &unit));
  EXPECT_FLOAT_EQ(xres, 4.0f);
  EXPECT_FLOAT_EQ(yres, 8.0f);
  EXPECT_EQ(unit, RESUNIT_NONE);
  TIFFClose(t);
  const std::string d = tag_text(path, 0, TIFFTAG_IMAGEDESCRIPTION);
  EXPECT_EQ(d.rfind("ImageJ=1.11a\nimages=12\nslices=12\nunit=mm\nspacing=0.5\nloop=false\n", 0),
            0u) << d;
  // 360 voxels, all sampled: the 0.5 and 99.5 percentiles are the 2nd
  // smallest and the 2nd largest.
  char range[128];
  std::snprintf(range, sizeof range, "min=%.10g\nmax=%.10g\n", data[1], data[358]);
  EXPECT_NE(d.find(range), std::string::npos) << d;
}

TEST(ImageJStack, Uint16FullDiskAndTheBigTiffBeyond4GiB) {
  TempDir dir;
  const fdk_volume v = volume(4, 3, 2);
  VolumeWriterOptions o;
  o.type = VoxelType::kUInt16;
  o.window_lo = 0;
  o.window_hi = 2;
  const float planes[24] = {-1, 0, 0.5f, 1, 1.5f, 2, 3, 1};
  auto w = make_imagej_stack_writer(dir / "u.tif", v, o);
  w->write_planes(0, 3, planes);
  w->commit();
  TiffReader r(dir / "u.tif");
  ASSERT_EQ(r.page_count(), 3);
  TiffPageInfo info;
  const auto img = r.read_page(0, &info);
  EXPECT_EQ(info.type, SampleType::kUInt16);
  const float expect[8] = {0, 0, 16384, 32768, 49151, 65535, 65535, 32768};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(img[i], expect[i]) << i;
  EXPECT_NE(tag_text(dir / "u.tif", 0, TIFFTAG_IMAGEDESCRIPTION).find("min=0\nmax=65535\n"),
            std::string::npos);
  {
    WriteFaultInjection fault;
    fault.fail_after_bytes = 40;
    VolumeWriterOptions f = o;
    f.fault = &fault;
    auto full = make_imagej_stack_writer(dir / "full.tif", v, f);
    try {
      full->write_planes(0, 3, planes);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutput);
      EXPECT_NE(std::string(e.what()).find("full.tif"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(fdk_adapter_test::names_in(dir.path()), std::vector<std::string>{"u.tif"});
  // 2048 x 2048 x 300 float32 = 4.7 GiB: a BigTIFF (here: a lowered limit).
  EXPECT_GE(imagej_stack_bytes(volume(2048, 300, 2048), {}), uint64_t(1) << 32);
  EXPECT_LT(imagej_stack_bytes(volume(2048, 200, 2048), {}), uint64_t(1) << 32);
  auto b = make_imagej_stack_writer(dir / "big.tif", v, o, /*classic_limit=*/100);
  b->write_planes(0, 3, planes);
  b->commit();
  const std::string head = fdk_adapter_test::read_all(dir / "big.tif");
  ASSERT_GE(head.size(), 4u);
  EXPECT_EQ(head[2], 43);  // BigTIFF magic
  EXPECT_EQ(tag_text(dir / "big.tif", 0, TIFFTAG_IMAGEDESCRIPTION).rfind("ImageJ=1.11a\nimages=3\n", 0),
            0u);
  EXPECT_EQ(TiffReader(dir / "big.tif").read_page(0), img);
}
