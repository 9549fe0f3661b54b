//! Fuzzes the op log's record decoder, [`LogEntry::decode`], with arbitrary bytes.
//!
//! For every input: decoding returns, never panics. For every record it accepts:
//! - encoding it and decoding that gives the same record (compared by encoding, so a NaN
//!   counts as equal to itself);
//! - `validate` and `Field::apply` on a small flat field do not panic; `apply` succeeds only
//!   for an op that validates, and leaves the field hash unchanged when it fails;
//! - applied through a `History` as a stroke and undone, the field hash is the one before.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use loam_field::{
    CaveSettings, EditOp, Field, FieldSettings, Generator, History, LogEntry, NoiseLayer,
    NoiseTerrainSettings,
};

/// Largest edit radius of the fuzzed field, metres: keeps every accepted op cheap.
const MAX_RADIUS: f64 = 4.0;

const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Flat ground at y = 0, voxel 1 m, no caves, accepting only small ops.
fn field() -> Field {
    static FIELD: OnceLock<Field> = OnceLock::new();
    FIELD
        .get_or_init(|| {
            let terrain = NoiseTerrainSettings {
                base_height: 0.0,
                hills: OFF,
                ridges: OFF,
                detail: OFF,
                ..Default::default()
            };
            let caves = CaveSettings {
                enabled: false,
                ..Default::default()
            };
            let generator = Generator::noise(&terrain, &caves).expect("valid terrain");
            let settings = FieldSettings {
                voxel_size: 1.0,
                max_edit_radius: MAX_RADIUS,
                max_edit_samples: 1 << 16,
                ..Default::default()
            };
            Field::new(settings, Arc::new(generator)).expect("valid settings")
        })
        .clone()
}

fuzz_target!(|data: &[u8]| {
    let Ok(entry) = LogEntry::decode(data) else {
        return;
    };
    let bytes = entry.encode();
    let again = LogEntry::decode(&bytes).expect("a decoded record re-decodes");
    assert_eq!(again.encode(), bytes, "round trip changed {entry:?}");
    assert_eq!(format!("{again:?}"), format!("{entry:?}"));

    let valid = entry.op.validate(MAX_RADIUS).is_ok();
    let mut f = field();
    let before = f.hash();
    match f.apply(&entry.op) {
        Ok(_) => assert!(valid, "applied an op that fails validate: {:?}", entry.op),
        Err(e) => assert_eq!(
            f.hash(),
            before,
            "{:?} failed ({e}) but changed the field",
            entry.op
        ),
    }

    if valid && !matches!(entry.op, EditOp::Undo { .. } | EditOp::Redo { .. }) {
        let mut f = field();
        let mut history = History::new(usize::MAX);
        if history.apply(&mut f, 1, &entry.op).is_ok() {
            history
                .apply(&mut f, 2, &EditOp::Undo { stroke: 1 })
                .expect("a stroke just applied can be undone");
            assert_eq!(
                f.hash(),
                before,
                "undo of {:?} left the field changed",
                entry.op
            );
        }
    }
});
