//! Connections as kube-apiserver keeps them: HTTP/2 with its SETTINGS (the values
//! read off the reference kube-apiserver 1.32's first frame), HTTP/1.1 keep-alive,
//! and a real HTTP/2 client (curl) uploading more than its flow-control windows.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kapi_test_support::{Server, Stream};

const SETTINGS: u8 = 4;
const WINDOW_UPDATE: u8 = 8;

/// One HTTP/2 frame: type, flags, stream, payload.
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

fn read_frame(stream: &mut Stream) -> Frame {
    let mut header = [0u8; 9];
    stream.read_exact(&mut header).expect("frame header");
    let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
    assert!(len <= 1 << 20, "frame of {len} bytes");
    let mut payload = vec![0; len];
    stream.read_exact(&mut payload).expect("frame payload");
    Frame {
        kind: header[3],
        flags: header[4],
        stream: u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & 0x7fff_ffff,
        payload,
    }
}

#[test]
fn http2_settings_are_kube_apiservers() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let mut tcp = Stream::connect(server.address, Some(&[b"h2"])).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(tcp.alpn_protocol(), Some(&b"h2"[..]), "h2 chosen by ALPN");
    // Client preface and an empty SETTINGS frame.
    tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .unwrap();

    let mut settings = Vec::new();
    let mut connection_window_increment = None;
    // The server's SETTINGS, then its connection WINDOW_UPDATE and the ACK of ours,
    // in some order: a handful of frames at most.
    for _ in 0..6 {
        let frame = read_frame(&mut tcp);
        match frame.kind {
            SETTINGS if frame.flags & 1 == 0 => {
                settings = frame
                    .payload
                    .chunks(6)
                    .map(|c| {
                        (
                            u16::from_be_bytes([c[0], c[1]]),
                            u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
                        )
                    })
                    .collect();
            }
            WINDOW_UPDATE if frame.stream == 0 => {
                let b = &frame.payload;
                connection_window_increment =
                    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & 0x7fff_ffff);
            }
            _ => {}
        }
        if !settings.is_empty() && connection_window_increment.is_some() {
            break;
        }
    }
    let get = |id: u16| settings.iter().find(|(k, _)| *k == id).map(|(_, v)| *v);
    // What kube-apiserver 1.32 sends: MAX_CONCURRENT_STREAMS 100, INITIAL_WINDOW_SIZE
    // and MAX_FRAME_SIZE 256 KiB, MAX_HEADER_LIST_SIZE 1 MiB + 320.
    assert_eq!(get(3), Some(100), "MAX_CONCURRENT_STREAMS in {settings:?}");
    assert_eq!(get(4), Some(262_144), "INITIAL_WINDOW_SIZE in {settings:?}");
    assert_eq!(get(5), Some(262_144), "MAX_FRAME_SIZE in {settings:?}");
    assert_eq!(
        get(6),
        Some(1_048_896),
        "MAX_HEADER_LIST_SIZE in {settings:?}"
    );
    // The connection window grows from 65535 to 100 streams of 256 KiB.
    assert_eq!(
        connection_window_increment,
        Some(100 * 262_144 - 65_535),
        "connection WINDOW_UPDATE"
    );
}

#[test]
fn http2_client_sends_a_body_larger_than_its_windows() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    // 600 KB: more than two stream windows, so the server must keep granting
    // WINDOW_UPDATEs for the upload to finish.
    let body = serde_json::json!({
        "metadata": {"name": "big"},
        "data": {"k": "x".repeat(600_000)},
    })
    .to_string();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body.json");
    std::fs::write(&file, body).unwrap();
    let out = Command::new("curl")
        .args([
            "-s",
            "--max-time",
            "20",
            "--http2",
            "--cacert",
            &server.ca_file().display().to_string(),
            "--cert",
            &server.data_dir().join("admin.crt").display().to_string(),
            "--key",
            &server.data_dir().join("admin.key").display().to_string(),
            "-H",
            "Content-Type: application/json",
            "--data-binary",
        ])
        .arg(format!("@{}", file.display()))
        .args(["-o", "/dev/null", "-w", "%{http_code} %{http_version}"])
        .arg(format!(
            "{}/api/v1/namespaces/default/configmaps",
            server.url()
        ))
        .output()
        .expect("curl runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "201 2");
    let data = server.kubectl_ok(&["get", "configmap", "big", "-o", "jsonpath={.data.k}"]);
    assert_eq!(data.len(), 600_000);
}

#[test]
fn http1_keeps_connections_alive() {
    let server = Server::start(Path::new(env!("CARGO_BIN_EXE_kapi")));
    let tcp = Stream::connect(server.address, None).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut reader = BufReader::new(tcp);
    for _ in 0..3 {
        let writer = reader.get_mut();
        write!(
            writer,
            "GET /api/v1/namespaces/default HTTP/1.1\r\nHost: kapi\r\nAccept: application/json\r\n\r\n"
        )
        .unwrap();
        writer.flush().unwrap();
        let mut status = String::new();
        reader.read_line(&mut status).unwrap();
        assert!(status.starts_with("HTTP/1.1 200"), "{status:?}");
        let mut length = 0;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            assert!(!line.eq_ignore_ascii_case("connection: close"));
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["metadata"]["name"], "default");
    }
}
