/*===- CudaSupportGraphs.c - Graphs of the CUDA support -----------*- C -*-===*\
|*                                                                            *|
|* The runtime support of the functions that convert-gpu-to-cuda-runtime      *|
|* captures as CUDA graphs (see CudaSupport.h, GraphLowering.cpp and          *|
|* docs/CUDALowering.md "CUDA graphs"): the graph cells, their capture,       *|
|* replay and release at exit. It shares the error helpers of CudaSupport.c   *|
|* through CudaSupportInternal.h; the build links it with the other files of  *|
|* the support and keeps its statics internal.                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "CudaSupportInternal.h"

#include <stdlib.h>
#include <string.h>


/*===----------------------------------------------------------------------===*
 * Graphs (GraphLowering.cpp, docs/CUDALowering.md "CUDA graphs")
 *===----------------------------------------------------------------------===*/

/* The cells of every lowered module's captured functions, for the release
 * at exit, recorded at their first capture (like the library cells). */
#define ETCOPY_MAX_GRAPHS 256
etcopy_graph_cell *__etcopy_graph_cells[ETCOPY_MAX_GRAPHS];
uint32_t __etcopy_graph_count;

static void release_graph_cell(etcopy_graph_cell *cell) {
  cudaGraphExec_t exec =
      __atomic_exchange_n(&cell->exec, NULL, __ATOMIC_ACQ_REL);
  if (exec)
    (void)cudaGraphExecDestroy(exec);
  cudaStream_t stream =
      __atomic_exchange_n(&cell->stream, NULL, __ATOMIC_ACQ_REL);
  if (stream)
    (void)cudaStreamDestroy(stream);
}

/* Destroys every instance and capture stream (see "Release at exit" in
 * CudaSupport.c). */
__attribute__((destructor)) static void release_graphs(void) {
  uint32_t count = __atomic_load_n(&__etcopy_graph_count, __ATOMIC_ACQUIRE);
  if (count > ETCOPY_MAX_GRAPHS)
    count = ETCOPY_MAX_GRAPHS;
  for (uint32_t i = 0; i < count; ++i) {
    etcopy_graph_cell *cell =
        __atomic_load_n(&__etcopy_graph_cells[i], __ATOMIC_ACQUIRE);
    if (cell)
      release_graph_cell(cell);
  }
}

static void release_graphs_at_exit(void *unused) {
  (void)unused;
  release_graphs();
}

static void release_cell(etcopy_graph_cell *cell) {
  __atomic_store_n(&cell->busy, 0, __ATOMIC_RELEASE);
}

/* `busy` of a cell whose holder could not begin its capture (the policy
 * returned): the work runs directly, and __etcopy_graph_end only releases
 * the cell, which no other thread could take meanwhile. */
#define ETCOPY_GRAPH_HELD_UNCAPTURED 2

static cudaStream_t run_uncaptured(etcopy_graph_cell *cell,
                                   cudaStream_t stream) {
  __atomic_store_n(&cell->busy, ETCOPY_GRAPH_HELD_UNCAPTURED,
                   __ATOMIC_RELAXED);
  return stream;
}

int32_t __etcopy_graph_replay(etcopy_graph_cell *cell, const int64_t *key,
                              uint64_t count, cudaStream_t stream,
                              ETCOPY_LOCATION) {
  /* Another thread is capturing or launching: run the calls directly. */
  if (__atomic_exchange_n(&cell->busy, 1, __ATOMIC_ACQUIRE))
    return ETCOPY_GRAPH_DIRECT;
  if (cell->exec && memcmp(cell->key, key, count * sizeof(int64_t)) == 0) {
    check(cudaGraphLaunch(cell->exec, stream), ETCOPY_AT, "cudaGraphLaunch",
          "replay the function's graph", 0);
    release_cell(cell);
    return ETCOPY_GRAPH_REPLAYED;
  }
  return ETCOPY_GRAPH_CAPTURING;
}

cudaStream_t __etcopy_graph_begin(etcopy_graph_cell *cell, int32_t state,
                                  cudaStream_t stream, ETCOPY_LOCATION) {
  if (state != ETCOPY_GRAPH_CAPTURING)
    return stream;
  int device = 0;
  if (!check(cudaGetDevice(&device), ETCOPY_AT, "cudaGetDevice",
             "find the device of the function's graph", 0))
    return run_uncaptured(cell, stream);
  if (cell->stream && cell->device != device)
    release_graph_cell(cell);
  if (!cell->stream) {
    cudaStream_t created = NULL;
    if (!check(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking),
               ETCOPY_AT, "cudaStreamCreateWithFlags",
               "create the stream that captures the function's work", 0))
      return run_uncaptured(cell, stream);
    __atomic_store_n(&cell->stream, created, __ATOMIC_RELEASE);
    cell->device = device;
    if (!cell->registered) {
      static char registered;
      cell->registered = 1;
      uint32_t index =
          __atomic_fetch_add(&__etcopy_graph_count, 1, __ATOMIC_ACQ_REL);
      if (index < ETCOPY_MAX_GRAPHS)
        __atomic_store_n(&__etcopy_graph_cells[index], cell, __ATOMIC_RELEASE);
      release_at_exit(&registered, release_graphs_at_exit);
    }
  }
  if (!check(cudaStreamBeginCapture(cell->stream,
                                    cudaStreamCaptureModeThreadLocal),
             ETCOPY_AT, "cudaStreamBeginCapture",
             "capture the function's work into a graph", 0))
    return run_uncaptured(cell, stream);
  return cell->stream;
}

void __etcopy_graph_end(etcopy_graph_cell *cell, int32_t state,
                        const int64_t *key, uint64_t count,
                        cudaStream_t stream, ETCOPY_LOCATION) {
  if (state != ETCOPY_GRAPH_CAPTURING)
    return;
  /* Other threads test the flag (and find it set) meanwhile. */
  if (__atomic_load_n(&cell->busy, __ATOMIC_RELAXED) ==
      ETCOPY_GRAPH_HELD_UNCAPTURED) {
    release_cell(cell);
    return;
  }
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  if (check(cudaStreamEndCapture(cell->stream, &graph), ETCOPY_AT,
            "cudaStreamEndCapture", "capture the function's work into a graph",
            0) &&
      graph) {
    int instantiated =
        check(cudaGraphInstantiate(&exec, graph, 0), ETCOPY_AT,
              "cudaGraphInstantiate", "instantiate the function's graph", 0);
    check(cudaGraphDestroy(graph), ETCOPY_AT, "cudaGraphDestroy",
          "destroy the captured graph once instantiated", 0);
    if (instantiated && exec) {
      cudaGraphExec_t previous =
          __atomic_exchange_n(&cell->exec, exec, __ATOMIC_ACQ_REL);
      if (previous)
        check(cudaGraphExecDestroy(previous), ETCOPY_AT,
              "cudaGraphExecDestroy",
              "destroy the graph of the function's previous inputs", 0);
      memcpy(cell->key, key, count * sizeof(int64_t));
      check(cudaGraphLaunch(exec, stream), ETCOPY_AT, "cudaGraphLaunch",
            "launch the function's graph", 0);
    }
  }
  release_cell(cell);
}
