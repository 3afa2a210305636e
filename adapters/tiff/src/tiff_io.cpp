// TIFF reading and writing through libtiff (see fdk/adapters/tiff_io.hpp).
#include "fdk/adapters/tiff_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <unordered_set>

#include <tiffio.h>

#include "fdk/adapters/error.hpp"

#if defined(TIFFLIB_VERSION) && TIFFLIB_VERSION >= 20221213
#define FDK_TIFF_PER_FILE_HANDLERS 1
#else
#define FDK_TIFF_PER_FILE_HANDLERS 0
#endif

namespace fdk {
namespace adapters {
namespace {

// Collects libtiff's messages for one file; the first error is the one
// reported (later ones are usually its consequences).
struct MessageSink {
  std::string first_error;
  void reset() { first_error.clear(); }
};

std::string vformat(const char* module, const char* fmt, va_list ap) {
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, fmt, ap);
  std::string text = buffer;
  if (module && *module && text.find(module) == std::string::npos) {
    text = std::string(module) + ": " + text;
  }
  return text;
}

#if FDK_TIFF_PER_FILE_HANDLERS
int error_handler(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  auto* sink = static_cast<MessageSink*>(user);
  if (sink && sink->first_error.empty()) sink->first_error = vformat(module, fmt, ap);
  return 1;  // handled: libtiff prints nothing
}
int warning_handler(TIFF*, void*, const char*, const char*, va_list) { return 1; }
#else
// Older libtiff has only process-wide handlers: silence them (the library
// must not print) and keep the last error per thread.
thread_local std::string g_last_error;
void global_error(const char* module, const char* fmt, va_list ap) {
  if (g_last_error.empty()) g_last_error = vformat(module, fmt, ap);
}
void global_warning(const char*, const char*, va_list) {}
void install_global_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(global_error);
    TIFFSetWarningHandler(global_warning);
  });
}
#endif

struct TiffOptions {
#if FDK_TIFF_PER_FILE_HANDLERS
  explicit TiffOptions(MessageSink* sink) : opts(TIFFOpenOptionsAlloc()) {
    TIFFOpenOptionsSetErrorHandlerExtR(opts, error_handler, sink);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, warning_handler, nullptr);
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, tmsize_t(1) << 31);
  }
  ~TiffOptions() { TIFFOpenOptionsFree(opts); }
  TIFFOpenOptions* opts;
#else
  explicit TiffOptions(MessageSink*) { install_global_handlers(); }
#endif
};

TIFF* client_open(const char* name, const char* mode, thandle_t handle, TIFFReadWriteProc rd,
                  TIFFReadWriteProc wr, TIFFSeekProc sk, TIFFCloseProc cl, TIFFSizeProc sz,
                  TIFFMapFileProc mp, TIFFUnmapFileProc um, MessageSink* sink) {
  TiffOptions options(sink);
#if FDK_TIFF_PER_FILE_HANDLERS
  return TIFFClientOpenExt(name, mode, handle, rd, wr, sk, cl, sz, mp, um, options.opts);
#else
  g_last_error.clear();
  TIFF* t = TIFFClientOpen(name, mode, handle, rd, wr, sk, cl, sz, mp, um);
  if (sink) sink->first_error = g_last_error;
  return t;
#endif
}

std::string take_message(MessageSink& sink) {
#if !FDK_TIFF_PER_FILE_HANDLERS
  if (sink.first_error.empty()) sink.first_error = g_last_error;
  g_last_error.clear();
#endif
  std::string m = sink.first_error.empty() ? std::string("libtiff reported no reason")
                                           : sink.first_error;
  sink.reset();
  return m;
}

size_t bytes_of(SampleType t) {
  switch (t) {
    case SampleType::kUInt8: return 1;
    case SampleType::kUInt16: return 2;
    default: return 4;
  }
}

int map_nothing(thandle_t, void**, toff_t*) { return 0; }
void unmap_nothing(thandle_t, void*, toff_t) {}

