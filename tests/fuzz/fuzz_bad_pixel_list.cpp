// libFuzzer target: the bad-pixel list reader (fdk-convert --bad-pixels
// FILE.txt/.csv/.lst). The first two bytes choose the frame size (1..256 per
// side) so that coordinates land both inside and outside it. Failures must
// be fdk::adapters::Error; the map must have the frame's size and hold only
// 0 and 1.
#include <fdk/adapters/correction.hpp>
#include <fdk/adapters/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdk::adapters;
  if (size < 2) return 0;
  const int width = 1 + data[0], height = 1 + data[1];
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  std::vector<uint8_t> map;
  try {
    map = parse_bad_pixel_list(text, width, height, "fuzz.txt");
  } catch (const Error&) {
    return 0;
  }
  if (map.size() != static_cast<size_t>(width) * static_cast<size_t>(height)) __builtin_trap();
  for (uint8_t m : map) {
    if (m > 1) __builtin_trap();
  }
  return 0;
}
