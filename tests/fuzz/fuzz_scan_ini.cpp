// libFuzzer target: the INI scan description parser. Failures must be
// fdk::adapters::Error; what parses must format and parse back identically.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/geometry_io.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fdk::adapters;
  ScanDescription d;
  try {
    d = parse_scan_ini(std::string(reinterpret_cast<const char*>(data), size), "fuzz.ini");
  } catch (const Error&) {
    return 0;
  }
  const std::string text = format_scan_ini(d);
  const ScanDescription again = parse_scan_ini(text, "again.ini");  // must not throw
  if (format_scan_ini(again) != text) __builtin_trap();
  return 0;
}
