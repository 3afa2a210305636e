// DXchange HDF5 projections (see fdk/adapters/hdf5_stack.hpp).
#include "fdk/adapters/hdf5_stack.hpp"

#include <hdf5.h>

#include <cctype>
#include <mutex>
#include <vector>

#include "fdk/adapters/error.hpp"
#include "fdk/adapters/files.hpp"
#include "fdk/adapters/image_stack.hpp"

namespace fdk {
namespace adapters {
namespace {

// HDF5 may be built without thread safety: every call goes through this.
std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

// Errors are reported by us, never printed by HDF5 (per thread in a
// thread-safe build, so set before every use).
void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

struct Handle {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  ~Handle() {
    if (id >= 0) close(id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

// One dataset's shape and type, and the frames read from it.
class Dataset {
 public:
  Dataset(const std::string& path, const std::string& name) : path_(path), name_(name) {
    quiet();
    file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_ < 0) fail(ErrorKind::kInput, "'" + path + "' cannot be opened as an HDF5 file");
    if (!exists_by_path()) {
      H5Fclose(file_);
      fail(ErrorKind::kInput, "'" + path + "' has no dataset " + name);
    }
    set_ = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
    if (set_ < 0) {
      H5Fclose(file_);
      fail(ErrorKind::kInput, "'" + path + "': " + name + " is not a readable dataset");
    }
    try {
      inspect();
    } catch (...) {
      H5Dclose(set_);
      H5Fclose(file_);
      throw;
    }
  }
  ~Dataset() {
    H5Dclose(set_);
    H5Fclose(file_);
  }
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  int frames() const { return static_cast<int>(dims_[0]); }
  int width() const { return static_cast<int>(dims_[2]); }
  int height() const { return static_cast<int>(dims_[1]); }
  SampleType type() const { return type_; }
  std::string where(int index) const {
    return "'" + path_ + "' " + name_ + (frames() > 1 ? " frame " + std::to_string(index) : "");
  }

  // Frame `index` as floats (HDF5 converts). Callers hold hdf5_mutex().
  void read(int index, float* out) const {
    quiet();
    Handle space(H5Dget_space(set_), H5Sclose);
    const hsize_t start[3] = {static_cast<hsize_t>(index), 0, 0};
    const hsize_t count[3] = {1, dims_[1], dims_[2]};
    const hsize_t n = dims_[1] * dims_[2];
    Handle mem(H5Screate_simple(1, &n, nullptr), H5Sclose);
    if (space.id < 0 || mem.id < 0 ||
        H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start + (rank_ == 3 ? 0 : 1), nullptr,
                            count + (rank_ == 3 ? 0 : 1), nullptr) < 0 ||
        H5Dread(set_, H5T_NATIVE_FLOAT, mem.id, space.id, H5P_DEFAULT, out) < 0) {
      fail(ErrorKind::kInput, where(index) + " cannot be read (corrupt, or compressed with a filter "
                                             "this HDF5 lacks)");
    }
  }

 private:
  bool exists_by_path() const {
    // H5Lexists needs every parent to exist; walk the path.
    std::string partial;
    size_t pos = 1;
    while (pos <= name_.size()) {
      const size_t slash = name_.find('/', pos);
      partial = name_.substr(0, slash == std::string::npos ? name_.size() : slash);
      if (H5Lexists(file_, partial.c_str(), H5P_DEFAULT) <= 0) return false;
      if (slash == std::string::npos) return true;
      pos = slash + 1;
    }
    return false;
  }

