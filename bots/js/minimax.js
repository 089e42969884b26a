#!/usr/bin/env node
// Minimax bot: looks 3 plies ahead (my move, the answer, my next move) with
// alpha-beta pruning, and scores the positions it reaches by
//   mobility: how many moves I have minus how many the opponent has, and
//   position: the classic square weights (corners good, next to corners bad).
// It stops searching deeper when a quarter of the move time is used up.
//
//   tournament.toml:  command = ["node", "bots/js/minimax.js"]
//   by hand:          node bots/js/minimax.js path/to/board/players/alice
'use strict';
const path = require('path');
const mb = require(path.join(__dirname, 'mailbox.js'));

const DEPTH = 3;
const WIN = 100000;

// Classic weights for any even size (8x8: 100 -20 10 5 5 10 -20 100 / -20 -50 -2 ...).
function weight(i, size) {
  const r = Math.floor(i / size);
  const c = i % size;
  const a = Math.min(r, size - 1 - r);
  const b = Math.min(c, size - 1 - c);
  const near = Math.min(a, b);
  const far = Math.max(a, b);
  if (near === 0) return far === 0 ? 100 : far === 1 ? -20 : far === 2 ? 10 : 5;
  if (near === 1) return far === 1 ? -50 : -2;
  return -1;
}

class OutOfTime extends Error {}

function evaluate(board, size, me, them, weights) {
  const myMoves = mb.legalMoves(board, size, me).size;
  const theirMoves = mb.legalMoves(board, size, them).size;
  let discs = 0;
  let position = 0;
  for (let i = 0; i < board.length; i++) {
    if (board[i] === me) { discs++; position += weights[i]; }
    else if (board[i] === them) { discs--; position -= weights[i]; }
  }
  if (myMoves === 0 && theirMoves === 0) { // game over: only the discs count
    return discs > 0 ? WIN + discs : discs < 0 ? -WIN + discs : 0;
  }
  return 10 * (myMoves - theirMoves) + position;
}

// Negamax with alpha-beta: the score for `me`, who is to move on `board`.
function search(board, size, me, depth, alpha, beta, ctx) {
  if (++ctx.nodes % 256 === 0 && Date.now() > ctx.deadline) throw new OutOfTime();
  const them = me === 'X' ? 'O' : 'X';
  if (depth === 0) return evaluate(board, size, me, them, ctx.weights);
  const moves = mb.legalMoves(board, size, me);
  if (moves.size === 0) {
    if (mb.legalMoves(board, size, them).size === 0) return evaluate(board, size, me, them, ctx.weights);
    return -search(board, size, them, depth - 1, -beta, -alpha, ctx); // I must pass
  }
  let best = -Infinity;
  for (const i of ordered(moves, ctx.weights)) {
    const v = -search(mb.play(board, size, i, me), size, them, depth - 1, -beta, -alpha, ctx);
    if (v > best) best = v;
    if (best > alpha) alpha = best;
    if (alpha >= beta) break;
  }
  return best;
}

// Good squares first, so alpha-beta can cut more.
function ordered(moves, weights) {
  return [...moves.keys()].sort((a, b) => weights[b] - weights[a]);
}

function choose(turn) {
  const { board, size, me, them } = turn;
  const weights = board.map((_, i) => weight(i, size));
  const order = ordered(turn.moves, weights);
  if (order.length === 1) return order[0];
  const ctx = { nodes: 0, weights, deadline: turn.started + Math.max(20, turn.ms / 4) };
  let best = order[0]; // the best-weighted square, in case time runs out at once
  // iterative deepening: 1 ply, 2 plies, 3 plies; keep the last finished result
  for (let depth = 1; depth <= DEPTH; depth++) {
    try {
      let alpha = -Infinity;
      let bestHere = order[0];
      for (const i of order) {
        const v = -search(mb.play(board, size, i, me), size, them, depth - 1, -Infinity, -alpha, ctx);
        if (v > alpha) { alpha = v; bestHere = i; }
      }
      best = bestHere;
    } catch (e) {
      if (!(e instanceof OutOfTime)) throw e;
      mb.log(`depth ${depth} ran out of time after ${ctx.nodes} nodes`);
      break;
    }
  }
  return best;
}

mb.run(choose);
