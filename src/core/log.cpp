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

}  // namespace fb
