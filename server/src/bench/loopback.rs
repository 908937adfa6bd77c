//! `garblet serve` as a child process on loopback, for the benchmarks that need a real server.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// `garblet serve` as a child process on a free loopback port.
pub struct ServerProcess {
    child: Child,
    pub pid: u32,
    /// host:port.
    pub addr: String,
    config: PathBuf,
}

impl ServerProcess {
    /// Starts `garblet serve` (this executable) with `config`, whose `listen` should be port 0.
    pub fn start(config_text: &str) -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("finding the garblet binary: {e}"))?;
        let config = std::env::temp_dir().join(format!("garblet-bench-{}.toml", std::process::id()));
        std::fs::write(&config, config_text).map_err(|e| format!("{}: {e}", config.display()))?;
        let mut child = Command::new(exe)
            .args(["serve", "--config"])
            .arg(&config)
            .env("GARBLET_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("starting the server: {e}"))?;
        let pid = child.id();
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = BufReader::new(stdout).read_line(&mut line);
        }
        let Some(addr) = line.trim().strip_prefix("listening on ").map(str::to_string) else {
            let _ = child.kill();
            return Err(format!("the server did not start (it said {line:?})"));
        };
        Ok(ServerProcess { child, pid, addr, config })
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // SIGTERM: the server shuts down gracefully (it has no sessions left by now).
        // SAFETY: kill() only sends a signal to our own child process.
        unsafe { libc::kill(self.pid as libc::pid_t, libc::SIGTERM) };
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

