// heap/fd_exchange.cpp: pass one file descriptor to every PE of the node.
//
// Each local PE listens on an abstract Unix socket (no filesystem entry to leak) named
// after the job; every PE connects to every other local PE and pushes its fd with
// SCM_RIGHTS plus the job token. Pushing (rather than requesting) needs no threads: a
// Unix stream connect completes into the listener's backlog and the small message is
// buffered, so each PE can do all its sends first and then all its accepts.
// A receiver checks the sender's uid (SO_PEERCRED) and the token before using the fd.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/log.h"
#include "heap/heap.h"

namespace pyshmem {
namespace {

struct FdMsg {
  char token[32];
  int32_t pe;
};

sockaddr_un socket_name(const State& s, int pe, const char* what, socklen_t* len) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  // Leading NUL: Linux abstract namespace.
  int n = std::snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "pyshmem-%u-%s-%s-%d", getuid(), s.job_id.c_str(),
                        what, pe);
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
  return a;
}

}  // namespace

std::vector<int> fd_exchange(State& s, int fd, const std::string& token, const char* what) {
  const char* call = "pyshmem.init";
  std::vector<int> fds(s.npes, -1);
  const int nlocal = static_cast<int>(s.local_pes.size());
  if (nlocal <= 1) {
    s.boot->barrier();  // keep the collective call sequence the same on every PE
    s.boot->barrier();
    return fds;
  }
  socklen_t alen;
  sockaddr_un me = socket_name(s, s.pe, what, &alen);
  int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr*>(&me), alen) != 0 || ::listen(lfd, nlocal + 16) != 0)
    fail_errno(call, "cannot create the local socket used to share the symmetric heap");
  s.boot->barrier();  // every local PE now listens

  FdMsg msg{};
  std::memcpy(msg.token, token.data(), sizeof msg.token);
  msg.pe = s.pe;
  for (int peer : s.local_pes) {
    if (peer == s.pe) continue;
    socklen_t plen;
    sockaddr_un addr = socket_name(s, peer, what, &plen);
    int cfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (cfd < 0 || ::connect(cfd, reinterpret_cast<sockaddr*>(&addr), plen) != 0)
      fail_errno(call, "cannot connect to PE " + std::to_string(peer) +
                           " to share the symmetric heap; that PE probably failed in init: see its output");
    iovec iov{&msg, sizeof msg};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctrl;
    mh.msg_controllen = sizeof ctrl;
    cmsghdr* cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    if (::sendmsg(cfd, &mh, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof msg))
      fail_errno(call, "cannot pass the heap segment to PE " + std::to_string(peer));
    ::close(cfd);
  }

  int received = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (received < nlocal - 1) {
    pollfd p{lfd, POLLIN, 0};
    if (std::chrono::steady_clock::now() > deadline) break;
    int pr = ::poll(&p, 1, 1000);
    if (pr < 0 && errno != EINTR) break;
    if (!(p.revents & POLLIN)) continue;
    int cfd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (cfd < 0) continue;
    ucred cred{};
    socklen_t clen = sizeof cred;
    FdMsg in{};
    iovec iov{&in, sizeof in};
    alignas(cmsghdr) char ctrl[CMSG_SPACE(sizeof(int))] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctrl;
    mh.msg_controllen = sizeof ctrl;
    pollfd q{cfd, POLLIN, 0};
    bool ok = ::getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.uid == getuid() &&
              ::poll(&q, 1, 5000) == 1 && ::recvmsg(cfd, &mh, MSG_CMSG_CLOEXEC) == static_cast<ssize_t>(sizeof in);
    int got = -1;
    cmsghdr* cm = ok ? CMSG_FIRSTHDR(&mh) : nullptr;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) std::memcpy(&got, CMSG_DATA(cm), sizeof(int));
    ::close(cfd);
    bool valid = ok && got >= 0 && std::memcmp(in.token, token.data(), sizeof in.token) == 0 && in.pe >= 0 &&
                 in.pe < s.npes && in.pe != s.pe && s.node_of_pe[in.pe] == s.node_of_pe[s.pe] && fds[in.pe] < 0;
    if (!valid) {
      if (got >= 0) ::close(got);
      log_debug("fd_exchange: dropped an unauthenticated connection");
      continue;
    }
    fds[in.pe] = got;
    ++received;
  }
  ::close(lfd);
  if (received < nlocal - 1)
    fail(PYSHMEM_ERR_BOOTSTRAP, call,
         "timed out receiving heap segments from local PEs: a PE on this node probably failed or stalled in "
         "init; see its output (shmemrun --tag-output), and PYSHMEM_DEBUG=1 logs each step");
  s.boot->barrier();  // every local PE has its fds; the abstract names are gone
  return fds;
}

}  // namespace pyshmem
