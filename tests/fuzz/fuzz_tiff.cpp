// libFuzzer target: the TIFF reader on arbitrary bytes. Every failure must
// be an fdk::adapters::Error (anything else, a crash or a sanitizer report
// is a bug); nothing may be printed.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/tiff_io.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdk::adapters;
  try {
    TiffReader reader(data, size, "fuzz.tif", /*max_pixels=*/uint64_t(1) << 22);
    const int pages = reader.page_count();
    for (int p = 0; p < pages && p < 16; ++p) {
      try {
        TiffPageInfo info;
        const std::vector<float> pixels = reader.read_page(p, &info);
        if (pixels.size() != static_cast<size_t>(info.width) * static_cast<size_t>(info.height)) {
          __builtin_trap();
        }
      } catch (const Error&) {
        // A bad page; the next may still be readable.
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
