//! Real etcd processes for tests: free loopback ports, a temporary data
//! directory, bounded waits, and every process killed by PID when dropped.
//!
//! Where `/usr/bin/etcd` is missing (Debian's `etcd-server` package), tests skip
//! with a loud message, except under CI (`CI` set), where they fail: CI installs
//! etcd, so a skip there would hide a broken setup.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions};
use tempfile::TempDir;

/// Where Debian's `etcd-server` puts etcd.
pub const ETCD: &str = "/usr/bin/etcd";

/// How long a starting member may take to answer; only a failing start waits
/// this long.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether etcd tests can run here. Without etcd: fails under CI, otherwise
/// prints a loud SKIPPED line and answers false (the test then returns).
pub fn etcd_available() -> bool {
    if std::path::Path::new(ETCD).exists() {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{ETCD} not found, and CI must not skip etcd tests (apt-get install etcd-server)");
    }
    eprintln!("SKIPPED: /usr/bin/etcd not found (apt-get install etcd-server)");
    false
}

/// A free TCP port on 127.0.0.1 (bound, read and released).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().unwrap().port()
}

/// One member: its ports and, while it runs, its process.
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

impl Member {
    fn client_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.client_port)
    }

    fn peer_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.peer_port)
    }
}

/// An etcd cluster of one or more members on loopback, each with its data
/// directory inside one temporary directory.
pub struct EtcdCluster {
    dir: TempDir,
    members: Vec<Member>,
    initial_cluster: String,
    extra_args: Vec<String>,
}

impl EtcdCluster {
    /// A single member, started and answering.
    pub async fn single() -> EtcdCluster {
        EtcdCluster::start(1, &[]).await
    }

    /// `size` members with extra etcd flags, started and answering.
    pub async fn start(size: usize, extra_args: &[&str]) -> EtcdCluster {
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
            .map(|m| format!("{}={}", m.name, m.peer_url()))
            .collect::<Vec<_>>()
            .join(",");
        let mut cluster = EtcdCluster {
            dir: tempfile::tempdir().unwrap(),
            members,
            initial_cluster,
            extra_args: extra_args.iter().map(|s| s.to_string()).collect(),
        };
        for i in 0..size {
            cluster.spawn(i);
        }
        cluster.wait_until_answering().await;
        cluster
    }

    /// The client URLs of all members (running or not).
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(Member::client_url).collect()
    }

    /// The client URL of member `i`.
    pub fn endpoint(&self, i: usize) -> String {
        self.members[i].client_url()
    }

    /// Starts member `i` (again: with its old data directory it rejoins).
    pub fn spawn(&mut self, i: usize) {
        let member = &self.members[i];
        let data_dir = self.dir.path().join(&member.name);
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.log_path(i))
            .unwrap();
        let child = Command::new(ETCD)
            .arg("--name")
            .arg(&member.name)
            .arg("--data-dir")
            .arg(&data_dir)
            .args(["--listen-client-urls", &member.client_url()])
            .args(["--advertise-client-urls", &member.client_url()])
            .args(["--listen-peer-urls", &member.peer_url()])
            .args(["--initial-advertise-peer-urls", &member.peer_url()])
            .args(["--initial-cluster", &self.initial_cluster])
            .args(["--initial-cluster-state", "new"])
            .args(["--initial-cluster-token", &self.token()])
            .args(&self.extra_args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start etcd");
        self.members[i].child = Some(child);
    }

    /// Kills member `i` with SIGKILL (by its PID) and reaps it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits (bounded) until a linearizable read through all endpoints
    /// succeeds, i.e. the running members have a leader and serve.
    pub async fn wait_until_answering(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if self.answers().await {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "etcd did not answer within {START_TIMEOUT:?}; logs:\n{}",
                    self.logs()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn answers(&self) -> bool {
        let options = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(1))
            .with_timeout(Duration::from_secs(2));
        let probe = async {
            let mut client = Client::connect(self.endpoints(), Some(options)).await?;
            client.get("probe", None).await
        };
        matches!(
            tokio::time::timeout(Duration::from_secs(3), probe).await,
            Ok(Ok(_))
        )
    }

    /// The index of the member that is the leader, asking each running member
    /// (bounded); `None` when none answers with a leader.
    pub async fn leader(&self) -> Option<usize> {
        for (i, member) in self.members.iter().enumerate() {
            if member.child.is_none() {
                continue;
            }
            let status = async {
                let options = ConnectOptions::new().with_connect_timeout(Duration::from_secs(1));
                let mut client = Client::connect([member.client_url()], Some(options)).await?;
                client.status().await
            };
            let Ok(Ok(status)) = tokio::time::timeout(Duration::from_secs(3), status).await else {
                continue;
            };
            let own_id = status.header().map(|h| h.member_id());
            if own_id == Some(status.leader()) {
                return Some(i);
            }
        }
        None
    }

    /// A raw etcd client, to look at what the store wrote.
    pub async fn raw_client(&self) -> Client {
        Client::connect(self.endpoints(), None).await.unwrap()
    }

    /// All members' logs, for a failure message.
    pub fn logs(&self) -> String {
        (0..self.members.len())
            .map(|i| std::fs::read_to_string(self.log_path(i)).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir
            .path()
            .join(format!("{}.log", self.members[i].name))
    }

    fn token(&self) -> String {
        format!("kapi-test-{}", self.members[0].peer_port)
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
    }
}