  void inspect() {
    Handle space(H5Dget_space(set_), H5Sclose);
    const int rank = space.id < 0 ? -1 : H5Sget_simple_extent_ndims(space.id);
    if (rank != 3 && rank != 2) {
      fail(ErrorKind::kUnsupported, "'" + path_ + "': " + name_ + " has " + std::to_string(rank) +
                                        " dimensions (a 3D stack of views, rows, columns, or one 2D frame, is read)");
    }
    rank_ = rank;
    hsize_t d[3] = {1, 1, 1};
    H5Sget_simple_extent_dims(space.id, rank == 3 ? d : d + 1, nullptr);
    dims_[0] = d[0];
    dims_[1] = d[1];
    dims_[2] = d[2];
    if (d[0] < 1 || d[1] < 1 || d[2] < 1 || d[1] > (hsize_t(1) << 30) || d[2] > (hsize_t(1) << 30) ||
        d[1] * d[2] > kMaxStackFramePixels || d[0] > kMaxStackFrames) {
      fail(ErrorKind::kInput, "'" + path_ + "': " + name_ + " is " + std::to_string(d[0]) + " x " +
                                  std::to_string(d[1]) + " x " + std::to_string(d[2]) +
                                  ": empty, or beyond the limits (2^28 pixels a frame, 2^24 frames)");
    }
    Handle type(H5Dget_type(set_), H5Tclose);
    const H5T_class_t cls = type.id < 0 ? H5T_NO_CLASS : H5Tget_class(type.id);
    const size_t size = type.id < 0 ? 0 : H5Tget_size(type.id);
    if (cls == H5T_INTEGER) {
      const bool sign = H5Tget_sign(type.id) == H5T_SGN_2;
      if (size == 1) type_ = sign ? SampleType::kInt8 : SampleType::kUInt8;
      else if (size == 2) type_ = sign ? SampleType::kInt16 : SampleType::kUInt16;
      else if (size == 4) type_ = sign ? SampleType::kInt32 : SampleType::kUInt32;
      else cls_error(size);
    } else if (cls == H5T_FLOAT) {
      if (size == 4) type_ = SampleType::kFloat32;
      else if (size == 8) type_ = SampleType::kFloat64;
      else cls_error(size);
    } else {
      cls_error(size);
    }
  }
  [[noreturn]] void cls_error(size_t size) const {
    fail(ErrorKind::kUnsupported, "'" + path_ + "': " + name_ + " holds samples of " +
                                      std::to_string(size) +
                                      " bytes that are not 8/16/32-bit integers or 32/64-bit floats");
  }

