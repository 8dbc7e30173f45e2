// bootstrap/tcp.cpp: authenticated TCP rendezvous, a star around PE 0.
//
// PE 0 serves: it listens on PYSHMEM_BOOTSTRAP_FD (a socket the launcher created and
// passed down, so no port can be stolen between choosing and binding it) or binds
// PYSHMEM_BOOTSTRAP_ADDR itself. Every other PE connects and presents a hello with the
// job secret; connections that do not present it are dropped. Each collective is one
// round: every PE sends a length-prefixed blob to PE 0, PE 0 answers each PE.
// O(P) at PE 0, which is fine for what goes through it (init, allocation checks).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "bootstrap/bootstrap.h"
#include "core/error.h"
#include "core/log.h"

namespace pyshmem {
namespace {

constexpr char kMagic[8] = {'P', 'Y', 'S', 'H', 'B', 'O', 'O', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kMaxSecret = 64;
constexpr uint64_t kMaxBlob = 1ull << 30;  // sanity bound on a length prefix from the wire

struct Hello {
  char magic[8];
  uint32_t version;
  int32_t pe;
  int32_t npes;
  uint32_t secret_len;
  unsigned char secret[kMaxSecret];
};

using Clock = std::chrono::steady_clock;

std::string hex_to_bytes(const std::string& hex) {
  if (hex.size() < 32 || hex.size() % 2 || hex.size() / 2 > kMaxSecret)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_JOB_SECRET must be 32 to 128 hex digits (shmemrun sets it; when starting PEs yourself "
         "give every PE the same value, e.g. from `python -c 'import secrets; print(secrets.token_hex(32))'`)");
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    if (std::sscanf(hex.c_str() + i, "%2x", &v) != 1 || !isxdigit(hex[i]) || !isxdigit(hex[i + 1]))
      fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
           "PYSHMEM_JOB_SECRET is not a hex string; give every PE the same 64 hex digits (shmemrun sets it)");
    out.push_back(static_cast<char>(v));
  }
  return out;
}

bool const_time_equal(const unsigned char* a, const unsigned char* b, size_t n) {
  unsigned char diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

// Waits until fd is readable/writable or the deadline passes. Returns false on timeout.
bool wait_fd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left > 1000 ? 1000 : left));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

void send_all(int fd, const void* buf, size_t len, int peer) {
  const char* p = static_cast<const char*>(buf);
  while (len) {
    ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail_inner(PYSHMEM_ERR_BOOTSTRAP, "bootstrap",
           "lost the rendezvous connection to PE " + std::to_string(peer) + " (" + std::strerror(errno) +
               "); that PE probably exited or crashed");
    p += n;
    len -= static_cast<size_t>(n);
  }
}

