//! Drawing blocks: one entity per held block, one per piece (its blocks as children, moved
//! by the body's pose). Meshes are shared per (size, chisel shape) and materials per colour,
//! so Bevy batches equal blocks.

use std::collections::BTreeMap;

use bevy::asset::RenderAssetUsages;
use bevy::mesh::{Indices, PrimitiveTopology};
use bevy::prelude::*;
use loam_blocks::{BlockId, BlockSize, ChiselShape, PieceId};

use super::{LoamBlocks, block_colour, vec3};
use crate::effects::Effect;

/// A held block's entity.
#[derive(Component, Debug, Clone, Copy)]
pub struct HeldBlockEntity(pub BlockId);

/// A piece's entity (falling or rubble); its children are its blocks.
#[derive(Component, Debug, Clone, Copy)]
pub struct PieceEntity(pub PieceId);

/// What is drawn, so that only changes are respawned.
#[derive(Resource, Default)]
pub struct BlockDrawing {
    meshes: BTreeMap<(BlockSize, ChiselShape), Handle<Mesh>>,
    materials: BTreeMap<[u32; 3], Handle<StandardMaterial>>,
    held: BTreeMap<BlockId, Drawn>,
    pieces: BTreeMap<PieceId, (Entity, usize)>,
    revision: Option<u64>,
}

impl BlockDrawing {
    /// Held blocks drawn.
    pub fn held_count(&self) -> usize {
        self.held.len()
    }

    /// Pieces drawn.
    pub fn piece_count(&self) -> usize {
        self.pieces.len()
    }
}

#[derive(Clone, Copy, PartialEq)]
struct Drawn {
    entity: Entity,
    look: (BlockSize, ChiselShape, [u32; 3]),
    centre: Vec3,
    edge: f32,
    colour: [f32; 3],
}

/// The triangle mesh of a chiselled block of `edge` metres, block-local (lowest corner at the
/// origin): each face of [`ChiselShape::faces`] fan-triangulated with its flat normal, so
/// edges stay sharp under lighting.
pub fn block_mesh(shape: &ChiselShape, edge: f64) -> Mesh {
    let mut positions: Vec<[f32; 3]> = Vec::new();
    let mut normals: Vec<[f32; 3]> = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    for face in shape.faces(edge) {
        let base = positions.len() as u32;
        let n = face.normal.map(|v| v as f32);
        for p in &face.points {
            positions.push(p.map(|v| v as f32));
            normals.push(n);
        }
        for i in 1..face.points.len().saturating_sub(1) as u32 {
            indices.extend([base, base + i, base + i + 1]);
        }
    }
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::RENDER_WORLD,
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_attribute(Mesh::ATTRIBUTE_NORMAL, normals)
    .with_inserted_indices(Indices::U32(indices))
}

fn colour_key(c: [f32; 3]) -> [u32; 3] {
    c.map(f32::to_bits)
}

impl BlockDrawing {
    fn mesh(
        &mut self,
        meshes: &mut Assets<Mesh>,
        size: BlockSize,
        shape: ChiselShape,
    ) -> Handle<Mesh> {
        self.meshes
            .entry((size, shape))
            .or_insert_with(|| meshes.add(block_mesh(&shape, size.edge())))
            .clone()
    }

    fn material(
        &mut self,
        materials: &mut Assets<StandardMaterial>,
        colour: [f32; 3],
    ) -> Handle<StandardMaterial> {
        self.materials
            .entry(colour_key(colour))
            .or_insert_with(|| {
                materials.add(StandardMaterial {
                    base_color: Color::linear_rgb(colour[0], colour[1], colour[2]),
                    perceptual_roughness: 0.85,
                    ..Default::default()
                })
            })
            .clone()
    }
}

