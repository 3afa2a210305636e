// fdk/adapters/image_stack.hpp — projections stored as one 3D image stack:
// MetaImage (.mha, or .mhd + data file), NRRD (.nrrd, or .nhdr + data
// file), or a raw file whose layout is given by the caller (width, height,
// frames, sample type, header bytes, byte order).
//
// The stack's axes are (u, v, view): each frame of u x v samples is one
// projection; a 2D image is one projection. Frames are read lazily, one at
// a time (pread; a compressed stream is inflated in order, restarting only
// when a reader goes backwards), so memory stays at a few frames whatever
// the stack's size.
//
// Headers are parsed strictly: what would change the meaning of the samples
// and is not supported (several channels, ASCII or bzip2 encodings, file
// lists, non-spatial NRRD kinds, line skips, dimensions other than 2 and 3)
// is refused naming the key; sizes that overflow or that the file cannot
// hold are refused naming the file. See docs/ADAPTERS.md.
#ifndef FDK_ADAPTERS_IMAGE_STACK_HPP
#define FDK_ADAPTERS_IMAGE_STACK_HPP

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "fdk/adapters/projection_source.hpp"
#include "fdk/fdk.h"

namespace fdk {
namespace adapters {

// The largest frame (2^28 pixels, as for TIFF) and the most frames (2^24).
constexpr uint64_t kMaxStackFramePixels = uint64_t(1) << 28;
constexpr uint64_t kMaxStackFrames = uint64_t(1) << 24;

struct StackHeader {
  std::string header_path;  // the file named by the user
  std::string data_path;    // where the samples are (the same file if attached)
  std::string format;       // "MetaImage", "NRRD" or "raw"
  int dims = 3;             // 2 or 3
  std::array<int64_t, 3> size{{1, 1, 1}};  // samples along each axis (1 beyond dims)
  SampleType type = SampleType::kUInt16;
  bool big_endian = false;
  bool compressed = false;  // zlib or gzip stream
  // Bytes of the data file before the samples (or the compressed stream);
  // -1 = the samples end the file (MetaImage HeaderSize -1, NRRD byte skip -1).
  int64_t file_skip = 0;
  // Bytes to drop at the start of the decompressed stream (NRRD byte skip
  // with gzip).
  uint64_t stream_skip = 0;
  // Physical spacing, origin (centre of sample 0) and axis directions
  // (direction[a] is axis a's unit vector) in ITK's frame, when given.
  bool has_spacing = false, has_origin = false, has_direction = false;
  std::array<double, 3> spacing{{1, 1, 1}}, origin{{0, 0, 0}};
  std::array<std::array<double, 3>, 3> direction{{{{1, 0, 0}}, {{0, 1, 0}}, {{0, 0, 1}}}};
  // Where the size, spacing and origin came from (the header's keys:
  // "DimSize", "ElementSpacing", "'space origin'", ...), so that a value
  // refused later still names its key.
  std::string size_key, spacing_key, origin_key;
  // A raw file's layout as the caller gave it ("--raw 512,512,360
  // --raw-type uint16 ..."): a raw file has no header, so messages name
  // this instead of "its header". Empty for MetaImage and NRRD.
  std::string layout_name;

