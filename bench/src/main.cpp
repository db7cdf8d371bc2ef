// weir_bench: the benchmark without the CLI around it, e.g. `weir_bench kv --json`.
#include <string>
#include <vector>

#include "weir/bench/kv_bench.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return weir::bench::run_bench(args);
}
