#include "runtime/vulkan/compile_workers.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

#include "runtime/core/error.h"
#include "runtime/core/logger.h"
#include "runtime/vulkan/compile_worker_path.h"
#include "runtime/vulkan/compute_commands.h"
#include "runtime/vulkan/context.h"
#include "runtime/vulkan/shader_table.h"

extern char** environ;

namespace vkg::vk {

namespace {

constexpr unsigned kMaxWorkers = 8;
// How long a worker may take to open its device, and to compile one pipeline (a cold fp16
// pipeline took over 10 s once on a fresh machine: ComputeCommands::kDefaultTimeout).
constexpr auto kOpenTimeout = std::chrono::seconds(30);
constexpr auto kCompileTimeout = std::chrono::seconds(120);

// One line from `fd` (without its newline) within `timeout`, reading through `buffer`; nullopt on
// end of file, an error or the timeout.
std::optional<std::string> read_line(int fd, std::string& buffer, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const size_t newline = buffer.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    buffer.append(chunk, size_t(n));
  }
}

// Writes `line` and a newline; false when the other side is gone (no SIGPIPE).
bool write_line(int fd, const std::string& line) {
  const std::string text = line + '\n';
  size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = ::send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += size_t(n);
  }
  return true;
}

// A message as one line of the protocol.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

unsigned usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  unsigned cores = sched_getaffinity(0, sizeof set, &set) == 0 ? unsigned(CPU_COUNT(&set)) : 0;
  if (cores == 0) cores = std::max(1u, std::thread::hardware_concurrency());
  if (const char* lp = std::getenv("LP_NUM_THREADS"); lp != nullptr && *lp != '\0') {
    const int n = std::atoi(lp);
    if (n > 0) cores = std::min(cores, unsigned(n));
  }
  return cores;
}

}  // namespace

std::string compile_worker_program() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("VKGRAPHY_COMPILE_WORKER"); env != nullptr)
    return std::string(env).empty() || !fs::exists(env) ? "" : std::string(env);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = self.parent_path() / "vkgraphy_compile_worker";
    if (fs::exists(beside, ec)) return beside.string();
  }
  return fs::exists(kBuiltCompileWorker, ec) ? std::string(kBuiltCompileWorker) : "";
}

unsigned default_compile_workers() {
  if (const char* env = std::getenv("VKGRAPHY_COMPILE_WORKERS"); env != nullptr && *env != '\0') {
    const std::string v = env;
    VKG_CHECK(v.size() <= 3 && v.find_first_not_of("0123456789") == std::string::npos,
              "VKGRAPHY_COMPILE_WORKERS='" << v << "': expected a count of worker processes (0: none)");
    return unsigned(std::stoul(v));
  }
  return std::min(kMaxWorkers, usable_cores() - 1);
}

struct CompileWorkers::Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;  // what was read after the last line
  bool alive = false;
  bool ready = false;
  std::vector<std::string> notes;  // for the log, written by the worker's thread, read after it ends

  void stop(bool kill_it) {
    if (fd >= 0) ::close(fd);
    fd = -1;
    if (pid > 0) {
      if (kill_it) ::kill(pid, SIGKILL);
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    pid = -1;
    alive = false;
  }
};

// One compile() call's list, taken from both ends.
struct CompileWorkers::Batch {
  std::vector<std::string> keys;  // pipeline_key of each
  std::mutex mutex;
  size_t front = 0, back = 0;
  std::vector<size_t> returned;  // given to a worker that did not compile it
  size_t by_workers = 0;
};

CompileWorkers::CompileWorkers(Device& device, unsigned count)
    : device_(device), count_(std::min(count, kMaxWorkers)) {
  if (!device.info().compiles_in_one_thread) count_ = 0;
  if (count_ > 0) program_ = compile_worker_program();
  if (count_ > 0 && program_.empty()) {
    VKG_VERBOSE("no compile worker program (vkgraphy_compile_worker, $VKGRAPHY_COMPILE_WORKER): pipelines compile "
                "in this process only");
    count_ = 0;
  }
}

CompileWorkers::~CompileWorkers() {
  for (auto& w : workers_) w->stop(false);
}

unsigned CompileWorkers::started() const {
  return unsigned(std::count_if(workers_.begin(), workers_.end(), [](const auto& w) { return w->pid > 0; }));
}

void CompileWorkers::start_workers() {
  started_ = true;
  std::ostringstream open;
  open << "open " << device_.info().uuid << ' ' << device_.info().index;
  for (const std::string& w : switch_words(switches_of(device_.info()))) open << ' ' << w;
  for (unsigned i = 0; i < count_; ++i) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) break;
    // The worker's end becomes its descriptor 3 (dup2 clears close-on-exec, unless it is 3 already).
    if (fds[1] == 3) {
      const int moved = ::fcntl(fds[1], F_DUPFD_CLOEXEC, 10);
      ::close(fds[1]);
      fds[1] = moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    for (int std_fd : {0, 1, 2}) posix_spawn_file_actions_addopen(&actions, std_fd, "/dev/null", O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 3);
    std::string arg0 = program_, arg1 = "--serve-fd", arg2 = "3";
    char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, program_.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      VKG_VERBOSE("compile worker " << program_ << " did not start: " << std::strerror(rc));
      break;
    }
    auto w = std::make_unique<Worker>();
    w->pid = pid;
    w->fd = fds[0];
    w->alive = write_line(w->fd, open.str());
    workers_.push_back(std::move(w));
  }
  VKG_VERBOSE("started " << started() << " compile worker process(es) for '" << device_.info().name << "'");
}

