// Reading the frames of an image stack (see fdk/adapters/image_stack.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/image_stack.hpp"

#if FDK_HAVE_ZLIB
#include <zlib.h>
#endif

namespace fdk {
namespace adapters {
namespace {

bool host_is_big_endian() {
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 0;
}

template <typename T>
void convert(const unsigned char* src, size_t count, bool swap, float* dst) {
  for (size_t i = 0; i < count; ++i) {
    unsigned char b[sizeof(T)];
    std::memcpy(b, src + i * sizeof(T), sizeof(T));
    if (swap) std::reverse(b, b + sizeof(T));
    T v;
    std::memcpy(&v, b, sizeof(T));
    dst[i] = static_cast<float>(v);
  }
}

void convert_samples(SampleType type, const unsigned char* src, size_t count, bool swap,
                     float* dst) {
  switch (type) {
    case SampleType::kUInt8: convert<uint8_t>(src, count, false, dst); break;
    case SampleType::kInt8: convert<int8_t>(src, count, false, dst); break;
    case SampleType::kUInt16: convert<uint16_t>(src, count, swap, dst); break;
    case SampleType::kInt16: convert<int16_t>(src, count, swap, dst); break;
    case SampleType::kUInt32: convert<uint32_t>(src, count, swap, dst); break;
    case SampleType::kInt32: convert<int32_t>(src, count, swap, dst); break;
    case SampleType::kFloat32: convert<float>(src, count, swap, dst); break;
    case SampleType::kFloat64: convert<double>(src, count, swap, dst); break;
  }
}

std::string frame_name(const StackHeader& h, int index) {
  return h.size[2] > 1 ? "'" + h.data_path + "' frame " + std::to_string(index)
                       : "'" + h.data_path + "'";
}

}  // namespace

// ---- StackFrameReader -------------------------------------------------------------------

struct StackFrameReader::Cursor::State {
  std::vector<unsigned char> bytes;  // one frame's samples as stored
#if FDK_HAVE_ZLIB
  z_stream z{};
  bool open = false;
  uint64_t in_offset = 0;       // next compressed byte to read from the file
  std::vector<unsigned char> in;
  int next_frame = 0;           // the frame the stream is positioned at
  bool ended = false;
  ~State() {
    if (open) inflateEnd(&z);
  }
#endif
};

StackFrameReader::Cursor::Cursor() : state(new State) {}
StackFrameReader::Cursor::~Cursor() = default;

struct StackFrameReader::Impl {
  StackHeader h;
  int fd = -1;
  bool swap = false;
  ~Impl() {
    if (fd >= 0) ::close(fd);
  }

  void pread_all(unsigned char* dst, size_t n, uint64_t offset, int index) const {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) fail(ErrorKind::kInput, frame_name(h, index) + ": " + std::strerror(errno));
      if (r == 0) fail(ErrorKind::kInput, frame_name(h, index) + ": the file is truncated");
      done += static_cast<size_t>(r);
    }
  }

#if FDK_HAVE_ZLIB
  void restart(Cursor::State& c) const {
    if (c.open) inflateEnd(&c.z);
    c.open = false;
    c.z = z_stream{};
    // 15 + 32: zlib (MetaImage) or gzip (NRRD) headers, detected.
    if (inflateInit2(&c.z, 15 + 32) != Z_OK) {
      fail(ErrorKind::kInput, "'" + h.data_path + "': zlib cannot start a stream");
    }
    c.open = true;
    c.in_offset = static_cast<uint64_t>(h.file_skip);
    c.next_frame = 0;
    c.ended = false;
    c.in.resize(1u << 18);
    c.z.avail_in = 0;
    if (h.stream_skip) inflate_into(c, nullptr, h.stream_skip, 0);
  }

