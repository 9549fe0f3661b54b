//! Round trips of every message, the hello version probe, bricks on the wire, and the
//! decoders over arbitrary and damaged bytes (they must return an error, never panic).

use std::sync::Arc;

use loam_blocks::{BlockDelta, BlockOp, BlockSettings, BlockWorld, MaterialTable};
use loam_field::{
    BrickKey, CsgMode, EditOp, Falloff, Field, FieldSettings, LogEntry, NoiseTerrainSettings,
    SamplePos,
};
use loam_protocol::{
    Aim, BlockCatchUp, BlockEvents, BlockOpRecord, BrickBox, CatchUp, ClientMessage, DecodeError,
    Hello, OpRecord, Player, PresenceReport, PresenceUpdate, Refusal, RefusalCode, Resume,
    ServerMessage, Welcome, WireBrick, WireSamples, WorldMeta, decode_brick, decode_samples,
    encode_brick, encode_samples, probe_hello_version,
};
use loam_protocol::{DEFAULT_MAX_MESSAGE_BYTES, PROTOCOL_VERSION, generator_fingerprint};
use proptest::prelude::*;
use serde::Serialize;

use crate::util::{factory, gen_json, viewer};

const MAX: usize = DEFAULT_MAX_MESSAGE_BYTES;

fn field() -> Field {
    let g = factory()(&gen_json()).unwrap();
    Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
}

fn sphere() -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [1.5, 0.2, -3.0],
        radius: 2.5,
        material: 3,
        blend: 0.5,
    }
}

/// A field with one dig, and a brick it changed plus a uniform one.
fn bricks() -> (Field, Vec<WireBrick>) {
    let mut f = field();
    f.apply(&sphere()).unwrap();
    f.apply(&EditOp::Raise {
        center: [40.0, 0.0, 0.0],
        radius: 3.0,
        strength: 1.0,
        falloff: Falloff::Smooth,
    })
    .unwrap();
    let wires = f.bricks().map(|(k, b)| encode_brick(k, b)).collect();
    (f, wires)
}

fn meta() -> WorldMeta {
    let f = field();
    WorldMeta {
        generator_json: gen_json(),
        field: *f.settings(),
        generator_fingerprint: generator_fingerprint(f.generator(), f.settings()),
    }
}

/// A real delta: a pillar and beam placed, then the pillar's foot broken (four blocks
/// fall as one piece).
fn block_delta() -> BlockDelta {
    let ground = |p: [f64; 3]| p[1] as f32;
    let mut physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
    let mut w = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
    w.set_tracking(true);
    for c in [
        [0, 0, 0],
        [0, 1, 0],
        [0, 2, 0],
        [1, 2, 0],
        [2, 2, 0],
        [5, 0, 5],
    ] {
        w.apply(
            &mut physics,
            &ground,
            &crate::blocks::place(crate::blocks::full(c[0], c[1], c[2])),
        )
        .unwrap();
    }
    let _ = w.take_delta();
    let foot = BlockOp::Break {
        at: crate::blocks::full(0, 0, 0),
    };
    w.apply(&mut physics, &ground, &foot).unwrap();
    let mut d = w.take_delta();
    assert_eq!(d.unheld.len(), 5);
    assert_eq!(d.pieces.len(), 1);
    d.held = w.save().blocks;
    d
}

fn client_messages() -> Vec<ClientMessage> {
    let region = BrickBox {
        min: [-1, -2, -3],
        max: [4, 5, 6],
    };
    vec![
        ClientMessage::Hello(Hello {
            protocol: PROTOCOL_VERSION,
            name: "ada".into(),
            token: Some("s3cret".into()),
            viewer: viewer(1.0, 2.0, -3.5, 64.0),
            resume: Some(Resume {
                client_id: 77,
                key: [u64::MAX, 3],
                last_seq: 1234,
                region,
            }),
        }),
        ClientMessage::Hello(Hello {
            protocol: PROTOCOL_VERSION,
            name: String::new(),
            token: None,
            viewer: viewer(0.0, 0.0, 0.0, 0.0),
            resume: None,
        }),
        ClientMessage::Op {
            op_id: 9,
            entry: LogEntry::new(0, 4, sphere()).encode(),
        },
        ClientMessage::BlockOp {
            op_id: 10,
            op: crate::blocks::place(crate::blocks::full(1, 2, 3)).encode(),
        },
        ClientMessage::Viewer(viewer(-10.0, 5.0, 1e6, 12.5)),
        ClientMessage::Hash {
            request: 3,
            region: Some(region),
        },
        ClientMessage::Hash {
            request: 4,
            region: None,
        },
        ClientMessage::Presence(PresenceReport {
            position: [1.5, 20.0, -7.25],
            aim: Aim {
                tool: "ball".into(),
                point: Some([3.0, 0.5, -9.0]),
                radius: 2.5,
            },
        }),
        ClientMessage::Presence(PresenceReport {
            position: [0.0; 3],
            aim: Aim {
                tool: String::new(),
                point: None,
                radius: 0.0,
            },
        }),
    ]
}

