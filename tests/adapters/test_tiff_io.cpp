// The TIFF reader in every sample format and layout, multi-page files, and
// corrupt or unsupported files (clear errors, nothing printed).
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/tiff_io.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "test_support.hpp"
#include "tiff_test_files.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::what_of;
using fdk_adapter_test::RawTiffLayout;
using fdk_adapter_test::TempDir;

namespace {

struct Format {
  int bits, format;
  SampleType type;
  double scale, offset;  // values written: offset + scale * index
};

// A classic little-endian TIFF of `next.size()` pages of 2 x 2 uint8 pixels,
// written by hand so that the chain of directories can be broken: page i's
// "next directory" field points at page next[i] (-1: the end of the chain).
std::string tiff_with_directory_chain(const std::vector<int>& next) {
  auto u16 = [](std::string& s, uint16_t v) { s.append(reinterpret_cast<const char*>(&v), 2); };
  auto u32 = [](std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); };
  const uint32_t entries = 8, ifd_bytes = 2 + 12 * entries + 4;
  const uint32_t pixels_at = 8 + ifd_bytes * static_cast<uint32_t>(next.size());
  std::string s = "II";
  u16(s, 42);
  u32(s, 8);
  for (size_t i = 0; i < next.size(); ++i) {
    u16(s, static_cast<uint16_t>(entries));
    const uint32_t tags[8][3] = {{256, 3, 2}, {257, 3, 2}, {258, 3, 8}, {259, 3, 1},
                                 {262, 3, 1}, {273, 4, pixels_at}, {278, 3, 2}, {279, 4, 4}};
    for (const auto& t : tags) {
      u16(s, static_cast<uint16_t>(t[0]));
      u16(s, static_cast<uint16_t>(t[1]));
      u32(s, 1);
      if (t[1] == 3) {
        u16(s, static_cast<uint16_t>(t[2]));
        u16(s, 0);
      } else {
        u32(s, t[2]);
      }
    }
    u32(s, next[i] < 0 ? 0u : 8 + ifd_bytes * static_cast<uint32_t>(next[i]));
  }
  s += std::string("\x01\x02\x03\x04", 4);
  return s;
}

}  // namespace

class TiffFormats : public ::testing::TestWithParam<std::tuple<int, bool, int, bool>> {};

