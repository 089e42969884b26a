#!/usr/bin/env ruby
# Positional bot: plays the square with the best weight from the classic
# table: corners are worth a lot, the squares next to a corner (C-squares on
# the edge, X-squares on the diagonal) are dangerous because they hand the
# corner to the opponent. Ties: fewer flipped discs (keeps the opponent short
# of moves), then reading order.
#
#   tournament.toml:  command = ["ruby", "bots/ruby/weighted.rb"]
#   by hand:          ruby bots/ruby/weighted.rb path/to/board/players/alice

require_relative "mailbox"

# The classic 8x8 table, built from each square's distance to the edges so
# that 6x6 and 4x4 get the same shape (corner, C, X, edge, inner):
#   100 -20  10   5   5  10 -20 100
#   -20 -50  -2  -2  -2  -2 -50 -20
#    10  -2  -1  -1  -1  -1  -2  10
#     5  -2  -1  -1  -1  -1  -2   5   ... mirrored below
# 6x6: 100 -20 10 10 -20 100 / -20 -50 -2 -2 -50 -20 / 10 -2 -1 -1 -2 10 ...
# 4x4: 100 -20 -20 100 / -20 -50 -50 -20 / ...
def weight(i, size)
  r, c = i.divmod(size)
  a = [r, size - 1 - r].min # distance to the nearest top/bottom edge
  b = [c, size - 1 - c].min # distance to the nearest left/right edge
  near, far = [a, b].minmax
  case near
  when 0 then far.zero? ? 100 : far == 1 ? -20 : far == 2 ? 10 : 5
  when 1 then far == 1 ? -50 : -2
  else -1
  end
end

Mailbox.run do |turn|
  turn.moves.max_by { |i, flipped| [weight(i, turn.size), -flipped.length, -i] }.first
end
