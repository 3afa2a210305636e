// MetaImage, NRRD and raw projection stacks: sample types, byte orders,
// attached and detached data, compression, lazy reading in any order, the
// geometry they state, dark/flat/bad-pixel files as stacks, --like grids,
// and the refusal of headers that are corrupt or mean something else.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/image_stack.hpp>

#include <cmath>
#include <filesystem>
#include <random>

#include "stack_test_files.hpp"
#include "test_support.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::bytes_of;
using fdk_adapter_test::deflate_bytes;
using fdk_adapter_test::mha_header;
using fdk_adapter_test::TempDir;
using fdk_adapter_test::what_of;
using fdk_adapter_test::write_bytes;

namespace {

constexpr int kW = 6, kH = 4, kN = 5;

// Sample (x, y) of frame i.
template <typename T>
std::vector<T> frames(double scale = 1) {
  std::vector<T> v;
  for (int i = 0; i < kN; ++i) {
    for (int y = 0; y < kH; ++y) {
      for (int x = 0; x < kW; ++x) v.push_back(static_cast<T>(scale * (1000 + 100 * i + 10 * y + x)));
    }
  }
  return v;
}

// Every frame of a stack read through StackFrameReader in the given order.
void expect_frames(const StackHeader& h, const std::vector<int>& order, double scale = 1) {
  StackFrameReader r(h);
  ASSERT_EQ(r.frames(), kN);
  auto cursor = r.make_cursor();
  std::vector<float> f(kW * kH);
  for (int i : order) {
    r.read(i, f.data(), *cursor);
    for (int y = 0; y < kH; ++y) {
      for (int x = 0; x < kW; ++x) {
        ASSERT_EQ(f[static_cast<size_t>(y * kW + x)],
                  static_cast<float>(scale * (1000 + 100 * i + 10 * y + x)))
            << "frame " << i << " pixel " << x << "," << y;
      }
    }
  }
}

const std::vector<int> kOrders = {0, 1, 2, 3, 4, 2, 0, 4, 4, 1};

}  // namespace

TEST(ImageStack, MetaImageUint16AttachedWithSpacingAndOffset) {
  TempDir dir;
  const std::string path = dir / "p.mha";
  write_bytes(path, mha_header(kW, kH, kN, "MET_USHORT",
                               "ElementSpacing = 0.5 0.25 1\nOffset = -1.25 -0.375 0\n"
                               "TransformMatrix = 1 0 0 0 1 0 0 0 1\nComment = anything\n") +
                        bytes_of(frames<uint16_t>()));
  const StackHeader h = read_stack_header(path);
  EXPECT_EQ(h.format, "MetaImage");
  EXPECT_EQ(h.type, SampleType::kUInt16);
  expect_frames(h, kOrders);
  ImageStackOptions o;
  o.preprocess.i0 = 5000;
  ImageStack s(h, o);
  EXPECT_EQ(s.count(), kN);
  EXPECT_TRUE(s.raw());
  EXPECT_EQ(s.raw_pixel_size_mm()[0], 0.5);
  EXPECT_EQ(s.raw_pixel_size_mm()[1], 0.25);
  ASSERT_TRUE(s.raw_detector_origin_mm());
  EXPECT_EQ((*s.raw_detector_origin_mm())[0], -1.25);
  EXPECT_EQ((*s.raw_detector_origin_mm())[1], -0.375);
  EXPECT_EQ(s.geometry_source(), "the MetaImage header");
  EXPECT_NE(s.describe(3).find("p.mha' frame 3"), std::string::npos);
  auto ws = s.make_workspace();
  std::vector<float> out(kW * kH);
  s.read(2, out.data(), *ws);
  EXPECT_NEAR(out[0], -std::log(1200.0 / 5000.0), 1e-6);
}

