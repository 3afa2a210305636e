// fdk/adapters/files.hpp — file names and file output shared by the adapters:
// natural sort order, glob patterns, folder listing, and an output file that
// only appears under its final name once it is complete.
#ifndef FDK_ADAPTERS_FILES_HPP
#define FDK_ADAPTERS_FILES_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace fdk {
namespace adapters {

// Natural order: runs of digits compare as numbers ("p2.tif" < "p10.tif"),
// everything else byte by byte ignoring ASCII case; names that compare equal
// that way (p01 and p1, P1 and p1) fall back to plain byte order so the
// order is total.
bool natural_less(const std::string& a, const std::string& b);

// Shell-style pattern match of a file name: '*' any run, '?' one character,
// '[abc]', '[a-z]', '[!a]' a set; no special meaning for '/'. Several
// patterns can be given separated by ';' ("*.tif;*.tiff"): any one matching
// is a match. `case_insensitive` folds ASCII letters.
bool glob_match(const std::string& pattern, const std::string& name,
                bool case_insensitive = true);

// The entries of `folder` of any type (not recursing, not the hidden ones
// whose name starts with '.') whose names match `pattern` (empty = all), in
// natural order, as full paths. Throws Error(kInput) when the folder does not
// exist or cannot be read.
std::vector<std::string> list_entries(const std::string& folder,
                                      const std::string& pattern);
// list_entries, each checked by require_readable_file: a matching entry
// that is a dangling link, a folder, a pipe, empty or unreadable is an
// error, never skipped (a skipped projection would silently spread the
// scan's angles over the others).
std::vector<std::string> list_files(const std::string& folder,
                                    const std::string& pattern);
// Throws Error(kInput) naming `path` (and the `pattern` it matched, if not
// empty) and the reason unless it is a non-empty regular file (after
// symbolic links) that this process can open for reading.
void require_readable_file(const std::string& path, const std::string& pattern = "");

bool is_directory(const std::string& path);
bool is_regular_file(const std::string& path);
// The last component of a path ("a/b/c.tif" -> "c.tif").
std::string base_name(const std::string& path);
// Joins with one '/'.
std::string join_path(const std::string& folder, const std::string& name);
// mkdir -p; throws Error(kOutput) naming the path and the reason.
void make_directories(const std::string& path);
// Reads a whole (small) text file; throws Error(kInput) naming it.
std::string read_text_file(const std::string& path, size_t max_bytes = 64u << 20);

// Test hook for the failure paths of every writer: after this many bytes
// have been written through OutputFile objects that carry it, writes fail as
// on a full disk (ENOSPC). UINT64_MAX (the default) = never.
struct WriteFaultInjection {
  uint64_t fail_after_bytes = UINT64_MAX;
  uint64_t written = 0;  // shared count across the files of one writer
};

// A file written under a temporary name (final name + ".part") and renamed
// to its final name by commit(); destroyed or aborted without commit, it
// removes the temporary file. Errors throw Error(kOutput) naming the final
// path and the system's reason ("No space left on device").
class OutputFile {
 public:
  explicit OutputFile(std::string final_path,
                      WriteFaultInjection* fault = nullptr);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const void* data, size_t bytes);
  void seek(uint64_t offset);
  uint64_t tell() const { return position_; }
  uint64_t size() const { return size_; }
  // Reads back bytes already written (libtiff needs it when it rewrites
  // directories); returns the count read.
  size_t read(void* data, size_t bytes);
  // Flushes, closes, and (unless defer_rename) renames to the final name.
  // With defer_rename the file stays under its temporary name until
  // rename_to_final(); several files can so be made visible together.
  void commit(bool defer_rename = false);
  void rename_to_final();
  // Closes and removes the temporary (or, after commit, nothing). noexcept.
  void discard() noexcept;

  const std::string& final_path() const { return final_path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  std::string final_path_, temp_path_;
  std::FILE* file_ = nullptr;
  WriteFaultInjection* fault_;
  uint64_t position_ = 0, size_ = 0;
  bool closed_ = false, renamed_ = false;
};

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_FILES_HPP
