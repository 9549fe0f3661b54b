//! `ServerConfig::web`: the browser editor's files served over HTTP beside the WebSocket.

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::util::{config, joined, new_world, start};

/// One HTTP/1.1 GET of `path`: the status line, the headers and the body, as text and bytes.
async fn get(addr: std::net::SocketAddr, path: &str) -> (String, Vec<u8>) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).await.unwrap();
    let split = all
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a head")
        + 4;
    let head = String::from_utf8_lossy(&all[..split]).to_lowercase();
    (head, all[split..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_browser_editor_is_served_beside_the_websocket() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let web = dir.path().join("web");
    std::fs::create_dir_all(web.join("pkg")).unwrap();
    std::fs::write(web.join("index.html"), "<!doctype html><title>Loam</title>").unwrap();
    let wasm = [0u8, b'a', b's', b'm', 1, 0, 0, 0];
    std::fs::write(web.join("pkg/loam_web_bg.wasm"), wasm).unwrap();

    // A folder without an index.html is refused before anything is served.
    let mut bad = config(&world);
    bad.web = Some(dir.path().join("nothing-here"));
    match loam_server::serve(bad).await {
        Err(loam_server::ServerError::Config { name: "web", why }) => {
            assert!(why.contains("index.html"), "{why}")
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("served a folder without an index.html"),
    }

    let server = start(&world, |c| c.web = Some(web.clone())).await;
    let addr = server.local_addr();
    let (head, body) = get(addr, "/").await;
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-type: text/html"), "{head}");
    assert_eq!(body, b"<!doctype html><title>Loam</title>");
    // Browsers compile a module streamed only with its own MIME type.
    let (head, body) = get(addr, "/pkg/loam_web_bg.wasm").await;
    assert!(head.contains("content-type: application/wasm"), "{head}");
    assert_eq!(body, wasm);
    let (head, _) = get(addr, "/pkg/missing.js").await;
    assert!(head.starts_with("http/1.1 404"), "{head}");
    // Nothing outside the folder.
    let (head, _) = get(addr, "/../world.loam").await;
    assert!(!head.starts_with("http/1.1 200"), "{head}");
    // The WebSocket is still the protocol's: a hello is answered with the world.
    drop(joined(&server.url(), None).await);
}
