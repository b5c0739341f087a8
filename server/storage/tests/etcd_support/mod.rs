//! Real etcd processes for tests: free loopback ports, a temporary data
//! directory, bounded waits, and every process killed by PID when dropped.
//!
//! Where `/usr/bin/etcd` (Debian's `etcd-server` package) or `openssl` is
//! missing, tests skip through `kapi_test_support::require::require`: recorded
//! locally, a failure under `KAPI_REQUIRE_ALL` (`.ci/run`), where a skip would
//! hide a broken setup.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use etcd_client::{Client, ConnectOptions};
use kapi_storage::etcd::{EtcdOptions, EtcdStore};
use kapi_test_support::require::require;
use tempfile::TempDir;

/// Where Debian's `etcd-server` puts etcd.
pub const ETCD: &str = "/usr/bin/etcd";

/// How long a starting member may take to answer; only a failing start waits
/// this long.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether etcd tests can run here. Without etcd: fails under
/// `KAPI_REQUIRE_ALL`, otherwise records the skip and answers false (the test
/// then returns).
#[track_caller]
pub fn etcd_available() -> bool {
    require(
        std::path::Path::new(ETCD).exists(),
        ETCD,
        "apt-get install etcd-server",
    )
}

/// An [`EtcdStore`] on `etcd` with `prefix` and a 5 s request timeout.
pub async fn store_on(etcd: &EtcdCluster, prefix: &str) -> EtcdStore {
    let options = EtcdOptions {
        prefix: prefix.to_owned(),
        request_timeout: Duration::from_secs(5),
        ..EtcdOptions::new(etcd.endpoints())
    };
    EtcdStore::connect(options).await.unwrap()
}

/// A free TCP port on 127.0.0.1 (bound, read and released).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    listener.local_addr().unwrap().port()
}

/// One member: its ports and, while it runs, its process.
struct Member {
    name: String,
    /// `http` or, for a TLS cluster, `https`.
    scheme: &'static str,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

impl Member {
    fn client_url(&self) -> String {
        format!("{}://127.0.0.1:{}", self.scheme, self.client_port)
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
    /// Client TLS for the readiness probe of a TLS cluster.
    tls: Option<TestCerts>,
}

impl EtcdCluster {
    /// A single member, started and answering.
    pub async fn single() -> EtcdCluster {
        EtcdCluster::start(1, &[]).await
    }

    /// `size` members with extra etcd flags, started and answering.
    pub async fn start(size: usize, extra_args: &[&str]) -> EtcdCluster {
        EtcdCluster::start_with(size, extra_args, None).await
    }

