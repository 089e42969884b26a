"""Mailbox protocol v1 for Python bots (standard library only).

A bot imports this module, writes a function that picks a move, and hands it
to run():

    import mailbox                      # this file, found next to the bot
    def choose(turn):                   # turn.moves: {index: [flipped indices]}
        return min(turn.moves)          # an index into turn.board
    mailbox.run(choose)

run() does the whole conversation: NEW -> READY, TURN -> your move (or
`pass` when you have none, without calling you), ILLEGAL -> OK, END -> BYE,
anything else -> OK. It never returns: the referee ends the process (or
closes the pipe, below, and the bot exits).

The mailbox folder is: the first command-line argument if given, else
$TOURNAMENT_MAILBOX, else the current directory (the referee starts spawned
bots inside their mailbox). See PROTOCOL.md.

The pipe (PROTOCOL.md, "The pipe"): when the referee started this bot and
offers a pair of pipes ($TOURNAMENT_PIPE_FDS=3,4), the library takes the
offer with its first answer, and from then on every message comes from the
read pipe and every answer goes to the write pipe: one read and one write a
move instead of about ten file system calls, and no CPU while it waits.
Without the offer (started by hand, or an older referee) it uses the files.

Note: this module shadows the standard library's `mailbox` module (the Unix
mbox reader) for the bots in this folder, which never need it.
"""
import fcntl
import os
import select
import stat
import sys
import time

# out.txt is always written this many bytes long: the answer, then spaces
# (PROTOCOL.md, "Fixed-length files"). Written over the old content without
# truncating, its length never changes, so a network drive's cached file
# size is always right and the referee sees the answer whole at once; and on
# ext4 no truncation means no forced flush to disk (~0.2 ms per answer).
RECORD_BYTES = 128

# How long to sleep between two reads of in.txt where no notification comes
# (network drives, or no inotify): short right after answering (the next
# message usually follows within milliseconds), doubling up to POLL_MAX, and
# POLL_IDLE after IDLE_AFTER seconds without a message.
POLL_FIRST = 0.0005
POLL_MAX = 0.008
POLL_IDLE = 0.025
IDLE_AFTER = 1.0
# With notifications (a local folder): look again anyway this often, in case
# one was lost.
SAFETY_SECONDS = 0.25

# statfs magic numbers of local file systems, where inotify sees every write
# (ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, overlayfs, vfat). On network
# drives (NFS, SMB, sshfs) writes from another machine send no notification.
LOCAL_FS = {0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010, 0x2FC12FC1,
            0x794C7630, 0x4D44}
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_TO = 0x00000080
IN_Q_OVERFLOW = 0x00004000

# The pipe offer: "R,W", the descriptors to read messages from and write
# answers to; the bot takes it by writing PIPE_YES to W before its first
# answer goes into out.txt.
PIPE_ENV = 'TOURNAMENT_PIPE_FDS'
PIPE_YES = b'pipe\n'

# (row step, column step) for the eight directions
DIRECTIONS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def log(*parts):
    """Debug output: stderr goes into the referee's game log."""
    print(*parts, file=sys.stderr, flush=True)


class Message:
    def __init__(self, sender, to, seq, text):
        self.sender = sender
        self.to = to                  # our id, e.g. "greedy-python.1" or "alice"
        self.seq = seq                # a string of digits, echoed back unchanged
        self.text = text
        self.words = text.split(' ')


def _libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)


def is_local(folder):
    """True if `folder` is on a local disk or in memory (statfs through
    ctypes; Linux only). False for network drives and when unsure."""
    if not sys.platform.startswith('linux'):
        return False
    try:
        ctypes, libc = _libc()
        buf = ctypes.create_string_buffer(512)          # a struct statfs and more
        if libc.statfs(os.fsencode(folder), buf) != 0:
            return False
        return (ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF) in LOCAL_FS
    except (OSError, AttributeError, ImportError):
        return False


def pipe_offer():
    """(R, W) from $TOURNAMENT_PIPE_FDS when both are open pipes, R readable
    and W writable; else None (no offer, or descriptors we must not trust:
    without them open, fd 3 may well be some file of our own)."""
    try:
        r, w = (int(x) for x in os.environ.get(PIPE_ENV, '').split(','))
        if r == w:
            return None
        for fd, modes in ((r, (os.O_RDONLY, os.O_RDWR)), (w, (os.O_WRONLY, os.O_RDWR))):
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return None
            if (fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE) not in modes:
                return None
    except (ValueError, OSError):
        return None
    # Reads and writes block: that is the whole point (no polling). And the
    # pipes are this process's alone: a child we start must not keep the
    # referee's pipe open, nor think the offer is made to it.
    for fd in (r, w):
        os.set_blocking(fd, True)
        os.set_inheritable(fd, False)
    os.environ.pop(PIPE_ENV, None)
    return r, w


