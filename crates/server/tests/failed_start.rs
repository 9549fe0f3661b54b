//! A server that cannot start leaves its world file as it was.

use crate::util::{config, new_world};

/// An address already in use fails before the world is opened: the file keeps its bytes
/// (opening it switches it to WAL mode) and nothing is made beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_listen_leaves_the_world_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let before = std::fs::read(&world).unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut c = config(&world);
    c.listen = taken.local_addr().unwrap();
    let e = loam_server::serve(c)
        .await
        .err()
        .expect("the address is taken");
    assert!(matches!(e, loam_server::ServerError::Io(_)), "{e}");
    assert!(
        std::fs::read(&world).unwrap() == before,
        "the world file changed"
    );
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["world.loam"]);
}
