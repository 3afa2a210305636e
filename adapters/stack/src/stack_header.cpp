// MetaImage and NRRD headers (see fdk/adapters/image_stack.hpp).
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/files.hpp"
#include "fdk/adapters/image_stack.hpp"
#include "fdk/adapters/value_ranges.hpp"

namespace fdk {
namespace adapters {
namespace {

// A header longer than this is not a header.
constexpr size_t kMaxHeaderBytes = 1u << 20;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The shortest text that reads back as `v` ("1e+308", "0.2").
std::string number_text(double v) {
  char b[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

bool ends_with(const std::string& s, const char* suffix) {
  const std::string l = lower(s), suf = suffix;
  return l.size() >= suf.size() && l.compare(l.size() - suf.size(), suf.size(), suf) == 0;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

// The header's problems all name the file and where.
struct Where {
  const std::string& path;
  std::string key;
  [[noreturn]] void bad(const std::string& what) const {
    fail(ErrorKind::kInput, "'" + path + "': " + key + ": " + what);
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    fail(ErrorKind::kUnsupported, "'" + path + "': " + key + ": " + what);
  }
};

double to_real(const std::string& text, const Where& w, bool allow_nan = false) {
  if (allow_nan && lower(text) == "nan") return std::nan("");
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s, &end);
  if (end == s || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    w.bad("'" + text + "' is not a finite number");
  }
  return v;
}

int64_t to_int(const std::string& text, const Where& w, int64_t lo, int64_t hi) {
  const char* s = text.c_str();
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    w.bad("'" + text + "' is not an integer in [" + std::to_string(lo) + ", " +
          std::to_string(hi) + "]");
  }
  return v;
}

std::vector<double> reals(const std::string& value, size_t n, const Where& w,
                          bool allow_nan = false) {
  const auto ws = words(value);
  if (ws.size() != n) w.bad("expected " + std::to_string(n) + " numbers, got '" + value + "'");
  std::vector<double> out;
  for (const auto& x : ws) out.push_back(to_real(x, w, allow_nan));
  return out;
}

bool to_bool(const std::string& value, const Where& w) {
  const std::string v = lower(trim(value));
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  w.bad("'" + value + "' is neither True nor False");
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string resolve(const std::string& header, const std::string& name) {
  if (!name.empty() && name[0] == '/') return name;
  return folder_of(header) + name;
}

// A data file name that is a list or a numbered pattern.
void refuse_file_lists(const std::string& name, const Where& w) {
  // A plain name may hold spaces (MetaIO reads them); a pattern has a '%'.
  if (lower(name) == "list" || lower(name.substr(0, 5)) == "list " ||
      name.find('%') != std::string::npos) {
    w.unsupported("'" + name + "': lists and numbered file patterns are not read (one data file only)");
  }
}

// What the header is read for: the limits differ. A projection stack's
// frame is read into memory whole (at most 2^28 pixels, 2^24 frames); a
// --like volume grid is never read, only its size taken, which must be
// within the library's volume limits (65536 per axis).
enum class Purpose { kProjections, kVolumeGrid };

void check_sizes(const StackHeader& h, const Where& w, Purpose purpose = Purpose::kProjections) {
  for (int a = 0; a < 3; ++a) {
    if (h.size[a] < 1) w.bad("a size is below 1");
  }
  if (purpose == Purpose::kVolumeGrid) {
    for (int a = 0; a < 3; ++a) {
      if (h.size[a] > ranges::kMaxExtent) {
        w.bad(std::to_string(h.size[a]) + " voxels along axis " + std::to_string(a) +
              ": a volume has at most " + std::to_string(ranges::kMaxExtent) +
              " voxels per axis (the library's limit)");
      }
    }
    return;
  }
  if (h.frame_samples() > kMaxStackFramePixels) {
    w.bad(std::to_string(h.size[0]) + " x " + std::to_string(h.size[1]) +
          " pixels per frame is more than the " + std::to_string(kMaxStackFramePixels) +
          " this reader accepts");
  }
  if (static_cast<uint64_t>(h.size[2]) > kMaxStackFrames) {
    w.bad(std::to_string(h.size[2]) + " frames is more than the " +
          std::to_string(kMaxStackFrames) + " this reader accepts");
  }
}

void set_element_type(const std::string& v, StackHeader* h, const Where& w) {
  static const struct {
    const char* name;
    SampleType type;
  } kTypes[] = {{"MET_UCHAR", SampleType::kUInt8},   {"MET_CHAR", SampleType::kInt8},
                {"MET_USHORT", SampleType::kUInt16}, {"MET_SHORT", SampleType::kInt16},
                {"MET_UINT", SampleType::kUInt32},   {"MET_INT", SampleType::kInt32},
                {"MET_FLOAT", SampleType::kFloat32}, {"MET_DOUBLE", SampleType::kFloat64}};
  for (const auto& t : kTypes) {
    if (v == t.name) {
      h->type = t.type;
      return;
    }
  }
  w.unsupported("element type '" + v + "' is not read (MET_UCHAR, MET_CHAR, MET_USHORT, "
                "MET_SHORT, MET_UINT, MET_INT, MET_FLOAT, MET_DOUBLE are)");
}

StackHeader parse_metaimage(const std::string& head, const std::string& path, Purpose purpose) {
  StackHeader h;
  h.header_path = path;
  h.format = "MetaImage";
  bool have_dims = false, have_size = false, have_type = false, have_spacing = false;
  bool local = false;
  int64_t header_size = 0;
  std::string size_text, spacing_text, element_size_text, origin_text, matrix_text;
  std::string size_key = "DimSize", origin_key, matrix_key;
  size_t pos = 0;
  bool done = false;
  while (!done) {
    if (pos >= head.size() || pos >= kMaxHeaderBytes) {
      fail(ErrorKind::kInput, "'" + path + "': the MetaImage header has no ElementDataFile line" +
                                  (pos >= kMaxHeaderBytes ? " in its first 1 MiB" : ""));
    }
    size_t eol = head.find('\n', pos);
    if (eol == std::string::npos) eol = head.size();
    const std::string line = head.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.find('\0') != std::string::npos) {
      fail(ErrorKind::kInput, "'" + path + "': a NUL byte in the MetaImage header");
    }
    const std::string t = trim(line);
    if (t.empty()) continue;
    const size_t eq = t.find('=');
    if (eq == std::string::npos) {
      fail(ErrorKind::kInput, "'" + path + "': '" + t.substr(0, 60) +
                                  "' is not a MetaImage 'Key = Value' line");
    }
    const std::string key = trim(t.substr(0, eq)), value = trim(t.substr(eq + 1));
    const std::string k = lower(key);
    const Where w{path, key};
    if (k == "objecttype") {
      if (lower(value) != "image") w.unsupported("'" + value + "' (only Image is read)");
    } else if (k == "ndims") {
      h.dims = static_cast<int>(to_int(value, w, 1, 64));
      if (h.dims != 2 && h.dims != 3) {
        w.unsupported(value + " dimensions (a 3D stack of projections or a 2D projection is read)");
      }
      have_dims = true;
    } else if (k == "dimsize") {
      size_text = value;
      have_size = true;
    } else if (k == "elementtype") {
      set_element_type(value, &h, w);
      have_type = true;
    } else if (k == "elementspacing") {
      spacing_text = value;
      have_spacing = true;
    } else if (k == "elementsize") {
      element_size_text = value;
    } else if (k == "offset" || k == "origin" || k == "position") {
      origin_text = value;
      origin_key = key;
    } else if (k == "transformmatrix" || k == "rotation" || k == "orientation") {
      matrix_text = value;
      matrix_key = key;
    } else if (k == "binarydata") {
      if (!to_bool(value, w)) w.unsupported("ASCII sample data is not read");
    } else if (k == "binarydatabyteordermsb" || k == "elementbyteordermsb") {
      h.big_endian = to_bool(value, w);
    } else if (k == "compresseddata") {
      h.compressed = to_bool(value, w);
    } else if (k == "compresseddatasize") {
      to_int(value, w, 0, INT64_MAX);
    } else if (k == "headersize") {
      header_size = to_int(value, w, -1, INT64_MAX);
    } else if (k == "elementnumberofchannels") {
      if (to_int(value, w, 1, 1 << 20) != 1) {
        w.unsupported(value + " channels (one sample per pixel is read)");
      }
    } else if (k == "elementdatafile") {
      if (value.empty()) w.bad("no file named");
      if (lower(value) == "local") {
        local = true;
        h.data_path = path;
        h.file_skip = static_cast<int64_t>(pos > head.size() ? head.size() : pos);
      } else {
        refuse_file_lists(value, w);
        h.data_path = resolve(path, value);
      }
      done = true;
    }
    // Other keys (Comment, Name, AnatomicalOrientation, CenterOfRotation,
    // ElementMin, Modality, ...) do not change the samples: MetaIO itself
    // passes over keys it does not know.
  }
  const Where w{path, "MetaImage header"};
  if (!have_dims) Where{path, "NDims"}.bad("missing");
  if (!have_size) Where{path, "DimSize"}.bad("missing");
  if (!have_type) Where{path, "ElementType"}.bad("missing");
  {
    const Where ws{path, "DimSize"};
    const auto v = words(size_text);
    if (v.size() != static_cast<size_t>(h.dims)) {
      ws.bad("expected " + std::to_string(h.dims) + " sizes, got '" + size_text + "'");
    }
    for (int a = 0; a < h.dims; ++a) h.size[a] = to_int(v[static_cast<size_t>(a)], ws, 1, INT32_MAX);
    check_sizes(h, ws, purpose);
    h.size_key = "DimSize";
  }
  const size_t n = static_cast<size_t>(h.dims);
  if (!have_spacing && !element_size_text.empty()) {
    spacing_text = element_size_text;
    have_spacing = true;
  }
  if (have_spacing) {
    const Where ws{path, element_size_text == spacing_text ? "ElementSize" : "ElementSpacing"};
    const auto s = reals(spacing_text, n, ws);
    for (size_t a = 0; a < n; ++a) {
      if (!(s[a] > 0)) ws.bad("spacings must be > 0");
      h.spacing[a] = s[a];
    }
    h.has_spacing = true;
    h.spacing_key = ws.key;
  }
  if (!origin_text.empty()) {
    const auto o = reals(origin_text, n, Where{path, origin_key});
    for (size_t a = 0; a < n; ++a) h.origin[a] = o[a];
    h.has_origin = true;
    h.origin_key = origin_key;
  }
  if (!matrix_text.empty()) {
    const auto m = reals(matrix_text, n * n, Where{path, matrix_key});
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = 0; b < 3; ++b) h.direction[a][b] = b < n ? m[a * n + b] : 0.0;
    }
    h.has_direction = true;
  }
  if (local) {
    if (header_size != 0) {
      Where{path, "HeaderSize"}.unsupported("a header size with ElementDataFile = LOCAL");
    }
  } else {
    h.file_skip = header_size;
  }
  if (h.compressed && h.file_skip < 0) {
    Where{path, "HeaderSize"}.unsupported("-1 (data at the end of the file) with compressed data");
  }
  return h;
}

// NRRD's type names (the spec's synonyms).
bool nrrd_type(const std::string& v, SampleType* t) {
  static const struct {
    const char* names;
    SampleType type;
  } kTypes[] = {
      {"|signed char|int8|int8_t|", SampleType::kInt8},
      {"|uchar|unsigned char|uint8|uint8_t|", SampleType::kUInt8},
      {"|short|short int|signed short|signed short int|int16|int16_t|", SampleType::kInt16},
      {"|ushort|unsigned short|unsigned short int|uint16|uint16_t|", SampleType::kUInt16},
      {"|int|signed int|int32|int32_t|", SampleType::kInt32},
      {"|uint|unsigned int|uint32|uint32_t|", SampleType::kUInt32},
      {"|float|", SampleType::kFloat32},
      {"|double|", SampleType::kFloat64},
  };
  const std::string key = "|" + lower(v) + "|";
  for (const auto& e : kTypes) {
    if (std::strstr(e.names, key.c_str())) {
      *t = e.type;
      return true;
    }
  }
  return false;
}

// "(1,0,0)" to numbers; "none" to an empty vector.
std::vector<double> nrrd_vector(const std::string& text, const Where& w) {
  if (lower(text) == "none") return {};
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    w.bad("'" + text + "' is not a vector like (1,0,0)");
  }
  std::string inner = text.substr(1, text.size() - 2);
  for (char& c : inner) {
    if (c == ',') c = ' ';
  }
  std::vector<double> out;
  for (const auto& x : words(inner)) out.push_back(to_real(x, w));
  if (out.empty() || out.size() > 3) w.bad("'" + text + "' is not a vector of 1 to 3 numbers");
  return out;
}

// "(1,0,0) (0,1,0) none" to its vectors.
std::vector<std::string> nrrd_vectors(const std::string& value) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : value) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (std::isspace(static_cast<unsigned char>(c)) && depth == 0) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

