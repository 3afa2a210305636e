// A deliberately leaky shared library for packaging_exported_symbols_selftest:
// one proper C ABI symbol and one C++ helper that a version script would have
// hidden. The export check must fail on it.
#include <string>

extern "C" __attribute__((visibility("default"))) int fdk_create(void) { return 0; }

namespace helper {
__attribute__((visibility("default"))) std::string leaked_helper(int n) {
  return std::to_string(n);
}
}  // namespace helper
