/* pyshmem/version.h: library version and the OpenSHMEM specification version it follows. */
#ifndef PYSHMEM_VERSION_H
#define PYSHMEM_VERSION_H
#define PYSHMEM_VERSION_MAJOR 0
#define PYSHMEM_VERSION_MINOR 1
#define PYSHMEM_VERSION_PATCH 0
/* OpenSHMEM specification version implemented (shmem_info_get_version). */
#define PYSHMEM_MAJOR_VERSION 1
#define PYSHMEM_MINOR_VERSION 5
#define PYSHMEM_VENDOR_STRING "pyshmem"
#define PYSHMEM_MAX_NAME_LEN 256
#endif
