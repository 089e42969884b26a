"""The bench's Python bot logic, shared by both harnesses: the first legal
move in the order a1, b1, ... h1, a2, ... (index 0 = a1, 1 = b1, ...).

`board` is size*size characters, row 1 first: X black, O white, - empty.
Returns the index of the move, or -1 when there is none.
"""

DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def first_move(board, me, n=8):
    them = "O" if me == "X" else "X"
    for i, ch in enumerate(board):
        if ch != "-":
            continue
        r, c = divmod(i, n)
        for dr, dc in DIRECTIONS:
            rr, cc, seen = r + dr, c + dc, 0
            while 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == them:
                rr, cc, seen = rr + dr, cc + dc, seen + 1
            if seen and 0 <= rr < n and 0 <= cc < n and board[rr * n + cc] == me:
                return i
    return -1
