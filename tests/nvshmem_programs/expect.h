// EXPECT for the test programs in this directory: a failed check prints where and what,
// and counts in `failures`, which the program reports at its end ("... OK" or "FAILED").
#pragma once

#include <cstdio>

static int failures = 0;
#define EXPECT(cond)                                                                              \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "PE %d: %s:%d: expected %s\n", nvshmem_my_pe(), __FILE__, __LINE__, #cond); \
      ++failures;                                                                                 \
    }                                                                                             \
  } while (0)
