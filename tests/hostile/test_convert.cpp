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

// The control: the workspace converts, so each row fails for its one fault.
TEST(ConvertControl, TheGoodWorkspaceConverts) {
  Workspace w;
  const Result r = run(w, good_args(w) + " --format mha");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(w / "out/volume.mha"));
}

}  // namespace
