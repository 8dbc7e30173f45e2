// pyshmem/nvshmem_mpi_bootstrap.cpp: nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) for
// programs built with pyshmem-nvcc that link MPI. The wrapper compiles this file into
// the program, with the program's own flags (so its <mpi.h>), when the link line names
// MPI (-lmpi, -lmpi_cxx, -lmpich ...): <nvshmem.h> only declares the hook (weak), since
// whether <mpi.h> comes before or after it in a source must not matter.
//
// Any communicator: its rank 0 makes a unique id (the rendezvous, pyshmem/
// nvshmem_host_uid.h), MPI_Bcast hands it to the other ranks, and each starts pyshmem as
// PE <its rank in the communicator>. The rendezvous listens on the loopback address when
// the communicator's ranks share one node, else on this node's address (or where
// PYSHMEM_BOOTSTRAP_ADDR says).
#include <mpi.h>
#include <nvshmem.h>
#include <unistd.h>

#include <string>

namespace {

// The address rank 0's rendezvous listens on: PYSHMEM_BOOTSTRAP_ADDR's host, loopback on
// one node, else the node's own address (refused when it resolves to loopback).
int rendezvous_host(MPI_Comm comm, std::string* host) {
  MPI_Comm node;
  int size = 0, node_size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  if (node_size == size) {
    *host = "127.0.0.1";
    return 0;
  }
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  addrinfo hints = {}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(name, nullptr, &hints, &res) != 0 || !res) return 1;
  char text[INET_ADDRSTRLEN] = "";
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, text, sizeof text);
  freeaddrinfo(res);
  *host = text;
  if (host->rfind("127.", 0) == 0) {
    fprintf(stderr, "pyshmem: NVSHMEMX_INIT_WITH_MPI_COMM: the ranks run on several nodes but this node's name %s "
                    "resolves to the loopback address %s; set PYSHMEM_BOOTSTRAP_ADDR=<an address of rank 0's node that "
                    "the others reach>:0\n", name, text);
    return 1;
  }
  return 0;
}

}  // namespace

extern "C" int pyshmem_nvshmem_mpi_comm_init(void* mpi_comm) {
  MPI_Comm comm = *static_cast<MPI_Comm*>(mpi_comm);
  int rank = 0, size = 0;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
    fprintf(stderr, "pyshmem: nvshmemx_init_attr: attr->mpi_comm is not a valid communicator\n");
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
  std::string host;
  int status = rendezvous_host(comm, &host) ? NVSHMEMX_ERROR_INTERNAL : 0;  // collective
  if (rank == 0 && status == 0) {
    const char* given = getenv("PYSHMEM_BOOTSTRAP_ADDR");
    status = given && *given ? nvshmemx_get_uniqueid(&id) : pyshmem::nvshmem_host::make_uniqueid(&id, host, 0);
  }
  // Every rank learns whether rank 0 succeeded, so all fail together.
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  if (status != 0) {
    if (rank != 0) fprintf(stderr, "pyshmem: nvshmemx_init_attr: rank 0 could not open the rendezvous\n");
    return status;
  }
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
  nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
  nvshmemx_set_attr_uniqueid_args(rank, size, &id, &attr);
  return nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
}