fn server_messages() -> Vec<ServerMessage> {
    let (_, wires) = bricks();
    let region = BrickBox {
        min: [0; 3],
        max: [2; 3],
    };
    vec![
        ServerMessage::Welcome(Welcome {
            protocol: PROTOCOL_VERSION,
            client_id: 1 << 50,
            resume_key: [0x0123_4567_89ab_cdef, u64::MAX],
            world: meta(),
            seq: 99,
            resumed: true,
            last_op_id: Some(12),
        }),
        ServerMessage::Refused(Refusal {
            code: RefusalCode::ProtocolVersion,
            reason: "no".into(),
            server_protocol: PROTOCOL_VERSION,
        }),
        ServerMessage::CatchUp(CatchUp {
            seq: 5,
            region,
            keep: Some(region),
            bricks: wires.clone(),
            done: false,
        }),
        ServerMessage::CatchUp(CatchUp {
            seq: 5,
            region,
            keep: None,
            bricks: Vec::new(),
            done: true,
        }),
        ServerMessage::Op(OpRecord {
            seq: 6,
            author: 3,
            op_id: 8,
            entry: LogEntry::new(6, 2, EditOp::Undo { stroke: 1 }).encode(),
        }),
        ServerMessage::Patch {
            seq: 6,
            samples: wires
                .iter()
                .map(|w| WireSamples {
                    key: w.key,
                    min: [0, 1, 2],
                    max: [3, 4, 31],
                    data: w.data.clone(),
                })
                .collect(),
        },
        ServerMessage::OpRefused {
            op_id: 2,
            reason: "edit radius 1e9 m is above the limit".into(),
        },
        ServerMessage::Seq { seq: 7 },
        ServerMessage::HashAt {
            request: 1,
            seq: 7,
            region: Some(BrickBox {
                min: [-1, 0, -1],
                max: [1, 2, 1],
            }),
        },
        ServerMessage::Hash {
            request: 1,
            seq: 7,
            region: None,
            hash: [7; 32],
            blocks: [8; 32],
        },
        ServerMessage::BlockOp(BlockOpRecord {
            seq: 8,
            author: 3,
            op_id: 11,
            step: 120,
            op: BlockOp::Break {
                at: crate::blocks::full(0, 0, 0),
            }
            .encode(),
            delta: block_delta(),
        }),
        ServerMessage::Blocks(BlockEvents {
            seq: 8,
            step: 300,
            delta: block_delta(),
        }),
        ServerMessage::BlockCatchUp(BlockCatchUp {
            seq: 9,
            region,
            keep: None,
            delta: block_delta(),
            done: true,
        }),
        ServerMessage::Presence(PresenceUpdate {
            players: vec![
                Player {
                    id: 3,
                    name: "ada".into(),
                    position: [1.0, 2.0, 3.0],
                    aim: None,
                },
                Player {
                    id: 1 << 50,
                    name: "grace".into(),
                    position: [-4.0, 0.5, 1e6],
                    aim: Some(Aim {
                        tool: "cube".into(),
                        point: Some([-4.0, 0.0, 12.0]),
                        radius: 8.0,
                    }),
                },
            ],
            left: vec![7, 9],
        }),
        ServerMessage::Presence(PresenceUpdate {
            players: Vec::new(),
            left: vec![2],
        }),
        ServerMessage::Disconnect {
            reason: "rate limit".into(),
        },
    ]
}

#[test]
fn every_message_round_trips() {
    for m in client_messages() {
        let bytes = m.encode();
        assert_eq!(ClientMessage::decode(&bytes, MAX).unwrap(), m);
        // A client message is not a server message.
        assert!(ServerMessage::decode(&bytes, MAX).is_err());
    }
    for m in server_messages() {
        let bytes = m.encode();
        assert_eq!(ServerMessage::decode(&bytes, MAX).unwrap(), m);
    }
}

#[test]
fn decoders_check_size_first_and_refuse_trailing_bytes() {
    let mut bytes = ClientMessage::Viewer(viewer(1.0, 2.0, 3.0, 4.0)).encode();
    assert_eq!(
        ClientMessage::decode(&bytes, bytes.len() - 1),
        Err(DecodeError::TooLarge {
            bytes: bytes.len(),
            max: bytes.len() - 1
        })
    );
    bytes.push(0xc0);
    assert_eq!(
        ClientMessage::decode(&bytes, MAX),
        Err(DecodeError::Trailing(1))
    );
}

