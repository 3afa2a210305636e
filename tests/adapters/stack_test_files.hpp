// Writing MetaImage, NRRD and raw stacks in tests (with zlib when the
// build has it, for the compressed forms).
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#if FDK_HAVE_ZLIB
#include <zlib.h>
#endif

namespace fdk_adapter_test {

template <typename T>
std::string bytes_of(const std::vector<T>& v, bool big_endian = false) {
  std::string out(v.size() * sizeof(T), '\0');
  std::memcpy(&out[0], v.data(), out.size());
  if (big_endian) {
    for (size_t i = 0; i < v.size(); ++i) {
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(i * sizeof(T)),
                   out.begin() + static_cast<std::ptrdiff_t>((i + 1) * sizeof(T)));
    }
  }
  return out;
}

// zlib (gzip = false) or gzip stream of `data`; "" without zlib.
inline std::string deflate_bytes(const std::string& data, bool gzip = false) {
#if FDK_HAVE_ZLIB
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, gzip ? 15 + 16 : 15, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
#else
  (void)data;
  (void)gzip;
  return "";
#endif
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A MetaImage header for a W x H x N stack ("" fields are left out).
inline std::string mha_header(int w, int h, int n, const std::string& type,
                              const std::string& extra, const std::string& data_file = "LOCAL") {
  return "ObjectType = Image\nNDims = 3\nBinaryData = True\nDimSize = " + std::to_string(w) + " " +
         std::to_string(h) + " " + std::to_string(n) + "\nElementType = " + type + "\n" + extra +
         "ElementDataFile = " + data_file + "\n";
}

}  // namespace fdk_adapter_test