  // Inflates exactly `n` bytes (into `dst`, or dropped when null).
  void inflate_into(Cursor::State& c, unsigned char* dst, uint64_t n, int index) const {
    unsigned char sink[1u << 16];
    while (n > 0) {
      const size_t chunk = dst ? static_cast<size_t>(std::min<uint64_t>(n, 1u << 30))
                               : static_cast<size_t>(std::min<uint64_t>(n, sizeof sink));
      c.z.next_out = dst ? dst : sink;
      c.z.avail_out = static_cast<uInt>(chunk);
      while (c.z.avail_out > 0) {
        if (c.ended) {
          fail(ErrorKind::kInput, frame_name(h, index) + ": the compressed data ends early");
        }
        if (c.z.avail_in == 0) {
          const ssize_t r = ::pread(fd, c.in.data(), c.in.size(), static_cast<off_t>(c.in_offset));
          if (r < 0 && errno == EINTR) continue;
          if (r < 0) fail(ErrorKind::kInput, frame_name(h, index) + ": " + std::strerror(errno));
          if (r == 0) {
            fail(ErrorKind::kInput, frame_name(h, index) + ": the compressed data is truncated");
          }
          c.in_offset += static_cast<uint64_t>(r);
          c.z.next_in = c.in.data();
          c.z.avail_in = static_cast<uInt>(r);
        }
        const int rc = inflate(&c.z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) {
          c.ended = true;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
          fail(ErrorKind::kInput, frame_name(h, index) + ": corrupt compressed data (zlib: " +
                                      (c.z.msg ? c.z.msg : "error " + std::to_string(rc)) + ")");
        }
      }
      n -= chunk;
      if (dst) dst += chunk;
    }
  }
#endif
};

