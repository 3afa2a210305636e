// The JSON spelling of fdk-bench's report (--json): strings and numbers
// written the same way wherever the report writes them.
#pragma once
#include <sstream>
#include <string>
#include <vector>

namespace fdk_bench {

std::string json_escape(const std::string& text);
// "%.9g", or null when not finite.
std::string json_number(double value);

template <typename T>
void json_array(std::ostringstream& j, const std::vector<T>& values) {
  j << "[";
  for (size_t i = 0; i < values.size(); ++i) j << (i ? ", " : "") << json_number(values[i]);
  j << "]";
}

}  // namespace fdk_bench
