// actorps-eval: see tools/model_tools.hpp and docs/export.md.
#include "tools/model_tools.hpp"

int main(int argc, char** argv) {
  return actorps::eval_main(argc, argv);
}
