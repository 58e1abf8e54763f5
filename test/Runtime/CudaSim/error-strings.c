// The simulator's error names and descriptions are libcudart's: compare them
// with the real library (no GPU needed for these two functions).

// REQUIRES: cuda-toolkit
// RUN: %cc %s -o %t -ldl
// RUN: %t %cudart %etcopy_cuda_sim | FileCheck %s

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef const char *(*DescribeFn)(int);

int main(int Argc, char **Argv) {
  if (Argc != 3)
    return 2;
  void *Real = dlopen(Argv[1], RTLD_NOW | RTLD_LOCAL);
  void *Sim = dlopen(Argv[2], RTLD_NOW | RTLD_LOCAL);
  if (!Real || !Sim) {
    printf("dlopen: %s\n", dlerror());
    return 2;
  }
  DescribeFn Names[2], Texts[2];
  void *Libs[2] = {Real, Sim};
  for (int I = 0; I < 2; ++I) {
    Names[I] = (DescribeFn)dlsym(Libs[I], "cudaGetErrorName");
    Texts[I] = (DescribeFn)dlsym(Libs[I], "cudaGetErrorString");
    if (!Names[I] || !Texts[I])
      return 2;
  }
  // Every code the simulator names, and one nobody knows.
  static const int Codes[] = {0,   1,   2,   3,   4,   9,   12,  13,  16,  17,
                              21,  31,  34,  35,  36,  98,  100, 101, 127, 200,
                              201, 400, 401, 600, 700, 701, 702, 704, 705, 712,
                              713, 719, 800, 801, 900, 901, 908, 909, 999,
                              12345};
  int Mismatches = 0;
  for (unsigned I = 0; I < sizeof(Codes) / sizeof(Codes[0]); ++I) {
    int Code = Codes[I];
    if (strcmp(Names[0](Code), Names[1](Code)) ||
        strcmp(Texts[0](Code), Texts[1](Code))) {
      ++Mismatches;
      printf("%d: libcudart '%s' '%s', simulator '%s' '%s'\n", Code,
             Names[0](Code), Texts[0](Code), Names[1](Code), Texts[1](Code));
    }
  }
  printf("mismatches: %d\n", Mismatches);
  // CHECK-NOT: libcudart
  // CHECK: mismatches: 0
  return 0;
}
