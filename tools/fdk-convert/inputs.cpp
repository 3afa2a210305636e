// What fdk-convert reads (see inputs.hpp).
#include "inputs.hpp"

#include <fdk/adapters/files.hpp>
#include <fdk/adapters/image_stack.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "sources.hpp"

namespace ad = fdk::adapters;
namespace fs = std::filesystem;

namespace fdk_convert {
namespace {

bool is_hdf5_path(const std::string& p) {
  return ends_with(p, ".h5") || ends_with(p, ".hdf5") || ends_with(p, ".hdf") || ends_with(p, ".nxs");
}


}  // namespace

InputSet::Identity InputSet::identify(const std::string& path) {
  Identity id;
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, ec), ec);
  id.canonical = ec ? path : canonical.lexically_normal().string();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  return id;
}

bool InputSet::same(const Identity& a, const Identity& b) {
  // Device and inode also catch a second name for the same file on a
  // case-insensitive or bind-mounted file system.
  // (A file system without inode numbers reports 0: the paths decide.)
  if (a.exists && b.exists && a.inode != 0 && b.inode != 0) return a.device == b.device && a.inode == b.inode;
  return a.canonical == b.canonical;
}

void InputSet::add_file(const std::string& path, const std::string& role) {
  if (path.empty()) return;
  files_.push_back({path, role, identify(path)});
}

void InputSet::add_folder(const std::string& folder, const std::string& pattern, const std::string& role) {
  folders_.push_back({folder, pattern, role, identify(folder)});
}

InputSet InputSet::of(const Options& o) {
  InputSet set;
  // A file, a folder read by `pattern`, or a header with its data file.
  const auto add_any = [&set](const std::string& path, const std::string& pattern, const std::string& role) {
    if (path.empty()) return;
    if (ad::is_directory(path)) {
      set.add_folder(path, pattern, role);
      return;
    }
    set.add_file(path, role);
    if (ad::is_stack_path(path)) {
      try {
        const ad::StackHeader h = ad::read_stack_header(path);
        if (!h.data_path.empty() && h.data_path != h.header_path) set.add_file(h.data_path, role + " (data)");
      } catch (...) {
        // An unreadable header is the reader's to report, as unusable input.
      }
    }
  };
  if (o.raw.given || is_hdf5_path(o.projections)) {
    set.add_file(o.projections, "projections");
  } else {
    add_any(o.projections, o.folder.pattern, "projections");
  }
  const std::string calibration = o.folder.calibration_pattern.empty() ? o.folder.pattern
                                                                       : o.folder.calibration_pattern;
  add_any(o.folder.dark, calibration, "dark field");
  add_any(o.folder.flat, calibration, "flat field");
  add_any(o.folder.bad_pixels, "", "bad-pixel map");
  for (const std::string& g : o.geometry_files) set.add_file(g, "geometry file");
  add_any(o.like, "", "--like volume");
  return set;
}

InputSet::Clash InputSet::first_clash(const std::string& folder, const std::vector<std::string>& names) const {
  const Identity parent = identify(folder);
  for (const std::string& name : names) {
    Clash c;
    c.path = ad::join_path(folder, name);
    Identity out;
    out.canonical = ad::join_path(parent.canonical, name);
    struct stat st;
    if (::stat(c.path.c_str(), &st) == 0) {
      out.exists = true;
      out.device = st.st_dev;
      out.inode = st.st_ino;
    }
    for (const File& f : files_) {
      if (same(out, f.id)) {
        c.input = "the " + f.role + " '" + f.path + "'";
        return c;
      }
    }
    if (name.empty() || name[0] == '.') continue;  // folders are listed without hidden names
    for (const Folder& f : folders_) {
      if (same(parent, f.id) && ad::glob_match(f.pattern, name)) {
        c.input = "the " + f.role + " read from '" + f.path + "'" +
                  (f.pattern.empty() ? "" : " by the pattern '" + f.pattern + "'");
        c.joins = true;
        return c;
      }
    }
  }
  return {};
}

}  // namespace fdk_convert
