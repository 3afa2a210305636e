// fdk-convert — a folder of TIFF projections in, a reconstructed volume out
// (a stack of TIFF slices, one BigTIFF, or a MetaImage), slab by slab.
//
// Exit codes (also in --help and docs/ADAPTERS.md):
//   0 success; 1 unexpected internal error; 2 bad command line or option
//   value; 3 unusable input (projections, dark/flat, bad-pixel map, geometry
//   file); 4 output cannot be written (folder, permissions, full disk);
//   5 the reconstruction failed (library error: budget, backend, device);
//   6 interrupted (SIGINT/SIGTERM). On any failure nothing under the final
//   output names is left behind.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>
#include <fdk/adapters/geometry_io.hpp>
#include <fdk/adapters/projection_folder.hpp>
#include <fdk/adapters/tiff_io.hpp>
#include <fdk/adapters/volume_writer.hpp>
#include <fdk/fdk.h>

#include <algorithm>
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
#include <string>
#include <thread>
#include <vector>

#include "options.hpp"
#include "preview.hpp"
#include "progress.hpp"

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
extern "C" void on_signal(int sig) { g_signal.store(sig); }

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() < n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != suffix[i]) return false;
  }
  return true;
}

std::string describe_status(fdk_status s, const char* message) {
  const std::string name = fdk_status_string(s);
  const std::string text = message ? message : "";
  if (text.empty()) return name;
  if (text.compare(0, name.size(), name) == 0) return text;
  return name + ": " + text;
}

// Owns the library handle.
struct Context {
  fdk_context* ctx = nullptr;
  ~Context() { fdk_destroy(ctx); }
  [[noreturn]] void fail(const char* what, fdk_status s) const {
    if (s == FDK_ERROR_CANCELLED && g_signal.load()) {
      throw Failure{kExitInterrupted, std::string("interrupted by signal ") +
                                          std::to_string(g_signal.load())};
    }
    throw Failure{kExitReconstruction,
                  std::string(what) + " failed: " + describe_status(s, fdk_last_error(ctx))};
  }
};

// Decodes projections on worker threads, handing them out in index order
// through a ring of `depth` slots (bounded memory).
class OrderedReader {
 public:
  OrderedReader(const ad::ProjectionFolder& folder, int workers, int depth)
      : folder_(folder), depth_(depth), slots_(static_cast<size_t>(depth)) {
    const size_t pixels = static_cast<size_t>(folder.width()) * folder.height();
    for (Slot& s : slots_) s.data.resize(pixels);
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }
  ~OrderedReader() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // Blocks until projection i is decoded; rethrows its error.
  const float* get(int i, size_t* clamped) {
    Slot& s = slots_[static_cast<size_t>(i % depth_)];
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return (s.ready && s.index == i) || stop_; });
    if (s.error) std::rethrow_exception(s.error);
    *clamped = s.clamped;
    return s.data.data();
  }
  void release(int i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Slot& s = slots_[static_cast<size_t>(i % depth_)];
      s.ready = false;
      s.index = -1;
      released_ = i + 1;
    }
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<float> data;
    int index = -1;
    bool ready = false;
    size_t clamped = 0;
    std::exception_ptr error;
  };

  void work() {
    ad::ProjectionFolder::Workspace ws;
    for (;;) {
      int i;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (stop_ || next_ >= folder_.count()) return;
        i = next_++;
        cv_.wait(lock, [&] { return stop_ || i < released_ + depth_; });
        if (stop_) return;
      }
      Slot& s = slots_[static_cast<size_t>(i % depth_)];
      std::exception_ptr error;
      size_t clamped = 0;
      try {
        clamped = folder_.read(i, s.data.data(), ws);
      } catch (...) {
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        s.index = i;
        s.clamped = clamped;
        s.error = error;
        s.ready = true;
      }
      cv_.notify_all();
    }
  }

  const ad::ProjectionFolder& folder_;
  const int depth_;
  std::vector<Slot> slots_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int next_ = 0, released_ = 0;
  bool stop_ = false;
};

std::string fmt(const char* format, double a) {
  char b[64];
  std::snprintf(b, sizeof b, format, a);
  return b;
}

