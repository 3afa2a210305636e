// What the command-line tools print for a failed library call.
#pragma once

#include <fdk/fdk.h>

#include <string>

namespace fdk_tools {

// "STATUS_NAME: message", without repeating the name when the library's
// message already starts with it.
inline std::string status_text(fdk_status status, const char* message) {
  const std::string name = fdk_status_string(status);
  const std::string text = message ? message : "";
  if (text.empty()) return name;
  if (text.compare(0, name.size(), name) == 0) return text;
  return name + ": " + text;
}

}  // namespace fdk_tools
