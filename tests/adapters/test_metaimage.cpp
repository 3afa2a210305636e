// The MetaImage and NRRD writers: headers, (x, y, z) layout from (x, z, y)
// slabs, .mhd + .raw pairs, uint16 window, failure paths.
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

TEST(MetaImage, HeaderIsRtkfdksXyzWithIdentityDirection) {
  const std::string h = metaimage_header(small_volume(), {});
  EXPECT_NE(h.find("NDims = 3\n"), std::string::npos);
  EXPECT_NE(h.find("DimSize = 5 3 4\n"), std::string::npos) << h;  // x, y, z
  EXPECT_NE(h.find("ElementSpacing = 0.5 0.75 1.25\n"), std::string::npos) << h;
  EXPECT_NE(h.find("Offset = -1 -2 -3\n"), std::string::npos) << h;
  EXPECT_NE(h.find("TransformMatrix = 1 0 0 0 1 0 0 0 1\n"), std::string::npos);
  EXPECT_NE(h.find("ElementType = MET_FLOAT\n"), std::string::npos);
  EXPECT_EQ(h.substr(h.size() - 24), "ElementDataFile = LOCAL\n");
}

namespace {

// The volume of ramp() in the library's order [y][z][x], rearranged as
// [z][y][x]: what an (x, y, z) file holds.
std::vector<float> as_xyz(const std::vector<float>& yzx, int nx, int ny, int nz) {
  std::vector<float> out(yzx.size());
  for (int y = 0; y < ny; ++y)
    for (int z = 0; z < nz; ++z)
      for (int x = 0; x < nx; ++x)
        out[(static_cast<size_t>(z) * ny + y) * nx + x] = yzx[(static_cast<size_t>(y) * nz + z) * nx + x];
  return out;
}

}  // namespace

TEST(MetaImage, WritesSlabsInXyzOrderAndCommits) {
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
  EXPECT_EQ(file.compare(0, header.size(), header), 0);
  const auto expect = as_xyz(data, 5, 3, 4);
  EXPECT_EQ(std::memcmp(file.data() + header.size(), expect.data(), expect.size() * 4), 0);
}

TEST(MetaImage, MhdHeaderAndRawPair) {
  TempDir dir;
  const fdk_volume v = small_volume();
  const auto data = ramp(60);
  auto w = make_metaimage_writer(dir / "vol.mhd", v, {});
  for (int y = 0; y < 3; ++y) w->write_planes(y, y + 1, data.data() + y * 20);  // one plane a slab
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).size() == 2);          // both .part
  w->commit();
  EXPECT_EQ(w->outputs().size(), 2u);
  const std::string header = fdk_adapter_test::read_all(dir / "vol.mhd");
  EXPECT_EQ(header, metaimage_header(v, {}, "vol.raw"));
  EXPECT_NE(header.find("ElementDataFile = vol.raw\n"), std::string::npos);
  const std::string raw = fdk_adapter_test::read_all(dir / "vol.raw");
  const auto expect = as_xyz(data, 5, 3, 4);
  ASSERT_EQ(raw.size(), expect.size() * 4);
  EXPECT_EQ(std::memcmp(raw.data(), expect.data(), raw.size()), 0);
}

TEST(Nrrd, HeaderAndXyzData) {
  TempDir dir;
  const fdk_volume v = small_volume();
  const std::string h = nrrd_header(v, {});
  EXPECT_EQ(h.rfind("NRRD0004\n", 0), 0u);
  for (const char* line :
       {"type: float\n", "dimension: 3\n", "space: left-posterior-superior\n", "sizes: 5 3 4\n",
        "space directions: (0.5,0,0) (0,0.75,0) (0,0,1.25)\n", "kinds: domain domain domain\n",
        "encoding: raw\n", "space origin: (-1,-2,-3)\n"}) {
    EXPECT_NE(h.find(line), std::string::npos) << line << h;
  }
  EXPECT_EQ(h.substr(h.size() - 2), "\n\n");  // a blank line ends the header
  const auto data = ramp(60);
  VolumeWriterOptions o;
  o.type = VoxelType::kUInt16;
  o.window_lo = 0;
  o.window_hi = 65535 * 0.5;  // value v -> 2 v
  auto w = make_nrrd_writer(dir / "v.nrrd", v, o);
  w->write_planes(0, 3, data.data());
  w->commit();
  const std::string file = fdk_adapter_test::read_all(dir / "v.nrrd");
  const std::string hu = nrrd_header(v, o);
  EXPECT_NE(hu.find("type: uint16\n"), std::string::npos);
  ASSERT_EQ(file.size(), hu.size() + 60 * 2);
  const auto expect = as_xyz(data, 5, 3, 4);
  std::vector<uint16_t> back(60);
  std::memcpy(back.data(), file.data() + hu.size(), 120);
  for (size_t i = 0; i < 60; ++i) EXPECT_EQ(back[i], static_cast<uint16_t>(2 * expect[i])) << i;
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
    fault.fail_after_bytes = metaimage_header(v, {}).size() + 100;
    VolumeWriterOptions o;
    o.fault = &fault;
    auto w = make_metaimage_writer(dir / "c.mha", v, o);
    try {
      w->write_planes(0, 3, data.data());
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutput);
      EXPECT_NE(std::string(e.what()).find("c.mha"), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos);
    }
  }
  {  // disk full in the .raw of a pair, and abandoned pairs and NRRDs
    WriteFaultInjection fault;
    fault.fail_after_bytes = metaimage_header(v, {}, "d.raw").size() + 100;
    VolumeWriterOptions o;
    o.fault = &fault;
    auto w = make_metaimage_writer(dir / "d.mhd", v, o);
    EXPECT_THROW(w->write_planes(0, 3, data.data()), Error);
    auto n = make_nrrd_writer(dir / "e.nrrd", v, {});
    n->write_planes(0, 2, data.data());
    EXPECT_THROW(n->commit(), Error);
  }
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).empty());
  EXPECT_THROW(make_metaimage_writer(dir / "nofolder/x.mha", v, {}), Error);
}
