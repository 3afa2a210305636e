// fdk::per_thread<T>(): the calling thread's own T, value-initialised on its
// first use in that thread and destroyed when the thread ends; what a
// function-local `thread_local T` gives, which it is everywhere but one
// toolchain.
//
// MinGW-w64's GCC (12, with mingw-w64 10, as Debian ships it) emulates TLS,
// and at a thread's end frees the emulated storage before it runs the
// destructors of the thread_local objects in it: each destructor then works
// on freed memory (seen in fdk.dll under Wine as a crash in ZSTD_freeDCtx
// whenever a worker thread ended). There the object is kept on the heap,
// its address in a Windows fiber-local slot whose callback deletes it at
// the thread's end (FlsAlloc); the object never lives in emulated TLS.
//
// Tag tells apart two uses of the same T.
#pragma once

#include <memory>

#if defined(__MINGW32__) && !defined(__clang__)
#define FDK_PER_THREAD_FLS 1
#else
#define FDK_PER_THREAD_FLS 0
#endif

namespace fdk {

#if FDK_PER_THREAD_FLS
namespace detail {

// One fiber-local slot (per_thread.cpp, so that this header needs no
// <windows.h>). Destroying it, when the library is unloaded, destroys every
// thread's object still in it.
class ThreadSlot {
 public:
  explicit ThreadSlot(void (*destroy)(void*));  // throws std::bad_alloc when Windows has no slot left
  ~ThreadSlot();
  ThreadSlot(const ThreadSlot&) = delete;
  ThreadSlot& operator=(const ThreadSlot&) = delete;

  void* get() const noexcept;
  void set(void* object);  // throws std::bad_alloc; the slot then does not own object

 private:
  void (*destroy_)(void*);
  unsigned long index_;  // a DWORD
};

}  // namespace detail
#endif

template <class T, class Tag = T>
T& per_thread() {
#if FDK_PER_THREAD_FLS
  static detail::ThreadSlot slot([](void* object) { delete static_cast<T*>(object); });
  if (void* object = slot.get()) return *static_cast<T*>(object);
  auto object = std::make_unique<T>();
  slot.set(object.get());
  return *object.release();
#else
  thread_local T object{};
  return object;
#endif
}

}  // namespace fdk
