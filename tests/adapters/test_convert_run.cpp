// fdk-convert as a wrapper or a lab script meets it: one exit-code table
// (in --help, in docs/ADAPTERS.md, every code reached here), a budget that
// cannot hold the scan refused before any work with a figure that does, and
// the JSON event stream of --progress json.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "tool_run.hpp"

using fdk_adapter_test::TempDir;

namespace {

const std::string kSim = FDK_SCAN_SIM_PATH;
const std::string kConvert = FDK_CONVERT_PATH;

using ToolRun = fdk_adapter_test::ToolResult;

ToolRun run(const std::string& command, const TempDir& dir) {
  return fdk_adapter_test::run_tool(command, dir.path());
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A small simulated scan in dir/scan and the arguments that convert it.
std::string small_scan(const TempDir& dir, const std::string& sim_args = " --views 60 --detector 48") {
  EXPECT_EQ(run(kSim + " " + (dir / "scan") + sim_args + " --threads 2", dir).code, 0);
  return kConvert + " " + (dir / "scan/projections") + " " + (dir / "out") + " --dark " + (dir / "scan/dark") +
         " --flat " + (dir / "scan/flat") + " --geometry " + (dir / "scan/scan.ini") + " --threads 2";
}

bool output_left(const TempDir& dir) {
  return std::filesystem::is_directory(dir / "out") && !fdk_adapter_test::names_in(dir / "out").empty();
}

}  // namespace

// The table has the same codes in --help and in docs/ADAPTERS.md.
TEST(ConvertExitCodes, OneTableInTheHelpAndTheDocs) {
  TempDir dir;
  const ToolRun help = run(kConvert + " --help", dir);
  ASSERT_EQ(help.code, 0);
  const std::string docs = fdk_adapter_test::read_all(std::string(FDK_DOCS_DIR) + "/ADAPTERS.md");
  ASSERT_FALSE(docs.empty());
  for (int code = 0; code <= 7; ++code) {
    EXPECT_NE(help.out.find("\n  " + std::to_string(code) + "  "), std::string::npos) << "--help lacks " << code;
    EXPECT_NE(docs.find("\n| " + std::to_string(code) + " |"), std::string::npos) << "docs lack " << code;
  }
  EXPECT_EQ(help.out.find("\n  8  "), std::string::npos);
  EXPECT_EQ(docs.find("\n| 8 |"), std::string::npos);
}

// Every code of the table, reached (6 and 7 have their own tests below).
TEST(ConvertExitCodes, EachCodeIsReached) {
  TempDir dir;
  const std::string convert = small_scan(dir) + " --volume-size 24,24,24 --voxel-size 1.5 --quiet";
  EXPECT_EQ(run(convert, dir).code, 0);
  std::filesystem::remove_all(dir / "out");
  // 1: an unexpected internal error (a test hook throws one).
  const ToolRun internal = run("FDK_CONVERT_TEST_INTERNAL_ERROR=1 " + convert, dir);
  EXPECT_EQ(internal.code, 1) << internal.err;
  EXPECT_NE(internal.err.find("internal error"), std::string::npos) << internal.err;
  // 2: a bad option value.
  EXPECT_EQ(run(convert + " --cutoff 2", dir).code, 2);
  // 3: a geometry file that does not exist, whatever its name (an unknown
  // extension was a usage error, 2, before the file was looked at).
  for (const char* name : {"missing.xml", "missing.ini", "missing.geom"}) {
    const ToolRun r = run(convert + " --geometry " + (dir / name), dir);
    EXPECT_EQ(r.code, 3) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
  }
  // ... and one with an unknown extension is read by its content.
  std::filesystem::copy_file(dir / "scan/geometry.xml", dir / "scan.geometry");
  const ToolRun sniffed = run(kConvert + " " + (dir / "scan/projections") + " " +
                              (dir / "out") + " --geometry " + (dir / "scan.geometry") +
                              " --dark " + (dir / "scan/dark") + " --flat " + (dir / "scan/flat") +
                              " --volume-size 24,24,24 --voxel-size 1.5 --threads 2 --quiet",
                          dir);
  EXPECT_EQ(sniffed.code, 0) << sniffed.err;
  std::filesystem::remove_all(dir / "out");
  // 4: an output below a file.
  fdk_adapter_test::write_text(dir / "file", "x");
  std::string below = convert;
  below.replace(below.find(dir / "out"), (dir / "out").size(), dir / "file/out");
  const ToolRun unwritable = run(below, dir);
  EXPECT_EQ(unwritable.code, 4) << unwritable.err;
  // 5: the library fails: the CUDA backend where no GPU is usable (on a
  // machine with a GPU this converts, and says so).
  const ToolRun cuda = run(convert + " --backend cuda", dir);
  if (cuda.code == 0) {
    std::printf("a GPU is usable here: --backend cuda converted, exit 5 not reached this way\n");
  } else {
    EXPECT_EQ(cuda.code, 5) << cuda.err;
    EXPECT_FALSE(output_left(dir));
  }
}

// SIGINT during the work: exit 6, nothing left that looks complete.
TEST(ConvertExitCodes, InterruptedRunExits6AndLeavesNothing) {
  TempDir dir;
  const std::string convert =
      small_scan(dir, " --views 720 --detector 96") + " --threads 1 --read-threads 1 --progress json";
  const std::string events = dir / "events.txt";
  // Started in the background; SIGINT once the plan is out (before any
  // work: the rest takes seconds on one thread).
  const std::string script = convert + " > " + events + " 2>/dev/null & pid=$!; "
                             "for i in $(seq 200); do grep -q '\"plan\"' " + events + " && break; sleep 0.05; done; "
                             "sleep 0.2; kill -INT $pid; wait $pid; echo $? > " + (dir / "code.txt");
  ASSERT_EQ(std::system(("bash -c '" + std::regex_replace(script, std::regex("'"), "'\\''") + "'").c_str()), 0);
  const int code = std::atoi(fdk_adapter_test::read_all(dir / "code.txt").c_str());
  EXPECT_EQ(code, 6) << fdk_adapter_test::read_all(events);
  EXPECT_FALSE(output_left(dir));
  const auto lines = lines_of(fdk_adapter_test::read_all(events));
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("\"event\":\"error\",\"exit_code\":6"), std::string::npos) << lines.back();
}

