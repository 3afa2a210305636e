// fdk/adapters/correction.hpp — from raw detector frames to line integrals.
//
// Per pixel (x, y) of a raw frame I, with dark frame D and flat (open beam)
// frame F (each the mean of any number of frames):
//
//     t = (I - D) / (F - D),   p = -log(max(t, min_transmission))
//
// A transmission below `min_transmission` (including I <= D) is clamped and
// counted. Pixels whose flat is not above the dark, is saturated, or is not
// finite cannot be corrected: they join the bad pixels. Bad pixels (those
// and the ones of the bad-pixel map) are replaced by the mean of their good
// neighbours in the smallest square ring (radius 1, 2, ... 16) that holds
// one. Then the frame is cropped (a rectangle in the file's pixel
// coordinates), flipped if asked, and binned (mean of bin_u x bin_v line
// integrals; leftover columns and rows at the far edges are dropped).
//
// Frames already holding line integrals (`raw` false) go through the same
// bad-pixel, crop, flip and binning steps without the log.
#ifndef FDK_ADAPTERS_CORRECTION_HPP
#define FDK_ADAPTERS_CORRECTION_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fdk/fdk.h"

namespace fdk {
namespace adapters {

// A single-channel float image, row-major (x fastest).
struct Image {
  int width = 0, height = 0;
  std::vector<float> pixels;
  bool empty() const { return pixels.empty(); }
};

// Sums frames (dark or flat fields) and their saturated pixels.
class FrameAverager {
 public:
  // `saturation` is the sample type's largest value (65535 for uint16);
  // a pixel reaching it in any frame is marked saturated. Pass +infinity
  // for float data. Throws Error(kInput) if the size differs from the first
  // frame's (naming `source`).
  void add(const float* pixels, int width, int height, double saturation,
           const std::string& source);
  int count() const { return count_; }
  int width() const { return width_; }
  int height() const { return height_; }
  Image mean() const;
  // One byte per pixel, 1 where some frame was saturated.
  const std::vector<uint8_t>& saturated() const { return saturated_; }

 private:
  int width_ = 0, height_ = 0, count_ = 0;
  std::string first_source_;
  std::vector<double> sum_;
  std::vector<uint8_t> saturated_;
};

// A rectangle in the raw frame's pixel coordinates; width/height 0 = up to
// the right/bottom edge.
struct Region {
  int x = 0, y = 0, width = 0, height = 0;
};

struct PreprocessOptions {
  bool raw = true;        // intensities (take -log); false: line integrals
  double i0 = 0;          // constant open-beam intensity when there is no flat
  double dark_level = 0;  // constant dark level when there is no dark frame
  double min_transmission = 1e-5;  // clamp floor of (I - D) / (F - D)
  // More unusable flat pixels than this fraction of the cropped frame is an
  // error (a wrong or corrupt flat field), not something to patch over.
  double max_unusable_fraction = 0.01;
  Region crop;
  int bin_u = 1, bin_v = 1;
  bool flip_u = false, flip_v = false;
};

struct CalibrationFrames {
  Image dark;                     // empty: options.dark_level
  std::string dark_name;          // for messages ("dark field 'dir/dark'")
  Image flat;                     // empty: options.i0
  std::vector<uint8_t> flat_saturated;  // optional, as FrameAverager's
  std::string flat_name;
  std::vector<uint8_t> bad_map;   // optional, width*height, nonzero = bad
  std::string bad_map_name;
};

struct PreprocessReport {
  size_t flat_not_above_dark = 0;  // in the crop region
  size_t flat_saturated = 0;
  size_t calibration_non_finite = 0;
  size_t bad_from_map = 0;
  size_t bad_total = 0;            // all replaced pixels in the crop region
};

class Preprocessor {
 public:
  // Validates everything (sizes, crop, binning, flat quality) and
  // precomputes the bad-pixel replacement. Throws Error(kInvalidArgument)
  // for bad options and Error(kInput) for unusable calibration frames.
  Preprocessor(int width, int height, const PreprocessOptions& options,
               CalibrationFrames calibration);

  int raw_width() const { return width_; }
  int raw_height() const { return height_; }
  int out_width() const { return out_w_; }
  int out_height() const { return out_h_; }
  const PreprocessReport& report() const { return report_; }

  // One frame of raw_width x raw_height values, rows `row_pitch` elements
  // apart, to out_width x out_height line integrals (contiguous). Returns
  // the number of clamped pixels. A non-finite input pixel throws
  // Error(kInput) "pixel (x, y) is NaN" (the caller adds the file name).
  // `scratch` is resized as needed; const and reentrant otherwise.
  size_t process(const float* frame, size_t row_pitch, float* out,
                 std::vector<float>& scratch) const;
  size_t process(const uint16_t* frame, size_t row_pitch, float* out,
                 std::vector<float>& scratch) const;

  // The detector of the processed frames, given the physical detector of
  // the whole raw frame (its spacing and origin describe raw pixels in the
  // physical u/v orientation, i.e. after the flips).
  fdk_detector processed_detector(const fdk_detector& raw_detector) const;

 private:
  template <typename T>
  size_t process_impl(const T* frame, size_t row_pitch, float* out,
                      std::vector<float>& scratch) const;

  int width_, height_;
  PreprocessOptions options_;
  int cx_, cy_, cw_, ch_;  // crop
  int out_w_, out_h_;
  // Per crop pixel: offset (transmission = (I - offset) * gain).
  std::vector<float> offset_, gain_;
  std::vector<uint8_t> bad_;  // per crop pixel
  // Bad pixel replacement: for bad_list_[k], neighbours
  // nb_index_[nb_start_[k] .. nb_start_[k + 1]) (crop-local indices).
  std::vector<uint32_t> bad_list_, nb_start_, nb_index_;
  PreprocessReport report_;
};

// Reads a bad-pixel list: text with one "x y" pair per line ('#' comments),
// pixel coordinates in the raw frame. Returns a width*height map.
std::vector<uint8_t> parse_bad_pixel_list(const std::string& text, int width,
                                          int height, const std::string& name);

}  // namespace adapters
}  // namespace fdk

#endif  // FDK_ADAPTERS_CORRECTION_HPP
