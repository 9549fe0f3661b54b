//! A reconnect's welcome says which own ops the server took: those leave the pending list
//! and are reported (`Resumed`), ascending, terrain and block ops alike; the rest are sent
//! again in op id order.

use loam_blocks::{BlockOp, BlockPos, BlockSize};
use loam_field::{CsgMode, EditOp};

use super::ClientEvent;
use super::test_state::{generator, state, welcome};
use crate::protocol::Welcome;

fn dig(x: f64) -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, 0.0, 16.0],
        radius: 1.5,
        material: 0,
        blend: 0.0,
    }
}

#[test]
fn ops_the_server_took_are_reported_and_the_rest_sent_again() {
    let g = generator();
    let mut s = state(&g);
    let a = s.predict(1, dig(4.0)).unwrap().0;
    let at = BlockPos::new(BlockSize::Full, [3, 40, 3]).unwrap();
    let (b, _) = s.block_op(&BlockOp::Break { at });
    let c = s.predict(2, dig(8.0)).unwrap().0;
    let (d, d_msg) = s.block_op(&BlockOp::Break { at });
    let (e, e_msg) = (
        s.predict(3, dig(12.0)).unwrap().0,
        s.pending[2].message.clone(),
    );
    assert!(a < b && b < c && c < d && d < e);
    s.events.clear();
    let welcome = |last_op_id| Welcome {
        last_op_id,
        resumed: true,
        ..welcome()
    };
    let again = s.rewelcome(&welcome(Some(c)));
    assert_eq!(
        s.events.drain(..).collect::<Vec<_>>(),
        [ClientEvent::Resumed {
            op_ids: vec![a, b, c]
        }]
    );
    assert_eq!(again, [d_msg, e_msg]);
    assert_eq!(s.pending.len() + s.replica.pending.len(), 2);
    // Nothing taken since: no event, the same two sent again.
    assert_eq!(s.rewelcome(&welcome(Some(c))).len(), 2);
    assert!(s.events.is_empty());
}
