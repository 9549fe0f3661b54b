//! The op log's record codec: round trips of every kind, the JSON spellings, and bad input
//! (newer or zero versions, unknown kinds, bad fields, truncated or random bytes) answered
//! with an error, never a panic.

use std::sync::{Arc, OnceLock};

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::util::*;
use loam_field::{
    CsgMode, DecodeError, EditOp, Falloff, Field, FieldSettings, LOG_VERSION, LogEntry,
};

/// One op of every kind, with fields away from their defaults, all valid under a
/// `max_edit_radius` of 4 m and reaching the flat ground at y = 0.
fn every_kind() -> Vec<EditOp> {
    vec![
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.5, 0.25, -1.0],
            radius: 2.5,
            material: 0,
            blend: 0.0,
        },
        EditOp::Cuboid {
            mode: CsgMode::Union,
            center: [1.0, 1.5, 2.0],
            half_extents: [2.0, 1.0, 1.5],
            rotation: [0.2, 0.3, -0.1, 0.9],
            material: 7,
            blend: 0.75,
        },
        EditOp::Capsule {
            mode: CsgMode::Intersect,
            a: [-2.0, 0.0, 0.0],
            b: [2.0, 1.0, 0.5],
            radius: 1.5,
            material: 3,
            blend: 0.5,
        },
        EditOp::Cylinder {
            mode: CsgMode::Subtract,
            a: [0.0, -1.0, 0.0],
            b: [0.5, 2.0, 0.25],
            radius: 1.25,
            material: 0,
            blend: 0.25,
        },
        EditOp::Torus {
            mode: CsgMode::Union,
            center: [0.0, 0.5, 0.0],
            axis: [0.0, 0.6, 0.8],
            major_radius: 2.5,
            minor_radius: 0.75,
            material: 9,
            blend: 0.0,
        },
        EditOp::Raise {
            center: [0.0, 0.0, 0.0],
            radius: 3.0,
            strength: 0.5,
            falloff: Falloff::Sharp { n: 3.0 },
        },
        EditOp::Lower {
            center: [1.0, 0.0, -1.0],
            radius: 2.0,
            strength: 0.25,
            falloff: Falloff::Linear,
        },
        EditOp::Smooth {
            center: [0.0, 0.0, 1.0],
            radius: 2.5,
            strength: 0.8,
            falloff: Falloff::InverseSquare,
        },
        EditOp::Flatten {
            center: [0.0, 0.0, 0.0],
            radius: 3.0,
            strength: 0.6,
            falloff: Falloff::Sphere,
            plane_point: [0.0, 0.5, 0.0],
            plane_normal: [0.1, 1.0, 0.0],
        },
        EditOp::Noise {
            center: [-1.0, 0.0, 0.0],
            radius: 2.0,
            strength: 0.5,
            falloff: Falloff::Constant,
            seed: 42,
            wavelength: 1.5,
        },
        EditOp::Paint {
            center: [0.0, 0.0, 0.0],
            radius: 2.0,
            material: 12,
            falloff: Falloff::Smooth,
            threshold: 0.25,
        },
        EditOp::Undo { stroke: 17 },
        EditOp::Redo { stroke: u64::MAX },
    ]
}

/// MessagePack (named fields, as [`LogEntry::encode`] writes) of any serde value.
fn mp(v: &impl serde::Serialize) -> Vec<u8> {
    rmp_serde::to_vec_named(v).unwrap()
}

/// A record `{v, seq: 5, stroke: 2, op}` as JSON, to be written as MessagePack.
fn record(v: Value, op: Value) -> Value {
    json!({ "v": v, "seq": 5, "stroke": 2, "op": op })
}

fn raise_json() -> Value {
    json!({ "kind": "raise", "center": [1, 2, 3], "radius": 4.0, "strength": 0.5 })
}

#[test]
fn every_kind_round_trips() {
    let ops = every_kind();
    let kinds: Vec<&str> = ops.iter().map(EditOp::kind).collect();
    assert_eq!(kinds, EditOp::KINDS, "one sample per kind, in order");
    for (i, op) in ops.into_iter().enumerate() {
        assert_eq!(op.validate(64.0), Ok(()), "{op:?}");
        let e = LogEntry::new(i as u64 + 1, 1000 + i as u64, op);
        assert_eq!(e.v, LOG_VERSION);
        let bytes = e.encode();
        // A map of the four named fields (fixmap, 4 entries).
        assert_eq!(bytes[0], 0x84, "{:?}", e.op.kind());
        assert_eq!(LogEntry::decode(&bytes), Ok(e.clone()));
        // The encoding is deterministic.
        assert_eq!(LogEntry::decode(&bytes).unwrap().encode(), bytes);
    }
}

