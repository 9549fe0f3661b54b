//! Presence: clients see each other's names, positions and aims (never their own), a client
//! that leaves is reported, updates come at a bounded rate, and bad reports are refused
//! (the client's own check; the server disconnects a raw client that sends one anyway and
//! goes on serving).

use std::time::{Duration, Instant};

use loam_client::{Client, ClientConfig, ClientError, ClientEvent};
use loam_protocol::{Aim, AimError, ClientMessage, PresenceReport, ServerMessage};

use crate::util::{factory, hello, new_world, raw, recv_raw, recv_until, send_raw, start, viewer};

async fn join(url: &str, name: &str, x: f64) -> Client {
    let mut cfg = ClientConfig::new(url, viewer(x, 0.0, 0.0, 8.0), factory());
    cfg.name = name.into();
    Client::connect(cfg).await.unwrap()
}

/// Takes in events until `done` holds (20 s at most).
async fn until(c: &mut Client, what: &str, done: impl Fn(&Client) -> bool) {
    let wait = async {
        while !done(c) {
            c.next_event().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

fn names(c: &Client) -> Vec<(u64, String)> {
    c.players()
        .values()
        .map(|p| (p.id, p.name.clone()))
        .collect()
}

fn report(x: f64, tool: &str, radius: f64) -> PresenceReport {
    PresenceReport {
        position: [x, 12.0, -3.0],
        aim: Aim {
            tool: tool.into(),
            point: Some([x + 1.0, 0.5, 4.0]),
            radius,
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_see_each_others_names_and_aims_and_who_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let url = server.url();
    let mut a = join(&url, "ada", 0.0).await;
    let mut b = join(&url, "bob", 10.0).await;
    let mut c = join(&url, "cy", -10.0).await;
    let (ia, ib, ic) = (a.id(), b.id(), c.id());
    let mut want_a = vec![(ib, "bob".to_string()), (ic, "cy".to_string())];
    want_a.sort();
    until(&mut a, "a to see b and c", |a| a.players().len() == 2).await;
    assert_eq!(names(&a), want_a, "in id order, without itself");
    until(&mut b, "b to see a and c", |b| b.players().len() == 2).await;
    assert!(!b.players().contains_key(&ib));
    until(&mut c, "c to see a and b", |c| c.players().len() == 2).await;
    // Before any report: where the hello's viewer was, no aim.
    assert_eq!(c.players()[&ia].position, [0.0, 0.0, 0.0]);
    assert_eq!(c.players()[&ib].aim, None);

    // A aims; B and C see it.
    let r = report(2.0, "ball", 3.5);
    a.set_presence(r.clone()).await.unwrap();
    for (x, name) in [(&mut b, "b"), (&mut c, "c")] {
        until(x, &format!("{name} to see a's aim"), |x| {
            x.players()[&ia].aim.as_ref() == Some(&r.aim)
        })
        .await;
        assert_eq!(x.players()[&ia].position, r.position);
        assert_eq!(x.players()[&ia].name, "ada");
    }
    // Nothing aimed at: the point goes, the tool stays.
    let mut none = report(2.0, "cube", 1.0);
    none.aim.point = None;
    b.set_presence(none.clone()).await.unwrap();
    until(&mut a, "a to see b aim at nothing", |a| {
        a.players()[&ib].aim.as_ref() == Some(&none.aim)
    })
    .await;

    // C leaves: A and B are told.
    c.close().await;
    for (x, name) in [(&mut a, "a"), (&mut b, "b")] {
        let wait = async {
            loop {
                match x.next_event().await.unwrap() {
                    ClientEvent::Presence { left, .. } if left.contains(&ic) => return,
                    _ => {}
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(20), wait)
            .await
            .unwrap_or_else(|_| panic!("{name} was not told that c left"));
        assert!(!x.players().contains_key(&ic));
        assert_eq!(x.players().len(), 1);
    }
    drop((a, b));
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_updates_come_at_a_bounded_rate_with_the_latest_state() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let url = server.url();
    let mut a = join(&url, "ada", 0.0).await;
    let mut b = join(&url, "bob", 10.0).await;
    let ia = a.id();
    until(&mut b, "b to see a", |b| b.players().contains_key(&ia)).await;

    // 200 reports over about a second; B's updates about A come at most every 100 ms.
    let started = Instant::now();
    for i in 0..200 {
        a.set_presence(report(f64::from(i), "ball", 2.0))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let last = report(199.0, "ball", 2.0);
    let mut updates = 0;
    let wait = async {
        loop {
            if let ClientEvent::Presence { changed, .. } = b.next_event().await.unwrap()
                && changed.contains(&ia)
            {
                updates += 1;
            }
            if b.players()[&ia].position == last.position {
                return;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .expect("b sees a's last report");
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(b.players()[&ia].aim, Some(last.aim));
    let most = (elapsed / 0.1).ceil() as usize + 2;
    assert!(
        updates >= 2 && updates <= most,
        "{updates} updates in {elapsed:.2} s (at most {most})"
    );
    drop((a, b));
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_reports_are_refused_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let url = server.url();
    let mut a = join(&url, "ada", 0.0).await;

    // The client checks before sending: nothing goes out, the connection stays.
    let mut nan = report(0.0, "ball", 2.0);
    nan.position[0] = f64::NAN;
    match a.set_presence(nan.clone()).await {
        Err(ClientError::Aim(AimError::Position { .. })) => {}
        r => panic!("a NaN position was not refused: {r:?}"),
    }
    let mut far = report(0.0, "ball", 2.0);
    far.aim.radius = 1e6;
    assert!(matches!(
        a.set_presence(far.clone()).await,
        Err(ClientError::Aim(AimError::Radius { .. }))
    ));
    assert!(a.is_connected());

    // A raw client sending them anyway is disconnected with the reason.
    let mut inf = report(0.0, "ball", 2.0);
    inf.aim.point = Some([0.0, f64::INFINITY, 0.0]);
    let mut long = report(0.0, "ball", 2.0);
    long.aim.tool = "t".repeat(100);
    for (bad, why) in [
        (nan, "position"),
        (far, "radius"),
        (inf, "aim point"),
        (long, "tool name"),
    ] {
        let mut ws = raw(&url).await;
        send_raw(&mut ws, hello(None)).await;
        recv_until(&mut ws, |m| match m {
            ServerMessage::CatchUp(c) if c.done => Some(()),
            _ => None,
        })
        .await;
        send_raw(&mut ws, ClientMessage::Presence(bad).encode()).await;
        let reason = loop {
            match recv_raw(&mut ws).await {
                Some(ServerMessage::Disconnect { reason }) => break reason,
                Some(_) => {}
                None => break String::new(),
            }
        };
        assert!(reason.contains(why), "{why}: {reason:?}");
    }

    // A still works, and a new client sees it (and none of the raw ones, all gone).
    let ia = a.id();
    a.set_presence(report(5.0, "smooth", 4.0)).await.unwrap();
    let mut b = join(&url, "bob", 0.0).await;
    until(&mut b, "b to see a's aim", |b| {
        b.players().get(&ia).and_then(|p| p.aim.as_ref()) == Some(&report(5.0, "smooth", 4.0).aim)
    })
    .await;
    until(&mut b, "b to see only a", |b| b.players().len() == 1).await;
    assert_eq!(names(&b), vec![(ia, "ada".to_string())]);
    assert_eq!(server.status().await.unwrap().clients, 2);
    drop((a, b));
    server.shutdown().await.unwrap();
}

/// A dropped client forgets the others at once (its editor would show players it no longer
/// hears of), and after its reconnect the others see its aim again without a new report:
/// the server forgot it with the connection (a restarted server never had it), so the
/// client sends its last report again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnected_client_is_seen_with_its_aim_again() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let url = server.url();
    let mut a = join(&url, "ada", 0.0).await;
    let mut b = join(&url, "bob", 10.0).await;
    let (ia, ib) = (a.id(), b.id());
    let r = report(10.0, "ball", 2.5);
    b.set_presence(r.clone()).await.unwrap();
    until(&mut a, "a to see b's aim", |a| {
        a.players().get(&ib).and_then(|p| p.aim.as_ref()) == Some(&r.aim)
    })
    .await;
    until(&mut b, "b to see a", |b| b.players().contains_key(&ia)).await;

    b.drop_connection();
    assert!(b.players().is_empty(), "offline, b hears of no one");
    until(&mut a, "a to be told b left", |a| a.players().is_empty()).await;

    assert!(b.reconnect().await.unwrap(), "b resumes");
    until(&mut a, "a to see b's aim after b's reconnect", |a| {
        a.players().get(&ib).and_then(|p| p.aim.as_ref()) == Some(&r.aim)
    })
    .await;
    assert_eq!(a.players()[&ib].position, r.position);
    until(&mut b, "b to see a again", |b| {
        b.players().contains_key(&ia)
    })
    .await;
    drop((a, b));
    server.shutdown().await.unwrap();
}

/// A ping's pong comes back as an event with the round-trip time, before any edit; pongs of
/// an older ping are not reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_measure_the_round_trip_before_any_edit() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let mut a = join(&server.url(), "ada", 0.0).await;
    assert_eq!(a.rtt(), None);
    for _ in 0..3 {
        a.ping().await.unwrap();
        let rtt = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                if let ClientEvent::Pong { rtt } = a.next_event().await.unwrap() {
                    return rtt;
                }
            }
        })
        .await
        .expect("a pong");
        assert!(
            rtt > Duration::ZERO && rtt < Duration::from_secs(20),
            "{rtt:?}"
        );
        assert_eq!(a.rtt(), Some(rtt));
    }
    // Two pings at once: only the second's pong is reported (the first is replaced).
    a.ping().await.unwrap();
    a.ping().await.unwrap();
    let mut pongs = 0;
    let _ = tokio::time::timeout(Duration::from_millis(1500), async {
        loop {
            if let ClientEvent::Pong { .. } = a.next_event().await.unwrap() {
                pongs += 1;
            }
        }
    })
    .await;
    assert_eq!(pongs, 1);
    drop(a);
    server.shutdown().await.unwrap();
}
