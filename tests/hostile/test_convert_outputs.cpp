// fdk-convert and what the user gave it (issue 39): an output never lands
// on an input, whatever --force says; a result folder holds one result;
// a failed or interrupted run leaves nothing that looks complete and, with
// --force, the earlier result as it was; a closed stdout and SIGHUP end the
// run with their documented codes. Each row sets up a workspace, runs the
// tool once (or twice) and checks the files, not only the exit code.
#include <fdk/adapters/tiff_io.hpp>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "convert_harness.hpp"
#include "small_scan.hpp"

namespace {

using namespace convert_harness;

// Every file under the workspace but the output folder and the run's own
// stdout/stderr, with its bytes: the inputs, which no row may change.
std::map<std::string, std::string> snapshot_inputs(const Workspace& w, const std::string& output = "out") {
  std::map<std::string, std::string> files;
  const fs::path out = fs::path(w / output).lexically_normal();
  for (auto it = fs::recursive_directory_iterator(w.root()); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path p = it->path();
    if (p.lexically_normal() == out) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink() || !it->is_regular_file()) continue;
    const std::string name = p.filename().string();
    if (name == "stdout.txt" || name == "stderr.txt") continue;
    files[p.string()] = read_file(p.string());
  }
  return files;
}

// The names in a folder (hidden ones included), sorted.
std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (auto it = fs::directory_iterator(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> slices(int n, const std::string& prefix = "slice") {
  std::vector<std::string> names;
  for (int y = 0; y < n; ++y) names.push_back(fdk::adapters::slice_file_name(prefix, y, n));
  return names;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  return a;
}

struct ShellResult {
  int code;  // the exit code; 128 + N for a death by signal N
  std::string out, err;
};

// Runs a shell command line in which $C is fdk-convert and $W the
// workspace, at most 60 s; stdout and stderr are those of the line.
ShellResult shell(const Workspace& w, const std::string& line) {
  const std::string out = w / "stdout.txt", err = w / "stderr.txt";
  const std::string cmd = "C='" + kConvert + "' W='" + w.root() + "' timeout -k 5 60 bash -c '" + line + "' > " +
                          out + " 2> " + err + " < /dev/null";
  const int status = std::system(cmd.c_str());
  ShellResult r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_file(out), read_file(err)};
  fs::remove(out);
  fs::remove(err);
  return r;
}

// The arguments of a good run into `output` (relative to the workspace),
// the preview on or off.
std::string args_into(const Workspace& w, const std::string& output, bool preview = false, bool quiet = true) {
  return (w / "proj") + " " + (w / output) + " --geometry " + (w / "scan.ini") +
         " --volume-size 16,16,16 --voxel-size 4 --threads 2" + (quiet ? " --quiet" : "") +
         (preview ? "" : " --no-preview");
}

// The small scan's 16 views of 24 x 24 float32 line integrals as a
// MetaImage stack: one file (.mha), or a header and its data file.
void write_stack(const Workspace& w, const std::string& header, const std::string& data = "") {
  const fdk_test::SmallScan scan(16, 16, 24);
  std::string bytes;
  for (int v = 0; v < scan.views(); ++v) {
    bytes.append(reinterpret_cast<const char*>(scan.pixels(v)), 24 * 24 * sizeof(float));
  }
  std::string text = "ObjectType = Image\nNDims = 3\nDimSize = 24 24 16\nElementType = MET_FLOAT\n"
                     "ElementSpacing = 5 5 1\nBinaryData = True\nBinaryDataByteOrderMSB = False\n";
  fs::create_directories(fs::path(w / header).parent_path());
  if (!data.empty()) fs::create_directories(fs::path(w / data).parent_path());
  if (data.empty()) {
    write_file(w / header, text + "ElementDataFile = LOCAL\n" + bytes);
  } else {
    // The data file by its path from the header's folder, as a header names it.
    write_file(w / header, text + "ElementDataFile = " +
                               fs::path(data).lexically_relative(fs::path(header).parent_path()).string() + "\n");
    write_file(w / data, bytes);
  }
}

struct Row {
  std::string name;
  // Prepares the workspace; returns the command line (see shell()).
  std::function<std::string(const Workspace&)> setup;
  int code;
  std::string needle;  // in stderr (empty: not checked)
  // Further checks after the run (the inputs are always checked).
  std::function<void(const Workspace&, const ShellResult&)> check;
};
void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

// ---- 1. An output never lands on an input --------------------------------------------------

std::vector<Row> clash_rows() {
  std::vector<Row> rows;
  // Each clash with and without --force: --force never overrides it.
  auto clash = [&](const std::string& name, std::function<std::string(const Workspace&)> setup,
                   const std::string& needle) {
    for (const bool force : {false, true}) {
      rows.push_back({name + (force ? "_force" : ""),
                      [setup, force](const Workspace& w) { return "$C " + setup(w) + (force ? " --force" : ""); }, 2,
                      needle, nullptr});
    }
  };
  const auto into_proj = [](const Workspace& w, const std::string& extra) {
    return (w / "proj") + " " + (w / "proj") + " --geometry " + (w / "scan.ini") +
           " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview " + extra;
  };
  // Slices into the projection folder: they would join the stack (a later
  // run would read them as views), or replace views of the same name.
  clash("slices_join_the_projection_folder", [into_proj](const Workspace& w) { return into_proj(w, ""); }, "join");
  clash("slices_replace_projections_of_their_name",
        [into_proj](const Workspace& w) {
          for (int v = 0; v < 16; ++v) fs::rename(w / ("proj/p" + std::string(v < 10 ? "0" : "") + std::to_string(v) + ".tif"),
                                                  w / ("proj/" + fdk::adapters::slice_file_name("slice", v, 16)));
          return into_proj(w, "");
        },
        "slice_0000.tif");
  clash("stack_joins_the_projection_folder", [into_proj](const Workspace& w) { return into_proj(w, "--format stack"); },
        "volume.tif");
  clash("bigtiff_joins_the_projection_folder",
        [into_proj](const Workspace& w) { return into_proj(w, "--format bigtiff"); }, "volume.tif");
  clash("prefix_p_joins_the_projection_folder",
        [into_proj](const Workspace& w) { return into_proj(w, "--prefix p"); }, "p_0000.tif");
  clash("pattern_in_other_case_still_joins",
        [into_proj](const Workspace& w) { return into_proj(w, "--pattern \"*.TIF\""); }, "join");
  clash("output_folder_spelled_with_dot_dot",
        [](const Workspace& w) {
          return (w / "proj") + " " + (w / "proj/../proj/") + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
        },
        "join");
  clash("output_folder_is_a_link_to_the_projections",
        [](const Workspace& w) {
          fs::create_directory_symlink(w / "proj", w / "link");
          return args_into(w, "link");
        },
        "join");
  clash("projections_through_a_link_output_the_folder",
        [](const Workspace& w) {
          fs::create_directory_symlink(w / "proj", w / "link");
          return (w / "link") + " " + (w / "proj") + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
        },
        "join");
  // MetaImage stacks written over by a MetaImage volume of the same name.
  clash("mha_stack_replaced_by_mha",
        [](const Workspace& w) {
          write_stack(w, "out/volume.mha");
          return (w / "out/volume.mha") + " " + (w / "out") + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview --format mha";
        },
        "volume.mha");
  clash("mhd_stack_replaced_by_mhd",
        [](const Workspace& w) {
          write_stack(w, "out/volume.mhd", "out/volume.raw");
          return (w / "out/volume.mhd") + " " + (w / "out") + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview --format mhd";
        },
        "volume.mhd");
  clash("detached_data_file_replaced_by_mhd",
        [](const Workspace& w) {
          write_stack(w, "out/scan.mhd", "out/volume.raw");
          return (w / "out/scan.mhd") + " " + (w / "out") + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview --format mhd";
        },
        "volume.raw");
  clash("mha_stack_hard_linked_under_the_output_name",
        [](const Workspace& w) {
          write_stack(w, "stack.mha");
          fs::create_directories(w / "out");
          fs::create_hard_link(w / "stack.mha", w / "out/volume.mha");
          return (w / "stack.mha") + " " + (w / "out") + " --geometry " + (w / "scan.ini") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview --format mha";
        },
        "volume.mha");
  clash("raw_projections_replaced_by_mhd_data",
        [](const Workspace& w) {
          write_stack(w, "x.mhd", "out/volume.raw");
          return (w / "out/volume.raw") + " " + (w / "out") + " --raw 24,24,16 --raw-type float32 --geometry " +
                 (w / "scan.ini") + " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview --format mhd";
        },
        "volume.raw");
  // Calibration, geometry and --like inputs under an output name.
  clash("dark_file_replaced_by_the_volume",
        [](const Workspace& w) {
          fs::create_directories(w / "out");
          fs::copy_file(w / "dark.tif", w / "out/volume.tif");
          return args_into(w, "out") + " --format stack --dark " + (w / "out/volume.tif") + " --flat " + (w / "flat.tif");
        },
        "dark field");
  clash("flat_folder_joined_by_slices",
        [](const Workspace& w) {
          fs::create_directories(w / "out");
          fs::copy_file(w / "flat.tif", w / "out/f.tif");
          return args_into(w, "out") + " --dark " + (w / "dark.tif") + " --flat " + (w / "out");
        },
        "flat field");
  clash("geometry_file_replaced_by_the_preview",
        [](const Workspace& w) {
          fs::create_directories(w / "out");
          fs::copy_file(w / "scan.ini", w / "out/preview.png");
          return (w / "proj") + " " + (w / "out") + " --geometry " + (w / "out/preview.png") +
                 " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --format mha";
        },
        "geometry file");
  clash("like_volume_replaced_by_mha",
        [](const Workspace& w) {
          write_stack(w, "out/volume.mha");
          return args_into(w, "out") + " --format mha --like " + (w / "out/volume.mha");
        },
        "--like");
  clash("like_data_file_replaced_by_mhd",
        [](const Workspace& w) {
          write_stack(w, "grid.mhd", "out/volume.raw");
          return args_into(w, "out") + " --format mhd --like " + (w / "grid.mhd");
        },
        "volume.raw");
  clash("bad_pixel_mask_replaced_by_the_volume",
        [](const Workspace& w) {
          fs::create_directories(w / "out");
          const std::vector<float> none(24 * 24, 0.0f);
          fdk::adapters::write_tiff_float(w / "out/volume.tif", 24, 24, {none.data()});
          return args_into(w, "out") + " --format bigtiff --bad-pixels " + (w / "out/volume.tif");
        },
        "bad-pixel map");
  // An earlier result whose file is now an input: --force would remove it.
  clash("earlier_result_file_is_the_like_volume",
        [](const Workspace& w) {
          write_stack(w, "out/volume.mha");
          write_file(w / "out/.fdk-convert-result", "volume.mha\n");
          return args_into(w, "out") + " --like " + (w / "out/volume.mha");
        },
        "earlier result");
  // Controls: beside the inputs but not on them, the run goes ahead.
  rows.push_back({"mha_beside_the_projections_is_fine",
                  [into_proj](const Workspace& w) { return "$C " + into_proj(w, "--format mha"); }, 0, "",
                  [](const Workspace& w, const ShellResult&) { EXPECT_TRUE(fs::exists(w / "proj/volume.mha")); }});
  rows.push_back({"slices_beside_an_mha_stack_are_fine",
                  [](const Workspace& w) {
                    write_stack(w, "out/scan.mha");
                    return "$C " + (w / "out/scan.mha") + " " + (w / "out") + " --geometry " + (w / "scan.ini") +
                           " --volume-size 16,16,16 --voxel-size 4 --threads 2 --quiet --no-preview";
                  },
                  0, "",
                  [](const Workspace& w, const ShellResult&) { EXPECT_TRUE(fs::exists(w / "out/slice_0015.tif")); }});
  return rows;
}

// ---- 2. A result folder holds one result ----------------------------------------------------

// A first run, then the row's second; both must pass unless the row says.
std::vector<Row> replace_rows() {
  std::vector<Row> rows;
  auto twice = [&](const std::string& name, const std::string& first, const std::string& second, int code,
                   const std::string& needle, std::vector<std::string> expected) {
    rows.push_back({name,
                    [first, second](const Workspace& w) {
                      return "$C " + args_into(w, "out") + " " + first + " && $C " + args_into(w, "out") + " " + second;
                    },
                    code, needle,
                    [expected](const Workspace& w, const ShellResult&) {
                      EXPECT_EQ(names_in(w / "out"), expected);
                    }});
  };
  const std::string manifest = ".fdk-convert-result";
  twice("fewer_slices", "", "--force --volume-size 16,8,16", 0, "", with(slices(8), {manifest}));
  twice("more_slices", "--volume-size 16,8,16", "--force", 0, "", with(slices(16), {manifest}));
  twice("wider_numbering", "--volume-size 16,8,16", "--force --volume-size 16,10000,16 --voxel-size 4,0.01,4", 0, "",
        with(slices(10000), {manifest}));
  twice("slices_then_mha", "", "--force --format mha", 0, "", {manifest, "volume.mha"});
  twice("mhd_then_slices", "--format mhd", "--force", 0, "", with(slices(16), {manifest}));
  twice("nrrd_then_stack", "--format nrrd", "--force --format stack", 0, "", {manifest, "volume.tif"});
  twice("bigtiff_then_nrrd", "--format bigtiff", "--force --format nrrd", 0, "", {manifest, "volume.nrrd"});
  twice("preview_then_none", "--format mha --preview-at 0,0,0", "--force --format mha", 0, "", {manifest, "volume.mha"});
  twice("prefix_a_then_b", "--prefix a", "--force --prefix b", 0, "", with(slices(16, "b"), {manifest}));
  twice("same_run_again", "", "--force", 0, "", with(slices(16), {manifest}));
  // Without --force an earlier result of any kind is refused, and kept.
  twice("earlier_mha_refused_without_force", "--format mha", "", 2, "--force", {manifest, "volume.mha"});
  twice("earlier_slices_refused_for_mhd", "", "--format mhd", 2, "earlier result", with(slices(16), {manifest}));
  twice("earlier_prefix_refused_without_force", "--prefix a", "--prefix b", 2, "a_0000.tif",
        with(slices(16, "a"), {manifest}));
  // Fix the preview on: its runs write preview.png.
  for (auto& r : rows) {
    if (r.name == "preview_then_none") {
      r.setup = [](const Workspace& w) {
        return "$C " + args_into(w, "out", true) + " --format mha && $C " + args_into(w, "out") + " --force --format mha";
      };
    }
  }
  // Files that are not an earlier result stay; leftovers of an interrupted
  // run go with --force.
  rows.push_back({"users_files_stay",
                  [](const Workspace& w) {
                    fs::create_directories(w / "out/sub");
                    write_file(w / "out/notes.txt", "mine");
                    write_file(w / "out/volume.raw", "mine too: no volume.mhd beside it");
                    write_file(w / "out/slice_a.tif", "mine");
                    return "$C " + args_into(w, "out") + " --force";
                  },
                  0, "",
                  [](const Workspace& w, const ShellResult&) {
                    EXPECT_EQ(read_file(w / "out/notes.txt"), "mine");
                    EXPECT_TRUE(fs::exists(w / "out/volume.raw"));
                    EXPECT_TRUE(fs::exists(w / "out/slice_a.tif"));
                    EXPECT_TRUE(fs::is_directory(w / "out/sub"));
                  }});
  rows.push_back({"leftovers_of_an_interrupted_run_go_with_force",
                  [](const Workspace& w) {
                    fs::create_directories(w / "out/.fdk-convert-staging-1-abc");
                    write_file(w / "out/.fdk-convert-staging-1-abc/slice_0000.tif", "half");
                    write_file(w / "out/slice_0003.tif.part", "half");
                    write_file(w / "out/volume.mha.part", "half");
                    return "$C " + args_into(w, "out") + " --force";
                  },
                  0, "", [](const Workspace& w, const ShellResult&) {
                    EXPECT_EQ(names_in(w / "out"), with(slices(16), {".fdk-convert-result"}));
                  }});
  rows.push_back({"leftovers_alone_are_not_a_result",
                  [](const Workspace& w) {
                    fs::create_directories(w / "out");
                    write_file(w / "out/slice_0003.tif.part", "half");
                    return "$C " + args_into(w, "out");
                  },
                  0, "", nullptr});
  // A manifest is never a way to reach another file.
  for (const char* entry : {"../proj/p00.tif", "/etc/hostname", "..", ".", "sub/x.tif", "../scan.ini", "\\\\x"}) {
    rows.push_back({"manifest_entry_" + identifier(entry),
                    [entry](const Workspace& w) {
                      fs::create_directories(w / "out/sub");
                      write_file(w / "out/sub/x.tif", "mine");
                      write_file(w / "out/.fdk-convert-result", std::string("# hostile\n") + entry + "\n");
                      return "$C " + args_into(w, "out") + " --force";
                    },
                    0, "", [](const Workspace& w, const ShellResult&) {
                      EXPECT_TRUE(fs::exists(w / "out/sub/x.tif"));
                      EXPECT_TRUE(fs::exists(w / "scan.ini"));
                    }});
  }
  rows.push_back({"manifest_names_an_earlier_file",
                  [](const Workspace& w) {
                    fs::create_directories(w / "out");
                    write_file(w / "out/old_result.bin", "earlier");
                    write_file(w / "out/.fdk-convert-result", "old_result.bin\n");
                    return "$C " + args_into(w, "out") + " --force";
                  },
                  0, "",
                  [](const Workspace& w, const ShellResult&) { EXPECT_FALSE(fs::exists(w / "out/old_result.bin")); }});
  rows.push_back({"removed_files_are_named",
                  [](const Workspace& w) {
                    return "$C " + args_into(w, "out") + " && $C " + args_into(w, "out", false, false) +
                           " --force --volume-size 16,8,16 --progress lines";
                  },
                  0, "slice_0008.tif' .. '", nullptr});
  return rows;
}

// ---- 3. A failure leaves nothing that looks complete ----------------------------------------

std::vector<Row> failure_rows() {
  std::vector<Row> rows;
  // A full disk at several points of each format: before the volume ends,
  // in the preview, and the earlier result (--force) stays as it was.
  const std::pair<const char*, std::vector<std::string>> formats[] = {
      {"tiff", slices(16)},          {"stack", {"volume.tif"}},  {"bigtiff", {"volume.tif"}},
      {"mha", {"volume.mha"}},       {"mhd", {"volume.mhd", "volume.raw"}}, {"nrrd", {"volume.nrrd"}}};
  for (const auto& f : formats) {
    const std::string format = f.first;
    for (const char* at : {"1", "9000", "preview"}) {
      const std::string point = at;
      rows.push_back({"full_disk_" + format + "_at_" + point,
                      [format, point](const Workspace& w) {
                        // preview: the volume is written whole, the preview's first byte fails.
                        return std::string(point == "preview" ? "FDK_CONVERT_FAIL_PREVIEW=1"
                                                              : "FDK_CONVERT_FAIL_AFTER_BYTES=" + point) +
                               " $C " + args_into(w, "out", true) + " --format " + format;
                      },
                      4, point == "preview" ? "preview.png' failed: No space left" : "No space left on device",
                      [](const Workspace& w, const ShellResult&) {
                        EXPECT_EQ(names_in(w / "out"), std::vector<std::string>{});
                      }});
    }
    const std::vector<std::string> earlier = with(f.second, {".fdk-convert-result", "preview.png"});
    rows.push_back({"full_disk_keeps_the_earlier_" + format,
                    [format](const Workspace& w) {
                      return "$C " + args_into(w, "out", true) + " --format " + format +
                             " && FDK_CONVERT_FAIL_AFTER_BYTES=5000 $C " + args_into(w, "out", true) +
                             " --force --volume-size 16,8,16 --format tiff";
                    },
                    4, "No space left on device",
                    [earlier](const Workspace& w, const ShellResult&) { EXPECT_EQ(names_in(w / "out"), earlier); }});
  }
  // The reader of stdout goes away, or there is no stdout: exit 4, nothing
  // left, the reason on stderr.
  // A pipe whose reader is gone before the first event: the first write fails.
  rows.push_back({"stdout_pipe_without_a_reader",
                  [](const Workspace& w) {
                    return "python3 -c \"import os, subprocess, sys; r, w = os.pipe(); os.close(r); "
                           "sys.exit(subprocess.call(sys.argv[1:], stdout=w))\" $C " +
                           args_into(w, "out", true) + " --progress json";
                  },
                  4, "stdout was closed",
                  [](const Workspace& w, const ShellResult&) { EXPECT_EQ(names_in(w / "out"), std::vector<std::string>{}); }});
  // The reader takes one line and goes: a run of a few seconds cannot have
  // written everything into the pipe's buffer before head leaves.
  rows.push_back({"stdout_reader_goes_away",
                  [](const Workspace& w) {
                    std::string a = args_into(w, "out", true);
                    a = a.substr(0, a.find(" --volume-size"));
                    return "$C " + a + " --volume-size 300,300,300 --voxel-size 0.25 --threads 1 --progress json "
                           "| head -1 > /dev/null; exit ${PIPESTATUS[0]}";
                  },
                  4, "stdout was closed",
                  [](const Workspace& w, const ShellResult&) { EXPECT_EQ(names_in(w / "out"), std::vector<std::string>{}); }});
  rows.push_back({"stdout_closed_with_json_events",
                  [](const Workspace& w) { return "$C " + args_into(w, "out", true) + " --progress json >&-"; }, 4,
                  "stdout was closed",
                  [](const Workspace& w, const ShellResult&) { EXPECT_EQ(names_in(w / "out"), std::vector<std::string>{}); }});
  rows.push_back({"stdout_closed_without_json_is_not_used",
                  [](const Workspace& w) { return "$C " + args_into(w, "out", true) + " >&-"; }, 0, "",
                  [](const Workspace& w, const ShellResult&) { EXPECT_TRUE(fs::exists(w / "out/preview.png")); }});
  rows.push_back({"stderr_closed_still_succeeds",
                  [](const Workspace& w) {
                    std::string a = args_into(w, "out", true);
                    a = a.substr(0, a.find(" --quiet"));
                    return "$C " + a + " --threads 2 --progress lines 2>&-";
                  },
                  0, "", [](const Workspace& w, const ShellResult&) { EXPECT_TRUE(fs::exists(w / "out/preview.png")); }});
  // A failure under --progress json ends with its error event (exit_code).
  rows.push_back({"json_error_event_after_a_full_disk",
                  [](const Workspace& w) {
                    return "FDK_CONVERT_FAIL_AFTER_BYTES=100 $C " + args_into(w, "out") + " --progress json";
                  },
                  4, "", [](const Workspace&, const ShellResult& r) {
                    const size_t last = r.out.rfind("{\"event\"");
                    ASSERT_NE(last, std::string::npos) << r.out;
                    const std::string error = "{\"event\":\"error\",\"exit_code\":4,\"message\":";
                    EXPECT_EQ(r.out.compare(last, error.size(), error), 0) << r.out;
                    // Named by its final name, not the staging folder's.
                    EXPECT_NE(r.out.find("/out/slice_0000.tif"), std::string::npos) << r.out;
                    EXPECT_EQ(r.out.find("staging"), std::string::npos) << r.out;
                  }});
  // Signals mid-run: 6, nothing left. A volume large enough to take seconds.
  for (const char* sig : {"HUP", "INT", "TERM"}) {
    rows.push_back({std::string("signal_") + sig + "_mid_run",
                    [sig](const Workspace& w) {
                      std::string a = args_into(w, "out", true);
                      a = a.substr(0, a.find(" --volume-size"));
                      return "$C " + a + " --volume-size 400,400,400 --voxel-size 0.2 --threads 1 --quiet & p=$!; "
                             "sleep 0.5; kill -" + std::string(sig) + " $p; wait $p";
                    },
                    6, "interrupted", [](const Workspace& w, const ShellResult&) {
                      EXPECT_EQ(names_in(w / "out"), std::vector<std::string>{});
                    }});
  }
  return rows;
}

void run_row(const Row& row) {
  Workspace w;
  const std::string line = row.setup(w);
  const auto before = snapshot_inputs(w);
  const ShellResult r = shell(w, line);
  EXPECT_EQ(r.code, row.code) << line << "\n" << r.err;
  if (!row.needle.empty()) {
    EXPECT_NE(r.err.find(row.needle), std::string::npos) << "stderr lacks '" << row.needle << "': " << r.err;
  }
  // No row may change an input, whatever it does to its output.
  const auto after = snapshot_inputs(w);
  for (const auto& [path, bytes] : before) {
    const auto it = after.find(path);
    if (it == after.end()) {
      ADD_FAILURE() << "input removed: " << path;
    } else if (it->second != bytes) {
      ADD_FAILURE() << "input changed: " << path;
    }
  }
  if (row.check) row.check(w, r);
}

class ConvertClash : public ::testing::TestWithParam<Row> {};
class ConvertReplace : public ::testing::TestWithParam<Row> {};
class ConvertFailure : public ::testing::TestWithParam<Row> {};
TEST_P(ConvertClash, RefusesOrLeavesInputsAlone) { run_row(GetParam()); }
TEST_P(ConvertReplace, OneResultPerFolder) { run_row(GetParam()); }
TEST_P(ConvertFailure, LeavesNothingThatLooksComplete) { run_row(GetParam()); }

std::string row_name(const ::testing::TestParamInfo<Row>& info) { return identifier(info.param.name); }

INSTANTIATE_TEST_SUITE_P(Hostile, ConvertClash, ::testing::ValuesIn(clash_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Hostile, ConvertReplace, ::testing::ValuesIn(replace_rows()), row_name);
INSTANTIATE_TEST_SUITE_P(Hostile, ConvertFailure, ::testing::ValuesIn(failure_rows()), row_name);

}  // namespace
