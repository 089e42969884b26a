//! The Python side of the bench: the bench bots and the peer script (kept
//! in `bench/` and built into the binary), and a virtualenv with
//! rust-reversi for the peer harness, made once in a cache folder and
//! reused.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The peer harness's package and the version whose protocol was checked.
pub const RUST_REVERSI: &str = "rust-reversi==1.4.4";

/// `bench/` as files: name, content.
pub const SCRIPTS: [(&str, &str); 4] = [
    ("firstmove.py", include_str!("../bots/firstmove.py")),
    ("mailbox_bot.py", include_str!("../bots/mailbox_bot.py")),
    ("arena_bot.py", include_str!("../bots/arena_bot.py")),
    ("arena_peer.py", include_str!("../bots/arena_peer.py")),
];

/// Writes the scripts into `dir`.
pub fn write_scripts(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in SCRIPTS {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// Where the virtualenv lives: `$XDG_CACHE_HOME/tournament/bench-venv`,
/// else `~/.cache/tournament/bench-venv`.
pub fn venv_dir() -> Option<PathBuf> {
    // As root the bots run as `nobody` (the sandbox), who cannot enter
    // /root: the virtualenv goes where every user can read it.
    if tournament::sandbox::is_root() {
        return Some(PathBuf::from("/var/cache/tournament/bench-venv"));
    }
    let cache = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(cache.join("tournament").join("bench-venv"))
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

/// Runs `cmd` to completion within `limit`; its output on failure.
fn run_for(cmd: &mut Command, limit: Duration) -> anyhow::Result<()> {
    let out = std::env::temp_dir().join(format!("tournament-bench-{}.log", std::process::id()));
    let log = std::fs::File::create(&out)?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()?;
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&out);
            bail!("gave up after {} s", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    if !status.success() {
        let last = text.lines().rev().find(|l| !l.trim().is_empty());
        bail!("{status}: {}", last.unwrap_or("no output"));
    }
    Ok(())
}

/// The first `python3` (or `python`) on PATH.
pub fn system_python() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["python3", "python"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// The virtualenv's interpreter with rust-reversi importable, making the
/// virtualenv (pip install) the first time. The error says why not.
pub fn venv_with_rust_reversi() -> anyhow::Result<PathBuf> {
    let venv = venv_dir().context("no HOME or XDG_CACHE_HOME for the cache folder")?;
    let python = venv_python(&venv);
    let works = |py: &Path| {
        Command::new(py)
            .args(["-c", "import rust_reversi"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if python.exists() && works(&python) {
        return Ok(python);
    }
    let base = system_python().context("no python3 on PATH")?;
    eprintln!(
        "bench: installing {RUST_REVERSI} into {} (once; reused next time)",
        venv.display()
    );
    if !python.exists() {
        run_for(
            Command::new(&base).arg("-m").arg("venv").arg(&venv),
            Duration::from_secs(120),
        )
        .context("python3 -m venv")?;
    }
    run_for(
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            RUST_REVERSI,
        ]),
        Duration::from_secs(300),
    )
    .context("pip install rust-reversi")?;
    if !works(&python) {
        bail!("rust_reversi does not import after pip install");
    }
    Ok(python)
}
