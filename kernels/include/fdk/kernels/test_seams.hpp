// The CUDA backend's test seams: a failure to inject into one device and
// the scheduling knobs that tests turn. Only tests reach them: the setter
// lives in an object file of the static library fdk_kernels that nothing
// in libfdk.so references, so the shipped library neither contains nor
// exports it, and no process environment can change what a context does
// (tests/packaging checks both). Tests link the library's objects
// statically (target fdk_testable) to call it. Not installed.
#pragma once

namespace fdk::cuda {

// What the CUDA contexts created while a plan is set do differently. The
// default plan is what the shipped library always runs.
struct FaultPlan {
  // A device that fails: "alloc": its set-up fails as if out of memory;
  // "kernel": its slab computations fail (a device error) once it has
  // computed `after` slabs; "scan": a resident device fails (a device
  // error) at its view number `after` of the scan, "read": at its read
  // number `after` after the scan. A device that failed stays failed.
  enum Kind { None, Alloc, Kernel, Scan, Read } kind = None;
  int worker = -1;  // the device's position among the devices in use
  int after = 0;
  // A slab download that would go through the bounce buffers fails
  // instead (tests of reads into page-locked memory).
  bool direct_reads_only = false;
  // >= 0: a resident device reserves at most this many sets for groups of
  // pairs packed as they complete; the others are packed at each launch
  // (tests that the two give the same bits).
  int packed_sets_limit = -1;
  // Plane pairs: a resident volume backprojects its scan's first quarter as
  // plane pairs (plan_resident_pairs), its chunks dealt in mirror images.
  // Off in the shipped library: on four H200s they gained 1-4 % end to end
  // but on three they cost 17 %, where the chunks cannot be dealt in mirror
  // images (docs/DECISIONS.md, "Plane pairs stay off (session 36)").
  bool plane_pairs = false;
  // A resident volume's first groups of each kind of mirror pair (or of
  // quads) are 8, 16 and 32 orbits, then the library's size: the first
  // group of diagonal pairs launches at about view 158 of 1200, not 213.
  // Off in the shipped library: on one H200 it cost (c) 3.7 % and (b) 5 %
  // of kernel time (small launches still read and write every plane), and
  // since it changes the bits it would be on for every GPU count or none
  // (docs/DECISIONS.md, "Ramped first groups stay off (session 37)"). Each
  // small group still takes a whole packed set (reserve_packed_groups sizes
  // them for the library's group size).
  bool ramp_pair_groups = false;
  // A resident device launches no group during the scan; all wait for the
  // finish's spans (tests that both give the same bits, whatever the GPU's
  // pace).
  bool hold_groups = false;
  // A resident volume backprojects by mirror pairs where they serve as
  // many views as quads (the library's choice until session 37; it now
  // takes the quads there): tests of the pairs' path, and A/B runs.
  bool resident_pairs = false;
  // Streamed slabs, the early slab among them, go by mirror pairs where
  // they serve as many views as quads: the library's choice until session
  // 38; it now takes the quads there. Tests of the pairs' path, and A/B
  // runs.
  bool stream_pairs = false;
  // Streaming: the groups are this many mirror pairs (0: the library's),
  // and each group of the early slab waits this long on its GPU before it
  // runs, as on a slow GPU (tests that the scan does not wait for the early
  // slab's backprojection).
  int stream_group_pairs = 0;
  int early_group_hold_ms = 0;
  // Streaming: pinning a batch set's staging (the host memory the slabs
  // from the store are uploaded from) takes this much longer, as on a
  // host where pinning is slow (tests that the scan does not wait for it).
  int staging_hold_ms = 0;
};

// The plan every CUDA context created from now on takes (read once per
// fdk_create), in this process.
void set_fault_plan(const FaultPlan& plan);

// Sets a plan for the contexts created while it lives, then puts the
// previous one back.
class ScopedFaultPlan {
 public:
  explicit ScopedFaultPlan(const FaultPlan& plan);
  ~ScopedFaultPlan();
  ScopedFaultPlan(const ScopedFaultPlan&) = delete;
  ScopedFaultPlan& operator=(const ScopedFaultPlan&) = delete;

 private:
  FaultPlan previous_;
};

}  // namespace fdk::cuda