TEST_P(TiffFormats, ReadsBackExactly) {
  static const Format kFormats[] = {
      {8, SAMPLEFORMAT_UINT, SampleType::kUInt8, 1.0, 3.0},
      {16, SAMPLEFORMAT_UINT, SampleType::kUInt16, 97.0, 11.0},
      {32, SAMPLEFORMAT_UINT, SampleType::kUInt32, 40000.0, 7.0},  // beyond 16 bits
      {32, SAMPLEFORMAT_IEEEFP, SampleType::kFloat32, -0.37, 1.5},
  };
  const auto [fi, tiled, compression, big_endian] = GetParam();
  const Format& f = kFormats[fi];
  TempDir dir;
  const int w = 37, h = 21;  // not multiples of the tile or strip size
  RawTiffLayout l;
  l.bits = f.bits;
  l.format = f.format;
  l.tiled = tiled;
  l.compression = compression;
  l.big_endian = big_endian;
  const auto page0 = fdk_adapter_test::ramp_image(w, h, f.scale, f.offset);
  const auto page1 = fdk_adapter_test::ramp_image(w, h, f.scale, f.offset + 2);
  const auto page2 = fdk_adapter_test::ramp_image(w, h, -0.5 * f.scale, f.offset + 200);
  fdk_adapter_test::write_raw_tiff(dir / "t.tif", w, h, {page0, page1, page2}, l);

  testing::internal::CaptureStderr();
  TiffReader r(dir / "t.tif");
  EXPECT_EQ(r.page_count(), 3);
  // Pages in any order, repeatedly.
  for (int page : {0, 1, 2, 1, 0, 2}) {
    TiffPageInfo info;
    const std::vector<float> got = r.read_page(page, &info);
    EXPECT_EQ(info.width, w);
    EXPECT_EQ(info.height, h);
    EXPECT_EQ(info.type, f.type);
    EXPECT_EQ(info.tiled, tiled);
    const auto& want = page == 0 ? page0 : page == 1 ? page1 : page2;
    for (size_t i = 0; i < want.size(); ++i) {
      double expect = want[i];
      if (f.bits == 8) expect = static_cast<uint8_t>(expect);
      if (f.bits == 16 && f.format == SAMPLEFORMAT_UINT) expect = static_cast<uint16_t>(static_cast<int64_t>(expect));
      if (f.bits == 32 && f.format == SAMPLEFORMAT_UINT) expect = static_cast<uint32_t>(static_cast<int64_t>(expect));
      ASSERT_EQ(got[i], static_cast<float>(expect)) << "page " << page << " pixel " << i;
    }
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

INSTANTIATE_TEST_SUITE_P(
    AllLayouts, TiffFormats,
    ::testing::Combine(::testing::Range(0, 4), ::testing::Bool(),
                       ::testing::Values(COMPRESSION_NONE, COMPRESSION_LZW,
                                         COMPRESSION_ADOBE_DEFLATE),
                       ::testing::Bool()));

TEST(TiffReader, BigTiffAndMemory) {
  TempDir dir;
  RawTiffLayout l;
  l.bigtiff = true;
  const auto img = fdk_adapter_test::ramp_image(8, 5, 3.0, 1.0);
  fdk_adapter_test::write_raw_tiff(dir / "b.tif", 8, 5, {img}, l);
  TiffReader r(dir / "b.tif");
  EXPECT_EQ(r.read_page(0)[39], 118.0f);
  const std::string bytes = fdk_adapter_test::read_all(dir / "b.tif");
  TiffReader m(bytes.data(), bytes.size(), "memory");
  EXPECT_EQ(m.page_count(), 1);
  EXPECT_EQ(m.read_page(0)[1], 4.0f);
}

TEST(TiffReader, CorruptFilesGiveClearErrorsAndPrintNothing) {
  TempDir dir;
  const int w = 64, h = 64;
  const auto img = fdk_adapter_test::ramp_image(w, h, 1.0, 0.0);
  RawTiffLayout l;
  l.rows_per_strip = 8;
  fdk_adapter_test::write_raw_tiff(dir / "good.tif", w, h, {img}, l);
  const std::string good = fdk_adapter_test::read_all(dir / "good.tif");
  // Cut in half: libtiff writes the directory after the data, so the
  // header points past the end of the file.
  fdk_adapter_test::write_text(dir / "truncated.tif", good.substr(0, good.size() / 2));
  fdk_adapter_test::write_text(dir / "garbage.tif", std::string(1000, 'x'));
  fdk_adapter_test::write_text(dir / "empty.tif", "");
  // The directory intact but the last strip's data past the end of the
  // file (a truncated transfer of a file written directory-first).
  std::string cut = good;
  {
    // Find StripOffsets (tag 273) in the little-endian IFD and move the
    // last strip's offset past the end of the file.
    uint32_t ifd;
    std::memcpy(&ifd, cut.data() + 4, 4);
    uint16_t entries;
    std::memcpy(&entries, cut.data() + ifd, 2);
    for (int e = 0; e < entries; ++e) {
      const size_t at = ifd + 2 + 12 * e;
      uint16_t tag;
      std::memcpy(&tag, cut.data() + at, 2);
      if (tag == 273) {
        uint32_t count, offsets;
        std::memcpy(&count, cut.data() + at + 4, 4);
        std::memcpy(&offsets, cut.data() + at + 8, 4);
        const uint32_t far = static_cast<uint32_t>(cut.size()) - 100;
        std::memcpy(cut.data() + offsets + 4 * (count - 1), &far, 4);
      }
    }
  }
  fdk_adapter_test::write_text(dir / "short_strip.tif", cut);

  testing::internal::CaptureStderr();
  for (const char* name : {"truncated.tif", "garbage.tif", "empty.tif", "short_strip.tif"}) {
    const std::string path = dir / name;
    const std::string msg = what_of([&] {
      TiffReader r(path);
      r.read_page(0);
    });
    EXPECT_NE(msg, "") << name;
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
  }
  EXPECT_NE(what_of([&] {
              TiffReader r(dir / "short_strip.tif");
              r.read_page(0);
            }).find("page 0: strip 7"),
            std::string::npos);
  EXPECT_NE(what_of([&] { TiffReader r(dir / "missing.tif"); }).find("No such file"),
            std::string::npos);
  EXPECT_NE(what_of([&] { TiffReader r(dir.path()); }).find("is a folder"), std::string::npos);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// A directory chain that loops back (to the page itself, to the first or to
// a middle page) is a corrupt file: libtiff 4.5 stops quietly at the loop and
// the file used to pass as a shorter one (older libtiff walks it far longer).
TEST(TiffReader, DirectoryChainThatLoopsIsRefused) {
  TempDir dir;
  const std::string ok = tiff_with_directory_chain({1, 2, -1});
  TiffReader good(ok.data(), ok.size(), "three.tif");
  EXPECT_EQ(good.page_count(), 3);
  EXPECT_EQ(good.read_page(2)[3], 4.0f);
  testing::internal::CaptureStderr();
  const std::vector<std::vector<int>> loops = {{0}, {1, 2, 0}, {1, 2, 1}};
  for (const auto& chain : loops) {
    const std::string bytes = tiff_with_directory_chain(chain);
    const std::string msg = what_of([&] {
      TiffReader r(bytes.data(), bytes.size(), "loop.tif");
      r.page_count();
    });
    EXPECT_NE(msg.find("'loop.tif': the page (IFD) chain loops"), std::string::npos)
        << chain.size() << " pages: " << msg;
  }
  // The same from a file, through the folder check's path.
  fdk_adapter_test::write_text(dir / "loop.tif", tiff_with_directory_chain({1, 0}));
  const std::string msg = what_of([&] {
    TiffReader r(dir / "loop.tif");
    r.page_count();
  });
  EXPECT_NE(msg.find("loop.tif': the page (IFD) chain loops: page 1 points back to the "
                     "directory at byte 8"),
            std::string::npos)
      << msg;
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// More pages than kMaxTiffPages: refused before libtiff counts them.
TEST(TiffReader, AbsurdPageCountIsRefused) {
  // One real page, then empty directories (0 entries and the next offset,
  // 6 bytes each) up to one more than the limit.
  std::string s = tiff_with_directory_chain({-1});
  const uint32_t first_empty = static_cast<uint32_t>(s.size());
  std::memcpy(&s[8 + 2 + 12 * 8], &first_empty, 4);
  const uint32_t n = kMaxTiffPages;
  s.reserve(s.size() + 6 * static_cast<size_t>(n));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t next = i + 1 < n ? first_empty + 6 * (i + 1) : 0;
    s += std::string(2, '\0');
    s.append(reinterpret_cast<const char*>(&next), 4);
  }
  const std::string msg = what_of([&] {
    TiffReader r(s.data(), s.size(), "many.tif");
    r.page_count();
  });
  EXPECT_NE(msg.find("'many.tif' has more than 1048576 pages"), std::string::npos) << msg;
}

TEST(TiffReader, UnsupportedKindsSayWhatIsSupported) {
  TempDir dir;
  const auto img = fdk_adapter_test::ramp_image(4, 4, 1.0, 0.0);
  RawTiffLayout rgb;
  rgb.bits = 8;
  rgb.samples_per_pixel = 3;
  fdk_adapter_test::write_raw_tiff(dir / "rgb.tif", 4, 4, {img}, rgb);
  RawTiffLayout s16;
  s16.format = SAMPLEFORMAT_INT;
  fdk_adapter_test::write_raw_tiff(dir / "s16.tif", 4, 4, {img}, s16);
  for (const char* name : {"rgb.tif", "s16.tif"}) {
    try {
      TiffReader r(dir / name);
      r.page_info(0);
      FAIL() << name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
  TiffReader r(dir / "s16.tif");
  EXPECT_NE(what_of([&] { r.page_info(3); }).find("page 3"), std::string::npos);
}

TEST(TiffReader, RefusesHugePages) {
  TempDir dir;
  fdk_adapter_test::write_raw_tiff(dir / "p.tif", 64, 64, {fdk_adapter_test::ramp_image(64, 64, 1, 0)});
  TiffReader r(dir / "p.tif", /*max_pixels=*/1000);
  EXPECT_NE(what_of([&] { r.page_info(0); }).find("more than the limit"), std::string::npos);
}

TEST(TiffWriter, FloatAndUint16StripsAndTilesReadBack) {
  TempDir dir;
  const int w = 33, h = 17;
  std::vector<float> f(w * h);
  std::vector<uint16_t> u(w * h);
  for (int i = 0; i < w * h; ++i) {
    f[i] = 0.25f * i - 7.0f;
    u[i] = static_cast<uint16_t>(i * 61);
  }
  for (bool tiled : {false, true}) {
    for (auto c : {TiffWriteOptions::Compression::kNone, TiffWriteOptions::Compression::kLzw,
                   TiffWriteOptions::Compression::kDeflate}) {
      TiffWriteOptions o;
      o.tiled = tiled;
      o.tile_size = 16;
      o.compression = c;
      const std::string path = dir / "w.tif";
      {
        TiffWriter wr(path, o);
        wr.add_page(w, h, SampleType::kFloat32, f.data(), 0, 2);
        wr.add_page(w, h, SampleType::kUInt16, u.data(), 1, 2);
        wr.commit();
      }
      TiffReader r(path);
      ASSERT_EQ(r.page_count(), 2);
      EXPECT_EQ(r.read_page(0), f);
      const auto back = r.read_page(1);
      for (int i = 0; i < w * h; ++i) ASSERT_EQ(back[i], static_cast<float>(u[i]));
    }
  }
}