StackHeader parse_nrrd(const std::string& head, const std::string& path, Purpose purpose) {
  StackHeader h;
  h.header_path = path;
  h.format = "NRRD";
  if (head.compare(0, 7, "NRRD000") != 0 || head.size() < 9 || head[7] < '1' || head[7] > '5') {
    fail(ErrorKind::kInput, "'" + path + "' does not start with a NRRD magic line (NRRD0001 to NRRD0005)");
  }
  size_t pos = head.find('\n');
  if (pos == std::string::npos) fail(ErrorKind::kInput, "'" + path + "': the NRRD header is truncated");
  ++pos;
  bool have_dims = false, have_type = false, have_sizes = false, have_endian = false;
  bool detached = false, ended = false;
  int64_t byte_skip = 0;
  std::string sizes, spacings, directions, origin, kinds, space;
  while (pos < head.size()) {
    if (pos >= kMaxHeaderBytes) {
      fail(ErrorKind::kInput, "'" + path + "': the NRRD header does not end in its first 1 MiB");
    }
    size_t eol = head.find('\n', pos);
    if (eol == std::string::npos) eol = head.size();
    std::string line = head.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) {
      ended = true;
      break;
    }
    if (line.find('\0') != std::string::npos) {
      fail(ErrorKind::kInput, "'" + path + "': a NUL byte in the NRRD header");
    }
    if (line[0] == '#') continue;
    if (line.find(":=") != std::string::npos) continue;  // key/value pairs: free text
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) {
      fail(ErrorKind::kInput, "'" + path + "': '" + line.substr(0, 60) + "' is not a NRRD 'field: value' line");
    }
    const std::string field = lower(trim(line.substr(0, colon)));
    const std::string value = trim(line.substr(colon + 2));
    const Where w{path, "'" + field + "'"};
    if (field == "dimension") {
      h.dims = static_cast<int>(to_int(value, w, 1, 16));
      if (h.dims != 2 && h.dims != 3) {
        w.unsupported(value + " dimensions (a 3D stack of projections or a 2D projection is read)");
      }
      have_dims = true;
    } else if (field == "type") {
      if (!nrrd_type(value, &h.type)) w.unsupported("type '" + value + "' is not read");
      have_type = true;
    } else if (field == "sizes") {
      sizes = value;
      have_sizes = true;
    } else if (field == "endian") {
      if (lower(value) == "little") h.big_endian = false;
      else if (lower(value) == "big") h.big_endian = true;
      else w.bad("'" + value + "' (little or big)");
      have_endian = true;
    } else if (field == "encoding") {
      const std::string v = lower(value);
      if (v == "raw") h.compressed = false;
      else if (v == "gzip" || v == "gz") h.compressed = true;
      else w.unsupported("'" + value + "' (raw and gzip are read)");
    } else if (field == "spacings") {
      spacings = value;
    } else if (field == "space directions") {
      directions = value;
    } else if (field == "space origin") {
      origin = value;
    } else if (field == "space") {
      space = lower(value);
    } else if (field == "kinds") {
      kinds = value;
    } else if (field == "byte skip" || field == "byteskip") {
      byte_skip = to_int(value, w, -1, INT64_MAX);
    } else if (field == "line skip" || field == "lineskip") {
      if (to_int(value, w, 0, INT64_MAX) != 0) w.unsupported("skipping lines is not supported");
    } else if (field == "data file" || field == "datafile") {
      refuse_file_lists(value, w);
      h.data_path = resolve(path, value);
      detached = true;
    } else if (field == "block size" || field == "blocksize") {
      w.unsupported("block types are not read");
    } else if (field == "content" || field == "min" || field == "max" || field == "old min" ||
               field == "oldmin" || field == "old max" || field == "oldmax" ||
               field == "units" || field == "labels" || field == "centers" ||
               field == "centerings" || field == "thicknesses" || field == "axis mins" ||
               field == "axismins" || field == "axis maxs" || field == "axismaxs" ||
               field == "sample units" || field == "sampleunits" ||
               field == "measurement frame" || field == "space units" || field == "number" ||
               field == "space dimension") {
      // Descriptive: they do not change the samples or their positions.
    } else {
      w.bad("unknown NRRD field");
    }
  }
  if (!have_dims) Where{path, "'dimension'"}.bad("missing");
  if (!have_type) Where{path, "'type'"}.bad("missing");
  if (!have_sizes) Where{path, "'sizes'"}.bad("missing");
  if (!have_endian && sample_bytes(h.type) > 1) Where{path, "'endian'"}.bad("missing");
  const size_t n = static_cast<size_t>(h.dims);
  {
    const Where w{path, "'sizes'"};
    const auto v = words(sizes);
    if (v.size() != n) w.bad("expected " + std::to_string(n) + " sizes, got '" + sizes + "'");
    for (size_t a = 0; a < n; ++a) h.size[a] = to_int(v[a], w, 1, INT32_MAX);
    check_sizes(h, w, purpose);
    h.size_key = "'sizes'";
  }
  if (!kinds.empty()) {
    const Where w{path, "'kinds'"};
    const auto v = words(kinds);
    if (v.size() != n) w.bad("expected " + std::to_string(n) + " kinds, got '" + kinds + "'");
    for (const auto& k : v) {
      const std::string l = lower(k);
      if (l != "domain" && l != "space" && l != "time" && l != "list" && l != "point" &&
          l != "none" && l != "???") {
        w.unsupported("kind '" + k + "' (samples with components are not read)");
      }
    }
  }
  // ITK reads right-/left-handed anatomical spaces into its LPS frame.
  std::array<double, 3> sign{{1, 1, 1}};
  if (!space.empty()) {
    const Where w{path, "'space'"};
    if (space == "right-anterior-superior" || space == "ras" || space == "right-anterior-superior-time" || space == "rast") {
      sign = {{-1, -1, 1}};
    } else if (space == "left-anterior-superior" || space == "las" || space == "left-anterior-superior-time" || space == "last") {
      sign = {{1, -1, 1}};
    } else if (space != "left-posterior-superior" && space != "lps" &&
               space != "left-posterior-superior-time" && space != "lpst" &&
               space != "scanner-xyz" && space != "scanner-xyz-time" &&
               space != "3d-right-handed" && space != "3d-left-handed" &&
               space != "3d-right-handed-time" && space != "3d-left-handed-time") {
      w.unsupported("'" + space + "' is not read");
    }
  }
  if (!directions.empty()) {
    const Where w{path, "'space directions'"};
    const auto v = nrrd_vectors(directions);
    if (v.size() != n) w.bad("expected " + std::to_string(n) + " vectors or none, got '" + directions + "'");
    for (size_t a = 0; a < n; ++a) {
      const auto d = nrrd_vector(v[a], w);
      if (d.empty()) {
        if (a < 2) w.bad("the detector axes need a direction, not 'none'");
        continue;
      }
      double norm = 0;
      for (double x : d) norm += x * x;
      norm = std::sqrt(norm);
      if (!(norm > 0)) w.bad("a zero vector");
      for (size_t b = 0; b < 3; ++b) h.direction[a][b] = b < d.size() ? sign[b] * d[b] / norm : 0.0;
      h.spacing[a] = norm;
    }
    h.has_spacing = h.has_direction = true;
    h.spacing_key = w.key;
  } else if (!spacings.empty()) {
    const Where w{path, "'spacings'"};
    const auto s = reals(spacings, n, w, true);
    for (size_t a = 0; a < n; ++a) {
      if (std::isnan(s[a])) {
        if (a < 2) w.bad("the detector axes need a spacing, not nan");
        continue;
      }
      if (!(s[a] > 0)) w.bad("spacings must be > 0");
      h.spacing[a] = s[a];
    }
    h.has_spacing = true;
    h.spacing_key = w.key;
  }
  if (!origin.empty()) {
    const Where w{path, "'space origin'"};
    const auto o = nrrd_vector(origin, w);
    if (o.empty()) w.bad("'none'");
    for (size_t b = 0; b < o.size(); ++b) h.origin[b] = sign[b] * o[b];
    h.has_origin = true;
    h.origin_key = w.key;
  }
  if (detached) {
    h.file_skip = byte_skip;
  } else {
    if (!ended) fail(ErrorKind::kInput, "'" + path + "': the NRRD header has no blank line before the data");
    h.data_path = path;
    h.file_skip = static_cast<int64_t>(pos);
    if (byte_skip < 0) Where{path, "'byte skip'"}.unsupported("-1 with data in the header's file");
    if (!h.compressed) h.file_skip += byte_skip;
  }
  if (h.compressed) {
    if (byte_skip < 0) Where{path, "'byte skip'"}.unsupported("-1 with gzip data");
    // The spec applies the byte skip to the decompressed stream.
    h.stream_skip = static_cast<uint64_t>(byte_skip);
    if (detached) h.file_skip = 0;
  }
  return h;
}

