// fdk-convert — projections in (a folder of TIFF files, a MetaImage, NRRD,
// HDF5 or raw stack), a reconstructed volume out (TIFF slices, one
// multi-page TIFF, a MetaImage or a NRRD), slab by slab.
//
// Exit codes (also in --help and docs/ADAPTERS.md):
//   0 success; 1 unexpected internal error; 2 bad command line or option
//   value; 3 unusable input (projections, dark/flat, bad-pixel map, geometry
//   file); 4 output cannot be written (folder, permissions, full disk);
//   5 the reconstruction failed (library error: budget, backend, device);
//   6 interrupted (SIGINT/SIGTERM/SIGHUP). A closed stdout (its reader gone)
//   is 4. Everything is written into a staging folder inside the output
//   folder and moved to its final name only when the whole run has
//   succeeded: on any failure nothing under the final names is left behind.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/adapters/geometry_io.hpp>
#include <fdk/adapters/image_stack.hpp>
#if FDK_HAVE_HDF5
#include <fdk/adapters/hdf5_stack.hpp>
#endif
#include <fdk/adapters/projection_folder.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "options.hpp"
#include "live_preview.hpp"
#include "preview.hpp"
#include "progress.hpp"
#include "budget.hpp"
#include "status_text.hpp"
#include "ordered_reader.hpp"
#include "sources.hpp"
#include "outputs.hpp"
#include "distributed.hpp"
#include "estimate.hpp"
#include "inputs.hpp"
#include "provenance.hpp"
#include "result_folder.hpp"

namespace ad = fdk::adapters;

using namespace fdk_convert;

namespace {

// rtkfdk's --hann F cuts at a whole bin, ncut = round((N/2 + 1) F), of
// its padded row (N: the power of two >= twice the columns); fdk's cutoff
// is exactly a fraction of Nyquist, so the same cut is 2 ncut / N. It
// agrees with rtkfdk to 1.7e-6 (docs/ACCURACY.md); under half-fan weights
// RTK pads the widened row instead, so the cut is then within a bin.
double rtk_hann_cutoff(double f, int columns) {
  double n = 1;
  while (n < 2.0 * columns) n *= 2;
  return std::clamp(2.0 * std::round((n / 2 + 1) * f) / n, 1.0 / n, 1.0);
}


// The library's largest detector and volume extent per axis (fdk.h).
constexpr int kMaxExtent = 65536;

std::atomic<int> g_signal{0};
// --progress json: the failure is also an "error" event on stdout.
bool g_json_events = false;

void report_failure(int code, const std::string& message, const char* hint = "") {
  std::fprintf(stderr, "fdk-convert: %s%s\n", message.c_str(), hint);
  if (g_json_events && !fdk_tools::stdout_lost().load()) {  // where it still can be
    std::printf("{\"event\":\"error\",\"exit_code\":%d,\"message\":%s}\n", code,
                fdk_tools::json_string(message).c_str());
    std::fflush(stdout);
  }
}
extern "C" void on_signal(int sig) { g_signal.store(sig); }

// Why the run must stop now, if it must: a signal (6) or a closed stdout (4).
void throw_if_stopped() {
  if (const int sig = g_signal.load()) {
    throw Failure{kExitInterrupted, "interrupted by signal " + std::to_string(sig)};
  }
  if (fdk_tools::stdout_lost().load()) {
    throw Failure{kExitOutput, "stdout was closed (its reader went away): the run stopped"};
  }
}

// The first character of a file that is not white space (0 when none or
// unreadable: the reader that follows names the problem).
char first_non_blank_character(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return 0;
  int c;
  while ((c = std::fgetc(f)) != EOF && std::isspace(c)) {
  }
  std::fclose(f);
  return c == EOF ? 0 : static_cast<char>(c);
}

// Owns the library handle.
struct Context {
  fdk_context* ctx = nullptr;
  ~Context() { fdk_destroy(ctx); }
  [[noreturn]] void fail(const char* what, fdk_status s) const {
    if (s == FDK_ERROR_CANCELLED) throw_if_stopped();
    throw Failure{kExitReconstruction,
                  std::string(what) + " failed: " + fdk_tools::status_text(s, fdk_last_error(ctx))};
  }
};

// The ranks of a distributed run (null for one process).
std::unique_ptr<Ranks> g_ranks;

int run(const Options& o) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  auto say = [&](const std::string& text) {
    if (!o.quiet) std::fprintf(stderr, "%s\n", text.c_str());
  };
  check_geometry_output(o);  // --write-geometry's refusals, before any work

