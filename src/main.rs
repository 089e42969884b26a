use clap::Parser;

use tournament::cli::Cli;
use tournament::error::exit_code_of;

fn main() {
    let cli = Cli::parse();
    tournament::logging::init(cli.verbose, cli.quiet);
    let code = match tournament::commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            exit_code_of(&err)
        }
    };
    std::process::exit(code);
}