uint64_t file_size_of(const std::string& path, const std::string& name) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail(ErrorKind::kInput, name + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(ErrorKind::kInput, name + " is not a regular file");
  return static_cast<uint64_t>(st.st_size);
}

// Checks the data file against the header; resolves file_skip -1.
void check_data_file(StackHeader* h) {
  const std::string name = h->data_path == h->header_path
                               ? "'" + h->data_path + "'"
                               : "'" + h->data_path + "' (the data file of '" + h->header_path + "')";
  // A raw file has no header: its layout came from the caller (the tool's
  // --raw options), and the message names that instead.
  const std::string its_header = h->layout_name.empty() ? "its header" : h->layout_name;
  const uint64_t size = file_size_of(h->data_path, name);
  if (h->compressed) {
    if (static_cast<uint64_t>(h->file_skip) >= size) {
      fail(ErrorKind::kInput, name + " holds no compressed data after its first " +
                                  std::to_string(h->file_skip) + " bytes");
    }
    // Deflate expands at most ~1032:1: a header asking for more than the
    // stream can hold is refused before any frame buffer is allocated.
    const uint64_t stream = size - static_cast<uint64_t>(h->file_skip);
    const uint64_t want = h->frame_bytes() * static_cast<uint64_t>(h->size[2]) + h->stream_skip;
    if (want / 1032 > stream + 64) {
      fail(ErrorKind::kInput, name + " holds " + std::to_string(stream) +
                                  " bytes of compressed data, which cannot expand to the " +
                                  std::to_string(want) + " bytes " + its_header + " describes");
    }
    return;
  }
  // frame_bytes() <= 2^31 and frames <= 2^24: no overflow in 64 bits.
  const uint64_t need = h->frame_bytes() * static_cast<uint64_t>(h->size[2]);
  if (h->file_skip < 0) {
    if (need > size) {
      fail(ErrorKind::kInput, name + " is " + std::to_string(size) + " bytes, less than the " +
                                  std::to_string(need) + " " + its_header + " describes");
    }
    h->file_skip = static_cast<int64_t>(size - need);
    return;
  }
  const uint64_t skip = static_cast<uint64_t>(h->file_skip);
  if (skip > size || size - skip < need) {
    fail(ErrorKind::kInput, name + " is " + std::to_string(size) + " bytes but " + its_header +
                                " describes " + std::to_string(need) + " bytes of samples after " +
                                std::to_string(skip) + ": the file is truncated or " +
                                (h->layout_name.empty() ? "the header wrong" : "the layout wrong"));
  }
}

}  // namespace

