// Mailbox protocol v1 for JavaScript bots (node 18+, no npm packages).
// See PROTOCOL.md.
//
//   const mailbox = require('./mailbox');   // resolved next to your bot file
//   mailbox.run((turn) => {                  // called only when you have a move
//     return [...turn.moves.keys()][0];      // an index, or a name like 'd3'
//   });
//
// run() answers NEW with READY, TURN with your move (`pass` by itself when you
// have none), ILLEGAL and anything unknown with OK, END with BYE, and never
// returns: the referee ends the process.
//
// Everything here is synchronous on purpose: the bot simply blocks while it
// waits (Atomics.wait sleeps without using the CPU), like the BASIC bots do.
//
// The mailbox folder is process.argv[2] if given, else $TOURNAMENT_MAILBOX,
// else the current directory (the referee starts spawned bots inside it).
//
// The pipe (PROTOCOL.md, "The pipe"): when the referee started the bot and
// offers two pipes in $TOURNAMENT_PIPE_FDS ("3,4": read, write), the library
// takes them with its first answer. From then on every message comes on the
// read pipe and every answer goes out on the write pipe, one write each: no
// files, no notifications, and a blocking read while it waits. End of file
// on the pipe means the referee has gone: the bot exits. Without the offer
// (or if taking it fails) everything goes through in.txt and out.txt.
'use strict';
const fs = require('fs');
const path = require('path');

// out.txt is always written this many bytes long: the answer, then spaces
// (PROTOCOL.md, "Fixed-length files"). Written over the old content without
// truncating, its length never changes, so a network drive's cached file size
// is always right and the referee sees the answer whole at once; and on ext4
// no truncation means no forced flush to disk.
const RECORD_BYTES = 128;
// Sleeps between two reads of in.txt where no notification comes (network
// drives): short right after answering, doubling up to POLL_MAX_MS,
// POLL_IDLE_MS after IDLE_AFTER_MS without a message.
const POLL_FIRST_MS = 0.5;
const POLL_MAX_MS = 8;
const POLL_IDLE_MS = 25;
const IDLE_AFTER_MS = 1000;
// With notifications (a local folder): look again anyway this often.
const SAFETY_MS = 250;
// statfs magic numbers of local file systems, where the kernel's
// notifications see every write (ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs,
// overlayfs, vfat). Network drives send none for other machines' writes.
const LOCAL_FS = new Set([0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010, 0x2FC12FC1,
  0x794C7630, 0x4D44]);
// The referee's offer of a pipe: "R,W", the descriptors to read and write.
const PIPE_ENV = 'TOURNAMENT_PIPE_FDS';
// Says "I take the pipe" on W, before the first answer goes into out.txt.
const PIPE_TAKEN = 'pipe\n';
// A message is at most 4096 bytes (PROTOCOL.md, "A message").
const MESSAGE_BYTES = 4096;
// [row step, column step] for the eight directions
const DIRECTIONS = [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 0], [1, 1]];

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleep(ms) {
  Atomics.wait(sleeper, 0, 0, ms); // a real sleep: no busy loop
}

function log(...parts) {
  process.stderr.write(parts.join(' ') + '\n'); // goes into the game log
}

// True if folder is on a local disk or in memory (statfs; Linux).
function isLocal(folder) {
  if (process.platform !== 'linux' || typeof fs.statfsSync !== 'function') return false;
  try {
    return LOCAL_FS.has(fs.statfsSync(folder).type >>> 0);
  } catch (e) {
    return false;
  }
}

