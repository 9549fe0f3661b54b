//! Writing meshes as glTF 2.0 binary (`.glb`) and Wavefront OBJ.
//!
//! glTF: one buffer with positions (VEC3 f32, with min/max), normals (VEC3 f32) and u32
//! indices, one mesh per part, each in its own node translated by the part's offset, so that
//! chunk meshes keep their chunk-local positions (Khronos glTF 2.0 specification, "GLB File
//! Format Specification").

use std::io::Write;
use std::path::Path;

use serde_json::json;

/// One mesh to export: a name, a translation (metres) and the mesh's arrays.
pub struct Part<'a> {
    /// Node name.
    pub name: String,
    /// Node translation, metres.
    pub offset: [f64; 3],
    /// Vertex positions.
    pub positions: &'a [[f32; 3]],
    /// Unit vertex normals.
    pub normals: &'a [[f32; 3]],
    /// Triangle indices.
    pub indices: &'a [u32],
}

fn pad4(v: &mut Vec<u8>, byte: u8) {
    while !v.len().is_multiple_of(4) {
        v.push(byte);
    }
}

/// Encodes parts as a GLB file. Parts without triangles are skipped.
pub fn glb_bytes(parts: &[Part]) -> Vec<u8> {
    let mut bin: Vec<u8> = Vec::new();
    let (mut views, mut accessors, mut meshes, mut nodes) = (vec![], vec![], vec![], vec![]);
    for part in parts.iter().filter(|p| !p.indices.is_empty()) {
        let mut view = |bytes: &[u8], target: u32, bin: &mut Vec<u8>| {
            let offset = bin.len();
            bin.extend_from_slice(bytes);
            pad4(bin, 0);
            views.push(json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len(), "target": target}));
            views.len() - 1
        };
        let flat = |v: &[[f32; 3]]| -> Vec<u8> {
            v.iter().flatten().flat_map(|f| f.to_le_bytes()).collect()
        };
        let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
        for p in part.positions {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
        let pv = view(&flat(part.positions), 34962, &mut bin);
        let nv = view(&flat(part.normals), 34962, &mut bin);
        let idx: Vec<u8> = part.indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let iv = view(&idx, 34963, &mut bin);
        let a0 = accessors.len();
        accessors.push(json!({"bufferView": pv, "componentType": 5126, "count": part.positions.len(), "type": "VEC3", "min": lo, "max": hi}));
        accessors.push(json!({"bufferView": nv, "componentType": 5126, "count": part.normals.len(), "type": "VEC3"}));
        accessors.push(json!({"bufferView": iv, "componentType": 5125, "count": part.indices.len(), "type": "SCALAR"}));
        meshes.push(json!({"name": part.name, "primitives": [{"attributes": {"POSITION": a0, "NORMAL": a0 + 1}, "indices": a0 + 2, "mode": 4}]}));
        nodes
            .push(json!({"name": part.name, "mesh": meshes.len() - 1, "translation": part.offset}));
    }
    let node_ids: Vec<usize> = (0..nodes.len()).collect();
    let mut doc = json!({
        "asset": {"version": "2.0", "generator": concat!("loam ", env!("CARGO_PKG_VERSION"))},
        "scene": 0,
        "scenes": [{}],
    });
    if !nodes.is_empty() {
        // glTF 2.0 forbids empty `nodes` arrays: an empty mesh is a scene without nodes.
        doc["scenes"][0]["nodes"] = json!(node_ids);
        doc["nodes"] = json!(nodes);
    }
    if !meshes.is_empty() {
        doc["meshes"] = json!(meshes);
        doc["accessors"] = json!(accessors);
        doc["bufferViews"] = json!(views);
        doc["buffers"] = json!([{"byteLength": bin.len()}]);
    }
    let mut js = serde_json::to_vec(&doc).expect("JSON");
    pad4(&mut js, b' ');
    let has_bin = !bin.is_empty();
    let total = 12 + 8 + js.len() + if has_bin { 8 + bin.len() } else { 0 };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(js.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&js);
    if has_bin {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    out
}

