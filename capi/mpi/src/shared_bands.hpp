// Bands between ranks on one host, through shared memory instead of MPI
// messages. Measured on two H200s (docs/PERFORMANCE.md, 2026-11-28): a
// band received as a message is copied by one thread of the receiver
// (MPI's single copy, about 3.5 GB/s), 10.8 s of a rank's 33.6 s push in
// (d) f16, on the thread that also pushes. Here the sender copies the rows
// into a slot of its own segment (its pool, as it copied them into a send
// buffer), a small message names the slot, and the receiver pushes them
// into its reconstruction straight from its mapping of that segment, then
// hands the slot back with another small message.
//
// Each rank makes one segment (POSIX shared memory, /dev/shm) of `slots`
// slots; a rank maps the segments of the others read-only when it can. A
// rank on another host, a /dev/shm too small for the slots, or
// FDK_MPI_SHARED_MEMORY=0 leaves the messages in place: nothing else
// changes. The names are removed once every rank has tried them, so that
// nothing is left behind in /dev/shm by a job that crashes later.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace fdk::mpi {

// One mapping of a shared-memory object: this rank's (created, writable)
// or another rank's (opened, read-only). Unmapped on destruction; the
// creator's name is removed then too, if unlink() did not already.
class SharedSegment {
 public:
  // Null when it cannot be made (no /dev/shm, no room: the pages are
  // reserved here, so a small /dev/shm fails now, not on a later write).
  static std::unique_ptr<SharedSegment> create(size_t bytes);
  static std::unique_ptr<SharedSegment> open(const std::string& name, size_t bytes);
  ~SharedSegment();
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;

  const std::string& name() const { return name_; }
  char* data() const { return data_; }
  void unlink();

 private:
  SharedSegment(std::string name, char* data, size_t bytes, bool owner)
      : name_(std::move(name)), data_(data), bytes_(bytes), owner_(owner) {}
  std::string name_;
  char* data_;
  size_t bytes_;
  bool owner_;
};

// This rank's slots and its mappings of the other ranks' slots.
class SharedBands {
 public:
  // `ranks` in the communicator; `slot_bytes` the largest band it sends.
  SharedBands(int ranks, size_t slot_bytes, int slots);

  // The exchange at fdk_mpi_create: this rank's segment (empty name when
  // it has none) and the words that describe it to the others.
  std::vector<int32_t> describe() const;
  // Maps `source`'s segment from its description; false when it cannot.
  bool map(int source, const std::vector<int32_t>& words);
  void set_reaches(int destination) { reaches_[static_cast<size_t>(destination)] = 1; }
  void unlink_own();  // every rank has tried it

  bool reaches(int destination) const { return own_ && reaches_[static_cast<size_t>(destination)]; }
  bool fits(size_t bytes) const { return bytes <= slot_bytes_; }
  int free_slots() const { return free_; }

  // Sending: a free slot (free_slots() > 0), its rows, then publish, which
  // returns the stamp the message carries (memory order: the receiver's
  // acquire of it sees the rows).
  int take();
  char* rows(int slot) const;
  uint64_t publish(int slot);
  // The receiver handed `slot` back; false for a slot that was not lent.
  bool give_back(int slot);

  // Receiving: `source`'s slot, null unless it is a slot of a mapped
  // segment holding `bytes` and carrying `stamp`.
  const char* received(int source, int slot, uint64_t stamp, size_t bytes) const;

 private:
  struct Inbox {
    std::unique_ptr<SharedSegment> segment;
    size_t slot_bytes = 0;
    int slots = 0;
  };
  static size_t stride(size_t slot_bytes);
  static uint64_t* stamp_of(char* slot) { return reinterpret_cast<uint64_t*>(slot); }

  size_t slot_bytes_ = 0;
  int slots_ = 0, free_ = 0;
  std::unique_ptr<SharedSegment> own_;
  std::vector<char> lent_;  // per slot
  uint64_t next_stamp_ = 1;
  std::vector<char> reaches_;  // per rank: it mapped this rank's segment
  std::vector<Inbox> inbox_;   // per rank
};

}  // namespace fdk::mpi
