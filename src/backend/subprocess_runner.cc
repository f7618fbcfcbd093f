#include "backend/subprocess_runner.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "core/activity.h"
#include "core/error.h"
#include "core/logger.h"

namespace parity {

namespace {

// Requests, and the two kinds of answer.
constexpr char kActivate = 'a', kMetadata = 'm', kInfer = 'i', kDeactivate = 'd';
constexpr char kOk = 'k', kFailed = 'e';

// ---- Messages: a kind byte, a 64-bit length, the payload. ----

class Writer {
 public:
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void i64(int64_t v) { bytes(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  uint64_t u64() {
    uint64_t v;
    bytes(&v, sizeof v);
    return v;
  }
  int64_t i64() {
    int64_t v;
    bytes(&v, sizeof v);
    return v;
  }
  std::string str() {
    const uint64_t n = u64();
    check(n);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  void bytes(void* p, size_t n) {
    check(n);
    std::memcpy(p, in_.data() + at_, n);
    at_ += n;
  }

 private:
  void check(uint64_t n) const {
    if (n > in_.size() - at_) throw InternalError("subprocess runner: truncated message");
  }
  const std::string& in_;
  size_t at_ = 0;
};

void put_tensors(Writer& w, const TensorMap& tensors) {
  w.u64(tensors.size());
  for (const auto& [name, t] : tensors) {
    w.str(name);
    w.i64(static_cast<int64_t>(t.dtype()));
    w.u64(t.shape().size());
    for (int64_t d : t.shape()) w.i64(d);
    if (t.dtype() == DataType::kString) {
      const std::string* s = t.data<std::string>();
      for (int64_t i = 0; i < t.numel(); ++i) w.str(s[i]);
    } else {
      w.bytes(t.raw_data(), t.nbytes());
    }
  }
}

TensorMap get_tensors(Reader& r) {
  TensorMap tensors;
  const uint64_t n = r.u64();
  for (uint64_t k = 0; k < n; ++k) {
    std::string name = r.str();
    const auto dtype = static_cast<DataType>(r.i64());
    Shape shape(r.u64());
    for (int64_t& d : shape) d = r.i64();
    Tensor t(dtype, shape);
    if (dtype == DataType::kString) {
      std::string* s = t.data<std::string>();
      for (int64_t i = 0; i < t.numel(); ++i) s[i] = r.str();
    } else {
      r.bytes(t.raw_data(), t.nbytes());
    }
    tensors.set(name, std::move(t));
  }
  return tensors;
}

void put_metadata(Writer& w, const TensorMetadata& meta) {
  w.u64(meta.size());
  for (const TensorMeta& m : meta) {
    w.str(m.name);
    w.i64(m.dtype ? static_cast<int64_t>(*m.dtype) : -1);
    w.i64(m.shape ? static_cast<int64_t>(m.shape->size()) : -1);
    if (m.shape)
      for (const Dim& d : *m.shape) {
        w.i64(d.value);
        w.str(d.param);
      }
  }
}

TensorMetadata get_metadata(Reader& r) {
  TensorMetadata meta;
  const uint64_t n = r.u64();
  for (uint64_t k = 0; k < n; ++k) {
    std::string name = r.str();
    const int64_t dtype = r.i64();
    const int64_t rank = r.i64();
    std::optional<DimList> shape;
    if (rank >= 0) {
      shape.emplace();
      for (int64_t i = 0; i < rank; ++i) {
        Dim d;
        d.value = r.i64();
        d.param = r.str();
        shape->push_back(std::move(d));
      }
    }
    meta.add(std::move(name),
             dtype >= 0 ? std::optional<DataType>(static_cast<DataType>(dtype)) : std::nullopt,
             std::move(shape));
  }
  return meta;
}

// ---- The socket. send() with MSG_NOSIGNAL: a child that died must not kill the parent with
// SIGPIPE. ----

bool send_all(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t sent = ::send(fd, c, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    c += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

bool send_message(int fd, char kind, const std::string& payload) {
  const uint64_t n = payload.size();
  return send_all(fd, &kind, 1) && send_all(fd, &n, sizeof n) &&
         send_all(fd, payload.data(), payload.size());
}

enum class Received { kOk, kClosed, kTimedOut };

// Reads exactly n bytes, waiting at most `deadline_ms` for each chunk (-1: no limit).
Received recv_all(int fd, void* p, size_t n, int deadline_ms) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, deadline_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return Received::kTimedOut;
    const ssize_t got = ::recv(fd, c, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Received::kClosed;
    c += got;
    n -= static_cast<size_t>(got);
  }
  return Received::kOk;
}

Received recv_message(int fd, char& kind, std::string& payload, int deadline_ms) {
  if (Received r = recv_all(fd, &kind, 1, deadline_ms); r != Received::kOk) return r;
  uint64_t n = 0;
  if (Received r = recv_all(fd, &n, sizeof n, deadline_ms); r != Received::kOk) return r;
  payload.resize(n);
  return recv_all(fd, payload.data(), n, deadline_ms);
}

// ---- The child: serve requests until deactivated or the parent goes away. ----

[[noreturn]] void serve(Runner& inner, int fd) {
  for (;;) {
    char request = 0;
    std::string payload;
    if (recv_message(fd, request, payload, -1) != Received::kOk) break;
    Writer answer;
    char kind = kOk;
    try {
      switch (request) {
        case kActivate:
          inner.activate();
          break;
        case kMetadata:
          put_metadata(answer, inner.input_metadata());
          break;
        case kInfer: {
          Reader r(payload);
          const TensorMap outputs = inner.infer(get_tensors(r), /*check_inputs=*/false);
          const double seconds = inner.last_inference_time().value_or(0.0);
          answer.bytes(&seconds, sizeof seconds);
          put_tensors(answer, outputs);
          break;
        }
        case kDeactivate:
          inner.deactivate();
          break;
        default:
          throw InternalError(fmt::format("subprocess runner: unknown request {}", int(request)));
      }
    } catch (const std::exception& e) {
      kind = kFailed;
      answer = Writer();
      answer.bytes(e.what(), std::strlen(e.what()));
    }
    std::fflush(nullptr);  // the child's log lines before the parent goes on
    if (!send_message(fd, kind, answer.take())) break;
    if (request == kDeactivate) break;
  }
  std::fflush(nullptr);
  // _exit: the parent's atexit handlers and static destructors are not the child's to run.
  ::_exit(0);
}

}  // namespace

SubprocessRunner::SubprocessRunner(std::unique_ptr<Runner> inner, SubprocessOptions options)
    : Runner(inner->name(), "subprocess-runner"),
      owned_(std::move(inner)),
      inner_(owned_.get()),
      options_(options) {}

SubprocessRunner::SubprocessRunner(Runner& inner, SubprocessOptions options)
    : Runner(inner.name(), "subprocess-runner"), inner_(&inner), options_(options) {}

SubprocessRunner::~SubprocessRunner() {
  if (child_ > 0) {
    ::kill(child_, SIGKILL);
    reap();
  }
  if (activity_) ::munmap(activity_, kActivityBytes);
}

namespace {
ForkHooks g_fork_hooks;
void run_hook(void (*hook)()) {
  if (hook) hook();
}
}  // namespace

void set_fork_hooks(const ForkHooks& hooks) { g_fork_hooks = hooks; }

void SubprocessRunner::activate_impl() {
  // Shared with the child, which notes there the node it is running (core/activity.h).
  if (!activity_) {
    void* page =
        ::mmap(nullptr, kActivityBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) activity_ = static_cast<char*>(page);
  }
  if (activity_) activity_[0] = '\0';
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    fail("Could not start a process for runner {}: socketpair failed ({})", name(),
         std::strerror(errno));
  // Whatever the parent has buffered would otherwise be printed twice, once by each process.
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  run_hook(g_fork_hooks.before);
  const pid_t pid = ::fork();
  run_hook(pid == 0 ? g_fork_hooks.after_in_child : g_fork_hooks.after_in_parent);
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    fail("Could not start a process for runner {}: fork failed ({})", name(), std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    // The child must not outlive the parent (a killed or interrupted run).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    watch_activity(activity_, activity_ ? kActivityBytes : 0);
    serve(*inner_, fds[1]);
  }
  ::close(fds[1]);
  child_ = pid;
  socket_ = fds[0];
  call(kActivate, {}, "activation");
}

void SubprocessRunner::deactivate_impl() {
  if (child_ <= 0) return;
  call(kDeactivate, {}, "deactivation");
  reap();
}

TensorMetadata SubprocessRunner::input_metadata_impl() {
  const std::string answer = call(kMetadata, {}, "reading its input metadata");
  Reader r(answer);
  return get_metadata(r);
}

TensorMap SubprocessRunner::infer_impl(const TensorMap& feed) {
  Writer w;
  put_tensors(w, feed);
  const std::string answer = call(kInfer, w.take(), "inference");
  Reader r(answer);
  double seconds = 0;
  r.bytes(&seconds, sizeof seconds);
  set_inference_time(seconds);
  return get_tensors(r);
}

std::string SubprocessRunner::call(char request, const std::string& payload, const char* doing) {
  if (child_ <= 0) child_died(doing, "its process is not running");
  if (!send_message(socket_, request, payload)) child_died(doing, "");
  const int deadline_ms = options_.timeout ? static_cast<int>(*options_.timeout * 1000.0) : -1;
  char kind = 0;
  std::string answer;
  switch (recv_message(socket_, kind, answer, deadline_ms)) {
    case Received::kOk:
      break;
    case Received::kClosed:
      child_died(doing, "");
    case Received::kTimedOut:
      ::kill(child_, SIGKILL);
      child_died(doing, fmt::format("it did not answer within {} s (--subprocess-timeout) and was "
                                    "killed",
                                    *options_.timeout));
  }
  if (kind == kFailed) throw Error(answer);
  return answer;
}

void SubprocessRunner::child_died(const char* doing, const std::string& detail) {
  std::string how = detail;
  if (how.empty() && child_ > 0) {
    int status = 0;
    pid_t got;
    do got = ::waitpid(child_, &status, 0);
    while (got < 0 && errno == EINTR);
    if (got == child_) {
      child_ = -1;
      if (WIFSIGNALED(status))
        how = fmt::format("its process was killed by signal {} ({})", WTERMSIG(status),
                          strsignal(WTERMSIG(status)));
      else if (WIFEXITED(status))
        how = fmt::format("its process exited with status {}", WEXITSTATUS(status));
    }
  }
  reap();
  if (how.empty()) how = "its process stopped answering";
  if (activity_ && activity_[0]) how += fmt::format(" while running {}", activity_);
  throw Error(fmt::format(
      "{} | Terminated prematurely during {}: {}. The backend (or a plugin it loaded) crashed; "
      "the other runners are not affected. Run it without --use-subprocess under a debugger to "
      "see where",
      name(), doing, how));
}

void SubprocessRunner::reap() {
  if (socket_ >= 0) {
    ::close(socket_);
    socket_ = -1;
  }
  if (child_ > 0) {
    int status = 0;
    while (::waitpid(child_, &status, 0) < 0 && errno == EINTR) {
    }
    child_ = -1;
  }
}

}  // namespace parity
