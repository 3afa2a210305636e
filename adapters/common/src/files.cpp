// File names and file output for the adapters (see fdk/adapters/files.hpp).
#include "fdk/adapters/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "fdk/adapters/error.hpp"

namespace fdk {
namespace adapters {
namespace fs = std::filesystem;

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

char fold(char c, bool ci) {
  if (ci && c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  return c;
}

// Matches one pattern (no ';') against name[ni..] from pattern[pi..];
// iterative with single-star backtracking (linear-ish, no recursion, so a
// hostile pattern cannot blow the stack).
bool match_one(const std::string& p, const std::string& n, bool ci) {
  size_t pi = 0, ni = 0;
  size_t star_p = std::string::npos, star_n = 0;
  while (ni < n.size()) {
    if (pi < p.size()) {
      const char pc = p[pi];
      if (pc == '*') {
        star_p = pi++;
        star_n = ni;
        continue;
      }
      if (pc == '?') {
        ++pi;
        ++ni;
        continue;
      }
      if (pc == '[') {
        // A set; an unterminated '[' is a literal.
        size_t q = pi + 1;
        bool negate = false;
        if (q < p.size() && (p[q] == '!' || p[q] == '^')) {
          negate = true;
          ++q;
        }
        const size_t set_begin = q;
        size_t close = std::string::npos;
        for (size_t k = set_begin + (set_begin < p.size() && p[set_begin] == ']' ? 1 : 0);
             k < p.size(); ++k) {
          if (p[k] == ']') {
            close = k;
            break;
          }
        }
        if (close != std::string::npos) {
          const char c = fold(n[ni], ci);
          bool in = false;
          for (size_t k = set_begin; k < close; ++k) {
            if (k + 2 < close && p[k + 1] == '-') {
              const char lo = fold(p[k], ci), hi = fold(p[k + 2], ci);
              if (c >= lo && c <= hi) in = true;
              k += 2;
            } else if (fold(p[k], ci) == c) {
              in = true;
            }
          }
          if (in != negate) {
            pi = close + 1;
            ++ni;
            continue;
          }
        } else if (fold(pc, ci) == fold(n[ni], ci)) {
          ++pi;
          ++ni;
          continue;
        }
      } else if (fold(pc, ci) == fold(n[ni], ci)) {
        ++pi;
        ++ni;
        continue;
      }
    }
    if (star_p == std::string::npos) return false;
    pi = star_p + 1;
    ni = ++star_n;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

std::string system_reason(int err) {
  return err ? std::strerror(err) : "unknown error";
}

}  // namespace

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      size_t i0 = i, j0 = j;
      while (i0 < a.size() && a[i0] == '0') ++i0;
      while (j0 < b.size() && b[j0] == '0') ++j0;
      size_t i1 = i0, j1 = j0;
      while (i1 < a.size() && is_digit(a[i1])) ++i1;
      while (j1 < b.size() && is_digit(b[j1])) ++j1;
      const size_t la = i1 - i0, lb = j1 - j0;
      if (la != lb) return la < lb;
      const int c = a.compare(i0, la, b, j0, lb);
      if (c != 0) return c < 0;
      i = i1;
      j = j1;
      continue;
    }
    const char x = fold(a[i], true), y = fold(b[j], true);
    if (x != y) return static_cast<unsigned char>(x) < static_cast<unsigned char>(y);
    ++i;
    ++j;
  }
  if ((i < a.size()) != (j < b.size())) return j < b.size();
  return a < b;  // equal naturally (p01, p1; P1, p1): total order by bytes
}

bool glob_match(const std::string& pattern, const std::string& name,
                bool case_insensitive) {
  if (pattern.empty()) return true;
  size_t start = 0;
  while (start <= pattern.size()) {
    size_t end = pattern.find(';', start);
    if (end == std::string::npos) end = pattern.size();
    const std::string one = pattern.substr(start, end - start);
    if (!one.empty() && match_one(one, name, case_insensitive)) return true;
    start = end + 1;
  }
  return false;
}

std::vector<std::string> list_entries(const std::string& folder,
                                      const std::string& pattern) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    fail(ErrorKind::kInput, "'" + folder + "' is not a folder" +
                                (fs::exists(folder, ec) ? "" : " (it does not exist)"));
  }
  std::vector<std::pair<std::string, std::string>> found;  // name, path
  fs::directory_iterator it(folder, ec), end;
  if (ec) fail(ErrorKind::kInput, "cannot list folder '" + folder + "': " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) fail(ErrorKind::kInput, "cannot list folder '" + folder + "': " + ec.message());
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    // Whatever its type: a matching entry that cannot be read must fail
    // loudly (require_readable_file), never vanish from the list.
    if (!glob_match(pattern, name)) continue;
    found.emplace_back(name, it->path().string());
  }
  if (ec) fail(ErrorKind::kInput, "cannot list folder '" + folder + "': " + ec.message());
  std::sort(found.begin(), found.end(),
            [](const auto& x, const auto& y) { return natural_less(x.first, y.first); });
  std::vector<std::string> out;
  out.reserve(found.size());
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::vector<std::string> list_files(const std::string& folder,
                                    const std::string& pattern) {
  std::vector<std::string> files = list_entries(folder, pattern);
  for (const std::string& f : files) require_readable_file(f, pattern);
  return files;
}

