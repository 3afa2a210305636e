// RTK XML geometry, the INI scan description and the default volume (see
// fdk/adapters/geometry_io.hpp).
#include "fdk/adapters/geometry_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/files.hpp"
#include "fdk/adapters/value_ranges.hpp"
#include "xml_reader.hpp"

namespace fdk {
namespace adapters {
namespace {

using xml_detail::XmlNode;
using xml_detail::XmlParser;
using xml_detail::kMaxXmlBytes;

constexpr double kPi = 3.14159265358979323846;

// A NUL byte means a binary or damaged file, and it would hide what follows
// it from the number parsing (strtod stops there: "1000\0junk" read as
// 1000). Refused, naming the file, the line and the byte offset.
void reject_nul_bytes(const std::string& text, const std::string& where_file) {
  const size_t at = text.find('\0');
  if (at == std::string::npos) return;
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  fail(ErrorKind::kInput, where_file + " line " + std::to_string(line) + " (byte offset " +
                              std::to_string(at) +
                              "): a NUL byte (0x00); geometry files are text (a binary or "
                              "damaged file?)");
}

// Angles beyond this are refused as the library refuses them (the step
// between views would be lost to rounding); no scanner turns so far.
constexpr double kMaxAngleDeg = ranges::kMaxAngleDeg;

bool iequals(const std::string& a, const char* b) {
  const size_t n = std::strlen(b);
  if (a.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return std::string();
  const size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

// Parses a whole string as one finite decimal double; false otherwise.
// Decimal only: strtod also takes C's hexadecimal forms ("0x10" is 16,
// "0x1p11" 2048), which RTK's reader does not; in a geometry file such text
// is a typo or a corrupt file, not a distance.
bool to_double(const std::string& text, double* out) {
  const std::string t = trim(text);
  if (t.empty() || t.size() > 64) return false;
  if (t.find_first_not_of("0123456789+-.eE") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// Parses a list of doubles separated by spaces or commas.
bool to_doubles(const std::string& text, std::vector<double>* out) {
  std::string t = text;
  for (char& c : t) {
    if (c == ',' || c == '\t' || c == '\r' || c == '\n') c = ' ';
  }
  std::istringstream in(t);
  std::string word;
  out->clear();
  while (in >> word) {
    double v;
    if (!to_double(word, &v)) return false;
    out->push_back(v);
  }
  return true;
}

double normalise_degrees(double a) {
  double r = std::fmod(a, 360.0);
  if (r < 0) r += 360.0;
  if (r >= 360.0) r -= 360.0;
  return r;
}

// The shortest decimal form that reads back to the same double.
std::string number(double v) {
  char buffer[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

struct Params {
  double values[9] = {};  // in the order of kNames
};

// fdk_view member order.
const char* const kNames[9] = {"GantryAngle",      "SourceToIsocenterDistance",
                               "SourceToDetectorDistance", "SourceOffsetX",
                               "SourceOffsetY",    "ProjectionOffsetX",
                               "ProjectionOffsetY", "InPlaneAngle",
                               "OutOfPlaneAngle"};

fdk_view to_view(const Params& p) {
  fdk_view v{};
  v.gantry_angle_deg = p.values[0];
  v.sid = p.values[1];
  v.sdd = p.values[2];
  v.source_offset_x = p.values[3];
  v.source_offset_y = p.values[4];
  v.projection_offset_x = p.values[5];
  v.projection_offset_y = p.values[6];
  v.in_plane_angle_deg = p.values[7];
  v.out_of_plane_angle_deg = p.values[8];
  return v;
}

double field(const fdk_view& v, int k) {
  switch (k) {
    case 0: return v.gantry_angle_deg;
    case 1: return v.sid;
    case 2: return v.sdd;
    case 3: return v.source_offset_x;
    case 4: return v.source_offset_y;
    case 5: return v.projection_offset_x;
    case 6: return v.projection_offset_y;
    case 7: return v.in_plane_angle_deg;
    default: return v.out_of_plane_angle_deg;
  }
}

// 3x3 rotations as in RTK / ITK (row-major).
void mat3_mul(const double a[9], const double b[9], double out[9]) {
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      out[r * 3 + c] = a[r * 3] * b[c] + a[r * 3 + 1] * b[3 + c] + a[r * 3 + 2] * b[6 + c];
    }
  }
}

}  // namespace

// ---- RTK XML ---------------------------------------------------------------------------

std::array<double, 12> rtk_matrix(const fdk_view& v) {
  const double d2r = kPi / 180.0;
  // R = Rz(-inplane) * Rx(-outofplane) * Ry(-gantry), angles normalised as RTK.
  const double g = -normalise_degrees(v.gantry_angle_deg) * d2r;
  const double o = -normalise_degrees(v.out_of_plane_angle_deg) * d2r;
  const double ip = -normalise_degrees(v.in_plane_angle_deg) * d2r;
  const double ry[9] = {std::cos(g), 0, std::sin(g), 0, 1, 0, -std::sin(g), 0, std::cos(g)};
  const double rx[9] = {1, 0, 0, 0, std::cos(o), -std::sin(o), 0, std::sin(o), std::cos(o)};
  const double rz[9] = {std::cos(ip), -std::sin(ip), 0, std::sin(ip), std::cos(ip), 0, 0, 0, 1};
  double rzx[9], r[9];
  mat3_mul(rz, rx, rzx);
  mat3_mul(rzx, ry, r);
  // Source translation (-sx, -sy, 0) after the rotation, then magnification
  // [[-sdd,0,0,0],[0,-sdd,0,0],[0,0,1,-sid]], then the 2D translation
  // (sx - px, sy - py).
  const double sx = v.source_offset_x, sy = v.source_offset_y;
  // M1 = Mag * [R | t], t = (-sx, -sy, 0).
  double m1[12];
  const double t[3] = {-sx, -sy, 0.0};
  for (int c = 0; c < 4; ++c) {
    const double col[3] = {c < 3 ? r[c] : t[0], c < 3 ? r[3 + c] : t[1],
                           c < 3 ? r[6 + c] : t[2]};
    m1[c] = -v.sdd * col[0];
    m1[4 + c] = -v.sdd * col[1];
    m1[8 + c] = col[2] + (c == 3 ? -v.sid : 0.0);
  }
  const double tx = sx - v.projection_offset_x, ty = sy - v.projection_offset_y;
  std::array<double, 12> m{};
  for (int c = 0; c < 4; ++c) {
    m[static_cast<size_t>(c)] = m1[c] + tx * m1[8 + c];
    m[static_cast<size_t>(4 + c)] = m1[4 + c] + ty * m1[8 + c];
    m[static_cast<size_t>(8 + c)] = m1[8 + c];
  }
  return m;
}

std::vector<fdk_view> parse_rtk_geometry(const std::string& xml, const std::string& name) {
  reject_nul_bytes(xml, "geometry '" + name + "'");
  XmlParser parser(xml, name);
  size_t root = 0;
  const std::vector<XmlNode> nodes = parser.parse(&root);
  const XmlNode& top = nodes[root];
  auto err = [&](int line, const std::string& what) -> void {
    fail(ErrorKind::kInput, "geometry '" + name + "' line " + std::to_string(line) + ": " + what);
  };
  if (top.name != "RTKThreeDCircularGeometry") {
    err(top.line, "the root element is <" + top.name +
                      ">, not <RTKThreeDCircularGeometry> (not an RTK geometry file)");
  }
  int version = -1;
  for (const auto& a : top.attributes) {
    if (a.first == "version") {
      double v = 0;
      if (!to_double(a.second, &v) || v != std::floor(v)) {
        err(top.line, "version '" + a.second + "' is not a number");
      }
      version = static_cast<int>(std::max(-1.0, std::min(v, 1e6)));
    }
  }
  if (version != 2 && version != 3) {
    err(top.line, version < 0 ? std::string("no version attribute (RTK needs version 3)")
                              : "version " + std::to_string(version) +
                                    " is not supported (versions 2 and 3 are)");
  }

  Params cur;
  std::vector<fdk_view> views;
  auto apply = [&](const XmlNode& n, std::array<double, 12>* matrix, bool* has_matrix) {
    if (iequals(n.name, "Matrix")) {
      std::vector<double> values;
      if (!to_doubles(n.text, &values) || values.size() != 12) {
        err(n.line, "<Matrix> must hold 12 numbers (3 rows of 4)");
      }
      if (matrix) {
        std::copy(values.begin(), values.end(), matrix->begin());
        *has_matrix = true;
      }
      return;
    }
    if (iequals(n.name, "RadiusCylindricalDetector")) {
      double r = 0;
      if (!to_double(n.text, &r)) err(n.line, "<" + n.name + "> is not a number");
      if (r != 0.0) {
        fail(ErrorKind::kUnsupported, "geometry '" + name + "' line " + std::to_string(n.line) +
                                          ": cylindrical detectors are not supported "
                                          "(RadiusCylindricalDetector " + trim(n.text) + ")");
      }
      return;
    }
    int k = -1;
    for (int q = 0; q < 9; ++q) {
      if (iequals(n.name, kNames[q])) k = q;
    }
    if (iequals(n.name, "Angle")) k = 0;
    if (k < 0) return;  // collimation and anything else: not ours
    double v = 0;
    if (!to_double(n.text, &v)) {
      err(n.line, "<" + n.name + "> '" + trim(n.text).substr(0, 40) + "' is not a number");
    }
    const bool angle = k == 0 || k == 7 || k == 8;
    if (angle && std::fabs(v) > kMaxAngleDeg) {
      err(n.line, "<" + n.name + "> " + number(v) + " degrees: it must lie within [-1e6, 1e6]");
    }
    // The library's ranges (fdk.h), checked here so that the message names
    // the file, the line and the element. A distance of 0 is left to the
    // view's check below, which says what 0 means (missing, or parallel).
    if ((k == 1 || k == 2) && v != 0.0 && !ranges::distance_ok(v)) {
      err(n.line, "<" + n.name + "> " + number(v) + " mm: it must lie within " +
                      ranges::kDistanceText + " (the library's range)");
    }
    if (k >= 3 && k <= 6 && !ranges::coordinate_ok(v)) {
      err(n.line, "<" + n.name + "> " + number(v) + " mm: it must lie within " +
                      ranges::kCoordinateText + " (the library's range)");
    }
    cur.values[k] = v;
  };
  for (size_t child : top.children) {
    const XmlNode& n = nodes[child];
    if (!iequals(n.name, "Projection")) {
      apply(n, nullptr, nullptr);
      continue;
    }
    std::array<double, 12> matrix{};
    bool has_matrix = false;
    for (size_t c : n.children) apply(nodes[c], &matrix, &has_matrix);
    const fdk_view v = to_view(cur);
    const std::string which = "projection " + std::to_string(views.size());
    if (!(v.sid > 0.0)) {
      err(n.line, which + ": SourceToIsocenterDistance must be given and > 0");
    }
    if (!(v.sdd > 0.0)) {
      err(n.line, which + (v.sdd == 0.0 ? ": SourceToDetectorDistance is 0 (a parallel "
                                          "geometry, not supported) or missing"
                                        : ": SourceToDetectorDistance must be > 0"));
    }
    if (!ranges::magnification_ok(v.sid, v.sdd)) {
      err(n.line, which + ": SourceToDetectorDistance / SourceToIsocenterDistance is " +
                      number(v.sdd) + " / " + number(v.sid) + ": the magnification must lie within " +
                      ranges::kMagnificationText + " (the library's range)");
    }
    if (has_matrix) {
      const std::array<double, 12> m = rtk_matrix(v);
      for (size_t e = 0; e < 12; ++e) {
        if (!(std::fabs(m[e] - matrix[e]) <= 0.001)) {
          err(n.line, which + ": the <Matrix> does not match the parameters (row " +
                          std::to_string(e / 4) + ", column " + std::to_string(e % 4) + ": " +
                          number(matrix[e]) + " in the file, " + number(m[e]) +
                          " from the parameters)");
        }
      }
    }
    views.push_back(v);
  }
  if (views.empty()) err(top.line, "no <Projection> element");
  // Views that all share one gantry angle (repeated exposures, or a file
  // whose angles were lost) cover no arc: nothing can be reconstructed.
  // The library would refuse the scan as a field of its configuration;
  // here the file says it.
  if (views.size() > 1) {
    bool one_angle = true;
    for (const fdk_view& v : views) {
      if (normalise_degrees(v.gantry_angle_deg) != normalise_degrees(views[0].gantry_angle_deg)) one_angle = false;
    }
    if (one_angle) {
      err(top.line, "all " + std::to_string(views.size()) + " projections have GantryAngle " +
                        number(views[0].gantry_angle_deg) +
                        ": a scan needs views at several angles (were the angles lost?)");
    }
  }
  return views;
}

std::vector<fdk_view> read_rtk_geometry(const std::string& path) {
  return parse_rtk_geometry(read_text_file(path, kMaxXmlBytes), path);
}

std::string format_rtk_geometry(const std::vector<fdk_view>& views) {
  if (views.empty()) fail(ErrorKind::kInvalidArgument, "no views to write as RTK geometry");
  std::string out =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE RTKGEOMETRY>\n"
      "<RTKThreeDCircularGeometry version=\"3\">\n";
  bool global[9] = {};
  auto value = [](const fdk_view& v, int k) {
    const double x = field(v, k);
    return (k == 0 || k == 7 || k == 8) ? normalise_degrees(x) : x;
  };
  for (int k = 1; k < 9; ++k) {
    global[k] = true;
    for (const fdk_view& v : views) {
      if (value(v, k) != value(views[0], k)) global[k] = false;
    }
    // RTK omits zero offsets and tilts, never the distances.
    if (global[k] && (k <= 2 || value(views[0], k) != 0.0)) {
      out += std::string("  <") + kNames[k] + ">" + number(value(views[0], k)) + "</" +
             kNames[k] + ">\n";
    }
  }
  for (const fdk_view& v : views) {
    out += "  <Projection>\n";
    for (int k = 0; k < 9; ++k) {
      if (k > 0 && global[k]) continue;
      out += std::string("    <") + kNames[k] + ">" + number(value(v, k)) + "</" + kNames[k] +
             ">\n";
    }
    const std::array<double, 12> m = rtk_matrix(v);
    out += "    <Matrix>\n";
    for (int r = 0; r < 3; ++r) {
      out += "      ";
      for (int c = 0; c < 4; ++c) {
        char buffer[48];
        std::snprintf(buffer, sizeof buffer, "%24.17g", m[static_cast<size_t>(r * 4 + c)]);
        out += buffer;
        if (c < 3) out += ' ';
      }
      out += "\n";
    }
    out += "    </Matrix>\n  </Projection>\n";
  }
  out += "</RTKThreeDCircularGeometry>\n";
  return out;
}

void write_rtk_geometry(const std::string& path, const std::vector<fdk_view>& views) {
  const std::string text = format_rtk_geometry(views);
  OutputFile f(path);
  f.write(text.data(), text.size());
  f.commit();
}

// ---- INI --------------------------------------------------------------------------------

void ScanDescription::merge(const ScanDescription& o) {
#define FDK_MERGE(member) \
  if (o.member) member = o.member
  FDK_MERGE(sid);
  FDK_MERGE(sdd);
  FDK_MERGE(start_angle);
  FDK_MERGE(arc);
  FDK_MERGE(in_plane_angle);
  FDK_MERGE(out_of_plane_angle);
  FDK_MERGE(views);
  FDK_MERGE(direction);
  FDK_MERGE(projection_offset);
  FDK_MERGE(source_offset);
  FDK_MERGE(pixel_size);
  FDK_MERGE(detector_origin);
  FDK_MERGE(detector_size);
  FDK_MERGE(volume_size);
  FDK_MERGE(volume_spacing);
  FDK_MERGE(volume_origin);
#undef FDK_MERGE
  // Only set fields have a source, so the sources follow the values.
  for (const auto& kv : o.sources) sources[kv.first] = kv.second;
}

std::string ScanDescription::source(const std::string& key) const {
  const auto it = sources.find(key);
  return it == sources.end() ? std::string() : it->second;
}

bool ScanDescription::set(const std::string& raw_key, const std::string& value,
                          const std::string& where) {
  std::string key = raw_key;
  for (char& c : key) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
  }
  if (key.find('.') == std::string::npos) key = "scan." + key;
  auto bad = [&](const std::string& what) {
    fail(ErrorKind::kInvalidArgument, where + ": " + raw_key + " = '" + trim(value).substr(0, 60) +
                                          "': " + what);
  };
  std::vector<double> v;
  auto numbers = [&](size_t lo, size_t hi) {
    if (!to_doubles(value, &v) || v.size() < lo || v.size() > hi) {
      bad(lo == hi ? "expected " + std::to_string(lo) + " number" + (lo > 1 ? "s" : "")
                   : "expected " + std::to_string(lo) + " to " + std::to_string(hi) + " numbers");
    }
  };
  auto positive = [&]() {
    for (double x : v) {
      if (!(x > 0.0)) bad("must be > 0");
    }
  };
  // The library's ranges (fdk.h), so that a refused value names this key
  // and its file and line (or its flag) rather than a field of the library.
  auto within = [&](bool (*ok)(double), const char* range) {
    for (double x : v) {
      if (!ok(x)) bad(std::string("must lie within ") + range + " mm (the library's range)");
    }
  };
  auto within_angle_limit = [&]() {
    for (double x : v) {
      if (std::fabs(x) > kMaxAngleDeg) bad("must lie within [-1e6, 1e6] degrees");
    }
  };
  auto integers = [&](double lo, double hi) {
    for (double x : v) {
      if (x != std::floor(x) || x < lo || x > hi) {
        bad("must be an integer in [" + number(lo) + ", " + number(hi) + "]");
      }
    }
  };
  if (key == "scan.sid" || key == "scan.sdd") {
    numbers(1, 1);
    positive();
    within(ranges::distance_ok, ranges::kDistanceText);
    (key == "scan.sid" ? sid : sdd) = v[0];
  } else if (key == "scan.start_angle") {
    numbers(1, 1);
    within_angle_limit();
    start_angle = v[0];
  } else if (key == "scan.arc") {
    numbers(1, 1);
    if (!(v[0] > 0.0 && v[0] <= 360.0)) bad("must lie in (0, 360] degrees");
    arc = v[0];
  } else if (key == "scan.in_plane_angle") {
    numbers(1, 1);
    within_angle_limit();
    in_plane_angle = v[0];
  } else if (key == "scan.out_of_plane_angle") {
    numbers(1, 1);
    within_angle_limit();
    out_of_plane_angle = v[0];
  } else if (key == "scan.views") {
    numbers(1, 1);
    integers(1, 1e8);
    views = static_cast<int>(v[0]);
  } else if (key == "scan.direction") {
    std::string t = trim(value);
    for (char& c : t) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    if (t == "ccw" || t == "+1" || t == "1" || t == "+") direction = 1;
    else if (t == "cw" || t == "-1" || t == "-") direction = -1;
    else bad("expected ccw (+1) or cw (-1)");
  } else if (key == "scan.projection_offset" || key == "scan.source_offset") {
    numbers(2, 2);
    within(ranges::coordinate_ok, ranges::kCoordinateText);
    (key == "scan.projection_offset" ? projection_offset : source_offset) =
        std::array<double, 2>{v[0], v[1]};
  } else if (key == "detector.pixel_size" || key == "scan.pixel_size") {
    numbers(1, 2);
    positive();
    within(ranges::spacing_ok, ranges::kSpacingText);
    key = "detector.pixel_size";
    pixel_size = std::array<double, 2>{v[0], v.size() > 1 ? v[1] : v[0]};
  } else if (key == "detector.origin") {
    numbers(2, 2);
    within(ranges::coordinate_ok, ranges::kCoordinateText);
    detector_origin = std::array<double, 2>{v[0], v[1]};
  } else if (key == "detector.size") {
    numbers(2, 2);
    integers(2, 65536);  // the library's limits per axis
    detector_size = std::array<int, 2>{static_cast<int>(v[0]), static_cast<int>(v[1])};
  } else if (key == "volume.size") {
    numbers(3, 3);
    integers(1, 65536);
    volume_size = std::array<int, 3>{static_cast<int>(v[0]), static_cast<int>(v[1]),
                                     static_cast<int>(v[2])};
  } else if (key == "volume.spacing") {
    numbers(1, 3);
    if (v.size() == 2) bad("expected 1 or 3 numbers");
    positive();
    within(ranges::spacing_ok, ranges::kSpacingText);
    volume_spacing = v.size() == 1 ? std::array<double, 3>{v[0], v[0], v[0]}
                                   : std::array<double, 3>{v[0], v[1], v[2]};
  } else if (key == "volume.origin") {
    numbers(3, 3);
    within(ranges::coordinate_ok, ranges::kCoordinateText);
    volume_origin = std::array<double, 3>{v[0], v[1], v[2]};
  } else {
    return false;
  }
  // A flag names itself; a file's line gets the key it set.
  sources[key] = where.compare(0, 2, "--") == 0 ? where : where + ", " + trim(raw_key);
  return true;
}

ScanDescription parse_scan_ini(const std::string& text, const std::string& name) {
  if (text.size() > (4u << 20)) fail(ErrorKind::kInput, "'" + name + "' is too large");
  reject_nul_bytes(text, "'" + name + "'");
  ScanDescription d;
  std::string section;
  size_t pos = 0;
  int line_no = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    const size_t comment = line.find_first_of("#;");
    if (comment != std::string::npos) line.resize(comment);
    line = trim(line);
    const std::string where = "'" + name + "' line " + std::to_string(line_no);
    if (line.empty()) {
      if (end == text.size()) break;
      continue;
    }
    if (line[0] == '[') {
      if (line.back() != ']') fail(ErrorKind::kInput, where + ": malformed section header");
      section = trim(line.substr(1, line.size() - 2));
      for (char& c : section) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      if (section != "scan" && section != "detector" && section != "volume") {
        fail(ErrorKind::kInput, where + ": unknown section [" + section +
                                    "] (expected [scan], [detector] or [volume])");
      }
    } else {
      const size_t eq = line.find('=');
      if (eq == std::string::npos) fail(ErrorKind::kInput, where + ": expected 'key = value'");
      const std::string key = trim(line.substr(0, eq));
      const std::string value = trim(line.substr(eq + 1));
      if (key.empty()) fail(ErrorKind::kInput, where + ": expected 'key = value'");
      const std::string full =
          section.empty() || key.find('.') != std::string::npos ? key : section + "." + key;
      bool known = false;
      try {
        known = d.set(full, value, where);
      } catch (const Error& e) {
        fail(ErrorKind::kInput, e.what());
      }
      if (!known) fail(ErrorKind::kInput, where + ": unknown key '" + full + "'");
    }
    if (end == text.size()) break;
  }
  return d;
}

ScanDescription read_scan_ini(const std::string& path) {
  return parse_scan_ini(read_text_file(path, 4u << 20), path);
}

std::string format_scan_ini(const ScanDescription& d) {
  std::string out = "# fdk scan description\n[scan]\n";
  auto line = [&](const char* key, const std::vector<double>& values) {
    out += key;
    out += " =";
    for (double x : values) out += " " + number(x);
    out += "\n";
  };
  if (d.sid) line("sid", {*d.sid});
  if (d.sdd) line("sdd", {*d.sdd});
  if (d.views) line("views", {static_cast<double>(*d.views)});
  if (d.start_angle) line("start_angle", {*d.start_angle});
  if (d.arc) line("arc", {*d.arc});
  if (d.direction) out += std::string("direction = ") + (*d.direction < 0 ? "cw" : "ccw") + "\n";
  if (d.projection_offset) line("projection_offset", {(*d.projection_offset)[0], (*d.projection_offset)[1]});
  if (d.source_offset) line("source_offset", {(*d.source_offset)[0], (*d.source_offset)[1]});
  if (d.in_plane_angle) line("in_plane_angle", {*d.in_plane_angle});
  if (d.out_of_plane_angle) line("out_of_plane_angle", {*d.out_of_plane_angle});
  if (d.pixel_size || d.detector_size || d.detector_origin) out += "[detector]\n";
  if (d.pixel_size) line("pixel_size", {(*d.pixel_size)[0], (*d.pixel_size)[1]});
  if (d.detector_size) {
    line("size", {static_cast<double>((*d.detector_size)[0]),
                  static_cast<double>((*d.detector_size)[1])});
  }
  if (d.detector_origin) line("origin", {(*d.detector_origin)[0], (*d.detector_origin)[1]});
  if (d.volume_size || d.volume_spacing || d.volume_origin) out += "[volume]\n";
  if (d.volume_size) {
    line("size", {static_cast<double>((*d.volume_size)[0]),
                  static_cast<double>((*d.volume_size)[1]),
                  static_cast<double>((*d.volume_size)[2])});
  }
  if (d.volume_spacing) {
    line("spacing", {(*d.volume_spacing)[0], (*d.volume_spacing)[1], (*d.volume_spacing)[2]});
  }
  if (d.volume_origin) {
    line("origin", {(*d.volume_origin)[0], (*d.volume_origin)[1], (*d.volume_origin)[2]});
  }
  return out;
}

// ---- default volume ----------------------------------------------------------------------

fdk_detector centred_detector(int columns, int rows, double pitch_u, double pitch_v) {
  fdk_detector d{};
  d.size[0] = columns;
  d.size[1] = rows;
  d.spacing[0] = pitch_u;
  d.spacing[1] = pitch_v;
  d.origin[0] = -0.5 * (columns - 1) * pitch_u;
  d.origin[1] = -0.5 * (rows - 1) * pitch_v;
  return d;
}

fdk_volume default_volume(const fdk_detector& det, const fdk_view& view) {
  if (!(view.sid > 0.0) || !(view.sdd > 0.0) || det.size[0] < 1 || det.size[1] < 1 ||
      !(det.spacing[0] > 0.0) || !(det.spacing[1] > 0.0)) {
    fail(ErrorKind::kInvalidArgument, "default volume: the geometry is incomplete");
  }
  const double sid = view.sid, sdd = view.sdd;
  const double m = sdd / sid;
  const double vx = det.spacing[0] / m, vy = det.spacing[1] / m;
  // Edges of the detector in the rotated frame.
  const double u_lo = det.origin[0] - 0.5 * det.spacing[0] + view.projection_offset_x;
  const double u_hi = u_lo + det.size[0] * det.spacing[0];
  const double v_lo = det.origin[1] - 0.5 * det.spacing[1] + view.projection_offset_y;
  const double v_hi = v_lo + det.size[1] * det.spacing[1];
  const double sx = view.source_offset_x, sy = view.source_offset_y;
  // Distance from the axis to the ray from (sx, sid) to (u, sid - sdd).
  auto reach = [&](double u) {
    return std::fabs(sx * (sid - sdd) - sid * u) / std::hypot(u - sx, sdd);
  };
  const double radius = std::max(reach(u_lo), reach(u_hi));
  const double height = (v_hi - v_lo) * sid / sdd;
  const double y_centre = sy + (0.5 * (v_lo + v_hi) - sy) * sid / sdd;
  fdk_volume vol{};
  const int nxz = std::max(1, static_cast<int>(std::ceil(2.0 * radius / vx - 1e-9)));
  const int ny = std::max(1, static_cast<int>(std::ceil(height / vy - 1e-9)));
  vol.size[0] = vol.size[2] = nxz;
  vol.size[1] = ny;
  vol.spacing[0] = vol.spacing[2] = vx;
  vol.spacing[1] = vy;
  vol.origin[0] = vol.origin[2] = -0.5 * (nxz - 1) * vx;
  vol.origin[1] = y_centre - 0.5 * (ny - 1) * vy;
  return vol;
}

}  // namespace adapters
}  // namespace fdk
