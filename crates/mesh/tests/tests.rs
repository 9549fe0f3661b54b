//! Integration tests of loam-mesh, one binary.

mod util;

mod cases;
mod chunked;
mod level_seams;
mod lod;
mod mc33;
mod random;
mod seams;
mod sphere;
