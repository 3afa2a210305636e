// fdk/adapters/projection_source.hpp — what fdk-convert needs of a set of
// projections, whatever holds them (a TIFF folder, a MetaImage/NRRD stack,
// a raw file): their count and size, the pixel pitch and detector origin
// when the files state them, and every projection as line integrals.
//
// Every source turns its frames into line integrals through the same
// Preprocessor, built by make_calibration() from the same options, so the
// dark/flat/bad-pixel rules do not depend on the file format.
#ifndef FDK_ADAPTERS_PROJECTION_SOURCE_HPP
#define FDK_ADAPTERS_PROJECTION_SOURCE_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fdk/adapters/correction.hpp"
#include "fdk/adapters/sample_type.hpp"

namespace fdk {
namespace adapters {

// The options every source shares.
struct ProjectionOptions {
  enum class Kind { kAuto, kRaw, kLineIntegral };
  Kind kind = Kind::kAuto;
  std::string dark, flat;   // files or folders; empty = none
  std::string bad_pixels;   // mask image or text list; empty = none
  // raw is decided by `kind`; i0, dark_level, min_transmission, crop,
  // binning and flips are used as given.
  PreprocessOptions preprocess;
};

class ProjectionSource {
 public:
  // Per-thread state of read(); each source derives its own.
  struct Workspace {
    virtual ~Workspace() = default;
  };

  virtual ~ProjectionSource() = default;

  virtual int count() const = 0;
  virtual int raw_width() const = 0;
  virtual int raw_height() const = 0;
  int width() const { return preprocessor().out_width(); }  // after crop and binning
  int height() const { return preprocessor().out_height(); }
  virtual SampleType sample_type() const = 0;
  // The raw frames' pixel pitch stated by the file, in millimetres ({0, 0}
  // when it states none).
  virtual std::array<double, 2> raw_pixel_size_mm() const = 0;
  // The detector position (u, v) of raw pixel (0, 0) stated by the file, in
  // millimetres, as RTK reads an image's origin; none for most formats.
  virtual std::optional<std::array<double, 2>> raw_detector_origin_mm() const {
    return std::nullopt;
  }
  // Where the pitch and origin come from, for messages ("the TIFF
  // resolution tags", "the MetaImage header").
  virtual std::string geometry_source() const = 0;
  virtual bool raw() const = 0;           // frames are intensities (-log applied)
  virtual int dark_frames() const = 0;    // frames averaged (0 = none)
  virtual int flat_frames() const = 0;
  virtual const Preprocessor& preprocessor() const = 0;
  // Names projection `index` for messages ("dir/p10.tif", "s.mha frame 3").
  virtual std::string describe(int index) const = 0;

  virtual std::unique_ptr<Workspace> make_workspace() const = 0;
  // Projection `index` as width() x height() line integrals into `out`.
  // Returns the number of clamped pixels. Thread-safe with one Workspace
  // (from make_workspace()) per thread. Throws Error(kInput) naming the
  // file and the frame.
  virtual size_t read(int index, float* out, Workspace& workspace) const = 0;
};

// How a source loads a calibration file: averages its frames into
// `averager` and returns their count.
using FrameLoader = std::function<int(const std::string& path, FrameAverager* averager)>;
// How a source loads a bad-pixel mask image of width x height (nonzero = bad).
using MaskLoader =
    std::function<std::vector<uint8_t>(const std::string& path, int width, int height)>;

struct Calibration {
  bool raw = false;
  int dark_frames = 0, flat_frames = 0;
  std::unique_ptr<Preprocessor> preprocessor;
};

// Decides raw vs line integrals (kAuto: raw when the samples are integers
// or a dark, flat or I0 is given), loads dark, flat and bad-pixel map
// (text lists .txt/.csv/.lst are read here, other files through the
// loaders) and builds the Preprocessor. `what` names the projections in
// messages. Throws as ProjectionFolder documents.
Calibration make_calibration(const ProjectionOptions& options, int width, int height,
                             SampleType type, const std::string& what,
                             const FrameLoader& frames, const MaskLoader& mask);

// True for a text bad-pixel list (.txt, .csv, .lst).
bool is_bad_pixel_list(const std::string& path);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_PROJECTION_SOURCE_HPP
