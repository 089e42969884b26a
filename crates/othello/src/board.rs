//! Othello positions as a pair of bitboards, and the rules that move them.
//!
//! Owns: the start position, legal-move generation, flips, passes, game end
//! and disc counts (raw and winner-takes-empties). Pure: no I/O, no clocks.
//!
//! Boards of size 4, 6 and 8 share one layout: square `(col, row)` is bit
//! `row * 8 + col`, with `row 0` the top row ("1") and `col 0` the left
//! column ("a"). On smaller boards the bits outside the `size × size` corner
//! are always zero; every shift is masked so no disc ever lands there.

use std::fmt;

/// One of the two sides. Black moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    Black,
    White,
}

impl Color {
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// `black` / `white`, as the protocol and the records spell it.
    pub fn name(self) -> &'static str {
        match self {
            Color::Black => "black",
            Color::White => "white",
        }
    }

    /// The character that stands for this colour in a board string.
    pub fn disc_char(self) -> char {
        match self {
            Color::Black => 'X',
            Color::White => 'O',
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A square, as its bit index in the 8-wide layout (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square at `col`, `row` (both from 0). Panics outside 8×8.
    pub fn new(col: u8, row: u8) -> Square {
        assert!(col < 8 && row < 8, "square ({col}, {row}) outside 8x8");
        Square(row * 8 + col)
    }

    pub fn from_index(index: u8) -> Square {
        assert!(index < 64);
        Square(index)
    }

    pub fn index(self) -> u8 {
        self.0
    }

    pub fn col(self) -> u8 {
        self.0 % 8
    }

    pub fn row(self) -> u8 {
        self.0 / 8
    }

    pub fn bit(self) -> u64 {
        1u64 << self.0
    }
}

/// What a player does on its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move {
    Play(Square),
    Pass,
}

/// The valid board sizes.
pub const SIZES: [u8; 3] = [4, 6, 8];

/// Per-size masks: which bits are on the board, and where each shift may land.
#[derive(Clone, Copy, Debug)]
pub(super) struct Geometry {
    on_board: u64,
    /// For each of the 8 directions, the squares a one-step shift may land on.
    landing: [u64; 8],
}

/// The 8 directions as shifts in the 8-wide layout: positive shifts left.
const SHIFTS: [i8; 8] = [1, -1, 8, -8, 9, -9, 7, -7];

const fn geometry(size: u8) -> Geometry {
    let mut on_board = 0u64;
    let mut row = 0;
    while row < size {
        let mut col = 0;
        while col < size {
            on_board |= 1u64 << (row * 8 + col);
            col += 1;
        }
        row += 1;
    }
    let col_a: u64 = 0x0101_0101_0101_0101;
    let col_h: u64 = col_a << 7;
    // A step with a +1 column component must not land in column a (that is a
    // wrap from column h); a -1 column component must not land in column h.
    let east = on_board & !col_a;
    let west = on_board & !col_h;
    Geometry {
        on_board,
        landing: [east, west, on_board, on_board, east, west, west, east],
    }
}

const GEOMETRIES: [Geometry; 3] = [geometry(4), geometry(6), geometry(8)];

#[inline(always)]
fn shift(bits: u64, by: i8) -> u64 {
    if by > 0 {
        bits << by
    } else {
        bits >> (-by)
    }
}

/// Squares where the side owning `me` may move, against `opp`.
#[inline(always)]
pub(super) fn moves_of(me: u64, opp: u64, geo: &Geometry) -> u64 {
    let empty = geo.on_board & !(me | opp);
    let mut moves = 0u64;
    for (&by, &land) in SHIFTS.iter().zip(&geo.landing) {
        let o = opp & land;
        // Runs of opponent discs adjacent to ours, up to 6 long.
        let mut run = shift(me, by) & o;
        run |= shift(run, by) & o;
        let o2 = o & shift(o, by);
        let by2 = by * 2;
        run |= shift(run, by2) & o2;
        run |= shift(run, by2) & o2;
        moves |= shift(run, by) & land;
    }
    moves & empty
}

/// Discs flipped when the side owning `me` plays `sq` against `opp`.
/// Branch-free: in each direction, the run of opponent discs next to `sq`
/// is filled by doubling shifts and kept if one of our discs closes it.
#[inline(always)]
pub(super) fn flips_of(me: u64, opp: u64, sq: u8, geo: &Geometry) -> u64 {
    let start = 1u64 << sq;
    let mut flipped = 0u64;
    for (&by, &land) in SHIFTS.iter().zip(&geo.landing) {
        let o = opp & land;
        let mut run = shift(start, by) & o;
        run |= shift(run, by) & o;
        let o2 = o & shift(o, by);
        let by2 = by * 2;
        run |= shift(run, by2) & o2;
        run |= shift(run, by2) & o2;
        let closed = (shift(run, by) & land & me != 0) as u64;
        flipped |= run & closed.wrapping_neg();
    }
    flipped
}

/// A position: the discs of both sides, the side to move, and the board size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    black: u64,
    white: u64,
    to_move: Color,
    size: u8,
}

