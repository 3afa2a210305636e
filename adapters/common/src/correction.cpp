// Raw frames to line integrals (see fdk/adapters/correction.hpp).
#include "fdk/adapters/correction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "fdk/adapters/error.hpp"

namespace fdk {
namespace adapters {
namespace {

constexpr int kMaxReplacementRadius = 16;

std::string pixel_text(int x, int y) {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ")";
}

std::string number_text(double v) {
  if (std::isnan(v)) return "NaN";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string percent(size_t part, size_t whole) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g%%",
                whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buffer;
}

[[noreturn]] void non_finite_pixel(float v, int x, int y) {
  fail(ErrorKind::kInput,
       "pixel " + pixel_text(x, y) + " is " + (std::isnan(v) ? "NaN" : "infinite"));
}

}  // namespace

// ---- FrameAverager --------------------------------------------------------------

void FrameAverager::add(const float* pixels, int width, int height, double saturation,
                        const std::string& source) {
  if (width <= 0 || height <= 0 || !pixels) {
    fail(ErrorKind::kInvalidArgument, "'" + source + "': empty frame");
  }
  if (count_ == 0) {
    width_ = width;
    height_ = height;
    first_source_ = source;
    sum_.assign(static_cast<size_t>(width) * static_cast<size_t>(height), 0.0);
    saturated_.assign(sum_.size(), 0);
  } else if (width != width_ || height != height_) {
    fail(ErrorKind::kInput, "'" + source + "' is " + std::to_string(width) + " x " +
                                std::to_string(height) + " pixels but '" + first_source_ +
                                "' is " + std::to_string(width_) + " x " +
                                std::to_string(height_));
  }
  for (size_t i = 0; i < sum_.size(); ++i) {
    const float v = pixels[i];
    if (!std::isfinite(v)) {
      fail(ErrorKind::kInput,
           "'" + source + "': pixel " +
               pixel_text(static_cast<int>(i % static_cast<size_t>(width)),
                          static_cast<int>(i / static_cast<size_t>(width))) +
               " is " + (std::isnan(v) ? "NaN" : "infinite"));
    }
    sum_[i] += v;
    if (v >= saturation) saturated_[i] = 1;
  }
  ++count_;
}

Image FrameAverager::mean() const {
  Image out;
  out.width = width_;
  out.height = height_;
  out.pixels.resize(sum_.size());
  for (size_t i = 0; i < sum_.size(); ++i) {
    out.pixels[i] = static_cast<float>(sum_[i] / std::max(1, count_));
  }
  return out;
}

// ---- Preprocessor -----------------------------------------------------------------

Preprocessor::Preprocessor(int width, int height, const PreprocessOptions& options,
                           CalibrationFrames cal)
    : width_(width), height_(height), options_(options) {
  if (width < 1 || height < 1) {
    fail(ErrorKind::kInvalidArgument, "frame size " + std::to_string(width) + " x " +
                                          std::to_string(height) + " is empty");
  }
  const Region& c = options.crop;
  if (c.x < 0 || c.y < 0 || c.width < 0 || c.height < 0 || c.x >= width || c.y >= height) {
    fail(ErrorKind::kInvalidArgument,
         "crop " + std::to_string(c.x) + "," + std::to_string(c.y) + "," +
             std::to_string(c.width) + "," + std::to_string(c.height) +
             " does not fit the " + std::to_string(width) + " x " + std::to_string(height) +
             " frame");
  }
  cx_ = c.x;
  cy_ = c.y;
  cw_ = c.width ? c.width : width - c.x;
  ch_ = c.height ? c.height : height - c.y;
  if (static_cast<long long>(cx_) + cw_ > width || static_cast<long long>(cy_) + ch_ > height) {
    fail(ErrorKind::kInvalidArgument,
         "crop " + std::to_string(c.x) + "," + std::to_string(c.y) + "," +
             std::to_string(cw_) + "," + std::to_string(ch_) + " reaches outside the " +
             std::to_string(width) + " x " + std::to_string(height) + " frame");
  }
  if (options.bin_u < 1 || options.bin_v < 1 || options.bin_u > cw_ || options.bin_v > ch_) {
    fail(ErrorKind::kInvalidArgument,
         "binning " + std::to_string(options.bin_u) + " x " + std::to_string(options.bin_v) +
             " does not fit the " + std::to_string(cw_) + " x " + std::to_string(ch_) +
             " (cropped) frame");
  }
  out_w_ = cw_ / options.bin_u;
  out_h_ = ch_ / options.bin_v;
  if (!(options.min_transmission > 0.0) || !(options.min_transmission < 1.0)) {
    fail(ErrorKind::kInvalidArgument, "the minimum transmission (min_transmission) is " +
                                          number_text(options.min_transmission) + ": it must lie within (0, 1)");
  }
  // A fraction: below 0 every flat failed (with a message about 0 unusable
  // pixels), NaN passed every flat.
  if (!(options.max_unusable_fraction >= 0.0 && options.max_unusable_fraction <= 1.0)) {
    fail(ErrorKind::kInvalidArgument, "max_unusable_fraction is " + number_text(options.max_unusable_fraction) +
                                          ": it must lie within [0, 1] (the fraction of flat pixels that may be "
                                          "unusable and patched as bad pixels)");
  }

  const size_t n = static_cast<size_t>(cw_) * static_cast<size_t>(ch_);
  const size_t full = static_cast<size_t>(width) * static_cast<size_t>(height);
  auto check_size = [&](const Image& im, const std::string& name, const char* what) {
    if (!im.empty() && (im.width != width || im.height != height ||
                        im.pixels.size() != full)) {
      fail(ErrorKind::kInput, std::string(what) + " '" + name + "' is " +
                                  std::to_string(im.width) + " x " +
                                  std::to_string(im.height) + " pixels but the projections are " +
                                  std::to_string(width) + " x " + std::to_string(height));
    }
  };
  check_size(cal.dark, cal.dark_name, "dark field");
  check_size(cal.flat, cal.flat_name, "flat field");
  if (!cal.bad_map.empty() && cal.bad_map.size() != full) {
    fail(ErrorKind::kInput, "bad-pixel map '" + cal.bad_map_name +
                                "' does not have the size of the projections (" +
                                std::to_string(width) + " x " + std::to_string(height) + ")");
  }
  if (!cal.flat_saturated.empty() && cal.flat_saturated.size() != full) {
    fail(ErrorKind::kInvalidArgument, "flat saturation map of the wrong size");
  }
  if (!options.raw && (!cal.dark.empty() || !cal.flat.empty())) {
    fail(ErrorKind::kInvalidArgument,
         "dark or flat fields were given but the projections are taken as line integrals");
  }
  if (options.raw && cal.flat.empty()) {
    if (!(options.i0 > options.dark_level) && cal.dark.empty()) {
      fail(ErrorKind::kInvalidArgument,
           "raw projections need a flat field or an open-beam intensity I0 above the dark "
           "level");
    }
  }

  offset_.assign(n, 0.0f);
  gain_.assign(n, 0.0f);
  bad_.assign(n, 0);
  int first_x = -1, first_y = -1;
  for (int y = 0; y < ch_; ++y) {
    for (int x = 0; x < cw_; ++x) {
      const size_t i = static_cast<size_t>(y) * cw_ + x;
      const size_t r = static_cast<size_t>(y + cy_) * width + (x + cx_);
      if (!cal.bad_map.empty() && cal.bad_map[r]) {
        bad_[i] = 1;
        ++report_.bad_from_map;
      }
      if (!options.raw) continue;
      const double d = cal.dark.empty() ? options.dark_level : cal.dark.pixels[r];
      const double f = cal.flat.empty() ? options.i0 : cal.flat.pixels[r];
      bool unusable = false;
      if (!std::isfinite(d) || !std::isfinite(f)) {
        ++report_.calibration_non_finite;
        unusable = true;
      } else if (!(f - d > 0.0)) {
        ++report_.flat_not_above_dark;
        unusable = true;
      } else if (!cal.flat_saturated.empty() && cal.flat_saturated[r]) {
        ++report_.flat_saturated;
        unusable = true;
      }
      if (unusable) {
        if (first_x < 0) {
          first_x = x + cx_;
          first_y = y + cy_;
        }
        bad_[i] = 1;
        continue;
      }
      offset_[i] = static_cast<float>(d);
      gain_[i] = static_cast<float>(1.0 / (f - d));
    }
  }
  const size_t unusable = report_.calibration_non_finite + report_.flat_not_above_dark +
                          report_.flat_saturated;
  if (options.raw && unusable > options.max_unusable_fraction * static_cast<double>(n)) {
    const std::string source = !cal.flat.empty()
                                   ? "flat field '" + cal.flat_name + "'"
                                   : "open-beam intensity I0 " + std::to_string(options.i0);
    std::ostringstream msg;
    msg << source << ": " << unusable << " of " << n << " pixels (" << percent(unusable, n)
        << ") cannot be corrected:";
    const char* sep = " ";
    if (report_.flat_not_above_dark) {
      msg << sep << report_.flat_not_above_dark << " not above the dark level"
          << (cal.dark.empty() ? "" : " of '" + cal.dark_name + "'");
      sep = ", ";
    }
    if (report_.flat_saturated) {
      msg << sep << report_.flat_saturated << " saturated";
      sep = ", ";
    }
    if (report_.calibration_non_finite) {
      msg << sep << report_.calibration_non_finite << " not finite";
    }
    msg << "; the first at pixel " << pixel_text(first_x, first_y) << " (at most "
        << percent(static_cast<size_t>(options.max_unusable_fraction * 1e6), 1000000)
        << " are patched as bad pixels)";
    fail(ErrorKind::kInput, msg.str());
  }

  // Replacement lists.
  for (int y = 0; y < ch_; ++y) {
    for (int x = 0; x < cw_; ++x) {
      const size_t i = static_cast<size_t>(y) * cw_ + x;
      if (!bad_[i]) continue;
      bad_list_.push_back(static_cast<uint32_t>(i));
      nb_start_.push_back(static_cast<uint32_t>(nb_index_.size()));
      bool found = false;
      for (int rad = 1; rad <= kMaxReplacementRadius && !found; ++rad) {
        for (int dy = -rad; dy <= rad; ++dy) {
          const int yy = y + dy;
          if (yy < 0 || yy >= ch_) continue;
          const bool edge_row = dy == -rad || dy == rad;
          for (int dx = -rad; dx <= rad; dx += edge_row ? 1 : 2 * rad) {
            const int xx = x + dx;
            if (xx < 0 || xx >= cw_) continue;
            const size_t j = static_cast<size_t>(yy) * cw_ + xx;
            if (!bad_[j]) {
              nb_index_.push_back(static_cast<uint32_t>(j));
              found = true;
            }
          }
        }
      }
      if (!found) {
        fail(ErrorKind::kInput,
             "bad pixel " + pixel_text(x + cx_, y + cy_) + " has no good neighbour within " +
                 std::to_string(kMaxReplacementRadius) + " pixels" +
                 (cal.bad_map_name.empty() ? std::string()
                                           : " (bad-pixel map '" + cal.bad_map_name + "')"));
      }
    }
  }
  nb_start_.push_back(static_cast<uint32_t>(nb_index_.size()));
  report_.bad_total = bad_list_.size();
}

template <typename T>
size_t Preprocessor::process_impl(const T* frame, size_t pitch, float* out,
                                  std::vector<float>& scratch) const {
  const size_t n = static_cast<size_t>(cw_) * static_cast<size_t>(ch_);
  scratch.resize(n);
  size_t clamped = 0;
  const float min_t = static_cast<float>(options_.min_transmission);
  for (int y = 0; y < ch_; ++y) {
    const T* row = frame + static_cast<size_t>(y + cy_) * pitch + cx_;
    float* dst = scratch.data() + static_cast<size_t>(y) * cw_;
    const size_t base = static_cast<size_t>(y) * cw_;
    for (int x = 0; x < cw_; ++x) {
      if (bad_[base + x]) {
        dst[x] = 0.0f;
        continue;
      }
      const float v = static_cast<float>(row[x]);
      if (!std::isfinite(v)) non_finite_pixel(v, x + cx_, y + cy_);
      if (options_.raw) {
        float t = (v - offset_[base + x]) * gain_[base + x];
        if (!(t >= min_t)) {
          t = min_t;
          ++clamped;
        }
        dst[x] = -std::log(t);
      } else {
        dst[x] = v;
      }
    }
  }
  for (size_t k = 0; k + 1 < nb_start_.size(); ++k) {
    double sum = 0.0;
    for (uint32_t q = nb_start_[k]; q < nb_start_[k + 1]; ++q) sum += scratch[nb_index_[q]];
    scratch[bad_list_[k]] = static_cast<float>(sum / (nb_start_[k + 1] - nb_start_[k]));
  }
  // Flip and bin.
  const int bu = options_.bin_u, bv = options_.bin_v;
  const float inv = 1.0f / static_cast<float>(bu * bv);
  for (int oy = 0; oy < out_h_; ++oy) {
    const int ty = options_.flip_v ? out_h_ - 1 - oy : oy;
    float* dst = out + static_cast<size_t>(ty) * out_w_;
    for (int ox = 0; ox < out_w_; ++ox) {
      float sum = 0.0f;
      for (int j = 0; j < bv; ++j) {
        const float* src = scratch.data() + static_cast<size_t>(oy * bv + j) * cw_ + ox * bu;
        for (int i = 0; i < bu; ++i) sum += src[i];
      }
      dst[options_.flip_u ? out_w_ - 1 - ox : ox] = bu * bv == 1 ? sum : sum * inv;
    }
  }
  return clamped;
}

size_t Preprocessor::process(const float* frame, size_t row_pitch, float* out,
                             std::vector<float>& scratch) const {
  return process_impl(frame, row_pitch, out, scratch);
}

size_t Preprocessor::process(const uint16_t* frame, size_t row_pitch, float* out,
                             std::vector<float>& scratch) const {
  return process_impl(frame, row_pitch, out, scratch);
}

fdk_detector Preprocessor::processed_detector(const fdk_detector& raw) const {
  fdk_detector d = raw;
  // First used raw column/row in the physical orientation.
  const int u0 = options_.flip_u ? width_ - cx_ - out_w_ * options_.bin_u : cx_;
  const int v0 = options_.flip_v ? height_ - cy_ - out_h_ * options_.bin_v : cy_;
  const int first[2] = {u0, v0};
  const int bin[2] = {options_.bin_u, options_.bin_v};
  d.size[0] = out_w_;
  d.size[1] = out_h_;
  for (int a = 0; a < 2; ++a) {
    d.origin[a] = raw.origin[a] + first[a] * raw.spacing[a] + 0.5 * (bin[a] - 1) * raw.spacing[a];
    d.spacing[a] = raw.spacing[a] * bin[a];
  }
  return d;
}

std::vector<uint8_t> parse_bad_pixel_list(const std::string& text, int width, int height,
                                          const std::string& name) {
  std::vector<uint8_t> map(static_cast<size_t>(width) * static_cast<size_t>(height), 0);
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    for (char& ch : line) {
      if (ch == ',' || ch == ';' || ch == '\t' || ch == '\r') ch = ' ';
    }
    std::istringstream fields(line);
    long long x = 0, y = 0;
    std::string extra;
    if (!(fields >> x)) {
      if (line.find_first_not_of(' ') == std::string::npos) continue;  // blank
      fail(ErrorKind::kInput, "bad-pixel list '" + name + "' line " + std::to_string(line_no) +
                                  ": expected 'x y'");
    }
    if (!(fields >> y) || (fields >> extra)) {
      fail(ErrorKind::kInput, "bad-pixel list '" + name + "' line " + std::to_string(line_no) +
                                  ": expected 'x y'");
    }
    if (x < 0 || y < 0 || x >= width || y >= height) {
      fail(ErrorKind::kInput, "bad-pixel list '" + name + "' line " + std::to_string(line_no) +
                                  ": pixel (" + std::to_string(x) + ", " + std::to_string(y) +
                                  ") lies outside the " + std::to_string(width) + " x " +
                                  std::to_string(height) + " frame");
    }
    map[static_cast<size_t>(y) * width + static_cast<size_t>(x)] = 1;
  }
  return map;
}

}  // namespace adapters
}  // namespace fdk
