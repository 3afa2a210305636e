// fdk/adapters/tiff_io.hpp — TIFF in and out through libtiff (built only
// when libtiff is found: FDK_WITH_TIFF).
//
// Reading: one sample per pixel of unsigned 8, 16 or 32 bits or 32-bit
// float, in strips or tiles, any compression libtiff decodes, either byte
// order, one or many pages (directories) per file. libtiff's messages are
// captured (never printed) and become the Error's message, with the file
// name and the page.
//
// Writing: float32 or uint16 pages, strips or tiles, uncompressed, LZW or
// Deflate, classic TIFF or BigTIFF, always through OutputFile (temporary
// name, renamed on commit).
#ifndef FDK_ADAPTERS_TIFF_IO_HPP
#define FDK_ADAPTERS_TIFF_IO_HPP

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fdk/adapters/files.hpp"
#include "fdk/adapters/sample_type.hpp"
#include "fdk/adapters/volume_writer.hpp"
#include "fdk/fdk.h"

namespace fdk {
namespace adapters {


struct TiffPageInfo {
  int width = 0, height = 0;
  SampleType type = SampleType::kUInt16;
  bool tiled = false;
  // The pixel pitch from the resolution tags (ResolutionUnit centimetre or
  // inch), in millimetres; 0 when the page does not say.
  double pixel_size_x_mm = 0.0, pixel_size_y_mm = 0.0;
};

// Pages larger than this many pixels are refused (2^28: 16384 x 16384).
constexpr uint64_t kDefaultMaxTiffPixels = uint64_t(1) << 28;
// Files with more pages (IFDs) than this are refused as corrupt.
constexpr uint32_t kMaxTiffPages = uint32_t(1) << 20;

class TiffReader {
 public:
  // Throws Error(kInput) naming the file when it cannot be opened or is not
  // a TIFF.
  explicit TiffReader(const std::string& path,
                      uint64_t max_pixels = kDefaultMaxTiffPixels);
  // Reads from memory (`data` must outlive the reader); `name` is used in
  // messages.
  TiffReader(const void* data, size_t size, const std::string& name,
             uint64_t max_pixels = kDefaultMaxTiffPixels);
  ~TiffReader();
  TiffReader(const TiffReader&) = delete;
  TiffReader& operator=(const TiffReader&) = delete;

  const std::string& name() const;
  // Number of pages (walks the directory chain once). Throws Error(kInput)
  // when the chain loops back on itself or holds more than kMaxTiffPages.
  int page_count();
  // Checks and describes page `page`; throws Error(kInput) for what cannot
  // be read (naming the file, the page and the problem) and
  // Error(kUnsupported) for valid TIFFs of other kinds (RGB, signed, 64-bit).
  TiffPageInfo page_info(int page);
  // Decodes page `page` into width * height floats (row-major, first row at
  // the top of the image, as stored).
  void read_page(int page, float* out);
  std::vector<float> read_page(int page, TiffPageInfo* info = nullptr);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

struct TiffWriteOptions {
  enum class Compression { kNone, kLzw, kDeflate };
  Compression compression = Compression::kNone;
  bool tiled = false;
  int tile_size = 64;           // multiple of 16
  int rows_per_strip = 0;       // 0: about 64 KiB strips
  bool bigtiff = false;
  bool big_endian = false;      // byte order of the file (tests)
  // Resolution tags: pixel sizes in millimetres (0 = none). Stored as
  // pixels per centimetre with ResolutionUnit = centimetre, or, with
  // resolution_per_unit, as pixels per unit with ResolutionUnit = none, as
  // ImageJ writes them (the unit is then the ImageJ description's).
  double pixel_size_x_mm = 0.0, pixel_size_y_mm = 0.0;
  bool resolution_per_unit = false;
  std::string description;      // ImageDescription
  WriteFaultInjection* fault = nullptr;
};

// A TIFF file written page by page.
class TiffWriter {
 public:
  TiffWriter(const std::string& path, const TiffWriteOptions& options);
  ~TiffWriter();  // aborts unless committed
  TiffWriter(const TiffWriter&) = delete;
  TiffWriter& operator=(const TiffWriter&) = delete;