/// Writes parts to `path` as `.glb` or `.obj` by its extension (either case), whole or not
/// at all ([`crate::output::write_whole`]).
///
/// # Errors
/// Another extension, a world file at `path`, or a failed write.
pub fn write(path: &Path, parts: &[Part]) -> anyhow::Result<()> {
    let bytes = if is_glb(path)? {
        glb_bytes(parts)
    } else {
        obj_bytes(parts)
    };
    crate::output::write_whole(path, &bytes)
}

/// Checks a mesh output path before the work that fills it: a `.glb` or `.obj` name in a
/// folder that exists.
///
/// # Errors
/// Another extension, or a folder that does not exist.
pub fn check_out(path: &Path) -> anyhow::Result<()> {
    is_glb(path)?;
    crate::output::check_folder(path)
}

/// Whether `path` names a `.glb` (else an `.obj`).
///
/// # Errors
/// Neither extension.
fn is_glb(path: &Path) -> anyhow::Result<bool> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("glb") => Ok(true),
        Some("obj") => Ok(false),
        _ => anyhow::bail!("{path:?}: the output must end in .glb or .obj"),
    }
}

/// Encodes parts as OBJ text (positions translated by their offsets, normals, faces).
pub fn obj_bytes(parts: &[Part]) -> Vec<u8> {
    let mut o = Vec::new();
    let mut base = 1usize;
    for part in parts {
        let _ = writeln!(o, "o {}", part.name);
        for p in part.positions {
            let w = [0, 1, 2].map(|a| f64::from(p[a]) + part.offset[a]);
            let _ = writeln!(o, "v {} {} {}", w[0], w[1], w[2]);
        }
        for n in part.normals {
            let _ = writeln!(o, "vn {} {} {}", n[0], n[1], n[2]);
        }
        for t in part.indices.chunks_exact(3) {
            let [a, b, c] = [t[0], t[1], t[2]].map(|i| i as usize + base);
            let _ = writeln!(o, "f {a}//{a} {b}//{b} {c}//{c}");
        }
        base += part.positions.len();
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glb_layout() {
        let pos = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let nor = [[0.0, 0.0, 1.0]; 3];
        let idx = [0u32, 1, 2];
        let b = glb_bytes(&[Part {
            name: "t".into(),
            offset: [32.0, 0.0, 0.0],
            positions: &pos,
            normals: &nor,
            indices: &idx,
        }]);
        assert_eq!(&b[0..4], b"glTF");
        assert_eq!(
            u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize,
            b.len()
        );
        let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
        assert_eq!(jl % 4, 0);
        let doc: serde_json::Value = serde_json::from_slice(&b[20..20 + jl]).unwrap();
        assert_eq!(doc["accessors"][0]["max"], json!([1.0, 1.0, 0.0]));
        assert_eq!(doc["nodes"][0]["translation"], json!([32.0, 0.0, 0.0]));
        let bl = u32::from_le_bytes(b[20 + jl..24 + jl].try_into().unwrap()) as usize;
        assert_eq!(bl, 36 + 36 + 12);
        assert_eq!(&b[24 + jl..28 + jl], b"BIN\0");
    }

    /// An empty mesh is a valid glTF: a scene without nodes (an empty `nodes` array is not
    /// allowed, glTF 2.0 §5.17 and §5.25), and no buffer.
    #[test]
    fn glb_of_nothing_has_no_empty_arrays() {
        let b = glb_bytes(&[]);
        let jl = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
        assert_eq!(b.len(), 20 + jl, "no BIN chunk");
        let doc: serde_json::Value = serde_json::from_slice(&b[20..20 + jl]).unwrap();
        assert_eq!(doc["scenes"], json!([{}]));
        assert!(
            doc.get("nodes").is_none() && doc.get("buffers").is_none(),
            "{doc}"
        );
    }
}
