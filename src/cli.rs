//! The command line, as clap derive types. Nothing here runs anything.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// The heading of the options every command takes, shown after its own.
const GLOBAL: &str = "Global options";

#[derive(Debug, Parser)]
#[command(
    name = "tournament",
    version,
    about = "Othello tournaments between bots written in any language",
    long_about = "Runs Othello tournaments between bots written in any language. \
                  Bots talk to the referee through move files in a shared \
                  message-board folder (mailbox protocol v1, see PROTOCOL.md)."
)]
pub struct Cli {
    /// More log output (-v: every move, -vv: protocol messages).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// Less log output (warnings and errors only).
    #[arg(short, long, global = true, help_heading = GLOBAL)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the tournament defined in tournament.toml (resumes if interrupted).
    Run(RunArgs),
    /// Print the crosstable of a results folder.
    Crosstable(CrosstableArgs),
    /// Follow a running game in the terminal (from a second terminal).
    Watch(WatchArgs),
    /// Play one game between two players, shown move by move.
    Play(PlayArgs),
    /// Inspect the message board: who owns it, which mailboxes wait.
    #[command(subcommand)]
    Board(BoardCommand),
    /// Run a built-in bot on a mailbox (what the referee spawns for
    /// `builtin = "..."` players).
    Bot(BotArgs),
    /// Take the seat of a player started by hand (`wait = true`) and play
    /// its games here, as a person, through the board's files.
    Seat(SeatArgs),
    /// Check a bot against the protocol with scripted positions; exit
    /// status 0 only for a compliant bot.
    CheckBot(CheckBotArgs),
    /// Export the games of a results folder (GGF, WTHOR).
    Export(ExportArgs),
    /// Write a self-contained HTML report with replayable games.
    Report(ReportArgs),
    /// Serve a live web page of a results folder: crosstable, progress and
    /// every running game, updated as it happens (read-only).
    Serve(ServeArgs),
    /// Count the leaves of the game tree from the start position.
    Perft(PerftArgs),
    /// Write the games of every share of a results folder as one
    /// games.jsonl (a results folder of its own).
    Merge(MergeArgs),
}

