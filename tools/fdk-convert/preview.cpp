// Preview image of fdk-convert (see preview.hpp).
#include "preview.hpp"

#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>

#include <algorithm>
#include <cmath>
#include <csetjmp>

#ifdef FDK_CONVERT_WITH_PNG
#include <png.h>
#endif

namespace fdk_tools {
namespace {

struct Gray {
  int width = 0, height = 0;
  std::vector<uint8_t> pixels;
};

#ifdef FDK_CONVERT_WITH_PNG
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

PreviewCollector::PreviewCollector(const fdk_volume& v, int max_side) : v_(v) {
  const int largest = std::max({v.size[0], v.size[1], v.size[2]});
  step_ = std::max(1, (largest + max_side - 1) / max_side);
  px_ = (v.size[0] + step_ - 1) / step_;
  py_ = (v.size[1] + step_ - 1) / step_;
  pz_ = (v.size[2] + step_ - 1) / step_;
  axial_.assign(static_cast<size_t>(px_) * pz_, 0.0f);
  coronal_.assign(static_cast<size_t>(px_) * py_, 0.0f);
  sagittal_.assign(static_cast<size_t>(pz_) * py_, 0.0f);
}

void PreviewCollector::add_planes(int y_begin, int y_end, const float* data) {
  const int nx = v_.size[0], ny = v_.size[1], nz = v_.size[2];
  const size_t plane = static_cast<size_t>(nx) * nz;
  for (int y = y_begin; y < y_end; ++y) {
    const float* p = data + static_cast<size_t>(y - y_begin) * plane;
    if (y == ny / 2) {
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
          p[static_cast<size_t>(nz / 2) * nx + x * step_];
    }
    for (int z = 0; z < pz_; ++z) {
      sagittal_[static_cast<size_t>(row) * pz_ + z] =
          p[static_cast<size_t>(z * step_) * nx + nx / 2];
    }
  }
}

std::string PreviewCollector::write(const std::string& base, double lo, double hi) const {
  if (!(hi > lo)) {
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
  const int gap = 4;
  Gray image;
  image.width = px_ + gap + px_ + gap + pz_;
  image.height = std::max(pz_, py_);
  image.pixels.assign(static_cast<size_t>(image.width) * image.height, 0);
  auto blit = [&](const std::vector<float>& panel, int w, int h, int x0) {
    for (int r = 0; r < h; ++r) {
      for (int c = 0; c < w; ++c) {
        const double v = panel[static_cast<size_t>(r) * w + c];
        double g = std::isfinite(v) ? (v - lo) / (hi - lo) : 0.0;
        g = std::min(1.0, std::max(0.0, g));
        image.pixels[static_cast<size_t>(r) * image.width + x0 + c] =
            static_cast<uint8_t>(std::lround(255.0 * g));
      }
    }
  };
  blit(axial_, px_, pz_, 0);
  blit(coronal_, px_, py_, px_ + gap);
  blit(sagittal_, pz_, py_, 2 * (px_ + gap));

  std::vector<uint8_t> bytes;
#ifdef FDK_CONVERT_WITH_PNG
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
  fdk::adapters::OutputFile f(path);
  f.write(bytes.data(), bytes.size());
  f.commit();
  return path;
}

}  // namespace fdk_tools
