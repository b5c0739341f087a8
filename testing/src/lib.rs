//! End-to-end test support: a real server binary on a free loopback port with a
//! temporary data directory, and the real `kubectl` pointed at it.
//!
//! Processes started here are stopped by their PID (`kill -9` on drop); loops are
//! bounded by deadlines.

#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod etcd;
pub mod require;
pub mod tls;

pub use tls::{Identity, Stream};

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The kubectl the tests use: `KAPI_KUBECTL` or `/usr/bin/kubectl`.
pub fn kubectl_path() -> PathBuf {
    std::env::var_os("KAPI_KUBECTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/kubectl"))
}

/// A running server process.
pub struct Server {
    child: Child,
    binary: PathBuf,
    data_dir: PathBuf,
    extra: Vec<String>,
    _temp: Option<tempfile::TempDir>,
    cache_dir: tempfile::TempDir,
    /// Where it listens.
    pub address: SocketAddr,
}

impl Server {
    /// Starts `binary serve` on a fresh temporary data directory.
    pub fn start(binary: &Path) -> Server {
        let temp = tempfile::tempdir().expect("tempdir");
        let data_dir = temp.path().join("data");
        let mut server = Server::start_in(binary, &data_dir);
        server._temp = Some(temp);
        server
    }

    /// Starts `binary serve` on `data_dir` (kept by the caller).
    pub fn start_in(binary: &Path, data_dir: &Path) -> Server {
        Server::start_with(binary, data_dir, &[])
    }

    /// Starts `binary serve` on a fresh temporary directory with extra flags
    /// (e.g. `--etcd-servers`).
    pub fn start_args(binary: &Path, extra: &[&str]) -> Server {
        let temp = tempfile::tempdir().expect("tempdir");
        let mut server = Server::start_with(binary, &temp.path().join("data"), extra);
        server._temp = Some(temp);
        server
    }

    /// Starts `binary serve` like [`Server::start_args`], its log at the
    /// `info` level written to `log` (kept by the caller) instead of the
    /// test's output.
    pub fn start_logging(binary: &Path, extra: &[&str], log: &Path) -> Server {
        let temp = tempfile::tempdir().expect("tempdir");
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        let data_dir = temp.path().join("data");
        let (child, address) = spawn_logging(binary, &data_dir, &extra, Some(log));
        Server {
            child,
            binary: binary.to_owned(),
            data_dir,
            extra,
            _temp: Some(temp),
            cache_dir: tempfile::tempdir().expect("tempdir"),
            address,
        }
    }

    fn start_with(binary: &Path, data_dir: &Path, extra: &[&str]) -> Server {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        let (child, address) = spawn(binary, data_dir, &extra);
        Server {
            child,
            binary: binary.to_owned(),
            data_dir: data_dir.to_owned(),
            extra,
            _temp: None,
            cache_dir: tempfile::tempdir().expect("tempdir"),
            address,
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The kubeconfig the server wrote.
    pub fn kubeconfig(&self) -> PathBuf {
        self.data_dir.join("kubeconfig")
    }

    /// `https://<address>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.address)
    }

    /// `ca.crt` of the data directory: the CA of the serving certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.data_dir.join("ca.crt")
    }

    /// Kills the process with SIGKILL (no chance to flush anything).
    pub fn kill9(&mut self) {
        tls::forget(self.address);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM and waits (bounded) for a clean exit; returns its status code.
    pub fn terminate(&mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill9();
        None
    }

    /// Starts the same binary again on the same data directory (after a kill).
    pub fn restart(&mut self) {
        let (child, address) = spawn(&self.binary, &self.data_dir, &self.extra);
        self.child = child;
        self.address = address;
    }

    /// A kubectl command pointed at this server (not yet run).
    pub fn kubectl_command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(kubectl_path());
        cmd.arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.cache_dir.path())
            .args(args);
        cmd.env_remove("KUBECONFIG");
        cmd
    }

    /// Runs kubectl and returns its output.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        self.kubectl_command(args).output().expect("run kubectl")
    }

    /// Runs kubectl with `stdin` as input (for `-f -`).
    pub fn kubectl_stdin(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = self
            .kubectl_command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kubectl");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("kubectl output")
    }

    /// Runs kubectl, asserts success and returns stdout.
    pub fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Runs kubectl with stdin, asserts success and returns stdout.
    pub fn kubectl_stdin_ok(&self, args: &[&str], stdin: &str) -> String {
        let out = self.kubectl_stdin(args, stdin);
        assert!(
            out.status.success(),
            "kubectl {args:?} failed:\nstdout: {}\nstderr: {}",
            text(&out.stdout),
            text(&out.stderr)
        );
        text(&out.stdout)
    }

    /// Runs kubectl, asserts failure and returns stderr.
    pub fn kubectl_err(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(
            !out.status.success(),
            "kubectl {args:?} unexpectedly succeeded: {}",
            text(&out.stdout)
        );
        text(&out.stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Lossy UTF-8.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Spawns the server on port 0 and reads the bound address from its first line.
///
/// The built-in controllers stay off (`--controllers=-*`) unless the test passes
/// its own `--controllers`: most tests count or watch exactly the objects they
/// write, and the controllers add `kube-root-ca.crt`, `default` service
/// accounts and a Lease of their own.
fn spawn(binary: &Path, data_dir: &Path, extra: &[String]) -> (Child, SocketAddr) {
    spawn_logging(binary, data_dir, extra, None)
}

fn spawn_logging(
    binary: &Path,
    data_dir: &Path,
    extra: &[String],
    log: Option<&Path>,
) -> (Child, SocketAddr) {
    let quiet = !extra.iter().any(|a| a.starts_with("--controllers"));
    let stderr = match log {
        Some(path) => Stdio::from(std::fs::File::create(path).expect("log file")),
        None => Stdio::inherit(),
    };
    let mut child = Command::new(binary)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .args(quiet.then_some("--controllers=-*"))
        .args(extra)
        .env("RUST_LOG", if log.is_some() { "info" } else { "warn" })
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn server");
    let stdout = child.stdout.take().expect("stdout");
    let address = read_address(stdout);
    let Some(address) = address else {
        let _ = child.kill();
        panic!("server did not report its address");
    };
    tls::remember(address, data_dir);
    wait_ready(address);
    (child, address)
}

fn read_address(stdout: ChildStdout) -> Option<SocketAddr> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let mut sent = false;
        while let Some(Ok(line)) = lines.next() {
            if !sent && let Some(rest) = line.strip_prefix("kapi is serving at https://") {
                let addr = rest
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                let _ = tx.send(addr);
                sent = true;
            }
        }
    });
    let addr = rx.recv_timeout(Duration::from_secs(30)).ok()?;
    addr.parse().ok()
}

