// The raw-data half of the MetaImage and NRRD writers: a header written
// first, then the voxels in (x, y, z) order, x fastest, as ITK, NumPy
// readers and rtkfdk lay a volume out. The library hands out (x, z, y)
// slabs, so each slab lands as one positioned write per z: rows y0..y1-1 at
// a given z are contiguous in the file.
#ifndef FDK_ADAPTERS_XYZ_RAW_WRITER_HPP
#define FDK_ADAPTERS_XYZ_RAW_WRITER_HPP

#include <memory>
#include <string>
#include <vector>

#include "fdk/adapters/files.hpp"
#include "fdk/adapters/volume_writer.hpp"

namespace fdk {
namespace adapters {
namespace detail {

// `header_path` gets `header`; the voxels follow it in the same file when
// `data_path` is empty, else they go to `data_path` (a .mhd + .raw pair).
// Both files appear under their final names only at commit().
std::unique_ptr<VolumeWriter> make_xyz_raw_writer(const std::string& header_path,
                                                  const std::string& header,
                                                  const std::string& data_path,
                                                  const fdk_volume& volume,
                                                  const VolumeWriterOptions& options);

// "True" when this host stores numbers most significant byte first.
bool host_is_big_endian();
// The shortest decimal text that reads back as exactly `v` (at most 17
// significant digits): 0.9, not 0.90000000000000002.
std::string exact_number(double v);
// Line breaks become spaces (header values are one line each).
std::string one_line(std::string s);

}  // namespace detail
}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_XYZ_RAW_WRITER_HPP