int run(const Options& o) {
  using Clock = std::chrono::steady_clock;
  const auto t_start = Clock::now();
  auto say = [&](const std::string& text) {
    if (!o.quiet) std::fprintf(stderr, "%s\n", text.c_str());
  };

  // ---- geometry files ------------------------------------------------------------
  ad::ScanDescription desc;
  std::vector<fdk_view> xml_views;
  bool have_xml = false;
  for (const std::string& g : o.geometry_files) {
    if (ends_with(g, ".xml")) {
      if (have_xml) usage_error("two XML geometry files given");
      xml_views = ad::read_rtk_geometry(g);
      have_xml = true;
    } else if (ends_with(g, ".ini") || ends_with(g, ".cfg") || ends_with(g, ".txt")) {
      desc.merge(ad::read_scan_ini(g));
    } else {
      usage_error("--geometry '" + g + "': expected an RTK .xml file or an .ini description");
    }
  }
  desc.merge(o.flags);
  if (have_xml && (desc.sid || desc.sdd || desc.start_angle || desc.arc || desc.direction ||
                   desc.projection_offset || desc.source_offset || desc.in_plane_angle ||
                   desc.out_of_plane_angle)) {
    usage_error("the RTK geometry file gives every view's geometry: do not also give sid, sdd, "
                "angles or offsets (flags or INI)");
  }
  // ---- projections ---------------------------------------------------------------
  const ad::ProjectionFolder folder(o.projections, o.folder);
  const int count = folder.count();
  {
    std::string line = "fdk-convert: " + std::to_string(count) + " projections of " +
                       std::to_string(folder.raw_width()) + " x " +
                       std::to_string(folder.raw_height()) + " " +
                       ad::sample_type_name(folder.sample_type()) + " in '" + o.projections +
                       "' (" + (folder.raw() ? "raw intensities" : "line integrals");
    if (folder.dark_frames()) line += ", dark: " + std::to_string(folder.dark_frames()) + " frames";
    if (folder.flat_frames()) line += ", flat: " + std::to_string(folder.flat_frames()) + " frames";
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
  if (!desc.pixel_size) {
    const auto tagged = folder.raw_pixel_size_mm();
    if (!(tagged[0] > 0 && tagged[1] > 0)) {
      throw Failure{kExitUsage,
                    "the detector pixel size is not given: no --pixel-size, no detector.pixel_size in an INI "
                    "description, and '" + folder.describe(0) +
                        "' has no resolution tags (ResolutionUnit centimetre or inch with XResolution and "
                        "YResolution)"};
    }
    desc.pixel_size = tagged;
    say("pixel size: " + fmt("%.6g", tagged[0]) + " x " + fmt("%.6g", tagged[1]) +
        " mm, from the TIFF resolution tags");
  }
  fdk_detector raw_detector = ad::centred_detector(folder.raw_width(), folder.raw_height(),
                                                   (*desc.pixel_size)[0], (*desc.pixel_size)[1]);
  if (desc.detector_origin) {
    raw_detector.origin[0] = (*desc.detector_origin)[0];
    raw_detector.origin[1] = (*desc.detector_origin)[1];
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
  Context lib;
  if (const fdk_status s = fdk_create(&config, &lib.ctx); s != FDK_OK) {
    // Every value in the configuration came from the options or the input
    // and was checked above; a value the library still refuses is reported
    // as a bad option value (2), never as a failed reconstruction (5).
    const bool refused = s == FDK_ERROR_INVALID_ARGUMENT || s == FDK_ERROR_OUT_OF_RANGE;
    throw Failure{refused ? kExitUsage : kExitReconstruction,
                  "cannot set up the reconstruction: " + describe_status(s, fdk_last_create_error())};
  }
  fdk_plan_info plan{};
  plan.struct_size = sizeof plan;
  if (const fdk_status s = fdk_get_plan_info(lib.ctx, &plan); s != FDK_OK) lib.fail("fdk_get_plan_info", s);
  say("detector: " + std::to_string(detector.size[0]) + " x " + std::to_string(detector.size[1]) +
      " pixels of " + fmt("%.4g", detector.spacing[0]) + " x " + fmt("%.4g", detector.spacing[1]) +
      " mm; " + (have_xml ? "views from '" + o.geometry_files[0] + "'" : "uniform " +
      fmt("%.4g", scan.arc_deg) + " deg scan from " + fmt("%.4g", scan.first_angle_deg) + " deg") +
      ", SID " + fmt("%.6g", first_view.sid) + " mm, SDD " + fmt("%.6g", first_view.sdd) + " mm");
  say("volume: " + std::to_string(volume.size[0]) + " x " + std::to_string(volume.size[1]) +
      " x " + std::to_string(volume.size[2]) + " voxels of " + fmt("%.4g", volume.spacing[0]) +
      " x " + fmt("%.4g", volume.spacing[1]) + " x " + fmt("%.4g", volume.spacing[2]) + " mm" +
      (default_volume ? " (default: the field of view)" : "") + "; " +
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
  const auto bytes_text = [](uint64_t bytes) {
    const double b = static_cast<double>(bytes);
    return b >= 1024.0 * 1024 * 1024 ? fmt("%.4g", b / (1024.0 * 1024 * 1024)) + " GiB"
                                     : fmt("%.4g", b / (1024.0 * 1024)) + " MiB";
  };
  const bool reduce = plan.store_policy == FDK_STORE_REDUCE_PRECISION;
  say("store: " + bytes_text(plan.store_limit) + " for the projections (of a " + bytes_text(plan.host_memory_budget) +
      " host budget, --host-memory); " +
      (plan.store_fit == FDK_STORE_FITS
           ? std::string("the scan fits for certain") + (reduce ? " (at worst with some views as float16)" : "")
       : plan.store_fit == FDK_STORE_LIKELY
           ? std::string("the scan fits at the compression typical of noisy projections") +
                 (reduce ? " (views beyond the budget as float16)" : "")
           : std::string("the scan is unlikely to fit, even as float16: give more --host-memory")));

  // ---- output (opened now so an unwritable folder fails before the work) ------------------
  ad::make_directories(o.output);
  ad::VolumeWriterOptions wo;
  wo.type = o.type;
  wo.window_lo = o.window_lo;
  wo.window_hi = o.window_hi;
  wo.description = "fdk-convert from '" + o.projections + "'";
  ad::WriteFaultInjection fault;
  if (const char* env = std::getenv("FDK_CONVERT_FAIL_AFTER_BYTES")) {  // test hook
    fault.fail_after_bytes = std::strtoull(env, nullptr, 10);
    wo.fault = &fault;
  }
  const std::string first_output =
      o.format == "tiff" ? ad::join_path(o.output, ad::slice_file_name(o.prefix, 0, volume.size[1]))
      : o.format == "bigtiff" ? ad::join_path(o.output, "volume.tif")
                              : ad::join_path(o.output, "volume.mha");
  if (!o.force && ad::is_regular_file(first_output)) {
    usage_error("'" + first_output + "' exists; use --force to replace the output");
  }
  {  // Can we create files there at all?
    ad::OutputFile probe(ad::join_path(o.output, ".fdk-convert-probe"));
    probe.discard();
  }
  std::unique_ptr<ad::VolumeWriter> writer;
  if (o.format == "tiff") {
    writer = ad::make_tiff_slice_writer(o.output, o.prefix, volume, wo, o.compression);
  } else if (o.format == "bigtiff") {
    writer = ad::make_bigtiff_writer(first_output, volume, wo, o.compression);
  } else {
    writer = ad::make_metaimage_writer(first_output, volume, wo);
  }

  // ---- a watchdog: signals cancel the library ------------------------------------------
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    while (!done.load()) {
      if (g_signal.load()) {
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

  fdk_tools::Progress progress(o.progress);
  // ---- read, correct, push ---------------------------------------------------------------
  size_t clamped_total = 0;
  int clamped_views = 0;
  {
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const int workers = o.read_threads > 0 ? o.read_threads : static_cast<int>(std::min(4u, hw));
    OrderedReader reader(folder, workers, workers + 2);  // frames in flight: workers + 2
    progress.stage("projections", "views", count);
    const size_t pitch = static_cast<size_t>(detector.size[0]) * sizeof(float);
    for (int i = 0; i < count; ++i) {
      if (g_signal.load()) throw Failure{kExitInterrupted, "interrupted"};
      size_t clamped = 0;
      const float* pixels = reader.get(i, &clamped);
      if (clamped) {
        clamped_total += clamped;
        ++clamped_views;
      }
      const fdk_status s = fdk_push_projection(lib.ctx, i, pixels, pitch, nullptr);
      if (s == FDK_ERROR_INVALID_ARGUMENT) {  // the projection's values: unusable input
        throw Failure{kExitInput, folder.describe(i) + ": " + describe_status(s, fdk_last_error(lib.ctx))};
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
      reader.release(i);
      progress.add();
    }
    progress.end_stage();
  }
  if (const fdk_status s = fdk_finish(lib.ctx); s != FDK_OK) lib.fail("fdk_finish", s);
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
  fdk_tools::PreviewCollector preview(volume);
  std::vector<float> buffer;
  progress.stage("volume", "planes", volume.size[1]);
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
    progress.set(info.y_end);
  }
  progress.end_stage();
  if (g_signal.load()) throw Failure{kExitInterrupted, "interrupted"};
  writer->commit();
  std::string preview_path;
  if (o.preview) {
    preview_path = preview.write(ad::join_path(o.output, "preview"), o.have_window ? o.window_lo : 0,
                                 o.have_window ? o.window_hi : 0);
  }
  progress.stop();
  const auto outputs = writer->outputs();
  const double seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
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
  try {
    const Options o = parse_options(argc, argv);
    return run(o);
  } catch (const Failure& f) {
    std::fprintf(stderr, "fdk-convert: %s%s\n", f.message.c_str(),
                 f.code == kExitUsage ? " (see --help)" : "");
    return f.code;
  } catch (const ad::Error& e) {
    int code = kExitInternal;
    switch (e.kind()) {
      case ad::ErrorKind::kInvalidArgument: code = kExitUsage; break;
      case ad::ErrorKind::kInput: code = kExitInput; break;
      case ad::ErrorKind::kUnsupported: code = kExitInput; break;
      case ad::ErrorKind::kOutput: code = kExitOutput; break;
    }
    std::fprintf(stderr, "fdk-convert: %s\n", e.what());
    return code;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "fdk-convert: out of memory\n");
    return kExitReconstruction;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fdk-convert: internal error: %s\n", e.what());
    return kExitInternal;
  }
}