fn wait_ready(address: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if http_get(address, "/readyz").is_some_and(|(code, _)| code == 200) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("server at {address} never became ready");
}

/// A minimal blocking HTTP/1.1 GET (status code, body) for probes.
pub fn http_get(address: SocketAddr, path: &str) -> Option<(u16, String)> {
    http_request(address, "GET", path, None)
}

/// A minimal blocking HTTP/1.1 request with an optional JSON body: exactly one
/// request, no retries (unlike full clients), for measuring one answer.
pub fn http_request(
    address: SocketAddr,
    method: &str,
    path: &str,
    json: Option<&str>,
) -> Option<(u16, String)> {
    http_request_as(address, method, path, "application/json", json)
}

/// [`http_request`] with a body of another content type (a merge patch, say).
pub fn http_request_as(
    address: SocketAddr,
    method: &str,
    path: &str,
    content_type: &str,
    json: Option<&str>,
) -> Option<(u16, String)> {
    http_request_with(address, method, path, content_type, &[], json)
}

/// [`http_request_as`] with further request headers (`Impersonate-User`...).
pub fn http_request_with(
    address: SocketAddr,
    method: &str,
    path: &str,
    content_type: &str,
    headers: &[(&str, &str)],
    json: Option<&str>,
) -> Option<(u16, String)> {
    use std::io::Read;
    let mut stream = Stream::connect(address, None).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(90)))
        .ok()?;
    let body = json.unwrap_or_default();
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: {content_type}\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    stream.flush().ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let code = response.split_whitespace().nth(1)?.parse().ok()?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let chunked = head
        .lines()
        .any(|l| l.eq_ignore_ascii_case("transfer-encoding: chunked"));
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_owned()
    };
    Some((code, body))
}

/// One HTTP/1.1 answer: status code, headers (names lower-cased, in order)
/// and body.
#[derive(Debug)]
pub struct Answer {
    /// Status code.
    pub code: u16,
    /// Header lines as (lower-cased name, value).
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked.
    pub body: String,
}

impl Answer {
    /// The values of header `name` (lower case), in order.
    pub fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// Exactly one HTTP/1.1 request with the given extra headers (`Accept`,
/// `Content-Type`...) and body; `None` when the server did not answer. It is
/// sent as the admin unless the headers hold an `Authorization`.
pub fn http_exchange(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Option<Answer> {
    use std::io::Read;
    // A request with its own credentials goes without the admin certificate,
    // which the server would take first.
    let identity = if headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    {
        Identity::NoCertificate
    } else {
        Identity::Admin
    };
    let mut stream = Stream::connect_as(address, identity, None).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(90)))
        .ok()?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).ok()?;
    stream.write_all(body).ok()?;
    stream.flush().ok()?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).ok()?;
    let response = String::from_utf8_lossy(&response).into_owned();
    let code = response.split_whitespace().nth(1)?.parse().ok()?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let headers: Vec<(String, String)> = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        dechunk(body)?
    } else {
        body.to_owned()
    };
    Some(Answer {
        code,
        headers,
        body,
    })
}

/// The body of a chunked HTTP/1.1 response.
fn dechunk(mut rest: &str) -> Option<String> {
    let mut body = String::new();
    loop {
        let (size, after) = rest.split_once("\r\n")?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        if size == 0 {
            return Some(body);
        }
        body.push_str(after.get(..size)?);
        rest = after.get(size..)?.strip_prefix("\r\n")?;
    }
}
