#include "fabricbench/core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <string>

namespace fb {

void setup_logging(int rank, Verbosity verbosity) {
  const std::string logger_name = "fabricbench-" + std::to_string(rank);
  spdlog::drop(logger_name);
  auto logger = spdlog::stderr_logger_mt(logger_name);
  logger->set_pattern("[fabricbench rank " + std::to_string(rank) + "] %l: %v");
  switch (verbosity) {
    case Verbosity::quiet:
      logger->set_level(spdlog::level::warn);
      break;
    case Verbosity::normal:
      logger->set_level(spdlog::level::info);
      break;
    case Verbosity::verbose:
      logger->set_level(spdlog::level::debug);
      break;
  }
  logger->flush_on(spdlog::level::debug);
  spdlog::set_default_logger(logger);
}

spdlog::logger& user_log() {
  // Not in spdlog's registry: setup_logging's drop and a test's drop_all
  // leave it alone. The sink writes to the C stderr stream, so its lines keep
  // their order with anything else a command writes there.
  static spdlog::logger logger = [] {
    spdlog::logger l("fabricbench-user", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l.set_pattern("%v");
    l.set_level(spdlog::level::trace);
    l.flush_on(spdlog::level::trace);
    return l;
  }();
  return logger;
}

}  // namespace fb
