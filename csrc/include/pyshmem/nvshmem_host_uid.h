/* pyshmem/nvshmem_host_uid.h: NVSHMEM's unique-id initialisation (nvshmemx_get_uniqueid,
 * nvshmemx_set_attr_uniqueid_args, nvshmemx_init_attr with NVSHMEMX_INIT_WITH_UNIQUEID)
 * and the MPI initialisation built on it, for programs built with pyshmem-nvcc (both
 * targets; included by pyshmem/nvshmem_host.h).
 *
 * A unique id is pyshmem's rendezvous: the process that makes it (the future PE 0) opens
 * the listening socket of pyshmem's TCP bootstrap and draws a 32-byte job secret; the id
 * holds the socket's address, the secret and a job id. The program hands the id to every
 * process (MPI_Bcast, a file, a store ...); each passes its rank and the rank count, and
 * nvshmemx_init_attr starts pyshmem with them as PYSHMEM_PE/NPES, the address and the
 * secret set for that one call (so neither reaches child processes). Peers without the
 * secret are refused by the bootstrap, as under shmemrun. The socket listens on the
 * loopback address unless PYSHMEM_BOOTSTRAP_ADDR (host:port, port 0 for any) names
 * another, which processes on several nodes need. */
#ifndef PYSHMEM_NVSHMEM_HOST_UID_H
#define PYSHMEM_NVSHMEM_HOST_UID_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <string>

/* 128 bytes, as NVSHMEM's: a version and an opaque body (pyshmem's rendezvous). */
typedef struct {
  int version;
  char internal[124];
} nvshmemx_uniqueid_t;
#define NVSHMEMX_UNIQUEID_INITIALIZER {1, {0}}

namespace pyshmem {
namespace nvshmem_host {

/* The id's body: a tag, the secret, the job id and the rendezvous address. */
struct UidBody {
  char tag[4];                  // "PSID"
  unsigned char secret[32];     // the job secret
  unsigned char job[8];         // the job id
  char addr[124 - 4 - 32 - 8];  // "host:port", NUL-terminated
};
static_assert(sizeof(UidBody) == sizeof(nvshmemx_uniqueid_t::internal), "the body fills the id");

/* What this process keeps of the id it made: the listening socket PE 0's bootstrap serves
 * on, and which id it belongs to (-1 / zeros when none). */
struct UidServer {
  int fd = -1;
  unsigned char secret[32] = {};
};
inline UidServer& uid_server() {
  static UidServer s;
  return s;
}

inline std::string hex(const unsigned char* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += digits[p[i] >> 4], out += digits[p[i] & 15];
  return out;
}

/* Opens the listening socket on `host`:`port` (port 0: any) and writes a fresh id for it.
 * Returns 0, or NVSHMEMX_ERROR_INTERNAL with the reason printed. */
inline int make_uniqueid(nvshmemx_uniqueid_t* id, const std::string& host, int port) {
  const char* call = "nvshmemx_get_uniqueid";
  if (!id) {
    fprintf(stderr, "pyshmem: %s: id is NULL\n", call);
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  addrinfo hints = {}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.c_str(), service.c_str(), &hints, &res) != 0 || !res) {
    fprintf(stderr, "pyshmem: %s: cannot resolve the rendezvous host '%s' (PYSHMEM_BOOTSTRAP_ADDR)\n", call,
            host.c_str());
    return NVSHMEMX_ERROR_INTERNAL;
  }
  const int fd = socket(res->ai_family, SOCK_STREAM, 0);
  const bool ok = fd >= 0 && bind(fd, res->ai_addr, res->ai_addrlen) == 0 && listen(fd, 1024) == 0;
  freeaddrinfo(res);
  sockaddr_storage at = {};
  socklen_t len = sizeof at;
  char shown[INET6_ADDRSTRLEN] = "";
  int bound_port = 0;
  if (ok && getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len) == 0) {
    if (at.ss_family == AF_INET6) {
      const sockaddr_in6* a = reinterpret_cast<const sockaddr_in6*>(&at);
      inet_ntop(AF_INET6, &a->sin6_addr, shown, sizeof shown);
      bound_port = ntohs(a->sin6_port);
    } else {
      const sockaddr_in* a = reinterpret_cast<const sockaddr_in*>(&at);
      inet_ntop(AF_INET, &a->sin_addr, shown, sizeof shown);
      bound_port = ntohs(a->sin_port);
    }
  }
  UidBody body = {};
  if (!ok || !bound_port || getrandom(body.secret, sizeof body.secret, 0) != sizeof body.secret ||
      getrandom(body.job, sizeof body.job, 0) != sizeof body.job) {
    fprintf(stderr, "pyshmem: %s: cannot open the rendezvous on %s:%d: %s\n", call, host.c_str(), port,
            strerror(errno));
    if (fd >= 0) close(fd);
    return NVSHMEMX_ERROR_INTERNAL;
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);  // PE 0's bootstrap takes it over; children get none
  const std::string addr = (at.ss_family == AF_INET6 ? "[" + std::string(shown) + "]" : std::string(shown)) + ":" +
                           std::to_string(bound_port);
  memcpy(body.tag, "PSID", 4);
  snprintf(body.addr, sizeof body.addr, "%s", addr.c_str());
  UidServer& server = uid_server();
  if (server.fd >= 0) close(server.fd);  // a second id replaces the first
  server.fd = fd;
  memcpy(server.secret, body.secret, sizeof body.secret);
  id->version = 1;
  memcpy(id->internal, &body, sizeof body);
  return 0;
}