TEST(ImageStack, DetachedBigEndianFloatWithHeaderSizes) {
  TempDir dir;
  const auto data = bytes_of(frames<float>(0.001), true);
  write_bytes(dir / "data.raw", std::string(16, 'x') + data);
  write_bytes(dir / "a.mhd", mha_header(kW, kH, kN, "MET_FLOAT",
                                        "BinaryDataByteOrderMSB = True\nHeaderSize = 16\n", "data.raw"));
  expect_frames(read_stack_header(dir / "a.mhd"), kOrders, 0.001);
  // A data file name with a space is one file, not a pattern.
  write_bytes(dir / "my data.raw", std::string(16, 'x') + data);
  write_bytes(dir / "s.mhd", mha_header(kW, kH, kN, "MET_FLOAT",
                                        "BinaryDataByteOrderMSB = True\nHeaderSize = 16\n", "my data.raw"));
  expect_frames(read_stack_header(dir / "s.mhd"), kOrders, 0.001);
  // HeaderSize -1: the samples end the file.
  write_bytes(dir / "b.mhd", mha_header(kW, kH, kN, "MET_FLOAT",
                                        "ElementByteOrderMSB = True\nHeaderSize = -1\n", "data.raw"));
  const StackHeader b = read_stack_header(dir / "b.mhd");
  EXPECT_EQ(b.file_skip, 16);
  expect_frames(b, kOrders, 0.001);
  // Float samples without dark/flat/I0 are line integrals.
  ImageStack s(b, ImageStackOptions{});
  EXPECT_FALSE(s.raw());
}

TEST(ImageStack, OtherSampleTypes) {
  TempDir dir;
  write_bytes(dir / "d.mha", mha_header(kW, kH, kN, "MET_DOUBLE", "") + bytes_of(frames<double>()));
  expect_frames(read_stack_header(dir / "d.mha"), kOrders);
  write_bytes(dir / "s.mha", mha_header(kW, kH, kN, "MET_SHORT", "") + bytes_of(frames<int16_t>()));
  expect_frames(read_stack_header(dir / "s.mha"), kOrders);
  write_bytes(dir / "i.mha", mha_header(kW, kH, kN, "MET_INT", "ElementByteOrderMSB = True\n") +
                                 bytes_of(frames<int32_t>(), true));
  expect_frames(read_stack_header(dir / "i.mha"), kOrders);
}

TEST(ImageStack, NrrdAttachedDetachedAndByteSkip) {
  TempDir dir;
  const std::string fields = "NRRD0004\n# a comment\ntype: unsigned short\ndimension: 3\nsizes: 6 4 5\n"
                             "endian: big\nkinds: domain domain list\nspace dimension: 3\n"
                             "space directions: (0.5,0,0) (0,0.25,0) none\nspace origin: (-1.25,-0.375,0)\n"
                             "note:=free text\n";
  write_bytes(dir / "a.nrrd", fields + "encoding: raw\n\n" + bytes_of(frames<uint16_t>(), true));
  const StackHeader a = read_stack_header(dir / "a.nrrd");
  EXPECT_EQ(a.format, "NRRD");
  EXPECT_EQ(a.spacing[0], 0.5);
  EXPECT_EQ(a.spacing[1], 0.25);
  EXPECT_EQ(a.origin[0], -1.25);
  expect_frames(a, kOrders);
  write_bytes(dir / "b.raw", std::string(7, '\0') + bytes_of(frames<uint16_t>(), true));
  write_bytes(dir / "b.nhdr", fields + "encoding: raw\nbyteskip: 7\ndata file: b.raw\n");
  expect_frames(read_stack_header(dir / "b.nhdr"), kOrders);
  write_bytes(dir / "c.nhdr", fields + "encoding: raw\nbyte skip: -1\ndata file: b.raw\n");
  expect_frames(read_stack_header(dir / "c.nhdr"), kOrders);
  // Spacings instead of directions; RAS space flips x and y of the origin as ITK reads it.
  write_bytes(dir / "d.nrrd", "NRRD0004\ntype: float\ndimension: 3\nsizes: 6 4 5\nendian: little\n"
                              "encoding: raw\nspacings: 0.5 0.25 nan\n\n" + bytes_of(frames<float>()));
  const StackHeader d = read_stack_header(dir / "d.nrrd");
  EXPECT_TRUE(d.has_spacing);
  EXPECT_FALSE(d.has_direction);
  EXPECT_EQ(d.spacing[1], 0.25);
  expect_frames(d, kOrders);
}

