// Which GPU a thread works on: each device's primary context (the one the
// CUDA runtime also uses, so a host application that uses the runtime
// shares it with us), made current for the work and the host's own
// context put back after it.
#pragma once
#include <cuda.h>

namespace fdk::cuda {

// Device `ordinal`'s primary context, retained on first use and kept for
// the life of the process (as the runtime keeps it).
CUcontext primary_context(int ordinal);

// For an object that owns device resources: enter() makes its device's
// context current and remembers the host's, leave() and the destructor put
// the host's back.
class DeviceScope {
 public:
  explicit DeviceScope(int ordinal) : ordinal_(ordinal) { enter(); }
  ~DeviceScope() { leave(); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  void enter();
  void leave() noexcept;

 private:
  int ordinal_;
  CUcontext previous_ = nullptr;
  bool entered_ = false, switched_ = false;
};

// `ordinal`'s context current for a scope, then the one that was.
using DeviceGuard = DeviceScope;

// A context made current for a scope by handle (releases of resources on
// whatever thread destroys them).
class ContextScope {
 public:
  explicit ContextScope(CUcontext context) noexcept;
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

// The calling thread's current context (null: none).
CUcontext current_context() noexcept;

}  // namespace fdk::cuda
