// fdk_config_init writes no more of the caller's struct than the caller's
// header declared (0.7): the macro passes sizeof(fdk_config) of the header
// compiled against; the bare symbol, which programs built against 0.6 or
// older headers call, writes the 0.5/0.6 layout. Until 0.7 it wrote the
// library's whole struct, 8 bytes past a 0.6 program's.
#include <fdk/fdk.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace {

constexpr unsigned char kGuard = 0xA5;
// The 0.5/0.6 layout: everything before estimate_geometry.
constexpr size_t kSize06 = offsetof(fdk_config, estimate_geometry);

// A buffer of the current struct and a guard tail, all guard bytes.
struct Guarded {
  std::vector<unsigned char> bytes = std::vector<unsigned char>(sizeof(fdk_config) + 64, kGuard);
  fdk_config* config() { return reinterpret_cast<fdk_config*>(bytes.data()); }
  // Bytes from `from` on that are still the guard.
  bool untouched_from(size_t from) const {
    for (size_t i = from; i < bytes.size(); ++i)
      if (bytes[i] != kGuard) return false;
    return true;
  }
};

TEST(ConfigInit, TheMacroWritesThisHeadersStruct) {
  Guarded g;
  EXPECT_EQ(fdk_config_init(g.config()), g.config());
  EXPECT_EQ(g.config()->struct_size, sizeof(fdk_config));
  EXPECT_EQ(g.config()->estimate_geometry, 0);
  EXPECT_EQ(g.config()->cutoff, 1.0);
  EXPECT_TRUE(g.untouched_from(sizeof(fdk_config)));
}

// What a program built against the 0.6 header runs: the symbol itself.
TEST(ConfigInit, TheSymbolWritesOnlyThe06Layout) {
  Guarded g;
  fdk_config* (*symbol)(fdk_config*) = &(fdk_config_init);
  EXPECT_EQ(symbol(g.config()), g.config());
  EXPECT_EQ(g.config()->struct_size, kSize06);
  EXPECT_EQ(g.config()->window, FDK_WINDOW_RAM_LAK);
  EXPECT_EQ(g.config()->cutoff, 1.0);
  EXPECT_EQ(g.config()->precision, FDK_PRECISION_FLOAT32);
  EXPECT_TRUE(g.untouched_from(kSize06)) << "fdk_config_init wrote past a 0.6 program's struct";
}

TEST(ConfigInit, EveryOlderLayoutWritesItsOwnBytes) {
  for (size_t size : {offsetof(fdk_config, outside_fov), offsetof(fdk_config, store_policy),
                      offsetof(fdk_config, hann_cutoff_v), kSize06, offsetof(fdk_config, preview)}) {
    Guarded g;
    EXPECT_EQ(fdk_config_init_sized(g.config(), size), g.config()) << size;
    EXPECT_EQ(g.config()->struct_size, size);
    EXPECT_EQ(g.config()->cutoff, 1.0);
    EXPECT_TRUE(g.untouched_from(size)) << size;
  }
}

TEST(ConfigInit, AnUnknownSizeWritesNothing) {
  for (size_t size : {size_t{0}, size_t{4}, kSize06 + 2, offsetof(fdk_config, preview) + 4, sizeof(fdk_config) + 8,
                      size_t{1} << 40}) {
    Guarded g;
    EXPECT_EQ(fdk_config_init_sized(g.config(), size), nullptr) << size;
    EXPECT_TRUE(g.untouched_from(0)) << size;
  }
  EXPECT_EQ(fdk_config_init_sized(nullptr, sizeof(fdk_config)), nullptr);
  EXPECT_EQ(fdk_config_init(nullptr), nullptr);
}

// A 0.6 program's config, made by the symbol, creates a reconstruction
// (estimate_geometry absent: off).
TEST(ConfigInit, A06ProgramsConfigStillCreates) {
  Guarded g;
  fdk_config* c = (fdk_config_init)(g.config());
  c->volume.size[0] = c->volume.size[1] = c->volume.size[2] = 8;
  for (double& s : c->volume.spacing) s = 1.0;
  for (int k = 0; k < 3; ++k) c->volume.origin[k] = -3.5;
  c->detector.size[0] = c->detector.size[1] = 16;
  c->detector.spacing[0] = c->detector.spacing[1] = 1.0;
  c->detector.origin[0] = c->detector.origin[1] = -7.5;
  c->scan.num_views = 8;
  c->scan.uniform.sid = 100;
  c->scan.uniform.sdd = 150;
  fdk_context* ctx = nullptr;
  EXPECT_EQ(fdk_create(c, &ctx), FDK_OK) << fdk_last_create_error();
  fdk_destroy(ctx);
}

}  // namespace
