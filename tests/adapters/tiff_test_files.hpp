// Writing test TIFFs with libtiff directly (independently of the adapters'
// writer), in every sample format and layout the reader supports.
#pragma once

#include <tiffio.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace fdk_adapter_test {

struct RawTiffLayout {
  int bits = 16;
  int format = SAMPLEFORMAT_UINT;  // or SAMPLEFORMAT_IEEEFP, SAMPLEFORMAT_INT
  int samples_per_pixel = 1;
  bool tiled = false;
  int tile = 16;
  int rows_per_strip = 3;
  int compression = COMPRESSION_NONE;
  bool big_endian = false;
  bool bigtiff = false;
};

// Writes pages of width x height values (converted to the layout's type).
inline void write_raw_tiff(const std::string& path, int width, int height,
                           const std::vector<std::vector<double>>& pages,
                           const RawTiffLayout& l = {}) {
  std::string mode = "w";
  mode += l.big_endian ? "b" : "l";
  if (l.bigtiff) mode += "8";
  TIFF* t = TIFFOpen(path.c_str(), mode.c_str());
  if (!t) throw std::runtime_error("cannot create " + path);
  const int bps = l.bits / 8;
  for (const auto& page : pages) {
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, static_cast<uint32_t>(width));
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, static_cast<uint32_t>(height));
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, static_cast<uint16_t>(l.bits));
    TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, static_cast<uint16_t>(l.samples_per_pixel));
    TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, static_cast<uint16_t>(l.format));
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC,
                 static_cast<uint16_t>(l.samples_per_pixel == 3 ? PHOTOMETRIC_RGB
                                                                : PHOTOMETRIC_MINISBLACK));
    TIFFSetField(t, TIFFTAG_PLANARCONFIG, static_cast<uint16_t>(PLANARCONFIG_CONTIG));
    TIFFSetField(t, TIFFTAG_COMPRESSION, static_cast<uint16_t>(l.compression));
    if (pages.size() > 1) TIFFSetField(t, TIFFTAG_SUBFILETYPE, static_cast<uint32_t>(FILETYPE_PAGE));
    const size_t row_bytes = static_cast<size_t>(width) * bps * l.samples_per_pixel;
    std::vector<unsigned char> img(row_bytes * height);
    for (size_t i = 0; i < static_cast<size_t>(width) * height; ++i) {
      for (int s = 0; s < l.samples_per_pixel; ++s) {
        unsigned char* p = img.data() + (i * l.samples_per_pixel + s) * bps;
        const double v = page[i];
        if (l.format == SAMPLEFORMAT_IEEEFP) {
          const float f = static_cast<float>(v);
          std::memcpy(p, &f, 4);
        } else if (l.bits == 8) {
          *p = static_cast<uint8_t>(v);
        } else if (l.bits == 16) {
          const uint16_t u = static_cast<uint16_t>(static_cast<int64_t>(v));
          std::memcpy(p, &u, 2);
        } else {
          const uint32_t u = static_cast<uint32_t>(static_cast<int64_t>(v));
          std::memcpy(p, &u, 4);
        }
      }
    }
    if (l.tiled) {
      TIFFSetField(t, TIFFTAG_TILEWIDTH, static_cast<uint32_t>(l.tile));
      TIFFSetField(t, TIFFTAG_TILELENGTH, static_cast<uint32_t>(l.tile));
      const size_t tile_row = static_cast<size_t>(l.tile) * bps * l.samples_per_pixel;
      std::vector<unsigned char> tile(tile_row * l.tile);
      for (int y0 = 0; y0 < height; y0 += l.tile) {
        for (int x0 = 0; x0 < width; x0 += l.tile) {
          std::fill(tile.begin(), tile.end(), 0xAB);  // garbage in the padding
          for (int r = 0; r < l.tile && y0 + r < height; ++r) {
            const int cols = std::min(l.tile, width - x0);
            std::memcpy(tile.data() + r * tile_row,
                        img.data() + (y0 + r) * row_bytes + static_cast<size_t>(x0) * bps * l.samples_per_pixel,
                        static_cast<size_t>(cols) * bps * l.samples_per_pixel);
          }
          TIFFWriteEncodedTile(t, TIFFComputeTile(t, x0, y0, 0, 0), tile.data(),
                               static_cast<tmsize_t>(tile.size()));
        }
      }
    } else {
      TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, static_cast<uint32_t>(l.rows_per_strip));
      for (int y0 = 0, s = 0; y0 < height; y0 += l.rows_per_strip, ++s) {
        const int rows = std::min(l.rows_per_strip, height - y0);
        std::vector<unsigned char> strip(img.begin() + y0 * row_bytes,
                                         img.begin() + (y0 + rows) * row_bytes);
        TIFFWriteEncodedStrip(t, s, strip.data(), static_cast<tmsize_t>(strip.size()));
      }
    }
    TIFFWriteDirectory(t);
  }
  TIFFClose(t);
}

inline std::vector<double> ramp_image(int width, int height, double scale, double offset) {
  std::vector<double> v(static_cast<size_t>(width) * height);
  for (size_t i = 0; i < v.size(); ++i) v[i] = offset + scale * static_cast<double>(i);
  return v;
}

}  // namespace fdk_adapter_test
