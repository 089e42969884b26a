"""Mailbox protocol v1 for Python bots (standard library only).

A bot imports this module, writes a function that picks a move, and hands it
to run():

    import mailbox                      # this file, found next to the bot
    def choose(turn):                   # turn.moves: {index: [flipped indices]}
        return min(turn.moves)          # an index into turn.board
    mailbox.run(choose)

run() does the whole conversation: NEW -> READY, TURN -> your move (or
`pass` when you have none, without calling you), ILLEGAL -> OK, END -> BYE,
anything else -> OK. It never returns; the referee ends the process.

The mailbox folder is: the first command-line argument if given, else
$TOURNAMENT_MAILBOX, else the current directory (the referee starts spawned
bots inside their mailbox). See PROTOCOL.md.

Note: this module shadows the standard library's `mailbox` module (the Unix
mbox reader) for the bots in this folder, which never need it.
"""
import os
import sys
import time

POLL_SECONDS = 0.005          # how long to sleep between two reads of in.txt

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

    def read(self):
        """One look at in.txt: a new Message, or None (missing, incomplete, old)."""
        try:
            with open(self.in_path, 'rb') as f:
                data = f.read(4096)
        except OSError:               # not there (yet), or being replaced
            return None
        lines = data.split(b'\n')
        if len(lines) < 5:            # fewer than four complete lines: not finished
            return None
        fields = [l.rstrip(b'\r').decode('ascii', 'replace') for l in lines[:4]]
        sender, to, seq, text = fields
        if sender != 'referee' or not seq.isdigit() or seq == self.answered:
            return None
        return Message(sender, to, seq, text)

    def wait(self):
        """Block until the referee has written a message we have not answered."""
        while True:
            msg = self.read()
            if msg is not None:
                self.current = msg
                return msg
            time.sleep(POLL_SECONDS)

    def answer(self, text):
        """Answer the message returned by the last wait(): one write of out.txt."""
        msg = self.current
        data = ('%s\nreferee\n%s\n%s\n' % (msg.to, msg.seq, text)).encode('ascii')
        fd = os.open(self.out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        self.answered = msg.seq


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
