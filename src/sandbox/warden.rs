//! The warden: `tournament __sandbox POLICY -- PROGRAM ARGS…`, the process
//! between the referee and one bot.
//!
//! Owns: joining the bot's control groups, making its namespaces (PID,
//! IPC, network, mount with a `/proc` of its own; and a user namespace
//! when not root), being its first process (so everything in it dies with
//! the warden), bounding System V IPC in its IPC namespace, starting the
//! bot with its limits, user, Landlock rules and seccomp filters,
//! stopping and continuing everything in the namespace on the referee's
//! word (`S`/`C` on fd 3), passing TERM on, reaping, and reporting how the
//! bot ended on fd 4. Must not: read the board, talk the protocol, or
//! outlive the referee (each warden dies with its parent).
//!
//! Runs single-threaded from the start of `main`, before logging or
//! anything else, so forking here is safe.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::fd::FromRawFd;
use std::process::Command;

use super::{Namespaces, Policy, CTL_FD, PIPE_READS_FD, PIPE_WRITES_FD, REPORT_FD};

/// Runs the warden (never returns). `args` are the process's arguments
/// after `__sandbox`.
pub fn main(args: Vec<OsString>) -> ! {
    #[cfg(target_os = "linux")]
    {
        let code = linux::run(args);
        std::process::exit(code)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = args;
        eprintln!("the bot sandbox needs Linux");
        std::process::exit(125)
    }
}

