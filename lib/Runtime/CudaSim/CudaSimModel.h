/*===- CudaSimModel.h - The CUDA simulator's timing model ---------*- C -*-===*\
|*                                                                            *|
|* The functions libetcopy_cuda_sim exports besides the CUDA Runtime API:     *|
|* the clock of its timing model (docs/CudaSimulator.md, "Timing model").     *|
|* The model gives every API call and every copy a cost from public H200,     *|
|* PCIe Gen5 and NVLink figures, so that benchmarks can compare the schedules *|
|* of copies that compiled programs issue. It is a model for comparing        *|
|* schedules, not a prediction of the time a real GPU would take.             *|
|*                                                                            *|
|* Programs that may also run against the real libcudart should look the      *|
|* functions up with dlsym(RTLD_DEFAULT, ...) instead of linking them.        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ETCOPY_RUNTIME_CUDASIM_CUDASIMMODEL_H
#define ETCOPY_RUNTIME_CUDASIM_CUDASIMMODEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* The modelled host clock, in nanoseconds: the time at which the last API
 * call returned in the model. */
unsigned long long etcopy_cuda_sim_modelled_time_ns(void);

/* Restarts the modelled host clock at 0. The clocks of the streams and
 * events move back by the same amount (not below 0), so work still in flight
 * keeps the time it has left; call it after a synchronisation to time what
 * follows from an idle device. */
void etcopy_cuda_sim_reset_modelled_time(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ETCOPY_RUNTIME_CUDASIM_CUDASIMMODEL_H */
