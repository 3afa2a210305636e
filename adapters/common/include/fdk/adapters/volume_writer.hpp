// fdk/adapters/volume_writer.hpp — writing a reconstructed volume slab by
// slab, never holding it whole.
//
// The volume arrives as y planes in increasing order (the library's layout:
// x fastest, then z, then y; a y plane is one axial slice, x across and z
// down). Every writer writes under temporary names ("<name>.part") and only
// commit() gives the files their final names, so an interrupted or failed
// run leaves nothing that looks complete; discard() (or destroying the writer
// without commit) removes what was written.
//
// Formats:
//   - MetaImage (.mha, one file; or .mhd + .raw beside it) and NRRD (.nrrd,
//     one file), here, no libtiff needed: the voxels in (x, y, z) order, x
//     fastest (DimSize / sizes = nx ny nz), identity direction, origin = the
//     physical position of voxel (0, 0, 0): what rtkfdk writes for the same
//     grid, so ITK/SimpleITK give the same [z][y][x] array for both. The
//     library's (x, z, y) slabs land as one positioned write per z.
//   - TIFF slices and one multi-page file: fdk/adapters/tiff_io.hpp.
#ifndef FDK_ADAPTERS_VOLUME_WRITER_HPP
#define FDK_ADAPTERS_VOLUME_WRITER_HPP

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fdk/adapters/files.hpp"
#include "fdk/fdk.h"

namespace fdk {
namespace adapters {

enum class VoxelType {
  kFloat32,  // the values as reconstructed
  kUInt16,   // window_lo -> 0 and window_hi -> 65535, clamped, NaN -> 0
};

struct VolumeWriterOptions {
  VoxelType type = VoxelType::kFloat32;
  double window_lo = 0.0, window_hi = 1.0;  // for kUInt16 (lo < hi)
  // The window is also the display range written for viewers (ImageJ's
  // min/max) of float32 outputs; else TIFF writers choose one (tiff_io.hpp).
  bool display_window = false;
  std::string unit = "mm";                  // length unit, for the metadata
  std::string description;                  // free text stored with the data
  WriteFaultInjection* fault = nullptr;     // test hook (files.hpp)
};

class VolumeWriter {
 public:
  virtual ~VolumeWriter() = default;
  // Planes [y_begin, y_end): (y_end - y_begin) * size_z * size_x floats.
  // Must continue exactly where the previous call ended.
  virtual void write_planes(int y_begin, int y_end, const float* data) = 0;
  // After the last plane: flushes and renames everything to its final name.
  virtual void commit() = 0;
  virtual void discard() noexcept = 0;
  // The final paths (for messages); slice stacks list their first and last.
  virtual std::vector<std::string> outputs() const = 0;
};

// A MetaImage at `path`: one file (.mha), or, when `path` ends in .mhd,
// that header and the voxels in the .raw of the same name.
std::unique_ptr<VolumeWriter> make_metaimage_writer(const std::string& path,
                                                    const fdk_volume& volume,
                                                    const VolumeWriterOptions& options);
// A NRRD file at `path` (.nrrd): raw encoding, LPS space.
std::unique_ptr<VolumeWriter> make_nrrd_writer(const std::string& path, const fdk_volume& volume,
                                               const VolumeWriterOptions& options);

// The header texts (exposed for tests); `data_file` is ElementDataFile.
std::string metaimage_header(const fdk_volume& volume, const VolumeWriterOptions& options,
                             const std::string& data_file = "LOCAL");
std::string nrrd_header(const fdk_volume& volume, const VolumeWriterOptions& options);

// Float to uint16 through the window (rounding to nearest, clamped).
void to_uint16(const float* in, size_t count, double lo, double hi, uint16_t* out);

// Checks what every writer needs: volume sizes >= 1, spacings > 0, window.
void check_volume_writer_arguments(const fdk_volume& volume,
                                   const VolumeWriterOptions& options);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_VOLUME_WRITER_HPP
