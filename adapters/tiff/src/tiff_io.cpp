// TIFF reading through libtiff (see fdk/adapters/tiff_io.hpp); the writers
// are in tiff_writer.cpp, the libtiff plumbing both use in
// libtiff_session.cpp.
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
#include "libtiff_session.hpp"

namespace fdk {
namespace adapters {

using namespace tiff_detail;

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

}  // namespace adapters
}  // namespace fdk
