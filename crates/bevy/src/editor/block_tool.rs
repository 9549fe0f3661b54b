//! The editor's block and chisel tools. T cycles terrain → blocks → chisel. Aim is the
//! nearest of the field raycast and the block raycast. Blocks: left places a block of the
//! chosen size and material on the face aimed at (if it fits), right breaks the block aimed
//! at (held or off a piece). Chisel: left rounds the edge of the aimed face nearest the
//! crosshair, right sharpens it back. The wheel picks the block size.
//!
//! A block aimed at the terrain is put at the grid level of its column where it rests on the
//! ground ([`loam_blocks::seat`]); where no level does (a 1 m block on a hillside, usually),
//! the tool first levels a pad under it with a flatten op ([`loam_blocks::levelling_op`]),
//! unless "level the ground" is off, when the block is placed where aimed and may slide.

use loam_blocks::{
    BlockOp, BlockPos, BlockSize, BlockTarget, Edge, Face, MaterialId, WorldBlockHit,
};

use crate::LoamWorld;
use crate::blocks::LoamBlocks;
use crate::walk::Physics;

/// What the mouse buttons do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolKind {
    /// Terrain brushes.
    #[default]
    Terrain,
    /// Place and break blocks.
    Blocks,
    /// Round and sharpen block edges.
    Chisel,
}

impl ToolKind {
    /// The next kind (T).
    pub fn next(self) -> Self {
        match self {
            ToolKind::Terrain => ToolKind::Blocks,
            ToolKind::Blocks => ToolKind::Chisel,
            ToolKind::Chisel => ToolKind::Terrain,
        }
    }

    /// A short name for the HUD.
    pub fn name(self) -> &'static str {
        match self {
            ToolKind::Terrain => "terrain",
            ToolKind::Blocks => "blocks",
            ToolKind::Chisel => "chisel",
        }
    }
}

/// Block tool settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockTool {
    /// Size of placed blocks.
    pub size: BlockSize,
    /// Material of placed blocks.
    pub material: MaterialId,
    /// Whether a block aimed at terrain with no resting level gets a levelled pad.
    pub level_ground: bool,
}

impl Default for BlockTool {
    fn default() -> Self {
        Self {
            size: BlockSize::Full,
            material: loam_blocks::MaterialTable::STONE,
            level_ground: true,
        }
    }
}

impl BlockTool {
    /// The wheel: one notch up picks the next larger size.
    pub fn scroll(&mut self, notches: i32) {
        let i = BlockSize::ALL
            .iter()
            .position(|s| *s == self.size)
            .unwrap_or(0) as i32;
        let j = (i - notches).clamp(0, BlockSize::ALL.len() as i32 - 1);
        self.size = BlockSize::ALL[j as usize];
    }
}

/// What the block tools aim at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BlockAim {
    /// Terrain, at a point with its normal.
    Terrain {
        /// Hit point, world metres.
        point: [f64; 3],
        /// Unit normal, pointing into the air.
        normal: [f64; 3],
    },
    /// A block.
    Block(WorldBlockHit),
}

/// The nearest of a terrain hit and a block hit (`None` if neither).
pub fn nearest(
    terrain: Option<loam_field::RayHit>,
    block: Option<WorldBlockHit>,
) -> Option<BlockAim> {
    match (terrain, block) {
        (Some(t), Some(b)) if b.distance <= t.distance => Some(BlockAim::Block(b)),
        (Some(t), _) => Some(BlockAim::Terrain {
            point: t.position,
            normal: t.normal,
        }),
        (None, Some(b)) => Some(BlockAim::Block(b)),
        (None, None) => None,
    }
}

/// What a click does: a block op, after a terrain op that levels the ground for it.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockAction {
    /// A flatten op to apply first (a stroke of its own), or none.
    pub levelling: Option<loam_field::EditOp>,
    /// The block op.
    pub op: BlockOp,
}

impl From<BlockOp> for BlockAction {
    fn from(op: BlockOp) -> Self {
        Self {
            levelling: None,
            op,
        }
    }
}