TEST(ImageStack, CompressedMetaImageAndGzipNrrdReadInAnyOrder) {
#if !FDK_HAVE_ZLIB
  TempDir dir;
  write_bytes(dir / "z.mha", mha_header(kW, kH, kN, "MET_USHORT", "CompressedData = True\n") + "xxxx");
  const std::string m = what_of([&] { ImageStack(read_stack_header(dir / "z.mha"), ImageStackOptions{}); });
  EXPECT_NE(m.find("unsupported, this build has no zlib"), std::string::npos) << m;
  GTEST_SKIP() << "built without zlib";
#else
  TempDir dir;
  const std::string raw = bytes_of(frames<uint16_t>());
  write_bytes(dir / "z.mha", mha_header(kW, kH, kN, "MET_USHORT", "CompressedData = True\n") +
                                 deflate_bytes(raw));
  expect_frames(read_stack_header(dir / "z.mha"), kOrders);
  // gzip NRRD: the byte skip applies to the decompressed stream.
  write_bytes(dir / "g.nrrd", "NRRD0005\ntype: uint16\ndimension: 3\nsizes: 6 4 5\nendian: little\n"
                              "encoding: gzip\nbyte skip: 3\n\n" + deflate_bytes("abc" + raw, true));
  expect_frames(read_stack_header(dir / "g.nrrd"), kOrders);
  // Truncated streams fail naming the file and frame, and the cursor recovers.
  const std::string z = deflate_bytes(raw);
  write_bytes(dir / "t.mha", mha_header(kW, kH, kN, "MET_USHORT", "CompressedData = True\n") +
                                 z.substr(0, z.size() / 2));
  StackFrameReader r(read_stack_header(dir / "t.mha"));
  auto c = r.make_cursor();
  std::vector<float> f(kW * kH);
  r.read(0, f.data(), *c);
  const std::string m = what_of([&] { r.read(4, f.data(), *c); });
  EXPECT_NE(m.find("t.mha' frame 4"), std::string::npos) << m;
  EXPECT_NE(m.find("truncated"), std::string::npos) << m;
  r.read(0, f.data(), *c);
  // A header promising more than the stream can hold is refused up front.
  write_bytes(dir / "h.mha", mha_header(16384, 16384, 1, "MET_DOUBLE", "CompressedData = True\n") + z);
  const std::string huge = what_of([&] { read_stack_header(dir / "h.mha"); });
  EXPECT_NE(huge.find("cannot expand"), std::string::npos) << huge;
  // Corrupt bytes.
  std::string bad = z;
  for (size_t i = 2; i < bad.size(); i += 3) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  write_bytes(dir / "c.mha", mha_header(kW, kH, kN, "MET_USHORT", "CompressedData = True\n") + bad);
  StackFrameReader rc(read_stack_header(dir / "c.mha"));
  auto cc = rc.make_cursor();
  EXPECT_THROW(
      {
        for (int i = 0; i < kN; ++i) rc.read(i, f.data(), *cc);
      },
      Error);
#endif
}

TEST(ImageStack, RawFilesWithAHeaderAndEitherByteOrder) {
  TempDir dir;
  write_bytes(dir / "r.bin", std::string(100, '\1') + bytes_of(frames<uint16_t>(), true));
  expect_frames(raw_stack_header(dir / "r.bin", kW, kH, kN, SampleType::kUInt16, 100, true), kOrders);
  write_bytes(dir / "f.bin", bytes_of(frames<float>()));
  const StackHeader f = raw_stack_header(dir / "f.bin", kW, kH, kN, SampleType::kFloat32, 0, false);
  expect_frames(f, kOrders);
  EXPECT_FALSE(f.has_spacing);
  const std::string m = what_of([&] { raw_stack_header(dir / "f.bin", kW, kH, kN + 1, SampleType::kFloat32, 0, false); });
  // A raw file has no header: the message names the layout as given.
  EXPECT_NE(m.find("f.bin' is 480 bytes but the raw layout describes 576 bytes"), std::string::npos) << m;
  const std::string named = what_of([&] {
    raw_stack_header(dir / "f.bin", kW, kH, kN + 1, SampleType::kFloat32, 0, false, "--raw 4,3,4 --raw-type float32");
  });
  EXPECT_NE(named.find("but --raw 4,3,4 --raw-type float32 describes 576 bytes"), std::string::npos) << named;
  SampleType t;
  EXPECT_TRUE(parse_sample_type("int16", &t));
  EXPECT_EQ(t, SampleType::kInt16);
  EXPECT_FALSE(parse_sample_type("uint64", &t));
}

