"""Runs rust-reversi's Arena (a Rust harness for two stdin/stdout bot
processes) with one bot on both sides and prints one JSON line:
{"games": n, "play_n_seconds": s, "stats": [...], "pieces": [...]}.

Usage: python arena_peer.py GAMES [COMMAND...]   (GAMES even: colours
alternate; the bot is COMMAND, by default this Python with arena_bot.py)
"""
import json
import os
import sys
import time

from rust_reversi import Arena

here = os.path.dirname(os.path.abspath(__file__))
games = int(sys.argv[1])
bot = sys.argv[2:] or [sys.executable, os.path.join(here, "arena_bot.py")]
arena = Arena(bot, bot, show_progress=False)
clock = time.perf_counter()
arena.play_n(games)
seconds = time.perf_counter() - clock
print(json.dumps({
    "games": games,
    "play_n_seconds": seconds,
    "stats": list(arena.get_stats()),
    "pieces": list(arena.get_pieces()),
}))