/// The op a click makes: `primary` is the left button; `field` is the live field (the ground
/// a block aimed at the terrain is seated on).
pub fn block_op(
    kind: ToolKind,
    tool: BlockTool,
    aim: BlockAim,
    primary: bool,
    blocks: &LoamBlocks,
    field: &loam_field::Field,
) -> Option<BlockAction> {
    let op = match (kind, aim, primary) {
        (ToolKind::Blocks, BlockAim::Terrain { point, normal }, true) => {
            return place_on_terrain(tool, point, normal, blocks, field);
        }
        (ToolKind::Blocks, BlockAim::Block(hit), true) => {
            let face = hit.face?;
            let n = face.normal().map(f64::from);
            place_at(tool, hit.point, n)
        }
        (ToolKind::Blocks, BlockAim::Block(hit), false) => match hit.target {
            BlockTarget::Held(at) => Some(BlockOp::Break { at }),
            BlockTarget::Piece(piece, block) => Some(BlockOp::BreakOff { piece, block }),
        },
        (ToolKind::Chisel, BlockAim::Block(hit), round) => {
            let BlockTarget::Held(at) = hit.target else {
                return None;
            };
            let face = hit.face?;
            let edge = nearest_edge(at, face, hit.point)?;
            let shape = blocks.world.store().get(at)?.shape;
            let shape = if round {
                shape.with_round(edge)
            } else {
                shape.sharpened(edge)
            };
            Some(BlockOp::Chisel { at, shape })
        }
        _ => None,
    };
    op.map(BlockAction::from)
}

/// A block aimed at the terrain at `point`: seated at the resting level of its column, or on
/// a levelled pad (see the module docs).
fn place_on_terrain(
    tool: BlockTool,
    point: [f64; 3],
    normal: [f64; 3],
    blocks: &LoamBlocks,
    field: &loam_field::Field,
) -> Option<BlockAction> {
    let at = cell_at(tool, point, normal)?;
    let ground = loam_blocks::FieldGround(field);
    let settings = blocks.world.settings();
    if let Some(seated) = loam_blocks::seat(&ground, at, settings) {
        return Some(place(tool, seated).into());
    }
    if !tool.level_ground {
        return Some(place(tool, at).into());
    }
    let pad = loam_blocks::level_near(at, point[1])?;
    Some(BlockAction {
        levelling: Some(loam_blocks::levelling_op(pad, field.settings().voxel_size)),
        op: place(tool, pad),
    })
}

/// The cell of a block of the tool's size touching `point` on the side `normal` points to.
fn cell_at(tool: BlockTool, point: [f64; 3], normal: [f64; 3]) -> Option<BlockPos> {
    let half = tool.size.edge() / 2.0;
    let c = [0, 1, 2].map(|i| point[i] + normal[i] * half);
    BlockPos::containing(tool.size, c).ok()
}

/// Place a block of the tool's size and material at `at`.
fn place(tool: BlockTool, at: BlockPos) -> BlockOp {
    BlockOp::Place {
        at,
        material: tool.material,
        shape: Default::default(),
        paint: None,
    }
}

/// Place a block touching `point` on the side `normal` points to.
fn place_at(tool: BlockTool, point: [f64; 3], normal: [f64; 3]) -> Option<BlockOp> {
    Some(place(tool, cell_at(tool, point, normal)?))
}

/// The edge of `face` of the block at `at` nearest to `point` (world metres, on the face).
pub fn nearest_edge(at: BlockPos, face: Face, point: [f64; 3]) -> Option<Edge> {
    let lo = at.min_corner();
    let e = at.size.edge();
    let u = [0, 1, 2].map(|i| ((point[i] - lo[i]) / e).clamp(0.0, 1.0));
    let (mut best, mut best_d) = (None, f64::INFINITY);
    for axis in (0..3).filter(|a| *a != face.axis()) {
        for high in [false, true] {
            let d = if high { 1.0 - u[axis] } else { u[axis] };
            if d < best_d {
                best_d = d;
                best = Edge::between(face, Face::from_axis(axis, high));
            }
        }
    }
    best
}