// Receives exactly len bytes. With a deadline, gives up (returns false) when it passes.
bool recv_all(int fd, void* buf, size_t len, int peer, const Clock::time_point* deadline = nullptr) {
  char* p = static_cast<char*>(buf);
  while (len) {
    if (deadline && !wait_fd(fd, POLLIN, *deadline)) return false;
    ssize_t n = ::recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (deadline) return false;
      fail_inner(PYSHMEM_ERR_BOOTSTRAP, "bootstrap",
           "PE " + std::to_string(peer) +
               " closed its rendezvous connection; it probably exited or crashed (see its output)");
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

void send_blob(int fd, const std::string& blob, int peer) {
  uint64_t len = blob.size();
  send_all(fd, &len, sizeof len, peer);
  if (len) send_all(fd, blob.data(), blob.size(), peer);
}

std::string recv_blob(int fd, int peer) {
  uint64_t len = 0;
  recv_all(fd, &len, sizeof len, peer);
  if (len > kMaxBlob)
    fail_inner(PYSHMEM_ERR_BOOTSTRAP, "bootstrap", "malformed message from PE " + std::to_string(peer) +
                                                 " (a PE of a different pyshmem version, or not a PE of this job?)");
  std::string blob(len, '\0');
  if (len) recv_all(fd, &blob[0], len, peer);
  return blob;
}

void set_nodelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void split_addr(const std::string& addr, std::string* host, std::string* port) {
  auto colon = addr.rfind(':');
  if (addr.empty() || colon == std::string::npos || colon + 1 == addr.size())
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
         "PYSHMEM_BOOTSTRAP_ADDR='" + addr + "' must be host:port (shmemrun sets it)");
  *host = addr.substr(0, colon);
  if (host->size() > 2 && (*host)[0] == '[') *host = host->substr(1, host->size() - 2);
  *port = addr.substr(colon + 1);
}

addrinfo* resolve(const std::string& addr, bool passive) {
  std::string host, port;
  split_addr(addr, &host, &port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || !res)
    fail(PYSHMEM_ERR_BOOTSTRAP, "pyshmem.init",
         "cannot resolve PYSHMEM_BOOTSTRAP_ADDR='" + addr + "': " + gai_strerror(rc) +
             "; use an IP address, or a host name every node can resolve");
  return res;
}

class TcpBootstrap final : public Bootstrap {
 public:
  explicit TcpBootstrap(const Config& c) : rank_(static_cast<int>(c.PE)), size_(static_cast<int>(c.NPES)) {
    std::string secret = hex_to_bytes(c.JOB_SECRET);
    auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(c.BOOTSTRAP_TIMEOUT * 1000));
    if (rank_ == 0)
      serve(c, secret, deadline);
    else
      join(c, secret, deadline);
  }

  ~TcpBootstrap() override {
    for (int fd : peers_)
      if (fd >= 0) ::close(fd);
    if (root_fd_ >= 0) ::close(root_fd_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(const std::string& mine) override {
    std::vector<std::string> all(size_);
    if (rank_ == 0) {
      all[0] = mine;
      for (int p = 1; p < size_; ++p) all[p] = recv_blob(peers_[p], p);
      std::string packed = pack(all);
      for (int p = 1; p < size_; ++p) send_blob(peers_[p], packed, p);
      return all;
    }
    send_blob(root_fd_, mine, 0);
    return unpack(recv_blob(root_fd_, 0));
  }

  std::string bcast(const std::string& mine, int root) override {
    if (root == 0) {
      if (rank_ == 0) {
        for (int p = 1; p < size_; ++p) send_blob(peers_[p], mine, p);
        return mine;
      }
      return recv_blob(root_fd_, 0);
    }
    return allgather(rank_ == root ? mine : std::string())[root];
  }

  void barrier() override { allgather(std::string()); }

 private:
  static std::string pack(const std::vector<std::string>& blobs) {
    std::string out;
    for (const auto& b : blobs) {
      uint64_t len = b.size();
      out.append(reinterpret_cast<const char*>(&len), sizeof len);
      out.append(b);
    }
    return out;
  }

  std::vector<std::string> unpack(const std::string& packed) const {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos + sizeof(uint64_t) <= packed.size()) {
      uint64_t len;
      std::memcpy(&len, packed.data() + pos, sizeof len);
      pos += sizeof len;
      if (len > packed.size() - pos) break;
      out.emplace_back(packed.data() + pos, len);
      pos += len;
    }
    if (static_cast<int>(out.size()) != size_ || pos != packed.size())
      fail_inner(PYSHMEM_ERR_BOOTSTRAP, "bootstrap", "malformed allgather reply from PE 0 (PE 0 runs a different pyshmem version?)");
    return out;
  }

  int listen_socket(const Config& c) {
    if (c.BOOTSTRAP_FD >= 0) {
      int fd = static_cast<int>(c.BOOTSTRAP_FD);
      int type = 0;
      socklen_t len = sizeof type;
      if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
        fail(PYSHMEM_ERR_BOOTSTRAP, "pyshmem.init",
             "PYSHMEM_BOOTSTRAP_FD=" + std::to_string(fd) + " is not an inherited listening socket; "
             "unset it unless the launcher passed one");
      ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // keep it out of the PE's own child processes
      return fd;
    }
    addrinfo* res = resolve(c.BOOTSTRAP_ADDR, true);
    int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, size_ + 16) != 0) {
      ::freeaddrinfo(res);
      fail_errno("pyshmem.init", "PE 0 cannot listen on PYSHMEM_BOOTSTRAP_ADDR='" + c.BOOTSTRAP_ADDR +
                             "' (its host must be an address of PE 0's machine and the port free; port 0 picks one)");
    }
    ::freeaddrinfo(res);
    return fd;
  }

  // Accepts until every PE has presented a valid hello. Pending connections are
  // polled together, each with its own 5 s hello deadline, so silent or slow
  // connections (other local users can connect to the port) cannot stall the others.
  void serve(const Config& c, const std::string& secret, Clock::time_point deadline) {
    struct Pending {
      int fd;
      Clock::time_point until;
      size_t got;
      Hello h;
    };
    int lfd = listen_socket(c);
    peers_.assign(size_, -1);
    std::vector<Pending> pending;
    int joined = 0;
    auto cleanup = [&] {
      ::close(lfd);
      for (auto& q : pending) ::close(q.fd);
      for (int& fd : peers_)
        if (fd >= 0) ::close(fd), fd = -1;  // joined PEs see the failure at once
    };
    while (joined < size_ - 1) {
      const auto now = Clock::now();
      if (now >= deadline) {
        std::string missing;
        for (int p = 1; p < size_; ++p)
          if (peers_[p] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
        cleanup();
        fail(PYSHMEM_ERR_TIMEOUT, "pyshmem.init",
             "PEs " + missing + " did not reach the rendezvous within PYSHMEM_BOOTSTRAP_TIMEOUT=" +
                 std::to_string(c.BOOTSTRAP_TIMEOUT) + " s; check that they were started");
      }
      std::vector<pollfd> fds{{lfd, POLLIN, 0}};
      for (auto& q : pending) fds.push_back({q.fd, POLLIN, 0});
      ::poll(fds.data(), fds.size(), 200);
      if (fds[0].revents & POLLIN) {
        int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) pending.push_back(Pending{fd, Clock::now() + std::chrono::seconds(5), 0, Hello{}});
      }
      for (size_t k = 0; k < pending.size();) {
        Pending& q = pending[k];
        ssize_t n = ::recv(q.fd, reinterpret_cast<char*>(&q.h) + q.got, sizeof q.h - q.got, 0);
        if (n > 0) q.got += static_cast<size_t>(n);
        bool closed = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        if (q.got < sizeof q.h && !closed && Clock::now() < q.until) {
          ++k;
          continue;
        }
        Pending done = q;
        pending.erase(pending.begin() + static_cast<ptrdiff_t>(k));
        const Hello& h = done.h;
        bool ok = done.got == sizeof h && std::memcmp(h.magic, kMagic, 8) == 0 && h.version == kVersion &&
                  h.secret_len == secret.size() &&
                  const_time_equal(h.secret, reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
        const char* why = ok ? nullptr : "bad hello or wrong job secret";
        if (ok && (h.npes != size_ || h.pe <= 0 || h.pe >= size_)) why = "PE number or job size disagree with PE 0";
        if (ok && !why && peers_[h.pe] >= 0) why = "duplicate PE number";
        unsigned char ack = why ? 0 : 1;
        ::send(done.fd, &ack, 1, MSG_NOSIGNAL);
        if (why) {
          log_debug("bootstrap: rejected a connection: %s", why);
          ::close(done.fd);
          if (ok) {
            cleanup();
            fail(PYSHMEM_ERR_BOOTSTRAP, "pyshmem.init",
                 std::string("a PE presenting the job secret was rejected: ") + why + " (PE " + std::to_string(h.pe) +
                     " of " + std::to_string(h.npes) +
                     "); every PE needs the same PYSHMEM_NPES and its own PYSHMEM_PE (shmemrun sets both)");
          }
          continue;
        }
        int flags = ::fcntl(done.fd, F_GETFL);
        ::fcntl(done.fd, F_SETFL, flags & ~O_NONBLOCK);
        set_nodelay(done.fd);
        peers_[h.pe] = done.fd;
        ++joined;
      }
    }
    for (auto& q : pending) ::close(q.fd);
    ::close(lfd);
  }

  void join(const Config& c, const std::string& secret, Clock::time_point deadline) {
    if (c.BOOTSTRAP_ADDR.empty())
      fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init",
           "PYSHMEM_NPES=" + std::to_string(size_) + " but PYSHMEM_BOOTSTRAP_ADDR is not set; start PEs with shmemrun");
    int err = 0;
    for (;;) {
      addrinfo* res = resolve(c.BOOTSTRAP_ADDR, false);
      int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int rc = fd >= 0 ? ::connect(fd, res->ai_addr, res->ai_addrlen) : -1;
      err = errno;
      ::freeaddrinfo(res);
      if (rc == 0) {
        Hello h{};
        std::memcpy(h.magic, kMagic, 8);
        h.version = kVersion;
        h.pe = rank_;
        h.npes = size_;
        h.secret_len = static_cast<uint32_t>(secret.size());
        std::memcpy(h.secret, secret.data(), secret.size());
        send_all(fd, &h, sizeof h, 0);
        unsigned char ack = 0;
        if (!recv_all(fd, &ack, 1, 0, &deadline)) {
          ::close(fd);
          fail(PYSHMEM_ERR_TIMEOUT, "pyshmem.init",
               "the rendezvous at " + c.BOOTSTRAP_ADDR + " did not answer within PYSHMEM_BOOTSTRAP_TIMEOUT=" +
                   std::to_string(c.BOOTSTRAP_TIMEOUT) + " s (is PE 0 stuck or gone?)");
        }
        if (ack != 1) {
          ::close(fd);
          fail(PYSHMEM_ERR_BOOTSTRAP, "pyshmem.init",
               "the rendezvous at " + c.BOOTSTRAP_ADDR + " rejected this PE (wrong PYSHMEM_JOB_SECRET, PE number or job size)");
        }
        set_nodelay(fd);
        root_fd_ = fd;
        return;
      }
      if (fd >= 0) ::close(fd);
      if (Clock::now() >= deadline)
        fail(PYSHMEM_ERR_TIMEOUT, "pyshmem.init",
             "cannot reach the rendezvous at " + c.BOOTSTRAP_ADDR + " (" + std::strerror(err) +
                 ") within PYSHMEM_BOOTSTRAP_TIMEOUT=" + std::to_string(c.BOOTSTRAP_TIMEOUT) + " s; is PE 0 running?");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  int rank_, size_;
  std::vector<int> peers_;  // PE 0: socket per PE
  int root_fd_ = -1;        // other PEs: socket to PE 0
};

}  // namespace

std::unique_ptr<Bootstrap> bootstrap_tcp_create(const Config& config) {
  return std::make_unique<TcpBootstrap>(config);
}

}  // namespace pyshmem