/// A hand-written JSON object per kind, and the op it must read as. Some leave defaulted
/// fields out.
fn json_spellings() -> Vec<(Value, EditOp)> {
    vec![
        (
            json!({ "kind": "sphere", "mode": "dig", "center": [1, 2, 3], "radius": 2 }),
            EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [1.0, 2.0, 3.0],
                radius: 2.0,
                material: 0,
                blend: 0.0,
            },
        ),
        (
            json!({ "kind": "box", "mode": "build", "center": [0, 0, 0],
                    "half_extents": [1, 2, 3], "rotation": [0, 0, 0.6, 0.8],
                    "material": 4, "blend": 0.5 }),
            EditOp::Cuboid {
                mode: CsgMode::Union,
                center: [0.0; 3],
                half_extents: [1.0, 2.0, 3.0],
                rotation: [0.0, 0.0, 0.6, 0.8],
                material: 4,
                blend: 0.5,
            },
        ),
        (
            json!({ "kind": "box", "mode": "intersect", "center": [0, 0, 0],
                    "half_extents": [1, 1, 1] }),
            EditOp::Cuboid {
                mode: CsgMode::Intersect,
                center: [0.0; 3],
                half_extents: [1.0; 3],
                rotation: [0.0, 0.0, 0.0, 1.0],
                material: 0,
                blend: 0.0,
            },
        ),
        (
            json!({ "kind": "capsule", "mode": "build", "a": [0, 0, 0], "b": [0, 5, 0],
                    "radius": 1.5, "material": 2 }),
            EditOp::Capsule {
                mode: CsgMode::Union,
                a: [0.0; 3],
                b: [0.0, 5.0, 0.0],
                radius: 1.5,
                material: 2,
                blend: 0.0,
            },
        ),
        (
            json!({ "kind": "cylinder", "mode": "dig", "a": [0, 0, 0], "b": [1, 0, 0],
                    "radius": 3, "blend": 1 }),
            EditOp::Cylinder {
                mode: CsgMode::Subtract,
                a: [0.0; 3],
                b: [1.0, 0.0, 0.0],
                radius: 3.0,
                material: 0,
                blend: 1.0,
            },
        ),
        (
            json!({ "kind": "torus", "mode": "build", "center": [0, 1, 0],
                    "major_radius": 4, "minor_radius": 1 }),
            EditOp::Torus {
                mode: CsgMode::Union,
                center: [0.0, 1.0, 0.0],
                axis: [0.0, 1.0, 0.0],
                major_radius: 4.0,
                minor_radius: 1.0,
                material: 0,
                blend: 0.0,
            },
        ),
        (
            raise_json(),
            EditOp::Raise {
                center: [1.0, 2.0, 3.0],
                radius: 4.0,
                strength: 0.5,
                falloff: Falloff::Smooth,
            },
        ),
        (
            json!({ "kind": "lower", "center": [0, 0, 0], "radius": 4, "strength": 1,
                    "falloff": { "sharp": { "n": 3 } } }),
            EditOp::Lower {
                center: [0.0; 3],
                radius: 4.0,
                strength: 1.0,
                falloff: Falloff::Sharp { n: 3.0 },
            },
        ),
        (
            json!({ "kind": "smooth", "center": [0, 0, 0], "radius": 4, "strength": 0.5,
                    "falloff": "inverse_square" }),
            EditOp::Smooth {
                center: [0.0; 3],
                radius: 4.0,
                strength: 0.5,
                falloff: Falloff::InverseSquare,
            },
        ),
        (
            json!({ "kind": "flatten", "center": [0, 0, 0], "radius": 4, "strength": 0.5,
                    "plane_point": [0, 1, 0], "plane_normal": [0, 1, 0] }),
            EditOp::Flatten {
                center: [0.0; 3],
                radius: 4.0,
                strength: 0.5,
                falloff: Falloff::Smooth,
                plane_point: [0.0, 1.0, 0.0],
                plane_normal: [0.0, 1.0, 0.0],
            },
        ),
        (
            json!({ "kind": "noise", "center": [0, 0, 0], "radius": 4, "strength": 0.5 }),
            EditOp::Noise {
                center: [0.0; 3],
                radius: 4.0,
                strength: 0.5,
                falloff: Falloff::Smooth,
                seed: 0,
                wavelength: 4.0,
            },
        ),
        (
            json!({ "kind": "noise", "center": [0, 0, 0], "radius": 4, "strength": 0.5,
                    "falloff": "linear", "seed": 9, "wavelength": 2.5 }),
            EditOp::Noise {
                center: [0.0; 3],
                radius: 4.0,
                strength: 0.5,
                falloff: Falloff::Linear,
                seed: 9,
                wavelength: 2.5,
            },
        ),
        (
            json!({ "kind": "paint", "center": [0, 0, 0], "radius": 4, "material": 5 }),
            EditOp::Paint {
                center: [0.0; 3],
                radius: 4.0,
                material: 5,
                falloff: Falloff::Smooth,
                threshold: 0.5,
            },
        ),
        (
            json!({ "kind": "paint", "center": [0, 0, 0], "radius": 4, "material": 5,
                    "falloff": "constant", "threshold": 0.9 }),
            EditOp::Paint {
                center: [0.0; 3],
                radius: 4.0,
                material: 5,
                falloff: Falloff::Constant,
                threshold: 0.9,
            },
        ),
        (
            json!({ "kind": "undo", "stroke": 3 }),
            EditOp::Undo { stroke: 3 },
        ),
        (
            json!({ "kind": "redo", "stroke": 3 }),
            EditOp::Redo { stroke: 3 },
        ),
    ]
}

