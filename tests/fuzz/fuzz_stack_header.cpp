// libFuzzer target: the MetaImage and NRRD header parsers (the first byte
// picks which: 'N' NRRD, else MetaImage). Failures must be
// fdk::adapters::Error; what parses must describe a stack within the limits.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/image_stack.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdk::adapters;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const char* name = size > 0 && data[0] == 'N' ? "fuzz/stack.nrrd" : "fuzz/stack.mha";
  StackHeader h;
  try {
    h = parse_stack_header(text, name);
  } catch (const Error&) {
    return 0;
  }
  if (h.dims < 2 || h.dims > 3) __builtin_trap();
  for (int64_t s : h.size) {
    if (s < 1) __builtin_trap();
  }
  if (h.frame_samples() > kMaxStackFramePixels || static_cast<uint64_t>(h.size[2]) > kMaxStackFrames) {
    __builtin_trap();
  }
  if (h.data_path.empty()) __builtin_trap();
  return 0;
}
