//! What an op costs: the samples it covers (`edit_samples`, a server's edit budget).

use loam_field::{CsgMode, EditError, EditOp, FieldSettings};

use crate::util::*;

/// `edit_samples` counts an op's box, band included (2 voxels), and a brush's one-sample
/// halo: exact counts at 1 m voxels; an undo counts 0; a box outside the sample range is
/// the plan's error; what an op writes lies within what it counts.
#[test]
fn edit_samples_counts_the_box_an_op_reads() {
    use loam_field::edit_samples;
    let s = FieldSettings::default();
    // r 1 + band 2: −3..=3 on each axis.
    assert_eq!(edit_samples(&s, &dig([0.0; 3], 1.0)), Ok(7 * 7 * 7));
    assert_eq!(
        edit_samples(&s, &build([0.0; 3], 64.0, 1)),
        Ok(133 * 133 * 133)
    );
    // Off the grid: ceil(−2.5) = −2 ..= floor(3.5) = 3.
    assert_eq!(edit_samples(&s, &dig([0.5; 3], 1.0)), Ok(6 * 6 * 6));
    let raise = EditOp::Raise {
        center: [0.0; 3],
        radius: 8.0,
        strength: 0.5,
        falloff: loam_field::Falloff::Smooth,
    };
    // r 8 + band 2 = −10..=10, and the halo: 23 a side.
    assert_eq!(edit_samples(&s, &raise), Ok(23 * 23 * 23));
    assert_eq!(edit_samples(&s, &EditOp::Undo { stroke: 3 }), Ok(0));
    assert!(matches!(
        edit_samples(&s, &dig([3e9, 0.0, 0.0], 1.0)),
        Err(EditError::OutOfRange { .. })
    ));
    // Not validated before: bad numbers and sizes are the validation's errors, no panic
    // (a box with a zero rotation, a ball whose box overflows the sample count).
    let zero_turn = EditOp::Cuboid {
        mode: CsgMode::Union,
        center: [0.0; 3],
        half_extents: [1.0; 3],
        rotation: [0.0; 4],
        material: 0,
        blend: 0.0,
    };
    assert!(edit_samples(&s, &zero_turn).is_err());
    assert!(edit_samples(&s, &dig([0.0; 3], 1e7)).is_err());
    assert!(edit_samples(&s, &dig([0.0, f64::NAN, 0.0], 1.0)).is_err());
    // What a build writes lies within what it counts.
    let mut f = flat_field(10.0);
    let op = build([4.0, 10.0, 4.0], 3.0, 1);
    let written = f.apply(&op).unwrap().changed.unwrap().volume();
    assert!(
        written > 0 && written <= edit_samples(&s, &op).unwrap(),
        "{written}"
    );
}
