//! Numbers as error messages show them.

use std::fmt;

/// An `f64` for a message: as `Display` writes it (`2`, `0.5`), but in exponent form
/// (`1e300`, `1e-300`) when its magnitude is at least 10⁹ or below 10⁻⁶, where `Display`
/// writes every digit (a radius of 1e300 m came out as 301 digits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num(pub f64);

/// [`Num`] of a field's value, for `thiserror` messages (`num(.radius)`).
pub fn num(v: &f64) -> Num {
    Num(*v)
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.abs();
        if self.0.is_finite() && (a >= 1e9 || (a != 0.0 && a < 1e-6)) {
            write!(f, "{:e}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Num;

    #[test]
    fn large_and_tiny_numbers_take_an_exponent() {
        let shown = |v: f64| Num(v).to_string();
        assert_eq!(shown(2.0), "2");
        assert_eq!(shown(-0.5), "-0.5");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(123_456_789.0), "123456789");
        assert_eq!(shown(1e9), "1e9");
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(-2.5e12), "-2.5e12");
        assert_eq!(shown(1e-300), "1e-300");
        assert_eq!(shown(0.000_01), "0.00001");
        assert_eq!(shown(f64::NAN), "NaN");
        assert_eq!(shown(f64::NEG_INFINITY), "-inf");
    }
}