#[test]
fn json_spellings_of_every_kind() {
    let cases = json_spellings();
    for kind in EditOp::KINDS {
        assert!(
            cases.iter().any(|(j, _)| j["kind"] == kind),
            "no JSON case for {kind}"
        );
    }
    for (j, expected) in cases {
        let text = j.to_string();
        let op: EditOp = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(op, expected, "{text}");
        assert_eq!(op.kind(), j["kind"].as_str().unwrap(), "{text}");
        // JSON and MessagePack share one shape: the same object as a record decodes alike.
        let bytes = mp(&record(json!(1), j.clone()));
        assert_eq!(
            LogEntry::decode(&bytes).map(|e| e.op),
            Ok(expected.clone()),
            "{text}"
        );
        // And what serde writes reads back.
        let written = serde_json::to_string(&op).unwrap();
        assert_eq!(serde_json::from_str::<EditOp>(&written).unwrap(), op);
    }
}

#[test]
fn json_refuses_unknown_fields_and_kinds() {
    for (j, _) in json_spellings() {
        let mut extra = j.clone();
        extra["colour"] = json!("red");
        let text = extra.to_string();
        assert!(serde_json::from_str::<EditOp>(&text).is_err(), "{text}");
        // The same in a record: Invalid, not a panic.
        let bytes = mp(&record(json!(1), extra));
        assert!(
            matches!(LogEntry::decode(&bytes), Err(DecodeError::Invalid(_))),
            "{text}: {:?}",
            LogEntry::decode(&bytes)
        );
    }
    for text in [
        r#"{"kind": "volcano", "center": [0, 0, 0]}"#,
        r#"{"kind": "Sphere", "mode": "dig", "center": [0, 0, 0], "radius": 1}"#,
        r#"{"kind": "cuboid", "mode": "dig", "center": [0, 0, 0], "half_extents": [1, 1, 1]}"#,
        r#"{"mode": "dig", "center": [0, 0, 0], "radius": 1}"#,
        r#"{"kind": "sphere", "mode": "subtract", "center": [0, 0, 0], "radius": 1}"#,
        r#"{"kind": "raise", "center": [0, 0, 0], "radius": 1, "strength": 1, "falloff": "gaussian"}"#,
        r#"{"kind": "undo"}"#,
        r#"{"kind": "undo", "stroke": -1}"#,
    ] {
        assert!(serde_json::from_str::<EditOp>(text).is_err(), "{text}");
    }
    // An unknown field at the record level.
    let mut r = record(json!(1), raise_json());
    r["extra"] = json!(0);
    assert!(matches!(
        LogEntry::decode(&mp(&r)),
        Err(DecodeError::Invalid(_))
    ));
}

#[test]
fn newer_and_zero_versions_are_refused() {
    let bytes = mp(&record(json!(2), raise_json()));
    assert!(
        matches!(
            LogEntry::decode(&bytes),
            Err(DecodeError::NewerVersion {
                found: 2,
                max: LOG_VERSION
            })
        ),
        "{:?}",
        LogEntry::decode(&bytes)
    );
    // The version is checked before the op: a newer record may hold kinds we don't know.
    let bytes = mp(&record(
        json!(2),
        json!({ "kind": "volcano", "lava": true }),
    ));
    assert!(matches!(
        LogEntry::decode(&bytes),
        Err(DecodeError::NewerVersion { found: 2, .. })
    ));
    // Versions beyond u32 are still reported as found.
    for v in [1u64 << 32, u64::MAX] {
        let bytes = mp(&record(json!(v), raise_json()));
        assert_eq!(
            LogEntry::decode(&bytes),
            Err(DecodeError::NewerVersion {
                found: v,
                max: LOG_VERSION
            })
        );
    }
    // Version 0 was never written: an error (which one is the codec's choice).
    let bytes = mp(&record(json!(0), raise_json()));
    assert!(LogEntry::decode(&bytes).is_err());
    // A version that is not an unsigned integer.
    for v in [json!(-1), json!(1.0), json!("1"), json!(null)] {
        let bytes = mp(&record(v.clone(), raise_json()));
        assert!(LogEntry::decode(&bytes).is_err(), "v = {v}");
    }
}