#[test]
fn a_hello_of_another_version_still_shows_its_version() {
    /// What a hello of a later protocol might look like: renamed and added fields.
    #[derive(Serialize)]
    struct Later {
        protocol: u32,
        nickname: String,
        avatar: Vec<u8>,
    }
    #[derive(Serialize)]
    struct Outer {
        hello: Later,
    }
    let later = rmp_serde::to_vec_named(&Outer {
        hello: Later {
            protocol: 7,
            nickname: "x".into(),
            avatar: vec![1, 2, 3],
        },
    })
    .unwrap();
    assert!(ClientMessage::decode(&later, MAX).is_err());
    assert_eq!(probe_hello_version(&later, MAX), Some(7));
    let ours = client_messages()[0].encode();
    assert_eq!(
        probe_hello_version(&ours, MAX),
        Some(u64::from(PROTOCOL_VERSION))
    );
    assert_eq!(probe_hello_version(&[0x93, 1, 2, 3], MAX), None);
}

#[test]
fn bricks_cross_the_wire_bit_for_bit() {
    let (f, wires) = bricks();
    let band = f.settings().band();
    assert!(wires.len() >= 2);
    for w in &wires {
        let (k, b) = decode_brick(w, band).unwrap();
        assert_eq!(b, **f.brick(k).unwrap());
    }
    // A brick far below the ground is uniform.
    let deep = BrickKey::new(0, -5, 0);
    let mut g = field();
    g.apply(&EditOp::Paint {
        center: [16.0, -150.0, 16.0],
        radius: 60.0,
        material: 9,
        falloff: Falloff::Linear,
        threshold: 0.001,
    })
    .unwrap();
    let w = encode_brick(deep, g.brick(deep).unwrap());
    assert_eq!(w.data.len(), 4, "a uniform brick is 4 bytes");
    let (_, b) = decode_brick(&w, band).unwrap();
    assert_eq!(b, **g.brick(deep).unwrap());
    assert_eq!(b.material([0, 0, 0]), 9);
    // Damage is an error.
    let mut bad = wires[0].clone();
    bad.data.truncate(bad.data.len() / 2);
    assert!(decode_brick(&bad, band).is_err());
    assert!(
        decode_brick(
            &WireBrick {
                key: [0; 3],
                data: vec![9]
            },
            band
        )
        .is_err()
    );
}

#[test]
fn changed_samples_cross_the_wire_bit_for_bit() {
    // The samples a dig changed, per brick, written into a field that has not seen it: the
    // same bricks.
    let mut server = field();
    let out = server.apply(&sphere()).unwrap();
    let changed = out.changed.unwrap();
    let mut client = field();
    let n = loam_field::BRICK_SAMPLES;
    let (lo, hi) = (changed.min.to_array(), changed.max.to_array());
    let mut sent = 0;
    for (k, b) in server.bricks() {
        let base = [k.x, k.y, k.z].map(|c| c * n);
        let min: [u8; 3] = std::array::from_fn(|a| (lo[a] - base[a]).clamp(0, n - 1) as u8);
        let max: [u8; 3] = std::array::from_fn(|a| (hi[a] - base[a]).clamp(0, n - 1) as u8);
        let w = encode_samples(k, b, min, max);
        let (region, q, m) = decode_samples(&w).unwrap();
        assert_eq!(region.volume(), q.len() as u64);
        client.write_quantized(region, &q, &m).unwrap();
        sent += w.data.len();
    }
    assert_eq!(client.hash(), server.hash());
    // Far less than the bricks themselves.
    let whole: usize = server
        .bricks()
        .map(|(k, b)| encode_brick(k, b).data.len())
        .sum();
    assert!(
        sent * 2 < whole,
        "{sent} bytes of samples, {whole} of bricks"
    );
    // A uniform box is 4 bytes; a box beyond its brick or damaged data is an error.
    let deep = encode_samples(
        BrickKey::new(0, -5, 0),
        &loam_field::Brick::generate(
            server.generator(),
            BrickKey::new(0, -5, 0),
            server.settings().voxel_size,
            server.settings().band(),
        ),
        [0; 3],
        [31; 3],
    );
    assert_eq!(deep.data.len(), 4);
    assert_eq!(decode_samples(&deep).unwrap().1.len(), 32 * 32 * 32);
    let (k, b) = server.bricks().next().unwrap();
    let w = encode_samples(k, b, [0; 3], [31, 31, 3]);
    let mut beyond = w.clone();
    beyond.max = [32, 31, 3];
    assert!(decode_samples(&beyond).is_err());
    let mut upside = w.clone();
    upside.min = [5, 0, 0];
    upside.max = [4, 31, 3];
    assert!(decode_samples(&upside).is_err());
    let mut short = w.clone();
    short.max = [31, 31, 2];
    assert!(decode_samples(&short).is_err());
    // Keys whose samples leave the i32 range would wrap onto other bricks: refused. The
    // highest and lowest keys within it decode where they are.
    for key in [
        [i32::MAX / 32 + 1, 0, 0],
        [0, i32::MIN / 32 - 1, 0],
        [0, 0, i32::MAX],
    ] {
        let mut far = w.clone();
        far.key = key;
        assert!(decode_samples(&far).is_err(), "{key:?}");
    }
    let mut top = w.clone();
    top.key = [i32::MAX / 32, i32::MIN / 32, 0];
    let (region, _, _) = decode_samples(&top).unwrap();
    assert_eq!(
        (region.min, region.max),
        (
            SamplePos::new(i32::MAX / 32 * 32, i32::MIN, 0),
            SamplePos::new(i32::MAX / 32 * 32 + 31, i32::MIN + 31, 3)
        )
    );
}

