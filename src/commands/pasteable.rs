//! Commands printed for the user to paste: this very command line with one
//! option set to another value, quoted for a POSIX shell, so that what a
//! hint shows is accepted as it is.
//!
//! Owns only the making of such lines; the hints around them are the
//! commands'. Runs nothing.

use std::ffi::OsString;

/// This process's command line with `option` (a long option such as
/// `--serve`) set to `value`: any earlier `option`, `option=…` or
/// `option VALUE` is dropped, then `option value` is added at the end.
pub fn this_command_with(option: &str, value: &str) -> String {
    command_with(std::env::args_os().collect(), option, value)
}

/// For a page served to this machine only: prints how to show it to the
/// network instead, as this command with its address `option` changed.
pub fn network_hint(addr: std::net::SocketAddr, option: &str) {
    if addr.ip().is_loopback() {
        let open = format!("0.0.0.0:{}", addr.port());
        eprintln!(
            "to show it to the network (anyone who can reach this machine can watch): {}",
            this_command_with(option, &open)
        );
    }
}

fn command_with(args: Vec<OsString>, option: &str, value: &str) -> String {
    let mut words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if let Some(program) = words.first_mut() {
        *program = program_to_paste(program);
    }
    let mut kept = vec![];
    let mut rest = words.into_iter();
    if let Some(program) = rest.next() {
        kept.push(program);
    }
    let mut rest = rest.peekable();
    while let Some(word) = rest.next() {
        if word == option {
            // Its value, when it has one (`--serve` may come without).
            if rest.peek().is_some_and(|next| !next.starts_with('-')) {
                rest.next();
            }
            continue;
        }
        if word.starts_with(&format!("{option}=")) {
            continue;
        }
        kept.push(word);
    }
    kept.push(option.to_string());
    kept.push(value.to_string());
    shell_words::join(kept)
}

/// This program as a user can type it again (see [`program_to_paste`]).
pub fn this_program() -> String {
    let typed = std::env::args_os()
        .next()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tournament".into());
    shell_words::quote(&program_to_paste(&typed)).into_owned()
}

/// The program as a user can type it again: as it was typed when it was
/// found on `PATH`, else its absolute path (a relative one may not work
/// from another folder).
fn program_to_paste(typed: &str) -> String {
    if !typed.contains('/') {
        return typed.to_string();
    }
    crate::program::path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| typed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(args: &[&str], option: &str, value: &str) -> String {
        command_with(args.iter().map(OsString::from).collect(), option, value)
    }

    #[test]
    fn the_option_is_replaced_wherever_and_however_it_was_given() {
        assert_eq!(
            line(&["tournament", "run", "--serve"], "--serve", "0.0.0.0:8000"),
            "tournament run --serve 0.0.0.0:8000"
        );
        assert_eq!(
            line(
                &[
                    "tournament",
                    "run",
                    "--serve",
                    "127.0.0.1:9",
                    "--config",
                    "my t.toml"
                ],
                "--serve",
                "0.0.0.0:9"
            ),
            "tournament run --config 'my t.toml' --serve 0.0.0.0:9"
        );
        assert_eq!(
            line(
                &["tournament", "serve", "--addr=127.0.0.1:1", "-v"],
                "--addr",
                "0.0.0.0:1"
            ),
            "tournament serve -v --addr 0.0.0.0:1"
        );
    }
}
