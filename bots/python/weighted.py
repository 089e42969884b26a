#!/usr/bin/env python3
"""Positional bot: plays the square with the best weight from the classic
table (corners good, squares next to corners bad); with 10 or fewer empty
squares left it searches to the end of the game and plays the move with the
best final disc difference.

    tournament.toml:  command = ["python3", "bots/python/weighted.py"]
    by hand:          python3 bots/python/weighted.py path/to/board/players/alice
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mailbox  # noqa: E402  (bots/python/mailbox.py, not the standard library one)

EXACT_EMPTIES = 10      # solve the endgame exactly from this many empties on


def weight(i, size):
    """Classic positional weight, for any even board size.
    8x8 gives the well-known table:
        100 -20  10   5   5  10 -20 100
        -20 -50  -2  -2  -2  -2 -50 -20
         10  -2  -1  -1  -1  -1  -2  10
          5  -2  -1  -1  -1  -1  -2   5   (and mirrored below)"""
    r, c = divmod(i, size)
    a = min(r, size - 1 - r)          # distance to the nearest top/bottom edge
    b = min(c, size - 1 - c)          # distance to the nearest left/right edge
    near, far = min(a, b), max(a, b)
    if near == 0:
        if far == 0:
            return 100                # corner
        if far == 1:
            return -20                # C-square: on the edge next to a corner
        return 10 if far == 2 else 5  # other edge squares
    if near == 1:
        return -50 if far == 1 else -2   # X-square (diagonal to a corner) / 2nd ring
    return -1


# ------------------------------------------------------- exact endgame search
# The position is two ints: bit i set = square i holds a disc (a1 = bit 0,
# b1 = bit 1, ..., a2 = bit size). Only the few empty squares are looked at.

class OutOfTime(Exception):
    pass


class Endgame:
    def __init__(self, n, deadline):
        self.n = n
        self.deadline = deadline
        self.nodes = 0
        # rays[i]: for each direction from square i, the bits walked in order
        # (only directions with room for a flip: at least two squares).
        self.rays = []
        for i in range(n * n):
            r0, c0 = divmod(i, n)
            mine = []
            for dr, dc in mailbox.DIRECTIONS:
                ray = []
                r, c = r0 + dr, c0 + dc
                while 0 <= r < n and 0 <= c < n:
                    ray.append(1 << (r * n + c))
                    r, c = r + dr, c + dc
                if len(ray) >= 2:
                    mine.append(ray)
            self.rays.append(mine)

    def flips(self, p, o, i):
        """Bits turned over if the side owning p plays on empty square i."""
        f = 0
        for ray in self.rays[i]:
            line = 0
            for b in ray:
                if b & o:
                    line |= b
                elif b & p:
                    f |= line
                    break
                else:
                    break
        return f

    def solve(self, p, o, empties, alpha, beta, passed):
        """Best final disc difference (p minus o) for the side to move."""
        self.nodes += 1
        if self.nodes & 1023 == 0 and time.monotonic() > self.deadline:
            raise OutOfTime()
        if len(empties) == 1:                    # last square: no search needed
            i = empties[0]
            f = self.flips(p, o, i)
            if f:
                p, o = p | f | (1 << i), o & ~f
            else:
                f = self.flips(o, p, i)
                if f:
                    o, p = o | f | (1 << i), p & ~f
            return bin(p).count('1') - bin(o).count('1')
        best = -1000
        moved = False
        for i in empties:                        # empties are in good-first order
            f = self.flips(p, o, i)
            if not f:
                continue
            moved = True
            rest = [e for e in empties if e != i]
            v = -self.solve(o & ~f, p | f | (1 << i), rest, -beta, -alpha, False)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        if not moved:
            if passed:                           # neither side can move: game over
                return bin(p).count('1') - bin(o).count('1')
            return -self.solve(o, p, empties, -beta, -alpha, True)
        return best


def exact_move(turn, budget_s):
    """(index, final disc difference) or None if it did not finish in time."""
    n = turn.size
    p = o = 0
    for i, ch in enumerate(turn.board):
        if ch == turn.me:
            p |= 1 << i
        elif ch == turn.them:
            o |= 1 << i
    eg = Endgame(n, time.monotonic() + budget_s)
    empties = sorted((i for i, ch in enumerate(turn.board) if ch == '-'),
                     key=lambda i: -weight(i, n))
    best_i, best_v = None, -1000
    try:
        for i in empties:
            if i not in turn.moves:
                continue
            f = eg.flips(p, o, i)
            rest = [e for e in empties if e != i]
            v = -eg.solve(o & ~f, p | f | (1 << i), rest, -1000, -best_v, False)
            if v > best_v:
                best_i, best_v = i, v
    except OutOfTime:
        mailbox.log('endgame search ran out of time after %d nodes' % eg.nodes)
        return None
    mailbox.log('endgame: %s scores %+d (%d nodes)'
                % (mailbox.square_name(best_i, n), best_v, eg.nodes))
    return best_i, best_v


def choose(turn):
    if len(turn.moves) == 1:
        return next(iter(turn.moves))
    if turn.board.count('-') <= EXACT_EMPTIES:
        # use at most 40 % of the move time, never more than 0.8 s
        budget = min(0.8, turn.ms / 1000.0 * 0.4) - turn.elapsed_ms() / 1000.0
        found = exact_move(turn, budget)
        if found:
            return found[0]
    # best weight; among equals, the move that turns over fewer discs
    return max(turn.moves, key=lambda i: (weight(i, turn.size), -len(turn.moves[i])))


if __name__ == '__main__':
    mailbox.run(choose)
