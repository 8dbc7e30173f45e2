/* pyshmem/types.h: constants and status codes shared by the host API, the device API
 * and the Python binding. Plain C so that C, C++ and CUDA translation units include it.
 *
 * Comparison values are OpenSHMEM 1.5's (and NVSHMEM's). Signal operators follow
 * OpenSHMEM (SET=0, ADD=1); NVSHMEM numbers them differently, so ported code must use
 * the names (NVSHMEM_SIGNAL_SET -> PYSHMEM_SIGNAL_SET), not literal numbers. */
#ifndef PYSHMEM_TYPES_H
#define PYSHMEM_TYPES_H

#include "pyshmem/stdint.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Comparison operators for wait_until / test / signal_wait_until. */
enum pyshmem_cmp {
  PYSHMEM_CMP_EQ = 0,
  PYSHMEM_CMP_NE = 1,
  PYSHMEM_CMP_GT = 2,
  PYSHMEM_CMP_LE = 3,
  PYSHMEM_CMP_LT = 4,
  PYSHMEM_CMP_GE = 5
};

/* Signal update operators for put_signal / signal_op. */
enum pyshmem_signal_op {
  PYSHMEM_SIGNAL_SET = 0,
  PYSHMEM_SIGNAL_ADD = 1
};

/* Atomic memory operations (the verb set of OpenSHMEM's AMO routines). */
enum pyshmem_amo_op {
  PYSHMEM_AMO_FETCH = 0,        /* fetch                      */
  PYSHMEM_AMO_SET = 1,          /* set                        */
  PYSHMEM_AMO_SWAP = 2,         /* fetch old, store new       */
  PYSHMEM_AMO_COMPARE_SWAP = 3, /* store new if old == cond   */
  PYSHMEM_AMO_ADD = 4,          /* (fetch_)add value          */
  PYSHMEM_AMO_INC = 5,          /* (fetch_)add 1              */
  PYSHMEM_AMO_AND = 6,
  PYSHMEM_AMO_OR = 7,
  PYSHMEM_AMO_XOR = 8
};

/* Element types understood by typed host routines (AMO, wait/test).
 * Encoded as kind * 16 + size in bytes so the size is `code & 15`. */
enum pyshmem_dtype {
  PYSHMEM_INT8 = 0x01, PYSHMEM_INT16 = 0x02, PYSHMEM_INT32 = 0x04, PYSHMEM_INT64 = 0x08,
  PYSHMEM_UINT8 = 0x11, PYSHMEM_UINT16 = 0x12, PYSHMEM_UINT32 = 0x14, PYSHMEM_UINT64 = 0x18,
  PYSHMEM_FLOAT32 = 0x24, PYSHMEM_FLOAT64 = 0x28,
  /* Reductions only. A size field of 0 stands for 16 bytes. LONGDOUBLE is C's long
   * double where it takes 16 bytes (x86-64's 80-bit extended, aarch64's binary128);
   * where long double is double, use FLOAT64. */
  PYSHMEM_COMPLEX64 = 0x38, PYSHMEM_COMPLEX128 = 0x30, PYSHMEM_LONGDOUBLE = 0x20
};
#define PYSHMEM_DTYPE_SIZE(code) ((size_t)((code) & 15 ? (code) & 15 : 16))

/* Reduction operators (OpenSHMEM's and/or/xor/max/min/sum/prod reductions), the one list:
 * X(NAME, "name", "kind") in enum order. kind "bitwise" takes integer types, "ordered"
 * integer and floating types, "arithmetic" every type. The enum below, the C++ names
 * (coll/reduce.cpp), Python's pyshmem.OP (through _C.REDUCE_OPS) and the device op table
 * (pyshmem/device/_table.py reads this macro) all come from it. */
#define PYSHMEM_REDUCE_OPS(X)                                                                          \
  X(AND, "and", "bitwise") X(OR, "or", "bitwise") X(XOR, "xor", "bitwise") X(MAX, "max", "ordered")    \
  X(MIN, "min", "ordered") X(SUM, "sum", "arithmetic") X(PROD, "prod", "arithmetic")

enum pyshmem_reduce_op {
#define PYSHMEM_REDUCE_OP_ENUM(NAME, name, kind) PYSHMEM_OP_##NAME,
  PYSHMEM_REDUCE_OPS(PYSHMEM_REDUCE_OP_ENUM)
#undef PYSHMEM_REDUCE_OP_ENUM
  PYSHMEM_OP_COUNT /* not an operator: how many there are */
};

/* Status codes returned by the C ABI. 0 is success; each error maps to one Python
 * exception type in the binding (see csrc/python/errors.cpp). */
enum pyshmem_status {
  PYSHMEM_SUCCESS = 0,
  PYSHMEM_ERR_INVALID_ARG = 1,  /* ValueError         */
  PYSHMEM_ERR_PE_RANGE = 2,     /* ValueError         */
  PYSHMEM_ERR_NOT_SYMMETRIC = 3,/* ValueError         */
  PYSHMEM_ERR_TYPE = 4,         /* TypeError          */
  PYSHMEM_ERR_NOMEM = 5,        /* MemoryError        */
  PYSHMEM_ERR_NOT_INIT = 6,     /* RuntimeError       */
  PYSHMEM_ERR_BOOTSTRAP = 7,    /* ConnectionError    */
  PYSHMEM_ERR_SYSTEM = 8,       /* OSError            */
  PYSHMEM_ERR_NOT_IMPLEMENTED = 9, /* NotImplementedError */
  PYSHMEM_ERR_TIMEOUT = 10,     /* TimeoutError       */
  PYSHMEM_ERR_MISMATCH = 11,    /* RuntimeError: PEs disagree in a collective call */
  PYSHMEM_ERR_INTERRUPTED = 12, /* a wait was interrupted (Python: the pending signal's exception) */
  PYSHMEM_ERR_INTERNAL = 13,    /* RuntimeError       */
  PYSHMEM_ERR_OVERFLOW = 14     /* OverflowError: a value does not fit the element type */
};

#ifdef __cplusplus
}
#endif
#endif /* PYSHMEM_TYPES_H */
