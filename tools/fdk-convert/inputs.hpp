// What fdk-convert reads, as the file system knows it: every file it was
// given (projections, dark, flat, bad-pixel map, geometry, --like, and the
// data files of detached headers) and every folder it lists with the
// pattern it lists it by. An output may land on none of them.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "options.hpp"

namespace fdk_convert {

class InputSet {
 public:
  // Resolves the inputs the options name. Files that do not exist are kept
  // by their resolved path (their readers report them later).
  static InputSet of(const Options& o);

  // What writing a file would do to an input: replace it (the same file
  // by name or by device and inode, after links) or join it (a file of a
  // folder read with a pattern the name matches).
  struct Clash {
    std::string path;   // the output
    std::string input;  // "the projections 'scan/p00.tif'"; empty: none
    bool joins = false;
  };
  // The first of `names` (plain file names in `folder`) that would replace
  // or join an input; input empty when none. The folder is resolved once,
  // so a stack of 65536 slice names costs a stat each.
  Clash first_clash(const std::string& folder, const std::vector<std::string>& names) const;

  void add_file(const std::string& path, const std::string& role);
  void add_folder(const std::string& folder, const std::string& pattern, const std::string& role);

 private:
  struct Identity {
    std::string canonical;  // weakly canonical: links and dot-dot resolved
    bool exists = false;
    dev_t device = 0;
    ino_t inode = 0;
  };
  static Identity identify(const std::string& path);
  static bool same(const Identity& a, const Identity& b);

  struct File {
    std::string path, role;
    Identity id;
  };
  struct Folder {
    std::string path, pattern, role;
    Identity id;
  };
  std::vector<File> files_;
  std::vector<Folder> folders_;
};

}  // namespace fdk_convert
