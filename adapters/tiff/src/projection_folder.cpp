// A folder of TIFF projections (see fdk/adapters/projection_folder.hpp).
#include "fdk/adapters/projection_folder.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/files.hpp"
#include "fdk/adapters/image_stack.hpp"

namespace fdk {
namespace adapters {
namespace {

struct PageRef {
  int file;
  int page;
};

std::string describe_info(const TiffPageInfo& i) {
  return std::to_string(i.width) + " x " + std::to_string(i.height) + " " +
         sample_type_name(i.type);
}

// Two pitches from resolution tags agree when they differ by no more than
// the tags' float precision (a rational written by one program reads back
// the same; 1e-6 relative leaves room for another program's rounding).
bool same_pitch(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(a, b); }

std::string pitch_text(const TiffPageInfo& i) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g x %.6g mm", i.pixel_size_x_mm, i.pixel_size_y_mm);
  return b;
}

std::string canonical(const std::string& p) {
  std::string out = p;
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

}  // namespace

struct ProjectionFolder::Impl {
  std::string folder;
  std::vector<std::string> files;
  std::vector<int> pages_per_file;
  std::vector<PageRef> index;
  TiffPageInfo info;
  std::string pitch_disagreement;
  bool raw = false;
  int dark_frames = 0, flat_frames = 0;
  std::unique_ptr<Preprocessor> pre;
};

int load_calibration(const std::string& path, const std::string& pattern,
                     FrameAverager* averager, SampleType* type) {
  if (is_stack_path(path) && is_regular_file(path)) {
    if (type) *type = read_stack_header(path).type;
    return load_stack_frames(path, averager);
  }
  std::vector<std::string> files;
  if (is_directory(path)) {
    files = list_files(path, pattern);
    if (files.empty()) {
      fail(ErrorKind::kInput, "no files matching '" + pattern + "' in '" + path + "'");
    }
  } else if (is_regular_file(path)) {
    files.push_back(path);
  } else {
    fail(ErrorKind::kInput, "'" + path + "' does not exist");
  }
  int frames = 0;
  bool first = true;
  for (const std::string& f : files) {
    TiffReader reader(f);
    const int pages = reader.page_count();
    for (int p = 0; p < pages; ++p) {
      TiffPageInfo info;
      const std::vector<float> pixels = reader.read_page(p, &info);
      if (first && type) *type = info.type;
      first = false;
      averager->add(pixels.data(), info.width, info.height, saturation_level(info.type),
                    pages > 1 ? f + " page " + std::to_string(p) : f);
      ++frames;
    }
  }
  return frames;
}

std::vector<uint8_t> load_bad_pixel_map(const std::string& path, int width, int height) {
  if (is_bad_pixel_list(path)) {
    return parse_bad_pixel_list(read_text_file(path), width, height, path);
  }
  if (is_stack_path(path)) return load_stack_mask(path, width, height);
  TiffReader reader(path);
  TiffPageInfo info;
  const std::vector<float> pixels = reader.read_page(0, &info);
  if (info.width != width || info.height != height) {
    fail(ErrorKind::kInput, "bad-pixel map '" + path + "' is " + std::to_string(info.width) +
                                " x " + std::to_string(info.height) +
                                " pixels but the projections are " + std::to_string(width) +
                                " x " + std::to_string(height));
  }
  std::vector<uint8_t> map(pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) map[i] = pixels[i] != 0.0f ? 1 : 0;
  return map;
}

ProjectionFolder::ProjectionFolder(const std::string& folder,
                                   const ProjectionFolderOptions& options)
    : impl_(new Impl) {
  Impl& s = *impl_;
  s.folder = folder;
  // The calibration files may sit in the projection folder: leave them out.
  std::vector<std::string> exclude;
  for (const std::string* p : {&options.dark, &options.flat, &options.bad_pixels}) {
    if (!p->empty()) exclude.push_back(canonical(*p));
  }
  for (std::string& f : list_entries(folder, options.pattern)) {
    if (std::find(exclude.begin(), exclude.end(), canonical(f)) == exclude.end()) {
      require_readable_file(f, options.pattern);
      s.files.push_back(std::move(f));
    }
  }
  if (s.files.empty()) {
    fail(ErrorKind::kInput, "no projection files matching '" + options.pattern + "' in '" +
                                folder + "'");
  }
  // Check every page of every file.
  std::string first_name;
  for (size_t f = 0; f < s.files.size(); ++f) {
    TiffReader reader(s.files[f]);
    const int pages = reader.page_count();
    for (int p = 0; p < pages; ++p) {
      const TiffPageInfo info = reader.page_info(p);
      const std::string here = pages > 1 ? "'" + s.files[f] + "' page " + std::to_string(p)
                                         : "'" + s.files[f] + "'";
      if (s.index.empty()) {
        s.info = info;
        first_name = here;
      } else if (info.width != s.info.width || info.height != s.info.height ||
                 info.type != s.info.type) {
        fail(ErrorKind::kInput, here + " is " + describe_info(info) + " but " + first_name +
                                    " is " + describe_info(s.info) +
                                    ": all projections must share one size and sample type");
      }
      // The pitch is taken from the first page: one that states another
      // is remembered (the first such) for the caller to refuse or report.
      // A page without resolution tags states nothing and disagrees with
      // nothing.
      const bool states = info.pixel_size_x_mm > 0 && info.pixel_size_y_mm > 0;
      const bool first_states = s.info.pixel_size_x_mm > 0 && s.info.pixel_size_y_mm > 0;
      if (!s.index.empty() && states && first_states && s.pitch_disagreement.empty() &&
          !(same_pitch(info.pixel_size_x_mm, s.info.pixel_size_x_mm) &&
            same_pitch(info.pixel_size_y_mm, s.info.pixel_size_y_mm))) {
        s.pitch_disagreement = here + "'s resolution tags give a pixel pitch of " + pitch_text(info) +
                               " but " + first_name + "'s give " + pitch_text(s.info);
      }
      s.index.push_back(PageRef{static_cast<int>(f), p});
    }
    s.pages_per_file.push_back(pages);
  }

  const std::string pattern =
      options.calibration_pattern.empty() ? options.pattern : options.calibration_pattern;
  Calibration cal = make_calibration(
      options, s.info.width, s.info.height, s.info.type, folder,
      [&](const std::string& path, FrameAverager* avg) {
        return load_calibration(path, pattern, avg);
      },
      [](const std::string& path, int w, int h) { return load_bad_pixel_map(path, w, h); });
  s.raw = cal.raw;
  s.dark_frames = cal.dark_frames;
  s.flat_frames = cal.flat_frames;
  s.pre = std::move(cal.preprocessor);
}

ProjectionFolder::~ProjectionFolder() = default;

int ProjectionFolder::count() const { return static_cast<int>(impl_->index.size()); }
int ProjectionFolder::raw_width() const { return impl_->info.width; }
int ProjectionFolder::raw_height() const { return impl_->info.height; }
std::array<double, 2> ProjectionFolder::raw_pixel_size_mm() const {
  return {impl_->info.pixel_size_x_mm, impl_->info.pixel_size_y_mm};
}
SampleType ProjectionFolder::sample_type() const { return impl_->info.type; }
bool ProjectionFolder::raw() const { return impl_->raw; }
int ProjectionFolder::dark_frames() const { return impl_->dark_frames; }
int ProjectionFolder::flat_frames() const { return impl_->flat_frames; }
const Preprocessor& ProjectionFolder::preprocessor() const { return *impl_->pre; }
const std::vector<std::string>& ProjectionFolder::files() const { return impl_->files; }
const std::string& ProjectionFolder::pitch_disagreement() const { return impl_->pitch_disagreement; }

std::string ProjectionFolder::describe(int index) const {
  if (index < 0 || index >= count()) return "projection " + std::to_string(index);
  const PageRef r = impl_->index[static_cast<size_t>(index)];
  const std::string& f = impl_->files[static_cast<size_t>(r.file)];
  return impl_->pages_per_file[static_cast<size_t>(r.file)] > 1
             ? "'" + f + "' page " + std::to_string(r.page)
             : "'" + f + "'";
}

std::unique_ptr<ProjectionSource::Workspace> ProjectionFolder::make_workspace() const {
  return std::make_unique<Workspace>();
}

size_t ProjectionFolder::read(int index, float* out, ProjectionSource::Workspace& ws) const {
  auto* mine = dynamic_cast<Workspace*>(&ws);
  if (!mine) fail(ErrorKind::kInvalidArgument, "ProjectionFolder::read: a workspace of another source");
  return read(index, out, *mine);
}

size_t ProjectionFolder::read(int index, float* out, Workspace& ws) const {
  if (index < 0 || index >= count()) {
    fail(ErrorKind::kInvalidArgument, "projection index " + std::to_string(index) +
                                          " outside [0, " + std::to_string(count()) + ")");
  }
  const PageRef r = impl_->index[static_cast<size_t>(index)];
  const std::string& path = impl_->files[static_cast<size_t>(r.file)];
  try {
    if (!ws.reader || ws.open_path != path) {
      ws.reader.reset();
      ws.reader = std::make_unique<TiffReader>(path);
      ws.open_path = path;
    }
    const TiffPageInfo info = ws.reader->page_info(r.page);
    if (info.width != impl_->info.width || info.height != impl_->info.height ||
        info.type != impl_->info.type) {
      fail(ErrorKind::kInput, describe(index) + " changed since the folder was scanned (now " +
                                  describe_info(info) + ")");
    }
    ws.raw.resize(static_cast<size_t>(info.width) * static_cast<size_t>(info.height));
    ws.reader->read_page(r.page, ws.raw.data());
    try {
      return impl_->pre->process(ws.raw.data(), static_cast<size_t>(info.width), out, ws.scratch);
    } catch (const Error& e) {
      fail(e.kind(), describe(index) + ": " + e.what());
    }
  } catch (const Error&) {
    ws.reader.reset();  // a failed reader is not reused
    ws.open_path.clear();
    throw;
  }
}

}  // namespace adapters
}  // namespace fdk