  // ---- geometry files ------------------------------------------------------------
  ad::ScanDescription desc;
  std::vector<fdk_view> xml_views;
  bool have_xml = false;
  for (const std::string& g : o.geometry_files) {
    // A geometry file that cannot be read is unusable input (3) whatever its
    // name; an unknown extension is told apart by its first character.
    if (!ad::is_regular_file(g)) {
      throw Failure{kExitInput, "the geometry file '" + g + "' " +
                                    (ad::is_directory(g) ? "is a folder" : "does not exist")};
    }
    bool xml = ends_with(g, ".xml");
    if (!xml && !ends_with(g, ".ini") && !ends_with(g, ".cfg") && !ends_with(g, ".txt")) {
      xml = first_non_blank_character(g) == '<';
    }
    if (xml) {
      if (have_xml) usage_error("two XML geometry files given");
      xml_views = ad::read_rtk_geometry(g);
      have_xml = true;
    } else {
      desc.merge(ad::read_scan_ini(g));
    }
  }
  if (!o.like.empty()) {  // rtkfdk's --like: below the explicit flags, above the INI
    const fdk_volume grid = ad::read_volume_grid(o.like);
    ad::ScanDescription like;
    like.volume_size = std::array<int, 3>{grid.size[0], grid.size[1], grid.size[2]};
    like.volume_spacing = std::array<double, 3>{grid.spacing[0], grid.spacing[1], grid.spacing[2]};
    like.volume_origin = std::array<double, 3>{grid.origin[0], grid.origin[1], grid.origin[2]};
    // The header's values were checked against the volume's limits where
    // they were read (naming the key); anything refused later names the file.
    for (const char* key : {"volume.size", "volume.spacing", "volume.origin"}) {
      like.sources[key] = "'" + o.like + "' (--like)";
    }
    desc.merge(like);
  }
  desc.merge(o.flags);
  if (have_xml && (desc.sid || desc.sdd || desc.start_angle || desc.arc || desc.direction ||
                   desc.projection_offset || desc.source_offset || desc.in_plane_angle ||
                   desc.out_of_plane_angle)) {
    usage_error("the RTK geometry file gives every view's geometry: do not also give sid, sdd, "
                "angles or offsets (flags or INI)");
  }
  check_magnification(desc);  // sid and sdd may come from two places
  // ---- projections ---------------------------------------------------------------
  const std::unique_ptr<ad::ProjectionSource> source = open_projections(o);
  const ad::ProjectionSource& folder = *source;
  const int count = folder.count();
  {
    std::string line = "fdk-convert: " + std::to_string(count) + " projections of " +
                       std::to_string(folder.raw_width()) + " x " +
                       std::to_string(folder.raw_height()) + " " +
                       ad::sample_type_name(folder.sample_type()) + " in '" + o.projections +
                       "' (" + (folder.raw() ? "raw intensities" : "line integrals");
    if (folder.dark_frames()) line += ", dark: " + std::to_string(folder.dark_frames()) + " frames";
    if (folder.flat_frames()) line += ", flat: " + std::to_string(folder.flat_frames()) + " frames";
#if FDK_HAVE_HDF5
    if (const auto* h5 = dynamic_cast<const ad::Hdf5Stack*>(&folder)) {
      if (!h5->dark_dataset_used().empty()) line += ", dark from " + h5->dark_dataset_used();
      if (!h5->flat_dataset_used().empty()) line += ", flat from " + h5->flat_dataset_used();
    }
#endif
    if (folder.raw_pixel_size_mm()[0] > 0 || folder.raw_detector_origin_mm()) {
      line += ", " + std::string(folder.raw_pixel_size_mm()[0] > 0 ? "pitch" : "") +
              (folder.raw_pixel_size_mm()[0] > 0 && folder.raw_detector_origin_mm() ? " and " : "") +
              (folder.raw_detector_origin_mm() ? "origin" : "") + " in " + folder.geometry_source();
    }
    const auto& r = folder.preprocessor().report();
    if (r.bad_total) {
      line += ", " + std::to_string(r.bad_total) + " bad pixels replaced";
      if (r.flat_not_above_dark + r.flat_saturated + r.calibration_non_finite) {
        line += " (" + std::to_string(r.flat_not_above_dark + r.flat_saturated +
                                      r.calibration_non_finite) +
                " from the flat field)";
      }
    }
    say(line + ")");
  }