void CompileWorkers::serve(Worker& w, Batch& batch) {
  if (!w.ready) {
    const std::optional<std::string> reply = read_line(w.fd, w.buffer, kOpenTimeout);
    if (reply != "ready") {
      w.notes.push_back("compile worker " + std::to_string(w.pid) + " could not open the device: " +
                        reply.value_or("no answer"));
      w.stop(true);
      return;
    }
    w.ready = true;
  }
  while (true) {
    size_t i = 0;
    {
      std::lock_guard lock(batch.mutex);
      if (batch.front >= batch.back) return;
      i = --batch.back;
    }
    const std::string& key = batch.keys[i];
    std::optional<std::string> reply;
    if (write_line(w.fd, "compile " + key)) reply = read_line(w.fd, w.buffer, kCompileTimeout);
    if (reply == "done") {
      std::lock_guard lock(batch.mutex);
      ++batch.by_workers;
      continue;
    }
    {
      std::lock_guard lock(batch.mutex);
      batch.returned.push_back(i);
    }
    if (reply) {
      w.notes.push_back("compile worker failed on '" + key + "' (compiled here instead): " + *reply);
      continue;
    }
    w.notes.push_back("compile worker " + std::to_string(w.pid) + " stopped answering at '" + key + "'");
    w.stop(true);
    return;
  }
}

void CompileWorkers::compile(std::span<const ComputePipeline* const> pipelines) {
  std::vector<const ComputePipeline*> todo;
  std::vector<PipelineDesc> descs;
  for (const ComputePipeline* p : pipelines) {
    if (p == nullptr || p->dispatched() || std::find(todo.begin(), todo.end(), p) != todo.end()) continue;
    todo.push_back(p);
    descs.push_back(p->desc());
  }
  compile(descs, [&] { return todo; });
}

void CompileWorkers::compile(std::span<const PipelineDesc> descs, const Create& create) {
  if (descs.empty()) return;
  Batch batch;
  for (const PipelineDesc& d : descs) batch.keys.push_back(pipeline_key(d));
  batch.back = descs.size();
  if (descs.size() >= 2 && count_ > 0 && !started_) start_workers();
  std::vector<std::jthread> threads;
  if (descs.size() >= 2)
    for (auto& w : workers_)
      if (w->alive) threads.emplace_back([this, &w, &batch] { serve(*w, batch); });
  const std::vector<const ComputePipeline*> made = create();
  VKG_CHECK(made.size() == descs.size(), "compile workers: " << made.size() << " pipelines for " << descs.size());
  auto compile_here = [&](size_t i) {
    const ComputePipeline* p = made[i];
    if (p == nullptr || p->dispatched()) return;
    try {
      compile_pipeline_code(device_, *p);
      ++compiled_here_;
    } catch (const Error& e) {
      VKG_EXTRA_VERBOSE("pipeline '" << p->desc().name << "' not compiled ahead: " << e.what());
    }
  };
  while (true) {
    size_t i = 0;
    {
      std::lock_guard lock(batch.mutex);
      if (batch.front >= batch.back) break;
      i = batch.front++;
    }
    compile_here(i);
  }
  threads.clear();  // joins
  for (size_t i : batch.returned) compile_here(i);
  compiled_by_workers_ += batch.by_workers;
  for (auto& w : workers_) {
    for (const std::string& note : w->notes) VKG_VERBOSE(note);
    w->notes.clear();
  }
}

int serve_compile_jobs(int fd) {
  std::string buffer;
  std::unique_ptr<Context> ctx;
  const auto forever = std::chrono::hours(24 * 365);
  while (const std::optional<std::string> line = read_line(fd, buffer, forever)) {
    std::istringstream words(*line);
    std::string verb;
    words >> verb;
    std::string reply;
    try {
      if (verb == "open") {
        std::string uuid, index, word;
        words >> uuid >> index;
        std::vector<std::string> switches;
        while (words >> word) switches.push_back(word);
        DeviceOptions options = options_from_switch_words(switches);
        options.device = index;
        ctx = std::make_unique<Context>(options);
        VKG_CHECK(ctx->device().info().uuid == uuid,
                  "device " << index << " is '" << ctx->device().info().name << "' with another pipeline cache UUID");
        reply = "ready";
      } else if (verb == "compile") {
        VKG_CHECK(ctx != nullptr, "compile before open");
        std::string key;
        words >> key;
        const std::optional<PipelineDesc> desc = parse_pipeline_key(key);
        VKG_CHECK(desc, "not a pipeline key: '" << key << "'");
        const ComputePipeline pipeline(ctx->device(), builtin_shader(desc->name), *desc);
        compile_pipeline_code(ctx->device(), pipeline);
        // Mesa writes the cache entry from a thread of its own, 0.1-0.3 ms after the dispatch
        // finished (measured): give it that before the builder dispatches the pipeline. Should
        // the builder still come first, it compiles the pipeline again: slower, never wrong.
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        reply = "done";
      } else {
        reply = "error unknown request '" + verb + "'";
      }
    } catch (const std::exception& e) {
      reply = "error " + one_line(e.what());
    }
    if (!write_line(fd, reply)) return 1;
  }
  return 0;
}

}  // namespace vkg::vk