template <typename T>
void convert(const unsigned char* src, size_t count, float* dst) {
  for (size_t i = 0; i < count; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof(T), sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

void convert_samples(SampleType type, const unsigned char* src, size_t count, float* dst) {
  switch (type) {
    case SampleType::kUInt8: convert<uint8_t>(src, count, dst); break;
    case SampleType::kUInt16: convert<uint16_t>(src, count, dst); break;
    case SampleType::kUInt32: convert<uint32_t>(src, count, dst); break;
    case SampleType::kFloat32: convert<float>(src, count, dst); break;
  }
}

}  // namespace

const char* sample_type_name(SampleType type) {
  switch (type) {
    case SampleType::kUInt8: return "uint8";
    case SampleType::kUInt16: return "uint16";
    case SampleType::kUInt32: return "uint32";
    case SampleType::kFloat32: return "float32";
  }
  return "?";
}

double saturation_level(SampleType type) {
  switch (type) {
    case SampleType::kUInt8: return 255.0;
    case SampleType::kUInt16: return 65535.0;
    case SampleType::kUInt32: return 4294967295.0;
    case SampleType::kFloat32: return std::numeric_limits<double>::infinity();
  }
  return std::numeric_limits<double>::infinity();
}

// ---- reader ------------------------------------------------------------------------

struct TiffReader::Impl {
  std::string name;
  uint64_t max_pixels = kDefaultMaxTiffPixels;
  int fd = -1;
  const unsigned char* mem = nullptr;
  uint64_t mem_size = 0, mem_pos = 0;
  TIFF* tif = nullptr;
  MessageSink sink;
  int current = 0;  // libtiff starts on page 0
  int pages = -1;
  std::vector<unsigned char> buffer;
  // Each page's Photometric tag as written in the file (kNoPhotometric:
  // none, or not read), from check_directory_chain.
  static constexpr uint16_t kNoPhotometric = 0xFFFF;
  std::vector<uint16_t> raw_photometric;
  // libtiff refuses a directory of more entries ("Sanity check on
  // directory count failed"): a link to one is a link into garbage.
  static constexpr uint64_t kMaxDirectoryEntries = 4096;

  ~Impl() {
    if (tif) TIFFClose(tif);
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail_page(int page, const std::string& what, ErrorKind kind = ErrorKind::kInput) {
    fail(kind, "'" + name + "' page " + std::to_string(page) + ": " + what);
  }

  static tmsize_t read_proc(thandle_t h, void* buf, tmsize_t size) {
    auto* s = static_cast<Impl*>(h);
    if (size < 0) return -1;
    if (s->fd >= 0) {
      size_t done = 0;
      while (done < static_cast<size_t>(size)) {
        const ssize_t n = ::read(s->fd, static_cast<char*>(buf) + done,
                                 static_cast<size_t>(size) - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        done += static_cast<size_t>(n);
      }
      return static_cast<tmsize_t>(done);
    }
    const uint64_t left = s->mem_pos < s->mem_size ? s->mem_size - s->mem_pos : 0;
    const uint64_t n = std::min<uint64_t>(left, static_cast<uint64_t>(size));
    if (n) std::memcpy(buf, s->mem + s->mem_pos, static_cast<size_t>(n));
    s->mem_pos += n;
    return static_cast<tmsize_t>(n);
  }
  static tmsize_t write_proc(thandle_t, void*, tmsize_t) { return -1; }
  static toff_t seek_proc(thandle_t h, toff_t off, int whence) {
    auto* s = static_cast<Impl*>(h);
    if (s->fd >= 0) {
      const off_t r = ::lseek(s->fd, static_cast<off_t>(off), whence);
      return r < 0 ? static_cast<toff_t>(-1) : static_cast<toff_t>(r);
    }
    uint64_t base = 0;
    if (whence == SEEK_CUR) base = s->mem_pos;
    else if (whence == SEEK_END) base = s->mem_size;
    const uint64_t pos = base + off;  // libtiff passes offsets as unsigned
    if (pos < base && whence != SEEK_SET) return static_cast<toff_t>(-1);
    s->mem_pos = pos;
    return pos;
  }
  static int close_proc(thandle_t) { return 0; }
  static toff_t size_proc(thandle_t h) {
    auto* s = static_cast<Impl*>(h);
    if (s->fd >= 0) {
      struct stat st;
      return ::fstat(s->fd, &st) == 0 ? static_cast<toff_t>(st.st_size) : 0;
    }
    return s->mem_size;
  }

  // Reads `n` bytes at `offset` from the file or memory; false when short.
  bool read_at(uint64_t offset, void* out, size_t n) const {
    if (fd >= 0) {
      size_t done = 0;
      while (done < n) {
        const ssize_t got = ::pread(fd, static_cast<char*>(out) + done, n - done,
                                    static_cast<off_t>(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return false;
        done += static_cast<size_t>(got);
      }
      return true;
    }
    if (offset > mem_size || n > mem_size - offset) return false;
    std::memcpy(out, mem + offset, n);
    return true;
  }

  // Walks the chain of image file directories (pages) by hand before libtiff
  // counts them: a chain that loops back (a corrupt or hostile file) or is
  // absurdly long is an error naming the file and the offset. libtiff's own
  // handling depends on its version: 4.5 quietly stops at the loop (a
  // corrupt file read as a shorter one), older versions may walk it far
  // longer. A first directory at a bad offset stops the walk here; libtiff
  // then reports that file's actual problem. A later page's link that leads
  // nowhere (beyond the end of the file, or into pixel data: no sane
  // directory there) is an error naming the page and the offset: libtiff
  // would end the chain there quietly, and a truncated or damaged stack
  // would read as a shorter one.
  //
  // It also records each page's Photometric tag as the file has it: libtiff
  // turns a palette image without a colour map into min-is-black, so its
  // own value cannot tell a palette image from a grey one.
  void check_directory_chain() {
    unsigned char header[16];
    if (!read_at(0, header, 8)) return;  // libtiff has already refused it
    const bool little = header[0] == 'I';
    auto get = [&](const unsigned char* b, int bytes) {
      uint64_t v = 0;
      for (int i = 0; i < bytes; ++i) {
        const uint64_t byte = b[little ? i : bytes - 1 - i];
        v |= byte << (8 * i);
      }
      return v;
    };
    const uint64_t magic = get(header + 2, 2);
    const bool big = magic == 43;
    uint64_t offset;
    if (big) {
      if (!read_at(8, header + 8, 8)) return;
      offset = get(header + 8, 8);
    } else {
      offset = get(header + 4, 4);
    }
    const int count_bytes = big ? 8 : 2, entry_bytes = big ? 20 : 12, next_bytes = big ? 8 : 4;
    const uint64_t file_size = size_proc(this);
    std::unordered_set<uint64_t> seen;
    uint64_t walked = 0;
    raw_photometric.clear();
    while (offset != 0) {
      // Why a link is bad, or "" when a directory may start there.
      auto bad_link = [&]() -> std::string {
        unsigned char count_buf[8];
        if (offset >= file_size || !read_at(offset, count_buf, static_cast<size_t>(count_bytes))) {
          return "beyond the end of the file (" + std::to_string(file_size) + " bytes)";
        }
        const uint64_t n = get(count_buf, count_bytes);
        if (n > kMaxDirectoryEntries) {  // (an empty one is a page libtiff refuses when read)
          return "where no directory is (it would have " + std::to_string(n) + " entries)";
        }
        const uint64_t end = offset + count_bytes + n * entry_bytes + next_bytes;
        if (end > file_size) {
          return "where a directory of " + std::to_string(n) + " entries would run past the end of the file (" +
                 std::to_string(file_size) + " bytes)";
        }
        return "";
      };
      if (walked > 0) {
        const std::string why = bad_link();
        if (!why.empty()) {
          fail(ErrorKind::kInput, "'" + name + "': page " + std::to_string(walked - 1) +
                                      " links the next page (IFD) to byte " + std::to_string(offset) +
                                      ", " + why + ": a truncated or corrupt file");
        }
      }
      if (!seen.insert(offset).second) {
        fail(ErrorKind::kInput, "'" + name + "': the page (IFD) chain loops: page " +
                                    std::to_string(walked - 1) + " points back to the directory at byte " +
                                    std::to_string(offset) + " (a corrupt file)");
      }
      if (++walked > kMaxTiffPages) {
        fail(ErrorKind::kInput, "'" + name + "' has more than " + std::to_string(kMaxTiffPages) +
                                    " pages (IFDs): refused as corrupt");
      }
      unsigned char buf[8];
      if (!read_at(offset, buf, static_cast<size_t>(count_bytes))) return;
      const uint64_t entries = get(buf, count_bytes);
      if (entries > (uint64_t(1) << 32)) return;  // libtiff refuses such a directory
      if (entries >= 1 && entries <= kMaxDirectoryEntries) {
        std::vector<unsigned char> dir(static_cast<size_t>(entries * entry_bytes));
        if (!read_at(offset + count_bytes, dir.data(), dir.size())) return;
        uint16_t photometric = kNoPhotometric;
        for (uint64_t e = 0; e < entries; ++e) {
          const unsigned char* entry = dir.data() + e * entry_bytes;
          if (get(entry, 2) != 262) continue;
          const bool is_long = get(entry + 2, 2) == 4;  // SHORT is usual; LONG is tolerated by libtiff
          photometric = static_cast<uint16_t>(get(entry + (big ? 12 : 8), is_long ? 4 : 2));
        }
        raw_photometric.push_back(photometric);
      } else {
        raw_photometric.push_back(kNoPhotometric);
      }
      const uint64_t next_at = offset + count_bytes + entries * entry_bytes;
      if (!read_at(next_at, buf, static_cast<size_t>(next_bytes))) return;
      offset = get(buf, next_bytes);
    }
  }

  void open() {
    tif = client_open(name.c_str(), "rm", this, read_proc, write_proc, seek_proc, close_proc,
                      size_proc, map_nothing, unmap_nothing, &sink);
    if (!tif) {
      fail(ErrorKind::kInput, "'" + name + "' is not a readable TIFF file: " + take_message(sink));
    }
    current = 0;
  }

  void go_to(int page) {
    if (page < 0) fail_page(page, "no such page");
    if (page == current) return;
    sink.reset();
    int ok;
    if (current >= 0 && page == current + 1) {
      ok = TIFFReadDirectory(tif);
    } else {
      ok = TIFFSetDirectory(tif, static_cast<tdir_t>(page));
    }
    if (!ok) {
      current = -1;  // unknown: force TIFFSetDirectory next time
      const int count = pages;
      fail_page(page, count >= 0 && page >= count
                          ? "no such page (the file has " + std::to_string(count) + ")"
                          : "cannot read its directory: " + take_message(sink));
    }
    current = page;
  }
};

TiffReader::TiffReader(const std::string& path, uint64_t max_pixels) : impl_(new Impl) {
  impl_->name = path;
  impl_->max_pixels = max_pixels;
  impl_->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl_->fd < 0) {
    fail(ErrorKind::kInput, "cannot open '" + path + "': " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(impl_->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    fail(ErrorKind::kInput, "'" + path + "' is a folder, not a TIFF file");
  }
  impl_->open();
}

TiffReader::TiffReader(const void* data, size_t size, const std::string& name,
                       uint64_t max_pixels)
    : impl_(new Impl) {
  impl_->name = name;
  impl_->max_pixels = max_pixels;
  impl_->mem = static_cast<const unsigned char*>(data);
  impl_->mem_size = size;
  impl_->open();
}

TiffReader::~TiffReader() = default;

const std::string& TiffReader::name() const { return impl_->name; }

int TiffReader::page_count() {
  if (impl_->pages < 0) {
    impl_->check_directory_chain();
    impl_->sink.reset();
    const tdir_t n = TIFFNumberOfDirectories(impl_->tif);
    if (n == 0) {
      fail(ErrorKind::kInput, "'" + impl_->name + "' has no readable page: " +
                                  take_message(impl_->sink));
    }
    impl_->pages = static_cast<int>(std::min<uint64_t>(n, kMaxTiffPages));
    // Counting may have moved libtiff's notion of the current directory in
    // some versions: make the next go_to() seek explicitly.
    impl_->current = -1;
    impl_->go_to(0);
  }
  return impl_->pages;
}

TiffPageInfo TiffReader::page_info(int page) {
  Impl& s = *impl_;
  if (s.pages < 0) page_count();  // walks the chain: the pages' own Photometric tags
  s.go_to(page);
  TIFF* t = s.tif;
  uint32_t w = 0, h = 0;
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h)) {
    s.fail_page(page, "no image size");
  }
  if (w == 0 || h == 0) s.fail_page(page, "the image is empty (0 pixels)");
  if (static_cast<uint64_t>(w) * h > s.max_pixels || w > (1u << 30) || h > (1u << 30)) {
    s.fail_page(page, "the image is " + std::to_string(w) + " x " + std::to_string(h) +
                          " pixels, more than the limit of " + std::to_string(s.max_pixels));
  }
  TiffPageInfo resolution;
  {
    uint16_t unit = RESUNIT_NONE;
    float xres = 0, yres = 0;
    TIFFGetFieldDefaulted(t, TIFFTAG_RESOLUTIONUNIT, &unit);
    const double mm = unit == RESUNIT_CENTIMETER ? 10.0 : unit == RESUNIT_INCH ? 25.4 : 0.0;
    if (mm > 0 && TIFFGetField(t, TIFFTAG_XRESOLUTION, &xres) && TIFFGetField(t, TIFFTAG_YRESOLUTION, &yres) &&
        std::isfinite(xres) && std::isfinite(yres) && xres > 0 && yres > 0) {
      resolution.pixel_size_x_mm = mm / xres;
      resolution.pixel_size_y_mm = mm / yres;
    }
  }
  uint16_t spp = 1, bits = 1, format = SAMPLEFORMAT_UINT, photometric = PHOTOMETRIC_MINISBLACK;
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
  TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric);
  if (spp != 1) {
    s.fail_page(page, "has " + std::to_string(spp) +
                          " samples per pixel (colour?); only greyscale images are supported",
                ErrorKind::kUnsupported);
  }
  const bool palette_in_file = static_cast<size_t>(page) < s.raw_photometric.size() &&
                               s.raw_photometric[static_cast<size_t>(page)] == PHOTOMETRIC_PALETTE;
  if (photometric == PHOTOMETRIC_PALETTE || palette_in_file) {
    s.fail_page(page, "is a palette (colour-mapped) image; only greyscale images are supported",
                ErrorKind::kUnsupported);
  }
  TiffPageInfo info = resolution;
  info.width = static_cast<int>(w);
  info.height = static_cast<int>(h);
  info.tiled = TIFFIsTiled(t) != 0;
  if ((format == SAMPLEFORMAT_UINT || format == SAMPLEFORMAT_VOID) && bits == 8) {
    info.type = SampleType::kUInt8;
  } else if ((format == SAMPLEFORMAT_UINT || format == SAMPLEFORMAT_VOID) && bits == 16) {
    info.type = SampleType::kUInt16;
  } else if ((format == SAMPLEFORMAT_UINT || format == SAMPLEFORMAT_VOID) && bits == 32) {
    info.type = SampleType::kUInt32;
  } else if (format == SAMPLEFORMAT_IEEEFP && bits == 32) {
    info.type = SampleType::kFloat32;
  } else {
    const char* kind = format == SAMPLEFORMAT_INT      ? "signed integer"
                       : format == SAMPLEFORMAT_IEEEFP ? "floating-point"
                       : format == SAMPLEFORMAT_UINT   ? "unsigned integer"
                                                       : "complex or unknown";
    s.fail_page(page, std::string("has ") + std::to_string(bits) + "-bit " + kind +
                          " samples; supported are unsigned 8, 16, 32-bit and 32-bit float",
                ErrorKind::kUnsupported);
  }
  return info;
}

void TiffReader::read_page(int page, float* out) {
  const TiffPageInfo info = page_info(page);
  Impl& s = *impl_;
  TIFF* t = s.tif;
  const size_t bps = bytes_of(info.type);
  const size_t w = static_cast<size_t>(info.width), h = static_cast<size_t>(info.height);
  s.sink.reset();
  if (info.tiled) {
    uint32_t tw = 0, th = 0;
    if (!TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw) || !TIFFGetField(t, TIFFTAG_TILELENGTH, &th) ||
        tw == 0 || th == 0) {
      s.fail_page(page, "tiled without a tile size");
    }
    if (static_cast<uint64_t>(tw) * th > s.max_pixels) {
      s.fail_page(page, "tiles of " + std::to_string(tw) + " x " + std::to_string(th) +
                            " pixels are too large");
    }
    const size_t tile_bytes = static_cast<size_t>(tw) * th * bps;
    s.buffer.resize(tile_bytes);
    for (uint32_t y0 = 0; y0 < h; y0 += th) {
      for (uint32_t x0 = 0; x0 < w; x0 += tw) {
        const ttile_t tile = TIFFComputeTile(t, x0, y0, 0, 0);
        const tmsize_t n = TIFFReadEncodedTile(t, tile, s.buffer.data(),
                                               static_cast<tmsize_t>(tile_bytes));
        if (n < 0 || static_cast<size_t>(n) < tile_bytes) {
          s.fail_page(page, "tile at (" + std::to_string(x0) + ", " + std::to_string(y0) +
                                ") cannot be read" +
                                (n < 0 ? ": " + take_message(s.sink)
                                       : " (" + std::to_string(n) + " of " +
                                             std::to_string(tile_bytes) + " bytes)"));
        }
        const size_t cols = std::min<size_t>(tw, w - x0), rows = std::min<size_t>(th, h - y0);
        for (size_t r = 0; r < rows; ++r) {
          convert_samples(info.type, s.buffer.data() + r * tw * bps, cols,
                          out + (y0 + r) * w + x0);
        }
      }
    }
    return;
  }
  uint32_t rps = 0;
  TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
  if (rps == 0 || rps > h) rps = static_cast<uint32_t>(h);
  const size_t strip_bytes = static_cast<size_t>(rps) * w * bps;
  s.buffer.resize(strip_bytes);
  const uint32_t strips = TIFFNumberOfStrips(t);
  for (uint32_t y0 = 0; y0 < h; y0 += rps) {
    const uint32_t strip = TIFFComputeStrip(t, y0, 0);
    if (strip >= strips) s.fail_page(page, "missing strip for row " + std::to_string(y0));
    const size_t rows = std::min<size_t>(rps, h - y0);
    const size_t need = rows * w * bps;
    const tmsize_t n =
        TIFFReadEncodedStrip(t, strip, s.buffer.data(), static_cast<tmsize_t>(need));
    if (n < 0 || static_cast<size_t>(n) < need) {
      s.fail_page(page, "strip " + std::to_string(strip) + " (rows " + std::to_string(y0) +
                            "-" + std::to_string(y0 + rows - 1) + ") cannot be read" +
                            (n < 0 ? ": " + take_message(s.sink)
                                   : " (truncated: " + std::to_string(n) + " of " +
                                         std::to_string(need) + " bytes)"));
    }
    convert_samples(info.type, s.buffer.data(), rows * w, out + y0 * w);
  }
}

std::vector<float> TiffReader::read_page(int page, TiffPageInfo* info) {
  const TiffPageInfo i = page_info(page);
  std::vector<float> out(static_cast<size_t>(i.width) * static_cast<size_t>(i.height));
  read_page(page, out.data());
  if (info) *info = i;
  return out;
}

// ---- writer ------------------------------------------------------------------------

struct TiffWriter::Impl {
  TiffWriteOptions options;
  std::unique_ptr<OutputFile> file;
  TIFF* tif = nullptr;
  MessageSink sink;
  std::string io_error;  // an OutputFile exception caught in a libtiff callback
  bool done = false;
  std::vector<unsigned char> chunk;

  static tmsize_t read_proc(thandle_t h, void* buf, tmsize_t size) {
    auto* s = static_cast<Impl*>(h);
    return size < 0 ? -1 : static_cast<tmsize_t>(s->file->read(buf, static_cast<size_t>(size)));
  }
  static tmsize_t write_proc(thandle_t h, void* buf, tmsize_t size) {
    auto* s = static_cast<Impl*>(h);
    if (size < 0) return -1;
    try {
      s->file->write(buf, static_cast<size_t>(size));
    } catch (const std::exception& e) {
      if (s->io_error.empty()) s->io_error = e.what();
      return -1;
    }
    return size;
  }
  static toff_t seek_proc(thandle_t h, toff_t off, int whence) {
    auto* s = static_cast<Impl*>(h);
    uint64_t base = 0;
    if (whence == SEEK_CUR) base = s->file->tell();
    else if (whence == SEEK_END) base = s->file->size();
    try {
      s->file->seek(base + off);
    } catch (const std::exception& e) {
      if (s->io_error.empty()) s->io_error = e.what();
      return static_cast<toff_t>(-1);
    }
    return base + off;
  }
  static int close_proc(thandle_t) { return 0; }
  static toff_t size_proc(thandle_t h) { return static_cast<Impl*>(h)->file->size(); }

  [[noreturn]] void fail_write(const std::string& what) {
    std::string reason = !io_error.empty() ? io_error : take_message(sink);
    const std::string path = file ? file->final_path() : std::string("?");
    discard();
    if (reason.find(path) != std::string::npos) fail(ErrorKind::kOutput, reason);
    fail(ErrorKind::kOutput, "writing '" + path + "' failed (" + what + "): " + reason);
  }

  void discard() noexcept {
    if (tif) {
      TIFFClose(tif);  // may try to write; errors are ignored here
      tif = nullptr;
    }
    if (file) file->discard();
    done = true;
  }
};

TiffWriter::TiffWriter(const std::string& path, const TiffWriteOptions& options)
    : impl_(new Impl) {
  impl_->options = options;
  if (options.tiled && (options.tile_size < 16 || options.tile_size % 16 != 0)) {
    fail(ErrorKind::kInvalidArgument, "TIFF tile size must be a positive multiple of 16");
  }
  impl_->file = std::make_unique<OutputFile>(path, options.fault);
  std::string mode = "w";
  mode += options.big_endian ? "b" : "l";
  if (options.bigtiff) mode += "8";
  impl_->tif = client_open(path.c_str(), mode.c_str(), impl_.get(), Impl::read_proc,
                           Impl::write_proc, Impl::seek_proc, Impl::close_proc, Impl::size_proc,
                           map_nothing, unmap_nothing, &impl_->sink);
  if (!impl_->tif) impl_->fail_write("opening");
}

TiffWriter::~TiffWriter() {
  if (!impl_->done) impl_->discard();
}

const std::string& TiffWriter::path() const { return impl_->file->final_path(); }

void TiffWriter::add_page(int width, int height, SampleType type, const void* samples,
                          int page_number, int page_total) {
  Impl& s = *impl_;
  if (s.done || !s.tif) fail(ErrorKind::kInvalidArgument, "TIFF writer already closed");
  if (width < 1 || height < 1 || !samples) {
    fail(ErrorKind::kInvalidArgument, "'" + path() + "': empty page");
  }
  TIFF* t = s.tif;
  const TiffWriteOptions& o = s.options;
  const size_t bps = bytes_of(type);
  const bool is_float = type == SampleType::kFloat32;
  uint16_t compression = COMPRESSION_NONE;
  if (o.compression == TiffWriteOptions::Compression::kLzw) compression = COMPRESSION_LZW;
  if (o.compression == TiffWriteOptions::Compression::kDeflate) compression = COMPRESSION_ADOBE_DEFLATE;
  bool ok = TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(width)) &&
            TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(height)) &&
            TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<uint16_t>(8 * bps)) &&
            TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<uint16_t>(1)) &&
            TIFFSetField(t, TIFFTAG_SAMPLEFORMAT,
                         static_cast<uint16_t>(is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT)) &&
            TIFFSetField(t, TIFFTAG_PHOTOMETRIC, static_cast<uint16_t>(PHOTOMETRIC_MINISBLACK)) &&
            TIFFSetField(t, TIFFTAG_PLANARCONFIG, static_cast<uint16_t>(PLANARCONFIG_CONTIG)) &&
            TIFFSetField(t, TIFFTAG_COMPRESSION, compression) &&
            TIFFSetField(t, TIFFTAG_SOFTWARE, "fdk");
  if (ok && compression != COMPRESSION_NONE) {
    ok = TIFFSetField(t, TIFFTAG_PREDICTOR,
                      static_cast<uint16_t>(is_float ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL));
  }
  if (ok && o.pixel_size_x_mm > 0 && o.pixel_size_y_mm > 0) {
    ok = TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, static_cast<uint16_t>(RESUNIT_CENTIMETER)) &&
         TIFFSetField(t, TIFFTAG_XRESOLUTION, static_cast<float>(10.0 / o.pixel_size_x_mm)) &&
         TIFFSetField(t, TIFFTAG_YRESOLUTION, static_cast<float>(10.0 / o.pixel_size_y_mm));
  }
  if (ok && !o.description.empty()) {
    ok = TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, o.description.c_str());
  }
  if (ok && page_total > 0) {
    ok = TIFFSetField(t, TIFFTAG_SUBFILETYPE, static_cast<uint32_t>(FILETYPE_PAGE)) &&
         TIFFSetField(t, TIFFTAG_PAGENUMBER, static_cast<uint16_t>(std::min(page_number, 65535)),
                      static_cast<uint16_t>(std::min(page_total, 65535)));
  }
  const auto* src = static_cast<const unsigned char*>(samples);
  const size_t row_bytes = static_cast<size_t>(width) * bps;
  if (ok && o.tiled) {
    const uint32_t ts = static_cast<uint32_t>(o.tile_size);
    ok = TIFFSetField(t, TIFFTAG_TILEWIDTH, ts) && TIFFSetField(t, TIFFTAG_TILELENGTH, ts);
    if (!ok) s.fail_write("tags");
    s.chunk.resize(static_cast<size_t>(ts) * ts * bps);
    for (uint32_t y0 = 0; y0 < static_cast<uint32_t>(height); y0 += ts) {
      for (uint32_t x0 = 0; x0 < static_cast<uint32_t>(width); x0 += ts) {
        std::fill(s.chunk.begin(), s.chunk.end(), 0);
        const size_t cols = std::min<size_t>(ts, static_cast<size_t>(width) - x0);
        const size_t rows = std::min<size_t>(ts, static_cast<size_t>(height) - y0);
        for (size_t r = 0; r < rows; ++r) {
          std::memcpy(s.chunk.data() + r * ts * bps, src + (y0 + r) * row_bytes + x0 * bps,
                      cols * bps);
        }
        if (TIFFWriteEncodedTile(t, TIFFComputeTile(t, x0, y0, 0, 0), s.chunk.data(),
                                 static_cast<tmsize_t>(s.chunk.size())) < 0) {
          s.fail_write("tile data");
        }
      }
    }
  } else if (ok) {
    uint32_t rps = o.rows_per_strip > 0 ? static_cast<uint32_t>(o.rows_per_strip)
                                        : static_cast<uint32_t>(std::max<size_t>(1, 65536 / row_bytes));
    rps = std::min(rps, static_cast<uint32_t>(height));
    if (!TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, rps)) s.fail_write("tags");
    for (uint32_t y0 = 0, strip = 0; y0 < static_cast<uint32_t>(height); y0 += rps, ++strip) {
      const size_t rows = std::min<size_t>(rps, static_cast<size_t>(height) - y0);
      // libtiff may modify the buffer (predictor, byte swapping): copy.
      s.chunk.assign(src + y0 * row_bytes, src + (y0 + rows) * row_bytes);
      if (TIFFWriteEncodedStrip(t, strip, s.chunk.data(), static_cast<tmsize_t>(s.chunk.size())) < 0) {
        s.fail_write("strip data");
      }
    }
  }
  if (!ok) s.fail_write("tags");
  if (!TIFFWriteDirectory(t)) s.fail_write("directory");
}