bool is_stack_path(const std::string& path) {
  return ends_with(path, ".mha") || ends_with(path, ".mhd") || ends_with(path, ".nrrd") ||
         ends_with(path, ".nhdr");
}

bool parse_sample_type(const std::string& name, SampleType* type) {
  for (SampleType t : {SampleType::kUInt8, SampleType::kUInt16, SampleType::kUInt32,
                       SampleType::kFloat32, SampleType::kInt8, SampleType::kInt16,
                       SampleType::kInt32, SampleType::kFloat64}) {
    if (lower(name) == sample_type_name(t)) {
      *type = t;
      return true;
    }
  }
  return false;
}

namespace {

StackHeader parse_header_for(const std::string& head, const std::string& path, Purpose purpose) {
  if (ends_with(path, ".nrrd") || ends_with(path, ".nhdr")) return parse_nrrd(head, path, purpose);
  if (ends_with(path, ".mha") || ends_with(path, ".mhd")) return parse_metaimage(head, path, purpose);
  fail(ErrorKind::kUnsupported, "'" + path + "' is not a MetaImage (.mha, .mhd) or NRRD (.nrrd, .nhdr) file");
}

}  // namespace

StackHeader parse_stack_header(const std::string& head, const std::string& path) {
  return parse_header_for(head, path, Purpose::kProjections);
}