/// Why a move was refused. The referee turns these into adjudications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IllegalMove {
    /// The square is outside this board's size.
    OffBoard,
    /// A disc is already on the square.
    Occupied,
    /// The square is empty but the move flips nothing.
    NoFlips,
    /// A pass while a move exists.
    PassWithMoves,
    /// A move was given where only a pass is possible (no legal move).
    MustPass,
}

impl IllegalMove {
    /// One word, as used in ILLEGAL messages and game records.
    pub fn code(self) -> &'static str {
        match self {
            IllegalMove::OffBoard => "off-board",
            IllegalMove::Occupied => "occupied",
            IllegalMove::NoFlips => "no-flips",
            IllegalMove::PassWithMoves => "pass-with-moves",
            IllegalMove::MustPass => "must-pass",
        }
    }
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IllegalMove::OffBoard => "square is off the board",
            IllegalMove::Occupied => "square is occupied",
            IllegalMove::NoFlips => "move flips no disc",
            IllegalMove::PassWithMoves => "pass while a legal move exists",
            IllegalMove::MustPass => "no legal move: the only answer is pass",
        })
    }
}

/// Disc counts at the end of a game (or at any moment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Discs {
    pub black: u32,
    pub white: u32,
}

impl Discs {
    /// The winner by these counts, `None` for a draw.
    pub fn winner(self) -> Option<Color> {
        use std::cmp::Ordering::*;
        match self.black.cmp(&self.white) {
            Greater => Some(Color::Black),
            Less => Some(Color::White),
            Equal => None,
        }
    }
}

impl Position {
    /// The standard start position for `size` (4, 6 or 8): d4/e5 white,
    /// d5/e4 black on 8×8, centred the same way on smaller boards; black to move.
    pub fn start(size: u8) -> Position {
        assert!(SIZES.contains(&size), "board size {size} is not 4, 6 or 8");
        let h = size / 2;
        let white = Square::new(h - 1, h - 1).bit() | Square::new(h, h).bit();
        let black = Square::new(h, h - 1).bit() | Square::new(h - 1, h).bit();
        Position {
            black,
            white,
            to_move: Color::Black,
            size,
        }
    }

    /// A position from raw parts. Returns `None` if the bitboards overlap or
    /// put discs outside the board.
    pub fn from_parts(black: u64, white: u64, to_move: Color, size: u8) -> Option<Position> {
        if !SIZES.contains(&size) {
            return None;
        }
        let on_board = Self::geometry_for(size).on_board;
        if black & white != 0 || (black | white) & !on_board != 0 {
            return None;
        }
        Some(Position {
            black,
            white,
            to_move,
            size,
        })
    }