/* Starts pyshmem as PE `rank` of `nranks` at the rendezvous of `id` (see the file
 * comment). Rank 0 must be the process that made the id. Returns 0, or a nonzero status
 * with the reason printed (nothing started then). */
inline int init_with_uniqueid(const nvshmemx_uniqueid_t* id, int rank, int nranks) {
  const char* call = "nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID)";
  UidBody body;
  if (!id) {
    fprintf(stderr, "pyshmem: %s: no id: call nvshmemx_set_attr_uniqueid_args first\n", call);
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  memcpy(&body, id->internal, sizeof body);
  if (memcmp(body.tag, "PSID", 4) != 0 || !memchr(body.addr, 0, sizeof body.addr)) {
    fprintf(stderr, "pyshmem: %s: the id was not made by nvshmemx_get_uniqueid (rank 0 makes it and hands the same "
                    "128 bytes to every rank)\n", call);
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    fprintf(stderr, "pyshmem: %s: rank %d of %d ranks is out of range\n", call, rank, nranks);
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  UidServer& server = uid_server();
  const bool serving = server.fd >= 0 && memcmp(server.secret, body.secret, sizeof body.secret) == 0;
  if (rank == 0 && !serving && nranks > 1) {
    fprintf(stderr, "pyshmem: %s: rank 0 must be the process that called nvshmemx_get_uniqueid for this id (it "
                    "serves the rendezvous)\n", call);
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  const std::string fd = rank == 0 && serving ? std::to_string(server.fd) : std::string();
  const std::string settings[][2] = {
      {"PYSHMEM_PE", std::to_string(rank)},          {"PYSHMEM_NPES", std::to_string(nranks)},
      {"PYSHMEM_BOOTSTRAP_ADDR", body.addr},         {"PYSHMEM_JOB_SECRET", hex(body.secret, sizeof body.secret)},
      {"PYSHMEM_JOB_ID", "uid" + hex(body.job, 6)},  {"PYSHMEM_LAUNCHER", "nvshmem-uniqueid"},
      {"PYSHMEM_BOOTSTRAP_FD", fd}};
  // Set for the init only: restored after, so children of this PE see no secret.
  std::string saved[7];
  bool had[7];
  for (int i = 0; i < 7; ++i) {
    const char* old = getenv(settings[i][0].c_str());
    had[i] = old != nullptr;
    saved[i] = old ? old : "";
    if (settings[i][1].empty()) unsetenv(settings[i][0].c_str());
    else setenv(settings[i][0].c_str(), settings[i][1].c_str(), 1);
  }
  nvshmem_init();  // ends the process with the reason when the rendezvous fails
  for (int i = 0; i < 7; ++i) {
    if (had[i]) setenv(settings[i][0].c_str(), saved[i].c_str(), 1);
    else unsetenv(settings[i][0].c_str());
  }
  if (rank == 0 && serving) server.fd = -1;  // the bootstrap owns (and has closed) it now
  memset(server.secret, 0, sizeof server.secret);
  return 0;
}

}  // namespace nvshmem_host
}  // namespace pyshmem

/* Makes a unique id for a job whose PE 0 is this process (call it there, once, before
 * handing the id to the other processes): opens the rendezvous, on the loopback address
 * unless PYSHMEM_BOOTSTRAP_ADDR=host:port says where. Returns 0, or nonzero with the
 * reason printed. */
inline int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t* id) {
  const char* given = getenv("PYSHMEM_BOOTSTRAP_ADDR");
  std::string host = "127.0.0.1";
  int port = 0;
  if (given && *given) {
    const std::string text = given;
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon + 1 == text.size() ||
        text.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
      fprintf(stderr, "pyshmem: nvshmemx_get_uniqueid: PYSHMEM_BOOTSTRAP_ADDR=%s must be host:port (port 0 picks a "
                      "free one)\n", given);
      return NVSHMEMX_ERROR_INVALID_VALUE;
    }
    host = text.substr(0, colon);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    port = atoi(text.c_str() + colon + 1);
  }
  return ::pyshmem::nvshmem_host::make_uniqueid(id, host, port);
}

/* Records rank, rank count and id in attr for nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID).
 * Returns 0, or NVSHMEMX_ERROR_INVALID_VALUE for a NULL pointer or a rank out of range. */
inline int nvshmemx_set_attr_uniqueid_args(const int myrank, const int nranks, const nvshmemx_uniqueid_t* id,
                                           nvshmemx_init_attr_t* attr) {
  if (!id || !attr || nranks < 1 || myrank < 0 || myrank >= nranks) {
    fprintf(stderr, "pyshmem: nvshmemx_set_attr_uniqueid_args: needs an id, an attr and 0 <= myrank (%d) < nranks "
                    "(%d)\n", myrank, nranks);
    return NVSHMEMX_ERROR_INVALID_VALUE;
  }
  attr->args.uid_args.id = id;
  attr->args.uid_args.myrank = myrank;
  attr->args.uid_args.nranks = nranks;
  return 0;
}

#endif /* PYSHMEM_NVSHMEM_HOST_UID_H */