// A host budget that cannot hold the scan even as float16: exit 7 before
// any work (no output folder content, no view pushed), naming a
// --host-memory that holds it; that figure then converts.
TEST(ConvertExitCodes, BudgetTooSmallIsRefusedAtTheStartWithAFigureThatFits) {
  TempDir dir;
  const std::string convert =
      small_scan(dir, " --views 360 --detector 128") + " --volume-size 32,32,32 --voxel-size 2 --progress json";
  const ToolRun refused = run(convert + " --host-memory 12M", dir);
  EXPECT_EQ(refused.code, 7) << refused.err;
  EXPECT_FALSE(output_left(dir));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(refused.err, m, std::regex("--host-memory ([0-9.]+[KMG]) holds every view for certain")))
      << refused.err;
  const std::string figure = m[1];
  // No progress event: nothing was read or pushed.
  EXPECT_EQ(refused.out.find("\"progress\""), std::string::npos) << refused.out;
  EXPECT_EQ(refused.out.find("\"stage_done\""), std::string::npos) << refused.out;
  const auto lines = lines_of(refused.out);
  ASSERT_EQ(lines.size(), 2u) << refused.out;
  EXPECT_EQ(lines[0].rfind("{\"event\":\"plan\"", 0), 0u) << lines[0];
  EXPECT_EQ(lines[0].find("\"store_fit\":\"fits\""), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("{\"event\":\"error\",\"exit_code\":7,", 0), 0u) << lines[1];
  // With the risk accepted it starts, and if the store fills up it is the
  // same exit 7 with the same advice, mid-run.
  const ToolRun risk = run(convert + " --host-memory 12M --accept-budget-risk --quiet", dir);
  if (risk.code != 0) {
    EXPECT_EQ(risk.code, 7) << risk.err;
    EXPECT_NE(risk.err.find("holds every view for certain"), std::string::npos) << risk.err;
    EXPECT_FALSE(output_left(dir));
  }
  std::filesystem::remove_all(dir / "out");
  const ToolRun fits = run(convert + " --host-memory " + figure + " --quiet", dir);
  EXPECT_EQ(fits.code, 0) << figure << ": " << fits.err;
  EXPECT_EQ(fits.err, "") << "--quiet with --progress json leaves stderr empty";
}