#[test]
fn unknown_kind_is_named() {
    let bytes = mp(&record(
        json!(1),
        json!({ "kind": "volcano", "center": [0, 0, 0], "radius": 3 }),
    ));
    assert_eq!(
        LogEntry::decode(&bytes),
        Err(DecodeError::UnknownKind("volcano".into()))
    );
    // Kinds are case sensitive, and the Rust name of a variant is not its kind.
    for kind in ["Sphere", "cuboid", ""] {
        let bytes = mp(&record(json!(1), json!({ "kind": kind })));
        assert_eq!(
            LogEntry::decode(&bytes),
            Err(DecodeError::UnknownKind(kind.into()))
        );
    }
}

#[test]
fn bad_fields_of_a_known_kind_are_invalid() {
    let cases = [
        // Missing fields.
        json!({ "kind": "raise", "center": [0, 0, 0], "radius": 4 }),
        json!({ "kind": "sphere", "center": [0, 0, 0], "radius": 4 }),
        json!({ "kind": "undo" }),
        json!({ "kind": "flatten", "center": [0, 0, 0], "radius": 4, "strength": 0.5,
                "plane_point": [0, 1, 0] }),
        // Wrong types.
        json!({ "kind": "raise", "center": [0, 0, 0], "radius": "4", "strength": 0.5 }),
        json!({ "kind": "raise", "center": [0, 0], "radius": 4, "strength": 0.5 }),
        json!({ "kind": "raise", "center": [0, 0, 0, 0], "radius": 4, "strength": 0.5 }),
        json!({ "kind": "raise", "center": 0, "radius": 4, "strength": 0.5 }),
        json!({ "kind": "sphere", "mode": "carve", "center": [0, 0, 0], "radius": 4 }),
        json!({ "kind": "sphere", "mode": "dig", "center": [0, 0, 0], "radius": 4,
                "material": 300 }),
        json!({ "kind": "sphere", "mode": "dig", "center": [0, 0, 0], "radius": 4,
                "material": -1 }),
        json!({ "kind": "undo", "stroke": -1 }),
        json!({ "kind": "undo", "stroke": 1.5 }),
        json!({ "kind": "noise", "center": [0, 0, 0], "radius": 4, "strength": 0.5,
                "seed": 4_294_967_296u64 }),
        json!({ "kind": "lower", "center": [0, 0, 0], "radius": 4, "strength": 1,
                "falloff": { "sharp": {} } }),
        json!({ "kind": "lower", "center": [0, 0, 0], "radius": 4, "strength": 1,
                "falloff": "gaussian" }),
    ];
    for op in cases {
        let bytes = mp(&record(json!(1), op.clone()));
        let got = LogEntry::decode(&bytes);
        assert!(matches!(got, Err(DecodeError::Invalid(_))), "{op}: {got:?}");
    }
    // Bad fields of the record itself.
    for r in [
        json!({ "v": 1, "seq": 5, "op": raise_json() }),
        json!({ "v": 1, "seq": "5", "stroke": 2, "op": raise_json() }),
        json!({ "v": 1, "seq": 5, "stroke": -2, "op": raise_json() }),
    ] {
        let got = LogEntry::decode(&mp(&r));
        assert!(matches!(got, Err(DecodeError::Invalid(_))), "{r}: {got:?}");
    }
}

#[test]
fn malformed_bytes_are_errors() {
    let cases: Vec<Vec<u8>> = vec![
        vec![],
        b"not msgpack at all".to_vec(),
        br#"{"v": 1, "seq": 5, "stroke": 2, "op": {"kind": "undo", "stroke": 1}}"#.to_vec(),
        vec![0xc1], // never used
        vec![0xff; 16],
        vec![0x80],                   // an empty map: no `v`
        vec![0x93, 0x01, 0x02, 0x03], // an array
        mp(&json!(1)),
        mp(&json!("raise")),
        mp(&json!({ "v": 1 })),
        mp(&json!({ "v": 1, "op": "raise" })),
        mp(&json!({ "v": 1, "op": { "kind": 5 } })),
        mp(&json!({ "v": 1, "op": { "center": [0, 0, 0] } })),
        // A map claiming 2³² − 1 entries, and a string claiming 4 GiB.
        vec![0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, b'v', 0x01],
        vec![0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, b'v'],
    ];
    for bytes in cases {
        assert!(LogEntry::decode(&bytes).is_err(), "{bytes:02x?}");
    }
}