  // ---- detector, views, volume --------------------------------------------------------
  // The library's limits, checked here so that the exit code says whose
  // fault it is: the input's (3) or the options' (2), not the library's (5).
  {
    const auto& pp = o.folder.preprocess;
    const bool reshaped = pp.crop.width > 0 || pp.crop.height > 0 || pp.bin_u > 1 || pp.bin_v > 1;
    auto outside = [](int n) { return n < 2 || n > kMaxExtent; };
    if (outside(folder.width()) || outside(folder.height())) {
      const std::string raw = std::to_string(folder.raw_width()) + " x " + std::to_string(folder.raw_height());
      const std::string limit = ": the detector must have 2 to " + std::to_string(kMaxExtent) + " pixels per axis";
      if (!reshaped) {
        throw Failure{kExitInput, "the projections in '" + o.projections + "' are " + raw + " pixels" + limit};
      }
      usage_error("--crop/--bin leave " + std::to_string(folder.width()) + " x " +
                  std::to_string(folder.height()) + " of the " + raw + " pixels of the projections" + limit);
    }
  }
  if (const auto* tiff = dynamic_cast<const ad::ProjectionFolder*>(&folder);
      desc.pixel_size && tiff && !tiff->pitch_disagreement().empty()) {
    // Not used, but files from two scans in one folder would look so.
    say("note: " + tiff->pitch_disagreement() + " (not used: the pixel size comes from " +
        desc.source("detector.pixel_size") + ")");
  }
  if (!desc.pixel_size) {
    const auto tagged = folder.raw_pixel_size_mm();
    if (!(tagged[0] > 0 && tagged[1] > 0)) {
      const bool tiff = dynamic_cast<const ad::ProjectionFolder*>(&folder) != nullptr;
      throw Failure{kExitUsage,
                    "the detector pixel size is not given: no --pixel-size, no detector.pixel_size in an INI "
                    "description, and " + (tiff ? folder.describe(0) : "'" + o.projections + "'") +
                        (tiff ? " has no resolution tags (ResolutionUnit centimetre or inch with XResolution and "
                                "YResolution)"
                              : " states none (" + folder.geometry_source() + ")")};
    }
    // A folder whose files' resolution tags disagree: the pitch taken from
    // the first would be a guess (docs/DECISIONS.md).
    if (const auto* tiff = dynamic_cast<const ad::ProjectionFolder*>(&folder);
        tiff && !tiff->pitch_disagreement().empty()) {
      throw Failure{kExitInput, tiff->pitch_disagreement() +
                                    ": the pixel pitch is taken from the resolution tags, which must agree "
                                    "(give --pixel-size, or detector.pixel_size in an INI, to choose)"};
    }
    desc.pixel_size = tagged;
    desc.sources["detector.pixel_size"] = "'" + o.projections + "' (" + folder.geometry_source() + ")";
    say("pixel size: " + fmt("%.6g", tagged[0]) + " x " + fmt("%.6g", tagged[1]) +
        " mm, from " + folder.geometry_source());
  }
  fdk_detector raw_detector = ad::centred_detector(folder.raw_width(), folder.raw_height(),
                                                   (*desc.pixel_size)[0], (*desc.pixel_size)[1]);
  if (desc.detector_origin) {
    raw_detector.origin[0] = (*desc.detector_origin)[0];
    raw_detector.origin[1] = (*desc.detector_origin)[1];
  } else if (const auto stated = folder.raw_detector_origin_mm()) {
    // As rtkfdk reads the same file: the image origin is the detector
    // position of raw pixel (0, 0).
    raw_detector.origin[0] = (*stated)[0];
    raw_detector.origin[1] = (*stated)[1];
    desc.sources["detector.origin"] = "'" + o.projections + "' (" + folder.geometry_source() + ")";
    say("detector origin: " + fmt("%.6g", (*stated)[0]) + ", " + fmt("%.6g", (*stated)[1]) +
        " mm (raw pixel (0,0)), from " + folder.geometry_source());
  }
  const fdk_detector detector = folder.preprocessor().processed_detector(raw_detector);
  if (desc.detector_size &&
      ((*desc.detector_size)[0] != detector.size[0] || (*desc.detector_size)[1] != detector.size[1])) {
    throw Failure{kExitInput, "the geometry says the detector is " +
                                  std::to_string((*desc.detector_size)[0]) + " x " +
                                  std::to_string((*desc.detector_size)[1]) +
                                  " pixels but the (processed) projections are " +
                                  std::to_string(detector.size[0]) + " x " +
                                  std::to_string(detector.size[1])};
  }
  fdk_scan scan;
  if (have_xml) {
    if (desc.views && *desc.views != static_cast<int>(xml_views.size())) {
      usage_error("views = " + std::to_string(*desc.views) + " contradicts the geometry file's " +
                  std::to_string(xml_views.size()) + " views");
    }
    if (static_cast<int>(xml_views.size()) != count) {
      throw Failure{kExitInput, "the geometry file describes " + std::to_string(xml_views.size()) +
                                    " views but '" + o.projections + "' holds " +
                                    std::to_string(count) + " projections"};
    }
    fdk_scan_init(&scan);
    scan.kind = FDK_SCAN_VIEWS;
    scan.num_views = count;
    scan.views = xml_views.data();
  } else {
    if (desc.views && *desc.views != count) {
      throw Failure{kExitInput, "the geometry announces " + std::to_string(*desc.views) +
                                    " views but '" + o.projections + "' holds " +
                                    std::to_string(count) + " projections"};
    }
    try {
      scan = ad::uniform_scan(desc, count);
    } catch (const ad::Error& e) {
      usage_error(e.what());
    }
  }
  const fdk_view first_view = have_xml ? xml_views[0] : [&] {
    fdk_view v = scan.uniform;
    v.gantry_angle_deg = scan.first_angle_deg;
    return v;
  }();
  fdk_volume volume = ad::default_volume(detector, first_view);
  const bool default_volume = !desc.volume_size && !desc.volume_spacing && !desc.volume_origin;
  {
    const fdk_volume fov = volume;
    if (desc.volume_spacing) {
      for (int a = 0; a < 3; ++a) {
        volume.spacing[a] = (*desc.volume_spacing)[a];
        volume.size[a] = std::max(
            1, static_cast<int>(std::ceil(fov.size[a] * fov.spacing[a] / volume.spacing[a] - 1e-9)));
      }
    }
    if (desc.volume_size) {
      for (int a = 0; a < 3; ++a) volume.size[a] = (*desc.volume_size)[a];
    }
    for (int a = 0; a < 3; ++a) {
      if (volume.size[a] > kMaxExtent) {
        const std::string why = "a voxel of " + fmt("%.6g", volume.spacing[a]) + " mm makes the volume " +
                                std::to_string(volume.size[a]) + " voxels along " + "xyz"[a] +
                                " (at most " + std::to_string(kMaxExtent) + "): give a larger voxel or --volume-size";
        if (o.flags.volume_spacing) usage_error("--voxel-size: " + why);
        throw Failure{kExitInput, "the geometry's volume.spacing: " + why};
      }
    }
    for (int a = 0; a < 3; ++a) {
      if (desc.volume_origin) {
        volume.origin[a] = (*desc.volume_origin)[a];
      } else {  // centred where the field of view is
        const double centre = fov.origin[a] + 0.5 * (fov.size[a] - 1) * fov.spacing[a];
        volume.origin[a] = centre - 0.5 * (volume.size[a] - 1) * volume.spacing[a];
      }
    }
  }

