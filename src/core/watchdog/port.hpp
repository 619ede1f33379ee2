// The watchdog's set-up and steering as the engine's side sees them, apart
// from MPI (which the caller does between the steps): LocalPort runs the
// agent in this process (a thread; the watch process's own), ProcessPort asks
// the rank's watch process (host.cpp), which serves each request with a
// LocalPort. Each step returns its error, "" when done.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agent.hpp"
#include "fabricbench/core/watch_host.hpp"

namespace fb::watch {

class Port {
 public:
  virtual ~Port() = default;
  // Rank 0: listen for the other ranks; `endpoint_text` says where (to_text).
  virtual std::string listen_root(std::string& endpoint_text) = 0;
  // A node leader: listen for its node's ranks, in the run with `token`.
  virtual std::string listen_node(std::uint64_t token) = 0;
  // Starts the agent (accepting its children, judging nothing yet) and
  // connects it to its parent (every rank but 0).
  virtual std::string connect(const std::string& endpoint_text, const std::string& my_host) = 0;
  // Waits until the children joined, one cannot, or `deadline_s` (monotonic);
  // "" at once for a rank without children.
  virtual std::string wait_children(double deadline_s) = 0;
  virtual void start() = 0;
  virtual void fail(const std::string& what) = 0;
  virtual void finish() = 0;  // returns once every rank said so (rank 0) or this rank's bye is sent
  virtual void cancel() = 0;
  virtual bool running() const = 0;
};

class LocalPort : public Port {
 public:
  explicit LocalPort(Config config);
  std::string listen_root(std::string& endpoint_text) override;
  std::string listen_node(std::uint64_t token) override;
  std::string connect(const std::string& endpoint_text, const std::string& my_host) override;
  std::string wait_children(double deadline_s) override;
  void start() override;
  void fail(const std::string& what) override;
  void finish() override;
  void cancel() override;
  bool running() const override;

 private:
  Config config_;
  Tree tree_;
  RootListeners root_;
  Fd local_;
  std::unique_ptr<Agent> agent_;
};

// The rank's side of its watch process (host.cpp).
std::unique_ptr<Port> process_port(WatchHost& host, Config config);

}  // namespace fb::watch
