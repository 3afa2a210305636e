/*
 * fdk_mpi.h — fdk over MPI ranks (libfdk_mpi), for volumes beyond one
 * machine.
 *
 * Every rank of a communicator holds one fdk_mpi_context. The volume's y
 * planes are split into one contiguous range per rank, in proportion to
 * each rank's capacity (fdk_mpi_config.capacity), on multiples of
 * fdk_config.slab_thickness (of 16 planes when it is 0); each rank plans
 * its own slabs inside its range with its own budgets (fdk_config as on
 * one machine), so the global slab list is the ranks' lists one after the
 * other. A rank needs only the band of detector rows its planes project
 * onto: projections are cut into row bands where they enter, and each rank
 * weights, filters, stores and backprojects only its band (whole views
 * with fdk_config.hann_cutoff_v, which filters along v). Nothing is
 * exchanged after filtering; each rank reads its own slabs.
 *
 * The volume is bit-identical to one process's on the CPU when both use
 * the same nonzero slab_thickness (a voxel's last bit depends on where its
 * slab starts); with slab_thickness 0 the ranks' slabs differ from one
 * process's and so may the last bits. On the GPU a rank's planes are
 * resident or streamed as their size allows, like one process's; the two
 * modes differ in the last bits.
 *
 * Projections enter on one rank (fdk_mpi_config.root = that rank: the
 * acquisition PC) or on every rank (root = FDK_MPI_EVERY_RANK: each pushes
 * its own share, read from a shared file system). Bands travel with
 * MPI_Isend, at most fdk_mpi_config.max_in_flight_bytes per sending rank;
 * a rank receives while it is inside fdk_mpi_push_projection or
 * fdk_mpi_finish, so ranks that push nothing call fdk_mpi_finish at once
 * and receive there while the scan goes on. Between ranks on one host the
 * rows travel through POSIX shared memory (/dev/shm, as many slots of the
 * largest band as max_in_flight_bytes holds, at least one per other rank;
 * named only while fdk_mpi_create runs) and only a small message goes
 * through MPI: the receiver pushes them straight from the sender's slot
 * (fdk_mpi_rank_info.shared_memory_ranks says where this happens). A host
 * where that cannot be set up keeps the messages; the environment
 * variable FDK_MPI_SHARED_MEMORY=0 turns it off.
 *
 * Collective calls (every rank of the communicator, in the same order):
 * fdk_mpi_create, fdk_mpi_finish. All others are local.
 *
 * Errors are collective: fdk_mpi_create and fdk_mpi_finish return the same
 * status on every rank when any rank fails, with a message naming the
 * rank(s) ("rank 2: FDK_ERROR_BUDGET: ..."). A rank that does not reach a
 * collective call within fdk_mpi_config.timeout_s makes the others return
 * FDK_ERROR_INVALID_STATE naming it; the communicator is then in an
 * unknown state and the job should end (MPI_Abort). A rank that dies ends
 * the job through the MPI launcher (mpirun, srun), never a hang here.
 * A band that another rank could not store (its budget, a bad pixel in
 * that band) is reported by the pushing rank's next fdk_mpi_push_projection
 * or fdk_mpi_finish ("projection 17 was not stored on rank 2: ..."), and by
 * fdk_mpi_finish on every rank; the view may be pushed again (it then
 * goes only to the ranks that lack it).
 *
 * Threads and MPI: MPI must be initialised by the caller (MPI_Init or
 * MPI_Init_thread) before fdk_mpi_create and finalised only after
 * fdk_mpi_destroy. The library calls MPI only inside fdk_mpi_create,
 * fdk_mpi_push_projection, fdk_mpi_finish and fdk_mpi_destroy, on the
 * calling thread, so MPI_THREAD_FUNNELED suffices when those calls come
 * from the main thread (MPI_THREAD_SERIALIZED otherwise). It communicates
 * on its own duplicate of the communicator, never on the caller's.
 *
 * The rules of fdk.h hold (status codes, messages, no printing, no
 * throwing, no exit); this header adds no status code.
 */
