// What ranks send each other on libfdk_mpi's own communicator. Every
// message is bytes: a fixed header, then a payload.
#pragma once
#include <fdk/fdk.h>

#include <cstdint>

namespace fdk::mpi {

enum Tag : int {
  kTagView = 101,   // ViewHeader + rows [row_begin, row_end) of a view, float32
  kTagFail = 102,   // FailHeader + message: a band the receiver could not store
  kTagEnd = 103,    // EndHeader: the sender pushes nothing more this round
  kTagLeave = 104,  // FailHeader (index: the rank that left first) + message: the sender's context is gone
  kTagSharedView = 105,  // SharedViewHeader: a band's rows wait in the sender's shared slot
  kTagSlotFree = 106,    // SlotHeader: the receiver is done with the sender's slot
};

struct ViewHeader {
  int32_t index = 0;
  int32_t row_begin = 0, row_end = 0;
  int32_t has_view = 0;  // `view` holds the measured geometry
  fdk_view view{};
};

struct SharedViewHeader {
  ViewHeader band;
  int32_t slot = 0;
  int32_t reserved = 0;
  uint64_t stamp = 0;  // the slot's stamp once its rows were written
};

struct SlotHeader {
  int32_t slot = 0;
  int32_t reserved = 0;
};

struct FailHeader {
  int32_t index = -1;  // the view (-1: none)
  int32_t status = 0;  // fdk_status
  int32_t length = 0;  // message bytes that follow
  int32_t reserved = 0;
};

struct EndHeader {
  int32_t round = 0;
  int32_t reserved = 0;
};

}  // namespace fdk::mpi
