// The first-legal-move bot for rust-reversi's Arena (stdin/stdout), on the
// shipped library's move generator: `node arena_first.js BLACK|WHITE`
// answers `ping` with `pong`, then each 64-character board line (X black,
// O white, - empty) with the index of the first legal move.
'use strict';
const fs = require('fs');
const path = require('path');
const mb = require(path.join(__dirname, 'mailbox.js'));

const me = process.argv[process.argv.length - 1] === 'BLACK' ? 'X' : 'O';
let pending = '';
const buf = Buffer.alloc(4096);
for (;;) {
  let n;
  try {
    n = fs.readSync(0, buf, 0, buf.length, null);
  } catch (e) {
    if (e.code === 'EAGAIN') continue;
    if (e.code === 'EOF') break;
    throw e;
  }
  if (n === 0) break;
  pending += buf.toString('latin1', 0, n);
  let nl;
  while ((nl = pending.indexOf('\n')) >= 0) {
    const line = pending.slice(0, nl).trim();
    pending = pending.slice(nl + 1);
    const answer = line === 'ping'
      ? 'pong'
      : String(Math.min(...mb.legalMoves(line.split(''), 8, me).keys()));
    fs.writeSync(1, answer + '\n');
  }
}