// --progress json: one JSON object per line on stdout, in order plan,
// progress of the projections, of the volume, done; stderr keeps the human
// report (none with --quiet).
TEST(ConvertProgress, JsonEventsForAWrapper) {
  TempDir dir;
  const std::string convert = small_scan(dir) + " --volume-size 24,24,24 --voxel-size 1.5";
  const ToolRun r = run(convert + " --progress json", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("plan: "), std::string::npos) << "the human report stays on stderr";
  const auto lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 4u) << r.out;
  for (const std::string& l : lines) {
    EXPECT_EQ(l.rfind("{\"event\":\"", 0), 0u) << l;
    EXPECT_EQ(l.back(), '}') << l;
  }
  EXPECT_EQ(lines.front().rfind("{\"event\":\"plan\",\"backend\":", 0), 0u) << lines.front();
  EXPECT_NE(lines.front().find("\"views\":60"), std::string::npos);
  EXPECT_NE(lines.front().find("\"volume\":[24,24,24]"), std::string::npos);
  EXPECT_EQ(lines.back().rfind("{\"event\":\"done\",\"seconds\":", 0), 0u) << lines.back();
  EXPECT_NE(r.out.find("\"stage\":\"projections\",\"unit\":\"views\",\"done\":60,\"total\":60"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("{\"event\":\"stage_done\",\"stage\":\"volume\""), std::string::npos) << r.out;
  // --quiet: the same events, nothing on stderr.
  std::filesystem::remove_all(dir / "out");
  const ToolRun quiet = run(convert + " --progress json --quiet", dir);
  EXPECT_EQ(quiet.code, 0);
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(lines_of(quiet.out).front().rfind("{\"event\":\"plan\"", 0), 0u);
}

// The volume stage of a one-slab reconstruction moves before its end (the
// library's backprojection count), where it sat at 0 until the slab was
// done.
TEST(ConvertProgress, OneSlabVolumeMovesBeforeItsEnd) {
  TempDir dir;
  // About 1.5e9 voxel updates on one thread: seconds, so the half-second
  // ticks see the slab under way.
  const std::string convert = small_scan(dir, " --views 720 --detector 96") +
                              " --volume-size 128,96,128 --voxel-size 0.45 --threads 1 --progress json --quiet";
  const ToolRun r = run(convert, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  ASSERT_NE(lines.front().find("\"slabs\":1,"), std::string::npos) << lines.front();
  int between = 0;
  for (const std::string& l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, std::regex("\"event\":\"progress\",\"stage\":\"volume\",\"unit\":\"planes\",\"done\":([0-9]+),\"total\":96"))) {
      const int done = std::stoi(m[1]);
      if (done > 0 && done < 96) ++between;
    }
  }
  EXPECT_GT(between, 0) << r.out;
}

// --live-preview: frames while the views arrive and a complete one after
// fdk_finish, in live-preview.png, which is gone when the run ends (the
// result's preview.png stays).
TEST(ConvertLivePreview, FramesDuringTheScanAndNoLiveFileLeft) {
  TempDir dir;
  const std::string convert =
      small_scan(dir, " --views 720 --detector 96") + " --backend cpu --live-preview-interval 0.05";
  const ToolRun r = run(convert, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  std::smatch m;
  const std::string all = r.out + r.err;
  ASSERT_TRUE(std::regex_search(all, m, std::regex("live preview: ([0-9]+) frames"))) << all;
  EXPECT_GE(std::stoi(m[1]), 2) << all;  // at least one during the scan, and the last
  EXPECT_FALSE(std::filesystem::exists(dir / "out/live-preview.png"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out/preview.png"));
  EXPECT_EQ(run(convert + " --force --live-preview-interval 0", dir).code, 2);
}

// fdk-scan-sim --live --live-preview: a series of frames at the scanner's
// pace through libfdk_frames.
TEST(ScanSimLivePreview, FramesAtTheScannersPace) {
  TempDir dir;
  const ToolRun r = run(kSim + " --live " + (dir / "live") +
                            " --views 90 --detector 48 --volume 32 --rate 60 --backend cpu --threads 2"
                            " --live-preview 0.2",
                        dir);
  ASSERT_EQ(r.code, 0) << r.err;
  int frames = 0;
  for (const std::string& name : fdk_adapter_test::names_in(dir / "live"))
    if (name.rfind("live-preview-", 0) == 0) ++frames;
  EXPECT_GE(frames, 4) << r.out;  // 1.5 s of frames at 0.2 s, and the last
  EXPECT_EQ(run(kSim + " --live --live-preview 0.2 --views 8", dir).code, 2);  // no OUTPUT_DIR
}