#[test]
fn every_truncation_is_an_error() {
    for (i, op) in every_kind().into_iter().enumerate() {
        let bytes = LogEntry::new(i as u64 + 1, 1, op).encode();
        for n in 0..bytes.len() {
            let got = LogEntry::decode(&bytes[..n]);
            assert!(
                got.is_err(),
                "prefix of {n} of {} bytes: {got:?}",
                bytes.len()
            );
        }
        // Trailing bytes after a whole record (garbage, or a second record) are refused.
        let mut longer = bytes.clone();
        longer.extend_from_slice(&[0xc1, 0x00]);
        assert!(matches!(
            LogEntry::decode(&longer),
            Err(DecodeError::Malformed(_))
        ));
        let mut two = bytes.clone();
        two.extend_from_slice(&bytes);
        assert!(LogEntry::decode(&two).is_err());
    }
}

/// Largest edit radius of the property tests' field, metres: keeps every accepted op small.
const TINY_RADIUS: f64 = 4.0;

/// A flat field at y = 0 (voxel 1 m) that accepts only small ops.
fn tiny_field() -> Field {
    static FIELD: OnceLock<Field> = OnceLock::new();
    FIELD
        .get_or_init(|| {
            Field::new(
                FieldSettings {
                    voxel_size: 1.0,
                    max_edit_radius: TINY_RADIUS,
                    max_edit_samples: 1 << 16,
                    ..Default::default()
                },
                Arc::new(flat_generator(0.0)),
            )
            .unwrap()
        })
        .clone()
}

/// What must hold for any decoded record: it re-encodes to bytes that decode to the same
/// record (compared by encoding, so NaNs count as equal to themselves), and applying its op
/// either succeeds or fails with the field unchanged.
fn check_decoded(e: &LogEntry) -> Result<(), TestCaseError> {
    let bytes = e.encode();
    let again = LogEntry::decode(&bytes);
    prop_assert!(again.is_ok(), "{e:?} re-decodes: {again:?}");
    let again = again.unwrap();
    prop_assert_eq!(again.encode(), bytes.clone(), "{:?}", e);
    prop_assert_eq!(format!("{again:?}"), format!("{e:?}"));

    let mut field = tiny_field();
    let valid = e.op.validate(TINY_RADIUS).is_ok();
    let before = field.hash();
    match field.apply(&e.op) {
        Ok(_) => prop_assert!(valid, "applied an op that fails validate: {:?}", e.op),
        Err(err) => prop_assert_eq!(
            field.hash(),
            before,
            "{:?} changed the field: {}",
            e.op,
            err
        ),
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(prop::sample::Index, u8),
    Set(prop::sample::Index, u8),
    Insert(prop::sample::Index, u8),
    Delete(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<prop::sample::Index>(), 0..8u8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Set(i, v)),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, v)| Mutation::Insert(i, v)),
        any::<prop::sample::Index>().prop_map(Mutation::Delete),
    ]
}

fn mutate(bytes: &mut Vec<u8>, m: &Mutation) {
    let n = bytes.len();
    match *m {
        Mutation::Flip(ref i, bit) if n > 0 => bytes[i.index(n)] ^= 1 << bit,
        Mutation::Set(ref i, v) if n > 0 => bytes[i.index(n)] = v,
        Mutation::Insert(ref i, v) => bytes.insert(i.index(n + 1), v),
        Mutation::Delete(ref i) if n > 0 => {
            bytes.remove(i.index(n));
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn decode_of_random_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Ok(e) = LogEntry::decode(&bytes) {
            check_decoded(&e)?;
        }
    }
}

proptest! {
    // Most mutations break the MessagePack; more cases give more records that still decode.
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn decode_of_mutated_records_never_panics(
        which in 0..EditOp::KINDS.len(),
        seq in any::<u64>(),
        mutations in prop::collection::vec(mutation(), 1..3),
    ) {
        let mut bytes = LogEntry::new(seq, 1, every_kind()[which].clone()).encode();
        for m in &mutations {
            mutate(&mut bytes, m);
        }
        if let Ok(e) = LogEntry::decode(&bytes) {
            check_decoded(&e)?;
        }
    }
}