#[derive(Debug, Args)]
pub struct CheckBotArgs {
    /// Milliseconds the bot gets per move.
    #[arg(long, default_value_t = 2000)]
    pub move_ms: u64,
    /// Milliseconds from NEW to READY.
    #[arg(long, default_value_t = 10000)]
    pub startup_ms: u64,
    /// Check the bot without its sandbox (see SECURITY.md).
    #[arg(long)]
    pub no_sandbox: bool,
    /// How it talks: `mailbox` (a bot), or `gtp` / `nboard` (an engine on
    /// stdin/stdout, checked by two games against the built-in weighted).
    #[arg(long, default_value = "mailbox")]
    pub protocol: crate::engine::Protocol,
    /// NBoard's version for `--protocol nboard`: 2, or 1 (Edax: `nboard
    /// 1`, bare moves), as `nboard-version` in tournament.toml.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub nboard_version: Option<u8>,
    /// The folder the bot starts in (its player's `dir`): an engine that
    /// reads its data relative to its working directory finds it there.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Let the bot write in `--dir` (its player's `dir-writable = true`).
    #[arg(long, requires = "dir")]
    pub dir_writable: bool,
    /// The tournament whose board the bot is checked on (default:
    /// ./tournament.toml if it exists), so that it sees what it will see
    /// there.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The bot's command line, after `--` (e.g. `-- ruby bots/ruby/greedy.rb`).
    #[arg(last = true, required = true, num_args = 1..)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Write every game into one GGF file.
    #[arg(long)]
    pub ggf: Option<PathBuf>,
    /// Write the 8x8 games as WTHOR database files into this folder.
    #[arg(long)]
    pub wthor: Option<PathBuf>,
    /// The results folder (default: tournament.toml's, else ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Where to write the HTML file (default: <results>/report.html).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// The results folder (default: tournament.toml's, else ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The results folder (default: tournament.toml's, else ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where to listen; 0.0.0.0:8000 shows the page to the network.
    #[arg(long, default_value = "127.0.0.1:8000")]
    pub addr: std::net::SocketAddr,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The tournament file.
    #[arg(long, default_value = "tournament.toml")]
    pub config: PathBuf,
    /// Stop with an error if a player cannot be started (default: skip it
    /// with the install hint and let the others play).
    #[arg(long)]
    pub strict: bool,
    /// Override games-per-pairing (e.g. a short run in CI).
    #[arg(long)]
    pub games_per_pairing: Option<u32>,
    /// Override the number of games played at once (1 to 256).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: Option<u32>,
    /// Crosstable format printed at the end: text, markdown, csv or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Serve the live web page while it runs (as `tournament serve`), on
    /// ADDR (default 127.0.0.1:8000).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8000")]
    pub serve: Option<std::net::SocketAddr>,
    /// Play only share K of N (K counted from 0: 0/4 … 3/4) of the
    /// tournament: whole colour-swapped pairs, with the ids, openings and
    /// colours the whole run gives them, into <results>/shards/K-of-N/, on
    /// the board <board>-shard-K-of-N. Without it, Slurm's array variables
    /// (SLURM_ARRAY_TASK_ID…) choose the share.
    #[arg(long, value_name = "K/N", value_parser = parse_share)]
    pub shard: Option<crate::shard::Share>,
    /// The number of shares, for a Kubernetes Indexed Job (K from
    /// JOB_COMPLETION_INDEX); with --shard or Slurm, checked against theirs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub shards: Option<u32>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The results folder whose shares are merged (default:
    /// tournament.toml's, else ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The folder to write (default: <results>/merged): its games.jsonl
    /// holds every share's games in the schedule's order, with the
    /// schedule.json beside it, a results folder every command reads.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

/// Accepts `K/N` (K 0-based).
pub fn parse_share(text: &str) -> Result<crate::shard::Share, String> {
    crate::shard::Share::parse(text).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct CrosstableArgs {
    /// The results folder (default: tournament.toml's, else ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// text, markdown, csv or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Text and markdown: the score matrix and every pairing's statistics
    /// however many players (by default a field of more than 16 shows no
    /// matrix and the 10 pairings of players nearest in ranking).
    #[arg(long)]
    pub full: bool,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The game id to follow (default: the most recently started running game).
    #[arg(value_parser = parse_game_id)]
    pub game: Option<String>,
    /// The results folder (default: tournament.toml's, else ./results).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Give up if no game is running after this many seconds, or if the
    /// referee's heartbeat stops this long while following a game.
    #[arg(long, default_value_t = 10)]
    pub wait_secs: u64,
    /// When the game ends, follow the next one (and so on, while the
    /// referee runs) instead of exiting.
    #[arg(long)]
    pub follow: bool,
    /// Only games of this player (with --follow: each of its games in turn).
    #[arg(long)]
    pub player: Option<String>,
    /// A finished GAME is replayed: milliseconds between moves (0: all at once).
    #[arg(long, default_value_t = 700)]
    pub pace_ms: u64,
    /// A finished GAME is replayed one move per Enter key.
    #[arg(long)]
    pub step: bool,
}

#[derive(Debug, Args)]
pub struct PlayArgs {
    /// The black player: a built-in (random, greedy, weighted), a player
    /// name from tournament.toml, a quoted command line ("ruby bot.rb"),
    /// or `human` (`human:NAME`): you, at this terminal.
    #[arg(long)]
    pub black: String,
    /// The white player (same forms as --black).
    #[arg(long)]
    pub white: String,
    /// Board size: 4, 6 or 8 (default: tournament.toml's, else 8).
    #[arg(long, value_parser = parse_size)]
    pub size: Option<u8>,
    /// Milliseconds per move (default: tournament.toml's, else 5000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub move_ms: Option<u64>,
    /// A person's milliseconds per move (default: 600000, ten minutes).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub human_ms: Option<u64>,
    /// A person plays on a game clock of this many milliseconds for the
    /// whole game instead of a time per move (e.g. 900000: 15 minutes);
    /// running out of it is a loss on time.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "human_ms")]
    pub human_clock_ms: Option<u64>,
    /// Milliseconds added to a person's game clock after each of their
    /// moves (with --human-clock-ms; default 0).
    #[arg(long, requires = "human_clock_ms")]
    pub human_increment_ms: Option<u64>,
    /// Milliseconds from NEW to READY (default: tournament.toml's, else 10000).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub startup_ms: Option<u64>,
    /// Moves to play before the bots take over, as a transcript (f5d6c3).
    #[arg(long, default_value = "")]
    pub start: String,
    /// The message board folder (default: tournament.toml's, else ./board).
    #[arg(long)]
    pub board: Option<PathBuf>,
    /// The tournament file that names players and defaults
    /// (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Print the game record as JSON on stdout instead of the move list.
    #[arg(long)]
    pub json: bool,
    /// Seed for the built-in bots.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Illegal answers retried (ILLEGAL + a new TURN) before a forfeit.
    #[arg(long)]
    pub max_retries: Option<u32>,
    /// Ask a bot without a legal move for `pass` instead of passing for it.
    #[arg(long)]
    pub ask_pass: bool,
    /// A board lock unchanged this long is stale (milliseconds).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub stale_lock_ms: Option<u64>,
    /// Run spawned bots without their sandbox (see SECURITY.md): for
    /// debugging a bot that needs to write outside its mailbox.
    #[arg(long)]
    pub no_sandbox: bool,
}

#[derive(Debug, Subcommand)]
pub enum BoardCommand {
    /// Who owns the board (and whether it looks alive), and every mailbox
    /// with an unanswered message.
    Status(BoardStatusArgs),
}

#[derive(Debug, Args)]
pub struct BoardStatusArgs {
    /// The message board folder (default: tournament.toml's, else ./board).
    #[arg(long)]
    pub board: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// How long to watch the owner's heartbeat, in milliseconds.
    #[arg(long, default_value_t = 2500)]
    pub watch_ms: u64,
}

#[derive(Debug, Args)]
pub struct BotArgs {
    /// random, greedy or weighted.
    #[arg(value_parser = ["random", "greedy", "weighted"])]
    pub name: String,
    /// Seed for random choices (with the game id, it fixes every choice).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop after this many games (default: run until stopped).
    #[arg(long)]
    pub games: Option<u32>,
    /// The mailbox folder (default: $TOURNAMENT_MAILBOX, else the current folder).
    pub mailbox: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SeatArgs {
    /// The player (declared `wait = true`) whose games you play.
    pub name: String,
    /// The message board folder (default: tournament.toml's, else ./board).
    #[arg(long)]
    pub board: Option<PathBuf>,
    /// The tournament file (default: ./tournament.toml if it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Leave after this many games (default: stay until stopped).
    #[arg(long)]
    pub games: Option<u32>,
}

#[derive(Debug, Args)]
pub struct PerftArgs {
    /// Deepest depth to count (every depth from 1 up to it is printed).
    pub depth: u32,
    /// Board size: 4, 6 or 8.
    #[arg(long, default_value_t = 8, value_parser = parse_size)]
    pub size: u8,
}

/// Accepts a game id (never a path).
pub fn parse_game_id(text: &str) -> Result<String, String> {
    crate::results::check_game_id(text).map(|()| text.to_string())
}

/// Accepts 4, 6 or 8.
pub fn parse_size(text: &str) -> Result<u8, String> {
    match text.parse::<u8>() {
        Ok(n) if crate::game::SIZES.contains(&n) => Ok(n),
        _ => Err(format!("board size must be 4, 6 or 8, not `{text}`")),
    }
}

/// Where a config file is looked for when none is given.
pub fn default_config() -> PathBuf {
    PathBuf::from("tournament.toml")
}
