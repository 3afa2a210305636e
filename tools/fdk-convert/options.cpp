// fdk-convert's command line: the help text, the value parsers and
// parse_options.
#include "options.hpp"

#include <fdk/adapters/error.hpp>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace ad = fdk::adapters;

namespace fdk_convert {

[[noreturn]] void usage_error(const std::string& message) { throw Failure{kExitUsage, message}; }

int exit_code_of_current_exception(std::string* message) {
  try {
    throw;
  } catch (const Failure& f) {
    *message = f.message;
    return f.code;
  } catch (const ad::Error& e) {
    *message = e.what();
    switch (e.kind()) {
      case ad::ErrorKind::kInvalidArgument: return kExitUsage;
      case ad::ErrorKind::kInput: return kExitInput;
      case ad::ErrorKind::kUnsupported: return kExitInput;
      case ad::ErrorKind::kOutput: return kExitOutput;
    }
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    *message = "out of memory";
    return kExitReconstruction;
  } catch (const std::exception& e) {
    *message = std::string("internal error: ") + e.what();
    return kExitInternal;
  } catch (...) {
    *message = "internal error: an unknown exception";
    return kExitInternal;
  }
}

namespace {

const char* kHelp = R"(usage: fdk-convert PROJECTIONS OUTPUT_DIR [options]
       fdk-convert PROJECTIONS --estimate-geometry [--write-geometry FILE] [options]

Reconstructs a cone-beam CT volume (FDK) from projections (a folder of TIFF
files, a multi-page TIFF, a MetaImage .mha/.mhd or NRRD .nrrd/.nhdr stack, a
DXchange HDF5 .h5 file (/exchange/data, with its data_dark and data_white), or
a raw file described by --raw) and writes it slab by slab (never holding the
whole volume) as TIFF slices (one file per axial y plane, x across and z
down), one multi-page TIFF, a MetaImage or a NRRD, plus OUTPUT_DIR/preview.png
of three orthogonal slices.

Examples:
  # raw uint16 frames with dark and flat folders, geometry from flags
  fdk-convert scan/proj out --dark scan/dark --flat scan/flat \
      --sid 500 --sdd 800 --pixel-size 0.2 --arc 360
  # RTK geometry file, 2x2 binning, 16-bit slices windowed to [0, 0.05]
  fdk-convert proj out --geometry geometry.xml --pixel-size 0.1 --bin 2 \
      --output-type uint16 --window 0,0.05
  # the centre of rotation and detector tilt estimated from the projections
  # (printed; no volume), then applied to the reconstruction
  fdk-convert proj --geometry geometry.xml --estimate-geometry
  fdk-convert proj out --geometry geometry.xml --apply-estimate
  # INI description, two GPUs, 8 GiB host budget, one MetaImage file
  fdk-convert proj out --geometry scan.ini --backend cuda --gpus 0,1 \
      --host-memory 8G --format mha

Geometry (RTK conventions; lengths in mm, angles in degrees):
  --geometry FILE        RTK XML geometry (one view per projection) or an INI
                         scan description (docs/ADAPTERS.md); may be given
                         twice: an XML for the views plus an INI for the
                         detector and volume. Flags below override the INI.
  --sid MM --sdd MM      source-to-isocentre and source-to-detector distances
  --pixel-size U[,V]     pixel pitch of the raw frames (default: the TIFF
                         resolution tags of the first projection, or the
                         stack's ElementSpacing / spacings)
  --views N              number of views (default: the number of images)
  --start-angle DEG      gantry angle of the first view (default 0)
  --arc DEG              angle covered, step = arc/views (default 360)
  --direction ccw|cw     increasing or decreasing gantry angle (default ccw)
  --projection-offset X,Y  --source-offset X,Y
  --in-plane-angle DEG   --out-of-plane-angle DEG
  --detector-origin U,V  centre of raw pixel (0,0) (default: the stack's
                         Offset / space origin as rtkfdk reads it, else centred)
Volume (default: voxel = pixel / magnification, covering the field of view):
  --volume-size N|NX,NY,NZ --voxel-size S|SX,SY,SZ --volume-origin X,Y,Z
  --dimension, --spacing, --origin  the same (rtkfdk's names)
  --like VOLUME          size, spacing and origin of a .mha/.mhd/.nrrd/.nhdr
                         volume (explicit flags override it per field)
Projections:
  --pattern GLOB         files to read (default "*.tif;*.tiff"), natural order
  --raw W,H,N            PROJECTIONS is a raw file of N frames of W x H
  --raw-type T           uint8|int8|uint16|int16|uint32|int32|float32|float64
  --raw-offset BYTES     header bytes to skip (default 0)
  --raw-endian little|big  (default little)
  --dark PATH --flat PATH  file, folder or .mha/.nrrd stack of frames, averaged
  --i0 VALUE             open-beam intensity when there is no flat
  --dark-level VALUE     constant dark when there is no dark frame
  --input auto|raw|line-integral  (auto: integer samples or a dark/flat/i0
                         given mean raw intensities)
  --min-transmission T   clamp of (I-D)/(F-D) before -log (default 1e-5)
  --bad-pixels PATH      TIFF/.mha/.nrrd mask (nonzero = bad) or text "x y" lines
  --crop X,Y,W,H         in raw pixels   --bin N|U,V   --flip-u  --flip-v
  --read-threads N       decoding threads (default: up to 4)
Reconstruction:
  --filter NAME          ram-lak (default), shepp-logan, cosine, hamming, hann
  --cutoff F             fraction of Nyquist (default 1)
  --hann F               rtkfdk's --hann: --filter hann cut as rtkfdk rounds F
                         (0: ram-lak)
  --hann-y F             rtkfdk's --hannY: Hann window along v, cut at F of
                         Nyquist (default 0 = off)
  --short-scan auto|on|off  (auto: when the views leave a gap of more than
                         twice their median step)
  --offset-detector auto|on|off  half-fan weights about the ray through the
                         rotation axis (auto: rtkfdk's rule, when the rays
                         through the detector's edges pass at distances from
                         the axis that differ by 10 % of their mean or more)
  --outside-fov backproject|zero  voxels the views do not all see: the partial
                         sum, as RTK's rtkfdk (default), or 0
  --padding F            truncation padding, fraction of the width (default 0)
  --backend auto|cpu|cuda  --gpus all|LIST (e.g. 0,1)
  --host-memory SIZE     --gpu-memory SIZE (bytes, or with K/M/G/T suffix)
  --accept-budget-risk   run when the host budget holds the projections only
                         at the compression typical of noisy projections
                         (refused by default, exit 7, before any work)
  --precision float32|float16   --threads N   --slab-thickness PLANES
Geometry estimation (from the projections themselves; docs/ADAPTERS.md):
  --estimate-geometry    estimate the detector's offset along u (the centre of
                         rotation) and its in-plane tilt from the line
                         integrals the reconstruction gets, and print them on
                         stdout (an "estimate" event with --progress json).
                         Without OUTPUT_DIR: only that, no volume; with it:
                         also the nominal reconstruction, the estimate in its
                         preview caption, not applied
  --apply-estimate       estimate first (a pass over the projections), then
                         reconstruct into OUTPUT_DIR with every view corrected
                         (projection offset x + offset, in-plane angle + tilt)
  --write-geometry FILE  the corrected views as an RTK XML geometry file
                         (with --estimate-geometry or --apply-estimate; an
                         existing FILE only with --force; never an input)
  --force-estimate       apply (--apply-estimate, --write-geometry) an
                         estimate whose confidence is below 0.5 (refused by
                         default: exit 5, naming the confidence and basis)
Output:
  --format tiff|stack|bigtiff|mha|mhd|nrrd   where the volume goes:
                         tiff (default): OUTPUT_DIR/slice_NNNN.tif, one per y
                           plane; stack: volume.tif, one file that ImageJ
                           opens as a stack (classic TIFF, uncompressed;
                           BigTIFF from 4 GiB); bigtiff: volume.tif, always
                           BigTIFF; mha: volume.mha; mhd: volume.mhd +
                           volume.raw; nrrd: volume.nrrd.
                         TIFF outputs carry ImageJ metadata: Fiji shows the
                         voxel size in mm, the slice spacing, the origin and
                         the --window as display range. MetaImage and NRRD
                         are in x, y, z order with identity direction, as
                         rtkfdk writes (ITK, SimpleITK, 3D Slicer, ParaView)
  --output-type float32|uint16  --window LO,HI (the uint16 range, the
                         display range in the TIFF metadata, the preview)
  --prefix NAME          slice file prefix (default "slice")
  --compression none|lzw|deflate   (formats tiff and bigtiff)
  --preview-at X,Y,Z     where preview.png's three slices cross, in mm
                         (default: the volume's centre)
  --live-preview         while the projections are read, rewrite
                         OUTPUT_DIR/live-preview.png from the library's
                         live preview (a coarse reconstruction of the views
                         so far, at most 128 voxels a side); removed when the
                         run ends (preview.png is the result's)
  --live-preview-interval SECONDS   between its frames (default 2)
  --no-preview  --force (replace the earlier result in OUTPUT_DIR, and an
                         existing --write-geometry FILE)
  --quiet                nothing on stderr but the error, if any
  --progress auto|bar|lines|none|json  (auto: a bar on a terminal, else a
                         line every 10 %; json: one JSON object per line on
                         stdout: plan, progress, stage_done, message,
                         estimate, done, error events, with --quiet too)
  --version  --help

Exit codes:
  0  success
  1  unexpected internal error
  2  bad command line or option value (also: an earlier result in
     OUTPUT_DIR without --force; an output that would replace or join an
     input, --force or not; geometry not given: no --sid/--sdd/--pixel-size
     where needed; a flag's value the library refuses, naming the flag)
  3  unusable input: projections, dark/flat, bad-pixel map, a geometry file
     or --like header (missing, unreadable, malformed, contradicting the
     projections, or a value the library refuses: named by file and key
     or line)
  4  output cannot be written (folder, permissions, full disk), or stdout
     closed by its reader (e.g. --progress json | head -1)
  5  the reconstruction failed (library error: backend unavailable, device,
     out of memory), or a geometry estimate to apply has a confidence below
     0.5 (--force-estimate applies it anyway)
  6  interrupted (SIGINT, SIGTERM, SIGHUP)
  7  the memory budgets cannot hold this reconstruction: refused before any
     work, with the --host-memory that would fit

Everything is written into a staging folder inside OUTPUT_DIR and moved to
its final name only when the whole run has succeeded: a failed run leaves
nothing that looks complete (with --force, the earlier result stays whole).
--force replaces an earlier result: its files that this run does not write
are removed, and named. No output ever replaces or joins an input.

Several ranks (a build with MPI): mpirun -n 4 fdk-convert ... (or srun) shares
the work; each rank reads every 4th view, rank 0 reports, every rank exits
with the same code. With the same --slab-thickness the files are those of one
process, byte for byte: see docs/ADAPTERS.md, section Several ranks.
)";

std::vector<double> parse_list(const std::string& flag, const std::string& text, size_t lo,
                               size_t hi) {
  std::vector<double> out;
  std::string t = text;
  for (char& c : t) {
    if (c == ',') c = ' ';
  }
  size_t pos = 0;
  while (pos < t.size()) {
    while (pos < t.size() && t[pos] == ' ') ++pos;
    if (pos >= t.size()) break;
    const char* start = t.c_str() + pos;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(start, &end);
    if (end == start || errno || !std::isfinite(v) || (*end != ' ' && *end != '\0')) {
      usage_error("bad value for " + flag + ": '" + text + "'");
    }
    out.push_back(v);
    pos = static_cast<size_t>(end - t.c_str());
  }
  if (out.size() < lo || out.size() > hi) {
    usage_error("bad value for " + flag + ": '" + text + "' (expected " +
                (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                " numbers)");
  }
  return out;
}

double parse_number(const std::string& flag, const std::string& text) {
  return parse_list(flag, text, 1, 1)[0];
}

int parse_int(const std::string& flag, const std::string& text, int lo, int hi) {
  const double v = parse_number(flag, text);
  if (v != std::floor(v) || v < lo || v > hi) {
    usage_error("bad value for " + flag + ": '" + text + "' (an integer in [" + std::to_string(lo) +
                ", " + std::to_string(hi) + "])");
  }
  return static_cast<int>(v);
}

uint64_t parse_size(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  std::string suffix = end ? end : "";
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!suffix.empty() && suffix.back() == 'B') suffix.pop_back();
  if (suffix.size() == 2 && suffix[1] == 'I') suffix.pop_back();
  double scale = 1;
  if (suffix == "K") scale = 1024.0;
  else if (suffix == "M") scale = 1024.0 * 1024;
  else if (suffix == "G") scale = 1024.0 * 1024 * 1024;
  else if (suffix == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!suffix.empty()) usage_error("bad size for " + flag + ": '" + text + "'");
  if (end == text.c_str() || errno || !(v > 0) || v * scale > 1.8e19) {
    usage_error("bad size for " + flag + ": '" + text + "'");
  }
  return static_cast<uint64_t>(v * scale);
}

int parse_switch(const std::string& flag, const std::string& v) {
  if (v == "auto") return FDK_AUTO;
  if (v == "on") return FDK_ON;
  if (v == "off") return FDK_OFF;
  usage_error("bad value for " + flag + ": '" + v + "' (auto, on or off)");
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage_error("missing value for " + arg);
      return argv[++i];
    };
    // Geometry flags map onto the INI keys.
    static const struct {
      const char* flag;
      const char* key;
    } kGeometryFlags[] = {
        {"--sid", "scan.sid"},
        {"--sdd", "scan.sdd"},
        {"--views", "scan.views"},
        {"--start-angle", "scan.start_angle"},
        {"--arc", "scan.arc"},
        {"--direction", "scan.direction"},
        {"--projection-offset", "scan.projection_offset"},
        {"--source-offset", "scan.source_offset"},
        {"--in-plane-angle", "scan.in_plane_angle"},
        {"--out-of-plane-angle", "scan.out_of_plane_angle"},
        {"--pixel-size", "detector.pixel_size"},
        {"--detector-origin", "detector.origin"},
        {"--volume-size", "volume.size"},
        {"--voxel-size", "volume.spacing"},
        {"--volume-origin", "volume.origin"},
        {"--dimension", "volume.size"},  // rtkfdk's names
        {"--spacing", "volume.spacing"},
        {"--origin", "volume.origin"},
    };
    bool geometry_flag = false;
    for (const auto& g : kGeometryFlags) {
      if (arg == g.flag) {
        std::string value = next();
        // One size is a cube, as rtkfdk's --dimension.
        if (std::string(g.key) == "volume.size" && parse_list(arg, value, 1, 3).size() == 1) {
          value = value + "," + value + "," + value;
        }
        try {
          o.flags.set(g.key, value, g.flag);
        } catch (const ad::Error& e) {
          usage_error(e.what());
        }
        geometry_flag = true;
      }
    }
    if (geometry_flag) continue;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kHelp, stdout);
      std::exit(kExitOk);
    } else if (arg == "--version") {
      std::printf("fdk-convert (fdk %s)\n", fdk_version_string());
      std::exit(kExitOk);
    } else if (arg == "--geometry") {
      o.geometry_files.push_back(next());
      if (o.geometry_files.size() > 2) usage_error("--geometry given more than twice");
    } else if (arg == "--raw") {
      const auto v = parse_list(arg, next(), 3, 3);
      for (double x : v) {
        if (x < 1 || x != std::floor(x) || x > 2147483647.0) usage_error("bad value for --raw (W,H,N: integers >= 1)");
      }
      o.raw.given = true;
      o.raw.width = static_cast<int64_t>(v[0]);
      o.raw.height = static_cast<int64_t>(v[1]);
      o.raw.frames = static_cast<int64_t>(v[2]);
    } else if (arg == "--raw-type") {
      const std::string v = next();
      if (!ad::parse_sample_type(v, &o.raw.type)) usage_error("bad value for --raw-type: '" + v + "'");
      o.raw.type_given = true;
    } else if (arg == "--raw-offset") {
      const double v = parse_number(arg, next());
      if (v < 0 || v != std::floor(v) || v > 9e15) usage_error("bad value for --raw-offset");
      o.raw.offset = static_cast<uint64_t>(v);
    } else if (arg == "--raw-endian") {
      const std::string v = next();
      if (v == "little") o.raw.big_endian = false;
      else if (v == "big") o.raw.big_endian = true;
      else usage_error("bad value for --raw-endian: '" + v + "' (little or big)");
    } else if (arg == "--like") {
      o.like = next();
    } else if (arg == "--pattern") {
      o.folder.pattern = next();
    } else if (arg == "--dark") {
      o.folder.dark = next();
    } else if (arg == "--flat") {
      o.folder.flat = next();
    } else if (arg == "--i0") {
      o.folder.preprocess.i0 = parse_number(arg, next());
      if (!(o.folder.preprocess.i0 > 0)) usage_error("--i0 must be > 0");
    } else if (arg == "--dark-level") {
      o.folder.preprocess.dark_level = parse_number(arg, next());
    } else if (arg == "--input") {
      const std::string v = next();
      if (v == "auto") o.folder.kind = ad::ProjectionFolderOptions::Kind::kAuto;
      else if (v == "raw") o.folder.kind = ad::ProjectionFolderOptions::Kind::kRaw;
      else if (v == "line-integral") o.folder.kind = ad::ProjectionFolderOptions::Kind::kLineIntegral;
      else usage_error("bad value for --input: '" + v + "'");
    } else if (arg == "--min-transmission") {
      o.folder.preprocess.min_transmission = parse_number(arg, next());
      if (!(o.folder.preprocess.min_transmission > 0 && o.folder.preprocess.min_transmission < 1)) {
        usage_error("--min-transmission must lie in (0, 1)");
      }
    } else if (arg == "--bad-pixels") {
      o.folder.bad_pixels = next();
    } else if (arg == "--crop") {
      const auto v = parse_list(arg, next(), 4, 4);
      for (double x : v) {
        if (x < 0 || x != std::floor(x) || x > 1e9) usage_error("bad value for --crop");
      }
      o.folder.preprocess.crop = ad::Region{static_cast<int>(v[0]), static_cast<int>(v[1]),
                                            static_cast<int>(v[2]), static_cast<int>(v[3])};
    } else if (arg == "--bin") {
      const auto v = parse_list(arg, next(), 1, 2);
      for (double x : v) {
        if (x < 1 || x != std::floor(x) || x > 1024) usage_error("bad value for --bin");
      }
      o.folder.preprocess.bin_u = static_cast<int>(v[0]);
      o.folder.preprocess.bin_v = static_cast<int>(v.size() > 1 ? v[1] : v[0]);
    } else if (arg == "--flip-u") {
      o.folder.preprocess.flip_u = true;
    } else if (arg == "--flip-v") {
      o.folder.preprocess.flip_v = true;
    } else if (arg == "--read-threads") {
      o.read_threads = parse_int(arg, next(), 1, 256);
    } else if (arg == "--filter") {
      const std::string v = next();
      if (v == "ram-lak") o.window_kind = FDK_WINDOW_RAM_LAK;
      else if (v == "shepp-logan") o.window_kind = FDK_WINDOW_SHEPP_LOGAN;
      else if (v == "cosine") o.window_kind = FDK_WINDOW_COSINE;
      else if (v == "hamming") o.window_kind = FDK_WINDOW_HAMMING;
      else if (v == "hann") o.window_kind = FDK_WINDOW_HANN;
      else usage_error("bad value for --filter: '" + v + "'");
      o.rtk_hann = 0;
    } else if (arg == "--cutoff") {
      o.cutoff = parse_number(arg, next());
      o.rtk_hann = 0;
      if (!(o.cutoff > 0 && o.cutoff <= 1)) usage_error("--cutoff must lie in (0, 1] (a fraction of Nyquist)");
    } else if (arg == "--hann") {
      // rtkfdk's spelling; its 0 (the default there) means no window.
      const double f = parse_number(arg, next());
      if (!(f >= 0 && f <= 1)) usage_error("--hann must lie in [0, 1] (a fraction of Nyquist; 0 = off)");
      o.window_kind = f > 0 ? FDK_WINDOW_HANN : FDK_WINDOW_RAM_LAK;
      o.cutoff = 1.0;
      o.rtk_hann = f;
    } else if (arg == "--hann-y") {
      o.hann_cutoff_v = parse_number(arg, next());
      if (!(o.hann_cutoff_v >= 0 && o.hann_cutoff_v <= 1))
        usage_error("--hann-y must lie in [0, 1] (a fraction of Nyquist; 0 = off)");
    } else if (arg == "--short-scan") {
      o.short_scan = parse_switch(arg, next());
    } else if (arg == "--offset-detector") {
      o.offset_detector = parse_switch(arg, next());
    } else if (arg == "--padding") {
      o.padding = parse_number(arg, next());
      if (!(o.padding >= 0 && o.padding <= 1)) usage_error("--padding must lie in [0, 1] (a fraction of the width)");
    } else if (arg == "--backend") {
      const std::string v = next();
      if (v == "auto") o.backend = FDK_BACKEND_AUTO;
      else if (v == "cpu") o.backend = FDK_BACKEND_CPU;
      else if (v == "cuda") o.backend = FDK_BACKEND_CUDA;
      else usage_error("bad value for --backend: '" + v + "'");
    } else if (arg == "--gpus") {
      const std::string v = next();
      o.gpus.clear();
      if (v != "all") {
        for (double g : parse_list(arg, v, 1, FDK_MAX_DEVICES)) {
          if (g < 0 || g != std::floor(g) || g > 1024) usage_error("bad value for --gpus");
          o.gpus.push_back(static_cast<int>(g));
        }
      }
    } else if (arg == "--host-memory") {
      o.host_memory = parse_size(arg, next());
    } else if (arg == "--accept-budget-risk") {
      o.accept_budget_risk = true;
    } else if (arg == "--gpu-memory") {
      o.gpu_memory = parse_size(arg, next());
    } else if (arg == "--outside-fov") {
      const std::string v = next();
      if (v == "backproject") o.outside_fov = FDK_OUTSIDE_FOV_BACKPROJECT;
      else if (v == "zero") o.outside_fov = FDK_OUTSIDE_FOV_ZERO;
      else usage_error("bad value for --outside-fov: '" + v + "' (backproject or zero)");
    } else if (arg == "--precision") {
      const std::string v = next();
      if (v == "float32") o.precision = FDK_PRECISION_FLOAT32;
      else if (v == "float16") o.precision = FDK_PRECISION_FLOAT16;
      else usage_error("bad value for --precision: '" + v + "'");
    } else if (arg == "--threads") {
      o.threads = parse_int(arg, next(), 0, 1024);  // the library's limit
    } else if (arg == "--slab-thickness") {
      o.slab_thickness = parse_int(arg, next(), 0, 1 << 24);
    } else if (arg == "--format") {
      o.format = next();
      if (o.format != "tiff" && o.format != "stack" && o.format != "bigtiff" && o.format != "mha" &&
          o.format != "mhd" && o.format != "nrrd") {
        usage_error("bad value for --format: '" + o.format +
                    "' (tiff, stack, bigtiff, mha, mhd or nrrd)");
      }
    } else if (arg == "--output-type") {
      const std::string v = next();
      if (v == "float32") o.type = ad::VoxelType::kFloat32;
      else if (v == "uint16") o.type = ad::VoxelType::kUInt16;
      else usage_error("bad value for --output-type: '" + v + "'");
    } else if (arg == "--window") {
      const auto v = parse_list(arg, next(), 2, 2);
      if (!(v[1] > v[0])) usage_error("--window needs LO < HI");
      o.have_window = true;
      o.window_lo = v[0];
      o.window_hi = v[1];
    } else if (arg == "--prefix") {
      o.prefix = next();
      if (o.prefix.empty() || o.prefix.find('/') != std::string::npos) {
        usage_error("--prefix must be a plain file name prefix");
      }
    } else if (arg == "--compression") {
      const std::string v = next();
      if (v == "none") o.compression = ad::TiffWriteOptions::Compression::kNone;
      else if (v == "lzw") o.compression = ad::TiffWriteOptions::Compression::kLzw;
      else if (v == "deflate") o.compression = ad::TiffWriteOptions::Compression::kDeflate;
      else usage_error("bad value for --compression: '" + v + "'");
    } else if (arg == "--preview-at") {
      const auto v = parse_list(arg, next(), 3, 3);
      o.have_preview_at = true;
      for (int a = 0; a < 3; ++a) o.preview_at[a] = v[a];
    } else if (arg == "--estimate-geometry") {
      o.estimate_geometry = true;
    } else if (arg == "--apply-estimate") {
      o.apply_estimate = true;
    } else if (arg == "--force-estimate") {
      o.force_estimate = true;
    } else if (arg == "--write-geometry") {
      o.write_geometry = next();
      if (o.write_geometry.empty()) usage_error("--write-geometry needs a file name");
    } else if (arg == "--live-preview") {
      o.live_preview = true;
    } else if (arg == "--live-preview-interval") {
      const std::string v = next();
      o.live_preview_interval = parse_number(arg, v);
      if (!(o.live_preview_interval >= 0.05 && o.live_preview_interval <= 3600))
        usage_error("bad value for --live-preview-interval: '" + v + "' (seconds within [0.05, 3600])");
      o.live_preview = true;
    } else if (arg == "--no-preview") {
      o.preview = false;
    } else if (arg == "--force") {
      o.force = true;
    } else if (arg == "--quiet" || arg == "-q") {
      o.quiet = true;
    } else if (arg == "--progress") {
      const std::string v = next();
      if (v == "auto") o.progress = fdk_tools::ProgressStyle::kAuto;
      else if (v == "bar") o.progress = fdk_tools::ProgressStyle::kBar;
      else if (v == "lines") o.progress = fdk_tools::ProgressStyle::kLines;
      else if (v == "none") o.progress = fdk_tools::ProgressStyle::kNone;
      else if (v == "json") o.progress = fdk_tools::ProgressStyle::kJson;
      else usage_error("bad value for --progress: '" + v + "' (auto, bar, lines, none or json)");
    } else if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
      usage_error("unknown option '" + arg + "'");
    } else {
      positional.push_back(arg);
    }
  }
  // --estimate-geometry alone needs no OUTPUT_DIR: it estimates and writes
  // no volume.
  const size_t needed = o.estimate_geometry && !o.apply_estimate ? 1 : 2;
  if (positional.size() < needed || positional.size() > 2) {
    usage_error(positional.empty()        ? "expected PROJECTIONS and OUTPUT_DIR"
                : positional.size() < 2   ? std::string(o.apply_estimate
                                                            ? "--apply-estimate reconstructs: expected PROJECTIONS "
                                                              "and OUTPUT_DIR"
                                                            : "expected PROJECTIONS and OUTPUT_DIR (or "
                                                              "--estimate-geometry to only estimate)")
                                          : "unexpected argument '" + positional[2] + "'");
  }
  o.projections = positional[0];
  if (positional.size() > 1) o.output = positional[1];
  // The estimate's flags need an estimate to act on: a file or an override
  // that silently did nothing would look like a result.
  if (!o.write_geometry.empty() && !o.estimates()) {
    usage_error("--write-geometry writes the estimated geometry: give --estimate-geometry or --apply-estimate");
  }
  if (o.force_estimate && !o.apply_estimate && o.write_geometry.empty()) {
    usage_error("--force-estimate applies a low-confidence estimate: give --apply-estimate or --write-geometry");
  }
  if (o.type == ad::VoxelType::kUInt16 && !o.have_window) {
    usage_error("--output-type uint16 needs --window LO,HI (the values mapped to 0 and 65535)");
  }
  if (!o.raw.given && (o.raw.offset != 0 || o.raw.big_endian)) {
    usage_error("--raw-offset and --raw-endian describe a raw file: give --raw W,H,N --raw-type T");
  }
  if (o.raw.given != o.raw.type_given) {
    usage_error(o.raw.given ? "--raw needs --raw-type" : "--raw-type needs --raw W,H,N");
  }
  if (o.format == "stack" && o.compression != ad::TiffWriteOptions::Compression::kNone) {
    usage_error("--format stack is written uncompressed (ImageJ opens only uncompressed stacks); "
                "use --format bigtiff or tiff for --compression");
  }
  // --quiet silences stderr; JSON lines go to stdout for a wrapper and stay.
  if (o.quiet && o.progress != fdk_tools::ProgressStyle::kJson) o.progress = fdk_tools::ProgressStyle::kNone;
  return o;
}

}  // namespace fdk_convert