// fs.watch on the folder, in a worker thread (the bot's own thread stays
// synchronous): each change of in.txt bumps flag[0] and wakes Atomics.wait
// on it; flag[1] becomes 1 once the watch is in place.
function watchInFile(folder) {
  const flag = new Int32Array(new SharedArrayBuffer(8));
  try {
    const { Worker } = require('worker_threads');
    const code = `
      const { workerData } = require('worker_threads');
      const fs = require('fs');
      const flag = workerData.flag;
      fs.watch(workerData.folder, (event, name) => {
        if (name === null || name === 'in.txt') {
          Atomics.add(flag, 0, 1);
          Atomics.notify(flag, 0);
        }
      });
      Atomics.store(flag, 1, 1);
      Atomics.notify(flag, 0);`;
    const worker = new Worker(code, { eval: true, workerData: { folder, flag } });
    worker.on('error', () => Atomics.store(flag, 1, 0)); // polls instead
    worker.unref();
    return flag;
  } catch (e) {
    return null;
  }
}

// The pipes the referee offers: {r, w} if $TOURNAMENT_PIPE_FDS is "R,W" and
// both are open pipes, else null (a bot started by hand has no such
// variable; a stale one from a parent process names nothing useful).
function pipeOffer() {
  const m = /^(\d+),(\d+)$/.exec(process.env[PIPE_ENV] || '');
  if (!m) return null;
  const r = parseInt(m[1], 10);
  const w = parseInt(m[2], 10);
  try {
    return fs.fstatSync(r).isFIFO() && fs.fstatSync(w).isFIFO() ? { r, w } : null;
  } catch (e) {
    return null; // not open
  }
}

// Index of the fourth line feed in s (the end of a message), or -1.
function messageEnd(s) {
  let i = -1;
  for (let k = 0; k < 4; k++) {
    i = s.indexOf('\n', i + 1);
    if (i < 0) return -1;
  }
  return i;
}

// True for a pipe error worth trying again, after a nap of `ms` for EAGAIN
// (the descriptor is non-blocking after all: a nap instead of spinning);
// EINTR (a signal) at once.
function retryable(e, ms) {
  if (e.code === 'EAGAIN') sleep(ms);
  return e.code === 'EAGAIN' || e.code === 'EINTR';
}

function closeQuietly(fd) {
  try {
    fs.closeSync(fd);
  } catch (e) { /* already closed */ }
}

class Mailbox {
  constructor(folder) {
    this.folder = folder || process.argv[2] || process.env.TOURNAMENT_MAILBOX || '.';
    this.inPath = path.join(this.folder, 'in.txt');
    this.outPath = path.join(this.folder, 'out.txt');
    this.answered = null; // seq of the last message we answered
    this.current = null;
    this.outSize = null; // the length out.txt has, once we wrote it
    this.local = isLocal(this.folder);
    this.offer = pipeOffer(); // until the first answer takes it
    this.pipe = null; // the offer, once taken: messages come there
    this.pending = ''; // what the pipe gave beyond the last message
    this.buf = null; // read buffer for the pipe
    // The watch costs a thread and ~30 ms of CPU to start: not worth it for
    // the one message a bot on the pipe reads from in.txt (usually already
    // there when it starts). takeOffer() starts it if the pipe fails.
    this.flag = this.local && !this.offer ? watchInFile(this.folder) : null;
    this.announce();
  }

  // A message {from, to, seq, text, words} from what was read (in.txt or the
  // pipe), or null: fewer than four complete lines, not from the referee, or
  // the one we answered already. Anything after the fourth line (padding) is
  // ignored.
  decode(data) {
    const lines = data.split('\n', 5);
    if (lines.length < 5) return null; // fewer than four complete lines
    const [from, to, seq, text] = lines.slice(0, 4).map((l) => l.replace(/\r$/, ''));
    if (from !== 'referee' || !/^\d+$/.test(seq) || seq === this.answered) return null;
    return { from, to, seq, text, words: text.split(' ') };
  }

  // The answer to the message from the last wait(), as its four lines.
  encode(text) {
    const m = this.current;
    return `${m.to}\nreferee\n${m.seq}\n${text}\n`;
  }