  // ---- the library ----------------------------------------------------------------------
  fdk_config config;
  fdk_config_init(&config);
  config.volume = volume;
  config.detector = detector;
  config.scan = scan;
  config.window = o.window_kind;
  config.cutoff = o.rtk_hann > 0 ? rtk_hann_cutoff(o.rtk_hann, detector.size[0]) : o.cutoff;
  config.hann_cutoff_v = o.hann_cutoff_v;
  config.short_scan = o.short_scan;
  config.offset_detector = o.offset_detector;
  config.outside_fov = o.outside_fov;
  config.truncation_padding = o.padding;
  config.backend = o.backend;
  config.num_devices = static_cast<int32_t>(o.gpus.size());
  for (size_t g = 0; g < o.gpus.size(); ++g) config.devices[g] = o.gpus[g];
  config.host_memory_budget = o.host_memory;
  config.gpu_memory_budget = o.gpu_memory;
  config.precision = o.precision;
  config.num_threads = o.threads;
  config.slab_thickness = o.slab_thickness;
  GeometryOrigins origins;
  origins.desc = desc;
  if (have_xml) {
    for (const std::string& g : o.geometry_files) {
      if (ends_with(g, ".xml") || first_non_blank_character(g) == '<') origins.xml_file = g;
    }
  }
  origins.reshaped = o.folder.preprocess.bin_u > 1 || o.folder.preprocess.bin_v > 1 ||
                     o.folder.preprocess.crop.width > 0 || o.folder.preprocess.crop.height > 0;
  if (o.estimate_only()) return run_estimate_only(o, folder, config, origins, t_start, throw_if_stopped);
  if (o.live_preview) check_live_preview(o, g_ranks != nullptr);
  if (g_ranks) return g_ranks->run(Job{o, folder, config, have_xml, first_view, t_start, g_signal, origins});
  config.preview = o.live_preview ? 1 : 0;
  Context lib;
  if (const fdk_status s = fdk_create(&config, &lib.ctx); s != FDK_OK) {
    // Every value in the configuration came from the options or the input
    // and most were checked where they were read; a value the library still
    // refuses is named by where it came from: 3 a file, 2 a flag, never a
    // failed reconstruction (5).
    throw setup_failure(s, fdk_last_create_error(), origins, config);
  }
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  if (const fdk_status s = fdk_get_plan_info(lib.ctx, &plan); s != FDK_OK) lib.fail("fdk_get_plan_info", s);
  const double raw_projection_bytes = 4.0 * count * detector.size[0] * detector.size[1];
  std::string progress_json_plan;
  say("detector: " + std::to_string(detector.size[0]) + " x " + std::to_string(detector.size[1]) +
      " pixels of " + fmt("%.4g", detector.spacing[0]) + " x " + fmt("%.4g", detector.spacing[1]) +
      " mm; " + (have_xml ? "views from '" + o.geometry_files[0] + "'" : "uniform " +
      fmt("%.4g", scan.arc_deg) + " deg scan from " + fmt("%.4g", scan.first_angle_deg) + " deg") +
      ", SID " + fmt("%.6g", first_view.sid) + " mm, SDD " + fmt("%.6g", first_view.sdd) + " mm");
  say("volume: " + std::to_string(volume.size[0]) + " x " + std::to_string(volume.size[1]) +
      " x " + std::to_string(volume.size[2]) + " voxels of " + fmt("%.4g", volume.spacing[0]) +
      " x " + fmt("%.4g", volume.spacing[1]) + " x " + fmt("%.4g", volume.spacing[2]) + " mm" +
      (default_volume ? " (default: the field of view)" : o.like.empty() ? "" : " (--like '" + o.like + "')") + "; " +
      (plan.backend == FDK_BACKEND_CUDA ? "CUDA" : "CPU") + " backend, " +
      std::to_string(plan.num_slabs) + " slab" + (plan.num_slabs == 1 ? "" : "s") + " of " +
      std::to_string(plan.slab_thickness) + " planes" + (plan.short_scan ? ", short scan" : ""));
  say("half fan: " + std::string(plan.offset_detector ? "on" : "off") + " (the rays through the detector's edges pass " +
      fmt("%.4g", -plan.half_fan_inferior) + " mm and " + fmt("%.4g", plan.half_fan_superior) +
      " mm from the rotation axis" +
      (o.offset_detector == FDK_AUTO ? "" : ", forced by --offset-detector") + ")");
  {
    const double total = static_cast<double>(volume.size[0]) * volume.size[1] * volume.size[2];
    say("field of view: " + std::to_string(plan.voxels_outside_fov) + " voxels (" +
        fmt("%.3g", 100.0 * static_cast<double>(plan.voxels_outside_fov) / total) + " %) outside, " +
        (plan.outside_fov == FDK_OUTSIDE_FOV_ZERO ? "set to 0 (--outside-fov zero)"
                                                  : "backprojected as rtkfdk does (--outside-fov zero sets them to 0)"));
  }
  // What the host budget leaves the projections, and whether the scan fits
  // there (the library stores later views as float16 rather than fail, and
  // says so at the end).
  // Sizes to four figures; budgets as given (budget_text: "1 KiB", not
  // "0.0009766 MiB" or "1 MiB").
  const auto bytes_text = [](uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    return b >= 1024.0 * 1024 * 1024 ? fmt("%.4g", b / (1024.0 * 1024 * 1024)) + " GiB"
           : b >= 1024.0 * 1024      ? fmt("%.4g", b / (1024.0 * 1024)) + " MiB"
           : b >= 1024.0             ? fmt("%.4g", b / 1024.0) + " KiB"
                                     : std::to_string(bytes) + " bytes";
  };
  const bool reduce = plan.store_policy == FDK_STORE_REDUCE_PRECISION;
  say("store: " + bytes_text(plan.store_limit) + " for the projections (of a " + budget_text(plan.host_memory_budget) +
      " host budget, --host-memory); " +
      (plan.store_fit == FDK_STORE_FITS
           ? std::string("the scan fits for certain") + (reduce ? " (at worst with some views as float16)" : "")
       : plan.store_fit == FDK_STORE_LIKELY
           ? std::string("the scan fits at the compression typical of noisy projections") +
                 (reduce ? " (views beyond the budget as float16)" : "")
           : std::string("the scan is unlikely to fit, even as float16: give more --host-memory")));

