// TIFF files built byte by byte (no libtiff), so that every field can be
// wrong: a classic little-endian TIFF with one IFD right after the header
// and the pixels after the IFD.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace hostile {

struct TiffSpec {
  uint32_t width = 8, height = 6;
  uint16_t bits = 16;
  uint16_t samples_per_pixel = 1;
  uint16_t compression = 1;   // none
  uint16_t photometric = 1;   // min-is-black
  uint16_t sample_format = 1; // unsigned
  uint16_t planar = 1;
  uint32_t rows_per_strip = 0;  // 0 = all rows in one strip
  // Tags to leave out, and tags to write with a given value (LONG, count 1)
  // instead of the computed one.
  std::vector<uint16_t> omit;
  std::map<uint16_t, uint32_t> override_long;
  uint32_t next_ifd = 0;  // the IFD chain: 0 ends it
  bool big_endian_magic = false;
};

namespace tiff_detail {
inline void put16(std::string& s, size_t at, uint16_t v) { std::memcpy(&s[at], &v, 2); }
inline void put32(std::string& s, size_t at, uint32_t v) { std::memcpy(&s[at], &v, 4); }
}  // namespace tiff_detail

// The first IFD starts at byte 8; entries are 12 bytes; pixel data follow.
inline std::string tiff_bytes(const TiffSpec& t) {
  using namespace tiff_detail;
  struct Entry {
    uint16_t tag, type;
    uint32_t count, value;
  };
  const uint64_t row_bytes = uint64_t(t.width) * t.samples_per_pixel * (t.bits / 8 ? t.bits / 8 : 1);
  const uint32_t rows_per_strip = t.rows_per_strip ? t.rows_per_strip : (t.height ? t.height : 1);
  const uint64_t data_bytes = row_bytes * t.height;
  std::vector<Entry> e = {
      {256, 4, 1, t.width},       {257, 4, 1, t.height},        {258, 3, 1, t.bits},
      {259, 3, 1, t.compression}, {262, 3, 1, t.photometric},   {273, 4, 1, 0 /* set below */},
      {277, 3, 1, t.samples_per_pixel}, {278, 4, 1, rows_per_strip},
      {279, 4, 1, static_cast<uint32_t>(data_bytes)}, {284, 3, 1, t.planar}, {339, 3, 1, t.sample_format}};
  std::vector<Entry> kept;
  for (const Entry& x : e) {
    bool drop = false;
    for (uint16_t o : t.omit) drop |= o == x.tag;
    if (!drop) kept.push_back(x);
  }
  const size_t ifd = 8, ifd_bytes = 2 + 12 * kept.size() + 4;
  const uint32_t data_at = static_cast<uint32_t>(ifd + ifd_bytes);
  for (Entry& x : kept) {
    if (x.tag == 273) x.value = data_at;
    auto o = t.override_long.find(x.tag);
    if (o != t.override_long.end()) {
      x.type = 4;
      x.value = o->second;
    }
  }
  // Only a modest amount of pixel data is written, whatever the header says.
  const size_t written = static_cast<size_t>(std::min<uint64_t>(data_bytes, 1u << 20));
  std::string s(data_at + written, '\0');
  s[0] = s[1] = t.big_endian_magic ? 'M' : 'I';
  put16(s, 2, 42);
  put32(s, 4, static_cast<uint32_t>(ifd));
  put16(s, ifd, static_cast<uint16_t>(kept.size()));
  for (size_t i = 0; i < kept.size(); ++i) {
    const size_t at = ifd + 2 + 12 * i;
    put16(s, at, kept[i].tag);
    put16(s, at + 2, kept[i].type);
    put32(s, at + 4, kept[i].count);
    if (kept[i].type == 3)
      put16(s, at + 8, static_cast<uint16_t>(kept[i].value));
    else
      put32(s, at + 8, kept[i].value);
  }
  put32(s, ifd + 2 + 12 * kept.size(), t.next_ifd);
  for (size_t i = 0; i < written; ++i) s[data_at + i] = static_cast<char>(i * 7);
  return s;
}

}  // namespace hostile