  // One look at in.txt: a new message or null (see decode).
  read() {
    let data;
    try {
      data = fs.readFileSync(this.inPath, 'latin1');
    } catch (e) {
      return null; // not there yet, or being replaced right now
    }
    if (data.split('\n', 5).length < 5 && !this.local && fs.constants.O_DIRECT) {
      // On a network drive a cached file length may cut the new message
      // short; a direct read asks the server for all of it.
      try {
        const fd = fs.openSync(this.inPath, fs.constants.O_RDONLY | fs.constants.O_DIRECT);
        try {
          const buf = Buffer.alloc(4096);
          data = buf.toString('latin1', 0, fs.readSync(fd, buf, 0, 4096, 0));
        } finally {
          fs.closeSync(fd);
        }
      } catch (e) { /* keep what the plain read gave */ }
    }
    return this.decode(data);
  }

  // Block until the referee wrote a message we have not answered yet: on the
  // pipe, a blocking read; else woken by fs.watch on a local folder, or
  // looking often right after an answer and less often the longer nothing
  // comes.
  wait() {
    if (this.pipe) return (this.current = this.receive());
    let nap = POLL_FIRST_MS;
    const since = Date.now();
    for (;;) {
      const ticket = this.flag ? Atomics.load(this.flag, 0) : 0;
      const msg = this.read();
      if (msg) return (this.current = msg);
      if (this.flag && Atomics.load(this.flag, 1) === 1) {
        Atomics.wait(this.flag, 0, ticket, SAFETY_MS);
        continue;
      }
      if (Date.now() - since > IDLE_AFTER_MS) nap = POLL_IDLE_MS;
      sleep(nap);
      nap = Math.min(nap * 2, Math.max(nap, POLL_MAX_MS));
    }
  }

  // At start: make out.txt RECORD_BYTES long (spaces: "no answer") if it is
  // not; this tells the referee the bot writes fixed-length files and reads
  // padded in.txt (PROTOCOL.md, "Fixed-length files").
  announce() {
    try {
      if (fs.statSync(this.outPath).size === RECORD_BYTES) {
        this.outSize = RECORD_BYTES;
        return;
      }
    } catch (e) { /* no out.txt yet */ }
    try {
      this.write('');
    } catch (e) { /* not writable yet: the first answer does it */ }
  }