  {
    std::string devices;
    fdk_device_stats stats{};
    stats.struct_size = sizeof stats;
    if (plan.backend == FDK_BACKEND_CUDA && fdk_get_device_stats(lib.ctx, &stats) == FDK_OK) {
      for (int d = 0; d < stats.num_devices && d < FDK_MAX_DEVICES; ++d) {
        devices += (d ? "," : "") + std::to_string(stats.ordinal[d]);
      }
    }
    const double volume_bytes = 4.0 * volume.size[0] * volume.size[1] * volume.size[2];
    say("plan: " +
        (plan.backend == FDK_BACKEND_CUDA
             ? "CUDA on GPU" + std::string(stats.num_devices > 1 ? "s " : " ") + devices + " (" +
                   budget_text(plan.gpu_memory_budget) + " budget each), "
             : "CPU, ") +
        std::to_string(plan.num_threads) + " threads; projections stored as " +
        (o.precision == FDK_PRECISION_FLOAT16 ? "float16" : "float32") + ", " +
        bytes_text(static_cast<uint64_t>(raw_projection_bytes)) + " as float32; volume " +
        bytes_text(static_cast<uint64_t>(volume_bytes)) + " in " + std::to_string(plan.num_slabs) +
        " slab" + (plan.num_slabs == 1 ? "" : "s") + "; host budget " + budget_text(plan.host_memory_budget));
    progress_json_plan = "{\"event\":\"plan\",\"backend\":" +
                         fdk_tools::json_string(plan.backend == FDK_BACKEND_CUDA ? "cuda" : "cpu") +
                         ",\"gpus\":[" + devices + "],\"threads\":" + std::to_string(plan.num_threads) +
                         ",\"views\":" + std::to_string(count) + ",\"detector\":[" +
                         std::to_string(detector.size[0]) + "," + std::to_string(detector.size[1]) +
                         "],\"volume\":[" + std::to_string(volume.size[0]) + "," +
                         std::to_string(volume.size[1]) + "," + std::to_string(volume.size[2]) +
                         "],\"voxel_mm\":[" + fdk_tools::json_number(volume.spacing[0]) + "," +
                         fdk_tools::json_number(volume.spacing[1]) + "," +
                         fdk_tools::json_number(volume.spacing[2]) + "],\"slabs\":" +
                         std::to_string(plan.num_slabs) + ",\"slab_planes\":" +
                         std::to_string(plan.slab_thickness) + ",\"precision\":" +
                         fdk_tools::json_string(o.precision == FDK_PRECISION_FLOAT16 ? "float16" : "float32") +
                         ",\"host_budget_bytes\":" + std::to_string(plan.host_memory_budget) +
                         ",\"gpu_budget_bytes\":" + std::to_string(plan.gpu_memory_budget) +
                         ",\"store_limit_bytes\":" + std::to_string(plan.store_limit) +
                         ",\"projection_bytes_float32\":" +
                         std::to_string(static_cast<uint64_t>(raw_projection_bytes)) + ",\"store_fit\":" +
                         fdk_tools::json_string(plan.store_fit == FDK_STORE_FITS    ? "fits"
                                                : plan.store_fit == FDK_STORE_LIKELY ? "likely"
                                                                                     : "unlikely") +
                         ",\"short_scan\":" + (plan.short_scan ? "true" : "false") +
                         ",\"half_fan\":" + (plan.offset_detector ? "true" : "false") + "}";
  }
  if (g_json_events) {  // before any work, and before a refusal below
    std::printf("%s\n", progress_json_plan.c_str());
    std::fflush(stdout);
  }
  // A scan the host budget may not hold fails at the start, with the budget
  // that would hold it, not after the views that fit: all the views are on
  // disk, so unlike a live scan there is no reason to gamble on how well
  // they compress (a scan "likely" to fit ran out at 354 of 360 views in a
  // test) unless --accept-budget-risk says so.
  if (plan.store_fit == FDK_STORE_UNLIKELY ||
      (plan.store_fit == FDK_STORE_LIKELY && !o.accept_budget_risk)) {
    const std::string fit = plan.store_fit == FDK_STORE_UNLIKELY
                                ? " for them, too little even at float16"
                                : " for them: enough only if they compress as well as typical noisy projections "
                                  "do (--accept-budget-risk to try)";
    throw Failure{kExitBudget, "the host memory budget cannot hold the projections for certain: the " +
                                   std::to_string(count) + " views take " +
                                   bytes_text(static_cast<uint64_t>(raw_projection_bytes)) +
                                   " as float32 and the budget of " + budget_text(plan.host_memory_budget) +
                                   " leaves " + bytes_text(plan.store_limit) + fit + budget_advice(config)};
  }

