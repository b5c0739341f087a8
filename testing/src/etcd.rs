//! Real etcd processes for end-to-end tests: free loopback ports, data in a
//! temporary directory, bounded waits, every process killed by its PID on drop.
//!
//! Where `/usr/bin/etcd` is missing (Debian's `etcd-server`), [`etcd_available`]
//! skips the test through [`crate::require::require`]: recorded locally, a
//! failure under `KAPI_REQUIRE_ALL` (`.ci/run`).

use std::fs::File;
use std::net::{SocketAddr, TcpListener};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

use crate::http_get;

/// Where Debian's `etcd-server` puts etcd.
pub const ETCD: &str = "/usr/bin/etcd";

const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether etcd tests can run here (panics under `KAPI_REQUIRE_ALL` when they
/// cannot; see [`crate::require::require`]).
#[track_caller]
pub fn etcd_available() -> bool {
    crate::require::require(
        std::path::Path::new(ETCD).exists(),
        ETCD,
        "apt-get install etcd-server",
    )
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().expect("local address").port()
}

struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

/// One or more etcd members on loopback.
pub struct EtcdCluster {
    dir: TempDir,
    members: Vec<Member>,
    initial_cluster: String,
}

impl EtcdCluster {
    /// Starts `size` members and waits (bounded) until every one is healthy.
    pub fn start(size: usize) -> EtcdCluster {
        let members: Vec<Member> = (0..size)
            .map(|i| Member {
                name: format!("m{i}"),
                client_port: free_port(),
                peer_port: free_port(),
                child: None,
            })
            .collect();
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let mut cluster = EtcdCluster {
            dir: tempfile::tempdir().expect("tempdir"),
            members,
            initial_cluster,
        };
        for i in 0..size {
            cluster.spawn(i);
        }
        for i in 0..size {
            cluster.wait_healthy(i);
        }
        cluster
    }

    /// The client URLs, comma-separated (for `--etcd-servers`).
    pub fn endpoints(&self) -> String {
        self.members
            .iter()
            .map(|m| format!("http://127.0.0.1:{}", m.client_port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// (Re)starts member `i`; with its old data directory it rejoins.
    pub fn spawn(&mut self, i: usize) {
        let member = &self.members[i];
        let client = format!("http://127.0.0.1:{}", member.client_port);
        let peer = format!("http://127.0.0.1:{}", member.peer_port);
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{}.log", member.name)))
            .expect("log");
        let child = Command::new(ETCD)
            .args(["--name", &member.name])
            .arg("--data-dir")
            .arg(self.dir.path().join(&member.name))
            .args([
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
            ])
            .args([
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
            ])
            .args([
                "--initial-cluster",
                &self.initial_cluster,
                "--initial-cluster-state",
                "new",
            ])
            .args(["--initial-cluster-token", "kapi-e2e"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("start etcd");
        self.members[i].child = Some(child);
    }

    /// Kills member `i` with SIGKILL.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits (bounded) until member `i` reports itself healthy (`/health`).
    pub fn wait_healthy(&self, i: usize) {
        let address = SocketAddr::from(([127, 0, 0, 1], self.members[i].client_port));
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            if http_get(address, "/health")
                .is_some_and(|(code, body)| code == 200 && body.contains("true"))
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("etcd member {i} not healthy within {START_TIMEOUT:?}");
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}
