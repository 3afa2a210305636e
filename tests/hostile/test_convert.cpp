// fdk-convert with bad arguments and broken inputs: the documented exit code
// (docs/ADAPTERS.md: 2 bad command line, 3 unusable input, 4 output not
// writable, 5 reconstruction failed), a message on stderr, and no output that
// looks complete. Every run is bounded by `timeout`, so a hang is an exit
// code (124), not a stuck suite.
#include <fdk/adapters/tiff_io.hpp>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include "convert_harness.hpp"
#include "pending.hpp"
#include "tiff_bytes.hpp"
#include "small_scan.hpp"

namespace {

using namespace convert_harness;

struct ConvertRow {
  std::string name;
  // Prepares the workspace and returns the whole argument string.
  std::function<std::string(const Workspace&)> args;
  int code;
  std::string needle;
  std::string pending;
};
void PrintTo(const ConvertRow& r, std::ostream* os) { *os << r.name; }

// ---- issue 40.5: errors name what the user gave ------------------------------
// A value the library refuses that came from a file is exit 3 naming the
// file and key (or line); from a flag, exit 2 naming the flag. Raw files
// name the --raw options, budgets are stated as given, --like takes the
// volume's limits, TIFF resolution tags that disagree are named.

// An RTK XML geometry of 16 views: `globals` before the projections (one
// element a line, so line numbers are known: line 1 the root, the globals
// from line 2), the views' angles from `angle(v)`.
std::string write_xml(const Workspace& w, const std::string& globals, double (*angle)(int)) {
  std::string xml = "<RTKThreeDCircularGeometry version=\"3\">\n" + globals;
  for (int v = 0; v < 16; ++v) {
    xml += "<Projection><GantryAngle>" + std::to_string(angle(v)) + "</GantryAngle></Projection>\n";
  }
  xml += "</RTKThreeDCircularGeometry>\n";
  write_file(w / "g.xml", xml);
  return w / "proj" + " " + (w / "out") + " --geometry " + (w / "g.xml") +
         " --pixel-size 5 --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
}
double full_turn(int v) { return 22.5 * v; }
const char kDistances[] = "<SourceToIsocenterDistance>500</SourceToIsocenterDistance>\n"
                          "<SourceToDetectorDistance>750</SourceToDetectorDistance>\n";

// The small scan as one MetaImage (`name`.mha) or NRRD (`name`.nrrd) stack
// with `lines` added to its header, and the arguments that convert it with
// an INI that gives no pixel size (the header's is used).
std::string write_stack(const Workspace& w, const std::string& name, const std::string& lines) {
  const fdk_test::SmallScan scan(16, 16, 24);
  std::string data;
  for (int v = 0; v < scan.views(); ++v) data.append(reinterpret_cast<const char*>(scan.pixels(v)), 24 * 24 * sizeof(float));
  const bool nrrd = name.size() > 5 && name.compare(name.size() - 5, 5, ".nrrd") == 0;
  const std::string header =
      nrrd ? "NRRD0004\ntype: float\ndimension: 3\nsizes: 24 24 16\nendian: little\nencoding: raw\n" + lines + "\n"
           : "ObjectType = Image\nNDims = 3\nDimSize = 24 24 16\nElementType = MET_FLOAT\n"
             "BinaryDataByteOrderMSB = False\n" + lines + "ElementDataFile = LOCAL\n";
  write_file(w / name, header + data);
  write_file(w / "nopitch.ini", "[scan]\nsid = 500\nsdd = 750\n");
  return w / name + " " + (w / "out") + " --geometry " + (w / "nopitch.ini") +
         " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
}

// A --like volume header (its data file need not exist).
std::string write_like(const Workspace& w, const std::string& name, const std::string& header) {
  write_file(w / name, header);
  return good_args(w) + " --like " + (w / name);
}
std::string like_mha(const std::string& size, const std::string& lines) {
  return "ObjectType = Image\nNDims = 3\nDimSize = " + size + "\nElementType = MET_FLOAT\n" + lines +
         "ElementDataFile = v.raw\n";
}

// The workspace's INI with `lines` instead, and no volume flags, so that
// the INI's volume keys count.
std::string with_ini(const Workspace& w, const std::string& lines) {
  write_file(w / "scan.ini", lines);
  return w / "proj" + " " + (w / "out") + " --geometry " + (w / "scan.ini") + " --threads 2 --quiet --no-preview";
}

template <typename Add>
void add_provenance_rows(Add add) {
  using Args = std::function<std::string(const Workspace&)>;
  // RTK XML: the library's ranges, named by file, line and element.
  auto xml_row = [&](const std::string& name, const std::string& globals, const std::string& needle) {
    add("xml_" + name, Args([globals](const Workspace& w) { return write_xml(w, globals, full_turn); }), 3, needle);
  };
  xml_row("sid_1e308", "<SourceToIsocenterDistance>1e308</SourceToIsocenterDistance>\n<SourceToDetectorDistance>750</SourceToDetectorDistance>\n",
          "g.xml' line 2: <SourceToIsocenterDistance> 1e+308");
  xml_row("sdd_1e-300", "<SourceToIsocenterDistance>500</SourceToIsocenterDistance>\n<SourceToDetectorDistance>1e-300</SourceToDetectorDistance>\n",
          "g.xml' line 3: <SourceToDetectorDistance> 1e-300");
  xml_row("projection_offset_1e12", std::string(kDistances) + "<ProjectionOffsetX>1e12</ProjectionOffsetX>\n",
          "g.xml' line 4: <ProjectionOffsetX> 1000000000000 mm");
  xml_row("source_offset_-1e300", std::string(kDistances) + "<SourceOffsetY>-1e300</SourceOffsetY>\n",
          "g.xml' line 4: <SourceOffsetY> -1e+300");
  xml_row("magnification_1e-12", "<SourceToIsocenterDistance>1e9</SourceToIsocenterDistance>\n<SourceToDetectorDistance>1e-3</SourceToDetectorDistance>\n",
          "SourceToDetectorDistance / SourceToIsocenterDistance is 0.001 / 1000000000");
  add("xml_every_view_at_one_angle",
      Args([](const Workspace& w) { return write_xml(w, kDistances, [](int) { return 30.0; }); }), 3,
      "g.xml' line 1: all 16 projections have GantryAngle 30");
  add("xml_views_over_90_degrees",  // only the library judges the arc: its refusal names the file
      Args([](const Workspace& w) { return write_xml(w, kDistances, [](int v) { return 6.0 * v; }); }), 3,
      "g.xml': the library refuses its views");
  // INI: file, line and key.
  auto ini_row = [&](const std::string& name, const std::string& text, const std::string& needle) {
    add("ini_" + name, Args([text](const Workspace& w) { return with_ini(w, text); }), 3, needle);
  };
  const std::string base = "[scan]\nsid = 500\nsdd = 750\n[detector]\npixel_size = 5\n";
  ini_row("sid_1e308", "[scan]\nsid = 1e308\nsdd = 750\n[detector]\npixel_size = 5\n", "scan.ini' line 2: scan.sid = '1e308'");
  ini_row("pixel_size_1e-300", "[scan]\nsid = 500\nsdd = 750\n[detector]\npixel_size = 1e-300\n",
          "scan.ini' line 5: detector.pixel_size = '1e-300'");
  ini_row("sdd_over_sid_2e-7", "[scan]\nsid = 500\nsdd = 0.0001\n[detector]\npixel_size = 5\n",
          "scan.ini' line 3, scan.sdd");
  ini_row("volume_origin_1e12", base + "[volume]\nsize = 16 16 16\nspacing = 4\norigin = 1e12 0 0\n",
          "scan.ini' line 9: volume.origin = '1e12 0 0'");
  ini_row("volume_spacing_1e-300", base + "[volume]\nsize = 16 16 16\nspacing = 1e-300\n",
          "scan.ini' line 8: volume.spacing = '1e-300'");
  ini_row("detector_origin_1e300", base + "origin = 1e300 0\n", "scan.ini' line 6: detector.origin = '1e300 0'");
  ini_row("source_offset_1e10", "[scan]\nsid = 500\nsdd = 750\nsource_offset = 1e10 0\n[detector]\npixel_size = 5\n",
          "scan.ini' line 4: scan.source_offset = '1e10 0'");
  // The same values from flags: exit 2 naming the flag.
  auto flag_row = [&](const std::string& name, const std::string& extra, const std::string& needle) {
    add("flag_" + name, Args([extra](const Workspace& w) { return good_args(w) + " " + extra; }), 2, needle);
  };
  flag_row("sid_1e308", "--sid 1e308", "--sid: scan.sid = '1e308'");
  flag_row("pixel_size_1e-300", "--pixel-size 1e-300", "--pixel-size: detector.pixel_size = '1e-300'");
  flag_row("volume_origin_1e12", "--volume-origin 1e12,0,0", "--volume-origin: volume.origin = '1e12,0,0'");
  flag_row("sdd_over_sid", "--sdd 0.0001", "sdd from --sdd");
  // MetaImage and NRRD projection stacks: the header's key.
  auto stack_row = [&](const std::string& name, const std::string& file, const std::string& lines, const std::string& needle) {
    add("stack_" + name, Args([file, lines](const Workspace& w) { return write_stack(w, file, lines); }), 3, needle);
  };
  stack_row("mha_offset_1e308", "p.mha", "Offset = 1e308 0 0\n", "p.mha': Offset: 1e+308 mm along u");
  stack_row("mha_spacing_1e-300", "p.mha", "ElementSpacing = 1e-300 1e-300 1\n", "p.mha': ElementSpacing: 1e-300 mm along u");
  stack_row("mha_spacing_v_1e7", "p.mha", "ElementSpacing = 1 1e7 1\n", "p.mha': ElementSpacing: 1e+07 mm along v");
  stack_row("nrrd_spacings_1e-300", "p.nrrd", "spacings: 1e-300 1e-300 nan\n", "p.nrrd': 'spacings': 1e-300 mm along u");
  stack_row("nrrd_space_origin_1e300", "p.nrrd", "space: left-posterior-superior\nspace directions: (5,0,0) (0,5,0) none\nspace origin: (1e300,0,0)\n",
            "p.nrrd': 'space origin': 1e+300 mm along u");
  stack_row("nrrd_space_directions_1e7", "p.nrrd", "space: left-posterior-superior\nspace directions: (1e7,0,0) (0,1e7,0) none\n",
            "p.nrrd': 'space directions': 1e+07 mm along u");
  // --like: the volume's limits, named by key.
  auto like_row = [&](const std::string& name, const std::string& file, const std::string& header, int code, const std::string& needle) {
    add("like_" + name, Args([file, header](const Workspace& w) { return write_like(w, file, header); }), code, needle);
  };
  like_row("offset_1e300", "v.mha", like_mha("16 16 16", "Offset = 1e300 0 0\n"), 3, "v.mha': Offset: 1e+300 mm along x");
  like_row("spacing_1e-300", "v.mha", like_mha("16 16 16", "ElementSpacing = 1e-300 4 4\n"), 3, "v.mha': ElementSpacing: 1e-300 mm along axis 0");
  like_row("size_70000", "v.mha", like_mha("70000 16 16", ""), 3, "v.mha': DimSize: 70000 voxels along axis 0");
  like_row("nrrd_spacings_1e7", "v.nrrd", "NRRD0004\ntype: float\ndimension: 3\nsizes: 16 16 16\nendian: little\nencoding: raw\n"
                                         "spacings: 4 1e7 4\ndata file: v.raw\n\n", 3, "v.nrrd': 'spacings': 1e+07 mm along axis 1");
  // A grid wider than a projection frame may be (2^28 pixels) but within
  // the volume's limits: --like takes it (its size overridden here by
  // --volume-size, so the run stays small).
  like_row("grid_20000x20000x1", "v.mha", like_mha("20000 20000 1", "ElementSpacing = 4 4 4\nOffset = -30 -30 -30\n"), 0, "");
  // Raw files name the --raw options, not a header.
  auto raw_row = [&](const std::string& name, const std::string& raw, int code, const std::string& needle) {
    add("raw_" + name,
        Args([raw](const Workspace& w) {
          write_file(w / "p.raw", std::string(24 * 24 * 16 * 4, '\0'));
          return w / "p.raw" + " " + (w / "out") + " " + raw + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
        }),
        code, needle);
  };
  raw_row("too_short", "--raw 24,24,17 --raw-type float32", 3, "but --raw 24,24,17 --raw-type float32 --raw-offset 0 --raw-endian little describes");
  raw_row("offset_beyond", "--raw 24,24,16 --raw-type float32 --raw-offset 100", 3, "--raw-offset 100");
  raw_row("frame_beyond_limit", "--raw 20000,20000,1 --raw-type uint16", 2, "--raw 20000,20000,1 --raw-type uint16");
  // TIFF resolution tags that disagree: named when the pitch is taken from them.
  add("tiff_pitch_disagrees",
      Args([](const Workspace& w) {
        const fdk_test::SmallScan scan(16, 16, 24);
        for (int v = 0; v < 16; ++v) {
          fdk::adapters::TiffWriteOptions t;
          t.pixel_size_x_mm = t.pixel_size_y_mm = v == 7 ? 4.0 : 5.0;
          char name[32];
          std::snprintf(name, sizeof name, "proj/p%02d.tif", v);
          fs::remove(w / name);
          fdk::adapters::write_tiff_float(w / name, 24, 24, {scan.pixels(v)}, t);
        }
        write_file(w / "scan.ini", "[scan]\nsid = 500\nsdd = 750\n");
        return good_args(w);
      }),
      3, "p07.tif''s resolution tags give a pixel pitch of 4 x 4 mm but");
  // Budgets as given, and advice that holds.
  add("host_memory_1K_stated", Args([](const Workspace& w) { return good_args(w) + " --host-memory 1K"; }), 7,
      "host memory budget (1 KiB)");
  add("host_memory_1000_bytes", Args([](const Workspace& w) { return good_args(w) + " --host-memory 1000"; }), 7,
      "host memory budget (1000 bytes)");
  add("host_memory_1K_advice_in_K", Args([](const Workspace& w) { return good_args(w) + " --host-memory 1K"; }), 7,
      "K holds every view for certain");
}

std::vector<ConvertRow> convert_rows() {
  std::vector<ConvertRow> rows;
  auto add = [&](const std::string& name, std::function<std::string(const Workspace&)> args, int code, const std::string& needle) {
    rows.push_back({name, args, code, needle, ""});
  };
  auto flag = [&](const std::string& name, const std::string& extra, int code, const std::string& needle) {
    add(name, [extra](const Workspace& w) { return good_args(w) + " " + extra; }, code, needle);
  };
  // The command line.
  add("no_arguments", [](const Workspace&) { return std::string(); }, 2, "PROJECTIONS");
  add("one_positional", [](const Workspace& w) { return w / "proj"; }, 2, "");
  add("three_positionals", [](const Workspace& w) { return good_args(w) + " " + (w / "extra"); }, 2, "");
  for (const char* opt : {"--frobnicate", "-x", "---sid", "--SID"}) flag(std::string("unknown_") + identifier(opt), opt, 2, opt);
  // An option at the end without its value.
  for (const char* opt : {"--sid", "--views", "--volume-size", "--format", "--window", "--crop", "--threads", "--geometry"})
    flag(std::string("missing_value_") + identifier(opt), opt, 2, opt);
  // Values out of their range or not numbers.
  const std::pair<const char*, const char*> bad_values[] = {
      {"--sid", "abc"},          {"--sid", "nan"},           {"--sid", "inf"},           {"--sid", "-1"},
      {"--sid", "0"},            {"--sid", "1e999"},         {"--sdd", "abc"},           {"--sdd", "-750"},
      {"--views", "0"},          {"--views", "-1"},          {"--views", "abc"},         {"--views", "1e10"},
      {"--views", "2.5"},        {"--threads", "-1"},        {"--threads", "abc"},       {"--threads", "100000"},
      {"--pixel-size", "0"},     {"--pixel-size", "-1"},     {"--pixel-size", "nan"},    {"--pixel-size", "1,2,3"},
      {"--volume-size", "0,16,16"}, {"--volume-size", "16,16"}, {"--volume-size", "a,b,c"}, {"--volume-size", "16,16,16,16"},
      {"--volume-size", "-16,16,16"}, {"--voxel-size", "0"}, {"--voxel-size", "-1"},      {"--voxel-size", "nan"},
      {"--voxel-size", "1,2"},   {"--volume-origin", "nan,0,0"}, {"--crop", "1,2"},     {"--crop", "-1,0,10,10"},
      {"--bin", "0"},             {"--bin", "-1"},            {"--bin", "0,1"},
      {"--bin", "a"},            {"--window", "1,0"},        {"--window", "a,b"},        {"--window", "nan,1"},
      {"--window", "1"},         {"--format", "foo"},        {"--output-type", "foo"},   {"--filter", "foo"},
      {"--cutoff", "nan"},       {"--backend", "foo"},
      {"--gpus", "-1"},          {"--gpus", "a,b"},          {"--host-memory", "-5"},    {"--host-memory", "abc"},
      {"--host-memory", "12X"},  {"--gpu-memory", "abc"},    {"--slab-thickness", "-1"}, {"--slab-thickness", "x"},
      {"--progress", "foo"},     {"--precision", "foo"},
      {"--short-scan", "maybe"}, {"--offset-detector", "maybe"}, {"--outside-fov", "foo"}, {"--direction", "up"},
      {"--arc", "0"},            {"--arc", "-361"},          {"--arc", "nan"},           {"--start-angle", "nan"},
      {"--min-transmission", "0"}, {"--min-transmission", "2"}, {"--i0", "-1"},
      {"--i0", "nan"},           {"--dark-level", "nan"},    {"--read-threads", "0"},    {"--read-threads", "-1"},
      {"--compression", "foo"},  {"--input", "foo"},         {"--projection-offset", "1"}, {"--source-offset", "a,b"},
      {"--in-plane-angle", "nan"}, {"--detector-origin", "1"},
  };
  for (const auto& bv : bad_values)
    flag(std::string("bad_") + identifier(bv.first) + "_" + identifier(bv.second), std::string(bv.first) + " '" + bv.second + "'", 2,
         bv.first);
  flag("uint16_without_window", "--output-type uint16", 2, "--window");
  flag("crop_outside_the_frame", "--crop 30,30,10,10", 2, "crop 30,30,10,10 does not fit");
  add("existing_output_without_force",
      [](const Workspace& w) {
        fs::create_directories(w / "out");
        write_file(w / "out/slice_0000.tif", "x");
        return good_args(w);
      },
      2, "--force");

  // Unusable inputs.
  add("projections_missing", [](const Workspace& w) { return good_args(w, w / "nope"); }, 3, "nope");
  add("projections_empty_folder", [](const Workspace& w) { fs::create_directories(w / "empty"); return good_args(w, w / "empty"); }, 3, "empty");
  add("projections_is_a_file", [](const Workspace& w) { return good_args(w, w / "scan.ini"); }, 3, "scan.ini");
  add("projections_pattern_matches_nothing", [](const Workspace& w) { return good_args(w) + " --pattern '*.png'"; }, 3, "");
  auto broken_projection = [&](const std::string& name, const std::string& bytes) {
    add("projection_" + name,
        [bytes](const Workspace& w) {
          write_file(w / "proj/p05.tif", bytes);
          return good_args(w);
        },
        3, "p05.tif");
  };
  broken_projection("zero_bytes", "");
  broken_projection("text", "not a tiff");
  broken_projection("bad_magic", "XX" + hostile::tiff_bytes(hostile::TiffSpec{}).substr(2));
  broken_projection("truncated_header", hostile::tiff_bytes(hostile::TiffSpec{}).substr(0, 30));
  broken_projection("other_size", hostile::tiff_bytes(hostile::TiffSpec{}));
  broken_projection("rgb", hostile::tiff_bytes([] { hostile::TiffSpec t; t.width = t.height = 24; t.samples_per_pixel = 3; t.photometric = 2; return t; }()));
  broken_projection("width_0", hostile::tiff_bytes([] { hostile::TiffSpec t; t.width = 0; return t; }()));
  broken_projection("huge_dimensions", hostile::tiff_bytes([] { hostile::TiffSpec t; t.width = t.height = 60000; return t; }()));
  broken_projection("bits_12", hostile::tiff_bytes([] { hostile::TiffSpec t; t.width = t.height = 24; t.bits = 12; return t; }()));
  add("projection_truncated_pixels",
      [](const Workspace& w) {
        const std::string bytes = read_file(w / "proj/p07.tif");
        write_file(w / "proj/p07.tif", bytes.substr(0, bytes.size() / 2));
        return good_args(w);
      },
      3, "p07.tif");
  add("projection_NaN_pixel",
      [](const Workspace& w) {
        std::vector<float> nan(24 * 24, 0.5f);
        nan[100] = std::numeric_limits<float>::quiet_NaN();
        fs::remove(w / "proj/p03.tif");
        fdk::adapters::write_tiff_float(w / "proj/p03.tif", 24, 24, {nan.data()});
        return good_args(w);
      },
      3, "p03.tif");
  add("projection_huge_value",
      [](const Workspace& w) {
        std::vector<float> big(24 * 24, 0.5f);
        big[100] = 1e30f;
        fs::remove(w / "proj/p03.tif");
        fdk::adapters::write_tiff_float(w / "proj/p03.tif", 24, 24, {big.data()});
        return good_args(w);
      },
      3, "1e20");
  add("geometry_missing", [](const Workspace& w) { return good_args(w) + " --geometry " + (w / "none.ini"); }, 3, "none.ini");
  add("geometry_empty_xml", [](const Workspace& w) { write_file(w / "g.xml", ""); return good_args(w) + " --geometry " + (w / "g.xml"); }, 3, "g.xml");
  add("geometry_garbage_xml", [](const Workspace& w) { write_file(w / "g.xml", "<RTKThreeDCircularGeometry><<<"); return good_args(w) + " --geometry " + (w / "g.xml"); }, 3, "g.xml");
  add("geometry_ini_unknown_key", [](const Workspace& w) { write_file(w / "scan.ini", "sidd = 500\n"); return good_args(w); }, 3, "sidd");
  add("geometry_ini_bad_value", [](const Workspace& w) { write_file(w / "scan.ini", "sid = abc\nsdd = 750\n"); return good_args(w); }, 3, "scan.ini");
  add("geometry_views_mismatch", [](const Workspace& w) { return good_args(w) + " --views 13"; }, 3, "13");
  add("geometry_is_a_folder", [](const Workspace& w) { return good_args(w) + " --geometry " + (w / "proj"); }, 3, "is a folder");
  add("projection_unreadable",
      [](const Workspace& w) {
        // /proc/self/mem is a regular file whose first page cannot be read
        // (EIO), also for root (who reads a file of mode 000).
        fs::create_symlink("/proc/self/mem", w / "proj/p16.tif");
        return good_args(w);
      },
      3, "p16.tif");
  add("dark_missing", [](const Workspace& w) { return good_args(w) + " --dark " + (w / "no_dark") + " --flat " + (w / "flat.tif"); }, 3, "no_dark");
  add("flat_missing", [](const Workspace& w) { return good_args(w) + " --dark " + (w / "dark.tif") + " --flat " + (w / "no_flat"); }, 3, "no_flat");
  add("flat_other_size",
      [](const Workspace& w) {
        const std::vector<float> f(30 * 24, 30000.0f);
        fdk::adapters::write_tiff_float(w / "flat30.tif", 30, 24, {f.data()});
        return good_args(w) + " --dark " + (w / "dark.tif") + " --flat " + (w / "flat30.tif");
      },
      3, "flat30.tif");
  add("flat_zero",
      [](const Workspace& w) {
        const std::vector<float> f(24 * 24, 0.0f);
        fdk::adapters::write_tiff_float(w / "flat0.tif", 24, 24, {f.data()});
        return good_args(w) + " --flat " + (w / "flat0.tif");
      },
      3, "flat0.tif");
  add("flat_garbage", [](const Workspace& w) { write_file(w / "flatx.tif", "garbage"); return good_args(w) + " --flat " + (w / "flatx.tif"); }, 3, "flatx.tif");
  add("bad_pixels_missing", [](const Workspace& w) { return good_args(w) + " --bad-pixels " + (w / "bp.txt"); }, 3, "bp.txt");
  add("bad_pixels_garbage", [](const Workspace& w) { write_file(w / "bp.txt", "1 2 3\nfoo\n"); return good_args(w) + " --bad-pixels " + (w / "bp.txt"); }, 3, "bp.txt");
  add("bad_pixels_outside", [](const Workspace& w) { write_file(w / "bp.txt", "100 100\n"); return good_args(w) + " --bad-pixels " + (w / "bp.txt"); }, 3, "bp.txt");

  // Outputs that cannot be written.
  add("output_is_a_file", [](const Workspace& w) { write_file(w / "out", "a file"); return good_args(w); }, 4, "out");
  add("output_below_a_file",
      [](const Workspace& w) {
        write_file(w / "file", "a file");
        return w / "proj" + " " + (w / "file/out") + " --geometry " + (w / "scan.ini") + " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet";
      },
      4, "file");

  // The budget cannot hold the reconstruction: refused at the start.
  flag("host_memory_tiny", "--host-memory 1K", 7, "--host-memory");
  add_provenance_rows(add);
  return rows;
}

// (e): inputs that today hang, crash, succeed or fail with another code.
std::vector<ConvertRow> pending_convert_rows() {
  std::vector<ConvertRow> rows;
  const std::string pending = "pending: (e) ";
  rows.push_back({"projection_dangling_symlink",
                  [](const Workspace& w) {
                    fs::create_symlink(w / "nowhere.tif", w / "proj/p16.tif");
                    return good_args(w);
                  },
                  3, "p16.tif", pending + "a dangling-symlink projection -> an error exit"});
  // Option values in range for the parser but refused by the library
  // exit 5 ("the reconstruction failed") today; they are a bad command line.
  const std::pair<const char*, const char*> refused_by_library[] = {
      {"--cutoff", "0"},  {"--cutoff", "2"},        {"--cutoff", "-0.5"},         {"--padding", "2"},
      {"--padding", "-1"}, {"--arc", "400"},        {"--start-angle", "1e300"},   {"--out-of-plane-angle", "1e300"},
      {"--in-plane-angle", "-1e7"},
  };
  for (const auto& bv : refused_by_library) {
    const std::string extra = std::string(bv.first) + " '" + bv.second + "'";
    std::string word = std::string(bv.first).substr(2);
    if (word.find("angle") != std::string::npos) word = "angle";
    rows.push_back({std::string("bad_") + identifier(bv.first) + "_" + identifier(bv.second),
                    [extra](const Workspace& w) { return good_args(w) + " " + extra; }, 2, word,
                    pending + "bad arguments -> exit 2 (today 5: passed on to fdk_create)"});
  }
  rows.push_back({"geometry_nul_bytes",
                  [](const Workspace& w) {
                    const char text[] = "[scan]\nsid = 500\0junk\nsdd = 750\n[detector]\npixel_size = 5\n";
                    write_file(w / "scan.ini", std::string(text, sizeof text - 1));
                    return good_args(w);
                  },
                  3, "scan.ini", pending + "NUL bytes in a geometry file -> an error exit"});
  rows.push_back({"geometry_xml_nul_in_number",
                  [](const Workspace& w) {
                    std::string xml = "<RTKThreeDCircularGeometry version=\"3\"><SourceToIsocenterDistance>500</SourceToIsocenterDistance>"
                                      "<SourceToDetectorDistance>75";
                    xml += std::string(1, '\0') + "0</SourceToDetectorDistance>";
                    for (int v = 0; v < 16; ++v)
                      xml += "<Projection><GantryAngle>" + std::to_string(22.5 * v) + "</GantryAngle></Projection>";
                    xml += "</RTKThreeDCircularGeometry>";
                    write_file(w / "g.xml", xml);
                    return w / "proj" + " " + (w / "out") + " --geometry " + (w / "g.xml") +
                           " --pixel-size 5 --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet";
                  },
                  3, "g.xml", pending + "NUL bytes in a geometry file -> an error exit"});
  rows.push_back({"projection_cyclic_ifd",
                  [](const Workspace& w) {
                    const std::string path = w / "proj/p05.tif";
                    std::string s = read_file(path);
                    uint32_t first;
                    std::memcpy(&first, &s[4], 4);
                    uint16_t n;
                    std::memcpy(&n, &s[first], 2);
                    std::memcpy(&s[first + 2 + 12 * n], &first, 4);  // the only IFD links to itself
                    write_file(path, s);
                    return good_args(w);
                  },
                  3, "p05.tif", pending + "a TIFF with a cyclic IFD chain -> an error exit (not a hang)"});
  return rows;
}

void run_convert_row(const ConvertRow& row) {
  Workspace w;
  const std::string args = row.args(w);
  const Result r = run(w, args);
  EXPECT_EQ(r.code, row.code) << "fdk-convert " << args << "\n" << r.err;
  if (row.code != 0) {
    EXPECT_NE(r.err.find(row.needle), std::string::npos) << "stderr lacks '" << row.needle << "': " << r.err;
    if (!args.empty() && row.name != "existing_output_without_force" && fs::is_directory(w / "out")) {
      for (const auto& e : fs::directory_iterator(w / "out")) ADD_FAILURE() << "left behind: " << e.path();
    }
  }
}

class Convert : public ::testing::TestWithParam<ConvertRow> {};
class ConvertPending : public ::testing::TestWithParam<ConvertRow> {};

TEST_P(Convert, ExitsWithItsCode) { run_convert_row(GetParam()); }
TEST_P(ConvertPending, ExitsWithItsCode) {
  if (hostile::skipped(GetParam().pending)) GTEST_SKIP() << GetParam().pending;
  run_convert_row(GetParam());
}

std::string row_name(const ::testing::TestParamInfo<ConvertRow>& info) { return identifier(info.param.name); }

INSTANTIATE_TEST_SUITE_P(Hostile, Convert, ::testing::ValuesIn(convert_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Hostile, ConvertPending, ::testing::ValuesIn(pending_convert_rows()), row_name);

// The budget a refusal of a tiny one advises converts (issue 40.5: the
// advice used to read "--host-memory 0.1M" from a budget stated as 1 MiB).
TEST(ConvertBudget, TheAdviceForATinyBudgetHolds) {
  Workspace w;
  const Result refused = run(w, good_args(w) + " --host-memory 1K");
  ASSERT_EQ(refused.code, 7) << refused.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(refused.err, m, std::regex("--host-memory ([0-9.]+[KMG]) holds every view for certain")))
      << refused.err;
  const Result fits = run(w, good_args(w) + " --host-memory " + m[1].str());
  EXPECT_EQ(fits.code, 0) << "--host-memory " << m[1].str() << ": " << fits.err;
}

// Resolution tags that disagree, with the pitch given by a flag: a note,
// and the run goes on.
TEST(ConvertPitch, DisagreeingTagsAreANoteWhenAFlagGivesThePitch) {
  Workspace w;
  const fdk_test::SmallScan scan(16, 16, 24);
  for (int v = 0; v < 16; ++v) {
    fdk::adapters::TiffWriteOptions t;
    t.pixel_size_x_mm = t.pixel_size_y_mm = v == 3 ? 4.0 : 5.0;
    char name[32];
    std::snprintf(name, sizeof name, "proj/p%02d.tif", v);
    fs::remove(w / name);
    fdk::adapters::write_tiff_float(w / name, 24, 24, {scan.pixels(v)}, t);
  }
  std::string args = good_args(w) + " --pixel-size 5";
  args.replace(args.find(" --quiet"), 8, "");
  const Result r = run(w, args);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("p03.tif''s resolution tags give a pixel pitch of 4 x 4 mm"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not used: the pixel size comes from --pixel-size"), std::string::npos) << r.err;
}

// The control: the workspace converts, so each row fails for its one fault.
TEST(ConvertControl, TheGoodWorkspaceConverts) {
  Workspace w;
  const Result r = run(w, good_args(w) + " --format mha");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(w / "out/volume.mha"));
}

}  // namespace