class Notifier:
    """inotify on one folder (Linux, through ctypes): wait() sleeps until
    a file named `name` there is renamed into place or closed after
    writing, or until the timeout."""

    def __init__(self, folder, name):
        ctypes, libc = _libc()
        fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), 'inotify_init1')
        if libc.inotify_add_watch(fd, os.fsencode(folder), IN_MOVED_TO | IN_CLOSE_WRITE) < 0:
            os.close(fd)
            raise OSError(ctypes.get_errno(), 'inotify_add_watch')
        self.fd = fd
        self.name = os.fsencode(name)

    def wait(self, timeout):
        """True when `name` changed (or events were lost), False at the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return False
            if self._ours():
                return True

    def _ours(self):
        """Reads the pending events: did one concern our file?"""
        hit = False
        while True:
            try:
                data = os.read(self.fd, 4096)
            except BlockingIOError:
                return hit
            i = 0
            while i + 16 <= len(data):
                mask = int.from_bytes(data[i + 4:i + 8], 'little')
                size = int.from_bytes(data[i + 12:i + 16], 'little')
                name = data[i + 16:i + 16 + size].rstrip(b'\0')
                if name == self.name or mask & IN_Q_OVERFLOW:
                    hit = True
                i += 16 + size

    def close(self):
        os.close(self.fd)


class Mailbox:
    def __init__(self, folder=None):
        if folder is None:
            if len(sys.argv) > 1:
                folder = sys.argv[1]
            else:
                folder = os.environ.get('TOURNAMENT_MAILBOX') or '.'
        self.folder = folder
        self.in_path = os.path.join(folder, 'in.txt')
        self.out_path = os.path.join(folder, 'out.txt')
        self.answered = None          # seq of the last message we answered
        self.current = None           # the message we are about to answer
        self.out_size = None          # the length out.txt has now, once we wrote it
        self.offer = pipe_offer()     # (R, W) the referee offers, before we open any fd
        self.accepted = False         # we wrote PIPE_YES to W
        self.pipe = None              # (R, W) once messages come that way
        self.pending = b''            # bytes read from R, not yet a whole message
        self.notifier = None
        if is_local(folder):
            try:
                self.notifier = Notifier(folder, 'in.txt')
            except (OSError, AttributeError, ImportError):
                pass
        self.announce()

    def read(self):
        """One look at in.txt: a new Message, or None (missing, incomplete, old).
        Anything after the fourth line (the referee's padding) is ignored."""
        data = self._read_in(0)
        if data is None:              # not there (yet), or being replaced
            return None
        if data.count(b'\n') < 4 and self.notifier is None and hasattr(os, 'O_DIRECT'):
            # On a network drive a cached file length may cut the new
            # message short; a direct read asks the server for all of it.
            data = self._read_in(os.O_DIRECT) or data
        return self.decode(data)

    def decode(self, data):
        """The Message in `data` (from in.txt or the pipe), or None: fewer than
        four complete lines (not finished), not from the referee, or the one
        we answered last. Bytes after the fourth line are ignored."""
        lines = data.split(b'\n', 4)
        if len(lines) < 5:
            return None
        fields = [l.rstrip(b'\r').decode('ascii', 'replace') for l in lines[:4]]
        sender, to, seq, text = fields
        if sender != 'referee' or not seq.isdigit() or seq == self.answered:
            return None
        return Message(sender, to, seq, text)

    def _read_in(self, flags):
        """in.txt's first 4096 bytes, or None."""
        try:
            fd = os.open(self.in_path, os.O_RDONLY | flags)
        except OSError:
            return None
        try:
            return os.read(fd, 4096)
        except OSError:
            return None
        finally:
            os.close(fd)

    def wait(self):
        """Block until the referee has sent a message we have not answered,
        on the pipe once we took it, else in in.txt."""
        self.current = self._wait_pipe() if self.pipe else self._wait_file()
        return self.current

    def _wait_pipe(self):
        """The next message from R: plain blocking reads (no CPU while
        waiting) until four line feeds have come, as a message may arrive in
        pieces. End of file means the referee has gone, or closed the pipe:
        there is no one left to answer, so the bot exits."""
        while True:
            while self.pending.count(b'\n') < 4:
                data = os.read(self.pipe[0], 4096)
                if not data:
                    sys.exit(0)
                self.pending += data
            end = -1
            for _ in range(4):
                end = self.pending.index(b'\n', end + 1)
            data, self.pending = self.pending[:end + 1], self.pending[end + 1:]
            msg = self.decode(data)
            if msg is not None:
                return msg

    def _wait_file(self):
        """Block until in.txt holds a message we have not answered: woken by
        inotify on a local folder, else looking often right after an answer
        and less often the longer nothing comes."""
        nap = POLL_FIRST
        since = time.monotonic()
        while True:
            msg = self.read()
            if msg is not None:
                return msg
            if self.notifier is not None:
                self.notifier.wait(SAFETY_SECONDS)
                continue
            if time.monotonic() - since > IDLE_AFTER:
                nap = POLL_IDLE
            time.sleep(nap)
            nap = min(nap * 2, max(nap, POLL_MAX))

    def announce(self):
        """At start: make out.txt RECORD_BYTES long (spaces: "no answer") if it
        is not, which tells the referee this bot writes fixed-length files
        and reads padded in.txt (PROTOCOL.md, "Fixed-length files")."""
        try:
            if os.stat(self.out_path).st_size == RECORD_BYTES:
                self.out_size = RECORD_BYTES
                return
        except OSError:
            pass
        try:
            self.write(b'')
        except OSError:               # the folder is not writable yet: the first answer does it
            pass

    def write(self, data):
        """out.txt := data, padded with spaces to its fixed length, written
        over the old content in one write, without truncating."""
        size = max(RECORD_BYTES, len(data), self.out_size or 0)
        # Opened to read and write: smbnetfs (a FUSE client of Windows
        # shares) fails to truncate a file opened write-only.
        fd = os.open(self.out_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.write(fd, data.ljust(size, b' '))
            if size != self.out_size:  # the first write: drop any longer old content
                os.ftruncate(fd, size)
        finally:
            os.close(fd)
        self.out_size = size

    def answer(self, text):
        """Answer the message returned by the last wait(): one write, to W
        once we use the pipe, else of out.txt."""
        msg = self.current
        data = ('%s\nreferee\n%s\n%s\n' % (msg.to, msg.seq, text)).encode('ascii')
        if self.pipe:
            self.send(data)
        else:
            self.accept_offer()
            self.write(data)
            if self.accepted:         # the referee switches when it takes this answer
                self.use_pipe()
        self.answered = msg.seq

    def accept_offer(self):
        """Says yes to the pipe offer, once: PIPE_YES on W in one write. It
        must be there before the first answer is in out.txt, because the
        referee looks at W when it takes that answer. Any failure: we stay
        on files (and close the pipes, which the referee then treats as a
        decline)."""
        if self.offer is None or self.accepted:
            return
        try:
            self.accepted = os.write(self.offer[1], PIPE_YES) == len(PIPE_YES)
        except OSError:               # EBADF, EPIPE (the referee closed its end): files
            pass
        if not self.accepted:
            for fd in self.offer:
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.offer = None

    def use_pipe(self):
        """From now on messages come from R: in.txt and its notifications
        are done with."""
        self.pipe = self.offer
        if self.notifier is not None:
            self.notifier.close()
            self.notifier = None

    def send(self, data):
        """An answer on W: one write, no padding. An answer is far below
        PIPE_BUF (4096 bytes), so the write is whole, never in pieces. If the
        referee has closed the pipe (EPIPE) it has gone: exit."""
        try:
            os.write(self.pipe[1], data)
        except OSError:
            sys.exit(0)


# ---------------------------------------------------------------- the board

def square_name(i, size):
    """Index 0.. -> 'a1'.. (column letter, row number; row 1 is the top row)."""
    return chr(ord('a') + i % size) + str(i // size + 1)


def square_index(name, size):
    """'d3' -> index, or None."""
    name = name.strip().lower()
    if len(name) < 2 or not name[1:].isdigit():
        return None
    col, row = ord(name[0]) - ord('a'), int(name[1:]) - 1
    if 0 <= col < size and 0 <= row < size:
        return row * size + col
    return None


def flips(board, size, i, me):
    """Indices that playing `me` ('X' or 'O') on square i would turn over."""
    if board[i] != '-':
        return []
    them = 'O' if me == 'X' else 'X'
    row0, col0 = divmod(i, size)
    turned = []
    for dr, dc in DIRECTIONS:
        r, c = row0 + dr, col0 + dc
        line = []
        while 0 <= r < size and 0 <= c < size and board[r * size + c] == them:
            line.append(r * size + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < size and 0 <= c < size and board[r * size + c] == me:
            turned.extend(line)
    return turned


def legal_moves(board, size, me):
    """{index: [flipped indices]} for every legal move of `me`."""
    moves = {}
    for i in range(size * size):
        f = flips(board, size, i, me)
        if f:
            moves[i] = f
    return moves


def play(board, size, i, me):
    """A new board (list) with `me` played on i."""
    b = list(board)
    for j in flips(board, size, i, me):
        b[j] = me
    b[i] = me
    return b


class Turn:
    """A parsed `TURN <color> <board> <last> <ms>`."""
    def __init__(self, words):
        self.color = words[1]                       # 'black' or 'white'
        self.me = 'X' if self.color == 'black' else 'O'
        self.them = 'O' if self.me == 'X' else 'X'
        self.board = list(words[2])                 # 'X', 'O', '-'
        self.size = int(round(len(self.board) ** 0.5))
        self.last = words[3]                        # 'd3', 'pass' or 'none'
        self.ms = int(words[4])                     # time for this move
        self.started = time.monotonic()
        self.moves = legal_moves(self.board, self.size, self.me)

    def elapsed_ms(self):
        return (time.monotonic() - self.started) * 1000.0


class Game:
    """What NEW told us."""
    def __init__(self, words):
        self.id, self.color, self.opponent = words[1], words[2], words[3]
        self.size, self.move_ms = int(words[4]), int(words[5])


FALLBACK = 'mailbox fallback:'   # starts the line logged when the library chose for you
STRICT_ENV = 'MAILBOX_STRICT'     # set to 1: a bad choice ends the bot instead (a forfeit)


def _described(pick, size):
    """What choose() returned, as the bot author wrote it."""
    if isinstance(pick, int) and not isinstance(pick, bool) and 0 <= pick < size * size:
        return '%s (index %d)' % (square_name(pick, size), pick)
    return repr(pick)


def run(choose, on_new=None, on_end=None, folder=None, strict=None):
    """The conversation loop. choose(turn) returns an index from turn.moves
    (or a square name like 'd3'); it is only called when a legal move exists.

    When choose() returns something that is not a legal move, or raises, the
    library logs a line starting with `mailbox fallback:` (check-bot fails the
    bot for it, the referee warns) and plays the first legal move so the game
    goes on. With strict=True (or the environment variable MAILBOX_STRICT=1)
    it raises instead: the bot ends and forfeits, which is what you want while
    developing."""
    if strict is None:
        strict = os.environ.get(STRICT_ENV, '') not in ('', '0')
    box = Mailbox(folder)
    while True:
        msg = box.wait()
        w = msg.words
        kind = w[0]
        try:
            if kind == 'NEW':
                if on_new:
                    on_new(Game(w))
                box.answer('READY')
            elif kind == 'TURN':
                turn = Turn(w)
                if not turn.moves:
                    box.answer('pass')
                    continue
                try:
                    chosen = choose(turn)
                except Exception as e:
                    if strict:
                        raise
                    first = square_name(min(turn.moves), turn.size)
                    log('%s seq %s: choose() raised %s: %s; played %s, the first legal move'
                        % (FALLBACK, msg.seq, type(e).__name__, e, first))
                    box.answer(first)
                    continue
                pick = square_index(chosen, turn.size) if isinstance(chosen, str) else chosen
                if pick not in turn.moves:      # a bug in choose(): stay legal
                    first = square_name(min(turn.moves), turn.size)
                    text = '%s seq %s: choose() returned %s, not a legal move; played %s, ' \
                        'the first legal move' % (FALLBACK, msg.seq, _described(chosen, turn.size), first)
                    if strict:
                        raise ValueError(text)
                    log(text)
                    pick = min(turn.moves)
                box.answer(square_name(pick, turn.size))
            elif kind == 'END':
                if on_end:
                    on_end(w)
                box.answer('BYE')
            else:                               # ILLEGAL and anything newer
                box.answer('OK')
        except Exception as e:                  # never die mid-game
            if strict:
                raise
            log('%s seq %s: error handling %r: %s: %s' % (FALLBACK, msg.seq, msg.text[:80], type(e).__name__, e))
            if box.answered != msg.seq:
                if kind == 'TURN':
                    try:
                        t = Turn(w)
                        box.answer(square_name(min(t.moves), t.size) if t.moves else 'pass')
                    except Exception:
                        box.answer('pass')
                else:
                    box.answer('OK')
