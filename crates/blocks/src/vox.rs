//! MagicaVoxel import: each voxel a block of a chosen size, placed as the file's scene
//! graph says, its palette colour mapped to the nearest material (and kept as paint if
//! asked).
//!
//! ```text
//!   bytes ──check chunks (sizes, counts; typed errors)──▶ dot_vox ──scene graph──▶ blocks
//!   MagicaVoxel: Z up, right-handed        Loam: Y up, right-handed
//!   (x, y, z)_vox  ──────────────────────▶ (x, z, −y)_loam
//! ```
//!
//! Placement follows the convention most importers use: a model's voxel `v` lies at
//! `t + R · (v − ⌊size / 2⌋)` in the scene's voxel grid, with `t` and `R` the transforms
//! (`_t`, `_r`) composed from the root down. Hidden nodes and layers are skipped. Where two
//! instances fill the same cell, the first one (in scene order) keeps it.
//!
//! The file is checked before dot_vox parses it (dot_vox reports any problem as one
//! string and skips unreadable child chunks silently): every chunk must fit in its parent,
//! `SIZE` and `XYZI` must have their sizes, and the models dot_vox returns must match the
//! chunks counted, so a damaged file is an error, never a smaller model.

use std::collections::BTreeMap;

use dot_vox::{DotVoxData, SceneNode};

use crate::block::{BlockPos, BlockSize, BlockSpec};
use crate::error::VoxError;
use crate::material::MaterialTable;

/// How to import a `.vox` file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VoxSettings {
    /// The size of the block each voxel becomes.
    pub size: BlockSize,
    /// The cell (on `size`'s grid, Loam axes) where the scene's voxel (0, 0, 0) goes.
    pub origin: [i32; 3],
    /// Paint each block with its palette colour (its material is the nearest one
    /// either way).
    pub keep_colours: bool,
}

impl Default for VoxSettings {
    fn default() -> Self {
        Self {
            size: BlockSize::Quarter,
            origin: [0; 3],
            keep_colours: true,
        }
    }
}

/// A `.vox` file as blocks, not yet placed ([`crate::BlockWorld::place_model`]).
#[derive(Clone, Debug, PartialEq)]
pub struct VoxModel {
    /// The blocks, ascending by position.
    pub blocks: Vec<(BlockPos, BlockSpec)>,
    /// Models in the file.
    pub models: usize,
    /// Model instances placed by the scene graph (hidden ones left out).
    pub instances: usize,
    /// Voxels over all instances placed.
    pub voxels: usize,
    /// Voxels left out because an earlier instance filled the same cell.
    pub overlapping: usize,
}

