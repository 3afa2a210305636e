// The output folder of one run (see result_folder.hpp).
#include "result_folder.hpp"

#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/fdk.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

namespace ad = fdk::adapters;
namespace fs = std::filesystem;

namespace fdk_convert {

const char* const kResultManifest = ".fdk-convert-result";

namespace {

constexpr const char* kStagingPrefix = ".fdk-convert-staging-";

bool starts_with(const std::string& s, const std::string& head) {
  return s.size() >= head.size() && s.compare(0, head.size(), head) == 0;
}

bool has_suffix(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Named as fdk-convert names its outputs (any --format; the slices of this
// --prefix, whatever their count).
bool named_as_a_result(const std::string& name, const std::string& prefix, bool mhd_present) {
  static const char* const kSingle[] = {"volume.tif", "volume.mha", "volume.mhd", "volume.nrrd",
                                        "preview.png", "preview.pgm"};
  for (const char* s : kSingle) {
    if (name == s) return true;
  }
  if (name == "volume.raw") return mhd_present;  // a .raw of its own is the user's
  const std::string head = prefix + "_";
  if (starts_with(name, head) && has_suffix(name, ".tif") && name.size() > head.size() + 4) {
    return all_digits(name.substr(head.size(), name.size() - head.size() - 4));
  }
  return false;
}

// The plain names the manifest of `folder` lists (none without one).
std::vector<std::string> manifest_names(const std::string& folder) {
  std::vector<std::string> names;
  const std::string path = ad::join_path(folder, kResultManifest);
  if (!ad::is_regular_file(path)) return names;
  std::string text;
  try {
    text = ad::read_text_file(path, 16u << 20);
  } catch (...) {
    return names;  // unreadable: the names alone find the earlier result
  }
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    // Only plain names inside the folder: a manifest is never a way to
    // reach another file.
    if (line.empty() || line[0] == '#' || line == "." || line == ".." ||
        line.find_first_of("/\\") != std::string::npos || line.find('\0') != std::string::npos ||
        line == kResultManifest) {
      continue;
    }
    names.push_back(line);
  }
  return names;
}

std::string unique_staging_name() {
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  char b[64];
  std::snprintf(b, sizeof b, "%s%ld-%llx", kStagingPrefix, static_cast<long>(::getpid()),
                static_cast<unsigned long long>(ticks) & 0xffffffffffull);
  return b;
}

std::string list_for_message(const std::vector<std::string>& paths) {
  if (paths.empty()) return "";
  if (paths.size() == 1) return "'" + paths.front() + "'";
  return "'" + paths.front() + "' .. '" + paths.back() + "' (" + std::to_string(paths.size()) + " files)";
}

// The staging folder of the live ResultFolder and its output folder (one
// per process), for with_final_names.
std::mutex g_names_mutex;
std::string g_staging, g_folder;

}  // namespace

std::string with_final_names(const std::string& text) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  if (g_staging.empty()) return text;
  std::string out = text;
  for (size_t at = out.find(g_staging); at != std::string::npos; at = out.find(g_staging, at + g_folder.size())) {
    out.replace(at, g_staging.size(), g_folder);
  }
  return out;
}

void note_staging(const std::string& staging, const std::string& folder) {
  std::lock_guard<std::mutex> lock(g_names_mutex);
  g_staging = staging;
  g_folder = folder;
}

std::string removed_message(const std::string& folder, const std::vector<std::string>& removed) {
  return "replaced the earlier result in '" + folder + "': removed " + std::to_string(removed.size()) +
         " of its files that this run does not write (" + list_for_message(removed) + ")";
}

std::vector<std::string> earlier_result_files(const std::string& folder, const std::string& prefix,
                                              const std::vector<std::string>& names) {
  const std::set<std::string> ours(names.begin(), names.end());
  std::set<std::string> found;
  std::error_code ec;
  const bool mhd_present = ad::is_regular_file(ad::join_path(folder, "volume.mhd"));
  for (const std::string& n : manifest_names(folder)) {
    if (!ours.count(n) && fs::exists(fs::symlink_status(ad::join_path(folder, n), ec))) found.insert(n);
  }
  fs::directory_iterator it(folder, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (ours.count(name)) continue;
    const bool leftover_part =
        has_suffix(name, ".part") && (named_as_a_result(name.substr(0, name.size() - 5), prefix, true) ||
                                     name == ".fdk-convert-probe.part");
    if (named_as_a_result(name, prefix, mhd_present) || leftover_part || starts_with(name, kStagingPrefix)) {
      found.insert(name);
    }
  }
  std::vector<std::string> paths;
  for (const std::string& n : found) paths.push_back(ad::join_path(folder, n));
  std::sort(paths.begin(), paths.end(), ad::natural_less);
  return paths;
}

ResultFolder::ResultFolder(const Options& o, std::vector<std::string> names, const InputSet& inputs)
    : folder_(o.output), names_(std::move(names)) {
  // 1. No output lands on an input, whatever --force says.
  if (const InputSet::Clash c = inputs.first_clash(folder_, names_); !c.input.empty()) {
    usage_error("the output '" + c.path + "' would " + (c.joins ? "join " : "replace ") + c.input +
                ": write the result to another folder (--force never overwrites an input)");
  }
  ad::make_directories(folder_);
  // 2. One result per folder: an earlier one is replaced whole (--force) or
  // not at all.
  earlier_ = earlier_result_files(folder_, o.prefix, names_);
  std::vector<std::string> existing;
  for (const std::string& n : names_) {
    const std::string path = ad::join_path(folder_, n);
    std::error_code ec;
    if (fs::exists(fs::symlink_status(path, ec))) existing.push_back(path);
  }
  {
    std::vector<std::string> earlier_names;
    for (const std::string& path : earlier_) earlier_names.push_back(ad::base_name(path));
    if (const InputSet::Clash c = inputs.first_clash(folder_, earlier_names); !c.input.empty()) {
      usage_error("'" + folder_ + "' holds an earlier result whose file '" + c.path + "' is " + c.input +
                  " of this run: write the result to another folder");
    }
  }
  if (!o.force) {
    std::vector<std::string> results = existing;
    for (const std::string& p : earlier_) {
      const std::string name = ad::base_name(p);
      if (!has_suffix(name, ".part") && !starts_with(name, kStagingPrefix)) results.push_back(p);
    }
    if (!results.empty()) {
      std::sort(results.begin(), results.end(), ad::natural_less);
      usage_error("'" + folder_ + "' holds an earlier result (" + list_for_message(results) +
                  "); use --force to replace it (its files that this run does not write are then removed)");
    }
  }
  // 3. Everything is written where it does not look like a result.
  staging_ = ad::join_path(folder_, unique_staging_name());
  std::error_code ec;
  if (!fs::create_directory(staging_, ec)) {
    throw Failure{kExitOutput, "cannot create files in '" + folder_ + "': " +
                                   (ec ? ec.message() : std::string("a staging folder of that name exists"))};
  }
  note_staging(staging_, folder_);
}

ResultFolder::~ResultFolder() {
  if (!published_) {
    std::error_code ec;
    fs::remove_all(staging_, ec);
  }
  // The names stay for the message of a failure that unwinds through here.
}

std::vector<std::string> ResultFolder::publish() {
  std::error_code ec;
  const std::string manifest = ad::join_path(folder_, kResultManifest);
  // The old manifest goes first: from here on the folder no longer holds
  // the result it described.
  fs::remove(manifest, ec);
  for (const std::string& path : earlier_) {
    fs::remove_all(path, ec);
    if (ec && fs::exists(fs::symlink_status(path))) {
      throw Failure{kExitOutput, "cannot remove '" + path + "' of the earlier result in '" + folder_ +
                                     "': " + ec.message()};
    }
  }
  std::vector<std::string> moved;
  for (const std::string& n : names_) {
    const std::string from = ad::join_path(staging_, n), to = ad::join_path(folder_, n);
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      for (const std::string& m : moved) std::remove(m.c_str());  // nothing that looks complete
      throw Failure{kExitOutput, "cannot move '" + from + "' to '" + to + "': " + why};
    }
    moved.push_back(to);
  }
  try {
    ad::OutputFile f(manifest);
    std::string text = "# fdk-convert " + std::string(fdk_version_string()) +
                       ": the files of one result, written together\n";
    for (const std::string& n : names_) text += n + "\n";
    f.write(text.data(), text.size());
    f.commit();
  } catch (...) {
    for (const std::string& m : moved) std::remove(m.c_str());
    throw;
  }
  published_ = true;
  fs::remove_all(staging_, ec);
  return earlier_;
}

}  // namespace fdk_convert
