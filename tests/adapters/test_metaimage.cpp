// The MetaImage writer: header, layout, uint16 window, failure paths.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/volume_writer.hpp>

#include <cmath>
#include <cstring>

#include "test_support.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::TempDir;

namespace {

fdk_volume small_volume() {
  fdk_volume v{};
  v.size[0] = 5;
  v.size[1] = 3;
  v.size[2] = 4;
  v.spacing[0] = 0.5;
  v.spacing[1] = 0.75;
  v.spacing[2] = 1.25;
  v.origin[0] = -1;
  v.origin[1] = -2;
  v.origin[2] = -3;
  return v;
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.5f * static_cast<float>(i);
  return v;
}

}  // namespace

TEST(MetaImage, HeaderStatesTheAxisOrder) {
  const std::string h = metaimage_header(small_volume(), {});
  EXPECT_NE(h.find("NDims = 3\n"), std::string::npos);
  EXPECT_NE(h.find("DimSize = 5 4 3\n"), std::string::npos) << h;              // x, z, y
  EXPECT_NE(h.find("ElementSpacing = 0.5 1.25 0.75\n"), std::string::npos) << h;
  EXPECT_NE(h.find("Offset = -1 -2 -3\n"), std::string::npos) << h;            // physical x, y, z
  EXPECT_NE(h.find("TransformMatrix = 1 0 0 0 0 1 0 1 0\n"), std::string::npos);
  EXPECT_NE(h.find("ElementType = MET_FLOAT\n"), std::string::npos);
  EXPECT_EQ(h.substr(h.size() - 24), "ElementDataFile = LOCAL\n");
}

TEST(MetaImage, WritesSlabsInOrderAndCommits) {
  TempDir dir;
  const fdk_volume v = small_volume();
  const auto data = ramp(5 * 3 * 4);
  const std::string path = dir / "vol.mha";
  auto w = make_metaimage_writer(path, v, {});
  w->write_planes(0, 2, data.data());
  EXPECT_THROW(w->write_planes(0, 1, data.data()), Error);  // out of order
  EXPECT_FALSE(std::filesystem::exists(path));               // not before commit
  w->write_planes(2, 3, data.data() + 2 * 20);
  w->commit();
  const std::string file = fdk_adapter_test::read_all(path);
  const std::string header = metaimage_header(v, {});
  ASSERT_EQ(file.size(), header.size() + data.size() * 4);
  EXPECT_EQ(std::memcmp(file.data() + header.size(), data.data(), data.size() * 4), 0);
}

TEST(MetaImage, Uint16Window) {
  TempDir dir;
  fdk_volume v = small_volume();
  v.size[1] = 1;
  VolumeWriterOptions o;
  o.type = VoxelType::kUInt16;
  o.window_lo = 1.0;
  o.window_hi = 5.0;
  std::vector<float> plane(20, 3.0f);
  plane[0] = -10.0f;
  plane[1] = 100.0f;
  plane[2] = std::nanf("");
  auto w = make_metaimage_writer(dir / "u.mha", v, o);
  w->write_planes(0, 1, plane.data());
  w->commit();
  const std::string file = fdk_adapter_test::read_all(dir / "u.mha");
  EXPECT_NE(file.find("MET_USHORT"), std::string::npos);
  std::vector<uint16_t> back(20);
  std::memcpy(back.data(), file.data() + file.size() - 40, 40);
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(back[1], 65535);
  EXPECT_EQ(back[2], 0);
  EXPECT_EQ(back[3], 32768);  // (3 - 1) / 4 * 65535 = 32767.5, rounded
}

TEST(MetaImage, FailuresLeaveNothingThatLooksComplete) {
  TempDir dir;
  const fdk_volume v = small_volume();
  const auto data = ramp(60);
  {  // abandoned half way
    auto w = make_metaimage_writer(dir / "a.mha", v, {});
    w->write_planes(0, 1, data.data());
  }
  {  // commit before the last plane
    auto w = make_metaimage_writer(dir / "b.mha", v, {});
    w->write_planes(0, 1, data.data());
    EXPECT_THROW(w->commit(), Error);
  }
  {  // disk full
    WriteFaultInjection fault;
    fault.fail_after_bytes = 700;
    VolumeWriterOptions o;
    o.fault = &fault;
    auto w = make_metaimage_writer(dir / "c.mha", v, o);
    try {
      w->write_planes(0, 3, data.data());
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutput);
      EXPECT_NE(std::string(e.what()).find("c.mha"), std::string::npos);
    }
  }
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).empty());
  EXPECT_THROW(make_metaimage_writer(dir / "nofolder/x.mha", v, {}), Error);
}