void TiffWriter::commit(bool defer_rename) {
  Impl& s = *impl_;
  if (s.done || !s.tif) fail(ErrorKind::kInvalidArgument, "TIFF writer already closed");
  if (!TIFFFlush(s.tif) || !s.io_error.empty()) s.fail_write("flush");
  TIFFClose(s.tif);
  s.tif = nullptr;
  if (!s.io_error.empty()) s.fail_write("close");
  try {
    s.file->commit(defer_rename);
  } catch (...) {
    s.discard();
    throw;
  }
  s.done = true;
}

void TiffWriter::rename_to_final() { impl_->file->rename_to_final(); }

void TiffWriter::discard() noexcept { impl_->discard(); }

void write_tiff_float(const std::string& path, int width, int height,
                      const std::vector<const float*>& pages, const TiffWriteOptions& options) {
  TiffWriter w(path, options);
  for (size_t p = 0; p < pages.size(); ++p) {
    w.add_page(width, height, SampleType::kFloat32, pages[p],
               pages.size() > 1 ? static_cast<int>(p) : 0,
               pages.size() > 1 ? static_cast<int>(pages.size()) : 0);
  }
  w.commit();
}

// ---- volume writers -------------------------------------------------------------------

std::string slice_file_name(const std::string& prefix, int y, int planes) {
  int digits = 1;
  for (int n = std::max(planes - 1, 1); n >= 10; n /= 10) ++digits;
  digits = std::max(digits, 4);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "_%0*d.tif", digits, y);
  return prefix + buffer;
}

