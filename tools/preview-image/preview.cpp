// Preview image of fdk-convert (see preview.hpp).
#include "preview.hpp"

#include "font5x7.hpp"

#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>

#ifdef FDK_PREVIEW_WITH_PNG
#include <png.h>
#endif

namespace fdk_tools {
namespace {

struct Gray {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

#ifdef FDK_PREVIEW_WITH_PNG
void append(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}
void no_flush(png_structp) {}

bool encode_png(const Gray& image, std::vector<uint8_t>* out) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_set_write_fn(png, out, append, no_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width),
               static_cast<png_uint_32>(image.height), 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int r = 0; r < image.height; ++r) {
    png_write_row(png, const_cast<png_bytep>(image.pixels.data() +
                                             static_cast<size_t>(r) * image.width));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}
#endif

}  // namespace

PreviewCollector::PreviewCollector(const fdk_volume& v, std::array<int, 3> at, int max_side)
    : v_(v), at_(at) {
  for (int a = 0; a < 3; ++a) {
    if (at_[a] < 0 || at_[a] >= v.size[a]) at_[a] = v.size[a] / 2;
  }
  const int largest = std::max({v.size[0], v.size[1], v.size[2]});
  step_ = std::max(1, (largest + max_side - 1) / max_side);
  px_ = (v.size[0] + step_ - 1) / step_;
  py_ = (v.size[1] + step_ - 1) / step_;
  pz_ = (v.size[2] + step_ - 1) / step_;
  axial_.assign(static_cast<size_t>(px_) * pz_, 0.0f);
  coronal_.assign(static_cast<size_t>(px_) * py_, 0.0f);
  sagittal_.assign(static_cast<size_t>(pz_) * py_, 0.0f);
}

std::array<double, 3> PreviewCollector::crossing_mm() const {
  std::array<double, 3> mm{};
  for (int a = 0; a < 3; ++a) mm[a] = v_.origin[a] + at_[a] * v_.spacing[a];
  return mm;
}

void PreviewCollector::add_planes(int y_begin, int y_end, const float* data) {
  const int nx = v_.size[0], nz = v_.size[2];
  const size_t plane = static_cast<size_t>(nx) * nz;
  for (int y = y_begin; y < y_end; ++y) {
    const float* p = data + static_cast<size_t>(y - y_begin) * plane;
    if (y == at_[1]) {
      for (int z = 0; z < pz_; ++z) {
        for (int x = 0; x < px_; ++x) {
          axial_[static_cast<size_t>(z) * px_ + x] =
              p[static_cast<size_t>(z * step_) * nx + x * step_];
        }
      }
    }
    if (y % step_ != 0) continue;
    // y up: the top row is the largest y.
    const int row = py_ - 1 - y / step_;
    for (int x = 0; x < px_; ++x) {
      coronal_[static_cast<size_t>(row) * px_ + x] =
          p[static_cast<size_t>(at_[2]) * nx + x * step_];
    }
    for (int z = 0; z < pz_; ++z) {
      sagittal_[static_cast<size_t>(row) * pz_ + z] =
          p[static_cast<size_t>(z * step_) * nx + at_[0]];
    }
  }
}

namespace {

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", std::fabs(v) < 1e-9 ? 0.0 : v);
  return b;
}

// Splits `text` at spaces into lines no wider than `width` pixels.
std::vector<std::string> wrap(const std::string& text, int width, int scale) {
  std::vector<std::string> lines;
  std::string line, word;
  auto flush_word = [&] {
    if (word.empty()) return;
    const std::string joined = line.empty() ? word : line + " " + word;
    if (!line.empty() && text_width(joined, scale) > width) {
      lines.push_back(line);
      line = word;
    } else {
      line = joined;
    }
    word.clear();
  };
  for (char c : text) {
    if (c == ' ') flush_word();
    else word += c;
  }
  flush_word();
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// A scale bar length of 1, 2 or 5 times a power of ten, near a fifth of
// `extent_mm`.
double bar_length_mm(double extent_mm) {
  const double target = extent_mm / 5;
  const double decade = std::pow(10.0, std::floor(std::log10(target)));
  double best = decade;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade <= target * 1.5) best = m * decade;
  }
  return best;
}

}  // namespace

std::string preview_file_name() {
#ifdef FDK_PREVIEW_WITH_PNG
  return "preview.png";
#else
  return "preview.pgm";
#endif
}

