// What the ranks must agree on (see rank_agreement.hpp): one canonical text
// per argument, its digest, and the message naming a difference.
#include "rank_agreement.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <system_error>

namespace fdk_convert {
namespace {

namespace fs = std::filesystem;
namespace ad = fdk::adapters;

const char* const kNames[] = {
    "OUTPUT_DIR",
    "--format",
    "--prefix",
    "--output-type",
    "--window",
    "--compression",
    "--no-preview",
    "--preview-at",
    "PROJECTIONS",
    "--pattern",
    "--raw/--raw-type/--raw-offset/--raw-endian",
    "--input",
    "--dark",
    "--flat",
    "--i0",
    "--dark-level",
    "--min-transmission",
    "--bad-pixels",
    "--crop",
    "--bin",
    "--flip-u/--flip-v",
    "the projections found (count, pixels, sample type)",
    "--pixel-size",
    "--detector-origin",
    "--geometry (the views of an RTK XML file)",
    "--views",
    "--sid",
    "--sdd",
    "--start-angle",
    "--arc/--direction",
    "--projection-offset",
    "--source-offset",
    "--in-plane-angle",
    "--out-of-plane-angle",
    "--voxel-size",
    "--volume-size",
    "--volume-origin",
    "--slab-thickness",
    "--filter",
    "--cutoff (or --hann)",
    "--hann-y",
    "--padding",
    "--short-scan",
    "--offset-detector",
    "--outside-fov",
    "--precision",
};
static_assert(sizeof kNames / sizeof kNames[0] == kAgreedCount, "one name per AgreedArgument");

// A message shows at most this much of one rank's value.
constexpr size_t kShownChars = 160;

// The shortest text that reads back as the same double: equal numbers give
// equal texts, and 0.2 reads as 0.2.
std::string number(double v) {
  char b[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

std::string numbers(std::initializer_list<double> values) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ",") + number(v);
  return out;
}

// What a path means on this rank: absolute, symbolic links resolved as far
// as the path exists (the output folder may not yet), without a trailing
// separator. Ranks started in different folders agree on "out" only when it
// is the same folder for both; two hosts that mount one file system at
// different places cannot be told apart here (nor a node-local /tmp).
std::string resolved_path(const std::string& path) {
  if (path.empty()) return "";
  std::error_code ec;
  fs::path p = fs::absolute(path, ec);
  if (ec) return path;
  const fs::path canonical = fs::weakly_canonical(p, ec);
  std::string s = (ec ? p.lexically_normal() : canonical).string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string on_off(int v) { return v == FDK_ON ? "on" : v == FDK_OFF ? "off" : "auto"; }

std::string view_text(const fdk_view& v) {
  return numbers({v.gantry_angle_deg, v.sid, v.sdd, v.source_offset_x, v.source_offset_y, v.projection_offset_x,
                  v.projection_offset_y, v.in_plane_angle_deg, v.out_of_plane_angle_deg});
}

}  // namespace

const char* agreed_name(int argument) {
  return argument >= 0 && argument < kAgreedCount ? kNames[argument] : "?";
}

uint64_t digest(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<AgreedValue> agreed_values(const Job& job) {
  const Options& o = job.o;
  const fdk_config& c = job.config;
  const ad::PreprocessOptions& pp = o.folder.preprocess;
  std::vector<std::string> t(kAgreedCount);
  t[kAgreeOutput] = resolved_path(o.output);
  t[kAgreeFormat] = o.format;
  t[kAgreePrefix] = o.prefix;
  t[kAgreeOutputType] = o.type == ad::VoxelType::kUInt16 ? "uint16" : "float32";
  t[kAgreeWindow] = o.have_window ? numbers({o.window_lo, o.window_hi}) : "none";
  using Compression = ad::TiffWriteOptions::Compression;
  t[kAgreeCompression] = o.compression == Compression::kLzw       ? "lzw"
                         : o.compression == Compression::kDeflate ? "deflate"
                                                                  : "none";
  t[kAgreePreview] = o.preview ? "preview" : "no preview";
  t[kAgreePreviewAt] =
      o.have_preview_at ? numbers({o.preview_at[0], o.preview_at[1], o.preview_at[2]}) : "the volume's centre";
  t[kAgreeProjections] = resolved_path(o.projections);
  t[kAgreePattern] = o.folder.pattern;
  t[kAgreeRaw] = o.raw.given ? numbers({double(o.raw.width), double(o.raw.height), double(o.raw.frames)}) + " " +
                                   ad::sample_type_name(o.raw.type) + " at " + std::to_string(o.raw.offset) +
                                   (o.raw.big_endian ? " big" : " little") + "-endian"
                             : "not raw";
  using Kind = ad::ProjectionOptions::Kind;
  t[kAgreeInput] = o.folder.kind == Kind::kRaw ? "raw" : o.folder.kind == Kind::kLineIntegral ? "line-integral" : "auto";
  t[kAgreeDark] = o.folder.dark.empty() ? "none" : resolved_path(o.folder.dark);
  t[kAgreeFlat] = o.folder.flat.empty() ? "none" : resolved_path(o.folder.flat);
  t[kAgreeI0] = number(pp.i0);
  t[kAgreeDarkLevel] = number(pp.dark_level);
  t[kAgreeMinTransmission] = number(pp.min_transmission);
  t[kAgreeBadPixels] = o.folder.bad_pixels.empty() ? "none" : resolved_path(o.folder.bad_pixels);
  t[kAgreeCrop] = numbers({double(pp.crop.x), double(pp.crop.y), double(pp.crop.width), double(pp.crop.height)});
  t[kAgreeBin] = numbers({double(pp.bin_u), double(pp.bin_v)});
  t[kAgreeFlip] = std::string(pp.flip_u ? "u" : "-") + (pp.flip_v ? "v" : "-");
  // What each rank found under PROJECTIONS: the same path may hold other
  // files on another host.
  const ad::ProjectionSource& s = job.source;
  t[kAgreeProjectionsFound] = std::to_string(s.count()) + " of " + std::to_string(s.raw_width()) + " x " +
                              std::to_string(s.raw_height()) + " " + ad::sample_type_name(s.sample_type());
  t[kAgreePixelSize] = numbers({c.detector.spacing[0], c.detector.spacing[1]}) + " mm, " +
                       std::to_string(c.detector.size[0]) + " x " + std::to_string(c.detector.size[1]) + " pixels";
  t[kAgreeDetectorOrigin] = numbers({c.detector.origin[0], c.detector.origin[1]});
  const bool views = c.scan.kind == FDK_SCAN_VIEWS;
  std::string shown_geometry;
  if (views) {
    std::string all = "views:";
    for (int v = 0; v < c.scan.num_views && c.scan.views; ++v) all += " " + view_text(c.scan.views[v]) + ";";
    t[kAgreeGeometry] = all;
    char d[32];
    std::snprintf(d, sizeof d, "%016" PRIx64, digest(all));
    shown_geometry = std::to_string(c.scan.num_views) + " views, digest " + d;
  } else {
    t[kAgreeGeometry] = shown_geometry = "a uniform scan";
  }
  // Per-view geometry has no uniform fields: theirs are the same ("").
  const fdk_view& u = c.scan.uniform;
  t[kAgreeViews] = std::to_string(c.scan.num_views);
  if (!views) {
    t[kAgreeSid] = number(u.sid);
    t[kAgreeSdd] = number(u.sdd);
    t[kAgreeStartAngle] = number(c.scan.first_angle_deg);
    t[kAgreeArc] = number(c.scan.arc_deg);
    t[kAgreeProjectionOffset] = numbers({u.projection_offset_x, u.projection_offset_y});
    t[kAgreeSourceOffset] = numbers({u.source_offset_x, u.source_offset_y});
    t[kAgreeInPlaneAngle] = number(u.in_plane_angle_deg);
    t[kAgreeOutOfPlaneAngle] = number(u.out_of_plane_angle_deg);
  }
  const fdk_volume& g = c.volume;
  t[kAgreeVoxelSize] = numbers({g.spacing[0], g.spacing[1], g.spacing[2]});
  t[kAgreeVolumeSize] = numbers({double(g.size[0]), double(g.size[1]), double(g.size[2])});
  t[kAgreeVolumeOrigin] = numbers({g.origin[0], g.origin[1], g.origin[2]});
  t[kAgreeSlabThickness] = o.slab_thickness ? std::to_string(o.slab_thickness) : "each rank's own plan";
  t[kAgreeFilter] = c.window == FDK_WINDOW_SHEPP_LOGAN ? "shepp-logan"
                    : c.window == FDK_WINDOW_COSINE    ? "cosine"
                    : c.window == FDK_WINDOW_HAMMING   ? "hamming"
                    : c.window == FDK_WINDOW_HANN      ? "hann"
                                                       : "ram-lak";
  t[kAgreeCutoff] = number(c.cutoff);
  t[kAgreeHannY] = number(c.hann_cutoff_v);
  t[kAgreePadding] = number(c.truncation_padding);
  t[kAgreeShortScan] = on_off(c.short_scan);
  t[kAgreeOffsetDetector] = on_off(c.offset_detector);
  t[kAgreeOutsideFov] = c.outside_fov == FDK_OUTSIDE_FOV_ZERO ? "zero" : "backproject";
  t[kAgreePrecision] = c.precision == FDK_PRECISION_FLOAT16 ? "float16" : "float32";

  std::vector<AgreedValue> out(kAgreedCount);
  for (int a = 0; a < kAgreedCount; ++a) {
    out[a].text = t[a];
    out[a].shown = a == kAgreeGeometry                ? shown_geometry
                   : t[a].size() <= kShownChars ? t[a]
                                                : t[a].substr(0, kShownChars - 3) + "...";
  }
  return out;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;  // a run of consecutive ranks: i..j
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i) out += ",";
    out += std::to_string(ranks[i]);
    if (j >= i + 2) {
      out += "-" + std::to_string(ranks[j]);
    } else if (j == i + 1) {
      out += "," + std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string disagreement_message(int argument, const std::vector<uint64_t>& digests,
                                 const std::vector<std::string>& shown, const std::vector<int>& also) {
  // Ranks grouped by value, in the order of each value's first rank.
  constexpr size_t kMostValues = 4;
  std::vector<uint64_t> order;
  std::map<uint64_t, std::vector<int>> groups;
  for (int r = 0; r < static_cast<int>(digests.size()); ++r) {
    if (groups.find(digests[r]) == groups.end()) order.push_back(digests[r]);
    groups[digests[r]].push_back(r);
  }
  std::string out = std::string("ranks disagree on ") + agreed_name(argument) + ":";
  for (size_t i = 0; i < order.size() && i < kMostValues; ++i) {
    const std::vector<int>& ranks = groups[order[i]];
    out += std::string(i ? ", " : " ") + rank_list(ranks) + " '" +
           (static_cast<size_t>(ranks[0]) < shown.size() ? shown[ranks[0]] : std::string("?")) + "'";
  }
  if (order.size() > kMostValues) out += " and " + std::to_string(order.size() - kMostValues) + " other values";
  if (!also.empty()) {
    out += "; they also disagree on ";
    for (size_t i = 0; i < also.size(); ++i) out += std::string(i ? ", " : "") + agreed_name(also[i]);
  }
  return out + " (every rank must be started with the same arguments but for GPUs, memory budgets, threads, "
               "--quiet and --progress)";
}

}  // namespace fdk_convert
