"""The first-legal-move bot written on the shipped library
(bots/python/mailbox.py, copied next to this file by the bench): what a
user of the library gets. The same logic as arena_first.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mailbox  # noqa: E402  (bots/python/mailbox.py)

mailbox.run(lambda turn: min(turn.moves))
