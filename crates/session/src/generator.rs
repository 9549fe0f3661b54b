//! The generator of a world as JSON ([`GeneratorSpec`]): noise terrain, or a real DEM read
//! from a file or carried in the spec itself ([`EmbeddedDem`]), with caves. Session files
//! name their terrain with it, world files record it so that every program opening the
//! world (the editor, the server, `loam world`, a game) builds the same generator, and the
//! server sends it to its clients. The format is docs/session-format.md's `generator`.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use loam_field::{
    CaveSettings, Generator, Heightmap, HeightmapMeta, HeightmapPlacement, NoiseTerrainSettings,
};
use serde::{Deserialize, Serialize};

/// The base terrain of a world as JSON: a session's `generator`, and what a world file
/// records to rebuild it (docs/specs: the session format's generator).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum GeneratorSpec {
    /// Fractal-noise terrain with caves.
    Noise {
        /// Ground settings; every one has a default.
        #[serde(default)]
        terrain: NoiseTerrainSettings,
        /// Caves; every setting has a default.
        #[serde(default)]
        caves: CaveSettings,
    },
    /// A real DEM with caves.
    Heightmap {
        /// The `.png` (16-bit grey) or `.f32` (little-endian) file, relative to the session
        /// file. Its sidecar is the same path with the extension `.json`.
        path: PathBuf,
        /// How the DEM is laid into the world.
        #[serde(default)]
        placement: HeightmapPlacement,
        /// Caves; every setting has a default.
        #[serde(default)]
        caves: CaveSettings,
        /// The DEM file and its sidecar themselves, when the spec carries them (world files
        /// do, so that a world can be moved or served to another machine); `path` is then
        /// only where they came from and is not read.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        embedded: Option<EmbeddedDem>,
    },
}

/// A DEM carried inside a generator spec: the file's bytes as they were on disk, so its
/// BLAKE3 is the file's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddedDem {
    /// The file's extension, `png` or `f32` (how `data` is decoded).
    pub extension: String,
    /// The file's bytes, standard base64 with padding (RFC 4648 §4).
    pub data: String,
    /// The sidecar's JSON text.
    pub sidecar: String,
}

impl EmbeddedDem {
    /// Reads DEM `file` and its sidecar (same path, extension `.json`).
    ///
    /// # Errors
    /// Unreadable files, an extension other than `.png` or `.f32`.
    pub fn read(file: &Path) -> Result<Self, HeightmapSourceError> {
        let (extension, bytes, sidecar) = read_dem(file)?;
        Ok(Self {
            extension: extension.into(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            sidecar,
        })
    }

    /// The DEM file's bytes.
    ///
    /// # Errors
    /// Bad base64.
    pub fn bytes(&self) -> Result<Vec<u8>, HeightmapSourceError> {
        base64::engine::general_purpose::STANDARD
            .decode(&self.data)
            .map_err(|e| HeightmapSourceError::Embedded(e.to_string()))
    }
}

impl GeneratorSpec {
    /// Builds the generator, a heightmap path taken relative to `base`; returns it and the
    /// heightmap file's BLAKE3 (of the embedded DEM's bytes when the spec carries it).
    ///
    /// # Errors
    /// [`GeneratorSpecError::Heightmap`] for a missing or bad heightmap,
    /// [`GeneratorSpecError::EmbeddedHeightmap`] for a carried DEM that does not decode,
    /// [`GeneratorSpecError::Generator`] for bad settings.
    pub fn build(&self, base: &Path) -> Result<(Generator, Option<String>), GeneratorSpecError> {
        Ok(match self {
            GeneratorSpec::Noise { terrain, caves } => (Generator::noise(terrain, caves)?, None),
            GeneratorSpec::Heightmap {
                path,
                placement,
                caves,
                embedded,
            } => {
                let dem = DemFile::of(&base.join(path), embedded.as_ref())?;
                let map = dem.decode()?;
                let hash = blake3::hash(&dem.bytes).to_hex().to_string();
                (Generator::heightmap(&map, placement, caves)?, Some(hash))
            }
        })
    }

    /// The spec in `text` (JSON, as [`serde_json`] reads it: unknown fields are refused).
    ///
    /// # Errors
    /// What serde says, with line and column.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The BLAKE3 of the DEM file's bytes (of the carried DEM when the spec carries one,
    /// else of the file at `path` taken relative to `base`), without decoding it; `None` for
    /// noise. What a world file records beside the spec, and [`GeneratorSpec::build`]
    /// returns.
    ///
    /// # Errors
    /// As [`GeneratorSpec::build`], for the DEM's bytes.
    pub fn dem_blake3(&self, base: &Path) -> Result<Option<String>, GeneratorSpecError> {
        let GeneratorSpec::Heightmap { path, embedded, .. } = self else {
            return Ok(None);
        };
        let dem = DemFile::of(&base.join(path), embedded.as_ref())?;
        Ok(Some(blake3::hash(&dem.bytes).to_hex().to_string()))
    }

    /// The spec as JSON, as a world file keeps it ([`GeneratorSpec::from_json`] reads it
    /// back).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a generator spec serialises")
    }

    /// The same spec with the heightmap path replaced by `path` (noise: unchanged).
    pub fn with_path(self, path: PathBuf) -> Self {
        match self {
            GeneratorSpec::Heightmap {
                placement,
                caves,
                embedded,
                ..
            } => GeneratorSpec::Heightmap {
                path,
                placement,
                caves,
                embedded,
            },
            other => other,
        }
    }

