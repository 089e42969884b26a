"""The bench's Python bot for the mailbox protocol (PROTOCOL.md): the same
first-legal-move logic as arena_bot.py (firstmove.py), with a driver that
wakes when in.txt is replaced instead of sleep-polling blindly.

Usage: python mailbox_bot.py [--wait inotify|sleep:SECONDS] [--cpu-ms N] [--delay-ms N] [MAILBOX]

--wait inotify (the default on Linux): blocks on an inotify watch of the
  mailbox folder (through ctypes, no extra package) and reads in.txt when a
  file was renamed into the folder or closed after writing; it still looks
  every 100 ms in case a notification is lost. Elsewhere, or if inotify
  cannot be set up, it falls back to sleep:0.0005.
--wait sleep:S: reads in.txt, sleeps S seconds when nothing is new (what
  bots/python/mailbox.py does with S = 0.005).
--cpu-ms N: computes for N milliseconds of CPU time before answering each
  TURN (the live page's siege rows: a bot whose search needs the CPU).
--delay-ms N: waits N milliseconds before answering each TURN (the bench's
  idle-cost row: a bot that thinks), after --cpu-ms.

out.txt is written as the protocol says: one plain overwrite, in one write.
"""
import os
import select
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from firstmove import first_move  # noqa: E402

IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080


def inotify_fd(folder):
    """A non-blocking inotify descriptor watching `folder`, or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return None
        if libc.inotify_add_watch(fd, os.fsencode(folder), IN_MOVED_TO | IN_CLOSE_WRITE) < 0:
            os.close(fd)
            return None
        return fd
    except (OSError, AttributeError):
        return None


def main(argv):
    wait, cpu, delay, folder = "inotify", 0.0, 0.0, None
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--wait":
            wait = args.pop(0)
        elif a == "--cpu-ms":
            cpu = int(args.pop(0)) / 1000.0
        elif a == "--delay-ms":
            delay = int(args.pop(0)) / 1000.0
        else:
            folder = a
    folder = folder or os.environ.get("TOURNAMENT_MAILBOX") or "."
    in_path = os.path.join(folder, "in.txt")
    out_path = os.path.join(folder, "out.txt")
    fd = inotify_fd(folder) if wait == "inotify" else None
    nap = 0.0005 if wait == "inotify" else float(wait.split(":", 1)[1])
    answered = None

    while True:
        try:
            with open(in_path, "rb") as f:
                lines = f.read(4096).split(b"\n")
        except OSError:
            lines = []
        if len(lines) < 5 or lines[2].strip() == answered:
            if fd is None:
                time.sleep(nap)
                continue
            # Sleep until something lands in the folder; wake again only for
            # in.txt (our own out.txt closes after writing wake us too).
            while True:
                if not select.select([fd], [], [], 0.1)[0]:
                    break
                try:
                    events = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if b"in.txt" in events:
                    break
            continue
        my_id = lines[1].strip().decode("ascii", "replace")
        seq = lines[2].strip()
        words = lines[3].strip().decode("ascii", "replace").split(" ")
        kind = words[0]
        if kind == "NEW":
            answer = "READY"
        elif kind == "TURN":
            began = time.process_time()
            while time.process_time() - began < cpu:
                pass
            if delay:
                time.sleep(delay)
            board = words[2]
            n = int(round(len(board) ** 0.5))
            i = first_move(board, "X" if words[1] == "black" else "O", n)
            answer = "pass" if i < 0 else "abcdefgh"[i % n] + str(i // n + 1)
        elif kind == "END":
            answer = "BYE"
        else:
            answer = "OK"
        data = ("%s\nreferee\n%s\n%s\n" % (my_id, seq.decode("ascii"), answer)).encode("ascii")
        out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(out, data)           # one write
        finally:
            os.close(out)
        answered = seq


if __name__ == "__main__":
    main(sys.argv[1:])
