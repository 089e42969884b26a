# The first-legal-move bot for rust-reversi's Arena (stdin/stdout), on the
# shipped library's move generator: `ruby arena_first.rb BLACK|WHITE`
# answers `ping` with `pong`, then each 64-character board line (X black,
# O white, - empty) with the index of the first legal move.
require_relative "mailbox"

me = ARGV.last == "BLACK" ? "X" : "O"
$stdout.sync = true
$stdin.each_line do |line|
  line = line.strip
  if line == "ping"
    $stdout.write("pong\n")
  else
    $stdout.write("#{Mailbox.legal_moves(line.chars, 8, me).keys.min}\n")
  end
end