PreviewWritten PreviewCollector::write(const std::string& base, double lo, double hi,
                                       const std::vector<std::string>& caption,
                                       fdk::adapters::WriteFaultInjection* fault) const {
  PreviewWritten result;
  if (!(hi > lo)) {
    result.percentiles = true;
    std::vector<float> all;
    for (const auto* panel : {&axial_, &coronal_, &sagittal_}) {
      for (float v : *panel) {
        if (std::isfinite(v)) all.push_back(v);
      }
    }
    if (all.empty()) {
      lo = 0;
      hi = 1;
    } else {
      const size_t a = all.size() / 200, b = all.size() - 1 - all.size() / 200;
      std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(a), all.end());
      lo = all[a];
      std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(b), all.end());
      hi = all[b];
      if (!(hi > lo)) hi = lo + 1;
    }
  }
  result.lo = lo;
  result.hi = hi;

  const int panels_width = px_ + px_ + pz_;
  // Text at whole-pixel scale: 2 from about 500 pixels across.
  const int scale = std::max(1, std::min(3, (panels_width + 8) / 500 + 1));
  const int gap = 4 * scale;
  const int line_height = (kGlyphHeight + 3) * scale;
  const int width = std::max(panels_width + 2 * gap, 40 * (kGlyphWidth + 1) * scale);
  const int top = line_height + scale;  // the panel labels
  const int panels_height = std::max(pz_, py_);

  std::vector<std::string> lines;
  for (const std::string& c : caption) {
    for (const std::string& l : wrap(c, width - 2 * gap, scale)) lines.push_back(l);
  }
  const std::string window_line = "window [" + number(lo) + ", " + number(hi) + "] per mm" +
                                  (result.percentiles ? " (0.5 and 99.5 percentiles)" : " (--window)");
  for (const std::string& l : wrap(window_line, width - 2 * gap, scale)) lines.push_back(l);

  Gray image;
  image.width = width;
  image.height = top + panels_height + gap + static_cast<int>(lines.size()) * line_height + gap;
  image.pixels.assign(static_cast<size_t>(image.width) * image.height, 0);
  auto blit = [&](const std::vector<float>& panel, int w, int h, int x0) {
    for (int r = 0; r < h; ++r) {
      for (int c = 0; c < w; ++c) {
        const double v = panel[static_cast<size_t>(r) * w + c];
        double g = std::isfinite(v) ? (v - lo) / (hi - lo) : 0.0;
        g = std::min(1.0, std::max(0.0, g));
        image.pixels[static_cast<size_t>(top + r) * image.width + x0 + c] =
            static_cast<uint8_t>(std::lround(255.0 * g));
      }
    }
  };
  const int x_axial = 0, x_coronal = px_ + gap, x_sagittal = 2 * (px_ + gap);
  blit(axial_, px_, pz_, x_axial);
  blit(coronal_, px_, py_, x_coronal);
  blit(sagittal_, pz_, py_, x_sagittal);
  auto text = [&](int x, int y, const std::string& t, uint8_t ink = 255) {
    draw_text(image.pixels, image.width, image.height, x, y, t, scale, ink);
  };
  const std::array<double, 3> at = crossing_mm();
  text(x_axial, scale, "axial y=" + number(at[1]) + " mm");
  text(x_coronal, scale, "coronal z=" + number(at[2]) + " mm");
  text(x_sagittal, scale, "sagittal x=" + number(at[0]) + " mm");

  // Scale bar at the axial slice's lower left: white on a black outline, so
  // it shows on any background.
  {
    const double pixel_mm = v_.spacing[0] * step_;
    const double length = bar_length_mm(px_ * pixel_mm);
    const int bar = static_cast<int>(std::lround(length / pixel_mm));
    const int thick = 2 * scale, x0 = x_axial + 3 * scale;
    const int y0 = top + pz_ - 3 * scale - thick;
    if (bar >= 4 && bar < px_ - 6 * scale && y0 - line_height > top) {
      for (int y = y0 - 1; y <= y0 + thick; ++y) {
        for (int x = x0 - 1; x <= x0 + bar; ++x) {
          const bool inside = y >= y0 && y < y0 + thick && x >= x0 && x < x0 + bar;
          image.pixels[static_cast<size_t>(y) * image.width + x] = inside ? 255 : 0;
        }
      }
      const std::string label = number(length) + " mm";
      const int ly = y0 - line_height;
      for (int y = ly - scale; y < ly + kGlyphHeight * scale + scale; ++y) {  // a dark backing
        for (int x = x0 - scale; x < x0 + text_width(label, scale); ++x) {
          image.pixels[static_cast<size_t>(y) * image.width + x] = 0;
        }
      }
      text(x0, ly, label);
    }
  }
  int y = top + panels_height + gap;
  for (const std::string& l : lines) {
    text(gap, y, l, 220);
    y += line_height;
  }

  std::vector<uint8_t> bytes;
#ifdef FDK_PREVIEW_WITH_PNG
  const std::string path = base + ".png";
  if (!encode_png(image, &bytes)) {
    fdk::adapters::fail(fdk::adapters::ErrorKind::kOutput, "cannot encode the PNG preview");
  }
#else
  const std::string path = base + ".pgm";
  const std::string header =
      "P5\n" + std::to_string(image.width) + " " + std::to_string(image.height) + "\n255\n";
  bytes.assign(header.begin(), header.end());
  bytes.insert(bytes.end(), image.pixels.begin(), image.pixels.end());
#endif
  fdk::adapters::OutputFile f(path, fault);
  f.write(bytes.data(), bytes.size());
  f.commit();
  result.path = path;
  return result;
}

}  // namespace fdk_tools