  // out.txt := data padded with spaces to its fixed length, written over the
  // old content in one write, without truncating.
  write(data) {
    const size = Math.max(RECORD_BYTES, data.length, this.outSize || 0);
    // Opened to read and write: smbnetfs (a FUSE client of Windows shares)
    // fails to truncate a file opened write-only.
    const fd = fs.openSync(this.outPath, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    try {
      fs.writeSync(fd, Buffer.from(data.padEnd(size, ' '), 'latin1'), 0, size, 0);
      if (size !== this.outSize) fs.ftruncateSync(fd, size); // first write: drop longer old content
    } finally {
      fs.closeSync(fd);
    }
    this.outSize = size;
  }

  // Answer the message from the last wait(): one write on the pipe, or of
  // the whole out.txt. The first answer takes the pipe if one is offered.
  answer(text) {
    const data = this.encode(text);
    if (this.pipe) this.send(data);
    else {
      if (this.offer) this.takeOffer();
      this.write(data);
    }
    this.answered = this.current.seq;
  }

  // "pipe\n" on the offered write pipe, before the first answer goes into
  // out.txt: the referee looks there once it has that answer. If the write
  // fails the referee sees no "pipe" (a decline) and we stay with files.
  takeOffer() {
    const offer = this.offer;
    this.offer = null;
    try {
      if (fs.writeSync(offer.w, PIPE_TAKEN) === PIPE_TAKEN.length) {
        this.pipe = offer;
        this.buf = Buffer.alloc(MESSAGE_BYTES);
        return;
      }
    } catch (e) { /* EPIPE, EBADF, ...: declined */ }
    closeQuietly(offer.r);
    closeQuietly(offer.w);
    this.flag = this.local ? watchInFile(this.folder) : null;
  }

  // The next message on the pipe: blocking reads (no CPU while waiting)
  // until four line feeds came, since a message may come in pieces. End of
  // file: the referee has gone (or closed the pipe), so the bot ends.
  receive() {
    let nap = POLL_FIRST_MS;
    for (;;) {
      const end = messageEnd(this.pending);
      if (end >= 0) {
        const data = this.pending.slice(0, end + 1);
        this.pending = this.pending.slice(end + 1);
        const msg = this.decode(data);
        if (msg) return msg;
        continue; // not a message for us: wait for the next
      }
      let n;
      try {
        n = fs.readSync(this.pipe.r, this.buf, 0, this.buf.length, null);
      } catch (e) {
        if (retryable(e, nap)) {
          nap = Math.min(nap * 2, POLL_MAX_MS); // non-blocking after all: poll as on files
          continue;
        }
        this.gone(`reading the pipe: ${e.message}`);
      }
      if (n === 0) this.gone(null);
      this.pending += this.buf.toString('latin1', 0, n);
    }
  }

  // An answer on the pipe: one write, nothing after it (the referee calls
  // anything more garbage). Up to 4096 bytes a pipe takes it whole at once.
  send(data) {
    const bytes = Buffer.from(data, 'latin1');
    for (;;) {
      try {
        fs.writeSync(this.pipe.w, bytes);
        return;
      } catch (e) {
        if (retryable(e, POLL_FIRST_MS)) continue;
        this.gone(`writing the pipe: ${e.message}`); // EPIPE: the referee closed it
      }
    }
  }

  // The referee is gone: nobody to answer any more, so end quietly (an
  // unexpected error gets one line in the log first).
  gone(why) {
    if (why && !/EPIPE/.test(why)) log(`mailbox: ${why}; exiting`);
    process.exit(0);
  }
}

// ---------------------------------------------------------------- the board

function squareName(i, size) {
  return String.fromCharCode(97 + (i % size)) + (Math.floor(i / size) + 1);
}

function squareIndex(name, size) {
  const m = /^([a-z])(\d+)$/.exec(String(name).trim().toLowerCase());
  if (!m) return null;
  const col = m[1].charCodeAt(0) - 97;
  const row = parseInt(m[2], 10) - 1;
  return col < size && row >= 0 && row < size ? row * size + col : null;
}

// Indices turned over if `me` ('X' or 'O') plays on square i. board: array.
function flips(board, size, i, me) {
  if (board[i] !== '-') return [];
  const them = me === 'X' ? 'O' : 'X';
  const row0 = Math.floor(i / size);
  const col0 = i % size;
  const turned = [];
  for (const [dr, dc] of DIRECTIONS) {
    let r = row0 + dr;
    let c = col0 + dc;
    const line = [];
    while (r >= 0 && r < size && c >= 0 && c < size && board[r * size + c] === them) {
      line.push(r * size + c);
      r += dr;
      c += dc;
    }
    if (line.length && r >= 0 && r < size && c >= 0 && c < size && board[r * size + c] === me) {
      turned.push(...line);
    }
  }
  return turned;
}

// Map { index => [flipped indices] } of every legal move of `me`.
function legalMoves(board, size, me) {
  const moves = new Map();
  for (let i = 0; i < size * size; i++) {
    const f = flips(board, size, i, me);
    if (f.length) moves.set(i, f);
  }
  return moves;
}

// A new board (array) after `me` plays on i.
function play(board, size, i, me) {
  const b = board.slice();
  for (const j of flips(board, size, i, me)) b[j] = me;
  b[i] = me;
  return b;
}

// A parsed `TURN <color> <board> <last> <ms>`.
class Turn {
  constructor(words) {
    this.color = words[1]; // 'black' or 'white'
    this.me = this.color === 'black' ? 'X' : 'O';
    this.them = this.me === 'X' ? 'O' : 'X';
    this.board = words[2].split(''); // 'X', 'O', '-'; index = row * size + col
    this.size = Math.round(Math.sqrt(this.board.length));
    this.last = words[3]; // 'd3', 'pass' or 'none'
    this.ms = parseInt(words[4], 10); // time for this move
    this.started = Date.now();
    this.moves = legalMoves(this.board, this.size, this.me);
  }

