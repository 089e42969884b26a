use clap::Parser;

use tournament::cli::Cli;
use tournament::error::exit_code_of;

fn main() {
    // The sandbox warden runs before anything else (single-threaded).
    let mut args = std::env::args_os();
    if args
        .nth(1)
        .is_some_and(|a| a == tournament::sandbox::WARDEN_ARG)
    {
        tournament::sandbox::warden::main(args.collect());
    }
    tournament::interrupt::quiet_on_closed_stdout();
    let cli = Cli::parse();
    tournament::logging::init(cli.verbose, cli.quiet);
    let result = tournament::commands::run(cli);
    tournament::sandbox::finish();
    let code = match result {
        Ok(code) => code,
        Err(err) if tournament::interrupt::is_broken_pipe(&err) => {
            tournament::error::exit::STDOUT_CLOSED
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            exit_code_of(&err)
        }
    };
    std::process::exit(code);
}
