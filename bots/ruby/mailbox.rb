# Mailbox protocol v1 for Ruby bots (standard library only). See PROTOCOL.md.
#
#   require_relative "mailbox"          # found next to your bot, whatever the cwd
#   Mailbox.run do |turn|               # called only when you have a legal move
#     turn.moves.keys.first             # return an index (or a name like "d3")
#   end
#
# Mailbox.run answers NEW with READY, TURN with your move (`pass` by itself
# when you have none), ILLEGAL and anything unknown with OK, END with BYE, and
# never returns: the referee ends the process.
#
# The mailbox folder is ARGV[0] if given, else $TOURNAMENT_MAILBOX, else the
# current directory (the referee starts spawned bots inside their mailbox).

module Mailbox
  POLL_SECONDS = 0.005
  # [row step, column step] for the eight directions
  DIRECTIONS = [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 0], [1, 1]].freeze

  def self.log(*parts)
    $stderr.puts(parts.join(" ")) # stderr ends up in the referee's game log
    $stderr.flush
  end

  Message = Struct.new(:from, :to, :seq, :text) do
    def words
      text.split(" ")
    end
  end

  class Box
    attr_reader :folder, :answered

    def initialize(folder = nil)
      @folder = folder || ARGV[0] || ENV["TOURNAMENT_MAILBOX"] || "."
      @in_path = File.join(@folder, "in.txt")
      @out_path = File.join(@folder, "out.txt")
      @answered = nil # seq of the last message we answered
      @current = nil
    end

    # One look at in.txt: a new Message, or nil (missing, incomplete, already answered).
    def read
      data = File.binread(@in_path, 4096)
      return nil if data.nil? || data.count("\n") < 4 # four complete lines needed
      from, to, seq, text = data.split("\n", 5).first(4).map { |l| l.chomp("\r") }
      return nil if from != "referee" || seq !~ /\A\d+\z/ || seq == @answered
      Message.new(from, to, seq, text)
    rescue SystemCallError # missing, or being replaced right now
      nil
    end

    # Wait until the referee wrote a message we have not answered yet.
    def wait
      loop do
        msg = read
        return @current = msg if msg
        sleep POLL_SECONDS
      end
    end

    # Answer the message from the last wait: one write of the whole out.txt.
    def answer(text)
      File.binwrite(@out_path, "#{@current.to}\nreferee\n#{@current.seq}\n#{text}\n")
      @answered = @current.seq
    end
  end

  # ------------------------------------------------------------- the board

  def self.square_name(i, size)
    "#{("a".ord + i % size).chr}#{i / size + 1}"
  end

  def self.square_index(name, size)
    m = /\A([a-z])(\d+)\z/.match(name.to_s.strip.downcase) or return nil
    col = m[1].ord - "a".ord
    row = m[2].to_i - 1
    col < size && row >= 0 && row < size ? row * size + col : nil
  end

  # Indices turned over if `me` ("X" or "O") plays on square i.
  def self.flips(board, size, i, me)
    return [] unless board[i] == "-"
    them = me == "X" ? "O" : "X"
    row0, col0 = i.divmod(size)
    turned = []
    DIRECTIONS.each do |dr, dc|
      r = row0 + dr
      c = col0 + dc
      line = []
      while r >= 0 && r < size && c >= 0 && c < size && board[r * size + c] == them
        line << r * size + c
        r += dr
        c += dc
      end
      turned.concat(line) if !line.empty? && r >= 0 && r < size && c >= 0 && c < size && board[r * size + c] == me
    end
    turned
  end

  # { index => [flipped indices] } for every legal move of `me`.
  def self.legal_moves(board, size, me)
    moves = {}
    (size * size).times do |i|
      f = flips(board, size, i, me)
      moves[i] = f unless f.empty?
    end
    moves
  end

  # A new board (array) after `me` plays on i.
  def self.play(board, size, i, me)
    b = board.dup
    flips(board, size, i, me).each { |j| b[j] = me }
    b[i] = me
    b
  end

  # A parsed `TURN <color> <board> <last> <ms>`.
  class Turn
    attr_reader :color, :me, :them, :board, :size, :last, :ms, :moves

    def initialize(words)
      @color = words[1] # "black" or "white"
      @me = @color == "black" ? "X" : "O"
      @them = @me == "X" ? "O" : "X"
      @board = words[2].chars # "X", "O", "-"; index = row * size + col
      @size = Math.sqrt(@board.length).round
      @last = words[3] # "d3", "pass" or "none"
      @ms = words[4].to_i # time for this move
      @started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      @moves = Mailbox.legal_moves(@board, @size, @me)
    end

    def elapsed_ms
      (Process.clock_gettime(Process::CLOCK_MONOTONIC) - @started) * 1000.0
    end
  end

  # Starts the line logged when the library chose a move for you.
  FALLBACK = "mailbox fallback:"
  # Set to 1: a bad choice ends the bot instead (a forfeit).
  STRICT_ENV = "MAILBOX_STRICT"

  # What the block returned, as the bot author wrote it.
  def self.described(pick, size)
    return "#{square_name(pick, size)} (index #{pick})" if pick.is_a?(Integer) && pick >= 0 && pick < size * size
    pick.inspect
  end

  # The conversation loop; the block chooses a move from turn.moves.
  #
  # When the block returns something that is not a legal move, or raises,
  # the library logs a line starting with "mailbox fallback:" (check-bot
  # fails the bot for it, the referee warns) and plays the first legal move so
  # the game goes on. With strict: true (or MAILBOX_STRICT=1 in the
  # environment) it raises instead: the bot ends and forfeits, which is what
  # you want while developing.
  def self.run(folder = nil, strict: nil, &choose)
    strict = !["", "0"].include?(ENV.fetch(STRICT_ENV, "")) if strict.nil?
    box = Box.new(folder)
    loop do
      msg = box.wait
      w = msg.words
      begin
        case w[0]
        when "NEW" then box.answer("READY")
        when "END" then box.answer("BYE")
        when "TURN"
          turn = Turn.new(w)
          if turn.moves.empty?
            box.answer("pass")
          else
            first = square_name(turn.moves.keys.first, turn.size)
            begin
              chosen = choose.call(turn)
            rescue StandardError => e
              raise if strict
              log("#{FALLBACK} seq #{msg.seq}: your block raised #{e.class}: #{e.message}; played #{first}, the first legal move")
              box.answer(first)
              next
            end
            pick = chosen.is_a?(String) ? square_index(chosen, turn.size) : chosen
            unless turn.moves.key?(pick) # a bug in the bot: stay legal
              text = "#{FALLBACK} seq #{msg.seq}: your block returned #{described(chosen, turn.size)}, " \
                     "not a legal move; played #{first}, the first legal move"
              raise text if strict
              log(text)
              pick = turn.moves.keys.first
            end
            box.answer(square_name(pick, turn.size))
          end
        else box.answer("OK") # ILLEGAL, and anything a newer referee may send
        end
      rescue StandardError => e # never die in the middle of a game
        raise if strict
        log("#{FALLBACK} seq #{msg.seq}: error on #{msg.text[0, 80].inspect}: #{e.class}: #{e.message}")
        next if box.answered == msg.seq
        if w[0] == "TURN"
          size = Math.sqrt(w[2].to_s.length).round
          moves = (legal_moves(w[2].to_s.chars, size, w[1] == "black" ? "X" : "O") rescue {})
          box.answer(moves.empty? ? "pass" : square_name(moves.keys.first, size))
        else
          box.answer("OK")
        end
      end
    end
  end
end