    pub(super) fn geometry_for(size: u8) -> &'static Geometry {
        match size {
            4 => &GEOMETRIES[0],
            6 => &GEOMETRIES[1],
            _ => &GEOMETRIES[2],
        }
    }

    #[inline(always)]
    fn geometry(&self) -> &'static Geometry {
        Self::geometry_for(self.size)
    }

    pub fn size(&self) -> u8 {
        self.size
    }

    pub fn to_move(&self) -> Color {
        self.to_move
    }

    /// The bits of the given side's discs.
    pub fn discs_of(&self, color: Color) -> u64 {
        match color {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }

    /// All squares of this board.
    pub fn on_board(&self) -> u64 {
        self.geometry().on_board
    }

    pub fn contains(&self, sq: Square) -> bool {
        self.on_board() & sq.bit() != 0
    }

    /// What stands on `sq`.
    pub fn at(&self, sq: Square) -> Option<Color> {
        if self.black & sq.bit() != 0 {
            Some(Color::Black)
        } else if self.white & sq.bit() != 0 {
            Some(Color::White)
        } else {
            None
        }
    }

    #[inline(always)]
    pub(super) fn mine_theirs(&self) -> (u64, u64) {
        match self.to_move {
            Color::Black => (self.black, self.white),
            Color::White => (self.white, self.black),
        }
    }

    /// The legal squares for the side to move, as a bitboard.
    #[inline]
    pub fn legal_moves(&self) -> u64 {
        let (me, opp) = self.mine_theirs();
        moves_of(me, opp, self.geometry())
    }

    /// The legal squares for the side to move, in square order.
    pub fn legal_squares(&self) -> Vec<Square> {
        squares(self.legal_moves()).collect()
    }

    /// True if the side to move must pass (it has no move, the game goes on).
    pub fn must_pass(&self) -> bool {
        self.legal_moves() == 0 && !self.is_over()
    }

    /// Game end: neither side can move.
    pub fn is_over(&self) -> bool {
        let geo = self.geometry();
        moves_of(self.black, self.white, geo) == 0 && moves_of(self.white, self.black, geo) == 0
    }

    /// The discs `sq` would flip for the side to move (0 if it flips none).
    pub fn flips(&self, sq: Square) -> u64 {
        let (me, opp) = self.mine_theirs();
        flips_of(me, opp, sq.0, self.geometry())
    }

    /// Checks `mv` for the side to move without playing it.
    pub fn check(&self, mv: Move) -> Result<(), IllegalMove> {
        let moves = self.legal_moves();
        match mv {
            Move::Pass if moves != 0 => Err(IllegalMove::PassWithMoves),
            Move::Pass => Ok(()),
            Move::Play(sq) if !self.contains(sq) => Err(IllegalMove::OffBoard),
            Move::Play(sq) if (self.black | self.white) & sq.bit() != 0 => {
                Err(IllegalMove::Occupied)
            }
            Move::Play(sq) if moves & sq.bit() == 0 => Err(IllegalMove::NoFlips),
            Move::Play(_) => Ok(()),
        }
    }

    /// Plays `mv` for the side to move; returns the new position and the
    /// flipped discs, or why the move is illegal.
    pub fn play(&self, mv: Move) -> Result<(Position, u64), IllegalMove> {
        self.check(mv)?;
        Ok(match mv {
            Move::Pass => (self.pass_unchecked(), 0),
            Move::Play(sq) => {
                let flips = self.flips(sq);
                (self.play_unchecked(sq, flips), flips)
            }
        })
    }

    /// Plays a square known to be legal with its precomputed flips.
    #[inline(always)]
    pub fn play_unchecked(&self, sq: Square, flips: u64) -> Position {
        let (me, opp) = self.mine_theirs();
        let me = me | flips | sq.bit();
        let opp = opp & !flips;
        let (black, white) = match self.to_move {
            Color::Black => (me, opp),
            Color::White => (opp, me),
        };
        Position {
            black,
            white,
            to_move: self.to_move.opponent(),
            size: self.size,
        }
    }

    /// Hands the move to the other side.
    #[inline(always)]
    pub fn pass_unchecked(&self) -> Position {
        Position {
            to_move: self.to_move.opponent(),
            ..*self
        }
    }

    /// Raw disc counts.
    pub fn discs(&self) -> Discs {
        Discs {
            black: self.black.count_ones(),
            white: self.white.count_ones(),
        }
    }

    /// Disc counts with the empty squares given to the winner (WOF rules);
    /// on a draw by raw count the empties are split evenly.
    pub fn discs_wof(&self) -> Discs {
        let raw = self.discs();
        let empty = (self.size as u32 * self.size as u32) - raw.black - raw.white;
        match raw.winner() {
            Some(Color::Black) => Discs {
                black: raw.black + empty,
                white: raw.white,
            },
            Some(Color::White) => Discs {
                black: raw.black,
                white: raw.white + empty,
            },
            None => Discs {
                black: raw.black + empty / 2,
                white: raw.white + empty / 2,
            },
        }
    }

    /// The position with the roles of the colours unchanged but every disc
    /// moved by one of the eight symmetries of the square (`0..8`).
    pub fn transformed(&self, symmetry: u8) -> Position {
        let t = |bits: u64| {
            let mut out = 0u64;
            for sq in squares(bits) {
                out |= transform_square(sq, self.size, symmetry).bit();
            }
            out
        };
        Position {
            black: t(self.black),
            white: t(self.white),
            ..*self
        }
    }
}

