// See xyz_raw_writer.hpp.
#include "xyz_raw_writer.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fdk/adapters/error.hpp"

namespace fdk {
namespace adapters {
namespace detail {
namespace {

class XyzRawWriter final : public VolumeWriter {
 public:
  XyzRawWriter(const std::string& header_path, const std::string& header,
               const std::string& data_path, const fdk_volume& volume,
               const VolumeWriterOptions& options)
      : volume_(volume), options_(options) {
    header_file_ = std::make_unique<OutputFile>(header_path, options.fault);
    header_file_->write(header.data(), header.size());
    if (data_path.empty()) {
      data_offset_ = header.size();
    } else {
      data_file_ = std::make_unique<OutputFile>(data_path, options.fault);
    }
  }
  ~XyzRawWriter() override { discard(); }

  void write_planes(int y_begin, int y_end, const float* data) override {
    const int nx = volume_.size[0], ny = volume_.size[1], nz = volume_.size[2];
    if (y_begin != next_y_ || y_end <= y_begin || y_end > ny) {
      fail(ErrorKind::kInvalidArgument,
           "'" + header_file_->final_path() + "': planes [" + std::to_string(y_begin) + ", " +
               std::to_string(y_end) + ") out of order (next is " + std::to_string(next_y_) + ")");
    }
    const bool u16 = options_.type == VoxelType::kUInt16;
    const size_t bytes_per_voxel = u16 ? sizeof(uint16_t) : sizeof(float);
    const size_t row = static_cast<size_t>(nx);
    const size_t rows = static_cast<size_t>(y_end - y_begin);
    const size_t plane = row * static_cast<size_t>(nz);  // one y plane of the slab
    gathered_.resize(rows * row);
    converted_.resize(u16 ? rows * row : 0);
    OutputFile& out = data_file_ ? *data_file_ : *header_file_;
    for (int z = 0; z < nz; ++z) {
      for (size_t r = 0; r < rows; ++r) {
        std::memcpy(gathered_.data() + r * row, data + r * plane + static_cast<size_t>(z) * row,
                    row * sizeof(float));
      }
      const void* bytes = gathered_.data();
      if (u16) {
        to_uint16(gathered_.data(), gathered_.size(), options_.window_lo, options_.window_hi,
                  converted_.data());
        bytes = converted_.data();
      }
      const uint64_t voxel = (static_cast<uint64_t>(z) * static_cast<uint64_t>(ny) +
                              static_cast<uint64_t>(y_begin)) * row;
      out.seek(data_offset_ + voxel * bytes_per_voxel);
      out.write(bytes, rows * row * bytes_per_voxel);
    }
    next_y_ = y_end;
  }

  void commit() override {
    if (next_y_ != volume_.size[1]) {
      fail(ErrorKind::kInvalidArgument, "'" + header_file_->final_path() + "': only " +
                                            std::to_string(next_y_) + " of " +
                                            std::to_string(volume_.size[1]) + " planes written");
    }
    try {
      // Data first, header last: a reader never finds a header whose data
      // is not complete.
      if (data_file_) data_file_->commit(/*defer_rename=*/true);
      header_file_->commit(/*defer_rename=*/true);
      if (data_file_) data_file_->rename_to_final();
      try {
        header_file_->rename_to_final();
      } catch (...) {
        if (data_file_) std::remove(data_file_->final_path().c_str());
        throw;
      }
    } catch (...) {
      discard();
      throw;
    }
    committed_ = true;
  }

  void discard() noexcept override {
    if (committed_) return;
    header_file_->discard();
    if (data_file_) data_file_->discard();
  }

  std::vector<std::string> outputs() const override {
    std::vector<std::string> out{header_file_->final_path()};
    if (data_file_) out.push_back(data_file_->final_path());
    return out;
  }

 private:
  fdk_volume volume_;
  VolumeWriterOptions options_;
  std::unique_ptr<OutputFile> header_file_, data_file_;
  uint64_t data_offset_ = 0;
  int next_y_ = 0;
  bool committed_ = false;
  std::vector<float> gathered_;
  std::vector<uint16_t> converted_;
};

}  // namespace

bool host_is_big_endian() {
  const uint32_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 0;
}

std::string exact_number(double v) {
  char buffer[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

std::unique_ptr<VolumeWriter> make_xyz_raw_writer(const std::string& header_path,
                                                  const std::string& header,
                                                  const std::string& data_path,
                                                  const fdk_volume& volume,
                                                  const VolumeWriterOptions& options) {
  check_volume_writer_arguments(volume, options);
  return std::make_unique<XyzRawWriter>(header_path, header, data_path, volume, options);
}

}  // namespace detail
}  // namespace adapters
}  // namespace fdk