TEST(ImageStack, DarkFlatAndBadPixelsAsStacks) {
  TempDir dir;
  write_bytes(dir / "p.mha", mha_header(kW, kH, kN, "MET_USHORT", "") + bytes_of(frames<uint16_t>()));
  // Dark: two frames averaging 100; flat: 5100.
  std::vector<uint16_t> dark(2 * kW * kH, 90), flat(kW * kH, 5100), mask(kW * kH, 0);
  for (size_t i = kW * kH; i < dark.size(); ++i) dark[i] = 110;
  mask[7] = 1;
  write_bytes(dir / "dark.mha", mha_header(kW, kH, 2, "MET_USHORT", "") + bytes_of(dark));
  write_bytes(dir / "flat.nrrd", "NRRD0004\ntype: uint16\ndimension: 2\nsizes: 6 4\nendian: little\n"
                                 "encoding: raw\n\n" + bytes_of(flat));
  write_bytes(dir / "bad.mha", mha_header(kW, kH, 1, "MET_UCHAR", "") +
                                   bytes_of(std::vector<uint8_t>(mask.begin(), mask.end())));
  ImageStackOptions o;
  o.dark = dir / "dark.mha";
  o.flat = dir / "flat.nrrd";
  o.bad_pixels = dir / "bad.mha";
  ImageStack s(read_stack_header(dir / "p.mha"), o);
  EXPECT_EQ(s.dark_frames(), 2);
  EXPECT_EQ(s.flat_frames(), 1);
  EXPECT_EQ(s.preprocessor().report().bad_from_map, 1u);
  auto ws = s.make_workspace();
  std::vector<float> out(kW * kH);
  s.read(1, out.data(), *ws);
  EXPECT_NEAR(out[0], -std::log((1100.0 - 100.0) / 5000.0), 1e-6);
  // A TIFF dark without a loader for it is refused as unsupported.
  ImageStackOptions t;
  t.dark = dir / "dark.tif";
  t.flat = dir / "flat.nrrd";
  try {
    ImageStack(read_stack_header(dir / "p.mha"), t);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("dark.tif"), std::string::npos) << e.what();
  }
}

TEST(ImageStack, DirectionsThatTurnTheDetectorAreRefused) {
  TempDir dir;
  write_bytes(dir / "f.mha", mha_header(kW, kH, kN, "MET_USHORT", "TransformMatrix = -1 0 0 0 1 0 0 0 1\n") +
                                 bytes_of(frames<uint16_t>()));
  ImageStackOptions o;
  o.preprocess.i0 = 5000;
  const std::string m = what_of([&] { ImageStack(read_stack_header(dir / "f.mha"), o); });
  EXPECT_NE(m.find("f.mha"), std::string::npos) << m;
  EXPECT_NE(m.find("TransformMatrix"), std::string::npos) << m;
  // The third axis's direction does not matter.
  write_bytes(dir / "g.mha", mha_header(kW, kH, kN, "MET_USHORT", "TransformMatrix = 1 0 0 0 1 0 0 0 -1\n") +
                                 bytes_of(frames<uint16_t>()));
  EXPECT_NO_THROW(ImageStack(read_stack_header(dir / "g.mha"), o));
}

