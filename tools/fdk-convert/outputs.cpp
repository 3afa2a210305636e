// fdk-convert's outputs (see outputs.hpp).
#include "outputs.hpp"

#include <fdk/adapters/tiff_io.hpp>

#include "preview.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ad = fdk::adapters;

namespace fdk_convert {

std::string fmt(const char* format, double value) {
  char b[64];
  std::snprintf(b, sizeof b, format, value);
  return b;
}

namespace {

// The names of the volume's files.
std::vector<std::string> volume_names(const Options& o, const fdk_volume& volume) {
  if (o.format == "tiff") {
    std::vector<std::string> names;
    names.reserve(static_cast<size_t>(volume.size[1]));
    for (int y = 0; y < volume.size[1]; ++y) names.push_back(ad::slice_file_name(o.prefix, y, volume.size[1]));
    return names;
  }
  if (o.format == "bigtiff" || o.format == "stack") return {"volume.tif"};
  if (o.format == "mhd") return {"volume.mhd", "volume.raw"};
  return {"volume." + o.format};
}

}  // namespace

std::vector<std::string> output_names(const Options& o, const fdk_volume& volume) {
  std::vector<std::string> names = volume_names(o, volume);
  if (o.preview) names.push_back(fdk_tools::preview_file_name());
  return names;
}

std::vector<std::string> final_outputs(const Options& o, const fdk_volume& volume) {
  const std::vector<std::string> names = volume_names(o, volume);
  if (o.format == "tiff") return {ad::join_path(o.output, names.front()), ad::join_path(o.output, names.back())};
  return {ad::join_path(o.output, names.front())};
}

void prepare_output(const Options& o, const fdk_volume& volume, const std::string& folder, OutputSetup* out) {
  ad::VolumeWriterOptions& wo = out->options;
  wo.type = o.type;
  wo.window_lo = o.window_lo;
  wo.window_hi = o.window_hi;
  wo.display_window = o.have_window;
  wo.description = "fdk-convert from '" + o.projections + "'";
  if (const char* env = std::getenv("FDK_CONVERT_FAIL_AFTER_BYTES")) {  // test hook
    out->fault.fail_after_bytes = std::strtoull(env, nullptr, 10);
    wo.fault = &out->fault;
    out->preview_fault = &out->fault;
  }
  if (std::getenv("FDK_CONVERT_FAIL_PREVIEW")) out->preview_fault = &out->preview_fault_at_once;  // test hook
  out->folder = folder;
  out->first_output = ad::join_path(folder, volume_names(o, volume).front());
}

std::unique_ptr<ad::VolumeWriter> open_writer(const Options& o, const fdk_volume& volume,
                                              const OutputSetup& setup, int y_begin, int y_end) {
  const ad::VolumeWriterOptions& wo = setup.options;
  if (o.format == "tiff") {
    if (y_end >= 0) {
      return ad::make_tiff_slice_range_writer(setup.folder, o.prefix, volume, wo, o.compression, y_begin, y_end);
    }
    return ad::make_tiff_slice_writer(setup.folder, o.prefix, volume, wo, o.compression);
  }
  if (o.format == "bigtiff") return ad::make_bigtiff_writer(setup.first_output, volume, wo, o.compression);
  if (o.format == "stack") return ad::make_imagej_stack_writer(setup.first_output, volume, wo);
  if (o.format == "nrrd") return ad::make_nrrd_writer(setup.first_output, volume, wo);
  return ad::make_metaimage_writer(setup.first_output, volume, wo);  // mha, mhd (+ volume.raw)
}

std::array<int, 3> preview_voxel(const Options& o, const fdk_volume& volume) {
  std::array<int, 3> at{-1, -1, -1};
  if (o.have_preview_at) {
    for (int a = 0; a < 3; ++a) {
      const double index = std::round((o.preview_at[a] - volume.origin[a]) / volume.spacing[a]);
      at[a] = index >= 0 && index < volume.size[a] ? static_cast<int>(index) : -1;
    }
  }
  return at;
}

std::vector<std::string> preview_caption(const Options& o, const fdk_config& config,
                                         const CaptionFacts& f) {
  static const char* kFilterNames[] = {"ram-lak", "shepp-logan", "cosine", "hamming", "hann"};
  const char* filter = o.window_kind >= 0 && o.window_kind < 5 ? kFilterNames[o.window_kind] : "?";
  const fdk_detector& detector = config.detector;
  const fdk_volume& volume = config.volume;
  return {
      "fdk " + std::string(fdk_version_string()) + ", " + (f.cuda ? "CUDA" : "CPU") + ", " +
          fmt("%.1f", f.seconds) + " s: " + std::to_string(f.views) + " views of " +
          std::to_string(detector.size[0]) + " x " + std::to_string(detector.size[1]) + " pixels of " +
          fmt("%.4g", detector.spacing[0]) + " mm, " +
          (f.have_xml ? std::string("views from an RTK geometry")
                      : fmt("%.4g", std::fabs(config.scan.arc_deg)) + " deg") +
          ", SID " + fmt("%.5g", f.first_view.sid) + " mm, SDD " + fmt("%.5g", f.first_view.sdd) + " mm",
      "volume " + std::to_string(volume.size[0]) + " x " + std::to_string(volume.size[1]) + " x " +
          std::to_string(volume.size[2]) + " voxels of " + fmt("%.4g", volume.spacing[0]) + " mm, " + filter +
          " filter" + (o.cutoff < 1 ? " cut at " + fmt("%.3g", o.cutoff) : "") +
          (f.short_scan ? ", short scan" : "") + (f.half_fan ? ", half fan" : "")};
}

}  // namespace fdk_convert
