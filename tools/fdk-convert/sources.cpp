// fdk-convert's projection sources: which reader PROJECTIONS needs.
#include "sources.hpp"

#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/adapters/image_stack.hpp>
#include <fdk/adapters/projection_folder.hpp>
#if FDK_HAVE_HDF5
#include <fdk/adapters/hdf5_stack.hpp>
#endif

#include <cctype>
#include <cstring>

namespace ad = fdk::adapters;

namespace fdk_convert {
bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  }
  return true;
}

std::unique_ptr<ad::ProjectionSource> open_projections(const Options& o) {
  ad::ImageStackOptions so;
  static_cast<ad::ProjectionOptions&>(so) = o.folder;
  const std::string pattern = o.folder.pattern;
  so.other_frames = [pattern](const std::string& path, ad::FrameAverager* avg) {
    return ad::load_calibration(path, pattern, avg);
  };
  so.other_mask = [](const std::string& path, int w, int h) { return ad::load_bad_pixel_map(path, w, h); };
  if (o.raw.given) {
    // A raw file has no header: its messages name the options that gave
    // the layout, as they were given.
    const std::string layout = "--raw " + std::to_string(o.raw.width) + "," + std::to_string(o.raw.height) + "," +
                               std::to_string(o.raw.frames) + " --raw-type " + ad::sample_type_name(o.raw.type) +
                               " --raw-offset " + std::to_string(o.raw.offset) + " --raw-endian " +
                               (o.raw.big_endian ? "big" : "little");
    return std::make_unique<ad::ImageStack>(
        ad::raw_stack_header(o.projections, o.raw.width, o.raw.height, o.raw.frames, o.raw.type,
                             o.raw.offset, o.raw.big_endian, layout),
        so);
  }
  if (ad::is_directory(o.projections)) {
    return std::make_unique<ad::ProjectionFolder>(o.projections, o.folder);
  }
  if (ends_with(o.projections, ".h5") || ends_with(o.projections, ".hdf5") ||
      ends_with(o.projections, ".hdf") || ends_with(o.projections, ".nxs")) {
#if FDK_HAVE_HDF5
    ad::Hdf5StackOptions ho;
    static_cast<ad::ProjectionOptions&>(ho) = o.folder;
    ho.other_frames = so.other_frames;
    ho.other_mask = so.other_mask;
    return std::make_unique<ad::Hdf5Stack>(o.projections, ho);
#else
    throw ad::Error(ad::ErrorKind::kUnsupported,
                    "'" + o.projections + "' is an HDF5 file: unsupported, this build has no HDF5");
#endif
  }
  if (ad::is_stack_path(o.projections)) {
    return std::make_unique<ad::ImageStack>(ad::read_stack_header(o.projections), so);
  }
  const std::string name = ad::base_name(o.projections);
  if ((ends_with(name, ".tif") || ends_with(name, ".tiff")) &&
      name.find_first_of("*?[;") == std::string::npos && ad::is_regular_file(o.projections)) {
    // One file: the folder reader restricted to its name.
    ad::ProjectionFolderOptions fo = o.folder;
    fo.calibration_pattern = o.folder.pattern;
    fo.pattern = name;
    const size_t slash = o.projections.find_last_of('/');
    return std::make_unique<ad::ProjectionFolder>(
        slash == std::string::npos ? std::string(".") : o.projections.substr(0, slash == 0 ? 1 : slash), fo);
  }
  if (!ad::is_regular_file(o.projections)) {
    throw Failure{kExitInput, "'" + o.projections + "' does not exist"};
  }
  throw Failure{kExitInput, "'" + o.projections + "' is not a folder of TIFF files, a TIFF file, a "
                            ".mha/.mhd/.nrrd/.nhdr stack, or a raw file described by --raw W,H,N --raw-type T"};
}

}  // namespace fdk_convert