TEST(ImageStack, VolumeGridForLike) {
  TempDir dir;
  // fdk's own MetaImage: x, z, y on disk.
  write_bytes(dir / "v.mha", "NDims = 3\nDimSize = 5 4 3\nElementSpacing = 0.5 1.25 0.75\n"
                             "Offset = -1 -2 -3\nTransformMatrix = 1 0 0 0 0 1 0 1 0\n"
                             "ElementType = MET_FLOAT\nElementDataFile = LOCAL\n");
  fdk_volume v = read_volume_grid(dir / "v.mha");
  EXPECT_EQ(v.size[0], 5);
  EXPECT_EQ(v.size[1], 3);
  EXPECT_EQ(v.size[2], 4);
  EXPECT_EQ(v.spacing[1], 0.75);
  EXPECT_EQ(v.spacing[2], 1.25);
  EXPECT_EQ(v.origin[1], -2);
  // Identity, from a header whose data file does not exist.
  write_bytes(dir / "w.nhdr", "NRRD0004\ntype: float\ndimension: 3\nsizes: 7 8 9\nendian: little\n"
                              "encoding: raw\nspace: left-posterior-superior\n"
                              "space directions: (2,0,0) (0,2,0) (0,0,3)\nspace origin: (1,2,3)\n"
                              "data file: missing.raw\n");
  v = read_volume_grid(dir / "w.nhdr");
  EXPECT_EQ(v.size[2], 9);
  EXPECT_EQ(v.spacing[2], 3);
  EXPECT_EQ(v.origin[2], 3);
  write_bytes(dir / "r.mha", "NDims = 3\nDimSize = 5 4 3\nTransformMatrix = 0.8 0.6 0 -0.6 0.8 0 0 0 1\n"
                             "ElementType = MET_FLOAT\nElementDataFile = LOCAL\n");
  const std::string m = what_of([&] { read_volume_grid(dir / "r.mha"); });
  EXPECT_NE(m.find("r.mha': its TransformMatrix flips or rotates"), std::string::npos) << m;
  // A volume's limits, not a projection frame's: 20000 x 20000 is more than
  // a frame may hold (2^28) but a volume grid --volume-size accepts.
  write_bytes(dir / "wide.mha", "NDims = 3\nDimSize = 20000 20000 1\nElementType = MET_FLOAT\nElementDataFile = x.raw\n");
  EXPECT_EQ(read_volume_grid(dir / "wide.mha").size[1], 20000);
  const struct {
    const char* header;
    const char* needle;
  } kRefused[] = {
      {"DimSize = 70000 4 3\n", "DimSize: 70000 voxels along axis 0"},
      {"DimSize = 5 4 3\nElementSpacing = 1 1e-300 1\n", "ElementSpacing: 1e-300 mm along axis 1"},
      {"DimSize = 5 4 3\nOffset = 0 0 1e300\n", "Offset: 1e+300 mm along z"},
  };
  for (const auto& r : kRefused) {
    write_bytes(dir / "bad.mha", std::string("NDims = 3\n") + r.header + "ElementType = MET_FLOAT\nElementDataFile = x.raw\n");
    const std::string e = what_of([&] { read_volume_grid(dir / "bad.mha"); });
    EXPECT_NE(e.find(std::string("bad.mha': ") + r.needle), std::string::npos) << e;
  }
}