namespace {

StackHeader read_header_only(const std::string& path, Purpose purpose = Purpose::kProjections) {
  require_readable_file(path);
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(ErrorKind::kInput, "'" + path + "' cannot be opened");
  std::string head(kMaxHeaderBytes, '\0');
  f.read(&head[0], static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(f.gcount()));
  return parse_header_for(head, path, purpose);
}

}  // namespace

StackHeader read_stack_header(const std::string& path) {
  StackHeader h = read_header_only(path);
  check_data_file(&h);
  return h;
}

fdk_volume read_volume_grid(const std::string& path) {
  const StackHeader h = read_header_only(path, Purpose::kVolumeGrid);
  const std::string key = h.format == "NRRD" ? "space directions" : "TransformMatrix";
  if (h.dims != 3) {
    fail(ErrorKind::kUnsupported, "'" + path + "' is a 2D image, not a volume");
  }
  fdk_volume v{};
  bool taken[3] = {false, false, false};
  for (int a = 0; a < 3; ++a) {
    int axis = -1;
    for (int b = 0; b < 3; ++b) {
      const double d = h.direction[a][b];
      if (std::fabs(d - 1) < 1e-6 && axis < 0) {
        axis = b;
      } else if (std::fabs(d) >= 1e-6) {
        axis = -2;
      }
    }
    if (axis < 0 || taken[axis]) {
      fail(ErrorKind::kUnsupported,
           "'" + path + "': its " + key +
               " flips or rotates the axes: fdk's volumes are aligned with x, y, z (an identity "
               "direction, or a permutation of the axes, is read)");
    }
    taken[axis] = true;
    // The library's volume ranges (fdk.h), named by the header's key: the
    // library itself could only name "volume x spacing".
    if (h.has_spacing && !ranges::spacing_ok(h.spacing[a])) {
      Where{path, h.spacing_key}.bad(number_text(h.spacing[a]) + " mm along axis " + std::to_string(a) +
                                     ": a voxel size must lie within " + ranges::kSpacingText +
                                     " mm (the library's range)");
    }
    v.size[axis] = static_cast<int32_t>(h.size[a]);
    v.spacing[axis] = h.spacing[a];
  }
  for (int b = 0; b < 3; ++b) {
    if (h.has_origin && !ranges::coordinate_ok(h.origin[b])) {
      Where{path, h.origin_key}.bad(number_text(h.origin[b]) + " mm along " + std::string(1, "xyz"[b]) +
                                    ": a volume origin must lie within " + ranges::kCoordinateText +
                                    " mm (the library's range)");
    }
    v.origin[b] = h.origin[b];
  }
  return v;
}

