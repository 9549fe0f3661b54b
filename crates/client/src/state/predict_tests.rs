//! An editor's client (it looks at its prediction every frame) plans each own op once: the
//! plans it commits on the prediction are committed on the confirmed field as the server
//! confirms the ops in that order.

use loam_field::{CsgMode, EditOp, LogEntry};

use super::test_state::{generator, state};
use crate::protocol::{OpRecord, ServerMessage};

#[test]
fn plans_made_on_the_prediction_are_written_on_confirmation() {
    let g = generator();
    let mut s = state(&g);
    let h = g.surface_height(16.0, 16.0);
    let ops: Vec<EditOp> = (0..4)
        .map(|i| EditOp::Sphere {
            mode: if i % 2 == 0 {
                CsgMode::Subtract
            } else {
                CsgMode::Union
            },
            center: [10.0 + 3.0 * f64::from(i), h, 16.0],
            radius: 2.5,
            material: 2,
            blend: 0.0,
        })
        .collect();
    let mut want = s.confirmed.clone();
    for op in &ops {
        want.apply(op).unwrap();
    }
    let mut ids = Vec::new();
    for op in &ops {
        s.predicted();
        ids.push(s.predict(1, op.clone()).unwrap().0);
    }
    assert_eq!(s.predicted().hash(), want.hash());
    assert!(
        s.pending.iter().all(|p| p.planned.is_some()),
        "every op planned"
    );
    // The server confirms them in the editor's order: each confirmation writes the plan.
    for (i, (op, id)) in ops.iter().zip(&ids).enumerate() {
        let seq = 6 + i as u64;
        if let Some(plan) = s.pending.front().and_then(|p| p.planned.clone()) {
            let mut probe = s.confirmed.clone();
            probe
                .commit_edit(&plan)
                .expect("the plan fits the confirmed field");
        }
        let entry = LogEntry::new(seq, 1, op.clone()).encode();
        s.handle(ServerMessage::Op(OpRecord {
            seq,
            author: s.id,
            op_id: *id,
            entry,
        }))
        .unwrap();
    }
    assert!(s.pending.is_empty());
    assert_eq!(s.confirmed.hash(), want.hash());
}