// Headers that are corrupt or that would change the samples' meaning: each
// is refused with an Error naming the file and the key.
TEST(ImageStack, CorruptAndUnsupportedHeadersAreRefusedNamingTheKey) {
  TempDir dir;
  const std::string data = bytes_of(frames<uint16_t>());
  const struct {
    const char* name;
    std::string text;
    const char* expect;
  } cases[] = {
      {"a.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\nElementNumberOfChannels = 3\nElementDataFile = LOCAL\n", "ElementNumberOfChannels"},
      {"b.mha", "NDims = 4\nDimSize = 6 4 5 1\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "NDims"},
      {"c.mha", "NDims = 3\nDimSize = 6 4\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "DimSize"},
      {"d.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_LONG_LONG\nElementDataFile = LOCAL\n", "ElementType"},
      {"e.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\nElementDataFile = LIST\n", "ElementDataFile"},
      {"f.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\nElementDataFile = p%03d.raw 0 4 1\n", "ElementDataFile"},
      {"g.mha", "NDims = 3\nDimSize = 99999 99999 5\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "DimSize"},
      {"h.mha", "NDims = 3\nDimSize = 6 4 99999999999\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "DimSize"},
      {"i.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\nElementSpacing = 1 nan 1\nElementDataFile = LOCAL\n", "ElementSpacing"},
      {"j.mha", "NDims = 3\nDimSize = 6 4 500\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "j.mha' is"},
      {"k.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\nBinaryData = False\nElementDataFile = LOCAL\n", "BinaryData"},
      {"l.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\n", "NUL byte"},  // no ElementDataFile
      {"m.mha", "NDims = 3\nDimSize = 6 4 5\nElementType = MET_USHORT\nElementDataFile = nothere.raw\n", "nothere.raw"},
      {"n.mha", "NDims = 3\nDimSize = 6 -4 5\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "DimSize"},
      {"o.mha", "DimSize = 6 4 5\nElementType = MET_USHORT\nElementDataFile = LOCAL\n", "NDims"},
      {"a.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: bzip2\n\n", "encoding"},
      {"b.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\nkinds: RGB-color domain domain\n\n", "kinds"},
      {"c.nrrd", "NRRD0004\ntype: ushort\ndimension: 4\nsizes: 6 4 5 1\nendian: little\nencoding: raw\n\n", "dimension"},
      {"d.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nencoding: raw\n\n", "endian"},
      {"e.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\ndata file: LIST\n", "data file"},
      {"f.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\nline skip: 2\n\n", "line skip"},
      {"g.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\nfrobnicate: 2\n\n", "frobnicate"},
      {"h.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\nspace directions: (1,0,0) (0,1 none\n\n", "space directions"},
      {"i.nrrd", "NRRD0004\ntype: block\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\n\n", "type"},
      {"j.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\nspace: weird\n\n", "space"},
      {"k.nrrd", "NRRX0004\n", "magic"},
      {"l.nrrd", "NRRD0004\ntype: ushort\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: raw\n", "NUL byte"},  // no blank line
  };
  for (const auto& c : cases) {
    write_bytes(dir / c.name, c.text + data);
    const std::string m = what_of([&] { ImageStack(read_stack_header(dir / c.name), ImageStackOptions{}); });
    EXPECT_NE(m.find(c.name), std::string::npos) << c.name << ": " << m;
    EXPECT_NE(m.find(c.expect), std::string::npos) << c.name << ": " << m;
  }
}

// Random damage to valid headers and data: every outcome is a clean Error
// or a stack that reads (never a crash, a hang or a huge allocation).
TEST(ImageStack, FuzzedHeadersFailCleanly) {
  TempDir dir;
  const std::string data = bytes_of(frames<uint16_t>());
  const std::string seeds[] = {
      mha_header(kW, kH, kN, "MET_USHORT", "ElementSpacing = 0.5 0.5 1\nOffset = 1 2 3\nHeaderSize = 0\n") + data,
      "NRRD0004\ntype: uint16\ndimension: 3\nsizes: 6 4 5\nendian: big\nencoding: raw\n"
      "space directions: (1,0,0) (0,1,0) (0,0,1)\nspace origin: (0,0,0)\nbyte skip: 0\n\n" + data,
#if FDK_HAVE_ZLIB
      mha_header(kW, kH, kN, "MET_USHORT", "CompressedData = True\n") + deflate_bytes(data),
      "NRRD0004\ntype: uint16\ndimension: 3\nsizes: 6 4 5\nendian: little\nencoding: gzip\n\n" +
          deflate_bytes(data, true),
#endif
  };
  std::mt19937 rng(12345);
  const char alphabet[] = "0123456789-+. =:\n()aeEnN%,\xff";
  int n = 0, ok = 0;
  for (const std::string& seed : seeds) {
    const bool nrrd = seed[0] == 'N';
    for (int round = 0; round < 400; ++round, ++n) {
      std::string s = seed;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        if (s.empty()) break;
        const size_t header = std::min<size_t>(s.size(), 220);
        const size_t at = rng() % (rng() % 4 == 0 ? s.size() : header);
        switch (rng() % 4) {
          case 0: s[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
          case 1: s.erase(at, 1 + rng() % 8); break;
          case 2: s.insert(at, std::string(1 + rng() % 3, alphabet[rng() % (sizeof alphabet - 1)])); break;
          case 3: s.resize(at); break;
        }
      }
      const std::string path = dir / (std::string("f") + std::to_string(n) + (nrrd ? ".nrrd" : ".mha"));
      write_bytes(path, s);
      try {
        ImageStackOptions o;
        o.preprocess.i0 = 70000;
        ImageStack st(read_stack_header(path), o);
        auto ws = st.make_workspace();
        std::vector<float> out(static_cast<size_t>(st.width()) * st.height());
        for (int i = st.count() - 1; i >= 0 && i >= st.count() - 3; --i) st.read(i, out.data(), *ws);
        ++ok;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      }
      std::filesystem::remove(path);
    }
  }
  EXPECT_GT(ok, 0);  // some damage (comments, spacing digits) leaves a readable stack
}