#ifndef FDK_FDK_MPI_H
#define FDK_FDK_MPI_H

#include <mpi.h>

#include "fdk/fdk.h"

#if defined(__GNUC__) && __GNUC__ >= 4
#  define FDK_MPI_API __attribute__((visibility("default")))
#else
#  define FDK_MPI_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* fdk_mpi_config.root: every rank pushes projections. */
#define FDK_MPI_EVERY_RANK (-1)

typedef struct fdk_mpi_config {
  uint32_t struct_size;     /* sizeof(fdk_mpi_config), set by fdk_mpi_config_init */
  int32_t root;             /* the rank that pushes every projection, or
                               FDK_MPI_EVERY_RANK (the default); the same on
                               every rank */
  double capacity;          /* this rank's share of the planes, relative to
                               the others'; 0 = measured: the GPUs this rank's
                               fdk_config lets it use (64 each, CUDA
                               backend), else its CPU threads. A rank may
                               declare 0 work with a negative value (it
                               still pushes). Budgets bound the share: a
                               rank whose host budget cannot hold its
                               share's views at full precision for certain
                               (or cannot plan it: BUDGET) gets half and
                               the others take the rest, while they have
                               room (fdk_mpi_get_rank_info tells the
                               outcome). */
  uint64_t max_in_flight_bytes; /* bands a pushing rank may have sent and not
                               yet seen received; 0 = 256 MiB; at least one
                               band always travels */
  double timeout_s;         /* how long a collective call waits for the
                               other ranks; 0 = 120 s; within (0, 1e6] */
} fdk_mpi_config;

/* Fills struct_size and the defaults; returns its argument; NULL-safe. */
FDK_MPI_API fdk_mpi_config* fdk_mpi_config_init(fdk_mpi_config* config);

typedef struct fdk_mpi_context fdk_mpi_context;

/* Collective. Every rank passes the same fdk_config (budgets, backend,
   devices and threads may differ: they are the rank's own) and the same
   root; a difference fails on every rank with INVALID_ARGUMENT naming the
   field and the rank. *out is NULL on failure and
   fdk_mpi_last_create_error() says why (also on the ranks that had nothing
   wrong themselves). One rank's argument error (a NULL config or out, a
   bad mpi_config) fails every rank at once, naming it; only MPI not
   initialised or comm MPI_COMM_NULL return on that rank alone (the others
   then fail after timeout_s, naming no rank). A rank whose
   fdk_config.num_threads is 0 takes its share of its host's CPU cores: the
   cores it is bound to, when bound to fewer than the host has, else the
   host's cores divided among the ranks on that host. */
FDK_MPI_API fdk_status fdk_mpi_create(const fdk_config* config,
                                      const fdk_mpi_config* mpi_config,
                                      MPI_Comm comm, fdk_mpi_context** out);

/* Local. Releases the rank's context. Before fdk_mpi_finish has succeeded,
   the other ranks are told (their fdk_mpi_finish fails naming this rank
   instead of waiting for its timeout). NULL-safe.
   Destroyed handles: the library keeps the set of live handles (one
   mutex-guarded lookup per call). fdk_mpi_destroy of a pointer that is not
   a live handle (destroyed already, or never returned by fdk_mpi_create)
   does nothing; every other function given one returns
   FDK_ERROR_INVALID_ARGUMENT ("not a live fdk_mpi handle: destroyed or
   never created"), the message read with fdk_mpi_last_create_error() on
   the calling thread (fdk_mpi_last_error of that pointer gives the same);
   fdk_mpi_finish then returns on this rank alone, like any local refusal.
   The limit: an address that a later fdk_mpi_create happens to reuse is
   that later handle, and cannot be told from the destroyed one. Destroying
   a handle while another thread is inside a call on it remains undefined.
   A NULL handle is INVALID_ARGUMENT ("ctx is NULL") the same way. */
