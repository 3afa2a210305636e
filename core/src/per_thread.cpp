// Windows' fiber-local slots for fdk::per_thread under MinGW-w64's GCC
// (per_thread.hpp says why). Empty elsewhere.
#include "fdk/core/per_thread.hpp"

#if FDK_PER_THREAD_FLS
#include "windows_api.hpp"

#include <new>

namespace fdk::detail {
namespace {

// What a slot holds: the object and how to destroy it. FlsAlloc takes one
// callback of Windows' calling convention for every slot; this node lets it
// call the per-type function.
struct Node {
  void (*destroy)(void*);
  void* object;
};

void WINAPI destroy_node(void* p) {
  if (!p) return;
  Node* node = static_cast<Node*>(p);
  node->destroy(node->object);
  delete node;
}

}  // namespace

ThreadSlot::ThreadSlot(void (*destroy)(void*)) : destroy_(destroy), index_(FlsAlloc(destroy_node)) {
  if (index_ == FLS_OUT_OF_INDEXES) throw std::bad_alloc();
}

ThreadSlot::~ThreadSlot() { FlsFree(index_); }

void* ThreadSlot::get() const noexcept {
  const Node* node = static_cast<const Node*>(FlsGetValue(index_));
  return node ? node->object : nullptr;
}

void ThreadSlot::set(void* object) {
  Node* node = new Node{destroy_, object};
  if (!FlsSetValue(index_, node)) {
    delete node;
    throw std::bad_alloc();
  }
}

}  // namespace fdk::detail
#endif