void require_readable_file(const std::string& path, const std::string& pattern) {
  const std::string what =
      "'" + path + "'" + (pattern.empty() ? "" : " matches '" + pattern + "' but");
  const std::string advice = pattern.empty() ? std::string()
                                             : ": every matching file is read (remove it, or "
                                               "narrow the pattern)";
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link;
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      std::error_code ec;
      const fs::path target = fs::read_symlink(path, ec);
      fail(ErrorKind::kInput, what + " is a dangling symbolic link (to '" +
                                  (ec ? std::string("?") : target.string()) + "': " +
                                  system_reason(err) + ")" + advice);
    }
    fail(ErrorKind::kInput, what + " cannot be read: " + system_reason(err) + advice);
  }
  if (S_ISDIR(st.st_mode)) fail(ErrorKind::kInput, what + " is a folder, not a file" + advice);
  if (!S_ISREG(st.st_mode)) {
    fail(ErrorKind::kInput, what + " is not a regular file (a device, pipe or socket)" + advice);
  }
  if (st.st_size == 0) fail(ErrorKind::kInput, what + " is empty (0 bytes)" + advice);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(ErrorKind::kInput, what + " cannot be read: " + system_reason(errno) + advice);
  ::close(fd);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join_path(const std::string& folder, const std::string& name) {
  if (folder.empty()) return name;
  if (folder.back() == '/') return folder + name;
  return folder + "/" + name;
}

void make_directories(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (!fs::is_directory(path)) {
    fail(ErrorKind::kOutput, "cannot create folder '" + path + "': " +
                                 (ec ? ec.message() : std::string("a file of that name exists")));
  }
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) fail(ErrorKind::kInput, "cannot open '" + path + "': " + system_reason(errno));
  std::string text;
  char buffer[65536];
  for (;;) {
    const size_t got = std::fread(buffer, 1, sizeof buffer, f);
    text.append(buffer, got);
    if (text.size() > max_bytes) {
      std::fclose(f);
      fail(ErrorKind::kInput, "'" + path + "' is too large (more than " +
                                  std::to_string(max_bytes) + " bytes)");
    }
    if (got < sizeof buffer) break;
  }
  const bool bad = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (bad) fail(ErrorKind::kInput, "cannot read '" + path + "': " + system_reason(err));
  return text;
}

// ---- OutputFile ------------------------------------------------------------------

OutputFile::OutputFile(std::string final_path, WriteFaultInjection* fault)
    : final_path_(std::move(final_path)), temp_path_(final_path_ + ".part"), fault_(fault) {
  file_ = std::fopen(temp_path_.c_str(), "w+b");
  if (!file_) {
    fail(ErrorKind::kOutput, "cannot create '" + final_path_ + "': " + system_reason(errno));
  }
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::write(const void* data, size_t bytes) {
  if (closed_ || !file_) fail(ErrorKind::kOutput, "'" + final_path_ + "': write after close");
  size_t allowed = bytes;
  bool injected = false;
  if (fault_ && fault_->fail_after_bytes != UINT64_MAX) {
    const uint64_t left = fault_->fail_after_bytes > fault_->written
                              ? fault_->fail_after_bytes - fault_->written
                              : 0;
    if (left < bytes) {
      allowed = static_cast<size_t>(left);
      injected = true;
    }
  }
  const size_t done = allowed ? std::fwrite(data, 1, allowed, file_) : 0;
  const int err = errno;
  position_ += done;
  size_ = std::max(size_, position_);
  if (fault_) fault_->written += done;
  if (injected) {
    fail(ErrorKind::kOutput,
         "writing '" + final_path_ + "' failed: " + system_reason(ENOSPC) +
             " (injected)");
  }
  if (done != bytes) {
    fail(ErrorKind::kOutput, "writing '" + final_path_ + "' failed: " + system_reason(err));
  }
}

void OutputFile::seek(uint64_t offset) {
  if (closed_ || !file_) fail(ErrorKind::kOutput, "'" + final_path_ + "': seek after close");
  if (fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) {
    fail(ErrorKind::kOutput, "seeking in '" + final_path_ + "' failed: " + system_reason(errno));
  }
  position_ = offset;
}

size_t OutputFile::read(void* data, size_t bytes) {
  if (closed_ || !file_) return 0;
  const size_t got = std::fread(data, 1, bytes, file_);
  position_ += got;
  return got;
}

void OutputFile::commit(bool defer_rename) {
  if (closed_) fail(ErrorKind::kOutput, "'" + final_path_ + "': committed twice");
  closed_ = true;
  const bool flush_ok = std::fflush(file_) == 0;
  int err = errno;
  const bool close_ok = std::fclose(file_) == 0;
  if (flush_ok) err = errno;
  file_ = nullptr;
  if (!flush_ok || !close_ok) {
    std::remove(temp_path_.c_str());
    fail(ErrorKind::kOutput, "writing '" + final_path_ + "' failed: " + system_reason(err));
  }
  if (!defer_rename) rename_to_final();
}

void OutputFile::rename_to_final() {
  if (renamed_) return;
  if (!closed_) fail(ErrorKind::kOutput, "'" + final_path_ + "': renamed before commit");
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temp_path_.c_str());
    fail(ErrorKind::kOutput, "cannot rename '" + temp_path_ + "' to '" + final_path_ +
                                 "': " + system_reason(err));
  }
  renamed_ = true;
}

void OutputFile::discard() noexcept {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
  closed_ = true;
  if (!renamed_) {
    std::remove(temp_path_.c_str());
    renamed_ = true;  // nothing left to do
  }
}

}  // namespace adapters
}  // namespace fdk
