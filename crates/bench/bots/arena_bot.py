"""The bench's Python bot for rust-reversi's Arena (stdin/stdout).

Started as `python arena_bot.py BLACK|WHITE`; answers `ping` with `pong`,
then each 64-character board line (X black, O white, - empty, a1..h8) with
the index of its move (a1 = 0, b1 = 1, ...). The move logic is
firstmove.py's, the same as the mailbox bot's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from firstmove import first_move  # noqa: E402

me = "X" if sys.argv[-1] == "BLACK" else "O"
out = sys.stdout
for line in sys.stdin:
    line = line.strip()
    if line == "ping":
        out.write("pong\n")
    else:
        out.write("%d\n" % first_move(line, me, 8))
    out.flush()
