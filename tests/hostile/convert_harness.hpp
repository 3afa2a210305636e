// fdk-convert run end to end by the hostile suites: a scratch workspace
// holding a small scan (float32 line-integral TIFFs, its INI, dark and
// flat fields) and a bounded run of the tool.
#pragma once

#include <fdk/adapters/tiff_io.hpp>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "small_scan.hpp"

namespace convert_harness {

namespace fs = std::filesystem;

inline const std::string kConvert = FDK_CONVERT_PATH;


inline std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A scratch folder with the small scan as float32 line-integral TIFFs
// (proj/p00.tif ...), its INI description, dark and flat fields.
class Workspace {
 public:
  Workspace() {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = (fs::temp_directory_path() / ("fdk-hostile-convert-" + std::to_string(::getpid()) + "-" +
                                          identifier(info ? info->name() : "x")))
                .string();
    fs::remove_all(root_);
    fs::create_directories(root_ + "/proj");
    const fdk_test::SmallScan scan(16, 16, 24);
    for (int v = 0; v < scan.views(); ++v) {
      char name[32];
      std::snprintf(name, sizeof name, "/proj/p%02d.tif", v);
      fdk::adapters::write_tiff_float(root_ + name, 24, 24, {scan.pixels(v)});
    }
    write_file(root_ + "/scan.ini", "[scan]\nsid = 500\nsdd = 750\nviews = 16\n[detector]\npixel_size = 5\n");
    const std::vector<float> dark(24 * 24, 100.0f), flat(24 * 24, 30000.0f);
    fdk::adapters::write_tiff_float(root_ + "/dark.tif", 24, 24, {dark.data()});
    fdk::adapters::write_tiff_float(root_ + "/flat.tif", 24, 24, {flat.data()});
  }
  ~Workspace() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string operator/(const std::string& name) const { return root_ + "/" + name; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

struct Result {
  int code;
  std::string err;
};

// Runs fdk-convert with `args` (a shell fragment), at most 30 s.
inline Result run(const Workspace& w, const std::string& args) {
  const std::string err = w / "stderr.txt";
  const std::string cmd = "timeout 30 " + kConvert + " " + args + " > " + (w / "stdout.txt") + " 2> " + err + " < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r{WIFEXITED(status) ? WEXITSTATUS(status) : 128, read_file(err)};
  fs::remove(err);
  fs::remove(w / "stdout.txt");
  return r;
}

// The arguments of a good run: the projections, an output folder, the INI
// and a 16^3 volume.
inline std::string good_args(const Workspace& w, const std::string& proj = "") {
  return (proj.empty() ? w / "proj" : proj) + " " + (w / "out") + " --geometry " + (w / "scan.ini") +
         " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
}

}  // namespace convert_harness