/// Maps `sq` by one of the eight symmetries of a `size` board.
pub fn transform_square(sq: Square, size: u8, symmetry: u8) -> Square {
    let n = size - 1;
    let (mut c, mut r) = (sq.col(), sq.row());
    if symmetry & 1 != 0 {
        c = n - c;
    }
    if symmetry & 2 != 0 {
        r = n - r;
    }
    if symmetry & 4 != 0 {
        std::mem::swap(&mut c, &mut r);
    }
    Square::new(c, r)
}

/// Iterates the set squares of a bitboard, lowest first.
pub fn squares(mut bits: u64) -> impl Iterator<Item = Square> {
    std::iter::from_fn(move || {
        if bits == 0 {
            None
        } else {
            let sq = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            Some(Square(sq))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_have_four_legal_moves() {
        for size in SIZES {
            let p = Position::start(size);
            assert_eq!(p.discs(), Discs { black: 2, white: 2 });
            assert_eq!(p.legal_moves().count_ones(), 4, "size {size}");
            assert_eq!(p.to_move(), Color::Black);
        }
    }

    #[test]
    fn start_8x8_is_d4_e5_white() {
        let p = Position::start(8);
        assert_eq!(p.at(Square::new(3, 3)), Some(Color::White));
        assert_eq!(p.at(Square::new(4, 4)), Some(Color::White));
        assert_eq!(p.at(Square::new(3, 4)), Some(Color::Black));
        assert_eq!(p.at(Square::new(4, 3)), Some(Color::Black));
        // Black's moves: d3, c4, f5, e6.
        let expected = [(3, 2), (2, 3), (5, 4), (4, 5)]
            .iter()
            .fold(0u64, |acc, &(c, r)| acc | Square::new(c, r).bit());
        assert_eq!(p.legal_moves(), expected);
    }

    #[test]
    fn illegal_moves_are_classified() {
        let p = Position::start(8);
        let cases = [
            (Move::Play(Square::new(3, 3)), IllegalMove::Occupied),
            (Move::Play(Square::new(0, 0)), IllegalMove::NoFlips),
            (Move::Pass, IllegalMove::PassWithMoves),
        ];
        for (mv, why) in cases {
            assert_eq!(p.play(mv).unwrap_err(), why);
        }
        let small = Position::start(6);
        assert_eq!(
            small.play(Move::Play(Square::new(7, 7))).unwrap_err(),
            IllegalMove::OffBoard
        );
    }

    #[test]
    fn no_wrap_around_the_edges() {
        // White on h1 with black discs continuing on a2: a wrap bug would let
        // white "move" through the edge.
        let black = Square::new(0, 1).bit() | Square::new(1, 1).bit();
        let white = Square::new(7, 0).bit();
        let p = Position::from_parts(black, white, Color::White, 8).unwrap();
        assert_eq!(p.legal_moves(), 0);
        // On a 6x6 board nothing may land on column g or row 7.
        let black = Square::new(4, 0).bit();
        let white = Square::new(5, 0).bit();
        let p = Position::from_parts(black, white, Color::White, 6).unwrap();
        assert_eq!(p.legal_moves(), Square::new(3, 0).bit());
    }

    #[test]
    fn wof_gives_empties_to_the_winner() {
        let black = Square::new(0, 0).bit() | Square::new(1, 0).bit();
        let white = Square::new(2, 0).bit();
        let p = Position::from_parts(black, white, Color::Black, 4).unwrap();
        assert_eq!(
            p.discs_wof(),
            Discs {
                black: 15,
                white: 1
            }
        );
        let p = Position::from_parts(Square::new(0, 0).bit(), white, Color::Black, 4).unwrap();
        assert_eq!(p.discs_wof(), Discs { black: 8, white: 8 });
    }
}
