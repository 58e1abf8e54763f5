# Counts, per call of a method, the device switches, the switches to the
# device already current, the events created and destroyed and the stream
# synchronisations in a simulator trace (ETCOPY_CUDA_SIM_TRACE=1). A call
# ends where the program prints its result (printMemref's header line).
# Device 0 is current at the start.
BEGIN { current = "0" }
/trace: cudaSetDevice\(/ {
  device = $0
  sub(/.*cudaSetDevice\(/, "", device)
  sub(/\).*/, "", device)
  ++switches
  if (device == current)
    ++unchanged
  current = device
}
/trace: cudaEventCreate/ { ++created }
/trace: cudaEventDestroy/ { ++destroyed }
/trace: cudaStreamSynchronize/ { ++syncs }
/Unranked Memref/ {
  printf "call: set_device=%d unchanged=%d events_created=%d " \
         "events_destroyed=%d syncs=%d\n",
         switches, unchanged, created, destroyed, syncs
  switches = unchanged = created = destroyed = syncs = 0
}
