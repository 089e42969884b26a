"""The first-legal-move bot for rust-reversi's Arena (stdin/stdout), on the
shipped library's move generator: `python arena_first.py BLACK|WHITE`
answers `ping` with `pong`, then each 64-character board line (X black,
O white, - empty, a1..h8) with the index of the first legal move."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mailbox  # noqa: E402  (bots/python/mailbox.py)

me = "X" if sys.argv[-1] == "BLACK" else "O"
out = sys.stdout
for line in sys.stdin:
    line = line.strip()
    if line == "ping":
        out.write("pong\n")
    else:
        out.write("%d\n" % min(mailbox.legal_moves(list(line), 8, me)))
    out.flush()