  // ---- output (opened now so a clash or an unwritable folder fails before the work) ---------
  ResultFolder result(o, output_names(o, volume), InputSet::of(o));
  OutputSetup output;
  prepare_output(o, volume, result.staging(), &output);
  const std::unique_ptr<ad::VolumeWriter> writer = open_writer(o, volume, output);

  fdk_tools::Progress progress(o.progress);
  // ---- --apply-estimate: pass 1 estimates, the library restarts with the corrected geometry ----
  // The estimate needs every view before the reconstruction starts (its
  // views are filtered with the geometry it was created with), so the
  // projections are read twice; the output and the budget were checked
  // above with the nominal geometry, so neither fails after pass 1.
  std::optional<fdk_geometry_estimate> estimate;
  bool estimate_applied = false;
  std::vector<fdk_view> corrected_storage;
  std::unique_ptr<GeometryOutput> geometry_output;
  std::unique_ptr<Estimator> same_pass_estimator;  // --estimate-geometry alone: fed by the push loop
  const std::vector<fdk_view> nominal_views = views_of(config.scan);
  if (o.apply_estimate) {
    {
      Estimator estimator(config, origins);
      size_t clamped_pixels = 0;  // counted (and reported) by pass 2
      int clamped_views_pass1 = 0;
      push_all_views(folder, o, &estimator, &progress, throw_if_stopped, &clamped_pixels, &clamped_views_pass1);
      estimate = estimator.estimate();
    }
    estimate_applied = will_apply(*estimate, o);
    report_estimate(progress, *estimate,
                    estimate_applied ? "applied to the reconstruction" : "not applied: confidence below 0.5",
                    estimate_applied);
    check_confidence(*estimate, o.force_estimate, "--apply-estimate");
    config = corrected_config(config, *estimate, &corrected_storage);
    fdk_destroy(lib.ctx);  // one context at a time: the nominal one held no views
    lib.ctx = nullptr;
    if (const fdk_status s = fdk_create(&config, &lib.ctx); s != FDK_OK) {
      throw setup_failure(s, fdk_last_create_error(), origins, config);
    }
    const bool half_fan_before = plan.offset_detector != 0;
    if (const fdk_status s = fdk_get_plan_info(lib.ctx, &plan); s != FDK_OK) lib.fail("fdk_get_plan_info", s);
    if ((plan.offset_detector != 0) != half_fan_before) {
      say(std::string("half fan: ") + (plan.offset_detector ? "on" : "off") +
          " with the corrected geometry (--offset-detector to choose)");
    }
  } else if (o.estimate_geometry) {
    same_pass_estimator = std::make_unique<Estimator>(config, origins);
  }
  if (estimate && !o.write_geometry.empty()) {  // complete now, under its final name once the volume is
    geometry_output = std::make_unique<GeometryOutput>(o.write_geometry, corrected_views(*estimate, nominal_views));
  }

