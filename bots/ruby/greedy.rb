#!/usr/bin/env ruby
# Greedy bot: plays the move that turns over the most discs
# (ties: the first such square in reading order a1, b1, ..., a2, ...).
#
#   tournament.toml:  command = ["ruby", "bots/ruby/greedy.rb"]
#   by hand:          ruby bots/ruby/greedy.rb path/to/board/players/alice

require_relative "mailbox"

Mailbox.run do |turn|
  # turn.moves is { square index => [indices it turns over] }
  turn.moves.max_by { |i, flipped| [flipped.length, -i] }.first
end
