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
'use strict';
const fs = require('fs');
const path = require('path');

const POLL_MS = 5;
// [row step, column step] for the eight directions
const DIRECTIONS = [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 0], [1, 1]];

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleep(ms) {
  Atomics.wait(sleeper, 0, 0, ms); // a real sleep: no busy loop
}

function log(...parts) {
  process.stderr.write(parts.join(' ') + '\n'); // goes into the game log
}

class Mailbox {
  constructor(folder) {
    this.folder = folder || process.argv[2] || process.env.TOURNAMENT_MAILBOX || '.';
    this.inPath = path.join(this.folder, 'in.txt');
    this.outPath = path.join(this.folder, 'out.txt');
    this.answered = null; // seq of the last message we answered
    this.current = null;
  }

  // One look at in.txt: a new message {from, to, seq, text, words} or null.
  read() {
    let data;
    try {
      data = fs.readFileSync(this.inPath, 'latin1');
    } catch (e) {
      return null; // not there yet, or being replaced right now
    }
    const lines = data.split('\n');
    if (lines.length < 5) return null; // fewer than four complete lines
    const [from, to, seq, text] = lines.slice(0, 4).map((l) => l.replace(/\r$/, ''));
    if (from !== 'referee' || !/^\d+$/.test(seq) || seq === this.answered) return null;
    return { from, to, seq, text, words: text.split(' ') };
  }

  // Block until the referee wrote a message we have not answered yet.
  wait() {
    for (;;) {
      const msg = this.read();
      if (msg) return (this.current = msg);
      sleep(POLL_MS);
    }
  }

  // Answer the message from the last wait(): one write of the whole out.txt.
  answer(text) {
    const m = this.current;
    fs.writeFileSync(this.outPath, `${m.to}\nreferee\n${m.seq}\n${text}\n`, 'latin1');
    this.answered = m.seq;
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
