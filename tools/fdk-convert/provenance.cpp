// Refused geometry values named by where they came from (see provenance.hpp).
#include "provenance.hpp"

#include <fdk/adapters/value_ranges.hpp>

#include <cstdio>
#include <vector>

#include "budget.hpp"
#include "status_text.hpp"

namespace ad = fdk::adapters;

namespace fdk_convert {
namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// The library's message names a field of fdk_config; these are the keys of
// the description that set it, in the order the message's words are tried
// (the more specific first: "SDD / SID" before "SID").
struct FieldKeys {
  const char* words;
  std::vector<const char*> keys;
};

std::vector<const char*> keys_of(const std::string& m) {
  static const FieldKeys kFields[] = {
      {"SDD / SID", {"scan.sdd", "scan.sid"}},
      {"SID", {"scan.sid"}},
      {"SDD", {"scan.sdd"}},
      {"source offset", {"scan.source_offset"}},
      {"projection offset", {"scan.projection_offset"}},
      {"out-of-plane angle", {"scan.out_of_plane_angle"}},
      {"in-plane angle", {"scan.in_plane_angle"}},
      {"gantry angle", {"scan.start_angle", "scan.arc"}},
      {"first_angle_deg", {"scan.start_angle"}},
      {"arc_deg", {"scan.arc"}},
      {"short scan", {"scan.arc", "scan.start_angle", "scan.views"}},
      {"half-fan", {"detector.origin", "scan.projection_offset"}},
      {"volume x size", {"volume.size"}},    {"volume y size", {"volume.size"}},
      {"volume z size", {"volume.size"}},    {"volume x spacing", {"volume.spacing"}},
      {"volume y spacing", {"volume.spacing"}}, {"volume z spacing", {"volume.spacing"}},
      {"volume x origin", {"volume.origin"}}, {"volume y origin", {"volume.origin"}},
      {"volume z origin", {"volume.origin"}}, {"detector u (columns) spacing", {"detector.pixel_size"}},
      {"detector v (rows) spacing", {"detector.pixel_size"}},
      {"detector u (columns) origin", {"detector.origin", "detector.pixel_size"}},
      {"detector v (rows) origin", {"detector.origin", "detector.pixel_size"}},
  };
  for (const auto& f : kFields) {
    if (contains(m, f.words)) return f.keys;
  }
  return {};
}

// The view-level refusals of a scan given view by view (the RTK XML).
bool about_the_views(const std::string& m) {
  return m.compare(0, 11, "scan.views[") == 0 || contains(m, "short scan") || contains(m, "half-fan");
}

}  // namespace

bool is_flag_source(const std::string& source) { return source.compare(0, 2, "--") == 0; }

void check_magnification(const ad::ScanDescription& d) {
  if (!d.sid || !d.sdd || ad::ranges::magnification_ok(*d.sid, *d.sdd)) return;
  const std::string sid = d.source("scan.sid"), sdd = d.source("scan.sdd");
  const std::string text = "SDD / SID is " + number(*d.sdd) + " / " + number(*d.sid) + " (sdd from " + sdd +
                           ", sid from " + sid + "): the magnification must lie within " +
                           ad::ranges::kMagnificationText + " (the library's range)";
  throw Failure{is_flag_source(sid) || is_flag_source(sdd) ? kExitUsage : kExitInput, text};
}

Failure setup_failure(fdk_status s, const std::string& library_message, const GeometryOrigins& g,
                      const fdk_config& config) {
  const std::string said = "cannot set up the reconstruction: " + fdk_tools::status_text(s, library_message.c_str());
  // The field the message is about starts it, after the status's name.
  std::string message = library_message;
  if (message.compare(0, 10, "FDK_ERROR_") == 0 && message.find(": ") != std::string::npos) {
    message.erase(0, message.find(": ") + 2);
  }
  if (s == FDK_ERROR_BUDGET) return Failure{kExitBudget, said + budget_advice(config)};
  if (s != FDK_ERROR_INVALID_ARGUMENT && s != FDK_ERROR_OUT_OF_RANGE) return Failure{kExitReconstruction, said};
  // The views of an RTK XML file: the file is the cause.
  if (!g.xml_file.empty() && about_the_views(message)) {
    return Failure{kExitInput, "geometry '" + g.xml_file + "': the library refuses its views: " + message};
  }
  // Otherwise the description's keys: their sources, flags or files.
  std::vector<std::string> sources;
  bool any_flag = false;
  for (const char* key : keys_of(message)) {
    const std::string source = g.desc.source(key);
    if (source.empty()) continue;
    any_flag = any_flag || is_flag_source(source);
    sources.push_back(source);
  }
  if (contains(message, "detector") && g.reshaped) {
    sources.push_back("--crop/--bin");
    any_flag = true;
  }
  if (sources.empty()) {
    // A value nobody gave: derived (the default volume from the pitch and
    // the magnification). Its inputs are named; a file among them is the
    // likely cause.
    if (contains(message, "volume") && !g.desc.volume_spacing) {
      for (const char* key : {"detector.pixel_size", "scan.sid", "scan.sdd"}) {
        const std::string source = g.desc.source(key);
        if (source.empty()) continue;
        any_flag = any_flag || is_flag_source(source);
        sources.push_back(source);
      }
      std::string from;
      for (const std::string& x : sources) from += (from.empty() ? "" : ", ") + x;
      return Failure{sources.empty() || any_flag ? kExitUsage : kExitInput,
                     "the default volume (voxel = pixel pitch / magnification, from " + from +
                         ") is refused by the library: " + message + ": give --voxel-size"};
    }
    return Failure{kExitUsage, said};  // an option's value (flags only reach here)
  }
  std::string from;
  for (const std::string& x : sources) from += (from.empty() ? "" : " and ") + x;
  return Failure{any_flag ? kExitUsage : kExitInput, from + ": the library refuses it: " + message};
}

}  // namespace fdk_convert