/// Spawns, respawns and despawns block and piece entities to match [`LoamBlocks`], moves
/// pieces to their poses, and sends [`Effect::Break`] for blocks broken this frame.
pub fn sync(
    mut commands: Commands,
    mut blocks: ResMut<LoamBlocks>,
    mut drawing: ResMut<BlockDrawing>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut effects: MessageWriter<Effect>,
    mut poses: Query<&mut Transform, With<PieceEntity>>,
) {
    for (_, id) in std::mem::take(&mut blocks.broken) {
        if let Some(d) = drawing.held.get(&id) {
            effects.write(Effect::Break {
                at: d.centre,
                edge: d.edge,
                colour: d.colour,
            });
        }
    }
    let world = &blocks.world;
    let rev = world.store().revision();
    if drawing.revision != Some(rev) {
        drawing.revision = Some(rev);
        let mut keep: BTreeMap<BlockId, Drawn> = BTreeMap::new();
        for (pos, b) in world.store().iter() {
            let colour = block_colour(world, b);
            let look = (pos.size, b.shape, colour_key(colour));
            let centre = vec3(pos.centre());
            match drawing.held.remove(&b.id) {
                Some(d) if d.look == look && d.centre == centre => {
                    keep.insert(b.id, d);
                }
                old => {
                    if let Some(d) = old {
                        commands.entity(d.entity).despawn();
                    }
                    let mesh = drawing.mesh(&mut meshes, pos.size, b.shape);
                    let material = drawing.material(&mut materials, colour);
                    let entity = commands
                        .spawn((
                            Mesh3d(mesh),
                            MeshMaterial3d(material),
                            Transform::from_translation(vec3(pos.min_corner())),
                            HeldBlockEntity(b.id),
                        ))
                        .id();
                    let edge = pos.size.edge() as f32;
                    keep.insert(
                        b.id,
                        Drawn {
                            entity,
                            look,
                            centre,
                            edge,
                            colour,
                        },
                    );
                }
            }
        }
        for (_, d) in std::mem::replace(&mut drawing.held, keep) {
            commands.entity(d.entity).despawn();
        }
    }

    let mut seen: BTreeMap<PieceId, (Entity, usize)> = BTreeMap::new();
    for piece in world.pieces() {
        let pose = Transform {
            translation: Vec3::from_array(piece.pose.position),
            rotation: Quat::from_array(piece.pose.rotation),
            scale: Vec3::ONE,
        };
        match drawing.pieces.remove(&piece.id) {
            Some((e, n)) if n == piece.blocks.len() => {
                if let Ok(mut t) = poses.get_mut(e) {
                    *t = pose;
                }
                seen.insert(piece.id, (e, n));
            }
            old => {
                if let Some((e, _)) = old {
                    commands.entity(e).despawn();
                }
                let mut children = Vec::with_capacity(piece.blocks.len());
                for pb in &piece.blocks {
                    let colour = block_colour(world, &pb.block);
                    let mesh = drawing.mesh(&mut meshes, pb.pos.size, pb.block.shape);
                    let material = drawing.material(&mut materials, colour);
                    children.push((
                        Mesh3d(mesh),
                        MeshMaterial3d(material),
                        Transform::from_translation(vec3(piece.local_min(pb.pos))),
                    ));
                }
                let e = commands
                    .spawn((pose, Visibility::Visible, PieceEntity(piece.id)))
                    .with_children(|p| {
                        for c in children {
                            p.spawn(c);
                        }
                    })
                    .id();
                seen.insert(piece.id, (e, piece.blocks.len()));
            }
        }
    }
    for (_, (e, _)) in std::mem::replace(&mut drawing.pieces, seen) {
        commands.entity(e).despawn();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bevy::mesh::VertexAttributeValues;
    use loam_blocks::{Edge, Face};

    fn area(mesh: &Mesh) -> f64 {
        let Some(VertexAttributeValues::Float32x3(p)) = mesh.attribute(Mesh::ATTRIBUTE_POSITION)
        else {
            panic!("positions");
        };
        let Some(Indices::U32(idx)) = mesh.indices() else {
            panic!("indices");
        };
        idx.chunks(3)
            .map(|t| {
                let [a, b, c] = [0, 1, 2].map(|i| Vec3::from_array(p[t[i] as usize]));
                f64::from((b - a).cross(c - a).length()) / 2.0
            })
            .sum()
    }

    #[test]
    fn a_sharp_block_is_a_cube_of_its_edge() {
        let m = block_mesh(&ChiselShape::default(), 0.5);
        assert!((area(&m) - 6.0 * 0.25).abs() < 1e-6);
        assert_eq!(m.count_vertices(), 24);
    }

    #[test]
    fn a_rounded_edge_changes_the_surface() {
        let edge = Edge::between(Face::PosY, Face::PosX).expect("adjacent faces");
        let shape = ChiselShape::default().with_round(edge);
        let m = block_mesh(&shape, 1.0);
        let a = area(&m);
        // A bevel (or round) replaces part of two faces: the area is below the cube's 6 m²
        // but more than 5 m² (it cuts less than a whole face).
        assert!(a < 6.0 - 1e-3 && a > 5.0, "area {a}");
    }
}
