//! PyTensor's dtypes, and what each one is in MLIR.

use std::fmt;

/// A PyTensor (numpy) dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    Float32,
    Float64,
    Complex64,
    Complex128,
}

impl DType {
    pub fn parse(name: &str) -> Option<DType> {
        Some(match name {
            "bool" => DType::Bool,
            "int8" => DType::Int8,
            "int16" => DType::Int16,
            "int32" => DType::Int32,
            "int64" => DType::Int64,
            "uint8" => DType::UInt8,
            "uint16" => DType::UInt16,
            "uint32" => DType::UInt32,
            "uint64" => DType::UInt64,
            "float16" => DType::Float16,
            "float32" => DType::Float32,
            "float64" => DType::Float64,
            "complex64" => DType::Complex64,
            "complex128" => DType::Complex128,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Float16 => "float16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// Bits of one element; bool is stored as one byte.
    pub fn bits(self) -> u32 {
        match self {
            DType::Bool | DType::Int8 | DType::UInt8 => 8,
            DType::Int16 | DType::UInt16 | DType::Float16 => 16,
            DType::Int32 | DType::UInt32 | DType::Float32 => 32,
            DType::Int64 | DType::UInt64 | DType::Float64 | DType::Complex64 => 64,
            DType::Complex128 => 128,
        }
    }

    pub fn byte_size(self) -> usize {
        (self.bits() / 8) as usize
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::Float16 | DType::Float32 | DType::Float64)
    }

    pub fn is_complex(self) -> bool {
        matches!(self, DType::Complex64 | DType::Complex128)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64)
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(self, DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64)
    }

    pub fn is_int(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// numpy's promotion of two dtypes (`np.result_type`), which PyTensor's `upcast` follows.
pub fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (Bool, x) | (x, Bool) => x,
        (x, y) if x.is_float() && y.is_float() => if x.bits() >= y.bits() { x } else { y },
        // The smallest float that holds every value of the integer type.
        (f, i) | (i, f) if f.is_float() && i.is_int() => match (f, i.bits()) {
            (Float16, 8) => Float16,
            (Float16 | Float32, 8 | 16) => Float32,
            _ => Float64,
        },
        (x, y) if x.is_signed_int() == y.is_signed_int() => if x.bits() >= y.bits() { x } else { y },
        (s, u) | (u, s) if s.is_signed_int() && u.is_unsigned_int() => {
            if s.bits() > u.bits() {
                s
            } else {
                match u.bits() {
                    8 => Int16,
                    16 => Int32,
                    32 => Int64,
                    _ => Float64,
                }
            }
        }
        _ => Float64,
    }
}

#[cfg(test)]
mod tests {
    use super::DType::*;
    use super::*;

    #[test]
    fn promotion_follows_numpy() {
        assert_eq!(promote(Int8, UInt8), Int16);
        assert_eq!(promote(Int64, UInt64), Float64);
        assert_eq!(promote(UInt32, Int64), Int64);
        assert_eq!(promote(Int32, Float32), Float64);
        assert_eq!(promote(Int16, Float32), Float32);
        assert_eq!(promote(UInt8, Float32), Float32);
        assert_eq!(promote(Bool, Int8), Int8);
        assert_eq!(promote(Float32, Float64), Float64);
        assert_eq!(promote(UInt16, UInt64), UInt64);
    }
}