namespace {

std::string plane_description(const fdk_volume& v, const VolumeWriterOptions& o, int y,
                              bool stack) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer,
                "fdk volume %s: %d x %d x %d voxels (x, y, z) of %.9g x %.9g x %.9g %s, voxel "
                "(0,0,0) at (%.9g, %.9g, %.9g); each image is one y plane, x across and z down",
                stack ? "" : "plane", v.size[0], v.size[1], v.size[2], v.spacing[0],
                v.spacing[1], v.spacing[2], o.unit.c_str(), v.origin[0], v.origin[1],
                v.origin[2]);
  std::string d = buffer;
  if (!stack) {
    std::snprintf(buffer, sizeof buffer, "; this is plane y = %d at %.9g %s", y,
                  v.origin[1] + y * v.spacing[1], o.unit.c_str());
    d += buffer;
  }
  if (o.type == VoxelType::kUInt16) {
    std::snprintf(buffer, sizeof buffer, "; uint16 0..65535 = values %.9g..%.9g", o.window_lo,
                  o.window_hi);
    d += buffer;
  }
  if (!o.description.empty()) d += "; " + o.description;
  return d;
}

class TiffVolumeWriterBase : public VolumeWriter {
 protected:
  TiffVolumeWriterBase(const fdk_volume& v, const VolumeWriterOptions& o,
                       TiffWriteOptions::Compression c)
      : volume_(v), options_(o) {
    tiff_.compression = c;
    tiff_.pixel_size_x_mm = v.spacing[0];
    tiff_.pixel_size_y_mm = v.spacing[2];
    tiff_.fault = o.fault;
  }
  void check_order(int y_begin, int y_end, const std::string& name) {
    if (y_begin != next_y_ || y_end <= y_begin || y_end > volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument,
           "'" + name + "': planes [" + std::to_string(y_begin) + ", " + std::to_string(y_end) +
               ") out of order (next is " + std::to_string(next_y_) + ")");
    }
  }
  const void* plane_samples(const float* plane, SampleType* type) {
    const size_t n = static_cast<size_t>(volume_.size[0]) * static_cast<size_t>(volume_.size[2]);
    if (options_.type == VoxelType::kFloat32) {
      *type = SampleType::kFloat32;
      return plane;
    }
    converted_.resize(n);
    to_uint16(plane, n, options_.window_lo, options_.window_hi, converted_.data());
    *type = SampleType::kUInt16;
    return converted_.data();
  }
  size_t plane_size() const {
    return static_cast<size_t>(volume_.size[0]) * static_cast<size_t>(volume_.size[2]);
  }

  fdk_volume volume_;
  VolumeWriterOptions options_;
  TiffWriteOptions tiff_;
  int next_y_ = 0;
  std::vector<uint16_t> converted_;
};