  uint64_t frame_samples() const { return static_cast<uint64_t>(size[0]) * size[1]; }
  uint64_t frame_bytes() const { return frame_samples() * sample_bytes(type); }
};

// .mha, .mhd, .nrrd, .nhdr (any case).
bool is_stack_path(const std::string& path);

// Parses a header from the first bytes of its file (`head`, which may hold
// data after the header). Throws Error(kInput) naming `path` and the key or
// line, Error(kUnsupported) naming the key for what is valid but not read.
// The data file is resolved relative to the header's folder; file_skip of
// an attached stack is the header's length. Sizes are checked against the
// limits but not yet against the data file.
StackHeader parse_stack_header(const std::string& head, const std::string& path);
// Reads the header of a stack file (by its extension) and checks that the
// data file exists and holds the samples (uncompressed: exactly enough
// bytes after file_skip; -1 resolved).
StackHeader read_stack_header(const std::string& path);
// The grid of a 3D volume file (fdk-convert --like, as rtkfdk's): size,
// spacing and origin along the physical x, y, z axes, from the header alone
// (the data file need not exist). A direction matrix that permutes the
// axes (fdk's own MetaImage writes x, z, y) is followed; one that flips or
// rotates them is refused naming the key (Error(kUnsupported)). The
// limits are a volume's, not a projection frame's: 1 to 65536 voxels per
// axis (DimSize / sizes), voxel sizes within [1e-6, 1e6] and the origin
// within [-1e9, 1e9] mm (fdk.h), else Error(kInput) naming the key.
fdk_volume read_volume_grid(const std::string& path);
// The stated detector pitch (first two spacings) and origin (first two
// origin values) within the library's ranges (fdk.h: [1e-6, 1e6] and
// [-1e9, 1e9] mm); else Error(kInput) naming the file and the key. Checked
// even when a flag overrides them: a header stating such values is damaged.
void check_detector_geometry(const StackHeader& header);
// A raw file of `frames` frames of width x height samples after
// `header_bytes` bytes, checked against the file's length as above.
// `layout_name` is how the caller gave the layout (fdk-convert: "--raw
// W,H,N --raw-type T ..."): messages name it, since a raw file has no
// header. Sizes beyond the reader's limits are Error(kInvalidArgument).
StackHeader raw_stack_header(const std::string& path, int64_t width, int64_t height,
                             int64_t frames, SampleType type, uint64_t header_bytes,
                             bool big_endian, const std::string& layout_name = "");
// "uint16", "float32", ... (as sample_type_name) to a type; false if unknown.
bool parse_sample_type(const std::string& name, SampleType* type);

struct ImageStackOptions : ProjectionOptions {
  // Dark/flat files and mask images that are not stacks (TIFF) go through
  // these; unset = refused as unsupported.
  FrameLoader other_frames;
  MaskLoader other_mask;
};

class ImageStack : public ProjectionSource {
 public:
  // Checks the header (see above), that the u and v axes are the physical x
  // and y axes (a direction matrix that rotates or flips them is refused),
  // and loads the calibration. Throws Error.
  ImageStack(const StackHeader& header, const ImageStackOptions& options);
  ~ImageStack() override;

  int count() const override;
  int raw_width() const override;
  int raw_height() const override;
  SampleType sample_type() const override;
  std::array<double, 2> raw_pixel_size_mm() const override;
  std::optional<std::array<double, 2>> raw_detector_origin_mm() const override;
  std::string geometry_source() const override;
  bool raw() const override;
  int dark_frames() const override;
  int flat_frames() const override;
  const Preprocessor& preprocessor() const override;
  std::string describe(int index) const override;
  std::unique_ptr<Workspace> make_workspace() const override;
  size_t read(int index, float* out, Workspace& workspace) const override;

  const StackHeader& header() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads frames of a stack as floats, lazily (the engine of ImageStack,
// also used for calibration files).
class StackFrameReader {
 public:
  explicit StackFrameReader(StackHeader header);
  ~StackFrameReader();
  StackFrameReader(const StackFrameReader&) = delete;
  StackFrameReader& operator=(const StackFrameReader&) = delete;

  const StackHeader& header() const;
  int frames() const;
  // Per-thread state (a decompression stream).
  struct Cursor {
    Cursor();
    ~Cursor();
    struct State;
    std::unique_ptr<State> state;
  };
  std::unique_ptr<Cursor> make_cursor() const;
  // Frame `index` as frame_samples() floats. Thread-safe with one cursor
  // per thread. Throws Error(kInput) naming the file and the frame.
  void read(int index, float* out, Cursor& cursor) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Averages every frame of a stack file (a dark or flat field); returns the
// frame count.
int load_stack_frames(const std::string& path, FrameAverager* averager);
// The first frame of a stack file as a bad-pixel mask (nonzero = bad).
std::vector<uint8_t> load_stack_mask(const std::string& path, int width, int height);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_IMAGE_STACK_HPP
