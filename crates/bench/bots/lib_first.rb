# The first-legal-move bot written on the shipped library
# (bots/ruby/mailbox.rb, copied next to this file by the bench): what a user
# of the library gets. The same logic as arena_first.rb.
require_relative "mailbox"

Mailbox.run { |turn| turn.moves.keys.min }