FDK_MPI_API void fdk_mpi_destroy(fdk_mpi_context* ctx);

FDK_MPI_API const char* fdk_mpi_last_error(const fdk_mpi_context* ctx);
FDK_MPI_API const char* fdk_mpi_last_create_error(void);

/* As fdk_push_projection (the whole view, every row), on a pushing rank:
   the root, or any rank with FDK_MPI_EVERY_RANK (a view pushed by two
   ranks fails on the second with DUPLICATE, reported as above). The view
   is checked whole (NaN, range) before any of it leaves this rank.
   INVALID_STATE on a rank that is not the root. */
FDK_MPI_API fdk_status fdk_mpi_push_projection(fdk_mpi_context* ctx,
                                               int32_t index,
                                               const float* pixels,
                                               size_t row_pitch_bytes,
                                               const fdk_view* view);

/* Collective: no more projections anywhere. Receives the bands still on
   their way, then finishes each rank's reconstruction (fdk_finish). Fails
   on every rank when any rank failed (see above); it may then be called
   again by every rank, with the failed views pushed again or not. */
FDK_MPI_API fdk_status fdk_mpi_finish(fdk_mpi_context* ctx);

/* The global slab list, known on every rank from fdk_mpi_create on. */
FDK_MPI_API fdk_status fdk_mpi_slab_count(const fdk_mpi_context* ctx,
                                          int32_t* count);
FDK_MPI_API fdk_status fdk_mpi_get_slab_info(const fdk_mpi_context* ctx,
                                             int32_t slab,
                                             fdk_slab_info* info);
/* The rank that computes and reads slab `slab`. */
FDK_MPI_API fdk_status fdk_mpi_slab_owner(const fdk_mpi_context* ctx,
                                          int32_t slab, int32_t* rank);

/* What one rank holds. */
typedef struct fdk_mpi_rank_info {
  uint32_t struct_size;  /* set by the caller to sizeof(fdk_mpi_rank_info) */
  int32_t plane_begin;   /* its y planes [plane_begin, plane_end); empty */
  int32_t plane_end;     /*   when its capacity was 0 or planes ran out */
  int32_t slab_begin;    /* its slabs [slab_begin, slab_end) of the global */
  int32_t slab_end;      /*   list */
  int32_t row_begin;     /* the detector rows it receives, filters and */
  int32_t row_end;       /*   stores [row_begin, row_end) (empty: none) */
  double capacity;       /* its capacity as used for the split */
  /* Added in 0.9.0 (a caller built against 0.8 passes the smaller
     struct_size and gets the fields above): */
  int32_t shared_memory_ranks; /* the ranks its bands reach through shared
                               memory on their host instead of MPI messages
                               (0 for a rank that pushes nothing, and with
                               FDK_MPI_SHARED_MEMORY=0) */
} fdk_mpi_rank_info;

FDK_MPI_API fdk_status fdk_mpi_get_rank_info(const fdk_mpi_context* ctx,
                                             int32_t rank,
                                             fdk_mpi_rank_info* info);

/* Local, after fdk_mpi_finish: as fdk_read_slab for a slab this rank owns
   (global index); INVALID_STATE naming the owner for another rank's. */
FDK_MPI_API fdk_status fdk_mpi_read_slab(fdk_mpi_context* ctx, int32_t slab,
                                         float* buffer, size_t buffer_bytes);

/* This rank's progress (its views received and pushed, its slabs). */
FDK_MPI_API fdk_status fdk_mpi_get_progress(const fdk_mpi_context* ctx,
                                            fdk_progress* progress);

/* As fdk_cancel, on this rank's reconstruction; the other ranks learn it at
   the next collective call, which fails with CANCELLED naming this rank. */
FDK_MPI_API fdk_status fdk_mpi_cancel(fdk_mpi_context* ctx);

#ifdef __cplusplus
}
#endif

#endif /* FDK_FDK_MPI_H */
