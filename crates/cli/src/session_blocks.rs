//! Session version 3's `blocks`: MagicaVoxel models placed as blocks, block ops, and the
//! seconds of physics `loam render` simulates after the ops (so that what lost its support
//! falls, lands, puffs dust and sounds before the picture is taken).

use std::path::{Path, PathBuf};

use loam_blocks::{BlockOp, BlockSize, MaterialTable, VoxModel, VoxSettings, import_vox};
use serde::{Deserialize, Serialize};

/// Longest simulation a session may ask for, seconds.
pub const MAX_SIMULATE_S: f64 = 60.0;

/// The `blocks` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlocksSpec {
    /// The models and block ops come after this many terrain ops (e.g. those that level a
    /// pad), before the rest.
    #[serde(default)]
    pub after_ops: usize,
    /// Models placed in order, each all or nothing.
    #[serde(default)]
    pub models: Vec<ModelSpec>,
    /// Block ops applied after the models (before the terrain ops).
    #[serde(default)]
    pub ops: Vec<BlockOp>,
    /// Seconds of physics after every op, before the picture (0–60).
    #[serde(default)]
    pub simulate_s: f64,
}

/// A `.vox` model placed as blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// The `.vox` file, relative to the session file.
    pub vox: PathBuf,
    /// Block size of one voxel: "full" (1 m), "half" or "quarter" (default).
    #[serde(default = "quarter")]
    pub size: BlockSize,
    /// The cell on that size's grid where the model's voxel (0, 0, 0) goes (Loam axes, y
    /// up).
    pub origin: [i32; 3],
    /// Paint blocks with their palette colours (default true).
    #[serde(default = "yes")]
    pub keep_colours: bool,
}

fn quarter() -> BlockSize {
    BlockSize::Quarter
}

fn yes() -> bool {
    true
}

impl BlocksSpec {
    /// Checks the numbers (the ops and models are checked when applied).
    ///
    /// # Errors
    /// A message naming what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=MAX_SIMULATE_S).contains(&self.simulate_s) {
            return Err(format!(
                "blocks.simulate_s {} must be within 0–{MAX_SIMULATE_S} s",
                self.simulate_s
            ));
        }
        Ok(())
    }

    /// Reads and imports every model (paths relative to `base`).
    ///
    /// # Errors
    /// The file that could not be read or imported, and why.
    pub fn load_models(
        &self,
        base: &Path,
        materials: &MaterialTable,
    ) -> Result<Vec<VoxModel>, String> {
        self.models
            .iter()
            .map(|m| {
                let path = base.join(&m.vox);
                let bytes =
                    std::fs::read(&path).map_err(|e| format!("cannot read {path:?}: {e}"))?;
                let settings = VoxSettings {
                    size: m.size,
                    origin: m.origin,
                    keep_colours: m.keep_colours,
                };
                import_vox(&bytes, materials, &settings).map_err(|e| format!("{path:?}: {e}"))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocks_section_parses_with_defaults_and_is_checked() {
        let s: BlocksSpec = serde_json::from_str(
            r#"{"models": [{"vox": "house.vox", "origin": [1, 2, 3]}],
                "ops": [{"kind": "break", "at": {"size": "full", "cell": [0, 0, 0]}}],
                "simulate_s": 3}"#,
        )
        .unwrap();
        assert_eq!(s.models[0].size, BlockSize::Quarter);
        assert!(s.models[0].keep_colours);
        assert_eq!(s.ops.len(), 1);
        assert!(s.validate().is_ok());
        let bad = BlocksSpec {
            simulate_s: 61.0,
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().contains("simulate_s"));
        assert!(serde_json::from_str::<BlocksSpec>(r#"{"modles": []}"#).is_err());
    }

    #[test]
    fn models_load_from_the_shared_data_and_bad_files_say_why() {
        let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/vox");
        let spec = BlocksSpec {
            models: vec![ModelSpec {
                vox: "mmmm_cc_by_4.0/obj_tree1.vox".into(),
                size: BlockSize::Half,
                origin: [0, 0, 0],
                keep_colours: true,
            }],
            ..Default::default()
        };
        let m = spec.load_models(&base, &MaterialTable::standard()).unwrap();
        assert_eq!(m[0].blocks.len(), m[0].voxels - m[0].overlapping);
        let bad = BlocksSpec {
            models: vec![ModelSpec {
                vox: "dot_vox_crate/not_a.vox".into(),
                ..spec.models[0].clone()
            }],
            ..Default::default()
        };
        let e = bad
            .load_models(&base, &MaterialTable::standard())
            .unwrap_err();
        assert!(e.contains("not_a.vox"), "{e}");
    }
}