    /// One member serving clients over TLS only, requiring client
    /// certificates signed by `certs.ca` (as kubeadm sets etcd up).
    pub async fn single_tls(certs: &TestCerts) -> EtcdCluster {
        let files = [
            ("--cert-file", &certs.server_cert),
            ("--key-file", &certs.server_key),
            ("--trusted-ca-file", &certs.ca),
        ];
        let mut args: Vec<String> = vec!["--client-cert-auth".to_owned()];
        for (flag, path) in files {
            args.push(format!("{flag}={}", path.display()));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        EtcdCluster::start_with(1, &args, Some(certs.clone())).await
    }

    /// Starts the cluster; when a member exits during start-up (a port picked
    /// free was taken meanwhile by someone else), starts over on new ports.
    async fn start_with(size: usize, extra_args: &[&str], tls: Option<TestCerts>) -> EtcdCluster {
        let mut failures = Vec::new();
        for _ in 0..3 {
            let mut cluster = EtcdCluster::new(size, extra_args, tls.clone());
            for i in 0..size {
                cluster.spawn(i);
            }
            match cluster.wait_answering().await {
                Ok(()) => return cluster,
                Err(failure) => failures.push(failure),
            }
        }
        panic!("etcd did not start:\n{}", failures.join("\n-----\n"));
    }

    fn new(size: usize, extra_args: &[&str], tls: Option<TestCerts>) -> EtcdCluster {
        let scheme = if tls.is_some() { "https" } else { "http" };
        let members: Vec<Member> = (0..size)
            .map(|i| Member {
                name: format!("m{i}"),
                scheme,
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
        EtcdCluster {
            dir: tempfile::tempdir().unwrap(),
            members,
            initial_cluster,
            extra_args: extra_args.iter().map(|s| s.to_string()).collect(),
            tls,
        }
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
    pub async fn wait_until_answering(&mut self) {
        if let Err(failure) = self.wait_answering().await {
            panic!("{failure}");
        }
    }

    /// [`EtcdCluster::wait_until_answering`], failing early with the logs when
    /// a running member exits.
    async fn wait_answering(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if self.answers().await {
                return Ok(());
            }
            if let Some(exited) = self.exited_member() {
                return Err(format!("{exited}; logs:\n{}", self.logs()));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "etcd did not answer within {START_TIMEOUT:?}; logs:\n{}",
                    self.logs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Reaps a running member that exited; says which and how.
    fn exited_member(&mut self) -> Option<String> {
        for member in &mut self.members {
            let Some(child) = member.child.as_mut() else {
                continue;
            };
            if let Ok(Some(status)) = child.try_wait() {
                member.child = None;
                return Some(format!("etcd {} exited: {status}", member.name));
            }
        }
        None
    }

    async fn answers(&self) -> bool {
        let mut options = ConnectOptions::new()
            .with_connect_timeout(Duration::from_secs(1))
            .with_timeout(Duration::from_secs(2));
        if let Some(certs) = &self.tls {
            options = options.with_tls(certs.client_tls());
        }
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

/// PEM files for a TLS cluster, made with the `openssl` command: a CA, a
/// server certificate for 127.0.0.1 and a client certificate, both signed by it.
#[derive(Clone, Debug)]
pub struct TestCerts {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

impl TestCerts {
    /// Makes the files in `dir`; `None` (the skip recorded) where the `openssl`
    /// command is missing, a failure there under `KAPI_REQUIRE_ALL`.
    #[track_caller]
    pub fn make(dir: &std::path::Path) -> Option<TestCerts> {
        let present = Command::new("openssl").arg("version").output().is_ok();
        if !require(present, "the openssl command", "apt-get install openssl") {
            return None;
        }
        let certs = TestCerts {
            ca: dir.join("ca.crt"),
            server_cert: dir.join("server.crt"),
            server_key: dir.join("server.key"),
            client_cert: dir.join("client.crt"),
            client_key: dir.join("client.key"),
        };
        let ca_key = dir.join("ca.key");
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=kapi-test-ca",
            "-keyout",
            path(&ca_key),
            "-out",
            path(&certs.ca),
        ]);
        let server = "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth";
        certs.sign(
            dir,
            "server",
            &certs.server_cert,
            &certs.server_key,
            server,
            &ca_key,
        );
        let client = "extendedKeyUsage=clientAuth";
        certs.sign(
            dir,
            "client",
            &certs.client_cert,
            &certs.client_key,
            client,
            &ca_key,
        );
        Some(certs)
    }

    /// A key and a certificate for it, signed by the CA, with `extensions`.
    fn sign(
        &self,
        dir: &std::path::Path,
        name: &str,
        cert: &std::path::Path,
        key: &std::path::Path,
        extensions: &str,
        ca_key: &std::path::Path,
    ) {
        let csr = dir.join(format!("{name}.csr"));
        let ext = dir.join(format!("{name}.ext"));
        std::fs::write(&ext, extensions).unwrap();
        openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            &format!("/CN=kapi-test-{name}"),
            "-keyout",
            path(key),
            "-out",
            path(&csr),
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            path(&csr),
            "-CA",
            path(&self.ca),
            "-CAkey",
            path(ca_key),
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            path(&ext),
            "-out",
            path(cert),
        ]);
    }

    /// The client side's TLS settings for etcd-client.
    pub fn client_tls(&self) -> etcd_client::TlsOptions {
        let read = |p: &std::path::Path| std::fs::read(p).unwrap();
        etcd_client::TlsOptions::new()
            .ca_certificate(etcd_client::Certificate::from_pem(read(&self.ca)))
            .identity(etcd_client::Identity::from_pem(
                read(&self.client_cert),
                read(&self.client_key),
            ))
    }
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