#[test]
fn the_fingerprint_tells_generators_apart() {
    let a = field();
    let other = loam_field::Generator::noise(
        &NoiseTerrainSettings::default(),
        &loam_field::CaveSettings::default(),
    )
    .unwrap();
    assert_eq!(
        generator_fingerprint(a.generator(), a.settings()),
        meta().generator_fingerprint
    );
    assert_ne!(
        generator_fingerprint(&other, a.settings()),
        meta().generator_fingerprint
    );
}

fn all_encoded() -> &'static [Vec<u8>] {
    static ALL: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        client_messages()
            .iter()
            .map(ClientMessage::encode)
            .chain(server_messages().iter().map(ServerMessage::encode))
            .collect()
    })
}

fn decode_all(bytes: &[u8], band: f64) {
    let _ = ClientMessage::decode(bytes, MAX);
    let _ = ServerMessage::decode(bytes, MAX);
    let _ = probe_hello_version(bytes, MAX);
    let _ = LogEntry::decode(bytes);
    let _ = decode_brick(
        &WireBrick {
            key: [0; 3],
            data: bytes.to_vec(),
        },
        band,
    );
    if let Ok(ClientMessage::Presence(r)) = ClientMessage::decode(bytes, MAX) {
        let _ = r.check();
    }
    if let Ok(ServerMessage::CatchUp(c)) = ServerMessage::decode(bytes, MAX) {
        for w in &c.bricks {
            let _ = decode_brick(w, band);
        }
    }
    if let Ok(ServerMessage::Patch { samples, .. }) = ServerMessage::decode(bytes, MAX) {
        for w in &samples {
            let _ = decode_samples(w);
        }
    }
    let _ = decode_samples(&WireSamples {
        key: [0; 3],
        min: [0; 3],
        max: [bytes.first().copied().unwrap_or(0) % 40, 3, 2],
        data: bytes.to_vec(),
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary bytes never panic a decoder.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        decode_all(&bytes, 2.0);
    }

    /// Valid messages with bytes flipped, cut or inserted never panic a decoder (random
    /// bytes rarely get past the first MessagePack marker; these do).
    #[test]
    fn damaged_messages_never_panic(
        which in 0usize..64,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
    ) {
        let all = all_encoded();
        let mut bytes = all[which % all.len()].clone();
        for (at, v, kind) in edits {
            if bytes.is_empty() {
                break;
            }
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = v,
                1 => bytes.truncate(i),
                _ => bytes.insert(i, v),
            }
        }
        decode_all(&bytes, 2.0);
    }
}

/// A "server" that answers the hello with a text message, or closes without a reason: the
/// client's error says so (found by an adversarial trial: both read "the server closed the
/// connection: " with nothing after it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_message_or_a_bare_close_is_named() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    for text in [true, false] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", listener.local_addr().unwrap());
        let fake = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut ws = tokio_tungstenite::accept_async(tcp).await.unwrap();
            let _hello = ws.next().await;
            if text {
                ws.send(Message::Text("hello there".into())).await.unwrap();
            } else {
                ws.close(None).await.unwrap();
            }
            // Hold the socket until the client is done with it.
            while let Some(Ok(_)) = ws.next().await {}
        });
        let cfg = loam_client::ClientConfig::new(
            url,
            crate::util::viewer(0.0, 0.0, 0.0, 8.0),
            crate::util::factory(),
        );
        let e = match loam_client::Client::connect(cfg).await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("joined a fake server"),
        };
        if text {
            assert!(e.contains("text message"), "{e}");
        } else {
            assert!(e.ends_with("no reason given"), "{e}");
        }
        fake.abort();
    }
}
