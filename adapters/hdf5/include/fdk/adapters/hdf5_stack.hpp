// fdk/adapters/hdf5_stack.hpp — projections in an HDF5 file laid out as
// DXchange / NeXus tomography files are: /exchange/data (views, rows,
// columns), with the dark and flat (white) frames in /exchange/data_dark and
// /exchange/data_white. Built only when HDF5 is found (FDK_HAVE_HDF5).
//
// Frames are read one at a time (a hyperslab per view), converted to float
// by HDF5 (integer and float datasets of any byte order; the file's
// compression filters as HDF5 provides them). HDF5 calls are serialised
// and its error printing is switched off: failures become Error(kInput)
// naming the file, the dataset and the frame.
#ifndef FDK_ADAPTERS_HDF5_STACK_HPP
#define FDK_ADAPTERS_HDF5_STACK_HPP

#include <memory>
#include <string>

#include "fdk/adapters/projection_source.hpp"

namespace fdk {
namespace adapters {

// .h5, .hdf5, .hdf, .nxs (any case).
bool is_hdf5_path(const std::string& path);

struct Hdf5StackOptions : ProjectionOptions {
  std::string dataset = "/exchange/data";
  // With no dark (flat) given, these datasets of the same file are used
  // when the file has them; empty = never.
  std::string dark_dataset = "/exchange/data_dark";
  std::string flat_dataset = "/exchange/data_white";
  // Dark/flat files and masks that are not HDF5 go through these (stacks,
  // TIFF); unset = refused as unsupported.
  FrameLoader other_frames;
  MaskLoader other_mask;
};

class Hdf5Stack : public ProjectionSource {
 public:
  // Throws Error(kInput) naming the file and dataset (missing, not 3D or
  // 2D, sizes beyond the stack limits, a type that is not an integer or
  // float), Error for the calibration as the other sources.
  Hdf5Stack(const std::string& path, const Hdf5StackOptions& options);
  ~Hdf5Stack() override;

  int count() const override;
  int raw_width() const override;
  int raw_height() const override;
  SampleType sample_type() const override;
  std::array<double, 2> raw_pixel_size_mm() const override { return {0.0, 0.0}; }
  std::string geometry_source() const override { return "the HDF5 file"; }
  bool raw() const override;
  int dark_frames() const override;
  int flat_frames() const override;
  const Preprocessor& preprocessor() const override;
  std::string describe(int index) const override;
  std::unique_ptr<Workspace> make_workspace() const override;
  size_t read(int index, float* out, Workspace& workspace) const override;
  // The calibration datasets used from the projections' own file ("" none).
  const std::string& dark_dataset_used() const;
  const std::string& flat_dataset_used() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Averages every frame of `dataset` in an HDF5 file; returns the count.
int load_hdf5_frames(const std::string& path, const std::string& dataset,
                     FrameAverager* averager);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_HDF5_STACK_HPP