/// What the chunk check found: the voxel count of each `XYZI` chunk, in order.
struct ChunkCounts {
    xyzi: Vec<usize>,
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Checks the chunk structure (see the module docs).
fn check_chunks(bytes: &[u8]) -> Result<ChunkCounts, VoxError> {
    if bytes.len() < 4 || &bytes[..4] != b"VOX " {
        return Err(VoxError::NotVox {
            found: bytes[..bytes.len().min(4)].to_vec(),
        });
    }
    if bytes.len() < 20 {
        return Err(VoxError::Truncated {
            chunk: "header".into(),
            offset: 0,
            needed: 20,
            available: bytes.len() as u64,
        });
    }
    let id = |at: usize| String::from_utf8_lossy(&bytes[at..at + 4]).into_owned();
    if &bytes[8..12] != b"MAIN" {
        return Err(VoxError::Malformed {
            chunk: id(8),
            offset: 8,
            reason: "the first chunk must be MAIN".into(),
        });
    }
    let (content, children) = (le_u32(bytes, 12) as u64, le_u32(bytes, 16) as u64);
    let available = (bytes.len() - 20) as u64;
    if content + children > available {
        return Err(VoxError::Truncated {
            chunk: "MAIN".into(),
            offset: 8,
            needed: content + children,
            available,
        });
    }
    let mut at = 20 + content as usize;
    let end = at + children as usize;
    let mut xyzi = Vec::new();
    let mut sizes = 0usize;
    while at < end {
        if end - at < 12 {
            return Err(VoxError::Truncated {
                chunk: "chunk header".into(),
                offset: at,
                needed: 12,
                available: (end - at) as u64,
            });
        }
        let name = id(at);
        let (c, k) = (le_u32(bytes, at + 4) as u64, le_u32(bytes, at + 8) as u64);
        let available = (end - at - 12) as u64;
        if c + k > available {
            return Err(VoxError::Truncated {
                chunk: name,
                offset: at,
                needed: c + k,
                available,
            });
        }
        let body = &bytes[at + 12..at + 12 + c as usize];
        let malformed = |reason: String| VoxError::Malformed {
            chunk: name.clone(),
            offset: at,
            reason,
        };
        match name.as_str() {
            "SIZE" if c != 12 => return Err(malformed(format!("{c} bytes, not 12"))),
            "SIZE" => sizes += 1,
            "XYZI" => {
                if c < 4 {
                    return Err(malformed(format!("{c} bytes, too short for a count")));
                }
                let n = le_u32(body, 0) as u64;
                if 4 + 4 * n != c {
                    return Err(malformed(format!(
                        "{n} voxels need {} bytes, not {c}",
                        4 + 4 * n
                    )));
                }
                xyzi.push(n as usize);
            }
            _ => {}
        }
        at += 12 + (c + k) as usize;
    }
    if sizes != xyzi.len() {
        return Err(VoxError::Malformed {
            chunk: "MAIN".into(),
            offset: 8,
            reason: format!("{sizes} SIZE chunks but {} XYZI chunks", xyzi.len()),
        });
    }
    Ok(ChunkCounts { xyzi })
}

/// A MagicaVoxel rotation byte as a signed permutation matrix (rows), checked.
fn rotation(byte: u8) -> Option<[[i32; 3]; 3]> {
    let (i1, i2) = (usize::from(byte & 3), usize::from((byte >> 2) & 3));
    if i1 == i2 || i1 > 2 || i2 > 2 {
        return None;
    }
    let i3 = 3 - i1 - i2;
    let sign = |bit: u8| if byte >> bit & 1 == 1 { -1 } else { 1 };
    let mut m = [[0; 3]; 3];
    m[0][i1] = sign(4);
    m[1][i2] = sign(5);
    m[2][i3] = sign(6);
    Some(m)
}

fn mul_vec(m: &[[i32; 3]; 3], v: [i64; 3]) -> [i64; 3] {
    [0, 1, 2].map(|r| (0..3).map(|c| i64::from(m[r][c]) * v[c]).sum())
}

fn mul_mat(a: &[[i32; 3]; 3], b: &[[i32; 3]; 3]) -> [[i32; 3]; 3] {
    let mut m = [[0; 3]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

const IDENTITY: [[i32; 3]; 3] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];

/// A model instance: which model, where, turned how (scene voxel grid, Z up).
struct Instance {
    model: usize,
    t: [i64; 3],
    r: [[i32; 3]; 3],
}

fn malformed_scene(reason: String) -> VoxError {
    VoxError::Malformed {
        chunk: "scene graph".into(),
        offset: 0,
        reason,
    }
}

/// Walks the scene graph from the root, collecting instances in scene order.
fn instances(data: &DotVoxData) -> Result<Vec<Instance>, VoxError> {
    if data.scenes.is_empty() {
        return Ok((0..data.models.len())
            .map(|model| Instance {
                model,
                t: [0; 3],
                r: IDENTITY,
            })
            .collect());
    }
    let hidden_layer = |layer: u32| data.layers.get(layer as usize).is_some_and(|l| l.hidden());
    let mut out = Vec::new();
    // (node, translation, rotation, depth)
    let mut stack = vec![(0u32, [0i64; 3], IDENTITY, 0usize)];
    while let Some((node, t, r, depth)) = stack.pop() {
        if depth > 64 {
            return Err(malformed_scene(
                "the scene graph is deeper than 64 (a cycle?)".into(),
            ));
        }
        let n = data
            .scenes
            .get(node as usize)
            .ok_or_else(|| malformed_scene(format!("node {node} does not exist")))?;
        match n {
            SceneNode::Transform {
                attributes,
                frames,
                child,
                layer_id,
            } => {
                if attributes.get("_hidden").is_some_and(|v| v == "1") || hidden_layer(*layer_id) {
                    continue;
                }
                let frame = frames.first();
                let dt = match frame.and_then(|f| f.attributes.get("_t")) {
                    Some(s) => {
                        let v: Vec<i64> = s
                            .split_whitespace()
                            .map(|x| x.parse::<i64>())
                            .collect::<Result<_, _>>()
                            .map_err(|_| malformed_scene(format!("bad translation {s:?}")))?;
                        if v.len() != 3 || v.iter().any(|c| c.abs() > 1 << 24) {
                            return Err(malformed_scene(format!("bad translation {s:?}")));
                        }
                        [v[0], v[1], v[2]]
                    }
                    None => [0; 3],
                };
                let dr = match frame.and_then(|f| f.attributes.get("_r")) {
                    Some(s) => s
                        .parse::<u8>()
                        .ok()
                        .and_then(rotation)
                        .ok_or_else(|| malformed_scene(format!("bad rotation {s:?}")))?,
                    None => IDENTITY,
                };
                let rt = mul_vec(&r, dt);
                let t2 = [0, 1, 2].map(|i| t[i] + rt[i]);
                stack.push((*child, t2, mul_mat(&r, &dr), depth + 1));
            }
            SceneNode::Group { children, .. } => {
                // Reversed, so that the stack pops them in order.
                for c in children.iter().rev() {
                    stack.push((*c, t, r, depth + 1));
                }
            }
            SceneNode::Shape { models, .. } => {
                for m in models {
                    let model = m.model_id as usize;
                    if model >= data.models.len() {
                        return Err(malformed_scene(format!("shape names model {model}")));
                    }
                    out.push(Instance { model, t, r });
                }
            }
        }
    }
    Ok(out)
}

/// Reads a `.vox` file into blocks (see the module docs).
///
/// # Errors
/// [`VoxError::NotVox`], [`VoxError::Truncated`], [`VoxError::Malformed`],
/// [`VoxError::Empty`] or [`VoxError::OutOfRange`].
pub fn import_vox(
    bytes: &[u8],
    materials: &MaterialTable,
    settings: &VoxSettings,
) -> Result<VoxModel, VoxError> {
    let counts = check_chunks(bytes)?;
    let data = dot_vox::load_bytes(bytes).map_err(|e| VoxError::Malformed {
        chunk: "MAIN".into(),
        offset: 8,
        reason: e.to_owned(),
    })?;
    let found: Vec<usize> = data.models.iter().map(|m| m.voxels.len()).collect();
    if found != counts.xyzi {
        return Err(VoxError::Malformed {
            chunk: "XYZI".into(),
            offset: 0,
            reason: format!(
                "the parser read models of {found:?} voxels; the chunks hold {:?}",
                counts.xyzi
            ),
        });
    }
    for (i, m) in data.models.iter().enumerate() {
        let s = [m.size.x, m.size.y, m.size.z];
        if let Some(v) = m
            .voxels
            .iter()
            .find(|v| u32::from(v.x) >= s[0] || u32::from(v.y) >= s[1] || u32::from(v.z) >= s[2])
        {
            return Err(VoxError::Malformed {
                chunk: "XYZI".into(),
                offset: 0,
                reason: format!(
                    "model {i}: voxel {:?} outside its size {s:?}",
                    (v.x, v.y, v.z)
                ),
            });
        }
    }
    let placed = instances(&data)?;
    let mut cells: BTreeMap<BlockPos, BlockSpec> = BTreeMap::new();
    let (mut voxels, mut overlapping) = (0, 0);
    for inst in &placed {
        let m = &data.models[inst.model];
        let half = [m.size.x, m.size.y, m.size.z].map(|s| i64::from(s / 2));
        for v in &m.voxels {
            voxels += 1;
            let local = [
                i64::from(v.x) - half[0],
                i64::from(v.y) - half[1],
                i64::from(v.z) - half[2],
            ];
            let p = mul_vec(&inst.r, local);
            let s = [0, 1, 2].map(|i| inst.t[i] + p[i]);
            // Z up to Y up: (x, y, z) → (x, z, −y − 1) as cells.
            let loam = [s[0], s[2], -s[1] - 1];
            let cell: Vec<i32> = (0..3)
                .map(|i| i32::try_from(loam[i] + i64::from(settings.origin[i])))
                .collect::<Result<_, _>>()
                .map_err(|_| {
                    VoxError::OutOfRange(crate::BlockError::OutOfRange {
                        point: loam.map(|c| c as f64 * settings.size.edge()),
                    })
                })?;
            let pos = BlockPos::new(settings.size, [cell[0], cell[1], cell[2]])
                .map_err(VoxError::OutOfRange)?;
            let colour = data
                .palette
                .get(usize::from(v.i))
                .map(|c| [c.r, c.g, c.b])
                .ok_or_else(|| VoxError::Malformed {
                    chunk: "RGBA".into(),
                    offset: 0,
                    reason: format!("colour index {} outside the palette", v.i),
                })?;
            let spec = BlockSpec {
                material: materials.nearest(colour),
                shape: Default::default(),
                paint: settings.keep_colours.then_some(colour),
            };
            match cells.entry(pos) {
                std::collections::btree_map::Entry::Occupied(_) => overlapping += 1,
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(spec);
                }
            }
        }
    }
    if cells.is_empty() {
        return Err(VoxError::Empty);
    }
    Ok(VoxModel {
        blocks: cells.into_iter().collect(),
        models: data.models.len(),
        instances: placed.len(),
        voxels,
        overlapping,
    })
}