class SliceStackWriter final : public TiffVolumeWriterBase {
 public:
  SliceStackWriter(const std::string& folder, const std::string& prefix, const fdk_volume& v,
                   const VolumeWriterOptions& o, TiffWriteOptions::Compression c)
      : TiffVolumeWriterBase(v, o, c), folder_(folder), prefix_(prefix) {}
  ~SliceStackWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    check_order(y_begin, y_end, join_path(folder_, prefix_));
    for (int y = y_begin; y < y_end; ++y) {
      const std::string path = join_path(folder_, slice_file_name(prefix_, y, volume_.size[1]));
      TiffWriteOptions t = tiff_;
      t.description = plane_description(volume_, options_, y, false);
      auto w = std::make_unique<TiffWriter>(path, t);
      SampleType type;
      const void* samples =
          plane_samples(data + static_cast<size_t>(y - y_begin) * plane_size(), &type);
      w->add_page(volume_.size[0], volume_.size[2], type, samples);
      w->commit(/*defer_rename=*/true);
      files_.push_back(std::move(w));
      next_y_ = y + 1;
    }
  }

  void commit() override {
    if (next_y_ != volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument, "slice stack '" + join_path(folder_, prefix_) +
                                            "': only " + std::to_string(next_y_) + " of " +
                                            std::to_string(volume_.size[1]) + " planes written");
    }
    size_t renamed = 0;
    try {
      for (auto& f : files_) {
        f->rename_to_final();
        ++renamed;
      }
    } catch (...) {
      // Take back the ones already renamed: no stack that looks complete.
      for (size_t i = 0; i < renamed; ++i) std::remove(files_[i]->path().c_str());
      remove_all();
      throw;
    }
    committed_ = true;
  }

  void discard() noexcept override {
    if (!committed_) remove_all();
  }

  std::vector<std::string> outputs() const override {
    return {join_path(folder_, slice_file_name(prefix_, 0, volume_.size[1])),
            join_path(folder_, slice_file_name(prefix_, volume_.size[1] - 1, volume_.size[1]))};
  }

 private:
  void remove_all() noexcept {
    for (auto& f : files_) f->discard();  // removes the temporary files
    files_.clear();
  }

  std::string folder_, prefix_;
  std::vector<std::unique_ptr<TiffWriter>> files_;
  bool committed_ = false;
};

