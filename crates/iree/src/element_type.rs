//! Element types of the tensors that cross the host/IREE boundary.

use eerie_sys::runtime as sys;

/// The element type of a host array handed to, or returned by, a compiled function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl ElementType {
    /// Bytes per element in a dense host array.
    pub fn byte_size(self) -> usize {
        match self {
            ElementType::Bool | ElementType::I8 | ElementType::U8 => 1,
            ElementType::I16 | ElementType::U16 | ElementType::F16 => 2,
            ElementType::I32 | ElementType::U32 | ElementType::F32 => 4,
            ElementType::I64 | ElementType::U64 | ElementType::F64 => 8,
        }
    }

    /// The HAL element type a buffer view of this type is tagged with.
    ///
    /// The lowering spells every integer (and bool, as 0/1 bytes) as a signless MLIR
    /// integer, whose ABI check expects IREE's signless `INT_N`. That check accepts any
    /// integer of the same width, but tagging exactly what the compiler expects keeps the
    /// error messages of a real mismatch free of signedness noise.
    pub fn to_hal(self) -> sys::iree_hal_element_type_t {
        match self {
            ElementType::Bool | ElementType::I8 | ElementType::U8 => {
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_8
            }
            ElementType::I16 | ElementType::U16 => {
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_16
            }
            ElementType::I32 | ElementType::U32 => {
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_32
            }
            ElementType::I64 | ElementType::U64 => {
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_64
            }
            ElementType::F16 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_16,
            ElementType::F32 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_32,
            ElementType::F64 => sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_64,
        }
    }

    /// The element type of a HAL buffer view, `None` for types the host side has no
    /// name for (bf16, complex, fp8, sub-byte integers).
    ///
    /// Results of signless integer type (what the compiler produces for `iN`) come back
    /// as the signed `I*`: signedness is the caller's knowledge, not IREE's, so the
    /// binding layer reinterprets the bytes with the dtype it expects.
    pub fn from_hal(hal: sys::iree_hal_element_type_t) -> Option<ElementType> {
        use ElementType::*;
        let known = [
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_BOOL_8,
                Bool,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_8,
                I8,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_8,
                I8,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_8,
                U8,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_16,
                I16,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_16,
                I16,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_16,
                U16,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_32,
                I32,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_32,
                I32,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_32,
                U32,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_INT_64,
                I64,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_SINT_64,
                I64,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_UINT_64,
                U64,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_16,
                F16,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_32,
                F32,
            ),
            (
                sys::iree_hal_element_types_t_IREE_HAL_ELEMENT_TYPE_FLOAT_64,
                F64,
            ),
        ];
        known
            .iter()
            .find(|(value, _)| *value == hal)
            .map(|(_, element)| *element)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hal_round_trip_keeps_width_and_kind() {
        for e in [
            ElementType::I8,
            ElementType::I16,
            ElementType::I32,
            ElementType::I64,
            ElementType::F16,
            ElementType::F32,
            ElementType::F64,
        ] {
            assert_eq!(ElementType::from_hal(e.to_hal()), Some(e));
        }
        for (e, signed) in [
            (ElementType::Bool, ElementType::I8),
            (ElementType::U8, ElementType::I8),
            (ElementType::U16, ElementType::I16),
            (ElementType::U32, ElementType::I32),
            (ElementType::U64, ElementType::I64),
        ] {
            assert_eq!(ElementType::from_hal(e.to_hal()), Some(signed));
            assert_eq!(e.byte_size(), signed.byte_size());
        }
    }
}
