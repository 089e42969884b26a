//! Descriptors handed to a started program at fixed numbers (the
//! warden's control and report pipes, a bot's pipe at fds 3 and 4).
//!
//! Owns: placing them between fork and exec. Must not: open or close the
//! referee's own ends, or know what the descriptors carry.

use std::io;
use std::process::Command;

/// At most this many descriptors are placed (the child has a fixed array
/// for them: nothing may be allocated between fork and exec).
const MAX_PLACED: usize = 8;

/// Makes the started program find each `(fd, at)` pair's open file `fd`
/// (of the referee's) at descriptor number `at`, and nothing else of
/// these: each is first moved above every target, so placing one cannot
/// overwrite another. (Every descriptor the referee opens is close-on-exec;
/// these copies are not.)
#[cfg(unix)]
pub fn place_fds(cmd: &mut Command, fds: Vec<(std::os::fd::RawFd, std::os::fd::RawFd)>) {
    use std::os::unix::process::CommandExt;
    assert!(
        fds.len() <= MAX_PLACED,
        "at most {MAX_PLACED} descriptors placed"
    );
    let above = fds.iter().map(|&(_, at)| at).max().unwrap_or(0) + 1;
    // SAFETY: only fcntl/dup2/close between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let mut moved = [0; MAX_PLACED];
            for (i, &(fd, _)) in fds.iter().enumerate() {
                moved[i] = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, above);
                if moved[i] < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            for (i, &(_, at)) in fds.iter().enumerate() {
                if libc::dup2(moved[i], at) < 0 {
                    return Err(io::Error::last_os_error());
                }
                libc::close(moved[i]);
            }
            Ok(())
        });
    }
}
