//! Integration tests of loam-sound (issue 9, "Sound"): every sound is rendered offline and
//! measured in Rust (rustfft), plus one check with sox where it is installed.

mod util;

mod errors;
mod limiter;
mod sox;
mod spatial;
mod synth;
mod wav;
