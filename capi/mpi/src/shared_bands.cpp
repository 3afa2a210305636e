#include "shared_bands.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>

namespace fdk::mpi {

namespace {

constexpr size_t kStampBytes = 64;  // a cache line before each slot's rows

std::string fresh_name() {
  static std::atomic<unsigned> counter{0};
  std::random_device random;
  char name[96];
  std::snprintf(name, sizeof name, "/fdk-mpi-%ld-%u-%08x%08x", static_cast<long>(::getpid()), counter.fetch_add(1),
                random(), random());
  return name;
}

}  // namespace

std::unique_ptr<SharedSegment> SharedSegment::create(size_t bytes) {
  const std::string name = fresh_name();
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return nullptr;
  // Reserved now: a write to a page /dev/shm cannot hold would be SIGBUS.
  void* data = MAP_FAILED;
  if (::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) == 0)
    data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED) {
    ::shm_unlink(name.c_str());
    return nullptr;
  }
  return std::unique_ptr<SharedSegment>(new SharedSegment(name, static_cast<char*>(data), bytes, true));
}

std::unique_ptr<SharedSegment> SharedSegment::open(const std::string& name, size_t bytes) {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* data = MAP_FAILED;
  if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) >= bytes)
    data = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED) return nullptr;
  return std::unique_ptr<SharedSegment>(new SharedSegment(name, static_cast<char*>(data), bytes, false));
}

void SharedSegment::unlink() {
  if (owner_ && !name_.empty()) ::shm_unlink(name_.c_str());
  owner_ = false;
}

SharedSegment::~SharedSegment() {
  unlink();
  ::munmap(data_, bytes_);
}

// ---- the slots ----------------------------------------------------------------

size_t SharedBands::stride(size_t slot_bytes) { return kStampBytes + (slot_bytes + 63) / 64 * 64; }

SharedBands::SharedBands(int ranks, size_t slot_bytes, int slots)
    : reaches_(static_cast<size_t>(ranks), 0), inbox_(static_cast<size_t>(ranks)) {
  if (slot_bytes == 0 || slots <= 0) return;
  own_ = SharedSegment::create(stride(slot_bytes) * static_cast<size_t>(slots));
  if (!own_) return;
  slot_bytes_ = slot_bytes;
  slots_ = free_ = slots;
  lent_.assign(static_cast<size_t>(slots), 0);
}

std::vector<int32_t> SharedBands::describe() const {
  std::vector<int32_t> words;
  if (!own_) return {0};
  const std::string& name = own_->name();
  words.push_back(1);
  words.push_back(static_cast<int32_t>(slot_bytes_ & 0xffffffffu));
  words.push_back(static_cast<int32_t>(static_cast<uint64_t>(slot_bytes_) >> 32));
  words.push_back(slots_);
  words.push_back(static_cast<int32_t>(name.size()));
  for (size_t i = 0; i < name.size(); i += 4) {
    int32_t w = 0;
    std::memcpy(&w, name.data() + i, std::min<size_t>(4, name.size() - i));
    words.push_back(w);
  }
  return words;
}

bool SharedBands::map(int source, const std::vector<int32_t>& words) {
  if (words.size() < 5 || words[0] != 1) return false;
  const uint64_t bytes = static_cast<uint32_t>(words[1]) | (static_cast<uint64_t>(static_cast<uint32_t>(words[2])) << 32);
  const int slots = words[3];
  const size_t length = static_cast<size_t>(words[4]);
  if (slots <= 0 || bytes == 0 || length == 0 || length > 255 || words.size() < 5 + (length + 3) / 4) return false;
  std::string name(length, '\0');
  for (size_t i = 0; i < length; i += 4) std::memcpy(&name[i], &words[5 + i / 4], std::min<size_t>(4, length - i));
  Inbox& in = inbox_[static_cast<size_t>(source)];
  in.segment = SharedSegment::open(name, stride(bytes) * static_cast<size_t>(slots));
  in.slot_bytes = bytes;
  in.slots = slots;
  return in.segment != nullptr;
}

void SharedBands::unlink_own() {
  if (own_) own_->unlink();
}

int SharedBands::take() {
  for (int s = 0; s < slots_; ++s)
    if (!lent_[static_cast<size_t>(s)]) {
      lent_[static_cast<size_t>(s)] = 1;
      --free_;
      return s;
    }
  return -1;
}

char* SharedBands::rows(int slot) const {
  return own_->data() + stride(slot_bytes_) * static_cast<size_t>(slot) + kStampBytes;
}

uint64_t SharedBands::publish(int slot) {
  const uint64_t stamp = next_stamp_++;
  __atomic_store_n(stamp_of(rows(slot) - kStampBytes), stamp, __ATOMIC_RELEASE);
  return stamp;
}

bool SharedBands::give_back(int slot) {
  if (slot < 0 || slot >= slots_ || !lent_[static_cast<size_t>(slot)]) return false;
  lent_[static_cast<size_t>(slot)] = 0;
  ++free_;
  return true;
}

const char* SharedBands::received(int source, int slot, uint64_t stamp, size_t bytes) const {
  if (source < 0 || static_cast<size_t>(source) >= inbox_.size()) return nullptr;
  const Inbox& in = inbox_[static_cast<size_t>(source)];
  if (!in.segment || slot < 0 || slot >= in.slots || bytes > in.slot_bytes) return nullptr;
  char* base = in.segment->data() + stride(in.slot_bytes) * static_cast<size_t>(slot);
  if (__atomic_load_n(stamp_of(base), __ATOMIC_ACQUIRE) != stamp) return nullptr;
  return base + kStampBytes;
}

}  // namespace fdk::mpi
