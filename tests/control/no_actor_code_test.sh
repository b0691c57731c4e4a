#!/usr/bin/env bash
# control/ holds plain classes only: fails when a file there includes one of CAF's actor,
# scheduler, messaging or io headers (value types such as caf/error.hpp and caf/expected.hpp are fine).
set -euo pipefail
dir=${1:?usage: no_actor_code_test.sh CONTROL_DIR}
pattern='#include[[:space:]]*[<"]caf/(all|actor|abstract_actor|local_actor|scheduled_actor|event_based_actor|typed_event_based_actor|typed_actor|stateful_actor|blocking_actor|scoped_actor|send|response_promise|typed_response_promise|behavior|typed_behavior|actor_system|actor_clock|scheduler|io/|openssl/)'
if hits=$(grep -rnE "$pattern" "$dir" --include='*.hpp' --include='*.cpp'); then
  echo "control/ must hold no actor code; these includes belong in actors/:" >&2
  echo "$hits" >&2
  exit 1
fi
count=$(find "$dir" -name '*.hpp' -o -name '*.cpp' | wc -l)
[ "$count" -gt 0 ] || { echo "no sources under $dir" >&2; exit 1; }
echo "control/: $count files, none includes actor, scheduler or io headers"