void check_detector_geometry(const StackHeader& h) {
  for (int a = 0; a < 2; ++a) {
    const char* axis = a == 0 ? "u" : "v";
    if (h.has_spacing && !ranges::spacing_ok(h.spacing[a])) {
      Where{h.header_path, h.spacing_key}.bad(
          number_text(h.spacing[a]) + " mm along " + axis + ": the detector pitch must lie within " +
          ranges::kSpacingText + " mm (the library's range)");
    }
    if (h.has_origin && !ranges::coordinate_ok(h.origin[a])) {
      Where{h.header_path, h.origin_key}.bad(
          number_text(h.origin[a]) + " mm along " + axis + ": the detector origin must lie within " +
          ranges::kCoordinateText + " mm (the library's range)");
    }
  }
}

StackHeader raw_stack_header(const std::string& path, int64_t width, int64_t height,
                             int64_t frames, SampleType type, uint64_t header_bytes,
                             bool big_endian, const std::string& layout_name) {
  require_readable_file(path);
  StackHeader h;
  h.header_path = h.data_path = path;
  h.format = "raw";
  h.layout_name = layout_name.empty() ? "the raw layout" : layout_name;
  h.size = {{width, height, frames}};
  h.type = type;
  h.big_endian = big_endian;
  if (header_bytes > static_cast<uint64_t>(INT64_MAX)) {
    fail(ErrorKind::kInvalidArgument, "'" + path + "': " + h.layout_name + ": a header of " +
                                          std::to_string(header_bytes) + " bytes");
  }
  h.file_skip = static_cast<int64_t>(header_bytes);
  // The layout is the caller's (not the file's): beyond the reader's limits
  // it is a bad argument, named as the caller named it.
  try {
    check_sizes(h, Where{path, h.layout_name});
  } catch (const Error& e) {
    fail(ErrorKind::kInvalidArgument, e.what());
  }
  check_data_file(&h);
  return h;
}

}  // namespace adapters
}  // namespace fdk