  // ---- a watchdog: signals cancel the library ------------------------------------------
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    while (!done.load()) {
      if (g_signal.load() || fdk_tools::stdout_lost().load()) {
        fdk_cancel(lib.ctx);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  struct Joiner {
    std::atomic<bool>& done;
    std::thread& t;
    ~Joiner() {
      done = true;
      t.join();
    }
  } joiner{done, watchdog};

  // ---- read, correct, push ---------------------------------------------------------------
  std::unique_ptr<fdk_tools::LivePreview> live;  // --live-preview: goes before lib, and its file with it
  size_t clamped_total = 0;
  int clamped_views = 0;
  {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int workers = o.read_threads > 0 ? o.read_threads : static_cast<int>(std::min(4u, hw));
    OrderedReader reader(folder, workers, workers + 2);  // frames in flight: workers + 2
    if (o.live_preview) {
      live = start_live_preview(lib.ctx, o);
      if (!o.quiet) progress.message("live preview: '" + live->path() + "' every " + fmt("%g", o.live_preview_interval) + " s");
    }
    progress.stage("projections", "views", count);
    const size_t pitch = static_cast<size_t>(detector.size[0]) * sizeof(float);
    for (int i = 0; i < count; ++i) {
      throw_if_stopped();
      size_t clamped = 0;
      const float* pixels = reader.get(i, &clamped);
      if (clamped) {
        clamped_total += clamped;
        ++clamped_views;
      }
      const fdk_status s = fdk_push_projection(lib.ctx, i, pixels, pitch, nullptr);
      if (s == FDK_ERROR_INVALID_ARGUMENT) {  // the projection's values: unusable input
        throw Failure{kExitInput, folder.describe(i) + ": " + fdk_tools::status_text(s, fdk_last_error(lib.ctx))};
      }
      if (s == FDK_ERROR_BUDGET) {  // the store filled up after all (worse compression than typical)
        throw Failure{kExitBudget, "pushing " + folder.describe(i) + " failed: " +
                                       fdk_tools::status_text(s, fdk_last_error(lib.ctx)) + budget_advice(config)};
      }
      if (s != FDK_OK) {
        Failure f{kExitReconstruction, ""};
        try {
          lib.fail(("pushing " + folder.describe(i)).c_str(), s);
        } catch (Failure& e) {
          f = e;
        }
        throw f;
      }
      if (same_pass_estimator) same_pass_estimator->push(i, pixels, folder.describe(i));
      reader.release(i);
      progress.add();
    }
    progress.end_stage();
  }
  if (const fdk_status s = fdk_finish(lib.ctx); s != FDK_OK) lib.fail("fdk_finish", s);
  if (live) end_live_preview(*live, progress, o);  // complete now, before any slab
  if (same_pass_estimator) {  // --estimate-geometry with OUTPUT_DIR: reported, the volume stays nominal
    estimate = same_pass_estimator->estimate();
    same_pass_estimator.reset();
    const bool write = !o.write_geometry.empty();
    report_estimate(progress, *estimate,
                    write && will_apply(*estimate, o) ? "not applied to the volume; applied to '" + o.write_geometry + "'"
                                                      : "not applied: the volume has the nominal geometry",
                    false);
    if (write) {
      check_confidence(*estimate, o.force_estimate, "--write-geometry '" + o.write_geometry + "'");
      geometry_output = std::make_unique<GeometryOutput>(o.write_geometry, corrected_views(*estimate, nominal_views));
    }
  }
  {
    fdk_store_info store{};
    store.struct_size = sizeof store;
    if (fdk_get_store_info(lib.ctx, &store) == FDK_OK && store.views_reduced > 0) {
      progress.message("note: " + std::to_string(store.views_reduced) + " of " + std::to_string(store.views_stored) +
                       " projections were stored as float16 (the host budget could not hold them as float32): "
                       "their error is at most " + fmt("%.3g", store.rel_error_bound) + " relative + " +
                       fmt("%.3g", store.abs_error_bound_factor) + " of their row band's largest value");
    }
  }
  if (clamped_total) {
    progress.message("note: " + std::to_string(clamped_total) + " pixels in " +
                     std::to_string(clamped_views) +
                     " projections had a transmission below the clamp (" +
                     fmt("%g", o.folder.preprocess.min_transmission) + ") and were clamped");
  }

  // ---- slabs out ---------------------------------------------------------------------------
  int32_t slabs = 0;
  if (const fdk_status s = fdk_slab_count(lib.ctx, &slabs); s != FDK_OK) lib.fail("fdk_slab_count", s);
  fdk_tools::PreviewCollector preview(volume, preview_voxel(o, volume));
  std::vector<float> buffer;
  // The planes reconstructed so far: the library's backprojection count
  // (views x planes), which moves while a slab is computed, so a one-slab
  // volume does not sit at 0 % until its end; at least the planes written.
  std::atomic<long long> planes_written{0};
  const long long planes_total = volume.size[1];
  progress.stage("volume", "planes", planes_total, [&]() -> long long {
    fdk_progress p{};
    p.struct_size = sizeof p;
    long long planes = planes_written.load();
    if (fdk_get_progress(lib.ctx, &p) == FDK_OK && p.backprojection_total > 0) {
      planes = std::max(planes, static_cast<long long>(static_cast<double>(p.backprojection_done) /
                                                       static_cast<double>(p.backprojection_total) *
                                                       static_cast<double>(planes_total)));
    }
    return std::min(planes, planes_total);
  });
  struct EndStage {  // before planes_written goes, whatever leaves this scope
    fdk_tools::Progress& progress;
    ~EndStage() { progress.end_stage(); }
  } end_volume_stage{progress};
  for (int32_t k = 0; k < slabs; ++k) {
    fdk_slab_info info{};
    info.struct_size = sizeof info;
    if (const fdk_status s = fdk_get_slab_info(lib.ctx, k, &info); s != FDK_OK) {
      lib.fail("fdk_get_slab_info", s);
    }
    buffer.resize(static_cast<size_t>(info.byte_size / sizeof(float)));
    if (const fdk_status s = fdk_read_slab(lib.ctx, k, buffer.data(), buffer.size() * sizeof(float));
        s != FDK_OK) {
      lib.fail("fdk_read_slab", s);
    }
    writer->write_planes(info.y_begin, info.y_end, buffer.data());
    if (o.preview) preview.add_planes(info.y_begin, info.y_end, buffer.data());
    planes_written.store(info.y_end);
  }
  progress.end_stage();
  throw_if_stopped();
  writer->commit();  // inside the staging folder
  std::string preview_path;
  if (o.preview) {
    CaptionFacts facts;
    facts.cuda = plan.backend == FDK_BACKEND_CUDA;
    facts.short_scan = plan.short_scan;
    facts.half_fan = plan.offset_detector;
    facts.have_xml = have_xml;
    facts.views = count;
    facts.first_view = first_view;
    facts.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    std::vector<std::string> caption = preview_caption(o, config, facts);
    if (estimate) caption.push_back(estimate_caption(*estimate, estimate_applied));
    const fdk_tools::PreviewWritten written =
        preview.write(ad::join_path(result.staging(), "preview"), o.have_window ? o.window_lo : 0,
                      o.have_window ? o.window_hi : 0, caption, output.preview_fault);
    preview_path = ad::join_path(o.output, fdk_tools::preview_file_name());
    const std::array<double, 3> at = preview.crossing_mm();
    if (!o.quiet) progress.message("preview: '" + preview_path + "', slices crossing at (" + fmt("%.4g", at[0]) +
                     ", " + fmt("%.4g", at[1]) + ", " + fmt("%.4g", at[2]) +
                     ") mm, window [" + fmt("%.4g", written.lo) + ", " + fmt("%.4g", written.hi) + "] per mm" +
                     (written.percentiles ? " (the slices' 0.5 and 99.5 percentiles)" : ""));
  }
  progress.stop();
  throw_if_stopped();
  // Every file is complete: now, and only now, the final names.
  const std::vector<std::string> removed = result.publish();
  if (geometry_output) {  // after the volume: a corrected geometry names a result that exists
    geometry_output->publish();
    if (!o.quiet) progress.message("corrected geometry: '" + geometry_output->path() + "'");
  }
  if (!removed.empty() && (!o.quiet || progress.json())) {
    progress.message(removed_message(o.output, removed));
  }
  const auto outputs = final_outputs(o, volume);
  const double seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
  {
    std::string files;
    for (const std::string& f : outputs) files += (files.empty() ? "" : ",") + fdk_tools::json_string(f);
    if (geometry_output) files += "," + fdk_tools::json_string(geometry_output->path());
    progress.event("{\"event\":\"done\",\"seconds\":" + fdk_tools::json_number(seconds) + ",\"outputs\":[" +
                   files + "],\"preview\":" +
                   (preview_path.empty() ? std::string("null") : fdk_tools::json_string(preview_path)) + "}");
  }
  say("done in " + fmt("%.1f", seconds) + " s: " +
      (outputs.size() > 1 ? "'" + outputs.front() + "' .. '" + outputs.back() + "'"
                          : "'" + outputs.front() + "'") +
      (preview_path.empty() ? "" : ", preview '" + preview_path + "'"));
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGHUP, on_signal);  // the terminal went away: interrupted, temporaries removed
  // A reader of stdout that goes away is a failed write (stdout_lost), not
  // a death by SIGPIPE that leaves temporaries and no error event.
  std::signal(SIGPIPE, SIG_IGN);
  const Launch launch = detect_launch();
  int code = kExitOk;
  std::string message;
  try {
    // The ranks first: a bad command line on one rank alone then reaches
    // the first meeting, and rank 0 names it, instead of that rank leaving
    // in silence and the launcher ending the others.
    g_ranks = join_ranks(launch);
    Options o = parse_options(argc, argv);
    if (g_ranks && o.estimates()) {
      // The estimate needs every view in one estimator, and the ranks each
      // read a share: not supported yet (refused before the first meeting,
      // so every rank leaves with 2).
      usage_error("--estimate-geometry and --apply-estimate are not supported yet with several ranks "
                  "(the estimate needs every view in one process): run fdk-convert as one process");
    }
    if (g_ranks && g_ranks->rank() > 0) {  // rank 0 speaks for the job
      o.quiet = true;
      o.progress = fdk_tools::ProgressStyle::kNone;
    }
    g_json_events = o.progress == fdk_tools::ProgressStyle::kJson;
    if (std::getenv("FDK_CONVERT_TEST_INTERNAL_ERROR")) {  // test hook: exit code 1
      throw std::logic_error("FDK_CONVERT_TEST_INTERNAL_ERROR is set");
    }
    code = run(o);
  } catch (...) {
    code = exit_code_of_current_exception(&message);
    message = with_final_names(message);
    if (g_ranks) {
      code = g_ranks->fail(code, &message);
    } else if (launch.rank > 0) {
      message.clear();  // a bad command line, said once by rank 0
    }
    if (!message.empty()) report_failure(code, message, code == kExitUsage ? " (see --help)" : "");
  }
  g_ranks.reset();  // MPI_Finalize
  return code;
}
