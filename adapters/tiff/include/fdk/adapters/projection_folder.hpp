// fdk/adapters/projection_folder.hpp — a folder of TIFF projections as a
// sequence of line-integral images.
//
// The folder's files matching the pattern (default "*.tif;*.tiff", case
// insensitive, hidden files skipped) are taken in natural order (p2.tif
// before p10.tif); every page of a multi-page file is one projection, in
// page order. Every page of every file is checked when the folder is opened:
// all must share one size and sample type, so a stray file fails before any
// reconstruction starts, with its name.
//
// Dark and flat fields are each a file (all its pages) or a folder (all its
// matching files and pages), averaged; a MetaImage or NRRD file (all its
// frames) also serves. A bad-pixel map is a TIFF, MetaImage or NRRD image of
// the raw frame size (nonzero = bad) or a text list of "x y" lines (.txt,
// .csv, .lst). Then correction.hpp's Preprocessor turns every frame into line
// integrals.
//
// Whether frames are raw intensities: `kind` kRaw or kLineIntegral, or
// kAuto: raw when the samples are integers or when a dark, flat or I0 is
// given; float samples without any of them are line integrals.
#ifndef FDK_ADAPTERS_PROJECTION_FOLDER_HPP
#define FDK_ADAPTERS_PROJECTION_FOLDER_HPP

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "fdk/adapters/correction.hpp"
#include "fdk/adapters/projection_source.hpp"
#include "fdk/adapters/tiff_io.hpp"

namespace fdk {
namespace adapters {

struct ProjectionFolderOptions : ProjectionOptions {
  std::string pattern = "*.tif;*.tiff";
  // The files of dark and flat folders; empty = `pattern`. (fdk-convert
  // reads one TIFF file as a folder whose pattern is that file's name.)
  std::string calibration_pattern;
};

class ProjectionFolder : public ProjectionSource {
 public:
  // Lists, checks and loads the calibration. Throws Error(kInput) naming
  // the file and the problem (no projections, mixed sizes or sample types,
  // unreadable or corrupt files, dark/flat of another size, an unusable
  // flat field), Error(kInvalidArgument) for bad options.
  ProjectionFolder(const std::string& folder, const ProjectionFolderOptions& options);
  ~ProjectionFolder() override;

  int count() const override;        // projections
  int raw_width() const override;
  int raw_height() const override;
  SampleType sample_type() const override;
  // The raw frames' pixel pitch from the first projection's resolution tags,
  // in millimetres ({0, 0} when it has none).
  std::array<double, 2> raw_pixel_size_mm() const override;
  std::string geometry_source() const override { return "the TIFF resolution tags"; }
  // "" when every page that has resolution tags states the first page's
  // pitch; else names the first page that disagrees and both pitches
  // ("'d/p07.tif''s resolution tags give a pixel pitch of 0.2 x 0.2 mm but
  // 'd/p00.tif''s give 0.1 x 0.1 mm"). The folder still opens: whether
  // that is an error depends on whether the pitch is taken from the tags
  // (fdk-convert refuses it then, and notes it when a flag overrides).
  const std::string& pitch_disagreement() const;
  bool raw() const override;         // frames are intensities (-log applied)
  int dark_frames() const override;  // frames averaged (0 = none)
  int flat_frames() const override;
  const Preprocessor& preprocessor() const override;
  const std::vector<std::string>& files() const;
  // "dir/p10.tif" or "dir/stack.tif page 3".
  std::string describe(int index) const override;

  // Per-thread state for read(): an open file and buffers.
  struct Workspace : ProjectionSource::Workspace {
    std::unique_ptr<TiffReader> reader;
    std::string open_path;
    std::vector<float> raw, scratch;
  };
  // Projection `index` as width() x height() line integrals into `out`.
  // Returns the number of clamped pixels. Thread-safe with one Workspace per
  // thread. Throws Error(kInput) naming the file and page.
  size_t read(int index, float* out, Workspace& workspace) const;
  std::unique_ptr<ProjectionSource::Workspace> make_workspace() const override;
  size_t read(int index, float* out, ProjectionSource::Workspace& workspace) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Averages all pages of a file, or of all matching files of a folder, or
// all frames of a MetaImage or NRRD file.
// Returns the frame count; `averager` receives the frames.
int load_calibration(const std::string& path, const std::string& pattern,
                     FrameAverager* averager, SampleType* type = nullptr);

// A bad-pixel map from a TIFF, MetaImage or NRRD image (nonzero = bad) or
// a text list.
std::vector<uint8_t> load_bad_pixel_map(const std::string& path, int width, int height);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_PROJECTION_FOLDER_HPP
