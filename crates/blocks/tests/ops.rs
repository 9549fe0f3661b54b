//! Block ops: their serialised shape, applying them, the revision, and bad input.

use loam_blocks::{
    BlockError, BlockOp, BlockPos, BlockSize, ChiselShape, Edge, Face, MaterialId, MaterialTable,
    PieceId, Slope,
};
use loam_physics::PhysicsSettings;

use crate::util::*;

#[test]
fn ops_have_one_json_shape_and_refuse_unknown_fields() {
    let op = BlockOp::Place {
        at: BlockPos::new(BlockSize::Half, [1, -2, 3]).unwrap(),
        material: MaterialTable::BRICK,
        shape: ChiselShape::SHARP.with_round(Edge::between(Face::PosY, Face::PosX).unwrap()),
        paint: Some([10, 20, 30]),
    };
    let json = serde_json::to_string(&op).unwrap();
    assert_eq!(
        json,
        r#"{"kind":"place","at":{"size":"half","cell":[1,-2,3]},"material":1,"shape":{"rounded":2048,"slope":null},"paint":[10,20,30]}"#
    );
    assert_eq!(serde_json::from_str::<BlockOp>(&json).unwrap(), op);
    // Defaults: a sharp, unpainted block.
    let short: BlockOp = serde_json::from_str(
        r#"{"kind":"place","at":{"size":"full","cell":[0,0,0]},"material":0}"#,
    )
    .unwrap();
    assert!(matches!(short, BlockOp::Place { shape, paint: None, .. } if shape.is_sharp()));
    for bad in [
        r#"{"kind":"place","at":{"size":"full","cell":[0,0,0]},"material":0,"colour":1}"#,
        r#"{"kind":"melt","at":{"size":"full","cell":[0,0,0]}}"#,
        r#"{"kind":"break","at":{"size":"huge","cell":[0,0,0]}}"#,
        r#"{"kind":"break","at":{"size":"full","cell":[0,0]}}"#,
    ] {
        assert!(serde_json::from_str::<BlockOp>(bad).is_err(), "{bad}");
    }
    let off = BlockOp::BreakOff {
        piece: PieceId(3),
        block: loam_blocks::BlockId(9),
    };
    let bytes = rmp_serde::to_vec_named(&off).unwrap();
    assert_eq!(rmp_serde::from_slice::<BlockOp>(&bytes).unwrap(), off);
    assert_eq!(off.kind(), "break_off");
}

#[test]
fn a_chisel_cut_that_changes_nothing_keeps_the_revision() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let at = full(0, 0, 0);
    let apply = |w: &mut loam_blocks::BlockWorld, p: &mut loam_physics::PhysicsWorld, op| {
        w.apply(p, &flat, &op).unwrap()
    };
    apply(
        &mut w,
        &mut physics,
        BlockOp::Place {
            at,
            material: MaterialTable::STONE,
            shape: ChiselShape::SHARP,
            paint: None,
        },
    );
    let r0 = w.store().revision();
    let edge = Edge::between(Face::PosY, Face::NegZ).unwrap();
    let round = ChiselShape::SHARP.with_round(edge);
    let c = apply(&mut w, &mut physics, BlockOp::Chisel { at, shape: round });
    assert_eq!(c.chiselled, vec![at]);
    assert_eq!(w.store().revision(), r0 + 1);
    // Rounding the round edge again: nothing changes.
    let c = apply(&mut w, &mut physics, BlockOp::Chisel { at, shape: round });
    assert!(c.is_empty());
    assert_eq!(w.store().revision(), r0 + 1);
    // A slope, then sharpening everything back.
    let sloped = round.with_slope(Some(Slope {
        face: Face::PosY,
        toward: Face::PosX,
        depth: 2,
    }));
    apply(&mut w, &mut physics, BlockOp::Chisel { at, shape: sloped });
    assert_eq!(w.store().get(at).unwrap().shape, sloped);
    apply(
        &mut w,
        &mut physics,
        BlockOp::Chisel {
            at,
            shape: ChiselShape::SHARP,
        },
    );
    assert_eq!(w.store().revision(), r0 + 3);
    assert!(w.store().get(at).unwrap().shape.is_sharp());
    // A bad shape is refused and changes nothing.
    let bad = ChiselShape {
        rounded: 0xffff,
        slope: None,
    };
    assert!(matches!(
        w.apply(&mut physics, &flat, &BlockOp::Chisel { at, shape: bad }),
        Err(BlockError::BadShape { .. })
    ));
    assert_eq!(w.store().revision(), r0 + 3);
}

#[test]
fn a_chiselled_piece_falls_with_its_chiselled_mass() {
    // A full wedge weighs half a cube: the piece's body has the hull's mass.
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let wedge = ChiselShape::SHARP.with_slope(Some(Slope {
        face: Face::PosY,
        toward: Face::PosX,
        depth: 4,
    }));
    let mut spec = stone();
    spec.shape = wedge;
    let c = w.place(&mut physics, &flat, full(0, 3, 0), spec).unwrap();
    let body = w.piece_body(c.new_pieces[0]).unwrap();
    assert!((physics.body_mass(body).unwrap() - 1200.0).abs() < 1.0);
    settle(&mut w, &mut physics, 600);
}

#[test]
fn bad_input_changes_nothing() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    build(&mut w, &mut physics, &[full(0, 0, 0)], stone());
    let before = w.save();
    let rev = w.store().revision();
    // Overlap, unknown material, buried, no block, no piece, bad rays.
    let quarter = BlockPos::new(BlockSize::Quarter, [1, 1, 1]).unwrap();
    assert!(matches!(
        w.place(&mut physics, &flat, quarter, stone()),
        Err(BlockError::Overlaps { .. })
    ));
    assert!(matches!(
        w.place(&mut physics, &flat, full(3, 0, 0), spec(MaterialId(99))),
        Err(BlockError::UnknownMaterial(_))
    ));
    assert!(matches!(
        w.place(&mut physics, &flat, full(3, -1, 0), stone()),
        Err(BlockError::InsideGround { .. })
    ));
    assert!(matches!(
        w.break_block(&mut physics, full(5, 5, 5)),
        Err(BlockError::NoBlock(_))
    ));
    assert!(matches!(
        w.break_off(&mut physics, PieceId(7), loam_blocks::BlockId(0)),
        Err(BlockError::NoPiece(_))
    ));
    assert!(
        w.raycast([f64::NAN, 0.0, 0.0], [1.0, 0.0, 0.0], 10.0)
            .is_err()
    );
    assert!(w.raycast([0.0; 3], [0.0; 3], 10.0).is_err());
    assert!(w.raycast([0.0; 3], [1.0, 0.0, 0.0], 1e9).is_err());
    assert!(BlockPos::containing(BlockSize::Full, [f64::INFINITY, 0.0, 0.0]).is_err());
    assert_eq!(w.save(), before);
    assert_eq!(w.store().revision(), rev);
    assert_eq!(physics.fixed_count(), 1);
    // A piece in the way of a placement.
    let c = w
        .place(&mut physics, &flat, full(3, 4, 0), stone())
        .unwrap();
    assert_eq!(c.new_pieces.len(), 1);
    assert!(matches!(
        w.place(&mut physics, &flat, full(3, 4, 0), stone()),
        Err(BlockError::OverlapsPiece { .. })
    ));
}
