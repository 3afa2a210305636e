// The calibration shared by every projection source.
#include "fdk/adapters/projection_source.hpp"

#include <cctype>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/files.hpp"

namespace fdk {
namespace adapters {

bool is_bad_pixel_list(const std::string& path) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* suf : {".txt", ".csv", ".lst"}) {
    const std::string s = suf;
    if (lower.size() >= s.size() && lower.compare(lower.size() - s.size(), s.size(), s) == 0) {
      return true;
    }
  }
  return false;
}

Calibration make_calibration(const ProjectionOptions& options, int width, int height,
                             SampleType type, const std::string& what,
                             const FrameLoader& frames, const MaskLoader& mask) {
  Calibration c;
  using Kind = ProjectionOptions::Kind;
  if (options.kind == Kind::kRaw) {
    c.raw = true;
  } else if (options.kind == Kind::kLineIntegral) {
    c.raw = false;
  } else {
    c.raw = !is_float(type) || !options.dark.empty() || !options.flat.empty() ||
            options.preprocess.i0 > 0.0;
  }
  PreprocessOptions pre = options.preprocess;
  pre.raw = c.raw;
  if (!c.raw && (!options.dark.empty() || !options.flat.empty())) {
    fail(ErrorKind::kInvalidArgument,
         "dark or flat fields were given for projections declared as line integrals");
  }
  CalibrationFrames cal;
  if (!options.dark.empty()) {
    FrameAverager avg;
    c.dark_frames = frames(options.dark, &avg);
    cal.dark = avg.mean();
    cal.dark_name = options.dark;
  }
  if (!options.flat.empty()) {
    FrameAverager avg;
    c.flat_frames = frames(options.flat, &avg);
    cal.flat = avg.mean();
    cal.flat_saturated = avg.saturated();
    cal.flat_name = options.flat;
  }
  if (c.raw && options.flat.empty() && !(pre.i0 > 0.0)) {
    fail(ErrorKind::kInvalidArgument,
         "the projections in '" + what + "' are raw intensities (" + sample_type_name(type) +
             "): give a flat field (open-beam frames) or the open-beam intensity I0");
  }
  if (!options.bad_pixels.empty()) {
    cal.bad_map = is_bad_pixel_list(options.bad_pixels)
                      ? parse_bad_pixel_list(read_text_file(options.bad_pixels), width, height,
                                             options.bad_pixels)
                      : mask(options.bad_pixels, width, height);
    cal.bad_map_name = options.bad_pixels;
  }
  c.preprocessor = std::make_unique<Preprocessor>(width, height, pre, std::move(cal));
  return c;
}

}  // namespace adapters
}  // namespace fdk
