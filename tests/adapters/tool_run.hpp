// Running a command-line tool from a test: its exit code, stdout and
// stderr (the tools' end-to-end tests share it).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "test_support.hpp"

namespace fdk_adapter_test {

struct ToolResult {
  int code;         // the exit status; 128 when killed by a signal
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `command` through the shell, its output captured in files under
// `log_dir` (removed afterwards).
inline ToolResult run_tool(const std::string& command, const std::string& log_dir) {
  const std::string out = log_dir + "/stdout.txt", err = log_dir + "/stderr.txt";
  const int status = std::system((command + " > " + out + " 2> " + err).c_str());
  ToolResult r{WIFEXITED(status) ? WEXITSTATUS(status) : 128, read_all(out), read_all(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

}  // namespace fdk_adapter_test