    /// The same spec carrying its DEM ([`EmbeddedDem`], read from the path when it does not
    /// carry it yet; noise: unchanged).
    ///
    /// # Errors
    /// [`GeneratorSpecError::Heightmap`] for a missing or unreadable DEM.
    pub fn embedded(&self) -> Result<Self, GeneratorSpecError> {
        Ok(match self {
            GeneratorSpec::Heightmap {
                path,
                placement,
                caves,
                embedded: None,
            } => GeneratorSpec::Heightmap {
                path: path.clone(),
                placement: placement.clone(),
                caves: caves.clone(),
                embedded: Some(EmbeddedDem::read(path).map_err(|source| {
                    GeneratorSpecError::Heightmap {
                        path: path.clone(),
                        source,
                    }
                })?),
            },
            other => other.clone(),
        })
    }

    /// The spec's JSON with an embedded DEM's data replaced by its size, for people to read.
    pub fn summary_json(&self) -> String {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(serde_json::Value::String(data)) = v.pointer_mut("/embedded/data") {
            *data = format!("<{} base64 characters>", data.len());
        }
        v.to_string()
    }

    /// The same spec with a heightmap path joined to `base` (so it no longer depends on where
    /// the session file was).
    pub fn with_base(&self, base: &Path) -> Self {
        match self {
            GeneratorSpec::Heightmap {
                path,
                placement,
                caves,
                embedded,
            } => GeneratorSpec::Heightmap {
                path: base.join(path),
                placement: placement.clone(),
                caves: caves.clone(),
                embedded: embedded.clone(),
            },
            other => other.clone(),
        }
    }
}

/// A generator spec could not be built into a generator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GeneratorSpecError {
    /// The heightmap or its sidecar could not be loaded.
    #[error("heightmap {path:?}")]
    Heightmap {
        /// The heightmap file.
        path: PathBuf,
        /// Why.
        #[source]
        source: HeightmapSourceError,
    },
    /// The DEM a world (or an exported session) carries could not be decoded.
    #[error("the DEM embedded in the generator (made from {from:?})")]
    EmbeddedHeightmap {
        /// The file it was read from when the world was made (not read now).
        from: PathBuf,
        /// Why.
        #[source]
        source: HeightmapSourceError,
    },
    /// The generator settings were rejected.
    #[error(transparent)]
    Generator(#[from] loam_field::GeneratorError),
}

/// Why a heightmap could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum HeightmapSourceError {
    /// File I/O failed (the image or its sidecar).
    #[error("cannot read {path:?}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Decoding failed.
    #[error(transparent)]
    Decode(#[from] loam_field::HeightmapError),
    /// The extension is neither `.png` nor `.f32`.
    #[error("unknown heightmap extension (expected .png or .f32)")]
    Extension,
    /// The DEM carried in a world's generator is not valid base64.
    #[error("the embedded DEM is not valid base64: {0}")]
    Embedded(String),
}

/// DEM `file`'s extension (`png` or `f32`), bytes and sidecar text (same path, `.json`).
fn read_dem(file: &Path) -> Result<(&'static str, Vec<u8>, String), HeightmapSourceError> {
    let extension = match file.extension().and_then(|e| e.to_str()) {
        Some("png") => "png",
        Some("f32") => "f32",
        _ => return Err(HeightmapSourceError::Extension),
    };
    let read = |p: &Path| {
        std::fs::read(p).map_err(|source| HeightmapSourceError::Io {
            path: p.into(),
            source,
        })
    };
    let bytes = read(file)?;
    let sidecar = String::from_utf8_lossy(&read(&file.with_extension("json"))?).into_owned();
    Ok((extension, bytes, sidecar))
}

/// A DEM file's bytes as they were on disk, with how to decode them and where they came
/// from (for errors).
struct DemFile {
    /// `png` or `f32`.
    extension: String,
    bytes: Vec<u8>,
    /// The sidecar's JSON text.
    sidecar: String,
    /// The file (for a carried DEM: the one it was read from when the world was made).
    from: PathBuf,
    /// Whether the spec carried it.
    embedded: bool,
}

impl DemFile {
    /// The DEM file at `file` as it was on disk: the one carried in the spec (`file` is then
    /// only where it came from), else read from `file`.
    fn of(file: &Path, embedded: Option<&EmbeddedDem>) -> Result<Self, GeneratorSpecError> {
        let file = file.to_path_buf();
        Ok(match embedded {
            Some(e) => e
                .bytes()
                .map(|bytes| DemFile {
                    extension: e.extension.clone(),
                    bytes,
                    sidecar: e.sidecar.clone(),
                    from: file.clone(),
                    embedded: true,
                })
                .map_err(|source| GeneratorSpecError::EmbeddedHeightmap {
                    from: file.clone(),
                    source,
                })?,
            None => {
                let (extension, bytes, sidecar) =
                    read_dem(&file).map_err(|source| GeneratorSpecError::Heightmap {
                        path: file.clone(),
                        source,
                    })?;
                DemFile {
                    extension: extension.into(),
                    bytes,
                    sidecar,
                    from: file,
                    embedded: false,
                }
            }
        })
    }

    /// The DEM, decoded with its sidecar.
    fn decode(&self) -> Result<Heightmap, GeneratorSpecError> {
        let decoded = HeightmapMeta::from_json(&self.sidecar)
            .map_err(HeightmapSourceError::from)
            .and_then(|meta| match self.extension.as_str() {
                "png" => Ok(Heightmap::from_png(&self.bytes, &meta)?),
                "f32" => Ok(Heightmap::from_f32_le(&self.bytes, &meta)?),
                _ => Err(HeightmapSourceError::Extension),
            });
        decoded.map_err(|source| match self.embedded {
            true => GeneratorSpecError::EmbeddedHeightmap {
                from: self.from.clone(),
                source,
            },
            false => GeneratorSpecError::Heightmap {
                path: self.from.clone(),
                source,
            },
        })
    }
}