  std::string path_, name_;
  hid_t file_ = -1, set_ = -1;
  int rank_ = 3;
  hsize_t dims_[3] = {1, 1, 1};
  SampleType type_ = SampleType::kUInt16;
};

bool has_dataset(const std::string& path, const std::string& name) {
  if (name.empty()) return false;
  quiet();
  const hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) return false;
  bool found = true;
  std::string partial;
  size_t pos = 1;
  while (found && pos <= name.size()) {
    const size_t slash = name.find('/', pos);
    partial = name.substr(0, slash == std::string::npos ? name.size() : slash);
    found = H5Lexists(f, partial.c_str(), H5P_DEFAULT) > 0;
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  H5Fclose(f);
  return found;
}

int average(const Dataset& d, FrameAverager* averager) {
  std::vector<float> frame(static_cast<size_t>(d.width()) * d.height());
  for (int i = 0; i < d.frames(); ++i) {
    d.read(i, frame.data());
    averager->add(frame.data(), d.width(), d.height(), saturation_level(d.type()), d.where(i));
  }
  return d.frames();
}

struct H5Workspace : ProjectionSource::Workspace {
  std::vector<float> raw, scratch;
};

}  // namespace

bool is_hdf5_path(const std::string& path) {
  std::string l = path;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* suf : {".h5", ".hdf5", ".hdf", ".nxs"}) {
    const std::string s = suf;
    if (l.size() >= s.size() && l.compare(l.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

int load_hdf5_frames(const std::string& path, const std::string& dataset, FrameAverager* averager) {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  Dataset d(path, dataset);
  return average(d, averager);
}

struct Hdf5Stack::Impl {
  std::string path;
  std::unique_ptr<Dataset> data;
  Calibration cal;
  std::string dark_used, flat_used;
};

Hdf5Stack::Hdf5Stack(const std::string& path, const Hdf5StackOptions& options) : impl_(new Impl) {
  require_readable_file(path);
  impl_->path = path;
  ProjectionOptions po = options;
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex());
    impl_->data = std::make_unique<Dataset>(path, options.dataset);
    // The file's own dark and white frames, unless others are given.
    if (po.dark.empty() && has_dataset(path, options.dark_dataset)) impl_->dark_used = options.dark_dataset;
    if (po.flat.empty() && has_dataset(path, options.flat_dataset)) impl_->flat_used = options.flat_dataset;
  }
  // Marks for the loader below: the projections' own file and dataset.
  const std::string own_dark = "\x01" "dark", own_flat = "\x01" "flat";
  if (!impl_->dark_used.empty()) po.dark = own_dark;
  if (!impl_->flat_used.empty()) po.flat = own_flat;
  const FrameLoader frames = [&](const std::string& p, FrameAverager* avg) {
    if (p == own_dark) return load_hdf5_frames(path, impl_->dark_used, avg);
    if (p == own_flat) return load_hdf5_frames(path, impl_->flat_used, avg);
    if (is_hdf5_path(p)) {  // another DXchange file: its dark (white) frames, else its data
      const std::string& own = p == options.dark ? options.dark_dataset : options.flat_dataset;
      bool has = false;
      {
        std::lock_guard<std::mutex> lock(hdf5_mutex());
        has = has_dataset(p, own);
      }
      return load_hdf5_frames(p, has ? own : options.dataset, avg);
    }
    if (is_stack_path(p)) return load_stack_frames(p, avg);
    if (options.other_frames) return options.other_frames(p, avg);
    fail(ErrorKind::kUnsupported, "'" + p + "' is not an HDF5, MetaImage or NRRD file");
  };
  const MaskLoader mask = [&](const std::string& p, int w, int h) {
    if (is_stack_path(p)) return load_stack_mask(p, w, h);
    if (options.other_mask) return options.other_mask(p, w, h);
    fail(ErrorKind::kUnsupported, "'" + p + "' is not a MetaImage or NRRD file or a text list");
  };
  impl_->cal = make_calibration(po, raw_width(), raw_height(), sample_type(), path, frames, mask);
}

Hdf5Stack::~Hdf5Stack() {
  std::lock_guard<std::mutex> lock(hdf5_mutex());
  impl_->data.reset();
}

int Hdf5Stack::count() const { return impl_->data->frames(); }
int Hdf5Stack::raw_width() const { return impl_->data->width(); }
int Hdf5Stack::raw_height() const { return impl_->data->height(); }
SampleType Hdf5Stack::sample_type() const { return impl_->data->type(); }
bool Hdf5Stack::raw() const { return impl_->cal.raw; }
int Hdf5Stack::dark_frames() const { return impl_->cal.dark_frames; }
int Hdf5Stack::flat_frames() const { return impl_->cal.flat_frames; }
const Preprocessor& Hdf5Stack::preprocessor() const { return *impl_->cal.preprocessor; }
std::string Hdf5Stack::describe(int index) const { return impl_->data->where(index); }
const std::string& Hdf5Stack::dark_dataset_used() const { return impl_->dark_used; }
const std::string& Hdf5Stack::flat_dataset_used() const { return impl_->flat_used; }

std::unique_ptr<ProjectionSource::Workspace> Hdf5Stack::make_workspace() const {
  return std::make_unique<H5Workspace>();
}

size_t Hdf5Stack::read(int index, float* out, Workspace& workspace) const {
  auto* ws = dynamic_cast<H5Workspace*>(&workspace);
  if (!ws) fail(ErrorKind::kInvalidArgument, "Hdf5Stack::read: a workspace of another source");
  if (index < 0 || index >= count()) {
    fail(ErrorKind::kInvalidArgument, "projection index " + std::to_string(index) + " outside [0, " +
                                          std::to_string(count()) + ")");
  }
  ws->raw.resize(static_cast<size_t>(raw_width()) * raw_height());
  {
    std::lock_guard<std::mutex> lock(hdf5_mutex());
    impl_->data->read(index, ws->raw.data());
  }
  try {
    return impl_->cal.preprocessor->process(ws->raw.data(), static_cast<size_t>(raw_width()), out,
                                            ws->scratch);
  } catch (const Error& e) {
    fail(e.kind(), describe(index) + ": " + e.what());
  }
}

}  // namespace adapters
}  // namespace fdk