  // Appends a page of `width` x `height` samples of `type` (raw bytes of
  // that type, rows contiguous). `page_number`/`page_total` set PageNumber
  // when page_total > 0.
  void add_page(int width, int height, SampleType type, const void* samples,
                int page_number = 0, int page_total = 0);
  // Flushes, closes, renames to the final name (or, with defer_rename, keeps
  // the temporary name until rename_to_final()).
  void commit(bool defer_rename = false);
  void rename_to_final();
  void discard() noexcept;
  const std::string& path() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Convenience: writes one file of float32 pages (tests, the simulator).
void write_tiff_float(const std::string& path, int width, int height,
                      const std::vector<const float*>& pages,
                      const TiffWriteOptions& options = {});

// Volume writers (see volume_writer.hpp):
//  - a stack of single-page TIFFs "<prefix>_<y>.tif" in `folder`, one per y
//    plane (x across, z down), y zero-padded to at least 4 digits;
//  - one multi-page BigTIFF `path`, page y = plane y;
//  - one ImageJ stack `path`, page y = plane y (make_imagej_stack_writer).
// All carry ImageJ's metadata (imagej_description): X/YResolution = 1 /
// the x and z voxel sizes in pixels per unit (ResolutionUnit none), and an
// ImageDescription with unit, spacing (the y step), origin, display range,
// then fdk's grid as fdk_* keys. Display range: the window when
// display_window or uint16 (0..65535); else a slice's own finite min..max,
// the ImageJ stack's 0.5..99.5 percentiles (of a sample of at most about a
// million voxels), and none for the BigTIFF (viewers then compute one).
std::unique_ptr<VolumeWriter> make_tiff_slice_writer(const std::string& folder,
                                                     const std::string& prefix,
                                                     const fdk_volume& volume,
                                                     const VolumeWriterOptions& options,
                                                     TiffWriteOptions::Compression compression =
                                                         TiffWriteOptions::Compression::kNone);
// Slices [y_begin, y_end) only, named and described as in the whole stack:
// one process's share of a stack that several write (fdk-convert over MPI
// ranks). write_planes starts at y_begin; commit() needs every plane of the
// range.
std::unique_ptr<VolumeWriter> make_tiff_slice_range_writer(const std::string& folder,
                                                           const std::string& prefix,
                                                           const fdk_volume& volume,
                                                           const VolumeWriterOptions& options,
                                                           TiffWriteOptions::Compression compression,
                                                           int y_begin, int y_end);
std::unique_ptr<VolumeWriter> make_bigtiff_writer(const std::string& path,
                                                  const fdk_volume& volume,
                                                  const VolumeWriterOptions& options,
                                                  TiffWriteOptions::Compression compression =
                                                      TiffWriteOptions::Compression::kNone);
// One multi-page file that ImageJ itself opens as a calibrated stack: a
// classic TIFF, uncompressed, all pixel data contiguous (ImageJ reads
// stacks with `images=` that way), written without libtiff; the directories
// follow the data and are written at commit. When the file would reach
// 4 GiB it is a BigTIFF from make_bigtiff_writer instead (with the same
// description; ImageJ cannot open BigTIFF, Fiji's Bio-Formats can).
// `classic_limit` is that 4 GiB (tests lower it).
std::unique_ptr<VolumeWriter> make_imagej_stack_writer(const std::string& path,
                                                       const fdk_volume& volume,
                                                       const VolumeWriterOptions& options,
                                                       uint64_t classic_limit = uint64_t(1) << 32);
// The size of the classic ImageJ stack for `volume` (for the choice above).
uint64_t imagej_stack_bytes(const fdk_volume& volume, const VolumeWriterOptions& options);

// ImageJ's ImageDescription for `images` y planes from plane `first_y`; no
// min/max when display_max <= display_min or either is not finite.
std::string imagej_description(const fdk_volume& volume, const VolumeWriterOptions& options,
                               int first_y, int images, double display_min, double display_max);

// The name of slice y of a stack of `planes` planes: prefix_0042.tif.
std::string slice_file_name(const std::string& prefix, int y, int planes);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_TIFF_IO_HPP