/// Applies a block op from the tool (its sounds and dust follow as effects).
pub(crate) fn apply_block_op(
    blocks: &mut LoamBlocks,
    physics: &mut Physics,
    world: &mut LoamWorld,
    op: &BlockOp,
) -> Result<(), String> {
    blocks
        .apply(physics, &mut world.world, op)
        .map(|_| ())
        .map_err(|e| format!("{} refused: {e}", op.kind()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wheel_steps_through_the_sizes_and_stops_at_the_ends() {
        let mut t = BlockTool::default();
        t.scroll(-1);
        assert_eq!(t.size, BlockSize::Half);
        t.scroll(-5);
        assert_eq!(t.size, BlockSize::Quarter);
        t.scroll(9);
        assert_eq!(t.size, BlockSize::Full);
    }

    #[test]
    fn a_click_on_a_top_face_places_the_block_above() {
        let tool = BlockTool::default();
        let op = place_at(tool, [0.5, 1.0, 0.5], [0.0, 1.0, 0.0]).expect("an op");
        let BlockOp::Place { at, .. } = op else {
            panic!("{op:?}");
        };
        assert_eq!(
            at,
            BlockPos::new(BlockSize::Full, [0, 1, 0]).expect("a cell")
        );
    }

    /// Generated hills (seed 7, no caves), 1 m voxels.
    fn hills() -> loam_field::Field {
        let s = loam_field::NoiseTerrainSettings {
            seed: 7,
            ..Default::default()
        };
        let caves = loam_field::CaveSettings {
            enabled: false,
            ..Default::default()
        };
        let g = loam_field::Generator::noise(&s, &caves).unwrap();
        loam_field::Field::new(Default::default(), std::sync::Arc::new(g)).unwrap()
    }

    #[test]
    fn a_block_aimed_at_a_hillside_is_seated_or_gets_a_pad() {
        let field = hills();
        let blocks = LoamBlocks::new();
        let up = [0.0, 1.0, 0.0];
        let (mut seated, mut padded) = (0, 0);
        for i in 0..40 {
            let (x, z) = (f64::from(i) * 0.7 + 0.3, 5.5);
            let point = [x, field.generator().surface_height(x, z), z];
            let aim = BlockAim::Terrain { point, normal: up };
            let tool = BlockTool::default();
            let action =
                block_op(ToolKind::Blocks, tool, aim, true, &blocks, &field).expect("an action");
            let BlockOp::Place { at, .. } = action.op else {
                panic!("{action:?}");
            };
            let ground = loam_blocks::FieldGround(&field);
            let settings = *blocks.world.settings();
            match action.levelling {
                None => {
                    seated += 1;
                    assert_eq!(
                        loam_blocks::footing(&ground, at, &settings),
                        loam_blocks::Footing::OnGround
                    );
                }
                Some(op) => {
                    padded += 1;
                    // Without levelling, the same click puts the block where aimed.
                    let plain = BlockTool {
                        level_ground: false,
                        ..tool
                    };
                    let a = block_op(ToolKind::Blocks, plain, aim, true, &blocks, &field)
                        .expect("an action");
                    assert_eq!(a.levelling, None);
                    assert_eq!(a.op, place_at(tool, point, up).unwrap());
                    // After the pad, the block rests.
                    let mut levelled = field.clone();
                    levelled.apply(&op).unwrap();
                    let ground = loam_blocks::FieldGround(&levelled);
                    assert_eq!(
                        loam_blocks::footing(&ground, at, &settings),
                        loam_blocks::Footing::OnGround
                    );
                }
            }
        }
        assert!(seated > 0 && padded > 0, "{seated} seated, {padded} padded");
    }

    #[test]
    fn the_edge_nearest_the_crosshair_is_chiselled() {
        let at = BlockPos::new(BlockSize::Full, [0, 0, 0]).expect("a cell");
        // On the top face, near its +x side.
        let e = nearest_edge(at, Face::PosY, [0.9, 1.0, 0.4]).expect("an edge");
        assert_eq!(Some(e), Edge::between(Face::PosY, Face::PosX));
        let e = nearest_edge(at, Face::PosY, [0.5, 1.0, 0.05]).expect("an edge");
        assert_eq!(Some(e), Edge::between(Face::PosY, Face::NegZ));
    }

    #[test]
    fn the_nearer_hit_wins() {
        let t = loam_field::RayHit {
            position: [0.0, 0.0, 5.0],
            normal: [0.0, 1.0, 0.0],
            distance: 5.0,
        };
        let at = BlockPos::new(BlockSize::Full, [0, 0, 0]).expect("a cell");
        let b = WorldBlockHit {
            target: BlockTarget::Held(at),
            distance: 3.0,
            point: [0.0, 0.0, 3.0],
            face: Some(Face::NegZ),
        };
        assert!(matches!(
            nearest(Some(t), Some(b)),
            Some(BlockAim::Block(_))
        ));
        let far = WorldBlockHit { distance: 7.0, ..b };
        assert!(matches!(
            nearest(Some(t), Some(far)),
            Some(BlockAim::Terrain { .. })
        ));
    }
}
