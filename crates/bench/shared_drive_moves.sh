#!/usr/bin/env bash
# shared_drive_moves.sh — move times of library bots through a shared drive.
#
#   crates/bench/shared_drive_moves.sh CACHE LIBDIR TAG
#
# Stands up scripts/shared-drive in /tmp/shared-moves-TAG with --cache=CACHE
# (no or default), runs a referee (target/release/tournament) on mount A
# with two waiting players, alice and bob, and starts their bots by hand on
# mount B: a first-legal-move bot on the library in LIBDIR (a folder with
# mailbox.py, or with mailbox.rb for Ruby). 8 games, 8x8, concurrency 1.
# Prints the games' reasons, games/s (first start to last end) and the
# per-move times the referee recorded
# (median, p95, max, how many over 200 ms, and which). Needs what
# scripts/shared-drive needs (sshfs, sshd, root or /dev/fuse access).
# A measurement for BENCHMARKS.md, not a test.
set -euo pipefail
CACHE=$1; LIB=$(realpath "$2"); TAG=$3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DRIVE=$ROOT/scripts/shared-drive
D=/tmp/shared-moves-$TAG
"$DRIVE" down "$D" >/dev/null 2>&1 || true
rm -rf "$D"
"$DRIVE" up "$D" --cache="$CACHE" >/dev/null
trap '"$DRIVE" down "$D" >/dev/null 2>&1 && rm -rf "$D"' EXIT
. "$D/env"
W=$(mktemp -d /tmp/shared-moves-work-XXXXXX)
cat > "$W/bot.py" <<PY
import sys
sys.path.insert(0, "$LIB")
import mailbox
mailbox.run(lambda t: min(t.moves))
PY
cat > "$W/bot.rb" <<RB
require "$LIB/mailbox"
Mailbox.run { |t| t.moves.keys.min }
RB
cat > "$W/tournament.toml" <<TOML
[tournament]
name = "shared-moves"
board = "$SHARED_A/board"
results = "$W/results"
games-per-pairing = 8
concurrency = 1
size = 8
[time]
move-ms = 5000
startup-ms = 60000
[openings]
random-plies = 0
seed = 1
[[player]]
name = "alice"
wait = true
[[player]]
name = "bob"
wait = true
TOML
mkdir -p "$SHARED_A/board"
"$ROOT/target/release/tournament" -q run --config "$W/tournament.toml" > "$W/run.log" 2>&1 &
REFEREE=$!
BOTS=()
for n in alice bob; do
  for _ in $(seq 100); do [ -d "$SHARED_B/board/players/$n" ] && break; sleep 0.1; done
  if [ -f "$LIB/mailbox.rb" ]; then
    ruby "$W/bot.rb" "$SHARED_B/board/players/$n" > "$W/$n.log" 2>&1 &
  else
    python3 "$W/bot.py" "$SHARED_B/board/players/$n" > "$W/$n.log" 2>&1 &
  fi
  BOTS+=($!)
done
wait "$REFEREE" || true
kill "${BOTS[@]}" 2>/dev/null || true
python3 - "$W/results/games.jsonl" "$TAG" "$CACHE" <<'PY'
import json, sys
from datetime import datetime
ms, n, reasons, slow, times = [], 0, {}, [], []
for line in open(sys.argv[1]):
    g = json.loads(line)
    n += 1
    times += [datetime.fromisoformat(g[k].replace('Z', '+00:00')) for k in ('started', 'finished')]
    reasons[g['reason']] = reasons.get(g['reason'], 0) + 1
    ms += [m['ms'] for m in g['moves'] if 'ms' in m]
    slow += [(n, i, m['color'], m['ms']) for i, m in enumerate(g['moves']) if m.get('ms', 0) > 200]
ms.sort()
span = (max(times) - min(times)).total_seconds()
print(sys.argv[2], 'cache=' + sys.argv[3], 'games', n, reasons, '%.2f games/s' % (n / span), 'moves', len(ms),
      'median', ms[len(ms) // 2], 'p95', ms[int(len(ms) * 0.95)], 'max', ms[-1],
      'over 200 ms', len(slow), slow)
PY
rm -rf "$W"