class BigTiffWriter final : public TiffVolumeWriterBase {
 public:
  BigTiffWriter(const std::string& path, const fdk_volume& v, const VolumeWriterOptions& o,
                TiffWriteOptions::Compression c)
      : TiffVolumeWriterBase(v, o, c), path_(path) {
    TiffWriteOptions t = tiff_;
    t.bigtiff = true;
    t.description = plane_description(volume_, options_, 0, true);
    writer_ = std::make_unique<TiffWriter>(path, t);
  }
  ~BigTiffWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    check_order(y_begin, y_end, path_);
    for (int y = y_begin; y < y_end; ++y) {
      SampleType type;
      const void* samples =
          plane_samples(data + static_cast<size_t>(y - y_begin) * plane_size(), &type);
      writer_->add_page(volume_.size[0], volume_.size[2], type, samples, y, volume_.size[1]);
      next_y_ = y + 1;
    }
  }

  void commit() override {
    if (next_y_ != volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument, "'" + path_ + "': only " + std::to_string(next_y_) +
                                            " of " + std::to_string(volume_.size[1]) +
                                            " planes written");
    }
    writer_->commit();
  }
  void discard() noexcept override { writer_->discard(); }
  std::vector<std::string> outputs() const override { return {path_}; }

 private:
  std::string path_;
  std::unique_ptr<TiffWriter> writer_;
};

}  // namespace

std::unique_ptr<VolumeWriter> make_tiff_slice_writer(const std::string& folder,
                                                     const std::string& prefix,
                                                     const fdk_volume& volume,
                                                     const VolumeWriterOptions& options,
                                                     TiffWriteOptions::Compression compression) {
  check_volume_writer_arguments(volume, options);
  if (!is_directory(folder)) {
    fail(ErrorKind::kOutput, "output folder '" + folder + "' does not exist");
  }
  return std::make_unique<SliceStackWriter>(folder, prefix, volume, options, compression);
}

std::unique_ptr<VolumeWriter> make_bigtiff_writer(const std::string& path,
                                                  const fdk_volume& volume,
                                                  const VolumeWriterOptions& options,
                                                  TiffWriteOptions::Compression compression) {
  check_volume_writer_arguments(volume, options);
  return std::make_unique<BigTiffWriter>(path, volume, options, compression);
}

}  // namespace adapters
}  // namespace fdk