StackFrameReader::StackFrameReader(StackHeader header) : impl_(new Impl) {
  impl_->h = std::move(header);
  const StackHeader& h = impl_->h;
#if !FDK_HAVE_ZLIB
  if (h.compressed) {
    fail(ErrorKind::kUnsupported, "'" + h.header_path +
                                      "' holds compressed data: unsupported, this build has no zlib");
  }
#endif
  impl_->fd = ::open(h.data_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (impl_->fd < 0) fail(ErrorKind::kInput, "'" + h.data_path + "': " + std::strerror(errno));
  impl_->swap = h.big_endian != host_is_big_endian() && sample_bytes(h.type) > 1;
}

StackFrameReader::~StackFrameReader() = default;

const StackHeader& StackFrameReader::header() const { return impl_->h; }
int StackFrameReader::frames() const { return static_cast<int>(impl_->h.size[2]); }

std::unique_ptr<StackFrameReader::Cursor> StackFrameReader::make_cursor() const {
  return std::make_unique<Cursor>();
}

void StackFrameReader::read(int index, float* out, Cursor& cursor) const {
  Cursor::State& c = *cursor.state;
  const StackHeader& h = impl_->h;
  if (index < 0 || index >= frames()) {
    fail(ErrorKind::kInvalidArgument, "frame " + std::to_string(index) + " outside [0, " +
                                          std::to_string(frames()) + ") of '" + h.header_path + "'");
  }
  const uint64_t bytes = h.frame_bytes();
  c.bytes.resize(static_cast<size_t>(bytes));
  if (!h.compressed) {
    impl_->pread_all(c.bytes.data(), c.bytes.size(),
                     static_cast<uint64_t>(h.file_skip) + bytes * static_cast<uint64_t>(index), index);
  } else {
#if FDK_HAVE_ZLIB
    try {
      if (!c.open || index < c.next_frame) impl_->restart(c);
      if (index > c.next_frame) {
        impl_->inflate_into(c, nullptr, bytes * static_cast<uint64_t>(index - c.next_frame), index);
      }
      c.next_frame = index;
      impl_->inflate_into(c, c.bytes.data(), bytes, index);
      c.next_frame = index + 1;
    } catch (const Error&) {
      if (c.open) inflateEnd(&c.z);
      c.open = false;  // restart next time
      throw;
    }
#endif
  }
  convert_samples(h.type, c.bytes.data(), static_cast<size_t>(h.frame_samples()), impl_->swap, out);
}

// ---- ImageStack --------------------------------------------------------------------------

namespace {

struct StackWorkspace : ProjectionSource::Workspace {
  std::unique_ptr<StackFrameReader::Cursor> cursor;
  std::vector<float> raw, scratch;
};

bool near(double a, double b) { return std::fabs(a - b) < 1e-6; }

}  // namespace

struct ImageStack::Impl {
  std::unique_ptr<StackFrameReader> reader;
  Calibration cal;
};

ImageStack::ImageStack(const StackHeader& header, const ImageStackOptions& options)
    : impl_(new Impl) {
  const StackHeader& h = header;
  if (h.has_direction) {
    const auto& d = h.direction;
    if (!(near(d[0][0], 1) && near(d[0][1], 0) && near(d[0][2], 0) && near(d[1][0], 0) &&
          near(d[1][1], 1) && near(d[1][2], 0))) {
      fail(ErrorKind::kUnsupported,
           "'" + h.header_path + "': its direction matrix (" +
               (h.format == "NRRD" ? std::string("space directions") : std::string("TransformMatrix")) +
               ") turns or flips the detector axes; only projections whose first two axes are the "
               "physical x and y axes are read");
    }
  }
  check_detector_geometry(h);
  impl_->reader = std::make_unique<StackFrameReader>(header);
  const FrameLoader frames = [&](const std::string& path, FrameAverager* avg) {
    if (is_stack_path(path)) return load_stack_frames(path, avg);
    if (options.other_frames) return options.other_frames(path, avg);
    fail(ErrorKind::kUnsupported, "'" + path + "' is not a MetaImage or NRRD file");
  };
  const MaskLoader mask = [&](const std::string& path, int w, int hh) {
    if (is_stack_path(path)) return load_stack_mask(path, w, hh);
    if (options.other_mask) return options.other_mask(path, w, hh);
    fail(ErrorKind::kUnsupported, "'" + path + "' is not a MetaImage or NRRD file or a text list");
  };
  impl_->cal = make_calibration(options, raw_width(), raw_height(), h.type, h.header_path, frames, mask);
}

ImageStack::~ImageStack() = default;

const StackHeader& ImageStack::header() const { return impl_->reader->header(); }
int ImageStack::count() const { return impl_->reader->frames(); }
int ImageStack::raw_width() const { return static_cast<int>(header().size[0]); }
int ImageStack::raw_height() const { return static_cast<int>(header().size[1]); }
SampleType ImageStack::sample_type() const { return header().type; }
std::array<double, 2> ImageStack::raw_pixel_size_mm() const {
  if (!header().has_spacing) return {0.0, 0.0};
  return {header().spacing[0], header().spacing[1]};
}
std::optional<std::array<double, 2>> ImageStack::raw_detector_origin_mm() const {
  if (!header().has_origin) return std::nullopt;
  return std::array<double, 2>{header().origin[0], header().origin[1]};
}
std::string ImageStack::geometry_source() const { return "the " + header().format + " header"; }
bool ImageStack::raw() const { return impl_->cal.raw; }
int ImageStack::dark_frames() const { return impl_->cal.dark_frames; }
int ImageStack::flat_frames() const { return impl_->cal.flat_frames; }
const Preprocessor& ImageStack::preprocessor() const { return *impl_->cal.preprocessor; }

std::string ImageStack::describe(int index) const { return frame_name(header(), index); }

std::unique_ptr<ProjectionSource::Workspace> ImageStack::make_workspace() const {
  auto ws = std::make_unique<StackWorkspace>();
  ws->cursor = impl_->reader->make_cursor();
  return ws;
}

size_t ImageStack::read(int index, float* out, Workspace& workspace) const {
  auto* ws = dynamic_cast<StackWorkspace*>(&workspace);
  if (!ws) fail(ErrorKind::kInvalidArgument, "ImageStack::read: a workspace of another source");
  ws->raw.resize(static_cast<size_t>(header().frame_samples()));
  impl_->reader->read(index, ws->raw.data(), *ws->cursor);
  try {
    return impl_->cal.preprocessor->process(ws->raw.data(), static_cast<size_t>(raw_width()), out,
                                            ws->scratch);
  } catch (const Error& e) {
    fail(e.kind(), describe(index) + ": " + e.what());
  }
}

int load_stack_frames(const std::string& path, FrameAverager* averager) {
  StackFrameReader reader(read_stack_header(path));
  const StackHeader& h = reader.header();
  auto cursor = reader.make_cursor();
  std::vector<float> frame(static_cast<size_t>(h.frame_samples()));
  for (int i = 0; i < reader.frames(); ++i) {
    reader.read(i, frame.data(), *cursor);
    averager->add(frame.data(), static_cast<int>(h.size[0]), static_cast<int>(h.size[1]),
                  saturation_level(h.type), frame_name(h, i));
  }
  return reader.frames();
}

std::vector<uint8_t> load_stack_mask(const std::string& path, int width, int height) {
  StackFrameReader reader(read_stack_header(path));
  const StackHeader& h = reader.header();
  if (h.size[0] != width || h.size[1] != height) {
    fail(ErrorKind::kInput, "bad-pixel map '" + path + "' is " + std::to_string(h.size[0]) + " x " +
                                std::to_string(h.size[1]) + " pixels but the projections are " +
                                std::to_string(width) + " x " + std::to_string(height));
  }
  auto cursor = reader.make_cursor();
  std::vector<float> frame(static_cast<size_t>(h.frame_samples()));
  reader.read(0, frame.data(), *cursor);
  std::vector<uint8_t> map(frame.size());
  for (size_t i = 0; i < frame.size(); ++i) map[i] = frame[i] != 0.0f ? 1 : 0;
  return map;
}

}  // namespace adapters
}  // namespace fdk