fn report(line: &str) {
    // SAFETY: fd 4 is the report pipe the referee gave us (or closed, and
    // then the write fails harmlessly). ManuallyDrop keeps it open.
    let mut f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(REPORT_FD) });
    let _ = f.write_all(format!("{line}\n").as_bytes());
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use landlock::{
        Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
        RulesetCreatedAttr, Scope, ABI,
    };
    use std::os::unix::process::CommandExt;

    pub fn run(args: Vec<OsString>) -> i32 {
        if args.first().is_some_and(|a| a == "--probe") {
            return probe();
        }
        // Nothing of the referee's but fds 0-4 (and the bot's pipe, 5 and
        // 6, when it is offered one) reaches the bot.
        // SAFETY: close_range on fds we do not use.
        unsafe {
            libc::syscall(libc::SYS_close_range, 7u32, u32::MAX, 0u32);
        }
        let Some((policy, argv)) = parse(&args) else {
            report("error the sandbox was started with bad arguments");
            return 125;
        };
        if !policy.pipe {
            // SAFETY: closing fds we do not use.
            unsafe {
                libc::close(PIPE_READS_FD);
                libc::close(PIPE_WRITES_FD);
            }
        }
        // The referee TERMs the whole group to end the bot: the warden
        // must stay to pass it on and report.
        // SAFETY: setting a standard disposition.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_IGN);
        }
        for procs in &policy.cgroups {
            // "0": this process; what it starts is born in the group.
            if let Err(e) = std::fs::write(procs, "0") {
                report(&format!("warn cannot join {}: {e}", procs.display()));
            }
        }
        if policy.namespaces.pid {
            match enter_namespaces(&policy.namespaces) {
                Ok(()) => return fork_first_process(&policy, &argv),
                Err(e) => report(&format!("warn no PID namespace: {e}")),
            }
        }
        watch(&policy, &argv, false)
    }

    fn parse(args: &[OsString]) -> Option<(Policy, Vec<OsString>)> {
        let json = args.first()?.to_str()?;
        let policy: Policy = serde_json::from_str(json).ok()?;
        if args.get(1)? != "--" || args.len() < 3 {
            return None;
        }
        Some((policy, args[2..].to_vec()))
    }

    /// Prints what this machine allows, one line each: `pidns`, `ipcns`,
    /// `netns`, `mntns` (with a `/proc` of its own), `seccomp`, each
    /// followed by `ok` or why not. Each namespace is tried in a child of
    /// its own, as a warden would make it. Exits 0.
    fn probe() -> i32 {
        let only = |f: fn(&mut Namespaces)| {
            let mut n = Namespaces {
                pid: true,
                ..Namespaces::default()
            };
            f(&mut n);
            n
        };
        let tries = [
            ("pidns", only(|_| {})),
            ("ipcns", only(|n| n.ipc = true)),
            ("netns", only(|n| n.net = true)),
            ("mntns", only(|n| n.mount = true)),
        ];
        for (name, namespaces) in tries {
            let answer = in_child(|| {
                enter_namespaces(&namespaces)?;
                // The first process of the namespace makes its /proc.
                in_child(|| first_process_setup(&namespaces, 64))
            });
            match answer {
                Ok(()) => println!("{name} ok"),
                Err(e) => println!("{name} {e}"),
            }
        }
        let applied = bot_filters().and_then(|filters| {
            // SAFETY: prctl with a flag; this probe process ends right after.
            unsafe {
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            }
            filters
                .iter()
                .try_for_each(|f| seccompiler::apply_filter(f).map_err(|e| e.to_string()))
        });
        match applied {
            Ok(()) => println!("seccomp ok"),
            Err(e) => println!("seccomp {e}"),
        }
        0
    }

    /// Runs `f` in a forked child and says how it went (the child's error
    /// text comes back through a pipe). For the probe, before any thread.
    fn in_child(f: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        let mut fds = [0; 2];
        // SAFETY: pipe, fork, and in the child only our own calls and _exit.
        unsafe {
            if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
                return Err(io::Error::last_os_error());
            }
            let pid = libc::fork();
            if pid < 0 {
                return Err(io::Error::last_os_error());
            }
            if pid == 0 {
                libc::close(fds[0]);
                let code = match f() {
                    Ok(()) => 0,
                    Err(e) => {
                        let text = e.to_string();
                        libc::write(fds[1], text.as_ptr() as *const _, text.len());
                        1
                    }
                };
                libc::_exit(code);
            }
            libc::close(fds[1]);
            let mut text = Vec::new();
            let mut buf = [0u8; 512];
            loop {
                let n = libc::read(fds[0], buf.as_mut_ptr() as *mut _, buf.len());
                if n <= 0 {
                    break;
                }
                text.extend_from_slice(&buf[..n as usize]);
            }
            libc::close(fds[0]);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                Ok(())
            } else if text.is_empty() {
                Err(io::Error::other(format!(
                    "the child ended with status {status}"
                )))
            } else {
                Err(io::Error::other(
                    String::from_utf8_lossy(&text).into_owned(),
                ))
            }
        }
    }

    /// The seccomp filters of a bot. The first refuses (EPERM): `setsid`
    /// and `setpgid`, so the bot and everything it starts stay in the
    /// process group the referee stops and continues; new namespaces of
    /// any kind (`unshare`, `setns`, `clone` with a namespace flag: no user
    /// namespace inside the sandbox); Unix sockets (`socket(AF_UNIX)`: a
    /// socket file in its folder would be a channel to another bot of the
    /// same user; `socketpair` still works); the kernel's keyrings. The
    /// second answers `clone3` with ENOSYS, whose flags a filter cannot
    /// read (the C library then uses `clone`). Other architectures' calls
    /// (32-bit ones on a 64-bit kernel) end the process.
    fn bot_filters() -> Result<Vec<seccompiler::BpfProgram>, String> {
        use seccompiler::{
            SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
            SeccompRule, TargetArch,
        };
        let arch = if cfg!(target_arch = "x86_64") {
            TargetArch::x86_64
        } else if cfg!(target_arch = "aarch64") {
            TargetArch::aarch64
        } else if cfg!(target_arch = "riscv64") {
            TargetArch::riscv64
        } else {
            return Err("no seccomp filter for this architecture".into());
        };
        let err = |e: seccompiler::BackendError| e.to_string();
        let flag_set = |arg: u8, flag: u64| -> Result<SeccompRule, String> {
            SeccompRule::new(vec![SeccompCondition::new(
                arg,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .map_err(err)?])
            .map_err(err)
        };
        let namespace_flags = [
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWNS,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWCGROUP,
            libc::CLONE_NEWTIME,
        ];
        let clone_rules = namespace_flags
            .iter()
            .map(|&f| flag_set(0, f as u64))
            .collect::<Result<Vec<_>, _>>()?;
        let unix_socket = SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::AF_UNIX as u64,
        )
        .map_err(err)?])
        .map_err(err)?;
        let mut refused: Vec<(i64, Vec<SeccompRule>)> = vec![
            (libc::SYS_setsid, vec![]),
            (libc::SYS_setpgid, vec![]),
            (libc::SYS_unshare, vec![]),
            (libc::SYS_setns, vec![]),
            (libc::SYS_clone, clone_rules),
            (libc::SYS_socket, vec![unix_socket]),
            (libc::SYS_keyctl, vec![]),
            (libc::SYS_add_key, vec![]),
            (libc::SYS_request_key, vec![]),
        ];
        let mut unknown: Vec<(i64, Vec<SeccompRule>)> = vec![(libc::SYS_clone3, vec![])];
        if cfg!(target_arch = "x86_64") {
            // The x32 numbers of the same calls.
            for list in [&mut refused, &mut unknown] {
                let x32: Vec<_> = list
                    .iter()
                    .map(|(n, r)| (n | 0x4000_0000, r.clone()))
                    .collect();
                list.extend(x32);
            }
        }
        let build = |rules: Vec<(i64, Vec<SeccompRule>)>, errno: i32| {
            let filter = SeccompFilter::new(
                rules.into_iter().collect(),
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .map_err(|e| e.to_string())?;
            seccompiler::BpfProgram::try_from(filter).map_err(|e| e.to_string())
        };
        Ok(vec![
            build(refused, libc::EPERM)?,
            build(unknown, libc::ENOSYS)?,
        ])
    }

    /// Makes the namespaces `n` asks for (a PID namespace always), with a
    /// user namespace around them when not root (mapping our own ids).
    fn enter_namespaces(n: &Namespaces) -> io::Result<()> {
        let mut flags = libc::CLONE_NEWPID;
        for (wanted, flag) in [
            (n.ipc, libc::CLONE_NEWIPC),
            (n.net, libc::CLONE_NEWNET),
            (n.mount, libc::CLONE_NEWNS),
        ] {
            if wanted {
                flags |= flag;
            }
        }
        // SAFETY: plain system calls on our own, still single-threaded, process.
        unsafe {
            if libc::geteuid() == 0 {
                if libc::unshare(flags) != 0 {
                    return Err(io::Error::other(format!(
                        "unshare failed: {}",
                        io::Error::last_os_error()
                    )));
                }
                return Ok(());
            }
            let (uid, gid) = (libc::getuid(), libc::getgid());
            if libc::unshare(libc::CLONE_NEWUSER | flags) != 0 {
                return Err(io::Error::other(format!(
                    "unprivileged user namespaces are not allowed here ({}); run the referee as root or allow them (sysctl kernel.unprivileged_userns_clone=1)",
                    io::Error::last_os_error()
                )));
            }
            std::fs::write("/proc/self/setgroups", "deny")?;
            std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
            std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
        }
        Ok(())
    }

    /// What the first process of the namespaces makes before the bot
    /// starts: a private copy of the mounts with a `/proc` of the PID
    /// namespace, and, as root, System V IPC bounded by `memory_mb` (per
    /// IPC namespace: segments, queues and their sizes). Not as another
    /// user: only the user namespace's uid 0 may set those, and mapping
    /// the referee's user to it would let the bot set them too; its IPC
    /// objects still die with it.
    fn first_process_setup(n: &Namespaces, memory_mb: u64) -> io::Result<()> {
        let fail = |what: &str| io::Error::other(format!("{what}: {}", io::Error::last_os_error()));
        if n.mount {
            // SAFETY: mount(2) with NUL-terminated strings, in our own
            // mount namespace.
            unsafe {
                if libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(fail("cannot make the mounts private"));
                }
                if libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(fail("cannot mount a /proc of its own"));
                }
            }
        }
        // SAFETY: geteuid cannot fail.
        if n.ipc && unsafe { libc::geteuid() } == 0 {
            let bytes = memory_mb.saturating_mul(1 << 20);
            for (file, value) in [
                ("/proc/sys/kernel/shmmax", bytes),
                ("/proc/sys/kernel/shmall", bytes / 4096),
                ("/proc/sys/kernel/shmmni", 64),
                ("/proc/sys/kernel/msgmni", 16),
                ("/proc/sys/fs/mqueue/queues_max", 16),
            ] {
                std::fs::write(file, value.to_string())
                    .map_err(|e| io::Error::other(format!("cannot set {file}: {e}")))?;
            }
        }
        Ok(())
    }

    /// Forks the namespace's first process, which watches the bot; this
    /// process waits for it and exits as it did.
    fn fork_first_process(policy: &Policy, argv: &[OsString]) -> i32 {
        // SAFETY: single-threaded process: fork is safe.
        let pid = patiently(|| match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            pid => Ok(pid),
        });
        let pid = match pid {
            Ok(pid) => pid,
            Err(e) => {
                report(&format!("{} cannot fork: {e}", failure_word(&e)));
                return 125;
            }
        };
        if pid == 0 {
            // SAFETY: prctl with a signal number.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            }
            if let Err(e) = first_process_setup(&policy.namespaces, policy.memory_mb) {
                report(&format!("warn {e}"));
            }
            let code = watch(policy, argv, true);
            std::process::exit(code);
        }
        // The bot's pipe goes on in the namespace's first process only.
        if policy.pipe {
            // SAFETY: closing fds this process does not use.
            unsafe {
                libc::close(PIPE_READS_FD);
                libc::close(PIPE_WRITES_FD);
            }
        }
        loop {
            let mut status = 0;
            // SAFETY: waiting for our own child.
            let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
            if rc == pid {
                if libc::WIFEXITED(status) {
                    return libc::WEXITSTATUS(status);
                }
                if libc::WIFSIGNALED(status) {
                    return 128 + libc::WTERMSIG(status);
                }
            } else if rc < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return 125;
            }
        }
    }

    /// The bot's Landlock rules: read (and run) in the system's folders,
    /// its own `/proc` and what the policy makes readable; read and write
    /// the null devices, its mailbox and scratch folder; nothing else of
    /// the file system, no TCP, no signals or abstract sockets outside.
    fn landlock_rules(policy: &Policy) -> Result<RulesetCreated, landlock::RulesetError> {
        let abi = ABI::V6;
        let read = AccessFs::from_read(abi);
        let write = AccessFs::from_all(abi) & !AccessFs::Refer;
        let mut ruleset = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))?
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?
            .scope(Scope::Signal | Scope::AbstractUnixSocket)?
            .create()?;
        let mut rules: Vec<(&std::path::Path, landlock::BitFlags<AccessFs>)> = Vec::new();
        for dir in crate::sandbox::SYSTEM_FOLDERS {
            rules.push((dir.as_ref(), read));
        }
        // Its own processes only, when it has a mount namespace (else
        // /proc would show every process of the machine).
        rules.push(if policy.namespaces.mount {
            ("/proc".as_ref(), read)
        } else {
            ("/proc/self".as_ref(), read)
        });
        for path in [
            "/sys/devices/system/cpu",
            "/sys/fs/cgroup",
            "/dev/random",
            "/dev/urandom",
        ] {
            rules.push((path.as_ref(), read));
        }
        let device =
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
        for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
            rules.push((dev.as_ref(), device));
        }
        rules.extend(policy.readable.iter().map(|p| (p.as_path(), read)));
        rules.extend(policy.writable.iter().map(|p| (p.as_path(), write)));
        for (path, access) in rules {
            // What does not exist on this machine is left out.
            if let Ok(fd) = PathFd::new(path) {
                ruleset = ruleset.add_rule(PathBeneath::new(fd, access))?;
            }
        }
        Ok(ruleset)
    }

    fn set_limit(resource: libc::__rlimit_resource_t, value: u64) {
        // SAFETY: getrlimit/setrlimit with valid pointers; a limit is only
        // ever lowered.
        unsafe {
            let mut cur = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(resource, &mut cur);
            let v = value.min(cur.rlim_max);
            let new = libc::rlimit {
                rlim_cur: v,
                rlim_max: v,
            };
            libc::setrlimit(resource, &new);
        }
    }

    /// Starts the bot and watches it until it ends; returns its exit code.
    fn watch(policy: &Policy, argv: &[OsString], first_in_namespace: bool) -> i32 {
        let signals = match block_signals() {
            Ok(fd) => fd,
            Err(e) => {
                report(&format!("error cannot watch signals: {e}"));
                return 125;
            }
        };
        // SAFETY: marking our two pipe ends close-on-exec so the bot
        // does not inherit them.
        unsafe {
            libc::fcntl(CTL_FD, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(REPORT_FD, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(PIPE_READS_FD, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(PIPE_WRITES_FD, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        let mut rules = if policy.landlock {
            match landlock_rules(policy) {
                Ok(r) => Some(r),
                Err(e) => {
                    report(&format!("warn Landlock rules: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let filters = if policy.contain_group {
            match bot_filters() {
                Ok(p) => p,
                Err(e) => {
                    report(&format!("warn no seccomp filter: {e}"));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let limits = (
            policy.memory_mb.saturating_mul(1 << 20),
            policy.disk_mb.saturating_mul(1 << 20),
            policy.processes,
        );
        let user = policy.user;
        let pipe = policy.pipe;
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        // SAFETY: between fork and exec in a single-threaded process.
        unsafe {
            cmd.pre_exec(move || {
                // The bot starts with default signal handling and nothing
                // blocked, whatever the warden set for itself.
                for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGCHLD] {
                    libc::signal(sig, libc::SIG_DFL);
                }
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
                libc::setpgid(0, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
                // The offered pipe, where the offer says (PROTOCOL.md, "The
                // pipe"); dup2 leaves the copies open across exec.
                if pipe
                    && (libc::dup2(PIPE_READS_FD, mailbox_protocol::pipe::BOT_READS_FD) < 0
                        || libc::dup2(PIPE_WRITES_FD, mailbox_protocol::pipe::BOT_WRITES_FD) < 0)
                {
                    return Err(io::Error::last_os_error());
                }
                set_limit(libc::RLIMIT_AS, limits.0);
                set_limit(libc::RLIMIT_FSIZE, limits.1);
                set_limit(libc::RLIMIT_CORE, 0);
                if let Some(n) = limits.2 {
                    set_limit(libc::RLIMIT_NPROC, n);
                }
                if let Some((uid, gid)) = user {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setgid(gid) != 0
                        || libc::setuid(uid) != 0
                    {
                        return Err(io::Error::last_os_error());
                    }
                }
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if let Some(r) = rules.take() {
                    r.restrict_self().map_err(io::Error::other)?;
                }
                for filter in &filters {
                    seccompiler::apply_filter(filter).map_err(io::Error::other)?;
                }
                Ok(())
            });
        }
        let child = match patiently(|| cmd.spawn()) {
            Ok(c) => c,
            Err(e) => {
                let program = argv[0].to_string_lossy();
                let hint = match e.kind() {
                    io::ErrorKind::PermissionDenied => {
                        format!(": {}", crate::sandbox::not_executable_hint(&program))
                    }
                    _ => String::new(),
                };
                report(&format!(
                    "{} cannot start `{program}`: {e}{hint}",
                    failure_word(&e)
                ));
                return 127;
            }
        };
        report("started");
        let bot = child.id() as libc::pid_t;
        // Reaped below, with everything else.
        std::mem::forget(child);
        // The bot's pipe is the bot's: once it ends, the referee sees the
        // pipe close without waiting for the warden. (Without a pipe these
        // numbers may be the warden's own, its signalfd: left alone.)
        if pipe {
            // SAFETY: closing fds only the bot uses from now on.
            unsafe {
                libc::close(PIPE_READS_FD);
                libc::close(PIPE_WRITES_FD);
            }
        }
        serve(bot, signals, first_in_namespace)
    }

    /// `f`, tried again a few times while the machine refuses a process
    /// for want of its resources (the user's process limit, memory).
    fn patiently<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
        let mut tries = 0;
        loop {
            match f() {
                Err(e) if exhausted(&e) && tries < 5 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    /// The machine refused for want of resources, not because of the bot.
    fn exhausted(e: &io::Error) -> bool {
        matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::ENOMEM))
    }

    /// The report's word for a failed start: `exhausted` (the machine's
    /// doing: the referee tries again) or `error` (the bot's program).
    fn failure_word(e: &io::Error) -> &'static str {
        if exhausted(e) {
            "exhausted"
        } else {
            "error"
        }
    }

    fn block_signals() -> io::Result<i32> {
        // SAFETY: signal set manipulation and signalfd on our own process.
        unsafe {
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            // No SIGCHLD when the bot is stopped or continued (twice a
            // move): only when something ends.
            let mut chld: libc::sigaction = std::mem::zeroed();
            chld.sa_sigaction = libc::SIG_DFL;
            chld.sa_flags = libc::SA_NOCLDSTOP;
            libc::sigaction(libc::SIGCHLD, &chld, std::ptr::null_mut());
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(fd)
        }
    }

    /// Sends `sig` to everything of the bot: the whole namespace when we
    /// are its first process, else the bot's process group.
    fn signal_all(bot: libc::pid_t, sig: i32, first_in_namespace: bool) {
        // SAFETY: kill(-1) is used only as the namespace's first process,
        // where it reaches exactly the processes of that namespace.
        unsafe {
            if first_in_namespace && libc::getpid() == 1 {
                libc::kill(-1, sig);
            } else {
                libc::killpg(bot, sig);
            }
        }
    }

    fn serve(bot: libc::pid_t, signals: i32, first_in_namespace: bool) -> i32 {
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: CTL_FD,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: signals,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: poll on two valid pollfds.
            let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, 1000) };
            if rc < 0 {
                continue;
            }
            if fds[1].revents & libc::POLLIN != 0 {
                let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
                let size = std::mem::size_of::<libc::signalfd_siginfo>();
                // SAFETY: reading one siginfo into a buffer of its size.
                let n = unsafe { libc::read(signals, (&mut info as *mut _) as *mut _, size) };
                if n == size as isize && info.ssi_signo == libc::SIGTERM as u32 {
                    signal_all(bot, libc::SIGTERM, first_in_namespace);
                    signal_all(bot, libc::SIGCONT, first_in_namespace);
                }
            }
            if let Some(code) = reap(bot, first_in_namespace) {
                return code;
            }
            if fds[0].revents & (libc::POLLIN | libc::POLLHUP) != 0 {
                let mut buf = [0u8; 64];
                // SAFETY: reading into a local buffer.
                let n = unsafe { libc::read(CTL_FD, buf.as_mut_ptr() as *mut _, buf.len()) };
                let gone = n == 0
                    || (n < 0
                        && !matches!(
                            io::Error::last_os_error().raw_os_error(),
                            Some(libc::EINTR) | Some(libc::EAGAIN)
                        ));
                if gone {
                    // The referee is gone: so is the bot.
                    signal_all(bot, libc::SIGKILL, first_in_namespace);
                    return 137;
                }
                // Only the last word counts.
                if let Some(&last) = buf[..n.max(0) as usize].last() {
                    match last {
                        b'S' => signal_all(bot, libc::SIGSTOP, first_in_namespace),
                        b'C' => signal_all(bot, libc::SIGCONT, first_in_namespace),
                        _ => {}
                    }
                }
            }
        }
    }

    /// Reaps every ended child; once the bot itself ended, reports how and
    /// returns the code to exit with.
    fn reap(bot: libc::pid_t, first_in_namespace: bool) -> Option<i32> {
        loop {
            let mut status = 0;
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: wait4 without blocking, valid pointers.
            let pid = unsafe { libc::wait4(-1, &mut status, libc::WNOHANG, &mut usage) };
            if pid <= 0 {
                return None;
            }
            if pid != bot {
                continue;
            }
            let code = if libc::WIFSIGNALED(status) {
                let sig = libc::WTERMSIG(status);
                report(&format!("signal {sig}"));
                128 + sig
            } else {
                let c = libc::WEXITSTATUS(status);
                report(&format!("exit {c}"));
                c
            };
            report(&format!("rss {}", usage.ru_maxrss));
            if !first_in_namespace {
                // What is left of its group goes with it.
                signal_all(bot, libc::SIGKILL, false);
            }
            return Some(code);
        }
    }
}
