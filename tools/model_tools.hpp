// The model tools' entry points (apps/actorps_{export,eval,predict}.cpp call them). Each returns
// the process exit code: 0 done, 1 a file could not be read or written, 2 a bad command line.
#pragma once

namespace actorps {

/// actorps-export MODEL OUT [--format=npz|checkpoint]
int export_main(int argc, char** argv);

/// actorps-eval MODEL [--data.dir=DIR] ...: loss, accuracy, per-class accuracy, confusion matrix.
int eval_main(int argc, char** argv);

/// actorps-predict MODEL INPUT... [--top=K] ...: classes and probabilities.
int predict_main(int argc, char** argv);

} // namespace actorps
