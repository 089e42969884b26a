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
#
# A bot the referee starts may be offered a pipe ($TOURNAMENT_PIPE_FDS, see
# PROTOCOL.md, "The pipe"): the library takes it with its first answer, and
# from then on reads messages from the pipe and writes answers to it instead
# of in.txt / out.txt. When the referee closes the pipe, the bot exits (0).

begin
  require "fiddle" # standard library: inotify and statfs from libc
rescue LoadError
  nil # no Fiddle: the library polls
end

module Mailbox
  # out.txt is always written this many bytes long: the answer, then spaces
  # (PROTOCOL.md, "Fixed-length files"). Written over the old content without
  # truncating, its length never changes, so a network drive's cached file
  # size is always right and the referee sees the answer whole at once; and
  # on ext4 no truncation means no forced flush to disk.
  RECORD_BYTES = 128
  # Sleeps between two reads of in.txt where no notification comes (network
  # drives): short right after answering, doubling up to POLL_MAX, POLL_IDLE
  # after IDLE_AFTER seconds without a message.
  POLL_FIRST = 0.0005
  POLL_MAX = 0.008
  POLL_IDLE = 0.025
  IDLE_AFTER = 1.0
  # With notifications (a local folder): look again anyway this often.
  SAFETY_SECONDS = 0.25
  # statfs magic numbers of local file systems, where inotify sees every
  # write (ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, overlayfs, vfat).
  LOCAL_FS = [0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0xF2F52010, 0x2FC12FC1, 0x794C7630, 0x4D44].freeze
  IN_CLOSE_WRITE = 0x8
  IN_MOVED_TO = 0x80
  IN_Q_OVERFLOW = 0x4000
  # "R,W": the descriptors of the pipe the referee offers (PROTOCOL.md, "The pipe").
  PIPE_ENV = "TOURNAMENT_PIPE_FDS"
  # Said on W before the first answer to take the offer.
  PIPE_TAKE = "pipe\n"
  # fcntl(F_GETFL) & O_ACCMODE says how a descriptor was opened.
  F_GETFL = 3
  O_ACCMODE = 3
  O_RDONLY = 0
  O_WRONLY = 1
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

  # [reader, writer] for the pipe offered in $TOURNAMENT_PIPE_FDS, or nil:
  # no offer, or its descriptors are not open pipes that read and write.
  # The variable is removed, and the descriptors closed on exec: the offer is
  # for this process, not for programs it starts (where 3 and 4 may be
  # anything, or Ruby's own eventfds).
  def self.pipe_offer
    m = /\A(\d+),(\d+)\z/.match(ENV.delete(PIPE_ENV).to_s) or return nil
    reader, writer = [m[1], m[2]].map { |fd| IO.for_fd(fd.to_i, autoclose: false) }
    return nil unless reader.stat.pipe? && writer.stat.pipe?
    return nil if opened(reader) == O_WRONLY || opened(writer) == O_RDONLY
    reader.close_on_exec = writer.close_on_exec = true
    [reader, writer]
  rescue SystemCallError, IOError, ArgumentError # closed, or not a descriptor
    nil
  end

  def self.opened(io)
    io.fcntl(F_GETFL) & O_ACCMODE
  end

  def self.monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # A libc function through Fiddle, or nil.
  def self.libc(name, args, ret)
    @libc ||= Fiddle.dlopen(nil)
    Fiddle::Function.new(@libc[name], args, ret)
  rescue StandardError
    nil
  end

  # True if folder is on a local disk or in memory (Linux statfs).
  def self.local?(folder)
    return false unless RUBY_PLATFORM.include?("linux") && defined?(Fiddle)
    statfs = libc("statfs", [Fiddle::TYPE_VOIDP, Fiddle::TYPE_VOIDP], Fiddle::TYPE_INT) or return false
    buf = Fiddle::Pointer.malloc(512, Fiddle::RUBY_FREE)
    statfs.call(folder, buf).zero? && LOCAL_FS.include?(buf[0, 8].unpack1("q") & 0xFFFFFFFF)
  rescue StandardError
    false
  end

  # inotify on one folder: wait sleeps until `name` there is renamed into
  # place or closed after writing, or until the timeout.
  class Notifier
    def initialize(folder, name)
      init1 = Mailbox.libc("inotify_init1", [Fiddle::TYPE_INT], Fiddle::TYPE_INT)
      add = Mailbox.libc("inotify_add_watch", [Fiddle::TYPE_INT, Fiddle::TYPE_VOIDP, Fiddle::TYPE_INT], Fiddle::TYPE_INT)
      raise IOError, "no inotify" unless init1 && add
      fd = init1.call(File::NONBLOCK | 0o2000000) # O_CLOEXEC
      raise IOError, "inotify_init1" if fd.negative?
      @io = IO.for_fd(fd, autoclose: true)
      raise IOError, "inotify_add_watch" if add.call(fd, folder, IN_MOVED_TO | IN_CLOSE_WRITE).negative?
      @name = name.b
    end

    # true when `name` changed (or events were lost), false at the timeout.
    def wait(timeout)
      deadline = Mailbox.monotonic + timeout
      loop do
        left = deadline - Mailbox.monotonic
        return false if left <= 0 || !IO.select([@io], nil, nil, left)
        return true if ours?
      end
    end

    def ours?
      hit = false
      loop do
        data = @io.read_nonblock(4096, exception: false)
        return hit unless data.is_a?(String)
        i = 0
        while i + 16 <= data.bytesize
          mask, _cookie, len = data.byteslice(i + 4, 12).unpack("LLL")
          name = data.byteslice(i + 16, len).delete("\0")
          hit = true if name == @name || (mask & IN_Q_OVERFLOW) != 0
          i += 16 + len
        end
      end
    end

    def close
      @io.close
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
      @out_size = nil # the length out.txt has, once we wrote it
      @notifier = (Notifier.new(@folder, "in.txt") rescue nil) if Mailbox.local?(@folder)
      @offer = Mailbox.pipe_offer # until the first answer takes it (or not)
      @pipe = nil # [reader, writer] once taken: no more files
      announce
    end

    # Messages and answers go through the pipe (the offer was taken).
    def piped?
      !@pipe.nil?
    end

    # One look at in.txt: a new Message, or nil (missing, incomplete, already
    # answered).
    def read
      data = File.binread(@in_path, 4096).to_s
      if data.count("\n") < 4 && @notifier.nil? && defined?(File::DIRECT)
        # On a network drive a cached file length may cut the new message
        # short; a direct read asks the server for all of it.
        data = (File.open(@in_path, File::RDONLY | File::DIRECT) { |f| f.sysread(4096) } rescue data)
      end
      decode(data)
    rescue SystemCallError # missing, or being replaced right now
      nil
    end

    # The one decoder, for in.txt and the pipe: a new Message, or nil (fewer
    # than four complete lines, not from the referee, or already answered).
    # Anything after the fourth line (in.txt's padding) is ignored.
    def decode(data)
      return nil if data.count("\n") < 4 # four complete lines needed
      from, to, seq, text = data.split("\n", 5).first(4).map { |l| l.chomp("\r") }
      return nil if from != "referee" || seq !~ /\A\d+\z/ || seq == @answered
      Message.new(from, to, seq, text)
    end

    # The next message on the pipe. A blocking read: no CPU while the
    # referee thinks or the opponent plays. A message may come in pieces, so
    # read until four line feeds; one that is not for us is dropped whole,
    # and what follows it (the next message, sent before this one was
    # answered) is kept for the next call.
    # End of file: the referee has gone (or closed the pipe), so exit.
    def receive
      @pending ||= "".b
      loop do
        if @pending.count("\n") >= 4
          cut = 0
          4.times { cut = @pending.index("\n", cut) + 1 }
          msg = decode(@pending.slice!(0, cut)) and return msg
          next
        end
        @pending << @pipe[0].readpartial(4096)
      end
    rescue EOFError
      exit 0
    rescue SystemCallError, IOError => e
      gone(e)
    end

    # Wait until the referee wrote a message we have not answered yet: on the
    # pipe, a read; else woken by inotify on a local folder, else looking
    # often right after an answer and less often the longer nothing comes.
    def wait
      return @current = receive if piped?
      nap = POLL_FIRST
      since = Mailbox.monotonic
      loop do
        msg = read
        return @current = msg if msg
        if @notifier
          @notifier.wait(SAFETY_SECONDS)
          next
        end
        nap = POLL_IDLE if Mailbox.monotonic - since > IDLE_AFTER
        sleep nap
        nap = [nap * 2, [nap, POLL_MAX].max].min
      end
    end

    # At start: make out.txt RECORD_BYTES long (spaces: "no answer") if it is
    # not; this tells the referee the bot writes fixed-length files and reads
    # padded in.txt (PROTOCOL.md, "Fixed-length files").
    def announce
      if (File.size(@out_path) rescue nil) == RECORD_BYTES
        @out_size = RECORD_BYTES
      else
        write("")
      end
    rescue SystemCallError
      nil # not writable yet: the first answer does it
    end

    # out.txt := data padded with spaces to its fixed length, written over
    # the old content in one write, without truncating.
    def write(data)
      size = [RECORD_BYTES, data.bytesize, @out_size || 0].max
      # Opened to read and write: smbnetfs (a FUSE client of Windows
      # shares) fails to truncate a file opened write-only.
      File.open(@out_path, File::RDWR | File::CREAT | File::BINARY, 0o644) do |f|
        f.syswrite(data.ljust(size, " "))
        f.truncate(size) if size != @out_size # the first write: drop longer old content
      end
      @out_size = size
    end

    # Answer the message from the last wait (the one encoder): one write of
    # the whole out.txt, or of the four lines on the pipe.
    def answer(text)
      data = "#{@current.to}\nreferee\n#{@current.seq}\n#{text}\n"
      if piped?
        send_piped(data)
      else
        taken = take_offer
        write(data)
        use_pipe(taken) if taken
      end
      @answered = @current.seq
    end

    # With the first answer: say "pipe" on the offered pipe *before* out.txt
    # holds the answer, so the referee finds it there when it takes the
    # answer. The pipe if that write worked; else nil: the referee finds
    # nothing (a decline) and we stay on files.
    def take_offer
      pipe = @offer or return nil
      @offer = nil
      pipe[1].syswrite(PIPE_TAKE)
      pipe
    rescue SystemCallError, IOError
      nil
    end

    # From now on the referee writes to the pipe, not in.txt.
    def use_pipe(pipe)
      @pipe = pipe
      @notifier&.close
      @notifier = nil
    end

    # An answer on the pipe: one write, no padding, nothing after. A closed
    # pipe means the referee has gone, as does end of file in receive.
    def send_piped(data)
      @pipe[1].syswrite(data)
    rescue Errno::EPIPE
      exit 0
    rescue SystemCallError, IOError => e
      gone(e)
    end

    # The pipe failed in a way a referee does not cause: there is no going
    # back to files (the referee no longer reads them), so say why and end.
    def gone(error)
      Mailbox.log("mailbox: the pipe to the referee failed: #{error.class}: #{error.message}")
      exit 1
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