  elapsedMs() {
    return Date.now() - this.started;
  }
}

// Starts the line logged when the library chose a move for you.
const FALLBACK = 'mailbox fallback:';
// Set to 1: a bad choice ends the bot instead (a forfeit).
const STRICT_ENV = 'MAILBOX_STRICT';

// What choose() returned, as the bot author wrote it.
function described(pick, size) {
  if (Number.isInteger(pick) && pick >= 0 && pick < size * size) {
    return `${squareName(pick, size)} (index ${pick})`;
  }
  return typeof pick === 'string' ? JSON.stringify(pick) : String(pick);
}

// The conversation loop; choose(turn) picks a key of turn.moves.
// options: a folder (string), or { folder, strict }.
//
// When choose() returns something that is not a legal move, or throws, the
// library logs a line starting with 'mailbox fallback:' (check-bot fails the
// bot for it, the referee warns) and plays the first legal move so the game
// goes on. With { strict: true } (or MAILBOX_STRICT=1 in the environment) it
// throws instead: the bot ends and forfeits, which is what you want while
// developing.
function run(choose, options) {
  const opts = typeof options === 'string' ? { folder: options } : options || {};
  const env = process.env[STRICT_ENV] || '';
  const strict = opts.strict === undefined ? env !== '' && env !== '0' : Boolean(opts.strict);
  const box = new Mailbox(opts.folder);
  for (;;) {
    const msg = box.wait();
    const w = msg.words;
    try {
      if (w[0] === 'NEW') box.answer('READY');
      else if (w[0] === 'END') box.answer('BYE');
      else if (w[0] === 'TURN') {
        const turn = new Turn(w);
        if (turn.moves.size === 0) {
          box.answer('pass');
          continue;
        }
        const first = squareName(turn.moves.keys().next().value, turn.size);
        let chosen;
        try {
          chosen = choose(turn);
        } catch (e) {
          if (strict) throw e;
          const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
          log(`${FALLBACK} seq ${msg.seq}: choose() threw ${what}; played ${first}, the first legal move`);
          log(String(e && e.stack));
          box.answer(first);
          continue;
        }
        let pick = typeof chosen === 'string' ? squareIndex(chosen, turn.size) : chosen;
        if (!turn.moves.has(pick)) { // a bug in the bot: stay legal
          const text = `${FALLBACK} seq ${msg.seq}: choose() returned ${described(chosen, turn.size)}, `
            + `not a legal move; played ${first}, the first legal move`;
          if (strict) throw new Error(text);
          log(text);
          pick = turn.moves.keys().next().value;
        }
        box.answer(squareName(pick, turn.size));
      } else box.answer('OK'); // ILLEGAL, and anything a newer referee may send
    } catch (e) { // never die in the middle of a game
      if (strict) throw e;
      log(`${FALLBACK} seq ${msg.seq}: error on ${JSON.stringify(msg.text.slice(0, 80))}: ${e && e.stack}`);
      if (box.answered !== msg.seq) {
        let answer = 'OK';
        if (w[0] === 'TURN') {
          try {
            const t = new Turn(w);
            answer = t.moves.size ? squareName(t.moves.keys().next().value, t.size) : 'pass';
          } catch (e2) {
            answer = 'pass';
          }
        }
        box.answer(answer);
      }
    }
  }
}

module.exports = {
  Mailbox, Turn, run, log, FALLBACK, sleep, squareName, squareIndex, flips, legalMoves, play, DIRECTIONS,
};
